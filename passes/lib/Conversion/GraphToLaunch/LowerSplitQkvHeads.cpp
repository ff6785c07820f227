// The head split of a fused QKV projection: no launch (the heads are read in place), except
// that q / k norms are a qk_norm_rope launch normalizing and rotating them in place (unless the
// decode attention applies them: norm_in_attention).
#include "LaunchLowering.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace sinter;
namespace kn = sinter::kernels;

LogicalResult FunctionLowering::lowerSplitQkvHeads(graph::SplitQkvHeadsOp split) {
  auto linear = split.getQkv().getDefiningOp<graph::LinearOp>();
  if (!linear || !wantsKernel(linear) || !buffers.count(split.getQkv()))
    return split.emitError("the heads are read in place: the qkv operand must be a bf16 linear "
                           "with a constant weight");
  if (!split.hasNorm() || split.getNormInAttention())
    return success();
  auto qkvType = split.getQkv().getType();
  int64_t m = qkvType.getDimSize(0) * qkvType.getDimSize(1), rowStride = qkvType.getDimSize(2);
  int64_t headDim = split.getQ().getType().getDimSize(3);
  int64_t qCols = split.columnOffset(1), kCols = split.columnOffset(2) - qCols;
  auto span = [](Value weight) { return cast<RankedTensorType>(weight.getType()).getDimSize(0); };
  int64_t qSpan = span(split.getQNorm()), kSpan = span(split.getKNorm());
  if (!kn::qk_norm_rope_supported(m, rowStride, qCols, kCols, headDim, qSpan, kSpan))
    return split.emitError("no qk_norm_rope configuration for q/k norms over ")
           << qSpan << " and " << kSpan << " columns of heads of " << headDim
           << " (at most " << kn::kQkNormMaxSpan << ")";
  auto qWeight = bufferOf(split.getQNorm()), kWeight = bufferOf(split.getKNorm());
  if (failed(qWeight) || failed(kWeight))
    return failure();
  Value cos, sin;
  if (split.hasRope()) {
    auto tables = ropeTableBuffers(split, split, m, /*allowF32=*/true);
    if (failed(tables))
      return failure();
    std::tie(cos, sin) = *tables;
  }
  float eps = split.getNormEpsilon()->convertToFloat();
  kn::LaunchParams lp = kn::qk_norm_rope_launch(m, qCols, kCols, qSpan, kSpan);
  SmallVector<Attribute> params = {
      intParam(builder, m),     intParam(builder, rowStride), intParam(builder, qCols),
      intParam(builder, kCols), intParam(builder, headDim),   intParam(builder, qSpan),
      intParam(builder, kSpan), strParam(builder, split.hasRope() ? "true" : "false"),
      strParam(builder, std::to_string(floatBits(eps)) + "u")};
  // fp32 norm weights or tables (OLMo 2's): the optional type parameters, both given.
  Type weightType = getElementTypeOrSelf(*qWeight);
  Type tableType = cos ? getElementTypeOrSelf(cos) : builder.getBF16Type();
  if (!weightType.isBF16() || !tableType.isBF16()) {
    params.push_back(strParam(builder, cxxType(weightType)));
    params.push_back(strParam(builder, cxxType(tableType)));
  }
  return emitKernel(split.getLoc(), "qk_norm_rope", params,
                    {*qWeight, *kWeight, cos, sin, buffers.lookup(split.getQkv())},
                    {lp.grid.x, lp.grid.y, lp.grid.z}, {lp.block.x, lp.block.y, lp.block.z},
                    lp.shared_bytes, {4});
}

std::optional<HeadColumns> FunctionLowering::headColumns(Value head) {
  auto split = head.getDefiningOp<graph::SplitQkvHeadsOp>();
  if (!split)
    return std::nullopt;
  return HeadColumns{buffers.lookup(split.getQkv()), split.getQkv().getType().getDimSize(2),
                     split.columnOffset(cast<OpResult>(head).getResultNumber())};
}
