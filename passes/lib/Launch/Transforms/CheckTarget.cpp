// launch-check-target: every launch against the target description's limits (Passes.td).
#include "sinter/Dialect/Launch/IR/LaunchOps.h"
#include "sinter/Passes/CompileTarget.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace sinter {
#define GEN_PASS_DEF_LAUNCHCHECKTARGET
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter;

namespace {

/// The compute capability of an nvcc -arch value (sm_90, sm_90a, sm_100 -> 90, 90, 100), or -1.
int64_t computeCapability(StringRef arch) {
  if (!arch.consume_front("sm_") && !arch.consume_front("compute_"))
    return -1;
  arch.consume_back("a");
  arch.consume_back("f");
  int64_t cc = -1;
  if (arch.getAsInteger(10, cc))
    return -1;
  return cc;
}

struct CheckTargetPass : sinter::impl::LaunchCheckTargetBase<CheckTargetPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CompileTarget> target = compileTargetOf(module);
    if (failed(target))
      return signalPassFailure();
    int64_t cc = computeCapability(target->arch);
    if (cc < 90) {
      module.emitError("target '")
          << target->name << "' is " << target->arch
          << ": Sinter's kernels need sm_90 or newer (thread-block clusters, programmatic "
             "dependent launch)";
      return signalPassFailure();
    }
    bool ok = true;
    // (Threads a block: the launch ops' verifiers hold CUDA's 1024 on every architecture.)
    auto check = [&](Operation *op, StringRef name, int64_t shared) {
      if (shared > target->sharedMemoryPerBlock) {
        op->emitError("launch '")
            << name << "' needs " << shared << " bytes of dynamic shared memory; target '"
            << target->name << "' allows " << target->sharedMemoryPerBlock << " a block";
        ok = false;
      }
    };
    module.walk([&](launch::KernelOp k) { check(k, k.getKernelTemplate(), k.getSharedBytes()); });
    module.walk([&](launch::GenericOp g) { check(g, "generic", g.getSharedBytes()); });
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
