// Import of normalization, softmax, masks and attention: Softmax, LogSoftmax,
// RMSNormalization, Trilu, Attention.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/AttentionExpansion.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// Softmax and LogSoftmax (opset 13: one axis, default the last).
template <typename OpT> LogicalResult importSoftmax(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in || failed(requireFloat(n, in, n.node.op_type() + " input")))
    return failure();
  if (in.getRank() == 0)
    return n.fail(n.node.op_type() + " input must have rank >= 1");
  auto axis = normalizeAxis(n, n.attrInt("axis", -1), in.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  return n.setResult(
      OpT::create(n.builder, n.loc, in, *n.input(0), n.builder.getI64IntegerAttr(*axis)));
}

LogicalResult importRMSNormalization(NodeImporter &n) {
  auto in = n.inputType(0), scale = n.inputType(1);
  if (!in || !scale || failed(requireFloat(n, in, "input X")) ||
      failed(requireFloat(n, scale, "input scale")))
    return failure();
  auto axis = normalizationAxis(n, in);
  if (failed(axis))
    return failure();
  auto b = broadcastShapes(in.getShape(), scale.getShape());
  if (scale.getRank() > in.getRank() - *axis || failed(b) ||
      ArrayRef<int64_t>(*b) != in.getShape())
    return n.fail("scale does not broadcast to the normalized dimensions of X");
  float epsilon = n.attrFloat("epsilon", 1e-5f);
  if (!(epsilon >= 0) || !std::isfinite(epsilon))
    return n.fail("attribute 'epsilon' must be finite and non-negative");
  auto op = RMSNormalizationOp::create(
      n.builder, n.loc, n.tensorType(in.getShape(), scale.getElementType()), *n.input(0),
      *n.input(1), n.builder.getI64IntegerAttr(*axis), n.builder.getF32FloatAttr(epsilon));
  return n.setResult(op);
}

LogicalResult importTrilu(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  if (in.getRank() < 2)
    return n.fail("Trilu input must have rank >= 2");
  int64_t k = 0;
  if (n.hasInput(1)) {
    auto given = n.constantInts(1);
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return n.fail("input k must hold exactly one value");
    k = (*given)[0];
  }
  bool upper = n.attrInt("upper", 1) != 0;
  auto op = TriluOp::create(n.builder, n.loc, in, *n.input(0), n.builder.getBoolAttr(upper),
                            n.builder.getI64IntegerAttr(k));
  return n.setResult(op);
}

/// `mask` (bool or additive, of the scores' element type `et`) and the bool `allowed`, as one
/// mask of their broadcast shape; null when they do not broadcast.
Value combineMasks(NodeImporter &n, Value mask, Value allowed, Type et) {
  auto maskType = cast<RankedTensorType>(mask.getType());
  auto shape = broadcastShapes(maskType.getShape(),
                               cast<RankedTensorType>(allowed.getType()).getShape());
  if (failed(shape))
    return Value();
  if (maskType.getElementType().isInteger(1))
    return AndOp::create(n.builder, n.loc, n.tensorType(*shape, n.builder.getI1Type()), mask,
                         allowed);
  Value minusInf = n.constant(DenseElementsAttr::get(
      RankedTensorType::get({}, et),
      n.builder.getFloatAttr(et, -std::numeric_limits<double>::infinity())));
  return WhereOp::create(n.builder, n.loc, n.tensorType(*shape, et), allowed, mask, minusInf);
}

/// Opset 24's nonpad_kv_seqlen (input 6, [B]): sequence b's keys at or past its count are
/// padding, and a causal frontier or window is aligned to its last valid key (query i of
/// qLength sits at position i + count - qLength). The bool [B, 1, 1 or Lq, Lk] mask of the
/// keys each query attends, computed from the counts at run time.
FailureOr<Value> validKeyMask(NodeImporter &n, RankedTensorType query, int64_t qLength,
                              int64_t kvLength, bool causal, int64_t leftWindow,
                              int64_t rightWindow) {
  auto counts = n.inputType(6);
  if (!counts)
    return failure();
  int64_t batch = query.getDimSize(0);
  if (!counts.getElementType().isInteger(64) || counts.getRank() != 1 ||
      counts.getDimSize(0) != batch) {
    (void)n.fail("nonpad_kv_seqlen must be int64 [" + Twine(batch) + "]");
    return failure();
  }
  if (qLength * kvLength > (int64_t(1) << 28)) {
    (void)n.fail("the key mask over " + Twine(qLength) + " queries and " + Twine(kvLength) +
                 " keys is too large to hold its position table as a constant");
    return failure();
  }
  Type i64 = n.builder.getI64Type(), i1 = n.builder.getI1Type();
  Value count = n.reshape(*n.input(6), {batch, 1, 1, 1});
  // table(f): the [1, 1, rows, Lk] constant f(i, j).
  auto table = [&](int64_t rows, auto f) {
    SmallVector<int64_t> values;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < kvLength; ++j)
        values.push_back(f(i, j));
    return n.constant(
        DenseElementsAttr::get(RankedTensorType::get({1, 1, rows, kvLength}, i64),
                               ArrayRef<int64_t>(values)));
  };
  auto atMost = [&](Value lhs, Value rhs) -> Value {
    auto shape = broadcastShapes(cast<RankedTensorType>(lhs.getType()).getShape(),
                                 cast<RankedTensorType>(rhs.getType()).getShape());
    return LessOrEqualOp::create(n.builder, n.loc, n.tensorType(*shape, i1), lhs, rhs);
  };
  auto both = [&](Value lhs, Value rhs) -> Value {
    auto shape = broadcastShapes(cast<RankedTensorType>(lhs.getType()).getShape(),
                                 cast<RankedTensorType>(rhs.getType()).getShape());
    return AndOp::create(n.builder, n.loc, n.tensorType(*shape, i1), lhs, rhs);
  };
  // Key j is valid while j + 1 <= count.
  Value allowed = atMost(table(1, [](int64_t, int64_t j) { return j + 1; }), count);
  // Query i's position p = i + count - qLength: j <= p, p - j <= left and j - p <= right,
  // each with the count alone on one side.
  if (causal)
    allowed = both(allowed, atMost(table(qLength, [&](int64_t i, int64_t j) {
                                     return j - i + qLength;
                                   }),
                                   count));
  if (leftWindow >= 0)
    allowed = both(allowed, atMost(count, table(qLength, [&](int64_t i, int64_t j) {
                                     return leftWindow + j - i + qLength;
                                   })));
  if (rightWindow >= 0)
    allowed = both(allowed, atMost(table(qLength, [&](int64_t i, int64_t j) {
                                     return j - i + qLength - rightWindow;
                                   }),
                                   count));
  return allowed;
}

LogicalResult importAttention(NodeImporter &n) {
  if (n.numInputs() > 7)
    return n.fail("inputs beyond nonpad_kv_seqlen are not supported");
  float softcap = n.attrFloat("softcap", 0.0f);
  if (softcap < 0.0f)
    return n.fail("attribute 'softcap' must be non-negative");
  int64_t qkMode = n.attrInt("qk_matmul_output_mode", 0);
  if (qkMode < 0 || qkMode > 3)
    return n.fail("attribute 'qk_matmul_output_mode' = " + Twine(qkMode) + " (0 to 3)");
  // The scores as an output: the node is written as primitives (no fused attention op), so
  // that the intermediate the mode names exists.
  bool wantsScores = n.node.output_size() > 3 && !n.node.output(3).empty();
  bool hasPast = n.hasInput(4) || n.hasInput(5);
  if (hasPast && !(n.hasInput(4) && n.hasInput(5)))
    return n.fail("past_key and past_value must be given together");
  const bool hasValidKeys = n.hasInput(6);
  if (hasValidKeys && hasPast)
    return n.fail("nonpad_kv_seqlen cannot be combined with past_key and past_value");
  bool wantsPresent = (n.node.output_size() > 1 && !n.node.output(1).empty()) ||
                      (n.node.output_size() > 2 && !n.node.output(2).empty());

  auto q = n.inputType(0), k = n.inputType(1), v = n.inputType(2);
  if (!q || !k || !v || failed(requireFloat(n, q, "Q")))
    return failure();
  Type et = q.getElementType();
  if (k.getElementType() != et || v.getElementType() != et)
    return n.fail("Q, K and V must have the same element type");
  // The fused attention and the generated softmax accumulate in f32 (f64 for f64 inputs), which
  // covers a float, float16 or bfloat16 softmax_precision; a double one over narrower inputs
  // is written as primitives with the softmax in f64.
  Type softmaxType;
  if (const auto *p = n.attr("softmax_precision")) {
    if (p->i() == 11 && !et.isF64())
      softmaxType = n.builder.getF64Type();
    else if (p->i() != 1 && p->i() != 10 && p->i() != 11 && p->i() != 16)
      return n.fail("attribute 'softmax_precision' = " + Twine(p->i()) +
                    " is not a floating-point type (1 float, 10 float16, 11 double, 16 "
                    "bfloat16)");
  }
  const bool expanded = wantsScores || softmaxType;
  int64_t rank = q.getRank();
  if ((rank != 3 && rank != 4) || k.getRank() != rank || v.getRank() != rank)
    return n.fail("Q, K and V must all be 3-D or all 4-D");

  int64_t qHeads, kvHeads;
  const auto *qAttr = n.attr("q_num_heads"), *kvAttr = n.attr("kv_num_heads");
  if (rank == 3) {
    if (!qAttr || !kvAttr)
      return n.fail("attributes 'q_num_heads' and 'kv_num_heads' are required for 3-D inputs");
    qHeads = qAttr->i();
    kvHeads = kvAttr->i();
  } else {
    qHeads = q.getDimSize(1);
    kvHeads = k.getDimSize(1);
    if (qAttr && qAttr->i() != qHeads)
      return n.fail("attribute 'q_num_heads' = " + Twine(qAttr->i()) +
                    " does not match Q's head dimension " + Twine(qHeads));
    if (kvAttr && kvAttr->i() != kvHeads)
      return n.fail("attribute 'kv_num_heads' = " + Twine(kvAttr->i()) +
                    " does not match K's head dimension " + Twine(kvHeads));
  }
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads != 0)
    return n.fail("attribute 'q_num_heads' (" + Twine(qHeads) +
                  ") must be a positive multiple of 'kv_num_heads' (" + Twine(kvHeads) + ")");

  Value mask;
  std::optional<ArrayRef<int64_t>> maskShape;
  RankedTensorType maskType;
  if (n.hasInput(3)) {
    maskType = n.inputType(3);
    if (!maskType)
      return failure();
    Type mt = maskType.getElementType();
    if (!mt.isInteger(1) && mt != et)
      return n.fail("attn_mask must be bool or of Q's element type; integer masks are not "
                    "supported");
    // Its last dimension is the keys' (a scalar would say nothing about them).
    if (maskType.getRank() == 0)
      return n.fail("attn_mask must have at least one dimension (its last indexes the keys)");
    mask = *n.input(3);
    maskShape = maskType.getShape();
  }
  // With a cache (or present outputs) the operands are 4-D [B, heads, S, D]: 3-D ones are
  // split into heads, and the keys and values follow the past ones along S.
  Value query = *n.input(0), key = *n.input(1), value = *n.input(2);
  bool flat = rank == 3;
  if (hasPast || wantsPresent || expanded) {
    auto toHeads = [&](Value x, int64_t heads) -> Value {
      if (!flat)
        return x;
      auto t = cast<RankedTensorType>(x.getType());
      int64_t b = t.getDimSize(0), seq = t.getDimSize(1), d = t.getDimSize(2) / heads;
      Value split = n.reshape(x, {b, seq, heads, d});
      return TransposeOp::create(n.builder, n.loc, n.tensorType({b, heads, seq, d}, et), split,
                                 n.builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
    };
    if (flat && (q.getDimSize(2) % qHeads || k.getDimSize(2) % kvHeads || v.getDimSize(2) % kvHeads))
      return n.fail("hidden sizes must be multiples of the head counts");
    query = toHeads(query, qHeads);
    key = toHeads(key, kvHeads);
    value = toHeads(value, kvHeads);
  }
  int64_t pastLength = 0;
  if (hasPast) {
    auto appendPast = [&](unsigned input, Value current) -> FailureOr<Value> {
      auto past = n.inputType(input);
      if (!past)
        return failure();
      auto now = cast<RankedTensorType>(current.getType());
      if (past.getRank() != 4 || past.getElementType() != et ||
          past.getDimSize(0) != now.getDimSize(0) || past.getDimSize(1) != now.getDimSize(1) ||
          past.getDimSize(3) != now.getDimSize(3)) {
        (void)n.fail("input '" + n.node.input(input) + "' must be [B, kv_num_heads, past, D] of Q's type");
        return failure();
      }
      SmallVector<int64_t> shape(now.getShape());
      shape[2] += past.getDimSize(2);
      return ConcatOp::create(n.builder, n.loc, n.tensorType(shape, et),
                              ValueRange{*n.input(input), current}, n.builder.getI64IntegerAttr(2))
          .getResult();
    };
    auto k2 = appendPast(4, key), v2 = appendPast(5, value);
    if (failed(k2) || failed(v2))
      return failure();
    pastLength = n.inputType(4).getDimSize(2);
    key = *k2;
    value = *v2;
  }
  int64_t opRank = cast<RankedTensorType>(query.getType()).getRank();
  int64_t qLength = cast<RankedTensorType>(query.getType()).getDimSize(opRank - 2);
  int64_t kvLength = cast<RankedTensorType>(key.getType()).getDimSize(opRank - 2);
  bool causal = n.attrInt("is_causal", 0) != 0;
  // Opset 25's sliding window: query i, at absolute position p = i + past, attends key j
  // while p - left <= j <= p + right (-1: that side unbounded).
  const int64_t leftWindow = n.attrInt("left_window_size", -1),
                rightWindow = n.attrInt("right_window_size", -1);
  if (leftWindow < -1 || rightWindow < -1)
    return n.fail("attributes 'left_window_size' and 'right_window_size' must be -1 or "
                  "non-negative (got " + Twine(leftWindow) + ", " + Twine(rightWindow) + ")");
  const bool windowed = leftWindow >= 0 || rightWindow >= 0;
  if (mask && maskShape->back() > kvLength)
    return n.fail("attn_mask covers " + Twine(maskShape->back()) + " keys, the keys are " +
                  Twine(kvLength));
  if (mask && maskShape->back() < kvLength) {
    // A mask shorter than the keys leaves the rest masked (opset 24's reading of it).
    SmallVector<int64_t> padShape(*maskShape), paddedShape(*maskShape);
    padShape.back() = kvLength - maskShape->back();
    paddedShape.back() = kvLength;
    Type mt = maskType.getElementType();
    auto padType = RankedTensorType::get(padShape, mt);
    Value pad = n.constant(
        mt.isInteger(1)
            ? DenseElementsAttr::get(padType, false)
            : DenseElementsAttr::get(
                  padType, n.builder.getFloatAttr(mt, -std::numeric_limits<double>::infinity())));
    mask = ConcatOp::create(n.builder, n.loc, n.tensorType(paddedShape, mt), ValueRange{mask, pad},
                            n.builder.getI64IntegerAttr(int64_t(paddedShape.size()) - 1));
    maskType = cast<RankedTensorType>(mask.getType());
    maskShape = maskType.getShape();
  }
  if (!hasValidKeys && ((causal && pastLength > 0) || windowed)) {
    // With a cache the causal frontier is bottom-right aligned: query i attends key j while
    // j <= i + past. Written as a mask (is_causal means top-left in the graph op), with the
    // window's bounds.
    if (qLength * kvLength > (int64_t(1) << 28))
      return n.fail("the causal / sliding-window mask over " + Twine(qLength) + " queries and " +
                    Twine(kvLength) + " keys is too large to hold as a constant");
    SmallVector<bool> allowed;
    for (int64_t i = 0; i < qLength; ++i)
      for (int64_t j = 0; j < kvLength; ++j) {
        const int64_t position = i + pastLength;
        allowed.push_back((!causal || j <= position) &&
                          (leftWindow < 0 || position - j <= leftWindow) &&
                          (rightWindow < 0 || j - position <= rightWindow));
      }
    auto allowedType = RankedTensorType::get({qLength, kvLength}, n.builder.getI1Type());
    Value causalMask = n.constant(DenseElementsAttr::get(allowedType, allowed));
    mask = mask ? combineMasks(n, mask, causalMask, et) : causalMask;
    if (!mask)
      return n.fail("attn_mask does not broadcast to the scores");
    causal = false;
  }
  if (hasValidKeys) {
    FailureOr<Value> keyMask = validKeyMask(n, cast<RankedTensorType>(query.getType()), qLength,
                                            kvLength, causal, leftWindow, rightWindow);
    if (failed(keyMask))
      return failure();
    mask = mask ? combineMasks(n, mask, *keyMask, et) : *keyMask;
    if (!mask)
      return n.fail("attn_mask does not broadcast to the scores");
    causal = false;
  }
  std::optional<ArrayRef<int64_t>> opMaskShape;
  if (mask)
    opMaskShape = cast<RankedTensorType>(mask.getType()).getShape();
  std::string error;
  auto shape = AttentionOp::inferShape(cast<RankedTensorType>(query.getType()).getShape(),
                                       cast<RankedTensorType>(key.getType()).getShape(),
                                       cast<RankedTensorType>(value.getType()).getShape(),
                                       opMaskShape, qHeads, kvHeads, error);
  if (failed(shape))
    return n.fail(error);
  int64_t headSize = rank == 4 ? q.getDimSize(3) : q.getDimSize(2) / qHeads;
  float scale = n.attr("scale") ? n.attrFloat("scale", 1.0f)
                                : (float)(1.0 / std::sqrt((double)std::max<int64_t>(headSize, 1)));
  Value y, scores;
  if (expanded) {
    bool boolMask = mask && cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1);
    AttentionExpansion parts =
        expandAttention(n.builder, n.loc, query, key, value, qHeads, kvHeads, scale, causal,
                        boolMask ? mask : Value(), boolMask ? Value() : mask, softcap, softmaxType);
    y = parts.output;
    // ONNX's modes: 0 the (soft-capped) scaled product, 1 after the softcap, 2 after the
    // masks, 3 after the softmax.
    scores = qkMode == 3 ? parts.probabilities : qkMode == 2 ? parts.maskedScores : parts.scores;
  } else {
    y = AttentionOp::create(n.builder, n.loc, n.tensorType(*shape, et), query, key, value, mask,
                            n.builder.getI64IntegerAttr(qHeads),
                            n.builder.getI64IntegerAttr(kvHeads), n.builder.getF32FloatAttr(scale),
                            n.builder.getBoolAttr(causal), n.builder.getF32FloatAttr(softcap));
  }
  if (flat && opRank == 4) {
    auto y4 = cast<RankedTensorType>(y.getType()).getShape();
    Value t = TransposeOp::create(n.builder, n.loc,
                                  n.tensorType({y4[0], y4[2], y4[1], y4[3]}, et), y,
                                  n.builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
    y = n.reshape(t, {y4[0], y4[2], y4[1] * y4[3]});
  }
  if (failed(n.setOutput(0, y)))
    return failure();
  if (n.node.output_size() > 1 && !n.node.output(1).empty() && failed(n.setOutput(1, key)))
    return failure();
  if (n.node.output_size() > 2 && !n.node.output(2).empty() && failed(n.setOutput(2, value)))
    return failure();
  return wantsScores ? n.setOutput(3, scores) : success();
}

} // namespace

void registerTensorImports(OpImportRegistry &r) {
  r["Softmax"] = {importSoftmax<SoftmaxOp>, 13};
  r["LogSoftmax"] = {importSoftmax<LogSoftmaxOp>, 13};
  r["RMSNormalization"] = {importRMSNormalization, 23};
  r["Trilu"] = {importTrilu, 14};
  r["Attention"] = {importAttention, 23};
}

} // namespace sinter::import
