// Folders of the ops declared in GraphTensorOps.td. The importer calls them on the side
// (NodeImporter::setOutput) to know the values of shape computations, masks and index
// tables; they must not assume that the op verifies (the importer folds before it verifies),
// so every index read is bounds-checked and anything unexpected returns no fold.
#include "sinter/Dialect/Graph/IR/ElementsFolding.h"

#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace sinter::graph;

namespace {

using Shape = SmallVector<int64_t>;

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// Row-major strides of `shape`.
Shape stridesOf(ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

bool isFoldableSize(RankedTensorType type) {
  return type.hasStaticShape() && type.getNumElements() <= kMaxFoldElements;
}

/// A constant of `resultType` whose element i is element src(i) of `input`. `src` returns a
/// negative number when the fold must not happen (an out-of-range index).
Attribute remap(Attribute input, RankedTensorType resultType,
                llvm::function_ref<int64_t(int64_t)> src) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(input);
  if (!dense || !isFoldableSize(resultType) ||
      dense.getElementType() != resultType.getElementType())
    return {};
  int64_t n = resultType.getNumElements(), inN = dense.getNumElements();
  if (dense.isSplat()) {
    if (n > 0 && inN == 0)
      return {};
    return dense.resizeSplat(resultType);
  }
  auto values = readValues(dense);
  if (!values)
    return {};
  HostValues out;
  out.isFloat = values->isFloat;
  (out.isFloat ? out.floats.reserve(n) : out.ints.reserve(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = src(i);
    if (s < 0 || s >= inN)
      return {};
    if (out.isFloat)
      out.floats.push_back(values->floats[s]);
    else
      out.ints.push_back(values->ints[s]);
  }
  return makeElements(resultType, out);
}

/// Integer values of a constant index operand.
std::optional<std::vector<int64_t>> readIndices(Attribute attr) {
  auto values = readValues(attr);
  if (!values || values->isFloat)
    return std::nullopt;
  return std::move(values->ints);
}

/// What an index out of range does, as the generated kernels treat it: a gather reads the
/// nearest entry, a scatter writes nothing (a run-time NonZero's padding reaches both).
enum class OutOfRange { Clamp, Skip };

/// Offsets (in elements of the row-major input) of the index tuples of a GatherND /
/// ScatterND indices tensor read as [count, k], addressing input dims [first, first + k);
/// -1 for a tuple that `Skip`s.
std::optional<std::vector<int64_t>> tupleOffsets(ArrayRef<int64_t> indices, int64_t k,
                                                 ArrayRef<int64_t> inShape, int64_t first,
                                                 OutOfRange outOfRange) {
  Shape strides = stridesOf(inShape);
  std::vector<int64_t> offsets;
  for (size_t t = 0; t + k <= indices.size(); t += k) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t d = first + j, dim = inShape[d], q = indices[t + j];
      int64_t idx = resolveIndex(q, dim);
      if (idx < 0 && dim == 0)
        return std::nullopt;
      if (idx < 0 && outOfRange == OutOfRange::Skip) {
        offset = -1;
        break;
      }
      if (idx < 0)
        idx = clampedIndex(q, dim);
      offset += idx * strides[d];
    }
    offsets.push_back(offset);
  }
  return offsets;
}

} // namespace

//===----------------------------------------------------------------------===//
// Shape queries and generators
//===----------------------------------------------------------------------===//

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto shape = getInput().getType().getShape();
  int64_t start = getStart(), end = getEnd();
  if (start < 0 || end > (int64_t)shape.size() || start > end ||
      getType().getShape() != ArrayRef<int64_t>{end - start})
    return {};
  return DenseElementsAttr::get(getType(), shape.slice(start, end - start));
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  auto value = dyn_cast<DenseElementsAttr>(getValue());
  if (!value || value.getNumElements() != 1 ||
      value.getElementType() != getType().getElementType())
    return {};
  return value.resizeSplat(getType());
}

OpFoldResult RangeOp::fold(FoldAdaptor a) {
  auto start = readValues(a.getStart()), limit = readValues(a.getLimit()),
       delta = readValues(a.getDelta());
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 ||
      delta->size() != 1 || getType().getRank() != 1 || !isFoldableSize(getType()))
    return {};
  int64_t n = getType().getDimSize(0);
  HostValues out;
  out.isFloat = start->isFloat;
  if (out.isFloat) {
    double s = start->floats[0], l = limit->floats[0], d = delta->floats[0];
    if (d == 0 || std::max<double>(std::ceil((l - s) / d), 0) != (double)n)
      return {};
    for (int64_t i = 0; i < n; ++i)
      out.floats.push_back(s + i * d);
  } else {
    int64_t s = start->ints[0], l = limit->ints[0], d = delta->ints[0];
    if (d == 0)
      return {};
    double len = std::max<double>(std::ceil((double)(l - s) / (double)d), 0);
    if (len != (double)n)
      return {};
    for (int64_t i = 0; i < n; ++i)
      out.ints.push_back(s + i * d);
  }
  return makeElements(getType(), out);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult GatherOp::fold(FoldAdaptor a) {
  auto indices = readIndices(a.getIndices());
  auto in = getInput().getType().getShape();
  int64_t axis = getAxis();
  if (!indices || axis < 0 || axis >= (int64_t)in.size())
    return {};
  int64_t dim = in[axis], inner = product(in.drop_front(axis + 1));
  int64_t count = indices->size();
  if (inner == 0 || count == 0)
    return {};
  // An index out of range reads the nearest row, as the generated kernel clamps it (a
  // run-time NonZero's padding reaches gathers; PaddedValues.h).
  return remap(a.getInput(), getType(), [&](int64_t i) -> int64_t {
    int64_t e = i % inner, rest = i / inner;
    int64_t j = rest % count, o = rest / count;
    return dim == 0 ? -1 : (o * dim + clampedIndex((*indices)[j], dim)) * inner + e;
  });
}

OpFoldResult GatherNDOp::fold(FoldAdaptor a) {
  auto indices = readIndices(a.getIndices());
  auto in = getInput().getType().getShape();
  auto idxShape = getIndices().getType().getShape();
  int64_t b = getBatchDims();
  if (!indices || idxShape.empty() || b < 0 || b >= (int64_t)in.size())
    return {};
  int64_t k = idxShape.back();
  if (k < 1 || b + k > (int64_t)in.size())
    return {};
  int64_t slice = product(in.drop_front(b + k));
  int64_t batchStride = product(in.drop_front(b));
  int64_t batches = product(in.take_front(b));
  int64_t tuples = k == 0 ? 0 : (int64_t)indices->size() / k;
  if (slice == 0 || batches == 0 || tuples % batches != 0)
    return {};
  int64_t perBatch = tuples / batches;
  if (perBatch == 0)
    return {};
  // Offsets within one batch element: the tuple addresses dims [b, b + k).
  auto offsets = tupleOffsets(*indices, k, in.drop_front(b), 0, OutOfRange::Clamp);
  if (!offsets)
    return {};
  return remap(a.getInput(), getType(), [&](int64_t i) -> int64_t {
    int64_t e = i % slice, t = i / slice;
    int64_t batch = t / perBatch;
    return batch * batchStride + (*offsets)[t] + e;
  });
}

OpFoldResult ScatterNDOp::fold(FoldAdaptor a) {
  if (!a.getInput() || !a.getIndices() || !a.getUpdates())
    return {};
  auto data = readValues(a.getInput()), updates = readValues(a.getUpdates());
  auto indices = readIndices(a.getIndices());
  auto in = getInput().getType().getShape();
  auto idxShape = getIndices().getType().getShape();
  if (!data || !updates || !indices || idxShape.empty() || !isFoldableSize(getType()) ||
      data->isFloat != updates->isFloat || (int64_t)data->size() != getType().getNumElements())
    return {};
  int64_t k = idxShape.back();
  if (k < 1 || k > (int64_t)in.size())
    return {};
  int64_t slice = product(in.drop_front(k));
  // A tuple out of range writes nothing (the generated kernel skips it alike).
  auto offsets = tupleOffsets(*indices, k, in, 0, OutOfRange::Skip);
  if (!offsets || (int64_t)updates->size() != (int64_t)offsets->size() * slice)
    return {};
  StringRef reduction = getReduction();
  auto combine = [&](auto current, auto update) {
    if (reduction == "add")
      return current + update;
    if (reduction == "mul")
      return current * update;
    if (reduction == "max")
      return std::max(current, update);
    if (reduction == "min")
      return std::min(current, update);
    return update;
  };
  HostValues out = *data;
  for (size_t t = 0; t < offsets->size(); ++t)
    for (int64_t e = 0; e < slice && (*offsets)[t] >= 0; ++e) {
      int64_t dst = (*offsets)[t] + e, src = t * slice + e;
      if (out.isFloat)
        out.floats[dst] = combine(out.floats[dst], updates->floats[src]);
      else
        out.ints[dst] = combine(out.ints[dst], updates->ints[src]);
    }
  return makeElements(getType(), out);
}

OpFoldResult SliceOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; }))
    return getInput();
  auto in = getInput().getType().getShape();
  auto out = getType().getShape();
  ArrayRef<int64_t> starts = getStarts(), steps = getSteps();
  size_t rank = in.size();
  if (starts.size() != rank || steps.size() != rank || out.size() != rank)
    return {};
  Shape inStrides = stridesOf(in);
  return remap(a.getInput(), getType(), [&](int64_t i) -> int64_t {
    int64_t src = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t c = i % out[d];
      i /= out[d];
      int64_t s = starts[d] + c * steps[d];
      if (s < 0 || s >= in[d])
        return -1;
      src += s * inStrides[d];
    }
    return src;
  });
}

OpFoldResult ConcatOp::fold(FoldAdaptor a) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  if (!isFoldableSize(getType()))
    return {};
  auto outShape = getType().getShape();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= (int64_t)outShape.size())
    return {};
  int64_t inner = product(outShape.drop_front(axis + 1));
  int64_t outer = product(outShape.take_front(axis));
  SmallVector<HostValues> parts;
  SmallVector<int64_t> blocks;
  for (auto [value, attr] : llvm::zip(getInputs(), a.getInputs())) {
    auto v = readValues(attr);
    auto type = cast<RankedTensorType>(value.getType());
    if (!v || type.getRank() != (int64_t)outShape.size() ||
        type.getElementType() != getType().getElementType() ||
        (int64_t)v->size() != type.getNumElements())
      return {};
    blocks.push_back(type.getDimSize(axis) * inner);
    parts.push_back(std::move(*v));
  }
  HostValues out;
  out.isFloat = isa<FloatType>(getType().getElementType());
  for (int64_t o = 0; o < outer; ++o)
    for (size_t p = 0; p < parts.size(); ++p)
      for (int64_t e = 0; e < blocks[p]; ++e) {
        int64_t src = o * blocks[p] + e;
        if (src >= (int64_t)parts[p].size())
          return {};
        if (out.isFloat)
          out.floats.push_back(parts[p].floats[src]);
        else
          out.ints.push_back(parts[p].ints[src]);
      }
  if ((int64_t)out.size() != getType().getNumElements())
    return {};
  return makeElements(getType(), out);
}

static OpFoldResult foldReshapeLike(Value input, Attribute constant, RankedTensorType type) {
  auto inType = cast<RankedTensorType>(input.getType());
  if (inType == type)
    return input;
  auto dense = dyn_cast_or_null<DenseElementsAttr>(constant);
  if (!dense || inType.getNumElements() != type.getNumElements() ||
      dense.getElementType() != type.getElementType())
    return {};
  return dense.reshape(type);
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor a) {
  return foldReshapeLike(getInput(), a.getInput(), getType());
}

OpFoldResult SqueezeOp::fold(FoldAdaptor a) {
  return foldReshapeLike(getInput(), a.getInput(), getType());
}

OpFoldResult ExpandOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  auto in = getInput().getType().getShape();
  auto out = getType().getShape();
  if (in.size() > out.size())
    return {};
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t o = out[out.size() - in.size() + d];
    if (in[d] != 1 && in[d] != o)
      return {};
  }
  return remap(a.getInput(), getType(),
               [&](int64_t i) { return broadcastSourceIndex(i, out, in); });
}

OpFoldResult TriluOp::fold(FoldAdaptor a) {
  auto values = readValues(a.getInput());
  auto shape = getType().getShape();
  if (!values || shape.size() < 2 || getInput().getType() != getType() ||
      (int64_t)values->size() != getType().getNumElements())
    return {};
  int64_t rows = shape[shape.size() - 2], cols = shape.back(), k = getK();
  bool upper = getUpper();
  HostValues out = *values;
  for (int64_t i = 0, n = out.size(); i < n; ++i) {
    int64_t c = i % cols, r = (i / cols) % rows;
    bool keep = upper ? c - r >= k : c - r <= k;
    if (keep)
      continue;
    if (out.isFloat)
      out.floats[i] = 0;
    else
      out.ints[i] = 0;
  }
  return makeElements(getType(), out);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {

/// For each input element of `in`, the flat index of the output element a reduction over
/// `axes` sends it to; empty when an axis is out of range.
std::vector<int64_t> reductionTargets(ArrayRef<int64_t> in, ArrayRef<int64_t> axes,
                                      int64_t &outputs) {
  Shape reduced(in);
  SmallVector<bool> isReduced(in.size(), false);
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= (int64_t)in.size())
      return {};
    reduced[axis] = 1;
    isReduced[axis] = true;
  }
  outputs = product(reduced);
  Shape outStrides = stridesOf(reduced);
  std::vector<int64_t> target(product(in));
  for (int64_t i = 0, n = target.size(); i < n; ++i) {
    int64_t rest = i, dst = 0;
    for (int64_t d = in.size() - 1; d >= 0; --d) {
      int64_t c = rest % in[d];
      rest /= in[d];
      if (!isReduced[d])
        dst += c * outStrides[d];
    }
    target[i] = dst;
  }
  return target;
}

} // namespace

OpFoldResult ReduceOp::fold(FoldAdaptor a) {
  RankedTensorType inType = getInput().getType();
  if (!isFoldableSize(inType) || !isFoldableSize(getType()))
    return {};
  auto values = readValues(a.getInput());
  if (!values || (int64_t)values->size() != inType.getNumElements())
    return {};
  int64_t outN = 0;
  std::vector<int64_t> target = reductionTargets(inType.getShape(), getAxes(), outN);
  if (target.size() != values->size() || outN != getType().getNumElements())
    return {};
  StringRef kind = getKind();
  HostValues out;
  out.isFloat = values->isFloat;
  if (values->isFloat) {
    // In double: the kernels accumulate in f32, so these are at least as exact.
    const bool maxLike = kind == "max", minLike = kind == "min";
    double init = kind == "prod" ? 1.0 : maxLike || kind == "log_sum_exp" ? -INFINITY
                : minLike ? INFINITY : 0.0;
    if (kind == "log_sum_exp")
      init = 0.0; // a sum of exponentials, logged below
    std::vector<double> acc(outN, init);
    std::vector<int64_t> count(outN, 0);
    for (size_t i = 0; i < target.size(); ++i) {
      double x = values->floats[i], &r = acc[target[i]];
      ++count[target[i]];
      if (kind == "sum" || kind == "mean") r += x;
      else if (kind == "prod") r *= x;
      else if (maxLike) r = (std::isnan(x) || x > r) && !std::isnan(r) ? x : r;
      else if (minLike) r = (std::isnan(x) || x < r) && !std::isnan(r) ? x : r;
      else if (kind == "l1") r += std::fabs(x);
      else if (kind == "l2" || kind == "sum_square") r += x * x;
      else if (kind == "log_sum_exp") r += std::exp(x);
      else return {};
    }
    for (int64_t o = 0; o < outN; ++o) {
      double r = acc[o];
      if (kind == "mean") r = count[o] ? r / count[o] : NAN;
      else if (kind == "l2") r = std::sqrt(r);
      else if (kind == "log_sum_exp") r = std::log(r);
      out.floats.push_back(r);
    }
  } else {
    if (kind != "sum" && kind != "max" && kind != "min" && kind != "prod")
      return {};
    int64_t init = kind == "prod" ? 1 : kind == "max" ? std::numeric_limits<int64_t>::min()
                 : kind == "min" ? std::numeric_limits<int64_t>::max() : 0;
    std::vector<int64_t> acc(outN, init);
    for (size_t i = 0; i < target.size(); ++i) {
      int64_t x = values->ints[i], &r = acc[target[i]];
      // Wrapping like the kernels' int64 accumulators.
      if (kind == "sum") r = int64_t(uint64_t(r) + uint64_t(x));
      else if (kind == "prod") r = int64_t(uint64_t(r) * uint64_t(x));
      else if (kind == "max") r = std::max(r, x);
      else r = std::min(r, x);
    }
    out.ints = std::move(acc);
  }
  return makeElements(getType(), out);
}

OpFoldResult LayerNormalizationOp::fold(FoldAdaptor a) {
  RankedTensorType type = getInput().getType();
  if (!isFoldableSize(type) || !a.getInput() || !a.getScale() || (getBias() && !a.getBias()))
    return {};
  auto x = readValues(a.getInput()), scale = readValues(a.getScale());
  std::optional<HostValues> bias;
  if (getBias())
    bias = readValues(a.getBias());
  const int64_t axis = getAxis();
  if (!x || !scale || (getBias() && !bias) || axis < 0 || axis >= type.getRank() ||
      (int64_t)x->size() != type.getNumElements())
    return {};
  ArrayRef<int64_t> normalized = type.getShape().drop_front(axis);
  const int64_t width = product(normalized);
  auto scaleShape = cast<RankedTensorType>(getScale().getType()).getShape();
  if ((int64_t)scale->size() != product(scaleShape) || scaleShape.size() > normalized.size() ||
      (bias && (int64_t)bias->size() !=
                   product(cast<RankedTensorType>(getBias().getType()).getShape())))
    return {};
  // In double, with f32's epsilon (the kernels keep f32 statistics).
  const double eps = getEpsilon().convertToFloat();
  HostValues out;
  out.isFloat = true;
  for (int64_t row = 0; width > 0 && row < (int64_t)x->size() / width; ++row) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < width; ++i)
      mean += x->asDouble(row * width + i);
    mean /= width;
    for (int64_t i = 0; i < width; ++i) {
      double d = x->asDouble(row * width + i) - mean;
      var += d * d;
    }
    const double inv = 1.0 / std::sqrt(var / width + eps);
    for (int64_t i = 0; i < width; ++i) {
      double y = (x->asDouble(row * width + i) - mean) * inv *
                 scale->asDouble(broadcastSourceIndex(i, normalized, scaleShape));
      if (bias)
        y += bias->asDouble(broadcastSourceIndex(
            i, normalized, cast<RankedTensorType>(getBias().getType()).getShape()));
      out.floats.push_back(y);
    }
  }
  if ((int64_t)out.floats.size() != type.getNumElements())
    return {};
  return makeElements(getType(), out);
}

OpFoldResult ArgReduceOp::fold(FoldAdaptor a) {
  RankedTensorType inType = getInput().getType();
  if (!isFoldableSize(inType) || !isFoldableSize(getType()))
    return {};
  auto values = readValues(a.getInput());
  const int64_t axis = getAxis();
  if (!values || (int64_t)values->size() != inType.getNumElements() || axis < 0 ||
      axis >= inType.getRank())
    return {};
  int64_t outN = 0;
  const int64_t axisAt[] = {axis};
  std::vector<int64_t> target = reductionTargets(inType.getShape(), axisAt, outN);
  if (target.size() != values->size() || outN != getType().getNumElements())
    return {};
  const bool isMax = getKind() == "max", last = getSelectLastIndex();
  const int64_t inner = product(inType.getShape().drop_front(axis + 1)),
                dim = inType.getDimSize(axis);
  std::vector<int64_t> best(outN, -1);
  std::vector<double> bestValue(outN, 0);
  for (size_t i = 0; i < target.size(); ++i) {
    const double v = values->asDouble(i);
    const int64_t at = (int64_t(i) / inner) % dim, o = target[i];
    const bool better = best[o] < 0 || (isMax ? v > bestValue[o] : v < bestValue[o]) ||
                        (last && v == bestValue[o]);
    if (better) {
      best[o] = at;
      bestValue[o] = v;
    }
  }
  HostValues out;
  out.ints = std::move(best);
  return makeElements(getType(), out);
}

OpFoldResult ReduceMeanOp::fold(FoldAdaptor a) {
  if (getAxes().empty() && getInput().getType() == getType())
    return getInput();
  auto values = readValues(a.getInput());
  auto in = getInput().getType().getShape();
  if (!values || (int64_t)values->size() != getInput().getType().getNumElements() ||
      !isFoldableSize(getType()))
    return {};
  int64_t outN = 0;
  std::vector<int64_t> target = reductionTargets(in, getAxes(), outN);
  if (target.size() != values->size() || outN != getType().getNumElements())
    return {};
  int64_t count = outN == 0 ? 0 : (int64_t)values->size() / outN;
  std::vector<double> sums(outN, 0.0);
  for (size_t i = 0; i < target.size(); ++i)
    sums[target[i]] += values->asDouble(i);
  HostValues out;
  out.isFloat = true;
  for (double s : sums)
    out.floats.push_back(count == 0 ? NAN : s / count);
  return makeElements(getType(), out);
}

OpFoldResult GatherElementsOp::fold(FoldAdaptor a) {
  auto indices = readIndices(a.getIndices());
  auto in = getInput().getType().getShape();
  auto out = getType().getShape();
  const int64_t axis = getAxis();
  if (!indices || axis < 0 || axis >= (int64_t)in.size() || in.size() != out.size())
    return {};
  // Output element i at coordinates c reads the input at c with c[axis] = indices[i].
  return remap(a.getInput(), getType(), [&](int64_t i) -> int64_t {
    int64_t rest = i, source = 0, stride = 1;
    for (int64_t d = (int64_t)out.size() - 1; d >= 0; --d) {
      int64_t c = rest % out[d];
      rest /= out[d];
      if (d == axis && (c = resolveIndex((*indices)[i], in[d])) < 0)
        return -1;
      if (c >= in[d])
        return -1;
      source += c * stride;
      stride *= in[d];
    }
    return source;
  });
}

OpFoldResult PadOp::fold(FoldAdaptor a) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(a.getInput());
  RankedTensorType type = getType();
  if (!dense || !isFoldableSize(type) || dense.getElementType() != type.getElementType())
    return {};
  auto values = readValues(dense);
  if (!values)
    return {};
  auto in = getInput().getType().getShape(), out = type.getShape();
  ArrayRef<int64_t> before = getBefore();
  StringRef mode = getMode();
  const int64_t rank = in.size(), count = type.getNumElements();
  HostValues result;
  result.isFloat = values->isFloat;
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, source = 0, stride = 1;
    bool outside = false;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t c = rest % out[d] - before[d];
      rest /= out[d];
      const int64_t dim = in[d];
      if (c < 0 || c >= dim) {
        if (mode == "constant" || dim == 0) {
          outside = true;
        } else if (mode == "edge") {
          c = c < 0 ? 0 : dim - 1;
        } else if (mode == "wrap") {
          c = ((c % dim) + dim) % dim;
        } else { // reflect: period 2 * (dim - 1)
          const int64_t period = 2 * (dim - 1);
          c = period == 0 ? 0 : ((c % period) + period) % period;
          if (c >= dim)
            c = period - c;
        }
      }
      source += c * stride;
      stride *= dim;
    }
    if (result.isFloat)
      result.floats.push_back(outside ? getValue().convertToDouble() : values->floats[source]);
    else
      result.ints.push_back(outside ? int64_t(getValue().convertToDouble()) : values->ints[source]);
  }
  return makeElements(type, result);
}

namespace {
/// Calls `line(first, stride)` for every line of `shape` along `axis`: the line's entries are
/// first + k * stride for k < shape[axis].
void forEachLine(ArrayRef<int64_t> shape, int64_t axis,
                 llvm::function_ref<void(int64_t, int64_t)> line) {
  const int64_t inner = product(shape.drop_front(axis + 1)),
                outer = product(shape.take_front(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      line(o * shape[axis] * inner + i, inner);
}

/// Softmax (log = false) or log-softmax of `input` along `axis`, in double.
OpFoldResult foldSoftmax(Attribute input, RankedTensorType type, int64_t axis, bool log) {
  auto x = readValues(input);
  if (!x || !isFoldableSize(type) || axis < 0 || axis >= type.getRank() ||
      (int64_t)x->size() != type.getNumElements())
    return {};
  const int64_t length = type.getDimSize(axis);
  HostValues out;
  out.isFloat = true;
  out.floats.assign(x->size(), 0.0);
  forEachLine(type.getShape(), axis, [&](int64_t first, int64_t stride) {
    double top = -INFINITY, sum = 0;
    for (int64_t k = 0; k < length; ++k)
      top = std::max(top, x->asDouble(first + k * stride));
    for (int64_t k = 0; k < length; ++k)
      sum += std::exp(x->asDouble(first + k * stride) - top);
    for (int64_t k = 0; k < length; ++k) {
      const double shifted = x->asDouble(first + k * stride) - top;
      out.floats[first + k * stride] = log ? shifted - std::log(sum) : std::exp(shifted) / sum;
    }
  });
  return makeElements(type, out);
}
} // namespace

OpFoldResult SoftmaxOp::fold(FoldAdaptor a) {
  return foldSoftmax(a.getInput(), getType(), getAxis(), /*log=*/false);
}

OpFoldResult LogSoftmaxOp::fold(FoldAdaptor a) {
  return foldSoftmax(a.getInput(), getType(), getAxis(), /*log=*/true);
}

OpFoldResult CumulativeOp::fold(FoldAdaptor a) {
  auto x = readValues(a.getInput());
  RankedTensorType type = getType();
  const int64_t axis = getAxis();
  if (!x || !isFoldableSize(type) || axis < 0 || axis >= type.getRank() ||
      (int64_t)x->size() != type.getNumElements())
    return {};
  const int64_t length = type.getDimSize(axis);
  const bool multiply = getKind() == "prod";
  HostValues out;
  out.isFloat = x->isFloat;
  if (out.isFloat)
    out.floats.assign(x->size(), 0.0);
  else
    out.ints.assign(x->size(), 0);
  forEachLine(type.getShape(), axis, [&](int64_t first, int64_t stride) {
    double sum = multiply ? 1 : 0;
    int64_t isum = multiply ? 1 : 0;
    for (int64_t step = 0; step < length; ++step) {
      const int64_t k = getReverse() ? length - 1 - step : step, at = first + k * stride;
      if (out.isFloat) {
        if (getExclusive())
          out.floats[at] = sum;
        sum = multiply ? sum * x->floats[at] : sum + x->floats[at];
        if (!getExclusive())
          out.floats[at] = sum;
      } else {
        if (getExclusive())
          out.ints[at] = isum;
        // Wraps as the kernels do.
        isum = int64_t(multiply ? uint64_t(isum) * uint64_t(x->ints[at])
                               : uint64_t(isum) + uint64_t(x->ints[at]));
        if (!getExclusive())
          out.ints[at] = isum;
      }
    }
  });
  return makeElements(type, out);
}
