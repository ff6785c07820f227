#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSELINEARPROLOGUE
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// linear(rms_normalization(x, w)) -> linear(x, norm w) when the normalization runs over the
/// last axis with a [K] scale of the input's type.
struct NormIntoLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op, PatternRewriter &rewriter) const override {
    auto norm = op.getInput().getDefiningOp<RMSNormalizationOp>();
    if (!norm || op.getNormWeight())
      return rewriter.notifyMatchFailure(op, "input is not an RMS normalization");
    auto in = cast<RankedTensorType>(norm.getInput().getType());
    auto scale = cast<RankedTensorType>(norm.getScale().getType());
    if (norm.getAxis() != in.getRank() - 1 && norm.getAxis() != -1)
      return rewriter.notifyMatchFailure(op, "normalization is not over the last axis");
    if (scale.getRank() != 1 || scale.getElementType() != in.getElementType() ||
        norm.getType() != in)
      return rewriter.notifyMatchFailure(op, "scale is not [K] of the input's type");
    Location loc = rewriter.getFusedLoc({norm.getLoc(), op.getLoc()});
    Value fused = LinearOp::create(rewriter, loc, op.getType(), norm.getInput(), op.getWeight(),
                                   op.getBias(), op.getResidual(), norm.getScale(),
                                   norm.getEpsilonAttr(), op.getSiluMulPairsAttr());
    rewriter.replaceOp(op, fused);
    return success();
  }
};

struct FuseLinearProloguePass
    : sinter::impl::SinterFuseLinearPrologueBase<FuseLinearProloguePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<NormIntoLinear>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
