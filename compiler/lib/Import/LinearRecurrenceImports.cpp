// Import of opset 27's building blocks of linear-attention and state-space language models
// (gated delta networks, Mamba-style token mixers) as ops the graph already has.
// CausalConvWithState: the depthwise causal conv1d over [past_state, input] as one shifted
// multiply-add per kernel tap, the last kernel - 1 positions the next state.
// LinearAttention: the recurrence unrolled over the tokens (as RNN, GRU and LSTM are), the
// state [batch, kv heads, d_k, d_v] in f32: decay, delta correction, the rank-1 write and the
// grouped-query read per token.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <cmath>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// The most tokens LinearAttention unrolls to.
constexpr int64_t kMaxLinearAttentionTokens = 4096;

/// Entries [begin, end) of `value` along `axis`.
Value sliceAlong(NodeImporter &n, Value value, int64_t axis, int64_t begin, int64_t end) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()), steps(type.getRank(), 1),
      shape(type.getShape());
  starts[axis] = begin;
  ends[axis] = end;
  shape[axis] = end - begin;
  return SliceOp::create(
      n.builder, n.loc, type.clone(shape), value, n.builder.getDenseI64ArrayAttr(starts),
      n.builder.getDenseI64ArrayAttr(ends), n.builder.getDenseI64ArrayAttr(steps));
}

/// `value` in element type `et` (itself when it already is).
Value castTo(NodeImporter &n, Value value, Type et) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getElementType() == et
             ? value
             : CastOp::create(n.builder, n.loc, type.clone(et), value).getResult();
}

/// [B, T, heads * d] -> [B, heads, T, d].
Value splitHeads(NodeImporter &n, Value x, int64_t heads) {
  auto type = cast<RankedTensorType>(x.getType());
  const int64_t batch = type.getDimSize(0), tokens = type.getDimSize(1),
                d = type.getDimSize(2) / heads;
  Value split = n.reshape(x, {batch, tokens, heads, d});
  return TransposeOp::create(n.builder, n.loc, type.clone({batch, heads, tokens, d}), split,
                             n.builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
}

/// CausalConvWithState(input [B, C, L], weight [C, 1, K], bias [C], past_state [B, C, K-1]):
/// output[b, c, t] = act(bias[c] + sum_j padded[b, c, t + j] * weight[c, 0, j]) over the
/// padded sequence [past_state (zeros without it), input]; present_state its last K - 1
/// positions. 16-bit inputs are computed in f32 and rounded once.
LogicalResult importCausalConvWithState(NodeImporter &n) {
  const std::string activation = n.attrString("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    return n.fail("attribute 'activation' = '" + activation + "' (none, silu or swish)");
  auto in = n.inputType(0), weight = n.inputType(1);
  if (!in || !weight || failed(requireFloat(n, in, "input")))
    return failure();
  Type et = in.getElementType();
  if (in.getRank() != 3 || weight.getRank() != 3 || weight.getElementType() != et)
    return n.fail("input must be [batch, channels, length] and weight [channels, 1, kernel] of "
                  "input's type");
  const int64_t batch = in.getDimSize(0), channels = in.getDimSize(1), length = in.getDimSize(2),
                kernel = weight.getDimSize(2);
  if (weight.getDimSize(0) != channels || weight.getDimSize(1) != 1 || kernel < 1)
    return n.fail("weight " + shapeText(weight.getShape()) + " must be [" + Twine(channels) +
                  ", 1, kernel >= 1]");
  const SmallVector<int64_t> stateShape = {batch, channels, kernel - 1};
  Value padded = *n.input(0);
  if (kernel > 1) {
    Value past;
    if (n.hasInput(3)) {
      auto pastType = n.inputType(3);
      if (!pastType)
        return failure();
      if (pastType.getShape() != ArrayRef<int64_t>(stateShape) || pastType.getElementType() != et)
        return n.fail("past_state " + shapeText(pastType.getShape()) + " must be " +
                      shapeText(stateShape) + " of input's type");
      past = *n.input(3);
    } else {
      past = n.constant(DenseElementsAttr::get(in.clone(stateShape), n.builder.getZeroAttr(et)));
    }
    padded = ConcatOp::create(n.builder, n.loc, in.clone({batch, channels, length + kernel - 1}),
                              ValueRange{past, padded}, n.builder.getI64IntegerAttr(2));
  } else if (n.hasInput(3) && n.inputType(3) &&
             n.inputType(3).getShape() != ArrayRef<int64_t>(stateShape)) {
    return n.fail("past_state must be " + shapeText(stateShape));
  }
  Type work = et.isF64() ? et : n.builder.getF32Type();
  auto wide = RankedTensorType::get({batch, channels, length}, work);
  Value sum;
  for (int64_t j = 0; j < kernel; ++j) {
    Value tap =
        n.reshape(castTo(n, sliceAlong(n, *n.input(1), 2, j, j + 1), work), {1, channels, 1});
    Value window = castTo(n, sliceAlong(n, padded, 2, j, j + length), work);
    Value product = MulOp::create(n.builder, n.loc, wide, window, tap);
    sum = sum ? AddOp::create(n.builder, n.loc, wide, sum, product).getResult() : product;
  }
  if (n.hasInput(2)) {
    auto bias = n.inputType(2);
    if (!bias)
      return failure();
    if (bias.getShape() != ArrayRef<int64_t>{channels} || bias.getElementType() != et)
      return n.fail("bias must be [" + Twine(channels) + "] of input's type");
    sum = AddOp::create(n.builder, n.loc, wide, sum,
                        n.reshape(castTo(n, *n.input(2), work), {1, channels, 1}));
  }
  if (activation != "none")
    sum = UnaryFnOp::create(n.builder, n.loc, wide, sum, n.builder.getStringAttr("swish"),
                            n.builder.getF32FloatAttr(1.0f), n.builder.getF32FloatAttr(0));
  if (failed(n.setOutput(0, castTo(n, sum, et))))
    return failure();
  if (n.node.output_size() > 1 && !n.node.output(1).empty())
    return n.setOutput(1, sliceAlong(n, padded, 2, length, length + kernel - 1));
  return success();
}

/// LinearAttention(query [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv],
/// past_state [B, Hkv, dk, dv], decay, beta) with update_rule linear, gated, delta or
/// gated_delta. Per token t, in f32: S *= exp(decay_t) (gated); v_t = beta_t (v_t - k_t S)
/// (delta); S += k_t^T v_t; output_t = scale q_t S, query head h reading kv head
/// h / (Hq / Hkv). present_state is S in past_state's type (query's without it).
LogicalResult importLinearAttention(NodeImporter &n) {
  const std::string rule = n.attrString("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    return n.fail("attribute 'update_rule' = '" + rule + "' (linear, gated, delta or gated_delta)");
  (void)n.attrInt("chunk_size", 0); // a tuning hint of chunked kernels; the result is the same
  const bool gated = rule == "gated" || rule == "gated_delta",
             delta = rule == "delta" || rule == "gated_delta";
  const auto *qHeadsAttr = n.attr("q_num_heads"), *kvHeadsAttr = n.attr("kv_num_heads");
  if (!qHeadsAttr || !kvHeadsAttr)
    return n.fail("attributes 'q_num_heads' and 'kv_num_heads' are required");
  const int64_t qHeads = qHeadsAttr->i(), kvHeads = kvHeadsAttr->i();
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads != 0)
    return n.fail("attribute 'q_num_heads' (" + Twine(qHeads) +
                  ") must be a positive multiple of 'kv_num_heads' (" + Twine(kvHeads) + ")");
  if (gated != n.hasInput(4))
    return n.fail("update_rule '" + rule + "' " + (gated ? "needs" : "takes no") + " decay input");
  if (delta != n.hasInput(5))
    return n.fail("update_rule '" + rule + "' " + (delta ? "needs" : "takes no") + " beta input");
  auto q = n.inputType(0), k = n.inputType(1), v = n.inputType(2);
  if (!q || !k || !v || failed(requireFloat(n, q, "query")))
    return failure();
  Type et = q.getElementType();
  if (q.getRank() != 3 || k.getRank() != 3 || v.getRank() != 3 || k.getElementType() != et ||
      v.getElementType() != et)
    return n.fail("query, key and value must be [batch, tokens, heads * head size] of one type");
  const int64_t batch = q.getDimSize(0), tokens = q.getDimSize(1);
  if (k.getDimSize(0) != batch || v.getDimSize(0) != batch || k.getDimSize(1) != tokens ||
      v.getDimSize(1) != tokens || q.getDimSize(2) % qHeads || k.getDimSize(2) % kvHeads ||
      v.getDimSize(2) % kvHeads || q.getDimSize(2) / qHeads != k.getDimSize(2) / kvHeads)
    return n.fail("query " + shapeText(q.getShape()) + ", key " + shapeText(k.getShape()) +
                  " and value " + shapeText(v.getShape()) + " do not split into " + Twine(qHeads) +
                  " and " + Twine(kvHeads) + " heads of one key size");
  if (tokens > kMaxLinearAttentionTokens)
    return n.fail(Twine(tokens) + " tokens: Sinter unrolls at most " +
                  Twine(kMaxLinearAttentionTokens));
  const int64_t dk = q.getDimSize(2) / qHeads, dv = v.getDimSize(2) / kvHeads,
                group = qHeads / kvHeads;
  Type f32 = n.builder.getF32Type();
  auto f32Tensor = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, f32); };
  const SmallVector<int64_t> stateShape = {batch, kvHeads, dk, dv};
  Type stateType = et;
  Value state;
  if (n.hasInput(3)) {
    auto past = n.inputType(3);
    if (!past || failed(requireFloat(n, past, "past_state")))
      return failure();
    if (past.getShape() != ArrayRef<int64_t>(stateShape))
      return n.fail("past_state " + shapeText(past.getShape()) + " must be " +
                    shapeText(stateShape));
    stateType = past.getElementType();
    state = castTo(n, *n.input(3), f32);
  } else {
    state = n.constant(DenseElementsAttr::get(f32Tensor(stateShape), n.builder.getF32FloatAttr(0)));
  }
  // [B, T, heads * d] per-token rows laid out [B, heads, T, d] (decay, beta: d = 1 or d_k).
  auto perToken = [&](unsigned input, ArrayRef<int64_t> widths,
                      StringRef what) -> FailureOr<Value> {
    auto type = n.inputType(input);
    if (!type)
      return failure();
    const int64_t width = type.getRank() == 3 ? type.getDimSize(2) : -1;
    if (type.getRank() != 3 || type.getDimSize(0) != batch || type.getDimSize(1) != tokens ||
        !llvm::is_contained(widths, width) || !isa<FloatType>(type.getElementType())) {
      std::string last = std::to_string(widths.front());
      if (widths.back() != widths.front())
        last += " or " + std::to_string(widths.back());
      (void)n.fail(what + " " + shapeText(type.getShape()) + " must be float [" + Twine(batch) +
                   ", " + Twine(tokens) + ", " + last + "]");
      return failure();
    }
    const int64_t heads = width == 1 ? 1 : kvHeads;
    return splitHeads(n, castTo(n, *n.input(input), f32), heads);
  };
  Value queries = splitHeads(n, castTo(n, *n.input(0), f32), qHeads);
  Value keys = splitHeads(n, castTo(n, *n.input(1), f32), kvHeads);
  Value values = splitHeads(n, castTo(n, *n.input(2), f32), kvHeads);
  Value decay, beta;
  if (gated) {
    auto d = perToken(4, {kvHeads, kvHeads * dk}, "decay");
    if (failed(d))
      return failure();
    decay = *d;
  }
  if (delta) {
    auto b = perToken(5, {kvHeads, 1}, "beta");
    if (failed(b))
      return failure();
    beta = *b;
  }
  float scale = n.attrFloat("scale", 0.0f);
  if (scale == 0.0f)
    scale = float(1.0 / std::sqrt(double(dk)));
  Value scaleValue = n.scalar(f32, scale);
  SmallVector<Value> outputs;
  for (int64_t t = 0; t < tokens; ++t) {
    Value kRow = sliceAlong(n, keys, 2, t, t + 1);   // [B, Hkv, 1, dk]
    Value vRow = sliceAlong(n, values, 2, t, t + 1); // [B, Hkv, 1, dv]
    if (gated) {
      // exp(decay) over the key dimension (or the whole head), broadcast over d_v.
      Value g = sliceAlong(n, decay, 2, t, t + 1);
      const int64_t gWidth = cast<RankedTensorType>(g.getType()).getDimSize(3);
      g = n.reshape(g, {batch, kvHeads, gWidth, 1});
      Value factor =
          UnaryFnOp::create(n.builder, n.loc, g.getType(), g, n.builder.getStringAttr("exp"),
                            n.builder.getF32FloatAttr(0), n.builder.getF32FloatAttr(0));
      state = MulOp::create(n.builder, n.loc, f32Tensor(stateShape), state, factor);
    }
    if (delta) {
      Value retrieved =
          MatMulOp::create(n.builder, n.loc, f32Tensor({batch, kvHeads, 1, dv}), kRow, state);
      Value b = sliceAlong(n, beta, 2, t, t + 1); // [B, Hkv or 1, 1, 1]
      vRow = MulOp::create(
          n.builder, n.loc, f32Tensor({batch, kvHeads, 1, dv}), b,
          SubOp::create(n.builder, n.loc, f32Tensor({batch, kvHeads, 1, dv}), vRow, retrieved));
    }
    Value kColumn = n.reshape(kRow, {batch, kvHeads, dk, 1});
    state = AddOp::create(n.builder, n.loc, f32Tensor(stateShape), state,
                          MulOp::create(n.builder, n.loc, f32Tensor(stateShape), kColumn, vRow));
    // Query heads kv * group .. kv * group + group - 1 read kv head kv's state.
    Value qRows = n.reshape(sliceAlong(n, queries, 2, t, t + 1), {batch, kvHeads, group, dk});
    Value read =
        MatMulOp::create(n.builder, n.loc, f32Tensor({batch, kvHeads, group, dv}), qRows, state);
    read =
        MulOp::create(n.builder, n.loc, f32Tensor({batch, kvHeads, group, dv}), read, scaleValue);
    outputs.push_back(n.reshape(read, {batch, 1, qHeads * dv}));
  }
  Value output = outputs.size() == 1
                     ? outputs.front()
                     : ConcatOp::create(n.builder, n.loc, f32Tensor({batch, tokens, qHeads * dv}),
                                        outputs, n.builder.getI64IntegerAttr(1))
                           .getResult();
  if (failed(n.setOutput(0, castTo(n, output, et))))
    return failure();
  if (n.node.output_size() > 1 && !n.node.output(1).empty())
    return n.setOutput(1, castTo(n, state, stateType));
  return success();
}

} // namespace

void registerLinearRecurrenceImports(OpImportRegistry &r) {
  r["CausalConvWithState"] = {importCausalConvWithState, 27};
  r["LinearAttention"] = {importLinearAttention, 27};
}

} // namespace sinter::import
