// The GPU a module is compiled for, as the module carries it: the driver records the target
// description (compiler/targets/*.yaml) as the module attribute `sinter.target`, and every pass
// whose decisions depend on the GPU — kernel tilings, grid sizes, which attention kernel takes a
// shape, the target check — reads it from there (IREE's executable-target idea, one
// dictionary). A module without the attribute (hand-written IR in the lit tests) is compiled for
// the default target, the H200, and fields an attribute leaves out are the H200's.
#ifndef SINTER_PASSES_COMPILETARGET_H
#define SINTER_PASSES_COMPILETARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace sinter {

constexpr llvm::StringLiteral kTargetAttrName = "sinter.target";

struct CompileTarget {
  std::string name = "h200";
  std::string arch = "sm_90";
  int64_t smCount = 132;
  int64_t sharedMemoryPerBlock = 232448; // opt-in dynamic shared memory of one block
  int64_t sharedMemoryPerSm = 233472;
  int64_t l2Bytes = 62914560;
};

/// Writes `target` onto `module` as `sinter.target`.
void setCompileTarget(mlir::ModuleOp module, const CompileTarget &target);

/// The module's target: its `sinter.target` attribute, or the default target without one;
/// failure (with an error on the module) for an attribute that is malformed or whose limits
/// are out of range.
mlir::FailureOr<CompileTarget> compileTargetOf(mlir::ModuleOp module);

} // namespace sinter

#endif // SINTER_PASSES_COMPILETARGET_H
