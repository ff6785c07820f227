// Import of GridSample (opsets 16 and 20+: nearest, linear and cubic sampling of 2-D or N-D
// inputs, zeros / border / reflection padding, align_corners) as ops the generic tier
// compiles. The grid is known only at run time, so each output position's taps are computed
// elementwise, as the reference computes them: the grid coordinate denormalized, rounded for
// nearest, brought inside the borders (clamped or reflected), then each tap's index padded
// the same way and its weight (linear, or Keys' cubic with a = -0.75) taken per dimension.
// Every tap combination is one GatherElements from the flattened input, weighted and summed.
// AffineGrid, which makes such grids from affine transforms, is a product with a constant
// grid of the output positions.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <functional>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

enum class Sampling { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

/// Elementwise ops on [N, P] tensors (P output positions) of the compute type.
struct PositionMath {
  NodeImporter &n;
  RankedTensorType type;

  Value constant(double v) { return n.scalar(type.getElementType(), v); }
  Value add(Value a, Value b) { return AddOp::create(n.builder, n.loc, type, a, b); }
  Value sub(Value a, Value b) { return SubOp::create(n.builder, n.loc, type, a, b); }
  Value mul(Value a, Value b) { return MulOp::create(n.builder, n.loc, type, a, b); }
  Value div(Value a, Value b) { return DivOp::create(n.builder, n.loc, type, a, b); }
  Value unary(StringRef fn, Value a) {
    return UnaryFnOp::create(n.builder, n.loc, type, a, n.builder.getStringAttr(fn),
                             n.builder.getF32FloatAttr(0), n.builder.getF32FloatAttr(0));
  }
  Value compare(StringRef fn, Value a, Value b) {
    return BinaryFnOp::create(n.builder, n.loc, type.clone(n.builder.getI1Type()), a, b,
                              n.builder.getStringAttr(fn));
  }
  Value select(Value condition, Value a, Value b) {
    return WhereOp::create(n.builder, n.loc, type, condition, a, b);
  }
  Value clamp(Value v, double low, double high) {
    v = MaxOp::create(n.builder, n.loc, type, v, constant(low));
    return BinaryFnOp::create(n.builder, n.loc, type, v, constant(high),
                              n.builder.getStringAttr("min"));
  }
  /// Rounding toward zero (a cast to int).
  Value truncate(Value v) {
    return select(compare("less", v, constant(0)), unary("ceil", v), unary("floor", v));
  }
  /// The reference's reflection into [low, high]: by the near border, until inside.
  Value reflect(Value v, double low, double high) {
    const double span = high - low;
    if (span <= 0)
      return select(compare("less", v, constant(low)), constant(low),
                    select(compare("greater", v, constant(high)), constant(high), v));
    Value below = compare("less", v, constant(low));
    Value above = compare("greater", v, constant(high));
    Value distance = select(below, sub(constant(low), v), sub(v, constant(high)));
    Value turns = unary("floor", div(distance, constant(span)));
    Value rest = sub(distance, mul(turns, constant(span)));
    Value half = mul(unary("floor", mul(turns, constant(0.5))), constant(2));
    Value even = compare("less", sub(turns, half), constant(0.5));
    Value fromLow = add(constant(low), rest), fromHigh = sub(constant(high), rest);
    Value reflectedBelow = select(even, fromLow, fromHigh);
    Value reflectedAbove = select(even, fromHigh, fromLow);
    return select(below, reflectedBelow, select(above, reflectedAbove, v));
  }
};

/// One tap along one dimension: its index (padded into range, a float holding an integer),
/// weight (null: 1) and, for zeros padding, whether the unpadded index was inside.
struct Tap {
  Value index, weight, inside;
};

/// Keys' cubic convolution weights (a = -0.75) of the four taps at t in [0, 1) past the first
/// inner one, in the reference's form.
SmallVector<Value> cubicWeights(PositionMath &m, Value t) {
  const double a = -0.75;
  auto outer = [&](Value s) { // (a s - 5 a) s + 8 a) s - 4 a, for s in [1, 2]
    Value v = m.sub(m.mul(m.constant(a), s), m.constant(5 * a));
    v = m.add(m.mul(v, s), m.constant(8 * a));
    return m.sub(m.mul(v, s), m.constant(4 * a));
  };
  auto inner = [&](Value s) { // ((a + 2) s - (a + 3)) s s + 1, for s in [0, 1]
    Value v = m.sub(m.mul(m.constant(a + 2), s), m.constant(a + 3));
    return m.add(m.mul(m.mul(v, s), s), m.constant(1));
  };
  Value one = m.constant(1), two = m.constant(2);
  return {outer(m.add(t, one)), inner(t), inner(m.sub(one, t)), outer(m.sub(two, t))};
}

LogicalResult importGridSample(NodeImporter &n) {
  auto xType = n.inputType(0), gridType = n.inputType(1);
  if (!xType || !gridType)
    return failure();
  if (failed(requireFloat(n, xType, "X")) || failed(requireFloat(n, gridType, "grid")))
    return failure();
  const int64_t rank = xType.getRank(), dims = rank - 2;
  if (rank < 3 || gridType.getRank() != rank || gridType.getShape().back() != dims ||
      gridType.getDimSize(0) != xType.getDimSize(0))
    return n.fail("grid must have shape [N, out_1, ..., out_k, k] for X [N, C, in_1, ..., "
                  "in_k]; got X " +
                  shapeText(xType.getShape()) + ", grid " + shapeText(gridType.getShape()));
  const bool legacy = n.opset() < 20;
  if (legacy && dims != 2)
    return n.fail("GridSample before opset 20 samples 4-D inputs only");
  const std::string modeName = n.attrString("mode", legacy ? "bilinear" : "linear");
  Sampling mode;
  if (modeName == "nearest")
    mode = Sampling::Nearest;
  else if (modeName == (legacy ? "bilinear" : "linear"))
    mode = Sampling::Linear;
  else if (modeName == (legacy ? "bicubic" : "cubic"))
    mode = Sampling::Cubic;
  else
    return n.fail("mode '" + modeName + "' is not one of nearest, " +
                  (legacy ? "bilinear, bicubic" : "linear, cubic"));
  const std::string paddingName = n.attrString("padding_mode", "zeros");
  Padding padding;
  if (paddingName == "zeros")
    padding = Padding::Zeros;
  else if (paddingName == "border")
    padding = Padding::Border;
  else if (paddingName == "reflection")
    padding = Padding::Reflection;
  else
    return n.fail("padding_mode '" + paddingName + "' is not one of zeros, border, reflection");
  const bool alignCorners = n.attrInt("align_corners", 0) != 0;

  const int64_t batch = xType.getDimSize(0), channels = xType.getDimSize(1);
  int64_t positions = 1, inputs = 1;
  for (int64_t d = 0; d < dims; ++d) {
    positions *= gridType.getDimSize(1 + d);
    inputs *= xType.getDimSize(2 + d);
  }
  const int64_t tapsPerDim = mode == Sampling::Cubic ? 4 : mode == Sampling::Linear ? 2 : 1;
  int64_t combinations = 1;
  for (int64_t d = 0; d < dims; ++d)
    combinations *= tapsPerDim;
  if (combinations > 64 || inputs >= (int64_t(1) << 24))
    return n.fail("GridSample with " + Twine(combinations) + " taps over " + Twine(inputs) +
                  " input positions: at most 64 taps and 2^24 positions are supported");
  Type xEt = xType.getElementType();
  Type ct = xEt.getIntOrFloatBitWidth() == 64 ? xEt : Type(n.builder.getF32Type());
  PositionMath m{n, n.tensorType({batch, positions}, ct)};

  // Coordinate d (along input dimension 2 + d) is the grid's entry k - 1 - d: grids list x
  // (the last dimension) first.
  SmallVector<SmallVector<Tap>> taps(dims);
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t entry = dims - 1 - d, length = xType.getDimSize(2 + d);
    SmallVector<int64_t> starts(rank, 0), ends(gridType.getShape()), steps(rank, 1),
        sliced(gridType.getShape());
    starts.back() = entry;
    ends.back() = entry + 1;
    sliced.back() = 1;
    Value g = SliceOp::create(n.builder, n.loc, gridType.clone(sliced), *n.input(1),
                              n.builder.getDenseI64ArrayAttr(starts),
                              n.builder.getDenseI64ArrayAttr(ends),
                              n.builder.getDenseI64ArrayAttr(steps));
    g = n.reshape(g, {batch, positions});
    if (gridType.getElementType() != ct)
      g = CastOp::create(n.builder, n.loc, m.type, g);
    // Denormalized: [-1, 1] spans the corner pixels' centers, or their outer edges.
    Value x = alignCorners
                  ? m.mul(m.div(m.add(g, m.constant(1)), m.constant(2)), m.constant(length - 1))
                  : m.div(m.sub(m.mul(m.add(g, m.constant(1)), m.constant(length)), m.constant(1)),
                          m.constant(2));
    if (mode == Sampling::Nearest)
      x = m.unary("round", x);
    const double low = alignCorners ? 0 : -0.5, high = alignCorners ? length - 1 : length - 0.5;
    if (padding == Padding::Border)
      x = m.select(
          m.compare("less", x, m.constant(low)), m.clamp(x, 0, length - 1),
          m.select(m.compare("greater", x, m.constant(high)), m.clamp(x, 0, length - 1), x));
    else if (padding == Padding::Reflection)
      x = m.reflect(x, low, high);

    SmallVector<std::pair<Value, Value>> raw; // (index, weight)
    if (mode == Sampling::Nearest) {
      raw.push_back({m.truncate(x), Value()});
    } else {
      Value first = m.unary("floor", x), t = m.sub(x, first);
      if (mode == Sampling::Linear) {
        raw.push_back({first, m.sub(m.constant(1), t)});
        raw.push_back({m.add(first, m.constant(1)), t});
      } else {
        SmallVector<Value> w = cubicWeights(m, t);
        for (int k = 0; k < 4; ++k)
          raw.push_back({m.add(first, m.constant(k - 1)), w[k]});
      }
    }
    for (auto [index, weight] : raw) {
      Tap tap{index, weight, Value()};
      if (padding == Padding::Zeros)
        tap.inside = AndOp::create(n.builder, n.loc, m.type.clone(n.builder.getI1Type()),
                                   m.compare("greater_or_equal", index, m.constant(0)),
                                   m.compare("less", index, m.constant(length)));
      else if (padding == Padding::Reflection)
        tap.index = m.truncate(m.reflect(index, low, high));
      // Every gathered index stays inside the input; zeros padding masks the weight instead.
      tap.index = m.clamp(tap.index, 0, length - 1);
      taps[d].push_back(tap);
    }
  }

  // The input as [N, C, inputs], gathered at [N, C, positions] indices per tap combination.
  Value flat = n.reshape(*n.input(0), {batch, channels, inputs});
  auto gatherType = n.tensorType({batch, channels, positions}, xEt);
  auto wideType = gatherType.clone(ct);
  auto i64 = n.builder.getI64Type();
  SmallVector<int64_t> spread{batch, channels, positions};
  auto spreadType = RankedTensorType::get({3}, i64);
  Value spreadShape = n.constant(DenseElementsAttr::get(spreadType, ArrayRef(spread)));
  Value sum;
  SmallVector<int64_t> pick(dims, 0);
  for (int64_t c = 0; c < combinations; ++c) {
    int64_t code = c;
    for (int64_t d = dims - 1; d >= 0; --d) {
      pick[d] = code % tapsPerDim;
      code /= tapsPerDim;
    }
    Value index, weight, inside;
    int64_t stride = inputs;
    for (int64_t d = 0; d < dims; ++d) {
      const Tap &tap = taps[d][pick[d]];
      stride /= xType.getDimSize(2 + d);
      Value term = stride == 1 ? tap.index : m.mul(tap.index, m.constant(double(stride)));
      index = index ? m.add(index, term) : term;
      if (tap.weight)
        weight = weight ? m.mul(weight, tap.weight) : tap.weight;
      if (tap.inside)
        inside =
            inside
                ? Value(AndOp::create(n.builder, n.loc, tap.inside.getType(), inside, tap.inside))
                : tap.inside;
    }
    if (inside)
      weight = m.select(inside, weight ? weight : m.constant(1), m.constant(0));
    Value indices = CastOp::create(n.builder, n.loc, m.type.clone(i64), index);
    indices = ExpandOp::create(n.builder, n.loc, gatherType.clone(i64),
                               n.reshape(indices, {batch, 1, positions}), spreadShape);
    Value gathered = GatherElementsOp::create(n.builder, n.loc, gatherType, flat, indices,
                                              n.builder.getI64IntegerAttr(2));
    if (xEt != ct)
      gathered = CastOp::create(n.builder, n.loc, wideType, gathered);
    Value term = weight ? Value(MulOp::create(n.builder, n.loc, wideType, gathered,
                                              n.reshape(weight, {batch, 1, positions})))
                        : gathered;
    sum = sum ? Value(AddOp::create(n.builder, n.loc, wideType, sum, term)) : term;
  }
  if (xEt != ct)
    sum = CastOp::create(n.builder, n.loc, gatherType, sum);
  SmallVector<int64_t> outShape{batch, channels};
  for (int64_t d = 0; d < dims; ++d)
    outShape.push_back(gridType.getDimSize(1 + d));
  return n.setOutput(0, n.reshape(sum, outShape));
}

/// AffineGrid(theta [N, k, k + 1], size [N, C, spatial...]): the sampling grid [N,
/// spatial..., k] of theta applied to each output position's normalized coordinates (x
/// first) and 1, in f64 as the reference computes it (its base grid comes from np.arange).
LogicalResult importAffineGrid(NodeImporter &n) {
  auto thetaType = n.inputType(0);
  if (!thetaType)
    return failure();
  if (failed(requireFloat(n, thetaType, "theta")))
    return failure();
  auto size = n.constantInts(1);
  if (failed(size))
    return failure();
  const int64_t dims = int64_t(size->size()) - 2;
  if ((dims != 2 && dims != 3) || thetaType.getRank() != 3 || thetaType.getDimSize(1) != dims ||
      thetaType.getDimSize(2) != dims + 1 || (*size)[0] != thetaType.getDimSize(0))
    return n.fail("theta " + shapeText(thetaType.getShape()) + " and size of " +
                  Twine(size->size()) +
                  " entries do not describe a 2-D ([N, 2, 3], size [N, C, "
                  "H, W]) or 3-D ([N, 3, 4], size [N, C, D, H, W]) affine grid");
  const bool alignCorners = n.attrInt("align_corners", 0) != 0;
  int64_t positions = 1;
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t length = (*size)[2 + d];
    if (length < 1 || length > (int64_t(1) << 24) || positions * length > (int64_t(1) << 24))
      return n.fail("the grid of size " + Twine((*size)[2 + d]) + " along dimension " +
                    Twine(2 + d) + " is empty or above 2^24 positions");
    positions *= length;
  }
  // The base grid: one row (x, y[, z], 1) per output position, the last dimension fastest.
  std::vector<double> base(positions * (dims + 1));
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    for (int64_t d = dims - 1; d >= 0; --d) {
      const int64_t length = (*size)[2 + d], i = rest % length;
      rest /= length;
      double v;
      if (alignCorners)
        v = length == 1 ? -1.0 : -1.0 + double(i) * (2.0 / double(length - 1));
      else
        v = (-1.0 + 1.0 / double(length)) + double(i) * (2.0 / double(length));
      base[p * (dims + 1) + (dims - 1 - d)] = v;
    }
    base[p * (dims + 1) + dims] = 1.0;
  }
  Type f64 = n.builder.getF64Type();
  HostValues host;
  host.isFloat = true;
  host.floats = std::move(base);
  Value baseGrid = n.constant(makeElements(n.tensorType({positions, dims + 1}, f64), host));
  const int64_t batch = thetaType.getDimSize(0);
  Value theta = *n.input(0);
  if (thetaType.getElementType() != f64)
    theta = CastOp::create(n.builder, n.loc, thetaType.clone(f64), theta);
  theta = TransposeOp::create(n.builder, n.loc, n.tensorType({batch, dims + 1, dims}, f64), theta,
                              n.builder.getDenseI64ArrayAttr({0, 2, 1}));
  auto gridType = n.tensorType({batch, positions, dims}, f64);
  Value grid = MatMulOp::create(n.builder, n.loc, gridType, baseGrid, theta);
  if (thetaType.getElementType() != f64)
    grid = CastOp::create(n.builder, n.loc, gridType.clone(thetaType.getElementType()), grid);
  SmallVector<int64_t> shape{batch};
  for (int64_t d = 0; d < dims; ++d)
    shape.push_back((*size)[2 + d]);
  shape.push_back(dims);
  return n.setOutput(0, n.reshape(grid, shape));
}

} // namespace

void registerGridSampleImports(OpImportRegistry &r) {
  r["GridSample"] = {importGridSample, 16};
  r["AffineGrid"] = {importAffineGrid, 20};
}

} // namespace sinter::import
