// Import of the ops that only move entries between the channel and spatial dimensions
// (SpaceToDepth, DepthToSpace: a reshape, a transpose, a reshape) and of the ops that build a
// one-hot tensor (OneHot from indices, Hardmax from the largest entry's index).
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

Value transpose(NodeImporter &n, Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm) shape.push_back(type.getDimSize(p));
  return TransposeOp::create(n.builder, n.loc, type.clone(shape), v,
                             n.builder.getDenseI64ArrayAttr(perm));
}

/// X [N, C, H, W] and the blocksize attribute of SpaceToDepth / DepthToSpace.
struct Blocks {
  int64_t N, C, H, W, b;
};

FailureOr<Blocks> blocks(NodeImporter &n) {
  auto x = n.inputType(0);
  if (!x)
    return failure();
  if (x.getRank() != 4)
    return n.fail("input must be [N, C, H, W], got [" + shapeText(x.getShape()) + "]");
  if (!n.attr("blocksize"))
    return n.fail("attribute 'blocksize' is required");
  const int64_t b = n.attrInt("blocksize", 0);
  if (b < 1 || b > (1 << 20))
    return n.fail("attribute 'blocksize' = " + Twine(b) + " must be 1 to 2^20");
  return Blocks{x.getDimSize(0), x.getDimSize(1), x.getDimSize(2), x.getDimSize(3), b};
}

LogicalResult importSpaceToDepth(NodeImporter &n) {
  auto g = blocks(n);
  if (failed(g))
    return failure();
  const auto [N, C, H, W, b] = *g;
  if (H % b != 0 || W % b != 0)
    return n.fail("blocksize " + Twine(b) + " does not divide H " + Twine(H) + " and W " +
                  Twine(W));
  const std::string mode = n.attrString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD")
    return n.fail("attribute 'mode' = '" + mode + "' (DCR or CRD)");
  // DCR: the block offset is the outer part of the output channel; CRD: the inner.
  Value v = n.reshape(*n.input(0), {N, C, H / b, b, W / b, b});
  v = mode == "DCR" ? transpose(n, v, {0, 3, 5, 1, 2, 4}) : transpose(n, v, {0, 1, 3, 5, 2, 4});
  return n.setOutput(0, n.reshape(v, {N, C * b * b, H / b, W / b}));
}

LogicalResult importDepthToSpace(NodeImporter &n) {
  auto g = blocks(n);
  if (failed(g))
    return failure();
  const auto [N, C, H, W, b] = *g;
  const std::string mode = n.attrString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD")
    return n.fail("attribute 'mode' = '" + mode + "' (DCR or CRD)");
  const int64_t bb = b * b;
  if (C % bb != 0)
    return n.fail("blocksize^2 = " + Twine(bb) + " does not divide the " + Twine(C) +
                  " channels");
  Value v;
  if (mode == "DCR") {
    v = n.reshape(*n.input(0), {N, b, b, C / bb, H, W});
    v = transpose(n, v, {0, 3, 4, 1, 5, 2});
  } else {
    v = n.reshape(*n.input(0), {N, C / bb, b, b, H, W});
    v = transpose(n, v, {0, 1, 4, 2, 5, 3});
  }
  return n.setOutput(0, n.reshape(v, {N, C / bb, H * b, W * b}));
}

LogicalResult importOneHot(NodeImporter &n) {
  auto indices = n.inputType(0), values = n.inputType(2);
  if (!indices || !values)
    return failure();
  auto depthValues = n.constantInput(1);
  if (!depthValues || depthValues.getNumElements() != 1)
    return n.fail("depth must be a one-element compile-time constant");
  double depthValue = isa<FloatType>(depthValues.getElementType())
                          ? (*depthValues.getValues<APFloat>().begin()).convertToDouble()
                          : double((*depthValues.getValues<APInt>().begin()).getSExtValue());
  const int64_t depth = int64_t(depthValue);
  if (depth < 1 || depth > (1 << 24))
    return n.fail("depth " + Twine(depth) + " must be 1 to 2^24");
  if (indices.getNumElements() > (int64_t(1) << 30) / depth)
    return n.fail("the one-hot output would hold more than 2^30 entries");
  if (values.getNumElements() != 2 || values.getRank() != 1)
    return n.fail("values must be [off_value, on_value]");
  const int64_t rank = indices.getRank() + 1;
  auto axis = normalizeAxis(n, n.attrInt("axis", -1), rank, "attribute 'axis'");
  if (failed(axis))
    return failure();
  Type i64 = n.builder.getI64Type();
  // Indices of any numeric type, negative ones counted from depth, one new axis at `axis`.
  Value idx = *n.input(0);
  if (indices.getElementType() != i64)
    idx = CastOp::create(n.builder, n.loc, indices.clone(i64), idx);
  auto scalar = RankedTensorType::get({}, i64);
  Value zero = n.constant(DenseElementsAttr::get(scalar, n.builder.getI64IntegerAttr(0)));
  Value depthConst = n.constant(DenseElementsAttr::get(scalar, n.builder.getI64IntegerAttr(depth)));
  auto i1 = indices.clone(n.builder.getI1Type());
  Value negative = BinaryFnOp::create(n.builder, n.loc, i1, idx, zero,
                                      n.builder.getStringAttr("less"));
  idx = WhereOp::create(n.builder, n.loc, indices.clone(i64), negative,
                        AddOp::create(n.builder, n.loc, indices.clone(i64), idx, depthConst), idx);
  SmallVector<int64_t> expanded(indices.getShape());
  expanded.insert(expanded.begin() + *axis, 1);
  SmallVector<int64_t> outShape(indices.getShape());
  outShape.insert(outShape.begin() + *axis, depth);
  Value hot = EqualOp::create(n.builder, n.loc, n.tensorType(outShape, n.builder.getI1Type()),
                              n.reshape(idx, expanded), n.iota(depth, *axis, rank));
  Type et = values.getElementType();
  auto pick = [&](int64_t i) -> Value {
    return SliceOp::create(n.builder, n.loc, n.tensorType({1}, et), *n.input(2),
                           n.builder.getDenseI64ArrayAttr({i}),
                           n.builder.getDenseI64ArrayAttr({i + 1}),
                           n.builder.getDenseI64ArrayAttr({1}));
  };
  Value off = pick(0), on = pick(1);
  return n.setOutput(0, WhereOp::create(n.builder, n.loc, n.tensorType(outShape, et), hot, on, off));
}

LogicalResult importHardmax(NodeImporter &n) {
  auto x = n.inputType(0);
  if (!x || failed(requireFloat(n, x, "input")))
    return failure();
  if (x.getRank() < 1)
    return n.fail("input must have at least one dimension");
  auto axis = normalizeAxis(n, n.attrInt("axis", -1), x.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  if (x.getDimSize(*axis) > (1 << 24))
    return n.fail("the axis has " + Twine(x.getDimSize(*axis)) + " entries; at most 2^24");
  SmallVector<int64_t> kept(x.getShape());
  kept[*axis] = 1;
  Value first = ArgReduceOp::create(n.builder, n.loc, n.tensorType(kept, n.builder.getI64Type()),
                                    *n.input(0), n.builder.getStringAttr("max"),
                                    n.builder.getI64IntegerAttr(*axis), n.builder.getBoolAttr(true),
                                    n.builder.getBoolAttr(false));
  Value hot = EqualOp::create(n.builder, n.loc, x.clone(n.builder.getI1Type()), first,
                              n.iota(x.getDimSize(*axis), *axis, x.getRank()));
  return n.setOutput(0, CastOp::create(n.builder, n.loc, x, hot));
}

} // namespace

void registerLayoutImports(OpImportRegistry &r) {
  r["SpaceToDepth"] = {importSpaceToDepth, 13};
  r["DepthToSpace"] = {importDepthToSpace, 13};
  r["OneHot"] = {importOneHot, 11};
  r["Hardmax"] = {importHardmax, 13};
}

} // namespace sinter::import
