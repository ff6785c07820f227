#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERRAISEROPE
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// Whether `slice` takes x[..., start:start+len] with every other dimension whole.
bool isLastAxisSlice(SliceOp slice, int64_t start, int64_t len) {
  auto shape = slice.getInput().getType().getShape();
  int64_t rank = shape.size();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t s = d == rank - 1 ? start : 0, e = d == rank - 1 ? start + len : shape[d];
    if (slice.getStarts()[d] != s || slice.getEnds()[d] != e || slice.getSteps()[d] != 1)
      return false;
  }
  return true;
}

/// concat(-x[..., D/2:], x[..., :D/2]) along the last axis: rotate_half(x). Returns x.
Value matchRotateHalf(Value v, SmallVectorImpl<Operation *> &ops) {
  auto concat = v.getDefiningOp<ConcatOp>();
  if (!concat || concat.getInputs().size() != 2)
    return {};
  auto type = cast<RankedTensorType>(concat.getType());
  int64_t rank = type.getRank();
  if (rank < 1 || concat.getAxis() != rank - 1 || type.getShape().back() % 2 != 0)
    return {};
  int64_t half = type.getShape().back() / 2;
  auto neg = concat.getInputs()[0].getDefiningOp<NegOp>();
  auto hi = neg ? neg.getInput().getDefiningOp<SliceOp>() : SliceOp();
  auto lo = concat.getInputs()[1].getDefiningOp<SliceOp>();
  if (!hi || !lo || hi.getInput() != lo.getInput() || hi.getInput().getType() != type ||
      !isLastAxisSlice(hi, half, half) || !isLastAxisSlice(lo, 0, half))
    return {};
  ops.append({concat, neg, hi, lo});
  return lo.getInput();
}

/// A RoPE table operand: a constant, or the row of a constant table at a position argument
/// (what sinter-tabulate-position makes of the cos/sin of the current cache position).
bool isTable(Value v) {
  if (v.getDefiningOp<ConstantOp>())
    return true;
  if (auto reshape = v.getDefiningOp<ReshapeOp>())
    v = reshape.getInput();
  auto gather = v.getDefiningOp<GatherOp>();
  return gather && gather.getInput().getDefiningOp<ConstantOp>() &&
         isa<BlockArgument>(gather.getIndices());
}

/// `v` without a widening cast from a 16-bit float to f32 in front of it (`cast` set), or `v`.
Value unwidened(Value v, CastOp &cast) {
  cast = v.getDefiningOp<CastOp>();
  if (cast && getElementTypeOrSelf(cast.getType()).isF32() &&
      (getElementTypeOrSelf(cast.getInput()).isBF16() ||
       getElementTypeOrSelf(cast.getInput()).isF16()))
    return cast.getInput();
  cast = nullptr;
  return v;
}

/// x * cos + rotate_half(x) * sin (either order of each commutative op) with constant
/// tables (or rows of them) -> rope(x, cos, sin): in x's type, or, with x and rotate_half(x)
/// cast to f32 and f32 tables, in f32 with the sum cast back to x's type (OLMo 2's RoPE; the
/// rope then has f32 tables and rounds once).
struct RaiseRope : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto cosMul = op->getOperand(side).getDefiningOp<MulOp>();
      auto sinMul = op->getOperand(1 - side).getDefiningOp<MulOp>();
      if (!cosMul || !sinMul)
        continue;
      for (int sinSide = 0; sinSide < 2; ++sinSide) {
        SmallVector<Operation *> ops{op, cosMul, sinMul};
        CastOp rotatedWidening;
        Value x = matchRotateHalf(unwidened(sinMul->getOperand(sinSide), rotatedWidening), ops);
        Value sin = sinMul->getOperand(1 - sinSide);
        if (!x || !isTable(sin))
          continue;
        Value cos;
        CastOp xWidening;
        for (int cosSide = 0; cosSide < 2; ++cosSide) {
          CastOp widening;
          if (unwidened(cosMul->getOperand(cosSide), widening) == x &&
              isTable(cosMul->getOperand(1 - cosSide))) {
            cos = cosMul->getOperand(1 - cosSide);
            xWidening = widening;
          }
        }
        auto xType = cast<RankedTensorType>(x.getType());
        if (!cos || xType.getRank() != 4 || !xWidening != !rotatedWidening)
          continue;
        // In x's type the sum is the rope; in f32 the one cast back to x's type is.
        Type computeType = xWidening ? xType.clone(rewriter.getF32Type()) : Type(xType);
        Operation *replaced = op;
        if (xWidening) {
          auto narrowing = dyn_cast_or_null<CastOp>(singleUser(op.getResult()));
          if (!narrowing || narrowing.getType() != xType ||
              !getElementTypeOrSelf(cos).isF32() || !getElementTypeOrSelf(sin).isF32())
            continue;
          ops.append({xWidening, rotatedWidening, narrowing});
          replaced = narrowing;
        }
        if (op.getType() != computeType || cosMul.getType() != computeType ||
            sinMul.getType() != computeType)
          continue;
        SmallVector<Location> locs;
        for (Operation *matched : ops)
          locs.push_back(matched->getLoc());
        Value rope = RopeOp::create(rewriter, rewriter.getFusedLoc(locs), xType, x, cos, sin);
        rewriter.replaceOp(replaced, rope);
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "not x * cos + rotate_half(x) * sin");
  }
};

/// concat(rope(x[..., :R], cos, sin), x[..., R:]) along the last axis -> rope(x, cos, sin)
/// with tables of R columns: partial rotary (GPT-NeoX, Phi), whose rotated part RaiseRope
/// raised on its own.
struct RaisePartialRope : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    if (type.getRank() != 4 || op.getAxis() != 3 || op.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(op, "not a concatenation of two parts of a head");
    auto rope = op.getInputs()[0].getDefiningOp<RopeOp>();
    auto rotated = rope ? rope.getInput().getDefiningOp<SliceOp>() : SliceOp();
    auto passed = op.getInputs()[1].getDefiningOp<SliceOp>();
    if (!rotated || !passed || rotated.getInput() != passed.getInput() ||
        rotated.getInput().getType() != type)
      return rewriter.notifyMatchFailure(op, "not a rotated and a passed part of one tensor");
    int64_t width = type.getShape().back();
    int64_t rotary = cast<RankedTensorType>(rotated.getType()).getShape().back();
    if (!isLastAxisSlice(rotated, 0, rotary) || !isLastAxisSlice(passed, rotary, width - rotary) ||
        rope.getCos().getType() != rope.getSin().getType() ||
        cast<RankedTensorType>(rope.getCos().getType()).getShape().back() != rotary)
      return rewriter.notifyMatchFailure(op, "not x[..., :R] rotated and x[..., R:] passed");
    Value x = rotated.getInput();
    Value partial = RopeOp::create(
        rewriter, rewriter.getFusedLoc({op.getLoc(), rope.getLoc(), rotated.getLoc(), passed.getLoc()}),
        type, x, rope.getCos(), rope.getSin());
    rewriter.replaceOp(op, partial);
    return success();
  }
};

struct RaiseRopePass : sinter::impl::SinterRaiseRopeBase<RaiseRopePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseRope, RaisePartialRope>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
