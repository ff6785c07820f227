// A post-norm and residual add recomputed in the prologue of the linear that normalizes its
// result (see Passes.td). Decided here, in the graph phase: the group is marked, and the launch
// lowering reads the mark off the group its linear reads.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/CompileTarget.h"
#include "sinter/Passes/Passes.h"

#include "launch_params.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSERESIDUALNORMPROLOGUE
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;
namespace kn = sinter::kernels;

namespace {

bool isF32Constant(Value v) {
  return v.getDefiningOp<ConstantOp>() &&
         cast<RankedTensorType>(v.getType()).getElementType().isF32();
}

/// The linear whose prologue can recompute `group`: the first of its users in the block, a
/// bf16 linear reading it as x with an RMS norm prologue of a constant f32 weight and the
/// post-norm's epsilon, that linear_small_m takes with the fused prologue; every other user
/// of the group comes after it (they read the sum its launch writes).
LinearOp consumerOf(FusionGroupOp group, const sinter::CompileTarget &target) {
  Value x, weight, residual;
  float epsilon;
  if (!group.residualNormParts(x, weight, residual, epsilon) || !isF32Constant(weight))
    return {};
  Value sum = group.getOutputs()[0];
  auto type = cast<RankedTensorType>(sum.getType());
  if (!type.hasStaticShape())
    return {};
  Operation *first = nullptr;
  for (Operation *user : sum.getUsers()) {
    if (user->getBlock() != group->getBlock())
      return {};
    if (!first || user->isBeforeInBlock(first))
      first = user;
  }
  auto linear = dyn_cast_or_null<LinearOp>(first);
  if (!linear || linear.getInput() != sum || !linear.getNormWeight() || linear.normCentered() ||
      !linear.normScalesInF32() || !isF32Constant(linear.getNormWeight()) ||
      !linear.getNormEpsilon() || linear.getNormEpsilon()->convertToFloat() != epsilon ||
      !linear.getWeight().getDefiningOp<ConstantOp>() ||
      llvm::count(linear->getOperands(), sum) != 1)
    return {};
  const int64_t k = type.getShape().back();
  const int64_t m = k > 0 ? type.getNumElements() / k : 0;
  const int64_t n = linear.getWeight().getType().getDimSize(1);
  // The epilogue is the lowering's choice; the prologue's fit (rows, K, shared memory) is not.
  const kn::SharedMemoryLimits smem{uint32_t(target.sharedMemoryPerBlock),
                                    uint32_t(target.sharedMemoryPerSm)};
  if (!kn::linear_small_m_supported(m, n, k, kn::LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT,
                                    kn::LinearEpilogue::NONE, 0, 2, 2, int(target.smCount),
                                    kn::LinearWeights::BF16, 0, smem))
    return {};
  return linear;
}

struct FuseResidualNormProloguePass
    : sinter::impl::SinterFuseResidualNormPrologueBase<FuseResidualNormProloguePass> {
  void runOnOperation() override {
    FailureOr<sinter::CompileTarget> target = sinter::compileTargetOf(getOperation());
    if (failed(target))
      return signalPassFailure();
    getOperation().walk([&](FusionGroupOp group) {
      if (consumerOf(group, *target))
        group.setInConsumerPrologue(true);
    });
  }
};

} // namespace
