// Import of the inverses of pooling and im2col: MaxUnpool (each value scattered to the flat
// position its MaxPool index names, zeros elsewhere) and Col2Im (the sliding blocks of a
// [N, C * kernel, blocks] matrix summed back into an image: for each kernel offset, a
// compile-time table names the block each image position receives, and the offsets' gathers
// add up, as ConvTranspose's import does).
#include "NodeImporter.h"
#include "SlidingWindow.h"
#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// The most entries a MaxUnpool output or a Col2Im table may hold.
constexpr int64_t kMaxEntries = int64_t(1) << 28;

/// MaxUnpool(X, I, output_shape?): zeros of the shape MaxPool was given ((in - 1) * stride -
/// pads + kernel per spatial dimension), X's values at the flat positions I names, then that
/// padded with zeros up to output_shape.
LogicalResult importMaxUnpool(NodeImporter &n) {
  auto x = n.inputType(0), indices = n.inputType(1);
  if (!x || !indices)
    return failure();
  const int64_t rank = x.getRank(), spatial = rank - 2;
  if (rank < 3 || indices.getShape() != x.getShape() || !indices.getElementType().isInteger(64))
    return n.fail("X must have rank >= 3 and I be int64 of X's shape; got X " +
                  shapeText(x.getShape()) + ", I " + shapeText(indices.getShape()));
  auto kernel = n.attrInts("kernel_shape");
  if (!kernel || int64_t(kernel->size()) != spatial)
    return n.fail("attribute 'kernel_shape' must give " + Twine(spatial) + " sizes");
  auto strides = spatialAttribute(n, "strides", 1, spatial, spatial);
  auto pads = spatialAttribute(n, "pads", 0, 2 * spatial, spatial);
  if (failed(strides) || failed(pads))
    return failure();
  SmallVector<int64_t> inferred{x.getDimSize(0), x.getDimSize(1)};
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t size = (x.getDimSize(2 + d) - 1) * (*strides)[d] -
                         ((*pads)[d] + (*pads)[spatial + d]) + (*kernel)[d];
    if ((*kernel)[d] < 1 || (*strides)[d] < 1 || size < 1 || size > kMaxEntries)
      return n.fail("the unpooled size along dimension " + Twine(2 + d) + " is " + Twine(size));
    inferred.push_back(size);
  }
  SmallVector<int64_t> outShape(inferred);
  if (n.hasInput(2)) {
    auto given = n.constantInts(2);
    if (failed(given))
      return failure();
    if (int64_t(given->size()) != rank)
      return n.fail("output_shape must have " + Twine(rank) + " entries");
    for (int64_t d = 0; d < rank; ++d)
      if ((*given)[d] < inferred[d] || (d < 2 && (*given)[d] != inferred[d]))
        return n.fail("output_shape " + shapeText(*given) + " is smaller than the unpooled " +
                      shapeText(inferred) + " or changes its batch or channels");
    outShape.assign(given->begin(), given->end());
  }
  int64_t total = 1;
  for (int64_t size : inferred) {
    if (total > kMaxEntries / size)
      return n.fail("the unpooled output " + shapeText(inferred) + " exceeds 2^28 entries");
    total *= size;
  }
  const int64_t count = x.getNumElements();
  Type et = x.getElementType();
  HostValues zeros;
  zeros.isFloat = isa<FloatType>(et);
  if (zeros.isFloat)
    zeros.floats.assign(total, 0.0);
  else
    zeros.ints.assign(total, 0);
  Value flat = n.constant(makeElements(n.tensorType({total}, et), zeros));
  Value scattered = ScatterNDOp::create(
      n.builder, n.loc, n.tensorType({total}, et), flat, n.reshape(*n.input(1), {count, 1}),
      n.reshape(*n.input(0), {count}), n.builder.getStringAttr("none"));
  Value y = n.reshape(scattered, inferred);
  if (outShape != inferred) {
    SmallVector<int64_t> before(rank, 0), after(rank, 0);
    for (int64_t d = 0; d < rank; ++d)
      after[d] = outShape[d] - inferred[d];
    y = PadOp::create(n.builder, n.loc, n.tensorType(outShape, et), y,
                      n.builder.getDenseI64ArrayAttr(before), n.builder.getDenseI64ArrayAttr(after),
                      n.builder.getStringAttr("constant"), n.builder.getF64FloatAttr(0.0));
  }
  return n.setOutput(0, y);
}

/// Col2Im(input [N, C * prod(block), L], image_shape, block_shape): image [N, C, image...]
/// where each entry sums the block entries that cover it. Kernel offset k and image position p
/// read block l when p = l * stride - pad + k * dilation along every dimension; a table [K, P]
/// of those l (L, an appended zero, where none does) gathers all offsets at once and a sum over
/// the offsets finishes.
LogicalResult importCol2Im(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  auto image = n.constantInts(1);
  auto block = succeeded(image) ? n.constantInts(2) : FailureOr<SmallVector<int64_t>>(failure());
  if (failed(block))
    return failure();
  const int64_t dims = image->size();
  if (in.getRank() != 3 || dims < 1 || int64_t(block->size()) != dims)
    return n.fail("input must be [N, C * prod(block_shape), L] and image_shape and block_shape "
                  "one size per spatial dimension");
  auto strides = spatialAttribute(n, "strides", 1, dims, dims);
  auto dilations = spatialAttribute(n, "dilations", 1, dims, dims);
  auto pads = spatialAttribute(n, "pads", 0, 2 * dims, dims);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  int64_t kernelVolume = 1, imageVolume = 1, blocks = 1;
  SmallVector<int64_t> blocksAlong(dims);
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t size = (*image)[d], k = (*block)[d], s = (*strides)[d], dil = (*dilations)[d];
    if (size < 1 || k < 1 || s < 1 || dil < 1 || size > kMaxEntries || k > kMaxEntries)
      return n.fail("image_shape, block_shape, strides and dilations must be positive (and "
                    "below 2^28)");
    blocksAlong[d] = (size + (*pads)[d] + (*pads)[dims + d] - dil * (k - 1) - 1) / s + 1;
    if (blocksAlong[d] < 1)
      return n.fail("no block fits image dimension " + Twine(d) + " (" + Twine(size) + ")");
    kernelVolume *= k;
    imageVolume *= size;
    blocks *= blocksAlong[d];
    if (kernelVolume > kMaxEntries || imageVolume > kMaxEntries ||
        kernelVolume * imageVolume > kMaxEntries)
      return n.fail("the Col2Im table would hold more than 2^28 entries");
  }
  const int64_t batch = in.getDimSize(0), rows = in.getDimSize(1);
  if (rows % kernelVolume != 0 || in.getDimSize(2) != blocks)
    return n.fail("input " + shapeText(in.getShape()) + " must be [N, C * " + Twine(kernelVolume) +
                  ", " + Twine(blocks) + "] for these image and block shapes");
  const int64_t channels = rows / kernelVolume;
  std::vector<int64_t> table(kernelVolume * imageVolume, blocks);
  SmallVector<int64_t> k(dims), p(dims);
  for (int64_t kf = 0; kf < kernelVolume; ++kf) {
    for (int64_t rest = kf, d = dims - 1; d >= 0; --d)
      k[d] = rest % (*block)[d], rest /= (*block)[d];
    for (int64_t pf = 0; pf < imageVolume; ++pf) {
      for (int64_t rest = pf, d = dims - 1; d >= 0; --d)
        p[d] = rest % (*image)[d], rest /= (*image)[d];
      int64_t l = 0;
      bool hit = true;
      for (int64_t d = 0; d < dims && hit; ++d) {
        const int64_t offset = p[d] + (*pads)[d] - k[d] * (*dilations)[d];
        hit = offset >= 0 && offset % (*strides)[d] == 0 && offset / (*strides)[d] < blocksAlong[d];
        l = l * blocksAlong[d] + offset / std::max<int64_t>((*strides)[d], 1);
      }
      if (hit)
        table[kf * imageVolume + pf] = l;
    }
  }
  Type et = in.getElementType(), i64 = n.builder.getI64Type();
  // [N, C, K, L] and one zero after each row of blocks for the positions no block covers.
  Value x = n.reshape(*n.input(0), {batch, channels, kernelVolume, blocks});
  x = PadOp::create(n.builder, n.loc, n.tensorType({batch, channels, kernelVolume, blocks + 1}, et),
                    x, n.builder.getDenseI64ArrayAttr({0, 0, 0, 0}),
                    n.builder.getDenseI64ArrayAttr({0, 0, 0, 1}),
                    n.builder.getStringAttr("constant"), n.builder.getF64FloatAttr(0.0));
  auto tableType = RankedTensorType::get({1, 1, kernelVolume, imageVolume}, i64);
  SmallVector<int64_t> spread{batch, channels, kernelVolume, imageVolume};
  Value indices = ExpandOp::create(
      n.builder, n.loc, n.tensorType(spread, i64),
      n.constant(DenseElementsAttr::get(tableType, ArrayRef(table))),
      n.constant(DenseElementsAttr::get(RankedTensorType::get({4}, i64), ArrayRef(spread))));
  Value taken = GatherElementsOp::create(n.builder, n.loc, n.tensorType(spread, et), x, indices,
                                         n.builder.getI64IntegerAttr(3));
  Value summed =
      ReduceOp::create(n.builder, n.loc, n.tensorType({batch, channels, imageVolume}, et), taken,
                       n.builder.getStringAttr("sum"), n.builder.getDenseI64ArrayAttr({2}),
                       n.builder.getBoolAttr(false));
  SmallVector<int64_t> outShape{batch, channels};
  outShape.append(image->begin(), image->end());
  return n.setOutput(0, n.reshape(summed, outShape));
}

} // namespace

void registerUnpoolImports(OpImportRegistry &r) {
  r["MaxUnpool"] = {importMaxUnpool, 9};
  r["Col2Im"] = {importCol2Im, 18};
}

} // namespace sinter::import
