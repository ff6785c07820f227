#include "SlicePoints.h"

#include "MaskProbe.h"

#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/GenericPlan.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::passes {

namespace {

/// Points evaluated in one go: the folders refuse tensors above kMaxFoldElements.
constexpr size_t kPointChunk = 1 << 20;

ArrayRef<int64_t> shapeOf(Value v) { return cast<ShapedType>(v.getType()).getShape(); }
Type elementTypeOf(Value v) { return cast<ShapedType>(v.getType()).getElementType(); }

void unflatten(int64_t flat, ArrayRef<int64_t> shape, MutableArrayRef<int64_t> coords) {
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
}

int64_t flatten(ArrayRef<int64_t> coords, ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + coords[d];
  return flat;
}

HostValues pick(const HostValues &from, ArrayRef<int64_t> indices) {
  HostValues out;
  out.isFloat = from.isFloat;
  if (from.isFloat) {
    out.floats.reserve(indices.size());
    for (int64_t i : indices)
      out.floats.push_back(from.floats[i]);
  } else {
    out.ints.reserve(indices.size());
    for (int64_t i : indices)
      out.ints.push_back(from.ints[i]);
  }
  return out;
}

/// Source indices under numpy broadcasting of `points` of `outShape`.
std::vector<int64_t> broadcastPoints(ArrayRef<int64_t> points, ArrayRef<int64_t> outShape,
                                     ArrayRef<int64_t> srcShape) {
  std::vector<int64_t> out;
  out.reserve(points.size());
  for (int64_t p : points)
    out.push_back(broadcastSourceIndex(p, outShape, srcShape));
  return out;
}

} // namespace

struct SlicePointEvaluator::Evaluation {
  llvm::DenseMap<Value, Attribute> bound;
  /// Whole values of this evaluation; a null entry records a value that cannot be folded
  /// whole (too large, or an operand is).
  llvm::DenseMap<Value, Attribute> wholeValues;
  llvm::DenseMap<Value, HostValues> hostValues;
};

std::optional<SlicePointEvaluator> SlicePointEvaluator::build(Value root,
                                                              int64_t wholeElements) {
  std::optional<SliceEvaluator> slice = SliceEvaluator::build(root);
  if (!slice)
    return std::nullopt;
  SlicePointEvaluator eval;
  eval.root = root;
  eval.wholeElements = wholeElements;
  eval.args.assign(slice->arguments().begin(), slice->arguments().end());
  for (Operation *op : slice->operations()) {
    bool free = llvm::all_of(op->getOperands(), [&](Value operand) {
      return !isa<BlockArgument>(operand) && eval.argumentFree.contains(operand);
    });
    if (free)
      for (Value result : op->getResults())
        eval.argumentFree.insert(result);
  }
  eval.scratch = std::make_unique<Block>();
  return eval;
}

Attribute SlicePointEvaluator::whole(Value v, Evaluation &state) {
  if (auto it = state.bound.find(v); it != state.bound.end())
    return it->second;
  bool shared = argumentFree.contains(v);
  auto &memo = shared ? constantWhole : state.wholeValues;
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  Attribute result;
  Operation *op = v.getDefiningOp();
  // Constants and generators (a range: S elements for an [S, S] mask) are read whole at
  // any size the folders take.
  bool generated = op && (op->hasTrait<OpTrait::ConstantLike>() ||
                          isa<RangeOp, ConstantOfShapeOp, ShapeOp>(op));
  if (op && op->getNumResults() == 1 &&
      (generated || cast<ShapedType>(v.getType()).getNumElements() <= wholeElements)) {
    SmallVector<Attribute> operands;
    for (Value operand : op->getOperands()) {
      operands.push_back(whole(operand, state));
      if (!operands.back())
        break;
    }
    SmallVector<OpFoldResult> folded;
    if (operands.size() == op->getNumOperands() &&
        llvm::all_of(operands, [](Attribute a) { return bool(a); }) &&
        succeeded(op->fold(operands, folded)) && folded.size() == 1) {
      if (auto attr = dyn_cast<Attribute>(folded.front()))
        result = attr;
      else
        result = whole(cast<Value>(folded.front()), state);
    }
  }
  // Look the memo up again: the recursion may have grown (and rehashed) it.
  (shared ? constantWhole : state.wholeValues)[v] = result;
  return result;
}

std::optional<HostValues> SlicePointEvaluator::evaluate(ArrayRef<Attribute> argValues,
                                                        ArrayRef<int64_t> points) {
  if (argValues.size() != args.size())
    return std::nullopt;
  Evaluation state;
  for (auto [arg, value] : llvm::zip(args, argValues))
    state.bound[arg] = value;
  HostValues out;
  for (size_t first = 0; first < points.size(); first += kPointChunk) {
    ArrayRef<int64_t> chunk = points.slice(first, std::min(kPointChunk, points.size() - first));
    std::optional<HostValues> part = at(root, chunk, state);
    if (!part || part->size() != chunk.size())
      return std::nullopt;
    out.isFloat = part->isFloat;
    llvm::append_range(out.ints, part->ints);
    llvm::append_range(out.floats, part->floats);
  }
  return out;
}

std::optional<HostValues> SlicePointEvaluator::at(Value v, ArrayRef<int64_t> points,
                                                  Evaluation &state) {
  if (Attribute attr = whole(v, state)) {
    auto it = state.hostValues.find(v);
    if (it == state.hostValues.end()) {
      std::optional<HostValues> values = readValues(attr);
      if (!values)
        return std::nullopt;
      it = state.hostValues.try_emplace(v, std::move(*values)).first;
    }
    return pick(it->second, points);
  }
  Operation *op = v.getDefiningOp();
  if (!op || op->getNumResults() != 1)
    return std::nullopt;
  if (isElementwiseOp(op))
    return elementwiseAt(op, points, state);
  return dataMovementAt(op, points, state);
}

std::optional<HostValues> SlicePointEvaluator::elementwiseAt(Operation *op,
                                                             ArrayRef<int64_t> points,
                                                             Evaluation &state) {
  int64_t count = points.size();
  if (count == 0)
    return HostValues{};
  ArrayRef<int64_t> outShape = shapeOf(op->getResult(0));
  // The op's copy over [count] operands, folded: the folder is the op's semantics. The
  // operands are evaluated first: that may fold other copies on the scratch block.
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    std::vector<int64_t> sources = broadcastPoints(points, outShape, shapeOf(operand));
    std::optional<HostValues> values = at(operand, sources, state);
    if (!values)
      return std::nullopt;
    operands.push_back(
        makeElements(RankedTensorType::get({count}, elementTypeOf(operand)), *values));
  }
  SmallVector<Value> placeholders;
  for (Attribute operand : operands)
    placeholders.push_back(
        scratch->addArgument(cast<TypedAttr>(operand).getType(), op->getLoc()));
  IRMapping mapping;
  for (auto [operand, placeholder] : llvm::zip(op->getOperands(), placeholders))
    mapping.map(operand, placeholder);
  Operation *copy = op->clone(mapping);
  copy->getResult(0).setType(
      RankedTensorType::get({count}, elementTypeOf(op->getResult(0))));
  SmallVector<OpFoldResult> folded;
  Attribute result;
  if (succeeded(copy->fold(operands, folded)) && folded.size() == 1) {
    if (auto attr = dyn_cast<Attribute>(folded.front())) {
      result = attr;
    } else {
      for (auto [placeholder, attr] : llvm::zip(placeholders, operands))
        if (placeholder == cast<Value>(folded.front()))
          result = attr;
    }
  }
  copy->destroy();
  scratch->eraseArguments(0, scratch->getNumArguments());
  if (!result)
    return std::nullopt;
  return readValues(result);
}

std::optional<HostValues> SlicePointEvaluator::dataMovementAt(Operation *op,
                                                              ArrayRef<int64_t> points,
                                                              Evaluation &state) {
  ArrayRef<int64_t> outShape = shapeOf(op->getResult(0));
  size_t rank = outShape.size();
  SmallVector<int64_t> coords(rank);

  // Same row-major order: every point reads the input's element of the same flat index.
  if (isa<ReshapeOp, UnsqueezeOp, SqueezeOp>(op))
    return at(op->getOperand(0), points, state);

  if (auto expand = dyn_cast<ExpandOp>(op))
    return at(expand.getInput(), broadcastPoints(points, outShape, shapeOf(expand.getInput())),
              state);

  // Input coordinates from output coordinates, one point at a time.
  auto remapped = [&](Value input, auto inputCoords) -> std::optional<HostValues> {
    ArrayRef<int64_t> inShape = shapeOf(input);
    SmallVector<int64_t> in(inShape.size());
    std::vector<int64_t> sources;
    sources.reserve(points.size());
    for (int64_t p : points) {
      unflatten(p, outShape, coords);
      inputCoords(coords, in);
      sources.push_back(flatten(in, inShape));
    }
    return at(input, sources, state);
  };

  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    ArrayRef<int64_t> perm = transpose.getPerm();
    return remapped(transpose.getInput(), [&](ArrayRef<int64_t> out, MutableArrayRef<int64_t> in) {
      for (size_t d = 0; d < perm.size(); ++d)
        in[perm[d]] = out[d];
    });
  }

  if (auto slice = dyn_cast<SliceOp>(op)) {
    ArrayRef<int64_t> starts = slice.getStarts(), steps = slice.getSteps();
    return remapped(slice.getInput(), [&](ArrayRef<int64_t> out, MutableArrayRef<int64_t> in) {
      for (size_t d = 0; d < out.size(); ++d)
        in[d] = starts[d] + out[d] * steps[d];
    });
  }

  if (auto trilu = dyn_cast<TriluOp>(op)) {
    if (rank < 2)
      return std::nullopt;
    std::optional<HostValues> values = at(trilu.getInput(), points, state);
    if (!values)
      return std::nullopt;
    int64_t k = trilu.getK(); // I64Attr accessors return uint64_t
    for (size_t n = 0; n < points.size(); ++n) {
      unflatten(points[n], outShape, coords);
      int64_t diagonal = coords[rank - 1] - coords[rank - 2];
      bool keep = trilu.getUpper() ? diagonal >= k : diagonal <= k;
      if (keep)
        continue;
      if (values->isFloat)
        values->floats[n] = 0;
      else
        values->ints[n] = 0;
    }
    return values;
  }

  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t axis = concat.getAxis();
    if (axis < 0 || axis >= (int64_t)rank)
      return std::nullopt;
    // Points grouped by the input holding them, then put back in order.
    size_t inputs = concat.getInputs().size();
    std::vector<std::vector<int64_t>> sources(inputs);
    std::vector<std::pair<size_t, size_t>> origin; // (input, position in its group)
    origin.reserve(points.size());
    for (int64_t p : points) {
      unflatten(p, outShape, coords);
      size_t input = 0;
      while (input < inputs && coords[axis] >= shapeOf(concat.getInputs()[input])[axis])
        coords[axis] -= shapeOf(concat.getInputs()[input++])[axis];
      if (input == inputs)
        return std::nullopt;
      origin.push_back({input, sources[input].size()});
      sources[input].push_back(flatten(coords, shapeOf(concat.getInputs()[input])));
    }
    std::vector<HostValues> parts;
    for (size_t input = 0; input < inputs; ++input) {
      std::optional<HostValues> part = at(concat.getInputs()[input], sources[input], state);
      if (!part)
        return std::nullopt;
      parts.push_back(std::move(*part));
    }
    HostValues out;
    out.isFloat = parts.front().isFloat;
    for (auto [input, position] : origin) {
      if (out.isFloat)
        out.floats.push_back(parts[input].floats[position]);
      else
        out.ints.push_back(parts[input].ints[position]);
    }
    return out;
  }

  if (auto gather = dyn_cast<GatherOp>(op)) {
    // Output coordinates: input[:axis] + indices + input[axis + 1:].
    ArrayRef<int64_t> inShape = shapeOf(gather.getInput()), idxShape = shapeOf(gather.getIndices());
    int64_t axis = gather.getAxis(), idxRank = idxShape.size();
    if (axis < 0 || axis >= (int64_t)inShape.size())
      return std::nullopt;
    std::vector<int64_t> indexPoints;
    indexPoints.reserve(points.size());
    for (int64_t p : points) {
      unflatten(p, outShape, coords);
      indexPoints.push_back(flatten(ArrayRef<int64_t>(coords).slice(axis, idxRank), idxShape));
    }
    std::optional<HostValues> indices = at(gather.getIndices(), indexPoints, state);
    if (!indices || indices->isFloat)
      return std::nullopt;
    SmallVector<int64_t> in(inShape.size());
    std::vector<int64_t> sources;
    sources.reserve(points.size());
    for (size_t n = 0; n < points.size(); ++n) {
      unflatten(points[n], outShape, coords);
      int64_t index = resolveIndex(indices->ints[n], inShape[axis]);
      if (index < 0)
        return std::nullopt;
      for (int64_t d = 0; d < axis; ++d)
        in[d] = coords[d];
      in[axis] = index;
      for (size_t d = axis + 1; d < inShape.size(); ++d)
        in[d] = coords[d - 1 + idxRank];
      sources.push_back(flatten(in, inShape));
    }
    return at(gather.getInput(), sources, state);
  }

  if (auto gather = dyn_cast<GatherNDOp>(op)) {
    // Output coordinates: indices[:-1] + input[b + k:]; the first b are batch dimensions.
    ArrayRef<int64_t> inShape = shapeOf(gather.getInput()), idxShape = shapeOf(gather.getIndices());
    int64_t batchDims = gather.getBatchDims();
    if (idxShape.empty())
      return std::nullopt;
    int64_t tupleSize = idxShape.back(), tupleRank = idxShape.size() - 1;
    if (batchDims < 0 || tupleSize < 1 || batchDims + tupleSize > (int64_t)inShape.size())
      return std::nullopt;
    SmallVector<int64_t> idx(idxShape.size()), in(inShape.size());
    std::vector<int64_t> indexPoints;
    indexPoints.reserve(points.size() * tupleSize);
    for (int64_t p : points) {
      unflatten(p, outShape, coords);
      for (int64_t d = 0; d < tupleRank; ++d)
        idx[d] = coords[d];
      for (int64_t t = 0; t < tupleSize; ++t) {
        idx[tupleRank] = t;
        indexPoints.push_back(flatten(idx, idxShape));
      }
    }
    std::optional<HostValues> tuples = at(gather.getIndices(), indexPoints, state);
    if (!tuples || tuples->isFloat)
      return std::nullopt;
    std::vector<int64_t> sources;
    sources.reserve(points.size());
    for (size_t n = 0; n < points.size(); ++n) {
      unflatten(points[n], outShape, coords);
      for (int64_t d = 0; d < batchDims; ++d)
        in[d] = coords[d];
      for (int64_t t = 0; t < tupleSize; ++t) {
        int64_t index = resolveIndex(tuples->ints[n * tupleSize + t], inShape[batchDims + t]);
        if (index < 0)
          return std::nullopt;
        in[batchDims + t] = index;
      }
      for (size_t d = batchDims + tupleSize; d < inShape.size(); ++d)
        in[d] = coords[tupleRank + d - batchDims - tupleSize];
      sources.push_back(flatten(in, inShape));
    }
    return at(gather.getInput(), sources, state);
  }

  return std::nullopt;
}

} // namespace sinter::passes
