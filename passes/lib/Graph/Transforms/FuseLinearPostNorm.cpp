// A post-norm and its residual add as the epilogue of the linear that feeds the norm (see
// Passes.td). Decided here, in the graph phase, where the kernel that computes it is known to
// take the linear, so that the launch lowering reads the fusion off the op.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/CompileTarget.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "launch_params.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSELINEARPOSTNORM
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;
namespace kn = sinter::kernels;

namespace {

/// add(r, cast(rms_normalization(linear(x, W), w : f32))) -> linear(x, W, residual r,
/// post_norm w), for a bf16 linear that linear_small_m takes with that epilogue.
struct PostNormIntoLinear : OpRewritePattern<AddOp> {
  PostNormIntoLinear(MLIRContext *context, const sinter::CompileTarget &target)
      : OpRewritePattern(context), target(target) {}

  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto narrowing = op->getOperand(side).getDefiningOp<CastOp>();
      Value residual = op->getOperand(1 - side);
      auto norm = narrowing ? narrowing.getInput().getDefiningOp<RMSNormalizationOp>() : nullptr;
      auto linear = norm ? norm.getInput().getDefiningOp<LinearOp>() : nullptr;
      if (!linear || !narrowing->hasOneUse() || !norm->hasOneUse() || !linear->hasOneUse())
        continue;
      auto type = cast<RankedTensorType>(op.getType());
      auto normType = cast<RankedTensorType>(norm.getType());
      auto scale = cast<RankedTensorType>(norm.getScale().getType());
      const int64_t rank = type.getRank();
      if (residual.getType() != type || linear.getType() != type || narrowing.getType() != type ||
          !type.getElementType().isBF16() || !normType.getElementType().isF32() ||
          !scale.getElementType().isF32() || scale.getRank() != 1 ||
          scale.getDimSize(0) != type.getShape().back() ||
          norm.getAxis() != rank - 1)
        continue;
      if (linear.getBias() || linear.getResidual() || linear.getNormWeight() ||
          linear.getGateUpColumns() || linear.getActivation() || linear.getPostNormWeight() ||
          !linear.getInput().getType().getElementType().isBF16() ||
          !linear.getWeight().getDefiningOp<ConstantOp>())
        continue;
      if (!kernelTakes(linear))
        continue;
      Location loc = rewriter.getFusedLoc({linear.getLoc(), norm.getLoc(), narrowing.getLoc(),
                                           op.getLoc()});
      Value fused = LinearOp::create(rewriter, loc, type, linear.getInput(), linear.getWeight(),
                                     Value(), residual, Value(), Value(), norm.getScale(),
                                     FloatAttr(), DenseI64ArrayAttr(), StringAttr(),
                                     StringAttr(), norm.getEpsilonAttr());
      rewriter.replaceOp(op, fused);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a residual plus a post-normed bf16 linear");
  }

  /// Whether linear_small_m's RESIDUAL_POST_NORM epilogue takes the linear on this target.
  bool kernelTakes(LinearOp linear) const {
    auto in = linear.getInput().getType();
    int64_t rows = 1;
    for (int64_t d : in.getShape().drop_back())
      rows *= d;
    const int64_t k = in.getShape().back(), n = linear.getWeight().getType().getDimSize(1);
    if (rows > 16 || k > INT32_MAX || n > INT32_MAX)
      return false;
    kn::SharedMemoryLimits limits{uint32_t(target.sharedMemoryPerBlock),
                                  uint32_t(target.sharedMemoryPerSm)};
    return kn::linear_small_m_supported(int(rows), int(n), int(k), kn::LinearPrologue::NONE,
                                        kn::LinearEpilogue::RESIDUAL_POST_NORM, 0, 0, 2,
                                        int(target.smCount), kn::LinearWeights::BF16, 0, limits);
  }

  sinter::CompileTarget target;
};

struct FuseLinearPostNormPass
    : sinter::impl::SinterFuseLinearPostNormBase<FuseLinearPostNormPass> {
  void runOnOperation() override {
    FailureOr<sinter::CompileTarget> target = sinter::compileTargetOf(getOperation());
    if (failed(target))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<PostNormIntoLinear>(&getContext(), *target);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
