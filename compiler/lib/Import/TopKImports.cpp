// Import of TopK for a small compile-time k (a mixture-of-experts router's 2 of 8, a sampler's
// few candidates) as k rounds of arg-reduction: each round takes the first largest (or
// smallest) entry not yet taken along the axis, its index and its value, and marks it taken.
// Ties go to the lower index, as ONNX orders them; an entry equal to the type's lowest value
// is still told apart from the taken ones (a second arg-reduction finds the first free one).
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <cmath>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// k rounds unroll into the graph: beyond this, a sort would be needed.
constexpr int64_t kMaxTopK = 64;

LogicalResult importTopK(NodeImporter &n) {
  auto x = n.inputType(0);
  if (!x)
    return failure();
  Type et = x.getElementType();
  if (et.isInteger(1) || (!isa<FloatType>(et) && !isa<IntegerType>(et)))
    return n.fail("input X must be a number type");
  if (x.getRank() < 1)
    return n.fail("input X must have at least one dimension");
  auto ks = n.constantInts(1);
  if (failed(ks))
    return failure();
  if (ks->size() != 1)
    return n.fail("K must hold one value");
  auto axis = normalizeAxis(n, n.attrInt("axis", -1), x.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  const int64_t k = (*ks)[0], dim = x.getDimSize(*axis);
  if (k < 1 || k > dim || k > kMaxTopK)
    return n.fail("K = " + Twine(k) + " must be 1 to the axis size " + Twine(dim) +
                  " and at most " + Twine(kMaxTopK) + " (TopK unrolls into k arg-reductions)");
  const bool largest = n.attrInt("largest", 1) != 0;
  (void)n.attrInt("sorted", 1); // the rounds give the sorted order, which any order allows
  if (dim > (1 << 24))
    return n.fail("the axis has " + Twine(dim) + " entries; at most 2^24");

  const int64_t rank = x.getRank();
  Type i1 = n.builder.getI1Type(), i32 = n.builder.getI32Type(), i64 = n.builder.getI64Type();
  auto full = [&](Type t) { return x.clone(t); };
  SmallVector<int64_t> keptShape(x.getShape());
  keptShape[*axis] = 1;
  auto kept = [&](Type t) { return n.tensorType(keptShape, t); };
  auto scalar = [&](Attribute v, Type t) {
    return n.constant(DenseElementsAttr::get(RankedTensorType::get({}, t), v));
  };
  // The value no entry beats: -inf / +inf, or the integer type's extreme (0 and all ones for
  // unsigned types, whose kernels compare unsigned).
  Attribute worst;
  if (auto ft = dyn_cast<FloatType>(et)) {
    worst = n.builder.getFloatAttr(et, largest ? -INFINITY : INFINITY);
  } else {
    const unsigned bits = et.getIntOrFloatBitWidth();
    if (et.isUnsignedInteger())
      worst = n.builder.getIntegerAttr(et, largest ? APInt::getMinValue(bits)
                                                   : APInt::getMaxValue(bits));
    else
      worst = n.builder.getIntegerAttr(et, largest ? APInt::getSignedMinValue(bits)
                                                   : APInt::getSignedMaxValue(bits));
  }
  Value worstValue = scalar(worst, et);
  Value iota = n.iota(dim, *axis, rank);
  Value zero32 = scalar(n.builder.getI32IntegerAttr(0), i32);
  Value taken = n.constant(DenseElementsAttr::get(full(i1), n.builder.getBoolAttr(false)));
  StringRef kind = largest ? "max" : "min";
  auto argReduce = [&](Value v, StringRef how) -> Value {
    return ArgReduceOp::create(n.builder, n.loc, kept(i64), v, n.builder.getStringAttr(how),
                               n.builder.getI64IntegerAttr(*axis), n.builder.getBoolAttr(true),
                               n.builder.getBoolAttr(false));
  };
  auto reduce = [&](Value v, StringRef how, Type t) -> Value {
    return ReduceOp::create(n.builder, n.loc, kept(t), v, n.builder.getStringAttr(how),
                            n.builder.getDenseI64ArrayAttr({*axis}), n.builder.getBoolAttr(true));
  };
  auto binary = [&](StringRef fn, Value a, Value b, Type t) -> Value {
    auto shape = broadcastShapes(cast<RankedTensorType>(a.getType()).getShape(),
                                 cast<RankedTensorType>(b.getType()).getShape());
    return BinaryFnOp::create(n.builder, n.loc, n.tensorType(*shape, t), a, b,
                              n.builder.getStringAttr(fn));
  };
  auto hitsAt = [&](Value index) -> Value {
    return EqualOp::create(n.builder, n.loc, full(i1), iota, index);
  };
  SmallVector<Value> values, indices;
  for (int64_t round = 0; round < k; ++round) {
    Value masked = WhereOp::create(n.builder, n.loc, x, taken, worstValue, *n.input(0));
    Value best = argReduce(masked, kind);
    // Only the worst value is left untaken: `best` may name a taken entry; take the first free.
    Value bestTaken = reduce(CastOp::create(n.builder, n.loc, full(i32),
                                            AndOp::create(n.builder, n.loc, full(i1), taken,
                                                          hitsAt(best))),
                             "max", i32);
    Value free = CastOp::create(
        n.builder, n.loc, full(i32),
        UnaryFnOp::create(n.builder, n.loc, full(i1), taken, n.builder.getStringAttr("not"),
                          n.builder.getF32FloatAttr(0), n.builder.getF32FloatAttr(0)));
    Value index = WhereOp::create(n.builder, n.loc, kept(i64),
                                  binary("greater", bestTaken, zero32, i1), argReduce(free, "max"),
                                  best);
    Value hit = hitsAt(index);
    values.push_back(
        reduce(WhereOp::create(n.builder, n.loc, x, hit, *n.input(0), worstValue), kind, et));
    indices.push_back(index);
    taken = binary("or", taken, hit, i1);
  }
  SmallVector<int64_t> outShape(x.getShape());
  outShape[*axis] = k;
  auto concat = [&](ArrayRef<Value> parts, Type t) -> Value {
    if (parts.size() == 1)
      return parts[0];
    return ConcatOp::create(n.builder, n.loc, n.tensorType(outShape, t), parts,
                            n.builder.getI64IntegerAttr(*axis));
  };
  if (failed(n.setOutput(0, concat(values, et))))
    return failure();
  return n.node.output_size() > 1 && !n.node.output(1).empty()
             ? n.setOutput(1, concat(indices, i64))
             : success();
}

} // namespace

void registerTopKImports(OpImportRegistry &r) { r["TopK"] = {importTopK, 11}; }

} // namespace sinter::import
