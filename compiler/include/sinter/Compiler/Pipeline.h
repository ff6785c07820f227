#ifndef SINTER_COMPILER_PIPELINE_H
#define SINTER_COMPILER_PIPELINE_H

#include "sinter/Compiler/Config.h"
#include "sinter/Compiler/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <optional>
#include <string>

namespace sinter {

/// The compilation phases, in order. One enum drives both `--compile-to` and the pass
/// pipeline: compiling to a phase runs every phase up to and including it.
enum class Phase { Import, Graph, Launch, Source, Binary };

std::optional<Phase> parsePhase(const std::string &name);
const char *phaseName(Phase phase);

/// Runs the passes of one MLIR phase (Graph or Launch) and the verifier at its end.
/// Errors are reported as MLIR diagnostics. `passTiming` prints each pass's wall time to
/// stderr when the phase ends (`sinter compile --timing`).
mlir::LogicalResult runPhase(mlir::ModuleOp module, Phase phase, const CompileConfig &config,
                             const Target &target, bool passTiming = false);

/// The passes of one MLIR phase (Graph or Launch), in pipeline order; none for other phases.
llvm::SmallVector<std::unique_ptr<mlir::Pass>> phasePasses(Phase phase, const CompileConfig &config,
                                                          const Target &target);

/// Runs `passes` in order, each in its own pass manager, verifying the IR after every pass: a
/// pass that leaves IR which does not verify is named in one "internal error" diagnostic
/// (instead of the op verifier's message), and the next pass never sees the broken IR.
mlir::LogicalResult runPasses(mlir::ModuleOp module,
                              llvm::SmallVector<std::unique_ptr<mlir::Pass>> passes,
                              bool passTiming = false);

/// Checks what must hold after `phase`: after Graph only sinter ops remain; after Launch
/// only launch ops, every alloc placed in the arena and every weight in the blob.
mlir::LogicalResult verifyPhase(mlir::ModuleOp module, Phase phase);

} // namespace sinter

#endif
