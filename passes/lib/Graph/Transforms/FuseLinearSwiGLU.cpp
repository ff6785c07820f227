// The SwiGLU gate as an epilogue of its gate|up linear (see Passes.td). Decided here, in the
// graph phase, so that the launch lowering reads the decision off the op instead of matching
// the slices again.
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

/// silu_mul(slice(p, gate), slice(p, up)) -> linear {silu_mul_pairs = [gate, up]} for a linear
/// p the bf16 lowering takes whose only users are the two N/2-column slices.
struct SwiGLUIntoLinear : OpRewritePattern<SiluMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SiluMulOp op, PatternRewriter &rewriter) const override {
    auto gate = op.getGate().getDefiningOp<SliceOp>();
    auto up = op.getUp().getDefiningOp<SliceOp>();
    if (!gate || !up || gate == up || !gate->hasOneUse() || !up->hasOneUse())
      return rewriter.notifyMatchFailure(op, "gate and up are not two slices used only here");
    auto linear = gate.getInput().getDefiningOp<LinearOp>();
    if (!linear || up.getInput() != linear.getResult())
      return rewriter.notifyMatchFailure(op, "gate and up do not slice one linear");
    // The kernels' SwiGLU runs on bf16 products of constant weights (linear_small_m's
    // SILU_MUL_PAIRS epilogue, or the GEMM + silu_mul pair); other linears keep the ops.
    if (!linear.getInput().getType().getElementType().isBF16() ||
        !linear.getWeight().getDefiningOp<ConstantOp>() || linear.getBias() ||
        linear.getResidual() || linear.getSiluMulPairs() ||
        std::distance(linear->getUses().begin(), linear->getUses().end()) != 2)
      return rewriter.notifyMatchFailure(op, "not a bf16 linear with a free epilogue whose only "
                                             "users are the two slices");
    auto gateColumns = lastAxisColumns(gate), upColumns = lastAxisColumns(up);
    const int64_t n = linear.getWeight().getType().getDimSize(1);
    if (!gateColumns || !upColumns || 2 * (gateColumns->second - gateColumns->first) != n ||
        upColumns->second - upColumns->first != gateColumns->second - gateColumns->first)
      return rewriter.notifyMatchFailure(op, "the slices are not N/2 columns each");
    Location loc = rewriter.getFusedLoc({linear.getLoc(), op.getLoc()});
    Value fused = LinearOp::create(
        rewriter, loc, op.getType(), linear.getInput(), linear.getWeight(), Value(), Value(),
        linear.getNormWeight(), linear.getNormEpsilonAttr(),
        rewriter.getDenseI64ArrayAttr({gateColumns->first, upColumns->first}));
    rewriter.replaceOp(op, fused);
    rewriter.eraseOp(gate);
    rewriter.eraseOp(up);
    rewriter.eraseOp(linear);
    return success();
  }
};

struct FuseLinearSwiGLUPass : sinter::impl::SinterFuseLinearSwiGLUBase<FuseLinearSwiGLUPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SwiGLUIntoLinear>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     sinter::rewriteOnlyConfig())))
      signalPassFailure();
  }
};

} // namespace
