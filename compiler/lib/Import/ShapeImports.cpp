// Import of shape and indexing ops: Shape, Gather, GatherND, ScatterND, Slice, Concat,
// Unsqueeze, Squeeze, Expand, Range, ConstantOfShape, NonZero.
//
// Every parameter that decides a result shape (axes, slice bounds, expand/constant shapes,
// range bounds) must be a compile-time constant; the importer folds shape computations on
// the side, so Shape -> Gather -> Concat -> ... chains have known values here.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {


/// Fails when a shape read from a constant holds a negative entry or too many elements.
LogicalResult checkShapeValues(NodeImporter &n, ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return n.fail("shape entry " + Twine(d) + " is negative");
    if (d != 0 && count > (int64_t(1) << 48) / d)
      return n.fail("the result shape holds too many elements");
    count *= d;
  }
  return success();
}

/// Fails unless input i has an integer element type (indices, shapes).
LogicalResult requireIntegerInput(NodeImporter &n, unsigned i, StringRef what) {
  auto type = n.inputType(i);
  if (!type)
    return failure();
  Type et = type.getElementType();
  if (!et.isInteger(64) && !et.isInteger(32))
    return n.fail(what + " must be int64 or int32");
  return success();
}

/// Fails when an input's element type is not that of input 0.
LogicalResult requireSameElementType(NodeImporter &n, unsigned i, unsigned j) {
  auto a = n.inputType(i), b = n.inputType(j);
  if (!a || !b)
    return failure();
  if (a.getElementType() != b.getElementType())
    return n.fail("inputs " + Twine(i) + " and " + Twine(j) + " have different element types");
  return success();
}

/// When the indices of a GatherND/ScatterND are constant, checks every tuple entry against
/// the data dimension it addresses (dims [first, first + k)).
LogicalResult checkTupleIndices(NodeImporter &n, unsigned input, ArrayRef<int64_t> dataShape,
                                int64_t first, int64_t k) {
  DenseElementsAttr c = n.constantInput(input);
  if (!c || k < 1)
    return success();
  int64_t i = 0;
  for (const APInt &v : c.getValues<APInt>()) {
    int64_t d = first + i++ % k, idx = v.getSExtValue();
    if (d >= (int64_t)dataShape.size())
      return success();
    int64_t dim = dataShape[d];
    if (idx < -dim || idx >= dim)
      return n.fail("index " + Twine(idx) + " is out of range for dimension " + Twine(d) +
                    " of size " + Twine(dim));
  }
  return success();
}

LogicalResult importShape(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  int64_t rank = in.getRank();
  auto clampIndex = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clampIndex(n.attrInt("start", 0));
  int64_t end = n.attr("end") ? clampIndex(n.attrInt("end", rank)) : rank;
  end = std::max(start, end);
  auto op = ShapeOp::create(n.builder, n.loc, n.tensorType({end - start}, n.builder.getI64Type()),
                            *n.input(0), n.builder.getI64IntegerAttr(start),
                            n.builder.getI64IntegerAttr(end));
  return n.setResult(op);
}

LogicalResult importGather(NodeImporter &n) {
  auto in = n.inputType(0), indices = n.inputType(1);
  if (!in || !indices || failed(requireIntegerInput(n, 1, "indices")))
    return failure();
  if (in.getRank() == 0)
    return n.fail("Gather input must have rank >= 1");
  auto axis = normalizeAxis(n, n.attrInt("axis", 0), in.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  if (DenseElementsAttr c = n.constantInput(1)) {
    int64_t dim = in.getDimSize(*axis);
    for (const APInt &v : c.getValues<APInt>()) {
      int64_t idx = v.getSExtValue();
      if (idx < -dim || idx >= dim)
        return n.fail("index " + Twine(idx) + " is out of range for axis " + Twine(*axis) +
                      " of size " + Twine(dim));
    }
  }
  std::string error;
  auto shape = GatherOp::inferShape(in.getShape(), indices.getShape(), *axis, error);
  if (failed(shape))
    return n.fail(error);
  auto op = GatherOp::create(n.builder, n.loc, n.tensorType(*shape, in.getElementType()),
                             *n.input(0), *n.input(1), n.builder.getI64IntegerAttr(*axis));
  return n.setResult(op);
}

LogicalResult importGatherND(NodeImporter &n) {
  auto in = n.inputType(0), indices = n.inputType(1);
  if (!in || !indices || failed(requireIntegerInput(n, 1, "indices")))
    return failure();
  int64_t batchDims = n.attrInt("batch_dims", 0);
  std::string error;
  auto shape = GatherNDOp::inferShape(in.getShape(), indices.getShape(), batchDims, error);
  if (failed(shape))
    return n.fail(error + " (attribute 'batch_dims' = " + Twine(batchDims) + ")");
  if (failed(checkTupleIndices(n, 1, in.getShape(), batchDims, indices.getShape().back())))
    return failure();
  auto op = GatherNDOp::create(n.builder, n.loc, n.tensorType(*shape, in.getElementType()),
                               *n.input(0), *n.input(1), n.builder.getI64IntegerAttr(batchDims));
  return n.setResult(op);
}

LogicalResult importScatterND(NodeImporter &n) {
  std::string reduction = "none";
  if (const auto *r = n.attr("reduction"))
    reduction = r->s();
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
      reduction != "min")
    return n.fail("attribute 'reduction' = '" + reduction + "' (none, add, mul, max or min)");
  auto in = n.inputType(0), indices = n.inputType(1), updates = n.inputType(2);
  if (!in || !indices || !updates || failed(requireIntegerInput(n, 1, "indices")) ||
      failed(requireSameElementType(n, 0, 2)))
    return failure();
  if (indices.getRank() < 1)
    return n.fail("indices must have rank >= 1");
  int64_t k = indices.getShape().back();
  if (k < 1 || k > in.getRank())
    return n.fail("the last indices dimension (" + Twine(k) + ") must be in [1, " +
                  Twine(in.getRank()) + "]");
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  expected.append(in.getShape().begin() + k, in.getShape().end());
  if (updates.getShape() != ArrayRef<int64_t>(expected))
    return n.fail("updates shape does not match indices.shape[:-1] + data.shape[k:]");
  if (failed(checkTupleIndices(n, 1, in.getShape(), 0, k)))
    return failure();
  if (reduction != "none" && in.getElementType().isInteger(1))
    return n.fail("attribute 'reduction' = '" + reduction + "' cannot combine bool updates");
  auto op = ScatterNDOp::create(n.builder, n.loc, in, *n.input(0), *n.input(1), *n.input(2),
                                n.builder.getStringAttr(reduction));
  return n.setResult(op);
}

LogicalResult importSlice(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  int64_t rank = in.getRank();
  if (rank == 0)
    return n.fail("Slice input must have rank >= 1");
  auto starts = n.constantInts(1), ends = n.constantInts(2);
  if (failed(starts) || failed(ends))
    return failure();
  size_t count = starts->size();
  if (ends->size() != count)
    return n.fail("starts and ends have different lengths");
  SmallVector<int64_t> axes, steps(count, 1);
  if (n.hasInput(3)) {
    auto given = n.constantInts(3);
    if (failed(given))
      return failure();
    axes = *given;
  } else {
    for (size_t i = 0; i < count; ++i)
      axes.push_back(i);
  }
  if (n.hasInput(4)) {
    auto given = n.constantInts(4);
    if (failed(given))
      return failure();
    steps = *given;
  }
  if (axes.size() != count || steps.size() != count)
    return n.fail("starts, ends, axes and steps have different lengths");

  SmallVector<int64_t> fullStarts(rank, 0), fullEnds(in.getShape()), fullSteps(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < count; ++i) {
    auto axis = normalizeAxis(n, axes[i], rank, "axes entry");
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return n.fail("axes holds axis " + Twine(*axis) + " twice");
    seen[*axis] = true;
    int64_t dim = in.getDimSize(*axis), step = steps[i];
    if (step == 0)
      return n.fail("steps entry for axis " + Twine(*axis) + " is 0");
    // ONNX clamping: negative values count from the end (INT64_MIN/MAX stand for
    // "from the beginning"/"to the end"), then clamp to the valid range for the direction.
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (dim == 0) {
      start = end = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    fullStarts[*axis] = start;
    fullEnds[*axis] = end;
    fullSteps[*axis] = step;
  }
  std::string error;
  auto shape = SliceOp::inferShape(in.getShape(), fullStarts, fullEnds, fullSteps, error);
  if (failed(shape))
    return n.fail(error);
  auto op = SliceOp::create(n.builder, n.loc, n.tensorType(*shape, in.getElementType()),
                            *n.input(0), n.builder.getDenseI64ArrayAttr(fullStarts),
                            n.builder.getDenseI64ArrayAttr(fullEnds),
                            n.builder.getDenseI64ArrayAttr(fullSteps));
  return n.setResult(op);
}

LogicalResult importConcat(NodeImporter &n) {
  if (n.numInputs() == 0)
    return n.fail("Concat needs at least one input");
  if (!n.attr("axis"))
    return n.fail("attribute 'axis' is required");
  SmallVector<Value> inputs;
  SmallVector<SmallVector<int64_t>> shapes;
  for (unsigned i = 0; i < n.numInputs(); ++i) {
    auto type = n.inputType(i);
    if (!type || failed(requireSameElementType(n, 0, i)))
      return failure();
    inputs.push_back(*n.input(i));
    shapes.push_back(SmallVector<int64_t>(type.getShape()));
  }
  auto first = n.inputType(0);
  if (first.getRank() == 0)
    return n.fail("Concat inputs must have rank >= 1");
  auto axis = normalizeAxis(n, n.attrInt("axis", 0), first.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  // Each input holds at most 2^48 elements, but thousands of them could overflow the sum.
  int64_t total = 0;
  for (const auto &s : shapes)
    if ((int64_t)s.size() > *axis && (total += s[*axis]) > kMaxElements)
      return n.fail("the inputs' sizes along axis " + Twine(*axis) + " add up to more than 2^48");
  std::string error;
  auto shape = ConcatOp::inferShape(shapes, *axis, error);
  if (failed(shape))
    return n.fail(error);
  auto op = ConcatOp::create(n.builder, n.loc, n.tensorType(*shape, first.getElementType()),
                             inputs, n.builder.getI64IntegerAttr(*axis));
  return n.setResult(op);
}

LogicalResult importUnsqueeze(NodeImporter &n) {
  if (n.attr("axes"))
    return n.fail("attribute 'axes' is the pre-opset-13 form of Unsqueeze; axes must be an input");
  auto in = n.inputType(0);
  if (!in)
    return failure();
  if (!n.hasInput(1))
    return n.fail("Unsqueeze needs its axes input (input 1)");
  auto given = n.constantInts(1);
  if (failed(given))
    return failure();
  int64_t outRank = in.getRank() + given->size();
  auto axes = normalizeAxes(n, *given, outRank, "axes");
  if (failed(axes))
    return failure();
  std::string error;
  auto shape = UnsqueezeOp::inferShape(in.getShape(), *axes, error);
  if (failed(shape))
    return n.fail(error);
  auto op = UnsqueezeOp::create(n.builder, n.loc, n.tensorType(*shape, in.getElementType()),
                                *n.input(0), n.builder.getDenseI64ArrayAttr(*axes));
  return n.setResult(op);
}

LogicalResult importSqueeze(NodeImporter &n) {
  if (n.attr("axes"))
    return n.fail("attribute 'axes' is the pre-opset-13 form of Squeeze; axes must be an input");
  auto in = n.inputType(0);
  if (!in)
    return failure();
  SmallVector<int64_t> axes;
  if (n.hasInput(1)) {
    auto given = n.constantInts(1);
    if (failed(given))
      return failure();
    auto normalized = normalizeAxes(n, *given, in.getRank(), "axes");
    if (failed(normalized))
      return failure();
    axes = *normalized;
  } else {
    for (int64_t d = 0; d < in.getRank(); ++d)
      if (in.getDimSize(d) == 1)
        axes.push_back(d);
  }
  std::string error;
  auto shape = SqueezeOp::inferShape(in.getShape(), axes, error);
  if (failed(shape))
    return n.fail(error);
  auto op = SqueezeOp::create(n.builder, n.loc, n.tensorType(*shape, in.getElementType()),
                              *n.input(0), n.builder.getDenseI64ArrayAttr(axes));
  return n.setResult(op);
}

LogicalResult importExpand(NodeImporter &n) {
  auto in = n.inputType(0), shapeType = n.inputType(1);
  if (!in || !shapeType)
    return failure();
  if (shapeType.getRank() != 1 || !shapeType.getElementType().isInteger(64))
    return n.fail("the shape input must be a 1-D int64 tensor");
  auto target = n.constantInts(1);
  if (failed(target) || failed(checkShapeValues(n, *target)))
    return failure();
  auto shape = broadcastShapes(in.getShape(), *target);
  if (failed(shape))
    return n.fail("the input shape does not broadcast with the shape input");
  if (failed(checkShapeValues(n, *shape)))
    return failure();
  auto op = ExpandOp::create(n.builder, n.loc, n.tensorType(*shape, in.getElementType()),
                             *n.input(0), *n.input(1));
  return n.setResult(op);
}

LogicalResult importRange(NodeImporter &n) {
  for (unsigned i = 0; i < 3; ++i) {
    auto type = n.inputType(i);
    if (!type)
      return failure();
    if (type.getRank() != 0 && type.getNumElements() != 1)
      return n.fail("input " + Twine(i) + " of Range must be a scalar");
    if (i > 0 && failed(requireSameElementType(n, 0, i)))
      return failure();
    if (!n.constantInput(i))
      return n.fail("input " + Twine(i) + " ('" + n.node.input(i) +
                    "') must be a compile-time constant: the result length must be static");
  }
  Type et = n.inputType(0).getElementType();
  // Opset 27: a 16-bit range computes start + i * delta in stash_type, float (1) or double
  // (11), and rounds once; the range op computes it in double.
  if (int64_t stash = n.attrInt("stash_type", 1); stash != 1 && stash != 11)
    return n.fail("attribute 'stash_type' = " + Twine(stash) + " (1, float, or 11, double)");
  auto scalar = [&](unsigned i) {
    DenseElementsAttr c = n.constantInput(i);
    if (isa<FloatType>(et))
      return (*c.getValues<APFloat>().begin()).convertToDouble();
    const APInt v = *c.getValues<APInt>().begin();
    return et.isUnsignedInteger() ? (double)v.getZExtValue() : (double)v.getSExtValue();
  };
  double start = scalar(0), limit = scalar(1), delta = scalar(2);
  if (delta == 0)
    return n.fail("delta is 0");
  double len = std::max(std::ceil((limit - start) / delta), 0.0);
  if (!(len < (double)(int64_t(1) << 40)))
    return n.fail("the range length is too large or not finite");
  // One-element tensors count as scalars, as onnxruntime takes them (ONNX's own AffineGrid
  // function passes Split's [1]-shaped outputs): 0-D constants of their value, which the
  // range folds from.
  auto operand = [&](unsigned i) -> Value {
    if (n.inputType(i).getRank() == 0)
      return *n.input(i);
    return n.constant(n.constantInput(i).reshape(RankedTensorType::get({}, et)));
  };
  auto op = RangeOp::create(n.builder, n.loc, n.tensorType({(int64_t)len}, et), operand(0),
                            operand(1), operand(2));
  return n.setResult(op);
}

/// The most elements a run-time NonZero input may have: its columns come from an N x N count.
constexpr int64_t kMaxPaddedNonZero = 8192;

/// NonZero of a run-time input: the count is known only on the device, so the result has
/// room for every element ([rank, N]); the nonzero elements' coordinates come first, in
/// row-major order, and every later column holds kPaddedCoordinate. PaddedValues checks that
/// the padding reaches only gathers, row-wise computation and scatters.
LogicalResult importPaddedNonZero(NodeImporter &n, RankedTensorType type) {
  ArrayRef<int64_t> shape = type.getShape();
  const int64_t rank = shape.size(), count = type.getNumElements();
  Type et = type.getElementType(), i64 = n.builder.getI64Type(), i1 = n.builder.getI1Type();
  if (rank == 0)
    return n.fail("input 0 ('" + n.node.input(0) +
                  "') is a run-time scalar; NonZero of a run-time input needs rank >= 1");
  if (count > kMaxPaddedNonZero)
    return n.fail("input 0 ('" + n.node.input(0) + "') is a run-time input of " + Twine(count) +
                  " elements: Sinter pads NonZero of a run-time input to its element count, "
                  "at most " +
                  Twine(kMaxPaddedNonZero));
  if (count == 0)
    return n.setOutput(
        0, n.constant(DenseElementsAttr::get(n.tensorType({rank, 0}, i64), ArrayRef<int64_t>{})));
  Value flat = n.reshape(*n.input(0), {count});
  Value zero;
  if (et.isInteger(1))
    zero = n.constant(DenseElementsAttr::get(RankedTensorType::get({}, i1), false));
  else if (isa<FloatType>(et))
    zero = n.scalar(et, 0.0);
  else
    zero = n.integerScalar(et, 0);
  Value isZero = EqualOp::create(n.builder, n.loc, n.tensorType({count}, i1), flat, zero);
  Value ones = WhereOp::create(n.builder, n.loc, n.tensorType({count}, i64), isZero,
                               n.integerScalar(i64, 0), n.integerScalar(i64, 1));
  // nonzerosUpTo[f]: nonzero elements at flat positions 0..f.
  Value nonzerosUpTo = CumulativeOp::create(
      n.builder, n.loc, n.tensorType({count}, i64), ones, n.builder.getStringAttr("sum"),
      n.builder.getI64IntegerAttr(0), n.builder.getBoolAttr(false), n.builder.getBoolAttr(false));
  // Column j's element is the first position where the running count reaches j + 1, which is
  // the number of positions where it is at most j; past the count that number is N.
  Value atMost = LessOrEqualOp::create(n.builder, n.loc, n.tensorType({count, count}, i1),
                                       n.reshape(nonzerosUpTo, {1, count}), n.iota(count, 0, 2));
  Value flatIndex =
      ReduceOp::create(n.builder, n.loc, n.tensorType({count}, i64),
                       CastOp::create(n.builder, n.loc, n.tensorType({count, count}, i64), atMost),
                       n.builder.getStringAttr("sum"), n.builder.getDenseI64ArrayAttr({1}),
                       n.builder.getBoolAttr(false));
  Value isPadding = EqualOp::create(n.builder, n.loc, n.tensorType({count}, i1), flatIndex,
                                    n.integerScalar(i64, count));
  auto vector = n.tensorType({count}, i64);
  SmallVector<Value> rows;
  int64_t stride = count;
  for (int64_t axis = 0; axis < rank; ++axis) {
    const int64_t outer = stride;
    stride /= shape[axis];
    // (flat / stride) % extent, as flat / stride - (flat / outer) * extent
    Value quotient =
        DivOp::create(n.builder, n.loc, vector, flatIndex, n.integerScalar(i64, stride));
    Value wraps = MulOp::create(
        n.builder, n.loc, vector,
        DivOp::create(n.builder, n.loc, vector, flatIndex, n.integerScalar(i64, outer)),
        n.integerScalar(i64, shape[axis]));
    Value coordinate = SubOp::create(n.builder, n.loc, vector, quotient, wraps);
    Value row = WhereOp::create(n.builder, n.loc, vector, isPadding,
                                n.integerScalar(i64, kPaddedCoordinate), coordinate);
    rows.push_back(n.reshape(row, {1, count}));
  }
  n.state.padded.startAt(n.node.output(0));
  Value result = rank == 1 ? rows.front()
                           : ConcatOp::create(n.builder, n.loc, n.tensorType({rank, count}, i64),
                                              rows, n.builder.getI64IntegerAttr(0))
                                 .getResult();
  return n.setOutput(0, result);
}

/// NonZero's result length is the count of nonzero elements. An input known at compile time
/// folds to its coordinates (exporters write repeat_interleave this way: Cohere's, GLM's and
/// Helium's rotary embeddings, from shapes only); a run-time one is padded
/// (importPaddedNonZero).
LogicalResult importNonZero(NodeImporter &n) {
  auto type = n.inputType(0);
  if (!type)
    return failure();
  DenseElementsAttr data = n.constantInput(0);
  // SINTER_PAD_CONSTANT_NONZERO=1 pads compile-time inputs' results too: a testing aid, so
  // that the host folder evaluates the padded form against onnxruntime (fold_numerics.py).
  static const bool padConstant = [] {
    const char *v = std::getenv("SINTER_PAD_CONSTANT_NONZERO");
    return v && std::string(v) == "1";
  }();
  if (!data || padConstant)
    return importPaddedNonZero(n, type);
  SmallVector<bool> isNonZero;
  isNonZero.reserve(data.getNumElements());
  if (isa<FloatType>(type.getElementType())) {
    for (const APFloat &v : data.getValues<APFloat>())
      isNonZero.push_back(!v.isZero());
  } else {
    for (const APInt &v : data.getValues<APInt>())
      isNonZero.push_back(!v.isZero());
  }
  ArrayRef<int64_t> shape = type.getShape();
  const int64_t rank = shape.size(), count = llvm::count(isNonZero, true);
  // [rank, count]: column j holds the j-th nonzero element's coordinates, in row-major order.
  SmallVector<int64_t> coordinates(rank * count);
  for (int64_t flat = 0, j = 0; flat < (int64_t)isNonZero.size(); ++flat) {
    if (!isNonZero[flat])
      continue;
    for (int64_t axis = rank - 1, rest = flat; axis >= 0; --axis) {
      coordinates[axis * count + j] = rest % shape[axis];
      rest /= shape[axis];
    }
    ++j;
  }
  auto resultType = n.tensorType({rank, count}, n.builder.getI64Type());
  return n.setOutput(0, n.constant(DenseElementsAttr::get(resultType, ArrayRef(coordinates))));
}

LogicalResult importConstantOfShape(NodeImporter &n) {
  auto shapeType = n.inputType(0);
  if (!shapeType)
    return failure();
  if (shapeType.getRank() != 1 || !shapeType.getElementType().isInteger(64))
    return n.fail("the shape input must be a 1-D int64 tensor");
  auto shape = n.constantInts(0);
  if (failed(shape) || failed(checkShapeValues(n, *shape)))
    return failure();
  DenseElementsAttr value;
  if (const auto *a = n.attr("value")) {
    std::string error;
    auto t = tensorFromProto(a->t(), n.builder.getContext(), n.state.modelDir, error);
    if (failed(t))
      return n.fail("attribute 'value': " + error);
    if (t->getNumElements() != 1)
      return n.fail("attribute 'value' must hold exactly one element");
    value = *t;
  } else {
    value = DenseElementsAttr::get(RankedTensorType::get({1}, n.builder.getF32Type()), 0.0f);
  }
  auto op = ConstantOfShapeOp::create(n.builder, n.loc,
                                      n.tensorType(*shape, value.getElementType()),
                                      *n.input(0), value);
  return n.setResult(op);
}

} // namespace

void registerShapeImports(OpImportRegistry &r) {
  r["Shape"] = {importShape, 13};
  r["Gather"] = {importGather, 13};
  r["GatherND"] = {importGatherND, 13};
  r["ScatterND"] = {importScatterND, 13};
  r["Slice"] = {importSlice, 13};
  r["Concat"] = {importConcat, 13};
  r["Unsqueeze"] = {importUnsqueeze, 13};
  r["Squeeze"] = {importSqueeze, 13};
  r["Expand"] = {importExpand, 13};
  r["Range"] = {importRange, 11};
  r["ConstantOfShape"] = {importConstantOfShape, 9};
  r["NonZero"] = {importNonZero, 9};
}

} // namespace sinter::import
