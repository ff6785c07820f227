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
/// last axis with a [K] scale of the input's type; and
/// linear(cast(rms_normalization(x, w : f32) : f32)) -> linear(x, norm w) for a 16-bit x cast
/// back to its own type (the scale multiplied in f32, one rounding: Gemma, OLMo 2).
struct NormIntoLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op, PatternRewriter &rewriter) const override {
    if (op.getNormWeight())
      return rewriter.notifyMatchFailure(op, "the linear already normalizes");
    Value input = op.getInput();
    auto narrowing = input.getDefiningOp<CastOp>();
    if (narrowing)
      input = narrowing.getInput();
    auto norm = input.getDefiningOp<RMSNormalizationOp>();
    if (!norm)
      return rewriter.notifyMatchFailure(op, "input is not an RMS normalization");
    auto in = cast<RankedTensorType>(norm.getInput().getType());
    auto scale = cast<RankedTensorType>(norm.getScale().getType());
    if (norm.getAxis() != in.getRank() - 1 && norm.getAxis() != -1)
      return rewriter.notifyMatchFailure(op, "normalization is not over the last axis");
    if (scale.getRank() != 1)
      return rewriter.notifyMatchFailure(op, "scale is not [K]");
    if (narrowing) {
      // Only the f32 form: any other cast would round where the fused linear does not.
      Type et = in.getElementType();
      if (!(et.isBF16() || et.isF16()) || !scale.getElementType().isF32() ||
          !norm.getType().getElementType().isF32() || op.getInput().getType() != in)
        return rewriter.notifyMatchFailure(op, "not a 16-bit input normalized in f32 and cast "
                                               "back to its type");
    } else if (scale.getElementType() != in.getElementType() || norm.getType() != in) {
      return rewriter.notifyMatchFailure(op, "scale is not [K] of the input's type");
    }
    SmallVector<Location> locs{norm.getLoc(), op.getLoc()};
    if (narrowing)
      locs.insert(locs.begin() + 1, narrowing.getLoc());
    Value fused = LinearOp::create(rewriter, rewriter.getFusedLoc(locs), op.getType(),
                                   norm.getInput(), op.getWeight(), op.getBias(),
                                   op.getResidual(), norm.getScale(), Value(),
                                   norm.getEpsilonAttr(), op.getGateUpColumnsAttr(),
                                   op.getGateActivationAttr(), op.getActivationAttr());
    rewriter.replaceOp(op, fused);
    return success();
  }
};

/// linear(layer_normalization(x, w [, b])) -> linear(x, norm w, norm_bias b) when the
/// normalization runs over the last axis alone with a constant [K] scale (and shift); a
/// missing shift becomes zeros (GPT-2, GPT-NeoX, Phi-2: a LayerNorm before the
/// projections and the LM head).
struct LayerNormIntoLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op, PatternRewriter &rewriter) const override {
    if (op.getNormWeight())
      return rewriter.notifyMatchFailure(op, "the linear already normalizes");
    auto norm = op.getInput().getDefiningOp<LayerNormalizationOp>();
    if (!norm)
      return rewriter.notifyMatchFailure(op, "input is not a layer normalization");
    auto in = cast<RankedTensorType>(norm.getInput().getType());
    auto scale = cast<RankedTensorType>(norm.getScale().getType());
    int64_t k = in.getShape().back();
    if (norm.getAxis() != in.getRank() - 1)
      return rewriter.notifyMatchFailure(op, "normalization is not over the last axis alone");
    // Constants: the kernel takes them packed, computed at compile time.
    if (scale.getRank() != 1 || scale.getDimSize(0) != k ||
        !norm.getScale().getDefiningOp<ConstantOp>() ||
        (norm.getBias() && !norm.getBias().getDefiningOp<ConstantOp>()))
      return rewriter.notifyMatchFailure(op, "scale and shift are not constant [K] vectors");
    Value shift = norm.getBias();
    if (!shift)
      shift = ConstantOp::create(rewriter, norm.getLoc(),
                                 DenseElementsAttr::get(scale, rewriter.getZeroAttr(
                                                                   scale.getElementType())));
    Value fused = LinearOp::create(
        rewriter, rewriter.getFusedLoc({norm.getLoc(), op.getLoc()}), op.getType(),
        norm.getInput(), op.getWeight(), op.getBias(), op.getResidual(), norm.getScale(), shift,
        norm.getEpsilonAttr(), op.getGateUpColumnsAttr(), op.getGateActivationAttr(),
        op.getActivationAttr());
    rewriter.replaceOp(op, fused);
    return success();
  }
};

struct FuseLinearProloguePass
    : sinter::impl::SinterFuseLinearPrologueBase<FuseLinearProloguePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<NormIntoLinear, LayerNormIntoLinear>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
