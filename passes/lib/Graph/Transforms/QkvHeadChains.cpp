// The head split of a fused QKV projection (QkvHeadChains.h).
#include "sinter/Passes/QkvHeadChains.h"
#include "sinter/Passes/KernelCache.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace sinter;
using namespace sinter::graph;

namespace {

/// `value`'s only user when it is an rms_normalization of `value` over its last axis with a
/// 1-D weight (the qk_norm_rope kernel's norm), keeping the type, or with an fp32 weight and
/// result whose only user casts it back to `value`'s type (`narrowing`).
RMSNormalizationOp lastAxisNorm(Value value, CastOp &narrowing) {
  narrowing = nullptr;
  auto norm = dyn_cast_or_null<RMSNormalizationOp>(singleUser(value));
  if (!norm || norm.getInput() != value)
    return nullptr;
  auto type = cast<RankedTensorType>(value.getType());
  auto scale = cast<RankedTensorType>(norm.getScale().getType());
  int64_t axis = norm.getAxis();
  if ((axis != type.getRank() - 1 && axis != -1) || scale.getRank() != 1 ||
      scale.getDimSize(0) != type.getShape().back())
    return nullptr;
  if (norm.getType() == type && scale.getElementType() == type.getElementType())
    return norm;
  auto back = dyn_cast_or_null<CastOp>(singleUser(norm.getResult()));
  if (!scale.getElementType().isF32() ||
      norm.getType() != type.clone(scale.getElementType()) || !back || back.getType() != type)
    return nullptr;
  narrowing = back;
  return norm;
}

std::optional<QkvHeadChain> matchHeadChain(SliceOp slice) {
  QkvHeadChain c;
  c.slice = slice;
  auto cols = lastAxisColumns(slice);
  if (!cols)
    return std::nullopt;
  std::tie(c.begin, c.end) = *cols;
  // The value after the chain's norm (and its rounding back), if there is one.
  auto normed = [&]() -> Value {
    return c.normCast ? c.normCast.getResult() : c.norm.getResult();
  };
  Value columns = slice.getResult();
  if ((c.norm = lastAxisNorm(columns, c.normCast)))
    columns = normed();
  c.reshape = dyn_cast_or_null<ReshapeOp>(singleUser(columns));
  if (!c.reshape || c.reshape.getType().getRank() != 4)
    return std::nullopt;
  Value heads = c.reshape.getResult();
  if (!c.norm && (c.norm = lastAxisNorm(heads, c.normCast)))
    heads = normed();
  c.transpose = dyn_cast_or_null<TransposeOp>(singleUser(heads));
  if (!c.transpose || c.transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3})
    return std::nullopt;
  if (auto rope = dyn_cast_or_null<RopeOp>(singleUser(c.transpose.getResult()))) {
    if (rope.getInput() != c.transpose.getResult())
      return std::nullopt;
    c.rope = rope;
  }
  auto setAttention = [&](Operation *op, unsigned operand) {
    if (c.attention && c.attention != op)
      return false;
    c.attention = op;
    c.operand = operand;
    return true;
  };
  bool cacheWritten = false;
  for (OpOperand &use : c.head().getUses()) {
    Operation *user = use.getOwner();
    unsigned n = use.getOperandNumber();
    if (isa<FusedAttentionOp>(user) && n <= 2) {
      if (!setAttention(user, n))
        return std::nullopt;
    } else if (isa<DecodeAttentionOp>(user) && n == 0) {
      if (!setAttention(user, 0))
        return std::nullopt;
    } else if (auto write = dyn_cast<CacheWriteOp>(user);
               write && n == 1 && !cacheWritten && isKernelCache(write)) {
      // (A cache the KV kernels do not address, a batch of sequences, is written row by row
      // from a head of its own: no split read in place.)
      cacheWritten = true;
      for (OpOperand &read : write.getResult().getUses())
        if (isa<DecodeAttentionOp>(read.getOwner()) &&
            (read.getOperandNumber() == 1 || read.getOperandNumber() == 2) &&
            !setAttention(read.getOwner(), read.getOperandNumber()))
          return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (!c.attention)
    return std::nullopt;
  return c;
}

} // namespace

std::optional<SmallVector<QkvHeadChain, 3>> sinter::qkvHeadChains(LinearOp linear) {
  // The kernels write the rotated columns in the epilogue that a residual would take (a bias
  // is added before the rotation, as the model's projection does), and a SwiGLU result has no
  // q | k | v columns.
  if (linear.getResidual() || linear.getGateUpColumns() ||
      (linear.getBias() && !linear.getBias().getDefiningOp<ConstantOp>()) ||
      !linear.getType().getElementType().isBF16() ||
      !linear.getWeight().getDefiningOp<ConstantOp>() || linear.getType().getRank() != 3)
    return std::nullopt;
  SmallVector<QkvHeadChain, 3> chains;
  for (Operation *user : linear->getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    std::optional<QkvHeadChain> chain = slice ? matchHeadChain(slice) : std::nullopt;
    if (!chain || chains.size() == 3)
      return std::nullopt;
    chains.push_back(*chain);
  }
  if (chains.size() != 3)
    return std::nullopt;
  llvm::sort(chains,
             [](const QkvHeadChain &x, const QkvHeadChain &y) { return x.begin < y.begin; });
  int64_t n = linear.getType().getDimSize(2);
  int64_t headDim = chains[0].reshape.getType().getDimSize(3);
  for (auto [i, c] : llvm::enumerate(chains))
    if (c.attention != chains[0].attention || c.operand != i ||
        c.reshape.getType().getDimSize(3) != headDim || c.begin != (i == 0 ? 0 : chains[i - 1].end))
      return std::nullopt;
  if (chains[2].end != n || chains[1].reshape.getType() != chains[2].reshape.getType())
    return std::nullopt;
  bool rotated = chains[0].rope && chains[1].rope && !chains[2].rope &&
                 chains[0].rope.getCos() == chains[1].rope.getCos() &&
                 chains[0].rope.getSin() == chains[1].rope.getSin();
  bool plain = !chains[0].rope && !chains[1].rope && !chains[2].rope;
  if (!rotated && !plain)
    return std::nullopt;
  if (chains[2].norm || !chains[0].norm != !chains[1].norm ||
      (chains[0].norm && (chains[0].norm.getEpsilon() != chains[1].norm.getEpsilon() ||
                          !chains[0].normCast != !chains[1].normCast)))
    return std::nullopt;
  // qk_norm_rope rotates whole heads: no partial rotary after q / k norms (no model has both).
  if (rotated && chains[0].norm && chains[0].rope.rotaryDim() != headDim)
    return std::nullopt;
  Type headType = linear.getType().getElementType();
  if (rotated && !chains[0].norm &&
      (getElementTypeOrSelf(chains[0].rope.getCos()) != headType ||
       getElementTypeOrSelf(chains[0].rope.getSin()) != headType))
    return std::nullopt;
  return chains;
}
