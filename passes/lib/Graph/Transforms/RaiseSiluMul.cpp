#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERRAISESILUMUL
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// (g * sigmoid(g)) * u (any order of either product) -> silu_mul(g, u), all of one type.
struct RaiseSiluMul : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto silu = op->getOperand(side).getDefiningOp<MulOp>();
      Value up = op->getOperand(1 - side);
      if (!silu || up.getType() != op.getType() || silu.getType() != op.getType())
        continue;
      for (int gateSide = 0; gateSide < 2; ++gateSide) {
        Value gate = silu->getOperand(gateSide);
        auto sigmoid = silu->getOperand(1 - gateSide).getDefiningOp<SigmoidOp>();
        if (!sigmoid || sigmoid.getInput() != gate || gate.getType() != op.getType())
          continue;
        Location loc = rewriter.getFusedLoc({sigmoid.getLoc(), silu.getLoc(), op.getLoc()});
        Value fused = SiluMulOp::create(rewriter, loc, op.getType(), gate, up);
        rewriter.replaceOp(op, fused);
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "not (g * sigmoid(g)) * u");
  }
};

struct RaiseSiluMulPass : sinter::impl::SinterRaiseSiluMulBase<RaiseSiluMulPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseSiluMul>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
