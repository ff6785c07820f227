// Per-head q / k norms and RoPE of a decode step, applied by the decode attention (see
// Passes.td): marks the head split so that no qk_norm_rope launch runs between the projection
// and the attention, which normalizes and rotates its query heads and the new key itself.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/KernelCache.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSEDECODEQKNORM
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// The split's only use of `result`, or null.
OpOperand *onlyUse(Value result) {
  return result.hasOneUse() ? &*result.getUses().begin() : nullptr;
}

struct QkNormIntoDecodeAttention : OpRewritePattern<SplitQkvHeadsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitQkvHeadsOp split, PatternRewriter &rewriter) const override {
    if (split.getNormInAttention())
      return rewriter.notifyMatchFailure(split, "marked already");
    if (!split.hasNorm() || !split.hasRope())
      return rewriter.notifyMatchFailure(split, "no q/k norm followed by a rotation");
    auto q = split.getQ().getType();
    int64_t batch = q.getDimSize(0), d = q.getDimSize(3);
    if (q.getDimSize(2) != 1 || !q.getElementType().isBF16())
      return rewriter.notifyMatchFailure(split, "not one bf16 token per sequence");
    auto weight = [](Value w) { return cast<RankedTensorType>(w.getType()); };
    if (weight(split.getQNorm()).getShape() != ArrayRef<int64_t>{d} ||
        weight(split.getKNorm()).getShape() != ArrayRef<int64_t>{d})
      return rewriter.notifyMatchFailure(split, "the norms span more than one head");
    Type w = weight(split.getQNorm()).getElementType();
    if (!(w.isBF16() || w.isF32()) || w != weight(split.getKNorm()).getElementType())
      return rewriter.notifyMatchFailure(split, "norm weights neither bf16 nor f32");
    auto table = cast<RankedTensorType>(split.getCos().getType());
    if (split.rotaryDim() != d || table.getNumElements() != batch * d ||
        !(table.getElementType().isBF16() || table.getElementType().isF32()) ||
        split.getSin().getType() != table)
      return rewriter.notifyMatchFailure(split, "not one bf16 or f32 table row of the whole "
                                                "head per sequence");
    // q read by one decode attention alone; k only written into a cache that attention reads.
    OpOperand *qUse = onlyUse(split.getQ()), *kUse = onlyUse(split.getK());
    auto attention = qUse ? dyn_cast<DecodeAttentionOp>(qUse->getOwner()) : nullptr;
    auto write = kUse ? dyn_cast<CacheWriteOp>(kUse->getOwner()) : nullptr;
    if (!attention || qUse->getOperandNumber() != 0 || !write || kUse->getOperandNumber() != 1 ||
        !sinter::isKernelCache(write) || attention.getK() != write.getResult())
      return rewriter.notifyMatchFailure(split, "q and k are not one decode attention's query "
                                                "and the key it writes into its cache");
    rewriter.modifyOpInPlace(split, [&] { split.setNormInAttention(true); });
    return success();
  }
};

struct FuseDecodeQkNormPass : sinter::impl::SinterFuseDecodeQkNormBase<FuseDecodeQkNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<QkNormIntoDecodeAttention>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
