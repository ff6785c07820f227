// Verifiers and shape inference of the ops declared in GraphTensorOps.td.
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace sinter::graph;

namespace {

using Shape = SmallVector<int64_t>;

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleave(shape, os, "x");
  os << "]";
  return text;
}

FailureOr<Shape> fail(std::string &error, const Twine &message) {
  error = message.str();
  return failure();
}

LogicalResult verifyResultShape(Operation *op, ArrayRef<int64_t> expected) {
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  if (result.getShape() != expected)
    return op->emitOpError("result shape ")
           << shapeString(result.getShape()) << " does not match the inferred shape "
           << shapeString(expected);
  return success();
}

/// Checks the inferred shape (or reports the inference error) against the result type.
LogicalResult verifyInferred(Operation *op, const FailureOr<Shape> &shape,
                             const std::string &error) {
  if (failed(shape))
    return op->emitOpError(error);
  return verifyResultShape(op, *shape);
}

LogicalResult verifySameElementType(Operation *op, Type a, Type b, StringRef what) {
  if (getElementTypeOrSelf(a) != getElementTypeOrSelf(b))
    return op->emitOpError() << what << " element types differ: " << getElementTypeOrSelf(a)
                             << " vs " << getElementTypeOrSelf(b);
  return success();
}

LogicalResult verifyDataResult(Operation *op) {
  return verifySameElementType(op, op->getOperand(0).getType(), op->getResult(0).getType(),
                               "input and result");
}

/// Sorted, unique and within [0, bound).
bool isSortedAxes(ArrayRef<int64_t> axes, int64_t bound) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= bound)
      return false;
    if (i > 0 && axes[i] <= axes[i - 1])
      return false;
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Shape queries and generators
//===----------------------------------------------------------------------===//

LogicalResult ShapeOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t start = getStart(), end = getEnd();
  if (start < 0 || end > rank || start > end)
    return emitOpError("needs 0 <= start <= end <= rank (") << rank << "), got start " << start
                                                            << ", end " << end;
  return verifyResultShape(*this, {end - start});
}

LogicalResult ConstantOfShapeOp::verify() {
  auto value = getValue();
  if (value.getNumElements() != 1)
    return emitOpError("value must hold exactly one element, it holds ")
           << value.getNumElements();
  if (value.getElementType() != getType().getElementType())
    return emitOpError("value element type ")
           << value.getElementType() << " differs from the result element type "
           << getType().getElementType();
  auto shape = getShape().getType();
  if (shape.getRank() != 1 || shape.getDimSize(0) != getType().getRank())
    return emitOpError("shape operand must be 1-D with one entry per result dimension (")
           << getType().getRank() << ")";
  return success();
}

LogicalResult RangeOp::verify() {
  for (Value v : {getStart(), getLimit(), getDelta()}) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 0)
      return emitOpError("start, limit and delta must be 0-D tensors");
    if (failed(verifySameElementType(*this, t, getType(), "operand and result")))
      return failure();
  }
  if (getType().getRank() != 1)
    return emitOpError("result must be 1-D");
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

FailureOr<Shape> GatherOp::inferShape(ArrayRef<int64_t> input, ArrayRef<int64_t> indices,
                                      int64_t axis, std::string &error) {
  int64_t rank = input.size();
  if (axis < 0 || axis >= rank)
    return fail(error, "axis " + Twine(axis) + " is out of range for a rank-" + Twine(rank) +
                           " input");
  Shape out(input.begin(), input.begin() + axis);
  out.append(indices.begin(), indices.end());
  out.append(input.begin() + axis + 1, input.end());
  return out;
}

LogicalResult GatherOp::verify() {
  std::string error;
  auto shape = inferShape(getInput().getType().getShape(), getIndices().getType().getShape(),
                          getAxis(), error);
  if (failed(verifyDataResult(*this)))
    return failure();
  return verifyInferred(*this, shape, error);
}

FailureOr<Shape> GatherNDOp::inferShape(ArrayRef<int64_t> input, ArrayRef<int64_t> indices,
                                        int64_t batchDims, std::string &error) {
  int64_t r = input.size(), q = indices.size(), b = batchDims;
  if (q < 1)
    return fail(error, "indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q))
    return fail(error, "batch_dims " + Twine(b) + " must be in [0, min(input rank, indices rank))");
  for (int64_t d = 0; d < b; ++d)
    if (input[d] != indices[d])
      return fail(error, "batch dimension " + Twine(d) + " differs: " + Twine(input[d]) +
                             " vs " + Twine(indices[d]));
  int64_t k = indices.back();
  if (k < 1 || k > r - b)
    return fail(error, "the last indices dimension (" + Twine(k) + ") must be in [1, " +
                           Twine(r - b) + "]");
  Shape out(indices.begin(), indices.end() - 1);
  out.append(input.begin() + b + k, input.end());
  return out;
}

LogicalResult GatherNDOp::verify() {
  std::string error;
  auto shape = inferShape(getInput().getType().getShape(), getIndices().getType().getShape(),
                          getBatchDims(), error);
  if (failed(verifyDataResult(*this)))
    return failure();
  return verifyInferred(*this, shape, error);
}

LogicalResult ScatterNDOp::verify() {
  auto in = getInput().getType(), idx = getIndices().getType(), upd = getUpdates().getType();
  if (failed(verifyDataResult(*this)) ||
      failed(verifySameElementType(*this, in, upd, "input and updates")))
    return failure();
  StringRef r = getReduction();
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    return emitOpError("reduction must be none, add, mul, max or min, not '") << r << "'";
  if (r != "none" && in.getElementType().isInteger(1))
    return emitOpError("cannot combine i1 updates");
  if (idx.getRank() < 1)
    return emitOpError("indices must have rank >= 1");
  int64_t k = idx.getShape().back();
  if (k < 1 || k > in.getRank())
    return emitOpError("the last indices dimension (")
           << k << ") must be in [1, " << in.getRank() << "]";
  Shape expected(idx.getShape().drop_back());
  expected.append(in.getShape().begin() + k, in.getShape().end());
  if (upd.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("updates shape ") << shapeString(upd.getShape()) << " must be "
                                         << shapeString(expected);
  return verifyResultShape(*this, in.getShape());
}

FailureOr<Shape> SliceOp::inferShape(ArrayRef<int64_t> input, ArrayRef<int64_t> starts,
                                     ArrayRef<int64_t> ends, ArrayRef<int64_t> steps,
                                     std::string &error) {
  size_t rank = input.size();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    return fail(error, "starts, ends and steps need one entry per input dimension (" +
                           Twine(rank) + ")");
  Shape out;
  for (size_t d = 0; d < rank; ++d) {
    int64_t dim = input[d], start = starts[d], end = ends[d], step = steps[d];
    if (step == 0)
      return fail(error, "step of dimension " + Twine(d) + " is 0");
    bool ok = step > 0 ? (start >= 0 && start <= dim && end >= 0 && end <= dim)
                       : (start >= 0 && start <= std::max<int64_t>(dim - 1, 0) && end >= -1 &&
                          end <= dim - 1);
    if (!ok)
      return fail(error, "bounds of dimension " + Twine(d) + " (start " + Twine(start) +
                             ", end " + Twine(end) + ", step " + Twine(step) +
                             ") are not normalized for size " + Twine(dim));
    int64_t span = step > 0 ? end - start : start - end;
    int64_t by = step > 0 ? step : -step;
    out.push_back(span <= 0 ? 0 : (span + by - 1) / by);
  }
  return out;
}

LogicalResult SliceOp::verify() {
  std::string error;
  auto shape = inferShape(getInput().getType().getShape(), getStarts(), getEnds(), getSteps(),
                          error);
  if (failed(verifyDataResult(*this)))
    return failure();
  return verifyInferred(*this, shape, error);
}

FailureOr<Shape> ConcatOp::inferShape(ArrayRef<SmallVector<int64_t>> inputs, int64_t axis,
                                      std::string &error) {
  if (inputs.empty())
    return fail(error, "needs at least one input");
  int64_t rank = inputs[0].size();
  if (axis < 0 || axis >= rank)
    return fail(error, "axis " + Twine(axis) + " is out of range for rank-" + Twine(rank) +
                           " inputs");
  Shape out(inputs[0]);
  for (size_t i = 1; i < inputs.size(); ++i) {
    const auto &s = inputs[i];
    if ((int64_t)s.size() != rank)
      return fail(error, "input " + Twine(i) + " has rank " + Twine(s.size()) + ", input 0 has " +
                             Twine(rank));
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      if (s[d] != out[d])
        return fail(error, "input " + Twine(i) + " has size " + Twine(s[d]) + " in dimension " +
                               Twine(d) + ", input 0 has " + Twine(out[d]));
    }
    out[axis] += s[axis];
  }
  return out;
}

LogicalResult ConcatOp::verify() {
  SmallVector<Shape> shapes;
  for (Value v : getInputs()) {
    if (failed(verifySameElementType(*this, v.getType(), getType(), "input and result")))
      return failure();
    shapes.push_back(Shape(cast<RankedTensorType>(v.getType()).getShape()));
  }
  std::string error;
  return verifyInferred(*this, inferShape(shapes, getAxis(), error), error);
}

FailureOr<Shape> UnsqueezeOp::inferShape(ArrayRef<int64_t> input, ArrayRef<int64_t> axes,
                                         std::string &error) {
  int64_t rank = input.size() + axes.size();
  if (!isSortedAxes(axes, rank))
    return fail(error, "axes must be sorted, unique and within [0, " + Twine(rank) + ")");
  Shape out;
  size_t next = 0, a = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (a < axes.size() && axes[a] == d) {
      out.push_back(1);
      ++a;
    } else {
      out.push_back(input[next++]);
    }
  }
  return out;
}

LogicalResult UnsqueezeOp::verify() {
  std::string error;
  auto shape = inferShape(getInput().getType().getShape(), getAxes(), error);
  if (failed(verifyDataResult(*this)))
    return failure();
  return verifyInferred(*this, shape, error);
}

FailureOr<Shape> SqueezeOp::inferShape(ArrayRef<int64_t> input, ArrayRef<int64_t> axes,
                                       std::string &error) {
  int64_t rank = input.size();
  if (!isSortedAxes(axes, rank))
    return fail(error, "axes must be sorted, unique and within [0, " + Twine(rank) + ")");
  Shape out;
  size_t a = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (a < axes.size() && axes[a] == d) {
      if (input[d] != 1)
        return fail(error, "dimension " + Twine(d) + " has size " + Twine(input[d]) +
                               ", not 1");
      ++a;
    } else {
      out.push_back(input[d]);
    }
  }
  return out;
}

LogicalResult SqueezeOp::verify() {
  std::string error;
  auto shape = inferShape(getInput().getType().getShape(), getAxes(), error);
  if (failed(verifyDataResult(*this)))
    return failure();
  return verifyInferred(*this, shape, error);
}

LogicalResult ExpandOp::verify() {
  if (failed(verifyDataResult(*this)))
    return failure();
  auto shapeType = getShape().getType();
  if (shapeType.getRank() != 1)
    return emitOpError("shape operand must be 1-D");
  if (shapeType.getDimSize(0) > getType().getRank())
    return emitOpError("shape operand has more entries than the result has dimensions");
  auto in = getInput().getType().getShape();
  auto out = broadcastShapes(in, getType().getShape());
  if (failed(out) || ArrayRef<int64_t>(*out) != getType().getShape())
    return emitOpError("input shape ") << shapeString(in) << " does not broadcast to the result "
                                       << shapeString(getType().getShape());
  return success();
}

LogicalResult TriluOp::verify() {
  if (getInput().getType().getRank() < 2)
    return emitOpError("input must have rank >= 2");
  if (failed(verifyDataResult(*this)))
    return failure();
  return verifyResultShape(*this, getInput().getType().getShape());
}

//===----------------------------------------------------------------------===//
// Reductions and normalization
//===----------------------------------------------------------------------===//

FailureOr<Shape> ReduceMeanOp::inferShape(ArrayRef<int64_t> input, ArrayRef<int64_t> axes,
                                          bool keepdims, std::string &error) {
  int64_t rank = input.size();
  if (!isSortedAxes(axes, rank))
    return fail(error, "axes must be sorted, unique and within [0, " + Twine(rank) + ")");
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      if (keepdims)
        out.push_back(1);
    } else {
      out.push_back(input[d]);
    }
  }
  return out;
}

LogicalResult ReduceMeanOp::verify() {
  if (!isa<FloatType>(getInput().getType().getElementType()))
    return emitOpError("input must be floating point");
  std::string error;
  auto shape = inferShape(getInput().getType().getShape(), getAxes(), getKeepdims(), error);
  if (failed(verifyDataResult(*this)))
    return failure();
  return verifyInferred(*this, shape, error);
}

LogicalResult SoftmaxOp::verify() {
  int64_t rank = getInput().getType().getRank(), axis = getAxis();
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " is out of range for a rank-" << rank << " input";
  if (failed(verifyDataResult(*this)))
    return failure();
  return verifyResultShape(*this, getInput().getType().getShape());
}

LogicalResult RMSNormalizationOp::verify() {
  auto in = getInput().getType(), scale = getScale().getType();
  int64_t rank = in.getRank(), axis = getAxis();
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " is out of range for a rank-" << rank << " input";
  if (failed(verifySameElementType(*this, scale, getType(), "scale and result")))
    return failure();
  auto b = broadcastShapes(in.getShape(), scale.getShape());
  if (scale.getRank() > rank - axis || failed(b) ||
      ArrayRef<int64_t>(*b) != in.getShape())
    return emitOpError("scale shape ") << shapeString(scale.getShape())
                                       << " does not broadcast to the normalized dimensions of "
                                       << shapeString(in.getShape());
  return verifyResultShape(*this, in.getShape());
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

FailureOr<Shape> AttentionOp::inferShape(ArrayRef<int64_t> q, ArrayRef<int64_t> k,
                                         ArrayRef<int64_t> v,
                                         std::optional<ArrayRef<int64_t>> mask,
                                         int64_t qHeads, int64_t kvHeads, std::string &error) {
  size_t rank = q.size();
  if ((rank != 3 && rank != 4) || k.size() != rank || v.size() != rank)
    return fail(error, "query, key and value must all be 3-D or all 4-D");
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads != 0)
    return fail(error, "q_num_heads (" + Twine(qHeads) + ") must be a positive multiple of "
                           "kv_num_heads (" + Twine(kvHeads) + ")");
  if (k[0] != q[0] || v[0] != q[0])
    return fail(error, "batch sizes of query, key and value differ");
  int64_t batch = q[0], sq, skv, d, dk, dv;
  Shape out;
  if (rank == 4) {
    if (q[1] != qHeads || k[1] != kvHeads || v[1] != kvHeads)
      return fail(error, "head dimensions (" + Twine(q[1]) + ", " + Twine(k[1]) + ", " +
                             Twine(v[1]) + ") do not match q_num_heads " + Twine(qHeads) +
                             " and kv_num_heads " + Twine(kvHeads));
    sq = q[2], skv = k[2], d = q[3], dk = k[3], dv = v[3];
    if (v[2] != skv)
      return fail(error, "key and value sequence lengths differ");
    out = {batch, qHeads, sq, dv};
  } else {
    if (q[2] % qHeads != 0 || k[2] % kvHeads != 0 || v[2] % kvHeads != 0)
      return fail(error, "hidden sizes (" + Twine(q[2]) + ", " + Twine(k[2]) + ", " + Twine(v[2]) +
                             ") are not multiples of the head counts");
    sq = q[1], skv = k[1], d = q[2] / qHeads, dk = k[2] / kvHeads, dv = v[2] / kvHeads;
    if (v[1] != skv)
      return fail(error, "key and value sequence lengths differ");
    out = {batch, sq, qHeads * dv};
  }
  if (d != dk)
    return fail(error, "query and key head sizes differ: " + Twine(d) + " vs " + Twine(dk));
  if (mask) {
    Shape scores = {batch, qHeads, sq, skv};
    auto b = broadcastShapes(*mask, scores);
    if (mask->size() > 4 || failed(b) || ArrayRef<int64_t>(*b) != ArrayRef<int64_t>(scores))
      return fail(error, "mask shape " + shapeString(*mask) + " does not broadcast to " +
                             shapeString(scores));
  }
  return out;
}

LogicalResult AttentionOp::verify() {
  Type et = getQuery().getType().getElementType();
  if (getKey().getType().getElementType() != et || getValue().getType().getElementType() != et ||
      getType().getElementType() != et)
    return emitOpError("query, key, value and result must have one element type");
  std::optional<ArrayRef<int64_t>> mask;
  if (getMask()) {
    Type mt = getMask().getType().getElementType();
    if (!mt.isInteger(1) && mt != et)
      return emitOpError("mask must be i1 or ") << et << ", got " << mt;
    mask = getMask().getType().getShape();
  }
  std::string error;
  auto shape = inferShape(getQuery().getType().getShape(), getKey().getType().getShape(),
                          getValue().getType().getShape(), mask, getQNumHeads(),
                          getKvNumHeads(), error);
  return verifyInferred(*this, shape, error);
}
