// The gate of a gated MLP (SwiGLU, GeGLU) as an epilogue of its gate|up linear (see
// Passes.td). Decided here, in the graph phase, so that the launch lowering reads the decision
// off the op instead of matching the slices again.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"
#include "sinter/Passes/RewriteOnly.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSELINEARSWIGLU
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// act(slice(p, gate)) * slice(p, up) -> linear {gate_up_columns = [gate, up],
/// gate_activation = act} for a linear p the bf16 lowering takes whose only users are the two
/// N/2-column slices: act silu (a silu_mul) or gelu_tanh (a unary gelu_tanh times the up
/// slice, either order).
LogicalResult gateIntoLinear(Operation *op, Value gateValue, Value upValue,
                             StringRef activation, Operation *activationOp,
                             PatternRewriter &rewriter) {
  auto gate = gateValue.getDefiningOp<SliceOp>();
  auto up = upValue.getDefiningOp<SliceOp>();
  if (!gate || !up || gate == up || !gate->hasOneUse() || !up->hasOneUse())
    return rewriter.notifyMatchFailure(op, "gate and up are not two slices used only here");
  auto linear = gate.getInput().getDefiningOp<LinearOp>();
  if (!linear || up.getInput() != linear.getResult())
    return rewriter.notifyMatchFailure(op, "gate and up do not slice one linear");
  // The kernels' gates run on bf16 products of constant weights (linear_small_m's gate pair
  // epilogues, or the GEMM + gate_mul pair); other linears keep the ops.
  if (!linear.getInput().getType().getElementType().isBF16() ||
      !linear.getWeight().getDefiningOp<ConstantOp>() || linear.getBias() ||
      linear.getResidual() || linear.getGateUpColumns() ||
      std::distance(linear->getUses().begin(), linear->getUses().end()) != 2)
    return rewriter.notifyMatchFailure(op, "not a bf16 linear with a free epilogue whose only "
                                           "users are the two slices");
  auto gateColumns = lastAxisColumns(gate), upColumns = lastAxisColumns(up);
  const int64_t n = linear.getWeight().getType().getDimSize(1);
  if (!gateColumns || !upColumns || 2 * (gateColumns->second - gateColumns->first) != n ||
      upColumns->second - upColumns->first != gateColumns->second - gateColumns->first)
    return rewriter.notifyMatchFailure(op, "the slices are not N/2 columns each");
  SmallVector<Location> locs{linear.getLoc(), op->getLoc()};
  if (activationOp)
    locs.push_back(activationOp->getLoc());
  Value fused = LinearOp::create(
      rewriter, rewriter.getFusedLoc(locs), op->getResult(0).getType(), linear.getInput(),
      linear.getWeight(), Value(), Value(), linear.getNormWeight(), linear.getNormBias(),
      linear.getNormEpsilonAttr(),
      rewriter.getDenseI64ArrayAttr({gateColumns->first, upColumns->first}),
      activation == "silu" ? StringAttr() : rewriter.getStringAttr(activation), StringAttr());
  rewriter.replaceOp(op, fused);
  if (activationOp)
    rewriter.eraseOp(activationOp);
  rewriter.eraseOp(gate);
  rewriter.eraseOp(up);
  rewriter.eraseOp(linear);
  return success();
}

struct SwiGLUIntoLinear : OpRewritePattern<SiluMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SiluMulOp op, PatternRewriter &rewriter) const override {
    return gateIntoLinear(op, op.getGate(), op.getUp(), "silu", nullptr, rewriter);
  }
};

struct GeGLUIntoLinear : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto gelu = op->getOperand(side).getDefiningOp<UnaryFnOp>();
      if (!gelu || gelu.getFn() != "gelu_tanh" || !gelu->hasOneUse() ||
          gelu.getType() != op.getType() || op->getOperand(1 - side).getType() != op.getType())
        continue;
      return gateIntoLinear(op, gelu.getInput(), op->getOperand(1 - side), "gelu_tanh", gelu,
                            rewriter);
    }
    return rewriter.notifyMatchFailure(op, "not gelu_tanh(g) * u");
  }
};

struct FuseLinearSwiGLUPass : sinter::impl::SinterFuseLinearSwiGLUBase<FuseLinearSwiGLUPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SwiGLUIntoLinear, GeGLUIntoLinear>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     sinter::rewriteOnlyConfig())))
      signalPassFailure();
  }
};

} // namespace
