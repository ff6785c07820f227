// The attention computation as graph primitives (see AttentionExpansion.h).
#include "sinter/Dialect/Graph/IR/AttentionExpansion.h"

#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <limits>

using namespace mlir;

namespace sinter::graph {

AttentionExpansion expandAttention(OpBuilder &builder, Location loc, Value q, Value k, Value v,
                                   int64_t hq, int64_t hkv, float scale, bool causal, Value keep,
                                   Value bias, float softcap, Type softmaxType) {
  AttentionExpansion result;
  Type et = cast<RankedTensorType>(q.getType()).getElementType();
  auto tensor = [&](ArrayRef<int64_t> shape, Type t = {}) {
    return RankedTensorType::get(shape, t ? t : et);
  };
  auto shapeConst = [&](ArrayRef<int64_t> shape) -> Value {
    auto type = RankedTensorType::get({(int64_t)shape.size()}, builder.getI64Type());
    return ConstantOp::create(builder, loc, DenseElementsAttr::get(type, shape));
  };
  auto reshape = [&](Value x, ArrayRef<int64_t> shape) -> Value {
    return ReshapeOp::create(builder, loc,
                             tensor(shape, cast<ShapedType>(x.getType()).getElementType()), x,
                             shapeConst(shape));
  };
  auto q4 = cast<RankedTensorType>(q.getType()).getShape();
  auto k4 = cast<RankedTensorType>(k.getType()).getShape();
  auto v4 = cast<RankedTensorType>(v.getType()).getShape();
  int64_t batch = q4[0], sq = q4[2], d = q4[3], skv = k4[2], dv = v4[3];
  auto expandHeads = [&](Value x, int64_t dim) -> Value {
    if (hq == hkv)
      return x;
    int64_t group = hq / hkv;
    Value r = reshape(x, {batch, hkv, 1, skv, dim});
    SmallVector<int64_t> full = {batch, hkv, group, skv, dim};
    Value e = ExpandOp::create(builder, loc, tensor(full), r, shapeConst(full));
    return reshape(e, {batch, hq, skv, dim});
  };
  k = expandHeads(k, d);
  v = expandHeads(v, dv);
  Value kt = TransposeOp::create(builder, loc, tensor({batch, hq, d, skv}), k,
                                 builder.getDenseI64ArrayAttr({0, 1, 3, 2}));
  auto scoreType = tensor({batch, hq, sq, skv});
  Value scores = MatMulOp::create(builder, loc, scoreType, q, kt);
  auto scalar = [&](double value) -> Value {
    return ConstantOp::create(builder, loc,
                              DenseElementsAttr::get(tensor({}), builder.getFloatAttr(et, value)));
  };
  scores = MulOp::create(builder, loc, scoreType, scores, scalar(scale));
  if (softcap > 0.0f) {
    Value scaled = MulOp::create(builder, loc, scoreType, scores, scalar(1.0 / softcap));
    Value t = UnaryFnOp::create(builder, loc, scoreType, scaled, builder.getStringAttr("tanh"),
                                builder.getF32FloatAttr(0), builder.getF32FloatAttr(0));
    scores = MulOp::create(builder, loc, scoreType, t, scalar(softcap));
  }
  result.scores = scores;
  Value negInf = scalar(-std::numeric_limits<double>::infinity());
  if (keep)
    scores = WhereOp::create(builder, loc, scoreType, keep, scores, negInf);
  if (bias)
    scores = AddOp::create(builder, loc, scoreType, scores, bias);
  if (causal) {
    SmallVector<bool> allowed;
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < skv; ++j)
        allowed.push_back(j <= i);
    auto causalType = RankedTensorType::get({sq, skv}, builder.getI1Type());
    Value mask = ConstantOp::create(builder, loc, DenseElementsAttr::get(causalType, allowed));
    scores = WhereOp::create(builder, loc, scoreType, mask, scores, negInf);
  }
  result.maskedScores = scores;
  const bool recast = softmaxType && softmaxType != et;
  auto softmaxScores = tensor({batch, hq, sq, skv}, recast ? softmaxType : et);
  if (recast)
    scores = CastOp::create(builder, loc, softmaxScores, scores);
  Value probs =
      SoftmaxOp::create(builder, loc, softmaxScores, scores, builder.getI64IntegerAttr(3));
  if (recast)
    probs = CastOp::create(builder, loc, scoreType, probs);
  // A row whose keys are all masked is NaN after the softmax (-inf - -inf); it gives zeros.
  auto flags = tensor({batch, hq, sq, skv}, builder.getI1Type());
  Value nan = IsNaNOp::create(builder, loc, flags, probs);
  probs = WhereOp::create(builder, loc, scoreType, nan, scalar(0.0), probs);
  result.probabilities = probs;
  result.output = MatMulOp::create(builder, loc, tensor({batch, hq, sq, dv}), probs, v);
  return result;
}

} // namespace sinter::graph
