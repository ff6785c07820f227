// Import of the normalizations over an [N, C, spatial...] input that CNNs and audio encoders
// use: BatchNormalization (inference: the running statistics, an affine map per channel),
// InstanceNormalization (each (sample, channel) row normalized) and GroupNormalization (each
// group of channels of a sample), the last two as a LayerNormalization over a reshaped view
// followed by the per-channel scale and bias. Also MeanVarianceNormalization and LRN (a sum
// over neighbouring channels).
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// X [N, C, ...] of at least `minRank` dimensions.
FailureOr<RankedTensorType> channelInput(NodeImporter &n, int64_t minRank) {
  auto x = n.inputType(0);
  if (!x || failed(requireFloat(n, x, "input X")))
    return failure();
  if (x.getRank() < minRank)
    return n.fail("X [" + shapeText(x.getShape()) + "] must be [batch, channels" +
                  (minRank > 2 ? ", spatial...]" : ", ...]"));
  return x;
}

/// Input `i`, which must be a [channels] vector of X's element type, viewed as [C, 1, ...] to
/// broadcast over X [N, C, D...].
FailureOr<Value> perChannel(NodeImporter &n, unsigned i, StringRef what, RankedTensorType x) {
  auto t = n.inputType(i);
  if (!t)
    return failure();
  const int64_t channels = x.getDimSize(1);
  if (t.getShape() != ArrayRef<int64_t>{channels} || t.getElementType() != x.getElementType())
    return n.fail(what + " must be [" + Twine(channels) + "] of X's element type, got [" +
                  shapeText(t.getShape()) + "]");
  SmallVector<int64_t> shape(x.getRank() - 1, 1);
  shape[0] = channels;
  return n.reshape(*n.input(i), shape);
}

LogicalResult importBatchNormalization(NodeImporter &n) {
  auto x = channelInput(n, 2);
  if (failed(x))
    return failure();
  if (n.attrInt("training_mode", 0) != 0)
    return n.fail("training_mode = 1 is not supported (inference: the running statistics)");
  for (int i = 1; i < n.node.output_size(); ++i)
    if (!n.node.output(i).empty())
      return n.fail("the running_mean / running_var outputs are training outputs; only Y is "
                    "supported");
  (void)n.attrFloat("momentum", 0.9f); // updates the running statistics in training only
  const double eps = n.attrFloat("epsilon", 1e-5f);
  auto scale = perChannel(n, 1, "scale", *x), bias = perChannel(n, 2, "B", *x);
  auto mean = perChannel(n, 3, "input_mean", *x), var = perChannel(n, 4, "input_var", *x);
  if (failed(scale) || failed(bias) || failed(mean) || failed(var))
    return failure();
  // (x - mean) / sqrt(var + eps) * scale + B, in X's type; f32 for 16-bit X, rounded once.
  Type et = x->getElementType(), work = et.isF32() || et.isF64() ? et : n.builder.getF32Type();
  auto widen = [&](Value v) -> Value {
    auto t = cast<RankedTensorType>(v.getType());
    return work == et ? v : CastOp::create(n.builder, n.loc, t.clone(work), v).getResult();
  };
  auto full = n.tensorType(x->getShape(), work);
  auto channel = cast<RankedTensorType>(scale->getType()).clone(work);
  Value deviation = SqrtOp::create(n.builder, n.loc, channel,
                             AddOp::create(n.builder, n.loc, channel, widen(*var),
                                           n.scalar(work, eps)));
  Value y = SubOp::create(n.builder, n.loc, full, widen(*n.input(0)), widen(*mean));
  y = DivOp::create(n.builder, n.loc, full, y, deviation);
  y = MulOp::create(n.builder, n.loc, full, y, widen(*scale));
  y = AddOp::create(n.builder, n.loc, full, y, widen(*bias));
  if (work != et)
    y = CastOp::create(n.builder, n.loc, n.tensorType(x->getShape(), et), y);
  return n.setOutput(0, y);
}

/// LayerNormalization of X viewed as [N, rows, width] over its last axis, then X's per-channel
/// scale and bias.
LogicalResult normalizeRows(NodeImporter &n, RankedTensorType x, int64_t rows, double eps,
                            Value scale, Value bias) {
  const int64_t batch = x.getDimSize(0), width = x.getNumElements() / (batch * rows);
  Type et = x.getElementType();
  auto ones = n.constant(DenseElementsAttr::get(n.tensorType({width}, et),
                                                n.builder.getFloatAttr(et, 1.0)));
  auto viewType = n.tensorType({batch, rows, width}, et);
  Value normalized = LayerNormalizationOp::create(
      n.builder, n.loc, viewType, n.reshape(*n.input(0), {batch, rows, width}), ones, Value(),
      n.builder.getI64IntegerAttr(2), n.builder.getF32FloatAttr(eps));
  Value y = n.reshape(normalized, x.getShape());
  y = MulOp::create(n.builder, n.loc, x, y, scale);
  return n.setOutput(0, AddOp::create(n.builder, n.loc, x, y, bias));
}

LogicalResult importInstanceNormalization(NodeImporter &n) {
  auto x = channelInput(n, 3);
  if (failed(x))
    return failure();
  auto scale = perChannel(n, 1, "scale", *x), bias = perChannel(n, 2, "B", *x);
  if (failed(scale) || failed(bias))
    return failure();
  return normalizeRows(n, *x, x->getDimSize(1), n.attrFloat("epsilon", 1e-5f), *scale, *bias);
}

LogicalResult importGroupNormalization(NodeImporter &n) {
  auto x = channelInput(n, 3);
  if (failed(x))
    return failure();
  const int64_t groups = n.attrInt("num_groups", 0), channels = x->getDimSize(1);
  if (!n.attr("num_groups"))
    return n.fail("attribute 'num_groups' is required");
  if (groups < 1 || channels % groups != 0)
    return n.fail("num_groups " + Twine(groups) + " does not divide the " + Twine(channels) +
                  " channels");
  if (n.attrInt("stash_type", 1) != 1)
    return n.fail("attribute 'stash_type' must be 1 (float statistics)");
  auto scale = perChannel(n, 1, "scale", *x), bias = perChannel(n, 2, "bias", *x);
  if (failed(scale) || failed(bias))
    return failure();
  return normalizeRows(n, *x, groups, n.attrFloat("epsilon", 1e-5f), *scale, *bias);
}

} // namespace

/// MeanVarianceNormalization: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over `axes`, the
/// ops of its ONNX function body.
LogicalResult importMeanVarianceNormalization(NodeImporter &n) {
  auto x = n.inputType(0);
  if (!x || failed(requireFloat(n, x, "input X")))
    return failure();
  SmallVector<int64_t> given = n.attrInts("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  auto axes = normalizeAxes(n, given, x.getRank(), "axes");
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> shape = x.getShape();
  auto full = x, reduced = x.clone(reducedShape(shape, *axes, /*keepdims=*/true));
  auto mean = [&](Value v) -> Value {
    return ReduceMeanOp::create(n.builder, n.loc, reduced, v,
                                n.builder.getDenseI64ArrayAttr(*axes),
                                n.builder.getBoolAttr(true));
  };
  Value in = *n.input(0);
  Value m = mean(in);
  Value meanOfSquares = mean(MulOp::create(n.builder, n.loc, full, in, in));
  Value variance = SubOp::create(n.builder, n.loc, reduced, meanOfSquares,
                                 MulOp::create(n.builder, n.loc, reduced, m, m));
  Value deviation = AddOp::create(n.builder, n.loc, reduced,
                                  SqrtOp::create(n.builder, n.loc, reduced, variance),
                                  n.scalar(x.getElementType(), 1e-9));
  return n.setResult(DivOp::create(n.builder, n.loc, full,
                                   SubOp::create(n.builder, n.loc, full, in, m), deviation));
}

/// LRN: X / (bias + alpha / size * sum of X^2 over a window of `size` channels)^beta, the
/// window from c - floor((size - 1) / 2) to c + ceil((size - 1) / 2), cut at the ends: the
/// squares padded with zeros along the channels, the window a sum of `size` shifted slices.
LogicalResult importLRN(NodeImporter &n) {
  auto x = channelInput(n, 3);
  if (failed(x))
    return failure();
  const int64_t size = n.attrInt("size", 0);
  const int64_t channels = x->getDimSize(1);
  if (size < 1 || size > 4096)
    return n.fail("attribute 'size' = " + Twine(size) + " (1 to 4096)");
  const float alpha = n.attrFloat("alpha", 1e-4f), beta = n.attrFloat("beta", 0.75f),
              bias = n.attrFloat("bias", 1.0f);
  Type et = x->getElementType();
  ArrayRef<int64_t> shape = x->getShape();
  const int64_t rank = shape.size(), front = (size - 1) / 2, back = size - 1 - front;
  Value in = *n.input(0);
  Value squares = MulOp::create(n.builder, n.loc, *x, in, in);
  SmallVector<int64_t> before(rank, 0), after(rank, 0), padded(shape);
  before[1] = front;
  after[1] = back;
  padded[1] = channels + size - 1;
  Value wide = PadOp::create(n.builder, n.loc, x->clone(padded), squares,
                             n.builder.getDenseI64ArrayAttr(before),
                             n.builder.getDenseI64ArrayAttr(after),
                             n.builder.getStringAttr("constant"), n.builder.getF64FloatAttr(0.0));
  Value sum;
  for (int64_t k = 0; k < size; ++k) {
    SmallVector<int64_t> starts(rank, 0), ends(padded), steps(rank, 1);
    starts[1] = k;
    ends[1] = k + channels;
    Value shifted = SliceOp::create(n.builder, n.loc, *x, wide,
                                    n.builder.getDenseI64ArrayAttr(starts),
                                    n.builder.getDenseI64ArrayAttr(ends),
                                    n.builder.getDenseI64ArrayAttr(steps));
    sum = sum ? AddOp::create(n.builder, n.loc, *x, sum, shifted).getResult() : shifted;
  }
  Value base = AddOp::create(n.builder, n.loc, *x, n.scalar(et, bias),
                             MulOp::create(n.builder, n.loc, *x, sum, n.scalar(et, alpha / size)));
  Value denominator = PowOp::create(n.builder, n.loc, *x, base, n.scalar(et, beta));
  return n.setResult(DivOp::create(n.builder, n.loc, *x, in, denominator));
}

void registerChannelNormImports(OpImportRegistry &r) {
  r["MeanVarianceNormalization"] = {importMeanVarianceNormalization, 13};
  r["LRN"] = {importLRN, 13};
  r["BatchNormalization"] = {importBatchNormalization, 9}; // 14 added only training_mode
  r["InstanceNormalization"] = {importInstanceNormalization, 6};
  // Opset 21: scale and bias per channel (18's were per group).
  r["GroupNormalization"] = {importGroupNormalization, 21};
}

} // namespace sinter::import
