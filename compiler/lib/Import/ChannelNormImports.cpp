// Import of the normalizations over an [N, C, spatial...] input that CNNs and audio encoders
// use: BatchNormalization (inference: the running statistics, an affine map per channel),
// InstanceNormalization (each (sample, channel) row normalized) and GroupNormalization (each
// group of channels of a sample), the last two as a LayerNormalization over a reshaped view
// followed by the per-channel scale and bias.
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

Value scalar(NodeImporter &n, Type et, double value) {
  auto type = RankedTensorType::get({}, et);
  return n.constant(DenseElementsAttr::get(type, n.builder.getFloatAttr(et, value)));
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
                                           scalar(n, work, eps)));
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

void registerChannelNormImports(OpImportRegistry &r) {
  r["BatchNormalization"] = {importBatchNormalization, 14};
  r["InstanceNormalization"] = {importInstanceNormalization, 6};
  // Opset 21: scale and bias per channel (18's were per group).
  r["GroupNormalization"] = {importGroupNormalization, 21};
}

} // namespace sinter::import
