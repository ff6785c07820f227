#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSELINEAREPILOGUE
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// A linear whose epilogue is still free: no bias or residual, and only this user.
bool isPlainLinear(LinearOp linear) {
  return linear && !linear.getBias() && !linear.getResidual() && !linear.getNormWeight() &&
         linear->hasOneUse();
}

/// linear(x, W) * s  ->  linear(x, s * W) for a constant scalar s.
struct ScaleIntoWeight : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto linear = op->getOperand(side).getDefiningOp<LinearOp>();
      auto scaleOp = op->getOperand(1 - side).getDefiningOp<ConstantOp>();
      auto weightOp = linear ? linear.getWeight().getDefiningOp<ConstantOp>() : ConstantOp();
      if (!isPlainLinear(linear) || !scaleOp || !weightOp || linear.getType() != op.getType())
        continue;
      auto scale = dyn_cast<DenseElementsAttr>(scaleOp.getValue());
      auto weight = dyn_cast<DenseElementsAttr>(weightOp.getValue());
      if (!scale || !weight || scale.getNumElements() != 1 ||
          !isa<FloatType>(weight.getElementType()))
        continue;
      float s = readFloat32(scale)[0];
      std::vector<float> values = readFloat32(weight);
      for (float &v : values)
        v *= s;
      auto type = cast<RankedTensorType>(weight.getType());
      Value scaled = ConstantOp::create(rewriter, weightOp.getLoc(), fromFloat32(type, values));
      Location loc = rewriter.getFusedLoc({linear.getLoc(), op.getLoc()});
      Value fused = LinearOp::create(rewriter, loc, op.getType(), linear.getInput(), scaled,
                                     Value(), Value());
      rewriter.replaceOp(op, fused);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a linear times a constant scalar");
  }
};

/// linear(...) + r  ->  linear(..., residual r) when r has the result's type.
struct ResidualIntoEpilogue : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto linear = op->getOperand(side).getDefiningOp<LinearOp>();
      Value residual = op->getOperand(1 - side);
      if (!linear || linear.getResidual() || linear.getNormWeight() || !linear->hasOneUse() ||
          residual.getType() != op.getType() || linear.getType() != op.getType() ||
          residual.getDefiningOp<ConstantOp>())
        continue;
      Location loc = rewriter.getFusedLoc({linear.getLoc(), op.getLoc()});
      Value fused = LinearOp::create(rewriter, loc, op.getType(), linear.getInput(),
                                     linear.getWeight(), linear.getBias(), residual);
      rewriter.replaceOp(op, fused);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a linear plus a same-shaped tensor");
  }
};

struct FuseLinearEpiloguePass
    : sinter::impl::SinterFuseLinearEpilogueBase<FuseLinearEpiloguePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ScaleIntoWeight, ResidualIntoEpilogue>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
