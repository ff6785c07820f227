// The transpose + reshape that merge an attention's heads back into rows, as part of the
// attention (see Passes.td): the kernels write [B, S, heads * D] directly, and the lowering reads
// that off the op's merged_heads instead of finding the two views again.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"
#include "sinter/Passes/RewriteOnly.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSEATTENTIONHEADMERGE
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// attention -> transpose [0, 2, 1, 3] -> reshape, each the only user of the one before:
/// the attention with merged_heads and the reshape's type.
template <typename AttentionOp>
struct HeadMergeIntoAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern<AttentionOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    if (op.getMergedHeads() || !op->hasOneUse())
      return rewriter.notifyMatchFailure(op, "merged already, or read by more than one op");
    auto transpose = dyn_cast<TransposeOp>(*op->user_begin());
    if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3} ||
        !transpose->hasOneUse())
      return rewriter.notifyMatchFailure(op, "not transposed to [B, S, heads, D] alone");
    auto reshape = dyn_cast<ReshapeOp>(*transpose->user_begin());
    if (!reshape)
      return rewriter.notifyMatchFailure(op, "the heads are not reshaped");
    Operation *merged = rewriter.clone(*op);
    merged->getResult(0).setType(reshape.getType());
    merged->setAttr(op.getMergedHeadsAttrName(), rewriter.getUnitAttr());
    rewriter.replaceOp(reshape, merged->getResults());
    rewriter.eraseOp(transpose);
    rewriter.eraseOp(op);
    return success();
  }
};

struct FuseAttentionHeadMergePass
    : sinter::impl::SinterFuseAttentionHeadMergeBase<FuseAttentionHeadMergePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<HeadMergeIntoAttention<FusedAttentionOp>,
                 HeadMergeIntoAttention<DecodeAttentionOp>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     sinter::rewriteOnlyConfig())))
      signalPassFailure();
  }
};

} // namespace
