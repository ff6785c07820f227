#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFORMLINEAR
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

bool isConstant(Value v) { return v.getDefiningOp<ConstantOp>() != nullptr; }

/// matmul(x, W) with W a constant [K, N] is a linear layer.
struct MatMulToLinear : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op, PatternRewriter &rewriter) const override {
    if (!isConstant(op.getRhs()) || op.getRhs().getType().getRank() != 2 ||
        op.getLhs().getType().getRank() < 1)
      return rewriter.notifyMatchFailure(op, "rhs is not a constant matrix");
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), op.getLhs(), op.getRhs(), Value(),
                                          Value());
    return success();
  }
};

/// linear(x, W) + b with b a constant broadcast along the last dimension only.
struct FuseBiasAdd : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto linear = op->getOperand(side).getDefiningOp<LinearOp>();
      auto bias = op->getOperand(1 - side).getDefiningOp<ConstantOp>();
      if (!linear || !bias || linear.getBias() || linear.getResidual() || !linear->hasOneUse() ||
          linear.getType() != op.getType())
        continue;
      auto biasType = cast<RankedTensorType>(bias.getType());
      int64_t n = linear.getType().getShape().back();
      if (biasType.getNumElements() != n || biasType.getRank() == 0 ||
          biasType.getShape().back() != n)
        continue;
      auto flat = RankedTensorType::get({n}, biasType.getElementType());
      auto dense = dyn_cast<DenseElementsAttr>(bias.getValue());
      if (!dense)
        continue;
      Value flatBias = ConstantOp::create(rewriter, bias.getLoc(), dense.reshape(flat));
      Location loc = rewriter.getFusedLoc({linear.getLoc(), op.getLoc()});
      Value fused = LinearOp::create(rewriter, loc, op.getType(), linear.getInput(),
                                     linear.getWeight(), flatBias, Value());
      rewriter.replaceOp(op, fused);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a linear plus a constant bias");
  }
};

struct FormLinearPass : sinter::impl::SinterFormLinearBase<FormLinearPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MatMulToLinear, FuseBiasAdd>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
