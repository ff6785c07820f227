// An MLP's activation as the epilogue of the linear that feeds it (see Passes.td). Decided
// here, in the graph phase, so that the launch lowering reads it off the op.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSELINEARACTIVATION
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// unary "gelu_tanh" or "gelu"(linear(...)) -> linear(...) {activation = the function} for a
/// bf16 linear with a constant weight whose only user is the activation.
struct ActivationIntoLinear : OpRewritePattern<UnaryFnOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(UnaryFnOp op, PatternRewriter &rewriter) const override {
    StringRef fn = op.getFn();
    if (fn != "gelu_tanh" && fn != "gelu")
      return rewriter.notifyMatchFailure(op, "not an activation linear_small_m applies");
    auto linear = op.getInput().getDefiningOp<LinearOp>();
    // The bf16 lowering's (linear_small_m's GELU_TANH / GELU epilogue, or a library GEMM and
    // one generated launch past 16 rows); other linears keep the op.
    if (!linear || !linear->hasOneUse() || linear.getType() != op.getType() ||
        !linear.getInput().getType().getElementType().isBF16() ||
        !linear.getWeight().getDefiningOp<ConstantOp>() || linear.getResidual() ||
        linear.getGateUpColumns() || linear.getActivation())
      return rewriter.notifyMatchFailure(op, "input is not a bf16 linear used only here");
    rewriter.modifyOpInPlace(linear, [&] {
      linear.setActivationAttr(rewriter.getStringAttr(fn));
      linear->setLoc(rewriter.getFusedLoc({linear.getLoc(), op.getLoc()}));
    });
    rewriter.replaceOp(op, linear.getResult());
    return success();
  }
};

struct FuseLinearActivationPass
    : sinter::impl::SinterFuseLinearActivationBase<FuseLinearActivationPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ActivationIntoLinear>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
