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

/// X [N, C, D...] as [N, C, kernels, outputs]: entry (k, p) of each channel is the input
/// entry `table` names ([kernels, outputs], the input's volume where it reads outside: one
/// appended zero); no table: X itself (a 1x1 window at stride 1).
Value gatherColumns(NodeImporter &n, Value input, DenseElementsAttr table, bool readsOutside,
                    int64_t kernels, int64_t outputs) {
  auto x = cast<RankedTensorType>(input.getType());
  const int64_t batch = x.getDimSize(0), channels = x.getDimSize(1);
  int64_t inputs = 1;
  for (int64_t d : x.getShape().drop_front(2)) inputs *= d;
  Type et = x.getElementType();
  Value columns = n.reshape(input, {batch, channels, inputs});
  if (!table)
    return n.reshape(columns, {batch, channels, 1, inputs});
  if (readsOutside) {
    auto zeroType = n.tensorType({batch, channels, 1}, et);
    Value zero = n.constant(DenseElementsAttr::get(zeroType, n.builder.getZeroAttr(et)));
    columns = ConcatOp::create(n.builder, n.loc, n.tensorType({batch, channels, inputs + 1}, et),
                               ValueRange{columns, zero}, n.builder.getI64IntegerAttr(2));
  }
  return GatherOp::create(n.builder, n.loc, n.tensorType({batch, channels, kernels, outputs}, et),
                          columns, n.constant(table), n.builder.getI64IntegerAttr(2));
}

/// The product of the weights `w` [G, M/G, C/G * K] with `columns` [N, C, K, P] per group,
/// as [N, M, outputSize...], plus the bias [M] when given.
Value contract(NodeImporter &n, Value columns, Value w, int64_t groups,
               ArrayRef<int64_t> outputSize, Value bias) {
  auto cols = cast<RankedTensorType>(columns.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  const int64_t batch = cols.getDimSize(0), outputs = cols.getDimSize(3);
  const int64_t features = wType.getDimSize(0) * wType.getDimSize(1),
                contracted = wType.getDimSize(2);
  Type et = cols.getElementType();
  SmallVector<int64_t> resultShape = {batch, features};
  resultShape.append(outputSize.begin(), outputSize.end());
  Value product;
  if (groups == 1) {
    // [M, C*K] @ [N, C*K, P] -> [N, M, P]
    Value matrix = n.reshape(w, {features, contracted});
    Value rows = n.reshape(columns, {batch, contracted, outputs});
    product = MatMulOp::create(n.builder, n.loc, n.tensorType({batch, features, outputs}, et),
                               matrix, rows);
  } else {
    // [G, M/G, C/G*K] @ [N, G, C/G*K, P] -> [N, G, M/G, P]
    Value rows = n.reshape(columns, {batch, groups, contracted, outputs});
    product = MatMulOp::create(n.builder, n.loc,
                               n.tensorType({batch, groups, features / groups, outputs}, et), w,
                               rows);
  }
  Value result = n.reshape(product, resultShape);
  if (bias) {
    SmallVector<int64_t> biasShape(outputSize.size() + 1, 1);
    biasShape[0] = features;
    result = AddOp::create(n.builder, n.loc, n.tensorType(resultShape, et), result,
                           n.reshape(bias, biasShape));
  }
  return result;
}

/// Input 2, the bias: a [features] vector of X's element type, or null when absent.
FailureOr<Value> convBias(NodeImporter &n, RankedTensorType x, int64_t features) {
  if (!n.hasInput(2))
    return Value();
  auto b = n.inputType(2);
  if (!b)
    return failure();
  if (b.getShape() != ArrayRef<int64_t>{features} || b.getElementType() != x.getElementType())
    return n.fail("B must be [" + Twine(features) + "] of X's element type");
  return *n.input(2);
}

/// X and W of a convolution: floating point of one type, [batch, channels, spatial...] and a
/// weight of the same rank, at least one spatial dimension.
LogicalResult convOperands(NodeImporter &n, RankedTensorType &x, RankedTensorType &weight) {
  x = n.inputType(0), weight = n.inputType(1);
  if (!x || !weight)
    return failure();
  if (failed(requireFloat(n, x, "input X")) || failed(requireFloat(n, weight, "input W")))
    return failure();
  if (x.getElementType() != weight.getElementType())
    return n.fail("X and W have different element types");
  if (x.getRank() < 3 || weight.getRank() != x.getRank())
    return n.fail("X [" + shapeText(x.getShape()) + "] and W [" + shapeText(weight.getShape()) +
                  "] must both be [batch, channels, spatial...] with at least one spatial "
                  "dimension");
  return success();
}

/// The convolution of `input` by `weights` (one element type) with the node's attributes, plus
/// `bias` when not null.
FailureOr<Value> convolve(NodeImporter &n, Value input, Value weights, Value bias) {
  auto x = cast<RankedTensorType>(input.getType());
  auto weight = cast<RankedTensorType>(weights.getType());
  const int64_t rank = x.getRank() - 2;
  const int64_t batch = x.getDimSize(0), channels = x.getDimSize(1);
  const int64_t features = weight.getDimSize(0), groupChannels = weight.getDimSize(1);
  const int64_t groups = n.attrInt("group", 1);
  if (groups < 1 || channels % groups != 0 || features % groups != 0 ||
      groupChannels * groups != channels) {
    (void)n.fail("group " + Twine(groups) + " does not split X's " + Twine(channels) +
                 " channels and W's " + Twine(features) + " features into W's " +
                 Twine(groupChannels) + " channels a group");
    return failure();
  }
  auto window = readSlidingWindow(n, x.getShape(), weight.getShape().drop_front(2),
                                  /*ceilMode=*/false);
  if (failed(window))
    return failure();
  const int64_t kernels = window->kernelVolume(), outputs = window->outputVolume();

  bool identity = kernels == 1 && window->inputVolume() == outputs;
  for (int64_t i = 0; i < rank; ++i)
    identity &= window->strides[i] == 1 && window->padBefore[i] == 0;
  WindowTable table;
  if (!identity)
    table = windowTable(n.builder.getContext(), *window, /*outputMajor=*/false);
  Value columns = gatherColumns(n, input, identity ? DenseElementsAttr() : table.indices,
                                table.readsOutside, kernels, outputs);
  // W [M, C/G, K...] is already [G, M/G, C/G * K].
  Value w = n.reshape(weights, {groups, features / groups, groupChannels * kernels});
  return contract(n, columns, w, groups, window->outputSize, bias);
}

LogicalResult importConv(NodeImporter &n) {
  RankedTensorType x, weight;
  if (failed(convOperands(n, x, weight)))
    return failure();
  auto bias = convBias(n, x, weight.getDimSize(0));
  if (failed(bias))
    return failure();
  auto y = convolve(n, *n.input(0), *n.input(1), *bias);
  return failed(y) ? failure() : n.setOutput(0, *y);
}

/// ConvInteger(x, w, x_zero_point?, w_zero_point?): the int32 convolution of the shifted
/// operands, computed exactly in f64.
LogicalResult importConvInteger(NodeImporter &n) {
  auto x = shiftedEightBit(n, 0, 2, std::nullopt, "x", 3);
  if (failed(x))
    return failure();
  auto w = shiftedEightBit(n, 1, 3, ZeroPointAxis{0, "output channel"}, "w", 3);
  if (failed(w))
    return failure();
  auto y = convolve(n, *x, *w, Value());
  if (failed(y))
    return failure();
  auto type = cast<RankedTensorType>(y->getType());
  return n.setOutput(0, CastOp::create(n.builder, n.loc, type.clone(n.builder.getI32Type()), *y));
}

/// QLinearConv: y = saturate(round(C * (x_scale * w_scale / y_scale) + y_zero_point)) with C
/// the convolution of the shifted operands plus the int32 bias, exact in f64; the scale factor
/// in the scales' type (per output channel with a 1-D w_scale), as the reference computes it.
LogicalResult importQLinearConv(NodeImporter &n) {
  for (unsigned i : {2u, 5u, 7u})
    if (!n.hasInput(i))
      return n.fail("input " + Twine(i) + " (a zero point) is required");
  auto x = shiftedEightBit(n, 0, 2, std::nullopt, "x", 3);
  if (failed(x))
    return failure();
  auto w = shiftedEightBit(n, 3, 5, ZeroPointAxis{0, "output channel"}, "w", 3);
  if (failed(w))
    return failure();
  const int64_t features = cast<RankedTensorType>(w->getType()).getDimSize(0);
  auto xScale = n.inputType(1), wScale = n.inputType(4), yScale = n.inputType(6),
       yZero = n.inputType(7);
  if (!xScale || !wScale || !yScale || !yZero)
    return failure();
  Type st = xScale.getElementType();
  if (!isa<FloatType>(st) || xScale.getNumElements() != 1 || yScale.getNumElements() != 1 ||
      wScale.getElementType() != st || yScale.getElementType() != st ||
      (wScale.getNumElements() != 1 &&
       (wScale.getRank() != 1 || wScale.getNumElements() != features)))
    return n.fail("x_scale and y_scale must be one float each, w_scale one or one per output "
                  "channel, all of one type");
  auto outType = dyn_cast<IntegerType>(yZero.getElementType());
  if (!outType || outType.getWidth() != 8 || yZero.getNumElements() != 1)
    return n.fail("y_zero_point must be one int8 or uint8 value");
  Type f64 = n.builder.getF64Type();
  Value bias;
  if (n.hasInput(8)) {
    auto b = n.inputType(8);
    if (!b)
      return failure();
    if (b.getShape() != ArrayRef<int64_t>{features} || !b.getElementType().isInteger(32))
      return n.fail("B must be int32 [" + Twine(features) + "]");
    bias = CastOp::create(n.builder, n.loc, b.clone(f64), *n.input(8));
  }
  auto y = convolve(n, *x, *w, bias);
  if (failed(y))
    return failure();
  auto wide = cast<RankedTensorType>(y->getType());
  // The factor [M] (or one value), laid along the output channels.
  const int64_t factors = wScale.getNumElements();
  auto factorType = n.tensorType({factors}, st);
  Value factor = MulOp::create(n.builder, n.loc, factorType, n.reshape(*n.input(1), {1}),
                               n.reshape(*n.input(4), {factors}));
  factor = DivOp::create(n.builder, n.loc, factorType, factor, n.reshape(*n.input(6), {1}));
  factor = CastOp::create(n.builder, n.loc, factorType.clone(f64), factor);
  SmallVector<int64_t> along(wide.getRank(), 1);
  along[1] = factors;
  Value r = MulOp::create(n.builder, n.loc, wide, *y, n.reshape(factor, along));
  Value zero = CastOp::create(n.builder, n.loc, n.tensorType({}, f64), n.reshape(*n.input(7), {}));
  r = AddOp::create(n.builder, n.loc, wide, r, zero);
  const bool isUnsigned = outType.isUnsigned();
  r = MaxOp::create(n.builder, n.loc, wide, r, n.scalar(f64, isUnsigned ? 0 : -128));
  r = BinaryFnOp::create(n.builder, n.loc, wide, r, n.scalar(f64, isUnsigned ? 255 : 127),
                         n.builder.getStringAttr("min"));
  r = UnaryFnOp::create(n.builder, n.loc, wide, r, n.builder.getStringAttr("round"),
                        n.builder.getF32FloatAttr(0), n.builder.getF32FloatAttr(0));
  return n.setOutput(0, CastOp::create(n.builder, n.loc, wide.clone(outType), r));
}

/// Python's floor division (the reference's `//` on possibly negative paddings).
int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

LogicalResult importConvTranspose(NodeImporter &n) {
  RankedTensorType x, weight;
  if (failed(convOperands(n, x, weight)))
    return failure();
  const int64_t rank = x.getRank() - 2;
  const int64_t channels = x.getDimSize(1), groups = n.attrInt("group", 1);
  if (groups < 1 || weight.getDimSize(0) != channels || channels % groups != 0)
    return n.fail("W [" + shapeText(weight.getShape()) + "] must have X's " + Twine(channels) +
                  " channels first, split by group " + Twine(groups));
  const int64_t groupFeatures = weight.getDimSize(1), features = groupFeatures * groups;
  ArrayRef<int64_t> kernel = weight.getShape().drop_front(2);
  if (auto given = n.attrInts("kernel_shape"))
    if (ArrayRef<int64_t>(*given) != kernel)
      return n.fail("attribute 'kernel_shape' [" + shapeText(*given) +
                    "] does not match the weight's spatial dimensions [" + shapeText(kernel) + "]");
  auto strides = spatialAttribute(n, "strides", 1, rank, rank);
  auto dilations = spatialAttribute(n, "dilations", 1, rank, rank);
  auto outputPadding = spatialAttribute(n, "output_padding", 0, rank, rank);
  if (failed(strides) || failed(dilations) || failed(outputPadding))
    return failure();
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.fail("attribute 'auto_pad' = '" + autoPad +
                  "' (NOTSET, VALID, SAME_UPPER or SAME_LOWER)");
  auto givenPads = n.attrInts("pads");
  auto givenShape = n.attrInts("output_shape");
  if (givenPads && givenPads->size() != size_t(2 * rank))
    return n.fail("attribute 'pads' has " + Twine(givenPads->size()) + " entries for " +
                  Twine(rank) + " spatial dimensions");
  if (givenShape && givenShape->size() != size_t(rank))
    return n.fail("attribute 'output_shape' has " + Twine(givenShape->size()) + " entries for " +
                  Twine(rank) + " spatial dimensions (the spatial ones only)");
  // As the ONNX reference: without pads, SAME_* split the total padding an output_shape (default
  // input * stride) implies; otherwise pads (default 0) give the output size unless
  // output_shape overrides it.
  SmallVector<int64_t> before(rank, 0), outSize(rank);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t in = x.getDimSize(2 + i), k = kernel[i], s = (*strides)[i], d = (*dilations)[i];
    if (k < 1 || s < 1 || d < 1 || k > (1 << 20) || s > (1 << 20) || d > (1 << 20) ||
        (*outputPadding)[i] < 0 || (*outputPadding)[i] > (1 << 20))
      return n.fail("spatial dimension " + Twine(i) + ": kernel, stride and dilation must be 1 "
                    "to 2^20 and output_padding 0 to 2^20");
    int64_t full;
    if (__builtin_mul_overflow(s, in - 1, &full) || full > kMaxElements)
      return n.fail("spatial dimension " + Twine(i) + ": the output would exceed 2^48 entries");
    full += (*outputPadding)[i] + (k - 1) * d + 1;
    if (!givenPads && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")) {
      outSize[i] = givenShape ? (*givenShape)[i] : in * s;
      const int64_t total = full - outSize[i];
      before[i] = autoPad == "SAME_UPPER" ? floorDiv(total, 2) : total - floorDiv(total, 2);
    } else {
      const int64_t pb = givenPads ? (*givenPads)[i] : 0, pe = givenPads ? (*givenPads)[i + rank] : 0;
      if (pb < 0 || pe < 0 || pb > (1 << 20) || pe > (1 << 20))
        return n.fail("attribute 'pads' must be 0 to 2^20");
      before[i] = pb;
      outSize[i] = givenShape ? (*givenShape)[i] : full - pb - pe;
    }
    if (outSize[i] < 1 || outSize[i] > kMaxElements)
      return n.fail("spatial dimension " + Twine(i) + ": the output size " + Twine(outSize[i]) +
                    " must be 1 to 2^48");
  }
  int64_t kernels = 1, outputs = 1, inputs = 1, entries;
  for (int64_t i = 0; i < rank; ++i) {
    kernels *= kernel[i];
    inputs *= x.getDimSize(2 + i);
    if (__builtin_mul_overflow(outputs, outSize[i], &outputs))
      return n.fail("the output is too large");
  }
  if (__builtin_mul_overflow(kernels, outputs, &entries) || entries > kMaxWindowEntries)
    return n.fail("the window table would hold more than 2^24 entries (kernel " +
                  shapeText(kernel) + " over output " + shapeText(outSize) + ")");
  auto bias = convBias(n, x, features);
  if (failed(bias))
    return failure();
  // Output o receives input i through kernel offset k where o = i * stride - pad + k * dilation.
  std::vector<int64_t> table(entries);
  bool readsOutside = false;
  SmallVector<int64_t> offset(rank), out(rank);
  for (int64_t j = 0; j < kernels; ++j) {
    int64_t rest = j;
    for (int64_t i = rank; i-- > 0;) {
      offset[i] = rest % kernel[i];
      rest /= kernel[i];
    }
    for (int64_t p = 0; p < outputs; ++p) {
      rest = p;
      for (int64_t i = rank; i-- > 0;) {
        out[i] = rest % outSize[i];
        rest /= outSize[i];
      }
      int64_t flat = 0;
      bool inside = true;
      for (int64_t i = 0; i < rank; ++i) {
        const int64_t at = out[i] + before[i] - offset[i] * (*dilations)[i], s = (*strides)[i];
        const int64_t source = at >= 0 && at % s == 0 ? at / s : -1;
        inside &= source >= 0 && source < x.getDimSize(2 + i);
        flat = flat * x.getDimSize(2 + i) + source;
      }
      readsOutside |= !inside;
      table[j * outputs + p] = inside ? flat : inputs;
    }
  }
  auto tableType = RankedTensorType::get({kernels, outputs}, n.builder.getI64Type());
  Value columns = gatherColumns(n, *n.input(0), DenseElementsAttr::get(tableType, ArrayRef(table)),
                                readsOutside, kernels, outputs);
  // W [C, M/G, K...] -> [G, C/G, M/G, K] -> [G, M/G, C/G, K] -> [G, M/G, C/G * K].
  Type et = x.getElementType();
  const int64_t groupChannels = channels / groups;
  Value w = n.reshape(*n.input(1), {groups, groupChannels, groupFeatures, kernels});
  w = TransposeOp::create(n.builder, n.loc,
                          n.tensorType({groups, groupFeatures, groupChannels, kernels}, et), w,
                          n.builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
  w = n.reshape(w, {groups, groupFeatures, groupChannels * kernels});
  return n.setOutput(0, contract(n, columns, w, groups, outSize, *bias));
}

} // namespace

void registerConvImports(OpImportRegistry &r) {
  r["Conv"] = {importConv, 11};
  r["ConvTranspose"] = {importConvTranspose, 11};
  r["ConvInteger"] = {importConvInteger, 10};
  r["QLinearConv"] = {importQLinearConv, 10};
}

} // namespace sinter::import
