// The head split of a fused QKV projection as the attention kernels read it: shared by
// sinter-expand-attention (which keeps an attention for the kernels only when its operands are
// such a split) and sinter-fuse-qkv-heads (which folds the split into sinter.split_qkv_heads),
// so that the two always agree.
#ifndef SINTER_PASSES_QKVHEADCHAINS_H
#define SINTER_PASSES_QKVHEADCHAINS_H

#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace sinter {

/// One head-split operand of attention: slice (last axis) -> reshape [B, S, H, D] -> transpose
/// [0, 2, 1, 3] (-> rope) -> operand `operand` (0 q, 1 k, 2 v) of `attention`, a
/// fused_attention, or a decode_attention reading it through the cache write of its step.
/// `norm`, an rms_normalization over the last axis, may follow the slice (one norm over the
/// projection) or the reshape (a norm per head): in the heads' type, or with an f32 weight and
/// result that `normCast` rounds back to the heads' type (OLMo 2's fp32 RMSNorm, one rounding).
struct QkvHeadChain {
  graph::SliceOp slice;
  graph::RMSNormalizationOp norm;
  graph::CastOp normCast;
  graph::ReshapeOp reshape;
  graph::TransposeOp transpose;
  graph::RopeOp rope;
  mlir::Operation *attention = nullptr;
  unsigned operand = 0;
  int64_t begin = 0, end = 0;
  /// The head as the attention (or its cache write) reads it.
  mlir::Value head() { return rope ? rope.getResult() : transpose.getResult(); }
  /// The chain's ops from the slice on, each the user of the one before.
  llvm::SmallVector<mlir::Operation *, 6> ops() {
    llvm::SmallVector<mlir::Operation *, 6> chain;
    bool normFirst = norm && norm->isBeforeInBlock(reshape);
    mlir::Operation *normOp = norm.getOperation(), *castOp = normCast.getOperation();
    for (mlir::Operation *op :
         {slice.getOperation(), normFirst ? normOp : nullptr, normFirst ? castOp : nullptr,
          reshape.getOperation(), normFirst ? nullptr : normOp, normFirst ? nullptr : castOp,
          transpose.getOperation(), rope.getOperation()})
      if (op)
        chain.push_back(op);
    return chain;
  }
};

/// The three head chains of `linear`, sorted by column, when its output is exactly q | k | v of
/// one attention: a bf16 linear with a constant weight (and bias, if any), no residual or
/// SwiGLU, every user one of the chains, in q | k | v column order covering every column, with q and k
/// rotated by one pair of tables and v not, or none rotated, and q and k normalized with one
/// epsilon and weight type and v not, or none normalized. Tables of another type than the
/// heads' (fp32 cos / sin: the rotation in fp32, rounded once) only with norms, which the
/// qk_norm_rope kernel applies; the projection's RoPE epilogue reads tables of the heads' type.
/// Otherwise nullopt.
std::optional<llvm::SmallVector<QkvHeadChain, 3>> qkvHeadChains(graph::LinearOp linear);

} // namespace sinter

#endif
