// Import of ScatterElements, ReverseSequence and CenterCropPad as ops the graph already has:
// ScatterElements as a ScatterND of whole index tuples, ReverseSequence as a GatherElements of
// computed positions (the lengths may be known only at run time), CenterCropPad as a slice and
// a zero pad, TensorScatter (a KV cache's update) as a GatherElements of the update at each
// cache position's offset from its write index, selected where the offset is the update's.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// An i64 `value` of `shape` built from the iota along `axis`, expanded to `shape`.
Value positionsAlong(NodeImporter &n, ArrayRef<int64_t> shape, int64_t axis) {
  const int64_t rank = shape.size();
  Value line = n.iota(shape[axis], axis, rank);
  auto shapeType = RankedTensorType::get({rank}, n.builder.getI64Type());
  return ExpandOp::create(n.builder, n.loc, n.tensorType(shape, n.builder.getI64Type()), line,
                          n.constant(DenseElementsAttr::get(shapeType, shape)));
}

Value asI64(NodeImporter &n, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getElementType().isInteger(64) && !t.getElementType().isUnsignedInteger())
    return v;
  return CastOp::create(n.builder, n.loc, t.clone(n.builder.getI64Type()), v);
}

/// ScatterElements(data, indices, updates): output = data with, for every position p of
/// indices, output[p with p[axis] = indices[p]] = updates[p] (combined by `reduction`).
LogicalResult importScatterElements(NodeImporter &n) {
  std::string reduction = n.attrString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
      reduction != "min")
    return n.fail("attribute 'reduction' = '" + reduction + "' (none, add, mul, max or min)");
  auto data = n.inputType(0), indices = n.inputType(1), updates = n.inputType(2);
  if (!data || !indices || !updates)
    return failure();
  auto indexType = dyn_cast<IntegerType>(indices.getElementType());
  if (!indexType || (indexType.getWidth() != 32 && indexType.getWidth() != 64))
    return n.fail("indices must be int32 or int64");
  const int64_t rank = data.getRank();
  if (rank == 0 || indices.getRank() != rank || updates.getShape() != indices.getShape() ||
      updates.getElementType() != data.getElementType())
    return n.fail("indices and updates must have data's rank and one shape, updates data's "
                  "type");
  auto axis = normalizeAxis(n, n.attrInt("axis", 0), rank, "axis");
  if (failed(axis))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && indices.getDimSize(d) > data.getDimSize(d))
      return n.fail("indices dimension " + Twine(d) + " (" + Twine(indices.getDimSize(d)) +
                    ") exceeds data's (" + Twine(data.getDimSize(d)) + ")");
  if (reduction != "none" && data.getElementType().isInteger(1))
    return n.fail("attribute 'reduction' = '" + reduction + "' cannot combine bool updates");
  ArrayRef<int64_t> shape = indices.getShape();
  // Whole rows scattered along axis 0 (torch's index_add_ / index_copy_ exports: the row index
  // expanded over the row): one ScatterND tuple per row instead of one per element, so the
  // generated kernel scans rows, not elements, for each output element.
  if (auto expand = n.input(1)->getDefiningOp<ExpandOp>(); expand && *axis == 0) {
    auto source = cast<RankedTensorType>(expand.getInput().getType());
    bool rowIndex = source.getRank() == rank && source.getDimSize(0) == shape[0];
    for (int64_t d = 1; d < rank && rowIndex; ++d)
      rowIndex = source.getDimSize(d) == 1 && shape[d] == data.getDimSize(d);
    if (rowIndex) {
      Value rows = n.reshape(asI64(n, expand.getInput()), {shape[0], 1});
      return n.setResult(ScatterNDOp::create(n.builder, n.loc, data, *n.input(0), rows, *n.input(2),
                                             n.builder.getStringAttr(reduction)));
    }
  }
  SmallVector<int64_t> column(shape);
  column.push_back(1);
  SmallVector<Value> parts;
  for (int64_t d = 0; d < rank; ++d) {
    Value part = d == *axis ? asI64(n, *n.input(1)) : positionsAlong(n, shape, d);
    parts.push_back(n.reshape(part, column));
  }
  SmallVector<int64_t> tupleShape(shape);
  tupleShape.push_back(rank);
  Value tuples = ConcatOp::create(n.builder, n.loc, n.tensorType(tupleShape, n.builder.getI64Type()),
                                  parts, n.builder.getI64IntegerAttr(rank));
  return n.setResult(ScatterNDOp::create(n.builder, n.loc, data, *n.input(0), tuples,
                                         *n.input(2), n.builder.getStringAttr(reduction)));
}

/// ReverseSequence(input, sequence_lens): along time_axis, the first sequence_lens[b]
/// entries of batch entry b reversed, the rest kept.
LogicalResult importReverseSequence(NodeImporter &n) {
  auto in = n.inputType(0), lengths = n.inputType(1);
  if (!in || !lengths)
    return failure();
  if (in.getRank() < 2)
    return n.fail("input must have rank >= 2");
  const int64_t timeAxis = n.attrInt("time_axis", 0), batchAxis = n.attrInt("batch_axis", 1);
  if (!((timeAxis == 0 && batchAxis == 1) || (timeAxis == 1 && batchAxis == 0)))
    return n.fail("attributes time_axis = " + Twine(timeAxis) + ", batch_axis = " +
                  Twine(batchAxis) + " (0 and 1, one each)");
  const int64_t batch = in.getDimSize(batchAxis);
  if (lengths.getShape() != ArrayRef<int64_t>{batch} ||
      !isa<IntegerType>(lengths.getElementType()) || lengths.getElementType().isInteger(1))
    return n.fail("sequence_lens must be integers of shape [" + Twine(batch) + "]");
  ArrayRef<int64_t> shape = in.getShape();
  const int64_t rank = shape.size();
  Type i64 = n.builder.getI64Type(), i1 = n.builder.getI1Type();
  // length[b] laid along the batch axis, t along the time axis: position = t < length ?
  // length - 1 - t : t.
  SmallVector<int64_t> lengthShape(rank, 1);
  lengthShape[batchAxis] = batch;
  Value length = n.reshape(asI64(n, *n.input(1)), lengthShape);
  // A length past the time axis (invalid) reverses the whole axis instead of reading past it.
  length = BinaryFnOp::create(n.builder, n.loc, n.tensorType(lengthShape, i64), length,
                              n.integerScalar(i64, shape[timeAxis]),
                              n.builder.getStringAttr("min"));
  Value t = positionsAlong(n, shape, timeAxis);
  auto wide = n.tensorType(shape, i64);
  Value inside = BinaryFnOp::create(n.builder, n.loc, n.tensorType(shape, i1), t, length,
                                    n.builder.getStringAttr("less"));
  Value one = n.integerScalar(i64, 1);
  Value mirrored = SubOp::create(n.builder, n.loc, wide,
                                 SubOp::create(n.builder, n.loc, n.tensorType(lengthShape, i64),
                                               length, one),
                                 t);
  Value position = WhereOp::create(n.builder, n.loc, wide, inside, mirrored, t);
  return n.setResult(GatherElementsOp::create(n.builder, n.loc, in, *n.input(0), position,
                                              n.builder.getI64IntegerAttr(timeAxis)));
}

/// CenterCropPad(input, shape): each named axis cropped to (or zero-padded to) its target,
/// centred; an odd difference leaves the extra entry at the end.
LogicalResult importCenterCropPad(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  auto target = n.constantInts(1);
  if (failed(target))
    return failure();
  const int64_t rank = in.getRank();
  SmallVector<int64_t> axes;
  if (auto given = n.attrInts("axes")) {
    auto normalized = normalizeAxes(n, *given, rank, "axes");
    if (failed(normalized))
      return failure();
    axes.assign(given->begin(), given->end()); // in the node's order, paired with shape
    for (int64_t &a : axes)
      a = a < 0 ? a + rank : a;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (target->size() != axes.size())
    return n.fail("shape has " + Twine(target->size()) + " entries for " + Twine(axes.size()) +
                  " axes");
  SmallVector<int64_t> starts(rank, 0), ends(in.getShape()), steps(rank, 1), before(rank, 0),
      after(rank, 0);
  SmallVector<int64_t> cropped(in.getShape()), out(in.getShape());
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i], dim = in.getDimSize(a), want = (*target)[i];
    if (want < 0 || want > kMaxElements)
      return n.fail("shape entry " + Twine(want) + " is out of range");
    if (want < dim) {
      starts[a] = (dim - want) / 2;
      ends[a] = starts[a] + want;
      cropped[a] = want;
    } else {
      before[a] = (want - dim) / 2;
      after[a] = want - dim - before[a];
    }
    out[a] = want;
  }
  if (std::string problem = shapeProblem(out); !problem.empty())
    return n.fail("the output has " + problem);
  Value v = *n.input(0);
  Type et = in.getElementType();
  if (cropped != SmallVector<int64_t>(in.getShape()))
    v = SliceOp::create(n.builder, n.loc, n.tensorType(cropped, et), v,
                        n.builder.getDenseI64ArrayAttr(starts), n.builder.getDenseI64ArrayAttr(ends),
                        n.builder.getDenseI64ArrayAttr(steps));
  if (out != cropped)
    v = PadOp::create(n.builder, n.loc, n.tensorType(out, et), v,
                      n.builder.getDenseI64ArrayAttr(before), n.builder.getDenseI64ArrayAttr(after),
                      n.builder.getStringAttr("constant"), n.builder.getF64FloatAttr(0.0));
  return n.setOutput(0, v);
}

} // namespace

/// TensorScatter(past_cache, update, write_indices): past_cache with batch entry b's update
/// written along `axis` from write_indices[b] on (circular: modulo the axis's length). Each
/// cache position reads update at its offset from the write index where that offset is one of
/// update's, and keeps the cache's value elsewhere; the indices may be known only at run time.
LogicalResult importTensorScatter(NodeImporter &n) {
  const std::string mode = n.attrString("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return n.fail("attribute 'mode' = '" + mode + "' (linear or circular)");
  auto past = n.inputType(0), update = n.inputType(1);
  if (!past || !update)
    return failure();
  const int64_t rank = past.getRank();
  if (rank < 2 || update.getRank() != rank || update.getElementType() != past.getElementType())
    return n.fail("past_cache and update must have one rank (at least 2) and one element type");
  auto axis = normalizeAxis(n, n.attrInt("axis", -2), rank, "axis");
  if (failed(axis))
    return failure();
  if (*axis == 0)
    return n.fail("attribute 'axis' must not be 0, the batch axis write_indices index");
  for (int64_t d = 0; d < rank; ++d)
    if (d == *axis ? update.getDimSize(d) > past.getDimSize(d)
                   : update.getDimSize(d) != past.getDimSize(d))
      return n.fail("update " + shapeText(update.getShape()) + " does not fit past_cache " +
                    shapeText(past.getShape()) + " along axis " + Twine(*axis));
  ArrayRef<int64_t> shape = past.getShape();
  const int64_t batch = shape[0], capacity = shape[*axis], length = update.getDimSize(*axis);
  Type i64 = n.builder.getI64Type(), i1 = n.builder.getI1Type();
  Value start = n.integerScalar(i64, 0);
  if (n.hasInput(2)) {
    auto indices = n.inputType(2);
    if (!indices)
      return failure();
    if (indices.getShape() != ArrayRef<int64_t>{batch} ||
        !isa<IntegerType>(indices.getElementType()) || indices.getElementType().isInteger(1))
      return n.fail("write_indices must be integers of shape [" + Twine(batch) + "]");
    SmallVector<int64_t> startShape(rank, 1);
    startShape[0] = batch;
    start = n.reshape(asI64(n, *n.input(2)), startShape);
  }
  auto wide = n.tensorType(shape, i64), flags = n.tensorType(shape, i1);
  Value offset = SubOp::create(n.builder, n.loc, wide, positionsAlong(n, shape, *axis), start);
  if (mode == "circular")
    offset = BinaryFnOp::create(n.builder, n.loc, wide, offset, n.integerScalar(i64, capacity),
                                n.builder.getStringAttr("mod"));
  Value written = AndOp::create(
      n.builder, n.loc, flags,
      BinaryFnOp::create(n.builder, n.loc, flags, offset, n.integerScalar(i64, 0),
                         n.builder.getStringAttr("greater_or_equal")),
      BinaryFnOp::create(n.builder, n.loc, flags, offset, n.integerScalar(i64, length),
                         n.builder.getStringAttr("less")));
  Value source = WhereOp::create(n.builder, n.loc, wide, written, offset, n.integerScalar(i64, 0));
  Value gathered = GatherElementsOp::create(n.builder, n.loc, past, *n.input(1), source,
                                            n.builder.getI64IntegerAttr(*axis));
  return n.setResult(WhereOp::create(n.builder, n.loc, past, written, gathered, *n.input(0)));
}

void registerIndexingImports(OpImportRegistry &r) {
  r["ScatterElements"] = {importScatterElements, 13};
  r["ReverseSequence"] = {importReverseSequence, 10};
  r["CenterCropPad"] = {importCenterCropPad, 18};
  r["TensorScatter"] = {importTensorScatter, 24};
}

} // namespace sinter::import
