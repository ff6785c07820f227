// Import of Conv as ops the generic tier already compiles: the input's window entries are
// gathered by a compile-time index table into columns (im2col), which one matrix product with
// the weights contracts. Any number of spatial dimensions, strides, dilations, padding
// (explicit or auto_pad) and groups; the padded entries read one appended zero.
#include "NodeImporter.h"
#include "SlidingWindow.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

LogicalResult importConv(NodeImporter &n) {
  auto x = n.inputType(0), weight = n.inputType(1);
  if (!x || !weight)
    return failure();
  if (failed(requireFloat(n, x, "input X")) || failed(requireFloat(n, weight, "input W")))
    return failure();
  if (x.getElementType() != weight.getElementType())
    return n.fail("X and W have different element types");
  const int64_t rank = x.getRank() - 2;
  if (rank < 1 || weight.getRank() != x.getRank())
    return n.fail("X [" + shapeText(x.getShape()) + "] and W [" + shapeText(weight.getShape()) +
                  "] must both be [batch, channels, spatial...] with at least one spatial "
                  "dimension");
  const int64_t batch = x.getDimSize(0), channels = x.getDimSize(1);
  const int64_t features = weight.getDimSize(0), groupChannels = weight.getDimSize(1);
  const int64_t groups = n.attrInt("group", 1);
  if (groups < 1 || channels % groups != 0 || features % groups != 0 ||
      groupChannels * groups != channels)
    return n.fail("group " + Twine(groups) + " does not split X's " + Twine(channels) +
                  " channels and W's " + Twine(features) + " features into W's " +
                  Twine(groupChannels) + " channels a group");
  auto window = readSlidingWindow(n, x.getShape(), weight.getShape().drop_front(2),
                                  /*ceilMode=*/false);
  if (failed(window))
    return failure();
  const int64_t kernels = window->kernelVolume(), outputs = window->outputVolume();
  Value bias;
  if (n.hasInput(2)) {
    auto b = n.inputType(2);
    if (!b)
      return failure();
    if (b.getShape() != ArrayRef<int64_t>{features} || b.getElementType() != x.getElementType())
      return n.fail("B must be [" + Twine(features) + "] of X's element type");
    bias = *n.input(2);
  }

  Type et = x.getElementType();
  const int64_t inputs = window->inputVolume();
  // [N, C, D...] -> [N, C, inputs] (+ one zero where the window reads padding) -> [N, C,
  // kernels, outputs] -> [N, groups, C/groups * kernels, outputs].
  Value columns = n.reshape(*n.input(0), {batch, channels, inputs});
  bool identity = kernels == 1 && inputs == outputs;
  for (int64_t i = 0; i < rank; ++i)
    identity &= window->strides[i] == 1 && window->padBefore[i] == 0;
  if (!identity) {
    WindowTable table = windowTable(n.builder.getContext(), *window, /*outputMajor=*/false);
    if (table.readsOutside) {
      auto zeroType = n.tensorType({batch, channels, 1}, et);
      Value zero = n.constant(DenseElementsAttr::get(zeroType, n.builder.getZeroAttr(et)));
      columns = ConcatOp::create(n.builder, n.loc, n.tensorType({batch, channels, inputs + 1}, et),
                                 ValueRange{columns, zero}, n.builder.getI64IntegerAttr(2));
    }
    columns = GatherOp::create(n.builder, n.loc,
                               n.tensorType({batch, channels, kernels, outputs}, et), columns,
                               n.constant(table.indices), n.builder.getI64IntegerAttr(2));
  }
  const int64_t contracted = groupChannels * kernels;
  SmallVector<int64_t> resultShape = {batch, features};
  resultShape.append(window->outputSize.begin(), window->outputSize.end());
  Value product;
  if (groups == 1) {
    // [M, C*K] @ [N, C*K, P] -> [N, M, P]
    Value w = n.reshape(*n.input(1), {features, contracted});
    columns = n.reshape(columns, {batch, contracted, outputs});
    product = MatMulOp::create(n.builder, n.loc, n.tensorType({batch, features, outputs}, et), w,
                               columns);
  } else {
    // [G, M/G, C/G*K] @ [N, G, C/G*K, P] -> [N, G, M/G, P]
    Value w = n.reshape(*n.input(1), {groups, features / groups, contracted});
    columns = n.reshape(columns, {batch, groups, contracted, outputs});
    product = MatMulOp::create(n.builder, n.loc,
                               n.tensorType({batch, groups, features / groups, outputs}, et), w,
                               columns);
  }
  Value result = n.reshape(product, resultShape);
  if (bias) {
    SmallVector<int64_t> biasShape(rank + 1, 1);
    biasShape[0] = features;
    result = AddOp::create(n.builder, n.loc, n.tensorType(resultShape, et), result,
                           n.reshape(bias, biasShape));
  }
  return n.setOutput(0, result);
}

} // namespace

void registerConvImports(OpImportRegistry &r) { r["Conv"] = {importConv, 11}; }

} // namespace sinter::import
