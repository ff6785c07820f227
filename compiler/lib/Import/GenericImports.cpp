// Import of the ops the generic tier computes: scalar functions (sinter.unary/binary),
// reductions, LayerNormalization, and the ops that are compositions of existing
// ones (Clip, variadic Min/Max, Flatten, Split, Tile, Dropout, CastLike, Size).
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

template <const char *fn, bool predicate = false> LogicalResult importUnaryFn(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  Type et = predicate ? n.builder.getI1Type() : in.getElementType();
  float alpha = 0, beta = 0;
  StringRef name = fn;
  if (name == "leaky_relu")
    alpha = n.attrFloat("alpha", 0.01f);
  else if (name == "elu")
    alpha = n.attrFloat("alpha", 1.0f);
  else if (name == "hard_sigmoid")
    alpha = n.attrFloat("alpha", 0.2f), beta = n.attrFloat("beta", 0.5f);
  else if (name == "is_inf")
    alpha = n.attrInt("detect_positive", 1) != 0, beta = n.attrInt("detect_negative", 1) != 0;
  else if (name == "selu")
    alpha = n.attrFloat("alpha", 1.67326319217681884765625f),
    beta = n.attrFloat("gamma", 1.05070102214813232421875f);
  else if (name == "shrink")
    alpha = n.attrFloat("lambd", 0.5f), beta = n.attrFloat("bias", 0.0f);
  else if (name == "celu" || name == "thresholded_relu" || name == "swish")
    alpha = n.attrFloat("alpha", 1.0f);
  if (name == "celu" && alpha == 0)
    return n.fail("attribute 'alpha' must not be 0");
  auto op = UnaryFnOp::create(n.builder, n.loc, n.tensorType(in.getShape(), et), *n.input(0),
                              n.builder.getStringAttr(name), n.builder.getF32FloatAttr(alpha),
                              n.builder.getF32FloatAttr(beta));
  return n.setResult(op);
}

FailureOr<Value> binaryFn(NodeImporter &n, StringRef fn, Value lhs, Value rhs, bool predicate) {
  auto l = cast<RankedTensorType>(lhs.getType()), r = cast<RankedTensorType>(rhs.getType());
  if (l.getElementType() != r.getElementType()) {
    (void)n.fail("operands have different element types");
    return failure();
  }
  auto shape = broadcastShapes(l.getShape(), r.getShape());
  if (failed(shape)) {
    (void)n.fail("input shapes are not broadcast-compatible");
    return failure();
  }
  Type et = predicate ? n.builder.getI1Type() : l.getElementType();
  return BinaryFnOp::create(n.builder, n.loc, n.tensorType(*shape, et), lhs, rhs,
                            n.builder.getStringAttr(fn))
      .getResult();
}

template <const char *fn, bool predicate = false> LogicalResult importBinaryFn(NodeImporter &n) {
  auto lhs = n.input(0), rhs = n.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  auto v = binaryFn(n, fn, *lhs, *rhs, predicate);
  return failed(v) ? failure() : n.setOutput(0, *v);
}

LogicalResult importBitShift(NodeImporter &n) {
  auto lhs = n.input(0), rhs = n.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  std::string direction = n.attrString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return n.fail("attribute 'direction' = '" + direction + "' (LEFT or RIGHT)");
  auto v = binaryFn(n, direction == "LEFT" ? "bitshift_left" : "bitshift_right", *lhs, *rhs,
                    false);
  return failed(v) ? failure() : n.setOutput(0, *v);
}

LogicalResult importMod(NodeImporter &n) {
  auto lhs = n.input(0), rhs = n.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  auto v = binaryFn(n, n.attrInt("fmod", 0) ? "fmod" : "mod", *lhs, *rhs, false);
  return failed(v) ? failure() : n.setOutput(0, *v);
}

FailureOr<Value> maxOf(NodeImporter &n, Value lhs, Value rhs) {
  auto l = cast<RankedTensorType>(lhs.getType()), r = cast<RankedTensorType>(rhs.getType());
  auto shape = broadcastShapes(l.getShape(), r.getShape());
  if (l.getElementType() != r.getElementType() || failed(shape)) {
    (void)n.fail("operands must have one element type and broadcast-compatible shapes");
    return failure();
  }
  return MaxOp::create(n.builder, n.loc, n.tensorType(*shape, l.getElementType()), lhs, rhs)
      .getResult();
}

/// A variadic node's inputs combined left to right by `combine` (one input is the identity).
FailureOr<Value> chainInputs(NodeImporter &n,
                             function_ref<FailureOr<Value>(Value, Value)> combine) {
  if (n.numInputs() == 0) {
    (void)n.fail("needs at least one input");
    return failure();
  }
  FailureOr<Value> result = n.input(0);
  for (unsigned i = 1; succeeded(result) && i < n.numInputs(); ++i) {
    auto next = n.input(i);
    if (failed(next))
      return failure();
    result = combine(*result, *next);
  }
  return result;
}

/// Variadic Min / Max.
template <bool isMax> LogicalResult importMinMax(NodeImporter &n) {
  auto result = chainInputs(n, [&](Value lhs, Value rhs) {
    return isMax ? maxOf(n, lhs, rhs) : binaryFn(n, "min", lhs, rhs, false);
  });
  return failed(result) ? failure() : n.setOutput(0, *result);
}

/// Variadic Sum and Mean: broadcasting adds; Mean divides by the input count.
template <bool mean> LogicalResult importSumMean(NodeImporter &n) {
  auto sum = chainInputs(n, [&](Value lhs, Value rhs) -> FailureOr<Value> {
    auto l = cast<RankedTensorType>(lhs.getType()), r = cast<RankedTensorType>(rhs.getType());
    auto shape = broadcastShapes(l.getShape(), r.getShape());
    if (l.getElementType() != r.getElementType() || failed(shape)) {
      (void)n.fail("operands must have one element type and broadcast-compatible shapes");
      return failure();
    }
    return AddOp::create(n.builder, n.loc, n.tensorType(*shape, l.getElementType()), lhs, rhs)
        .getResult();
  });
  if (failed(sum))
    return failure();
  Value result = *sum;
  auto type = cast<RankedTensorType>(result.getType());
  if (mean && !isa<FloatType>(type.getElementType()))
    return n.fail("Mean takes floating-point inputs");
  if (mean && n.numInputs() > 1) {
    Value count = n.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, type.getElementType()),
        n.builder.getFloatAttr(type.getElementType(), double(n.numInputs()))));
    result = DivOp::create(n.builder, n.loc, type, result, count);
  }
  return n.setOutput(0, result);
}

/// Clip(x, min, max) = min(max(x, lo), hi); absent bounds are skipped.
LogicalResult importClip(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  Value result = *x;
  if (n.hasInput(1)) {
    auto lo = n.input(1);
    if (failed(lo))
      return failure();
    auto v = maxOf(n, result, *lo);
    if (failed(v))
      return failure();
    result = *v;
  }
  if (n.hasInput(2)) {
    auto hi = n.input(2);
    if (failed(hi))
      return failure();
    auto v = binaryFn(n, "min", result, *hi, false);
    if (failed(v))
      return failure();
    result = *v;
  }
  return n.setOutput(0, result);
}

/// The reduced axes of a Reduce* node: the `axes` attribute (older opsets) or input 1, all
/// axes when absent and noop_with_empty_axes is 0.
FailureOr<SmallVector<int64_t>> reductionAxes(NodeImporter &n, int64_t rank) {
  SmallVector<int64_t> given;
  if (auto attr = n.attrInts("axes")) {
    given = *attr;
  } else if (n.hasInput(1)) {
    auto ints = n.constantInts(1);
    if (failed(ints))
      return failure();
    given = *ints;
  }
  if (!n.attrError.empty()) {
    (void)n.fail(n.attrError);
    return failure();
  }
  const bool noopWithEmptyAxes = n.attrInt("noop_with_empty_axes", 0) != 0;
  auto axes = normalizeAxes(n, given, rank, "axes entry");
  if (failed(axes))
    return failure();
  if (axes->empty() && !noopWithEmptyAxes)
    for (int64_t d = 0; d < rank; ++d)
      axes->push_back(d);
  return axes;
}

template <const char *kind> LogicalResult importReduce(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  auto axes = reductionAxes(n, in.getRank());
  if (failed(axes))
    return failure();
  bool keepdims = n.attrInt("keepdims", 1) != 0;
  StringRef k = kind;
  if (axes->empty() && (k == "sum" || k == "mean" || k == "max" || k == "min" || k == "prod"))
    return n.setOutput(0, *n.input(0)); // noop_with_empty_axes: the identity
  if (in.getElementType().isInteger(1)) {
    // ReduceMax/ReduceMin of booleans (any / all): reduced as i32, read back as r > 0, so that
    // over no elements the i32 identities (INT_MIN, INT_MAX) give false and true as ONNX says.
    if (k != "max" && k != "min")
      return n.fail("Reduce" + Twine(k == "sum" ? "Sum" : k) + " of bool is not supported");
    Type i32 = n.builder.getI32Type();
    Value wide = CastOp::create(n.builder, n.loc, n.tensorType(in.getShape(), i32), *n.input(0));
    auto reduced = reducedShape(in.getShape(), *axes, keepdims);
    Value r = ReduceOp::create(n.builder, n.loc, n.tensorType(reduced, i32), wide,
                               n.builder.getStringAttr(k), n.builder.getDenseI64ArrayAttr(*axes),
                               n.builder.getBoolAttr(keepdims));
    auto scalar = RankedTensorType::get({}, i32);
    Value zero = ConstantOp::create(n.builder, n.loc,
                                    DenseElementsAttr::get(scalar, n.builder.getI32IntegerAttr(0)));
    auto positive = binaryFn(n, "greater", r, zero, /*predicate=*/true);
    if (failed(positive))
      return failure();
    return n.setOutput(0, *positive);
  }
  auto type = n.tensorType(reducedShape(in.getShape(), *axes, keepdims), in.getElementType());
  // ReduceMean keeps its own op: the RMSNorm pattern matches it.
  if (k == "mean" && isa<FloatType>(in.getElementType()))
    return n.setResult(ReduceMeanOp::create(n.builder, n.loc, type, *n.input(0),
                                            n.builder.getDenseI64ArrayAttr(*axes),
                                            n.builder.getBoolAttr(keepdims)));
  return n.setResult(
      ReduceOp::create(n.builder, n.loc, type, *n.input(0), n.builder.getStringAttr(k),
                       n.builder.getDenseI64ArrayAttr(*axes), n.builder.getBoolAttr(keepdims)));
}

Value unary(NodeImporter &n, StringRef fn, Value v) {
  return UnaryFnOp::create(n.builder, n.loc, v.getType(), v, n.builder.getStringAttr(fn),
                           n.builder.getF32FloatAttr(0), n.builder.getF32FloatAttr(0));
}

/// ReduceLogSum: the log of ReduceSum.
LogicalResult importReduceLogSum(NodeImporter &n) {
  if (failed(requireFloat(n, n.inputType(0), "input data")))
    return failure();
  static constexpr char kSumKind[] = "sum";
  if (failed(importReduce<kSumKind>(n)))
    return failure();
  return n.setOutput(0, unary(n, "log", n.state.values[n.node.output(0)]));
}

/// LpNormalization: x divided by its L1 or L2 norm along `axis` (0 where the norm is 0).
LogicalResult importLpNormalization(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in || failed(requireFloat(n, in, "input")))
    return failure();
  auto axis = normalizeAxis(n, n.attrInt("axis", -1), in.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  const int64_t p = n.attrInt("p", 2);
  if (p != 1 && p != 2)
    return n.fail("attribute 'p' = " + Twine(p) + " (1 or 2)");
  auto normType = n.tensorType(reducedShape(in.getShape(), {*axis}, true), in.getElementType());
  Value norm = ReduceOp::create(n.builder, n.loc, normType, *n.input(0),
                                n.builder.getStringAttr(p == 1 ? "l1" : "l2"),
                                n.builder.getDenseI64ArrayAttr({*axis}), n.builder.getBoolAttr(true));
  // A zero norm gives 0, not 0/0 (the ONNX reference's where(norm == 0, 0, x / norm)).
  Value quotient = DivOp::create(n.builder, n.loc, in, *n.input(0), norm);
  auto scalar = RankedTensorType::get({}, in.getElementType());
  Value zero = n.constant(DenseElementsAttr::get(scalar, n.builder.getZeroAttr(in.getElementType())));
  Value isZero = EqualOp::create(n.builder, n.loc, normType.clone(n.builder.getI1Type()), norm, zero);
  return n.setOutput(0, WhereOp::create(n.builder, n.loc, in, isZero, zero, quotient));
}

template <bool isMax> LogicalResult importArgReduce(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  if (in.getRank() == 0)
    return n.fail("input must have rank >= 1");
  auto axis = normalizeAxis(n, n.attrInt("axis", 0), in.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  bool keepdims = n.attrInt("keepdims", 1) != 0;
  auto type = n.tensorType(reducedShape(in.getShape(), {*axis}, keepdims), n.builder.getI64Type());
  return n.setResult(ArgReduceOp::create(
      n.builder, n.loc, type, *n.input(0), n.builder.getStringAttr(isMax ? "max" : "min"),
      n.builder.getI64IntegerAttr(*axis), n.builder.getBoolAttr(keepdims),
      n.builder.getBoolAttr(n.attrInt("select_last_index", 0) != 0)));
}

template <bool product> LogicalResult importCumulative(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  if (in.getRank() == 0)
    return n.fail("input must have rank >= 1");
  auto axisValues = n.constantInts(1);
  if (failed(axisValues))
    return failure();
  if (axisValues->size() != 1)
    return n.fail("input 'axis' must hold one value, not " + std::to_string(axisValues->size()));
  auto axis = normalizeAxis(n, axisValues->front(), in.getRank(), "input 'axis'");
  if (failed(axis))
    return failure();
  if (in.getElementType().isInteger(1))
    return n.fail("input x must be numeric, not bool");
  return n.setResult(CumulativeOp::create(n.builder, n.loc, in, *n.input(0),
                                          n.builder.getStringAttr(product ? "prod" : "sum"),
                                          n.builder.getI64IntegerAttr(*axis),
                                      n.builder.getBoolAttr(n.attrInt("exclusive", 0) != 0),
                                      n.builder.getBoolAttr(n.attrInt("reverse", 0) != 0)));
}

LogicalResult importLayerNormalization(NodeImporter &n) {
  auto in = n.inputType(0), scale = n.inputType(1);
  if (!in || !scale || failed(requireFloat(n, in, "input X")))
    return failure();
  auto axis = normalizationAxis(n, in);
  if (failed(axis))
    return failure();
  Value bias;
  if (n.hasInput(2)) {
    auto b = n.input(2);
    if (failed(b))
      return failure();
    bias = *b;
  }
  float eps = n.attrFloat("epsilon", 1e-5f);
  auto op = LayerNormalizationOp::create(n.builder, n.loc, in, *n.input(0), *n.input(1), bias,
                                         n.builder.getI64IntegerAttr(*axis),
                                         n.builder.getF32FloatAttr(eps));
  if (failed(n.setResult(op)))
    return failure();
  bool wantsMean = n.node.output_size() > 1 && !n.node.output(1).empty();
  bool wantsInvStd = n.node.output_size() > 2 && !n.node.output(2).empty();
  if (!wantsMean && !wantsInvStd)
    return success();
  // The statistics outputs (f32, reduced dims kept as 1), from primitives.
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < in.getRank(); ++d)
    axes.push_back(d);
  Type f32 = n.builder.getF32Type();
  Value x = *n.input(0);
  if (!in.getElementType().isF32())
    x = CastOp::create(n.builder, n.loc, n.tensorType(in.getShape(), f32), x);
  auto statType = n.tensorType(reducedShape(in.getShape(), axes, true), f32);
  auto mean = [&](Value v) {
    return ReduceMeanOp::create(n.builder, n.loc, statType, v, n.builder.getDenseI64ArrayAttr(axes),
                                n.builder.getBoolAttr(true))
        .getResult();
  };
  Value mu = mean(x);
  auto fullType = n.tensorType(in.getShape(), f32);
  Value centered = SubOp::create(n.builder, n.loc, fullType, x, mu);
  Value var = mean(MulOp::create(n.builder, n.loc, fullType, centered, centered));
  Value epsValue = n.constant(DenseElementsAttr::get(RankedTensorType::get({}, f32),
                                                     n.builder.getF32FloatAttr(eps).getValue()));
  Value invStd = ReciprocalOp::create(
      n.builder, n.loc, statType,
      SqrtOp::create(n.builder, n.loc, statType,
                     AddOp::create(n.builder, n.loc, statType, var, epsValue)));
  if (wantsMean && failed(n.setOutput(1, mu)))
    return failure();
  return wantsInvStd ? n.setOutput(2, invStd) : success();
}

LogicalResult importGelu(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in || failed(requireFloat(n, in, "Gelu input")))
    return failure();
  std::string approximate = n.attrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return n.fail("attribute 'approximate' = '" + approximate + "' (none or tanh)");
  auto op = UnaryFnOp::create(n.builder, n.loc, in, *n.input(0),
                              n.builder.getStringAttr(approximate == "tanh" ? "gelu_tanh" : "gelu"),
                              n.builder.getF32FloatAttr(0), n.builder.getF32FloatAttr(0));
  return n.setResult(op);
}

LogicalResult importFlatten(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  int64_t rank = in.getRank(), axis = n.attrInt("axis", 1);
  if (axis < -rank || axis > rank)
    return n.fail("attribute 'axis' " + Twine(axis) + " is out of range for rank " + Twine(rank));
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= in.getDimSize(d);
  return n.setOutput(0, n.reshape(*n.input(0), {outer, inner}));
}

LogicalResult importSplit(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  if (in.getRank() == 0)
    return n.fail("Split input must have rank >= 1");
  auto axis = normalizeAxis(n, n.attrInt("axis", 0), in.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  int64_t dim = in.getDimSize(*axis), outputs = n.node.output_size();
  SmallVector<int64_t> sizes;
  if (n.hasInput(1)) {
    auto given = n.constantInts(1);
    if (failed(given))
      return failure();
    sizes = *given;
  } else if (auto attr = n.attrInts("split")) {
    sizes = *attr;
  } else {
    int64_t parts = n.attrInt("num_outputs", outputs);
    if (parts <= 0 || parts != outputs)
      return n.fail("num_outputs must equal the number of outputs");
    int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0, left = dim; i < parts; ++i, left -= chunk)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
  }
  if ((int64_t)sizes.size() != outputs)
    return n.fail("split has " + Twine(sizes.size()) + " sizes for " + Twine(outputs) + " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return n.fail("split sizes must be non-negative");
    total += s; // each size and the running total stay <= the axis, so this cannot overflow
    if (s > dim || total > dim)
      return n.fail("split sizes add up to more than the axis (" + Twine(dim) + ")");
  }
  if (total != dim)
    return n.fail("split sizes add up to " + Twine(total) + ", the axis has " + Twine(dim));
  int64_t rank = in.getRank(), start = 0;
  for (int64_t i = 0; i < outputs; ++i) {
    SmallVector<int64_t> starts(rank, 0), ends(in.getShape()), steps(rank, 1), shape(in.getShape());
    starts[*axis] = start;
    ends[*axis] = start + sizes[i];
    shape[*axis] = sizes[i];
    start += sizes[i];
    auto op = SliceOp::create(n.builder, n.loc, n.tensorType(shape, in.getElementType()),
                              *n.input(0), n.builder.getDenseI64ArrayAttr(starts),
                              n.builder.getDenseI64ArrayAttr(ends),
                              n.builder.getDenseI64ArrayAttr(steps));
    if (failed(n.setOutput(i, op)))
      return failure();
  }
  return success();
}

/// Tile = reshape to [1, d0, 1, d1, ...], broadcast to [r0, d0, r1, d1, ...], reshape.
LogicalResult importTile(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  auto repeats = n.constantInts(1);
  if (failed(repeats))
    return failure();
  int64_t rank = in.getRank();
  if ((int64_t)repeats->size() != rank)
    return n.fail("repeats has " + Twine(repeats->size()) + " entries for rank " + Twine(rank));
  SmallVector<int64_t> interleaved, expanded, result;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t r = (*repeats)[d];
    if (r < 0)
      return n.fail("repeats must be non-negative");
    // Checked before multiplying: a hostile repeat count must not overflow.
    if (r > kMaxElements / std::max<int64_t>(1, in.getDimSize(d)))
      return n.fail("repeats " + Twine(r) + " would make more than 2^48 elements");
    interleaved.append({1, in.getDimSize(d)});
    expanded.append({r, in.getDimSize(d)});
    result.push_back(r * in.getDimSize(d));
  }
  if (std::string problem = shapeProblem(result); !problem.empty())
    return n.fail("output would have " + problem);
  Value v = n.reshape(*n.input(0), interleaved);
  v = ExpandOp::create(
      n.builder, n.loc, n.tensorType(expanded, in.getElementType()), v,
      n.constant(DenseElementsAttr::get(
          RankedTensorType::get({(int64_t)expanded.size()}, n.builder.getI64Type()),
          ArrayRef<int64_t>(expanded))));
  return n.setOutput(0, n.reshape(v, result));
}

LogicalResult importDropout(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  // The random stream's seed: what it changes, dropping nothing, has no stream.
  (void)n.attr("seed");
  if (n.hasInput(2)) {
    DenseElementsAttr training = n.constantInput(2);
    if (!training || training.getNumElements() != 1)
      return n.fail("training_mode must be a compile-time constant");
    DenseElementsAttr ratio = n.hasInput(1) ? n.constantInput(1) : DenseElementsAttr();
    bool keepsAll = ratio && ratio.getNumElements() == 1 &&
                    isa<FloatType>(ratio.getElementType()) &&
                    (*ratio.getValues<APFloat>().begin()).isZero();
    // Training with ratio 0 drops nothing: the identity, as at inference.
    if (training.getSplatValue<bool>() && !keepsAll)
      return n.fail("training_mode = true is not supported (inference only, or a ratio of 0)");
  }
  if (failed(n.setOutput(0, *n.input(0))))
    return failure();
  if (n.node.output_size() > 1 && !n.node.output(1).empty()) {
    auto maskType = n.tensorType(in.getShape(), n.builder.getI1Type());
    if (failed(n.setOutput(1, n.constant(DenseElementsAttr::get(maskType, true)))))
      return failure();
  }
  return success();
}

LogicalResult importGatherElements(NodeImporter &n) {
  auto in = n.inputType(0), indices = n.inputType(1);
  if (!in || !indices)
    return failure();
  if (!isa<IntegerType>(indices.getElementType()) || indices.getElementType().isInteger(1) ||
      indices.getElementType().isInteger(8))
    return n.fail("indices must be int32 or int64");
  if (in.getRank() == 0 || indices.getRank() != in.getRank())
    return n.fail("indices must have the data's rank (at least 1)");
  auto axis = normalizeAxis(n, n.attrInt("axis", 0), in.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (d != *axis && indices.getDimSize(d) > in.getDimSize(d))
      return n.fail("indices dimension " + Twine(d) + " exceeds the data's");
  return n.setResult(GatherElementsOp::create(
      n.builder, n.loc, n.tensorType(indices.getShape(), in.getElementType()), *n.input(0),
      *n.input(1), n.builder.getI64IntegerAttr(*axis)));
}

LogicalResult importPad(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  std::string mode = n.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return n.fail("attribute 'mode' = '" + mode + "' (constant, reflect, edge or wrap)");
  auto pads = n.constantInts(1);
  if (failed(pads))
    return failure();
  int64_t rank = in.getRank();
  SmallVector<int64_t> axes;
  if (n.hasInput(3)) {
    auto given = n.constantInts(3);
    if (failed(given))
      return failure();
    auto normalized = normalizeAxes(n, *given, rank, "axes entry");
    if (failed(normalized))
      return failure();
    // Pads follow the axes' given order, not their sorted one.
    axes.clear();
    for (int64_t a : *given)
      axes.push_back(a < 0 ? a + rank : a);
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if ((int64_t)pads->size() != 2 * (int64_t)axes.size())
    return n.fail("pads has " + Twine(pads->size()) + " entries for " + Twine(axes.size()) +
                  " axes");
  SmallVector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    before[axes[i]] = (*pads)[i];
    after[axes[i]] = (*pads)[i + axes.size()];
  }
  for (int64_t d = 0; d < rank; ++d) {
    // Checked before adding: a hostile pad amount must not overflow.
    if (before[d] < -kMaxElements || before[d] > kMaxElements || after[d] < -kMaxElements ||
        after[d] > kMaxElements)
      return n.fail("pads of dimension " + Twine(d) + " exceed 2^48");
    if (in.getDimSize(d) + before[d] + after[d] < 0)
      return n.fail("pads make dimension " + Twine(d) + " negative");
  }
  double value = 0;
  if (n.hasInput(2)) {
    DenseElementsAttr c = n.constantInput(2);
    if (!c || c.getNumElements() != 1)
      return n.fail("constant_value must be a one-element compile-time constant");
    if (isa<FloatType>(c.getElementType()))
      value = (*c.getValues<APFloat>().begin()).convertToDouble();
    else if (c.getElementType().isInteger(1))
      value = *c.getValues<bool>().begin();
    else
      value = c.getElementType().isUnsignedInteger()
                  ? (double)(*c.getValues<APInt>().begin()).getZExtValue()
                  : (double)(*c.getValues<APInt>().begin()).getSExtValue();
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(in.getDimSize(d) + before[d] + after[d]);
  return n.setResult(
      PadOp::create(n.builder, n.loc, n.tensorType(shape, in.getElementType()), *n.input(0),
                    n.builder.getDenseI64ArrayAttr(before), n.builder.getDenseI64ArrayAttr(after),
                    n.builder.getStringAttr(mode), n.builder.getF64FloatAttr(value)));
}

LogicalResult importCastLike(NodeImporter &n) {
  auto in = n.inputType(0), like = n.inputType(1);
  if (!in || !like)
    return failure();
  (void)n.attr("saturate"); // as Cast's: 8-bit float targets only
  (void)n.attr("round_mode");
  return n.setResult(CastOp::create(
      n.builder, n.loc, n.tensorType(in.getShape(), like.getElementType()), *n.input(0)));
}

LogicalResult importSize(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  auto type = RankedTensorType::get({}, n.builder.getI64Type());
  return n.setOutput(0, n.constant(DenseElementsAttr::get(type, in.getNumElements())));
}

constexpr char kAbs[] = "abs", kExp[] = "exp", kLog[] = "log", kTanh[] = "tanh", kErf[] = "erf",
               kRelu[] = "relu", kLeakyRelu[] = "leaky_relu", kElu[] = "elu",
               kSoftplus[] = "softplus", kHardSigmoid[] = "hard_sigmoid",
               kHardSwish[] = "hard_swish", kSign[] = "sign", kFloor[] = "floor", kCeil[] = "ceil",
               kRound[] = "round", kNot[] = "not", kIsInf[] = "is_inf", kLess[] = "less",
               kGreater[] = "greater", kGreaterOrEqual[] = "greater_or_equal", kOr[] = "or",
               kXor[] = "xor", kSum[] = "sum", kMean[] = "mean", kMax[] = "max", kMin[] = "min",
               kProd[] = "prod", kL1[] = "l1", kL2[] = "l2", kSumSquare[] = "sum_square",
               kLogSumExp[] = "log_sum_exp", kTan[] = "tan", kAsin[] = "asin", kAcos[] = "acos",
               kAtan[] = "atan", kSinh[] = "sinh", kCosh[] = "cosh", kAsinh[] = "asinh",
               kAcosh[] = "acosh", kAtanh[] = "atanh", kSoftsign[] = "softsign",
               kSelu[] = "selu", kCelu[] = "celu", kThresholdedRelu[] = "thresholded_relu",
               kMish[] = "mish", kShrink[] = "shrink", kSwish[] = "swish", kPRelu[] = "prelu",
               kBitwiseNot[] = "bitwise_not", kBitwiseAnd[] = "bitwise_and",
               kBitwiseOr[] = "bitwise_or", kBitwiseXor[] = "bitwise_xor";

} // namespace

void registerGenericImports(OpImportRegistry &r) {
  r["Abs"] = {importUnaryFn<kAbs>};
  r["Exp"] = {importUnaryFn<kExp>};
  r["Log"] = {importUnaryFn<kLog>};
  r["Tanh"] = {importUnaryFn<kTanh>};
  r["Erf"] = {importUnaryFn<kErf>};
  r["Relu"] = {importUnaryFn<kRelu>};
  r["LeakyRelu"] = {importUnaryFn<kLeakyRelu>};
  r["Elu"] = {importUnaryFn<kElu>};
  r["Softplus"] = {importUnaryFn<kSoftplus>};
  r["HardSigmoid"] = {importUnaryFn<kHardSigmoid>};
  r["HardSwish"] = {importUnaryFn<kHardSwish>};
  r["Sign"] = {importUnaryFn<kSign>};
  r["Floor"] = {importUnaryFn<kFloor>};
  r["Ceil"] = {importUnaryFn<kCeil>};
  r["Round"] = {importUnaryFn<kRound>};
  r["Not"] = {importUnaryFn<kNot>};
  r["IsInf"] = {importUnaryFn<kIsInf, true>};
  r["Tan"] = {importUnaryFn<kTan>};
  r["Asin"] = {importUnaryFn<kAsin>};
  r["Acos"] = {importUnaryFn<kAcos>};
  r["Atan"] = {importUnaryFn<kAtan>};
  r["Sinh"] = {importUnaryFn<kSinh>};
  r["Cosh"] = {importUnaryFn<kCosh>};
  r["Asinh"] = {importUnaryFn<kAsinh>};
  r["Acosh"] = {importUnaryFn<kAcosh>};
  r["Atanh"] = {importUnaryFn<kAtanh>};
  r["Softsign"] = {importUnaryFn<kSoftsign>};
  r["Selu"] = {importUnaryFn<kSelu>};
  r["Celu"] = {importUnaryFn<kCelu>, 12};
  r["ThresholdedRelu"] = {importUnaryFn<kThresholdedRelu>, 10};
  r["Mish"] = {importUnaryFn<kMish>, 18};
  r["Shrink"] = {importUnaryFn<kShrink>, 9};
  r["Swish"] = {importUnaryFn<kSwish>, 24};
  r["Gelu"] = {importGelu, 20};
  r["Less"] = {importBinaryFn<kLess, true>};
  r["Greater"] = {importBinaryFn<kGreater, true>};
  r["GreaterOrEqual"] = {importBinaryFn<kGreaterOrEqual, true>, 12};
  r["Or"] = {importBinaryFn<kOr>};
  r["Xor"] = {importBinaryFn<kXor>};
  r["Mod"] = {importMod};
  r["PRelu"] = {importBinaryFn<kPRelu>, 9};
  r["BitwiseNot"] = {importUnaryFn<kBitwiseNot>, 18};
  r["BitwiseAnd"] = {importBinaryFn<kBitwiseAnd>, 18};
  r["BitwiseOr"] = {importBinaryFn<kBitwiseOr>, 18};
  r["BitwiseXor"] = {importBinaryFn<kBitwiseXor>, 18};
  r["BitShift"] = {importBitShift, 11};
  r["Min"] = {importMinMax<false>, 13};
  r["Max"] = {importMinMax<true>, 13};
  r["Clip"] = {importClip, 11};
  r["Sum"] = {importSumMean<false>, 13};
  r["Mean"] = {importSumMean<true>, 13};
  r["ReduceSum"] = {importReduce<kSum>, 13};
  r["ReduceMean"] = {importReduce<kMean>, 13};
  r["ReduceMax"] = {importReduce<kMax>, 13};
  r["ReduceMin"] = {importReduce<kMin>, 13};
  r["ReduceProd"] = {importReduce<kProd>, 13};
  r["ReduceL1"] = {importReduce<kL1>, 13};
  r["ReduceL2"] = {importReduce<kL2>, 13};
  r["ReduceSumSquare"] = {importReduce<kSumSquare>, 13};
  r["ReduceLogSumExp"] = {importReduce<kLogSumExp>, 13};
  r["ReduceLogSum"] = {importReduceLogSum, 13};
  r["LpNormalization"] = {importLpNormalization, 1};
  r["ArgMax"] = {importArgReduce<true>, 13};
  r["ArgMin"] = {importArgReduce<false>, 13};
  r["CumSum"] = {importCumulative<false>, 11}; // 14 added bf16 only
  r["CumProd"] = {importCumulative<true>, 26};
  r["LayerNormalization"] = {importLayerNormalization, 17};
  r["Flatten"] = {importFlatten, 13};
  r["Split"] = {importSplit, 13};
  r["Tile"] = {importTile, 13};
  r["Dropout"] = {importDropout, 13};
  r["CastLike"] = {importCastLike, 15};
  r["GatherElements"] = {importGatherElements, 13};
  r["Pad"] = {importPad, 13};
  r["Size"] = {importSize, 13};
}

} // namespace sinter::import
