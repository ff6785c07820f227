// Import of Conv as ops the generic tier already compiles: the input's window entries are
// gathered by a compile-time index table into columns (im2col), which one matrix product with
// the weights contracts. Any number of spatial dimensions, strides, dilations, padding
// (explicit or auto_pad) and groups; the padded entries read one appended zero.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// The index table may hold at most this many entries (an int64 each, stored as a weight:
/// 128 MiB).
constexpr int64_t kMaxWindowEntries = int64_t(1) << 24;

/// The product of `dims`, saturated at kMaxElements (hostile shapes must not overflow).
int64_t volume(ArrayRef<int64_t> dims) {
  int64_t v = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(v, d, &v) || v > kMaxElements)
      return kMaxElements;
  return v;
}

/// A convolution's window geometry over `rank` spatial dimensions.
struct Window {
  SmallVector<int64_t> inputSize, kernel, strides, dilations, padBefore, outputSize;

  int64_t kernelVolume() const { return volume(kernel); }
  int64_t outputVolume() const { return volume(outputSize); }
  int64_t inputVolume() const { return volume(inputSize); }
};

/// Reads kernel_shape, strides, dilations, pads and auto_pad against input [N, C, D...] and a
/// kernel of `kernel` (the weight's spatial dimensions); fails naming the attribute.
FailureOr<Window> readWindow(NodeImporter &n, ArrayRef<int64_t> input, ArrayRef<int64_t> kernel) {
  const size_t rank = kernel.size();
  Window w;
  w.inputSize.assign(input.begin() + 2, input.end());
  w.kernel.assign(kernel.begin(), kernel.end());
  if (auto given = n.attrInts("kernel_shape"))
    if (ArrayRef<int64_t>(*given) != kernel)
      return n.fail("attribute 'kernel_shape' [" + shapeText(*given) +
                    "] does not match the weight's spatial dimensions [" + shapeText(kernel) +
                    "]");
  auto listOf = [&](StringRef name, int64_t fill, size_t size) -> FailureOr<SmallVector<int64_t>> {
    auto given = n.attrInts(name);
    if (!given)
      return SmallVector<int64_t>(size, fill);
    if (given->size() != size)
      return n.fail("attribute '" + name + "' has " + Twine(given->size()) + " entries for " +
                    Twine(rank) + " spatial dimensions");
    return *given;
  };
  auto strides = listOf("strides", 1, rank);
  auto dilations = listOf("dilations", 1, rank);
  auto pads = listOf("pads", 0, 2 * rank);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.fail("attribute 'auto_pad' = '" + autoPad +
                  "' (NOTSET, VALID, SAME_UPPER or SAME_LOWER)");
  if (autoPad != "NOTSET" && n.attrInts("pads"))
    return n.fail("attribute 'pads' is given with auto_pad = '" + autoPad + "'");
  for (size_t i = 0; i < rank; ++i) {
    const int64_t size = w.inputSize[i], k = w.kernel[i], s = w.strides[i], d = w.dilations[i];
    if (k < 1 || s < 1 || d < 1 || k > kMaxElements || s > kMaxElements || d > kMaxElements)
      return n.fail("spatial dimension " + Twine(i) + ": kernel " + Twine(k) + ", stride " +
                    Twine(s) + " and dilation " + Twine(d) + " must be 1 to 2^48");
    int64_t span;
    if (__builtin_mul_overflow(d, k - 1, &span) || span >= kMaxElements)
      return n.fail("spatial dimension " + Twine(i) + ": the window (kernel " + Twine(k) +
                    ", dilation " + Twine(d) + ") spans more than 2^48 entries");
    span += 1;
    int64_t before = (*pads)[i], after = (*pads)[i + rank];
    if (autoPad == "VALID") {
      before = after = 0;
    } else if (autoPad != "NOTSET") {
      const int64_t out = (size + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - size);
      before = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      after = total - before;
    }
    if (before < 0 || after < 0 || before > kMaxElements || after > kMaxElements)
      return n.fail("attribute 'pads' of spatial dimension " + Twine(i) +
                    " must be 0 to 2^48 (negative padding is not supported)");
    const int64_t padded = size + before + after;
    if (padded < span)
      return n.fail("spatial dimension " + Twine(i) + ": the window (" + Twine(span) +
                    " with dilation) is larger than the padded input (" + Twine(padded) + ")");
    w.padBefore.push_back(before);
    w.outputSize.push_back((padded - span) / s + 1);
  }
  return w;
}

/// Entry [j, p] is the flat input position window offset j reads for output position p
/// (both row-major), or inputVolume() where it falls in the padding.
DenseElementsAttr windowIndices(MLIRContext *ctx, const Window &w, bool &readsPadding) {
  const size_t rank = w.kernel.size();
  const int64_t kernels = w.kernelVolume(), outputs = w.outputVolume(), pad = w.inputVolume();
  std::vector<int64_t> table(kernels * outputs);
  SmallVector<int64_t> offset(rank, 0), out(rank, 0);
  readsPadding = false;
  for (int64_t j = 0; j < kernels; ++j) {
    int64_t rest = j;
    for (size_t i = rank; i-- > 0;) {
      offset[i] = rest % w.kernel[i];
      rest /= w.kernel[i];
    }
    for (int64_t p = 0; p < outputs; ++p) {
      rest = p;
      for (size_t i = rank; i-- > 0;) {
        out[i] = rest % w.outputSize[i];
        rest /= w.outputSize[i];
      }
      int64_t flat = 0;
      bool inside = true;
      for (size_t i = 0; i < rank; ++i) {
        int64_t at = out[i] * w.strides[i] - w.padBefore[i] + offset[i] * w.dilations[i];
        inside &= at >= 0 && at < w.inputSize[i];
        flat = flat * w.inputSize[i] + at;
      }
      readsPadding |= !inside;
      table[j * outputs + p] = inside ? flat : pad;
    }
  }
  auto type = RankedTensorType::get({kernels, outputs}, IntegerType::get(ctx, 64));
  return DenseElementsAttr::get(type, ArrayRef<int64_t>(table));
}

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
  auto window = readWindow(n, x.getShape(), weight.getShape().drop_front(2));
  if (failed(window))
    return failure();
  const int64_t kernels = window->kernelVolume(), outputs = window->outputVolume();
  int64_t entries;
  if (__builtin_mul_overflow(kernels, outputs, &entries) || entries > kMaxWindowEntries)
    return n.fail("the window table would hold more than 2^24 entries (kernel " +
                  shapeText(window->kernel) + " over output " +
                  shapeText(window->outputSize) + ")");
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
    bool readsPadding = false;
    DenseElementsAttr table = windowIndices(n.builder.getContext(), *window, readsPadding);
    if (readsPadding) {
      auto zeroType = n.tensorType({batch, channels, 1}, et);
      Value zero = n.constant(DenseElementsAttr::get(zeroType, n.builder.getZeroAttr(et)));
      columns = ConcatOp::create(n.builder, n.loc, n.tensorType({batch, channels, inputs + 1}, et),
                                 ValueRange{columns, zero}, n.builder.getI64IntegerAttr(2));
    }
    columns = GatherOp::create(n.builder, n.loc,
                               n.tensorType({batch, channels, kernels, outputs}, et), columns,
                               n.constant(table), n.builder.getI64IntegerAttr(2));
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
