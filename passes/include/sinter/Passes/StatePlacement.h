// Offsets of the context's state block: shared by the lowering, which creates the KV caches
// and kernel scratch, and launch passes that add state (launch-plan-handoffs).
#ifndef SINTER_PASSES_STATEPLACEMENT_H
#define SINTER_PASSES_STATEPLACEMENT_H

#include "mlir/IR/BuiltinOps.h"

namespace sinter {

/// Gives every launch.state of `module` its offset, one 256-byte-aligned region per name in
/// first-use order (every function naming a state gets the same bytes), and sets the module's
/// launch.state_bytes. Fails, with a diagnostic, when two functions name one state with
/// different types. Idempotent: a pass that adds states runs it again.
mlir::LogicalResult placeStates(mlir::ModuleOp module);

} // namespace sinter

#endif
