// Quantized activations: QuantizeLinear, and DequantizeLinear whose operands are known only at
// run time, as the elementwise ops of their definitions (the generic tier fuses them into the
// kernels around them). Constant DequantizeLinear (quantized weights) folds at import instead
// (QuantizedImports.cpp).
#include "NodeImporter.h"
#include "QuantizationLayout.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {

FailureOr<QuantizationLayout> readQuantizationLayout(NodeImporter &n, RankedTensorType x,
                                                     RankedTensorType scale) {
  QuantizationLayout layout;
  const int64_t rank = x.getRank();
  layout.blockSize = n.opset() >= 21 ? n.attrInt("block_size", 0) : 0;
  auto text = [&] {
    const char *scaleName = n.node.op_type() == "QuantizeLinear" ? ", y_scale " : ", x_scale ";
    std::string s = "x " + shapeText(x.getShape()) + scaleName + shapeText(scale.getShape());
    if (layout.blockSize)
      s += ", block_size " + std::to_string(layout.blockSize);
    return s;
  };
  const int64_t axisAttribute = n.attrInt("axis", 1); // ignored by per-tensor scales
  if (scale.getNumElements() == 1 && scale.getRank() <= 1 && layout.blockSize == 0)
    return layout;
  auto axis = normalizeAxis(n, axisAttribute, rank, "axis");
  if (failed(axis))
    return failure();
  layout.axis = *axis;
  if (layout.blockSize == 0) {
    if (scale.getRank() != 1 || scale.getDimSize(0) != x.getDimSize(*axis))
      return n.fail("unsupported quantization layout (" + text() + ", axis " + Twine(*axis) +
                    "): per-axis scales need shape [" + Twine(x.getDimSize(*axis)) + "]");
    layout.kind = QuantizationLayout::PerAxis;
    return layout;
  }
  bool ok = layout.blockSize > 0 && scale.getRank() == rank;
  for (int64_t d = 0; ok && d < rank; ++d)
    ok = scale.getDimSize(d) == (d == *axis ? llvm::divideCeil(x.getDimSize(d), layout.blockSize)
                                            : x.getDimSize(d));
  if (!ok)
    return n.fail("unsupported quantization layout (" + text() + ", axis " + Twine(*axis) +
                  "): blocked scales need x's shape with dimension " + Twine(*axis) +
                  " divided by the block size, rounded up");
  layout.kind = QuantizationLayout::Blocked;
  return layout;
}

namespace {

/// `value` (a scale or zero point) cast to `et` and laid out to broadcast against x.
Value alongXAs(NodeImporter &n, Value value, const QuantizationLayout &layout,
               ArrayRef<int64_t> xShape, Type et) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() != et)
    value = CastOp::create(n.builder, n.loc, type.clone(et), value);
  const int64_t rank = xShape.size();
  switch (layout.kind) {
  case QuantizationLayout::PerTensor:
    return n.reshape(value, {});
  case QuantizationLayout::PerAxis: {
    SmallVector<int64_t> shape(rank, 1);
    shape[layout.axis] = xShape[layout.axis];
    return n.reshape(value, shape);
  }
  case QuantizationLayout::Blocked: {
    // Entry j along the axis reads its block's value, j / blockSize.
    const int64_t length = xShape[layout.axis];
    SmallVector<int64_t> blockOf(length);
    for (int64_t j = 0; j < length; ++j)
      blockOf[j] = j / layout.blockSize;
    auto indexType = RankedTensorType::get({length}, n.builder.getI64Type());
    SmallVector<int64_t> shape(type.getShape());
    shape[layout.axis] = length;
    return GatherOp::create(n.builder, n.loc, n.tensorType(shape, et), value,
                            n.constant(DenseElementsAttr::get(indexType, ArrayRef(blockOf))),
                            n.builder.getI64IntegerAttr(layout.axis));
  }
  }
  return value;
}

/// The smallest and largest value of an integer quantized type, or failure.
FailureOr<std::pair<double, double>> quantizedRange(Type t) {
  auto integer = dyn_cast<IntegerType>(t);
  if (!integer || integer.getWidth() == 1 || integer.getWidth() > 16)
    return failure();
  const unsigned bits = integer.getWidth();
  if (integer.isUnsigned())
    return std::make_pair(0.0, double((int64_t(1) << bits) - 1));
  return std::make_pair(-double(int64_t(1) << (bits - 1)), double((int64_t(1) << (bits - 1)) - 1));
}

/// QuantizeLinear(x, y_scale, y_zero_point?): y = clamp(round_half_even(x / y_scale) +
/// y_zero_point) to the output type's range; the division in x's type (or `precision`'s), as
/// the reference divides.
LogicalResult importQuantizeLinear(NodeImporter &n) {
  auto xType = n.inputType(0), scaleType = n.inputType(1);
  if (!xType || !scaleType)
    return failure();
  if (failed(requireFloat(n, xType, "x")) || failed(requireFloat(n, scaleType, "y_scale")))
    return failure();
  Type outType = n.builder.getIntegerType(8, /*isSigned=*/false);
  const int64_t outputDtype = n.opset() >= 21 ? n.attrInt("output_dtype", 0) : 0;
  if (outputDtype) {
    outType = elementTypeFor(n.builder.getContext(), int(outputDtype));
    if (!outType)
      return n.fail("output_dtype " + dataTypeText(int(outputDtype)));
  }
  RankedTensorType zeroType;
  if (n.hasInput(2)) {
    zeroType = n.inputType(2);
    if (!zeroType)
      return failure();
    if (outputDtype && zeroType.getElementType() != outType)
      return n.fail("output_dtype " + Twine(outputDtype) +
                    " differs from y_zero_point's element type");
    outType = zeroType.getElementType();
    if (zeroType.getShape() != scaleType.getShape())
      return n.fail("y_zero_point must have y_scale's shape");
  }
  auto range = quantizedRange(outType);
  if (failed(range))
    return n.fail("quantizing to this output type is not supported (int8, uint8, int16, "
                  "uint16)");
  (void)n.attrInt("saturate", 1); // applies to float 8-bit outputs only
  Type divideIn = xType.getElementType();
  if (int64_t precision = n.opset() >= 25 ? n.attrInt("precision", 0) : 0) {
    divideIn = elementTypeFor(n.builder.getContext(), int(precision));
    if (!divideIn || !isa<FloatType>(divideIn))
      return n.fail("precision " + Twine(precision) + " is not a float type");
  }
  auto layout = readQuantizationLayout(n, xType, scaleType);
  if (failed(layout))
    return failure();

  ArrayRef<int64_t> shape = xType.getShape();
  Value x = *n.input(0);
  if (divideIn != xType.getElementType())
    x = CastOp::create(n.builder, n.loc, xType.clone(divideIn), x);
  Value q = DivOp::create(n.builder, n.loc, n.tensorType(shape, divideIn), x,
                          alongXAs(n, *n.input(1), *layout, shape, divideIn));
  q = UnaryFnOp::create(n.builder, n.loc, n.tensorType(shape, divideIn), q,
                        n.builder.getStringAttr("round"), n.builder.getF32FloatAttr(0),
                        n.builder.getF32FloatAttr(0));
  // Rounded values and zero points are exact in f32 within the clamp's range.
  Type f32 = n.builder.getF32Type();
  auto wide = n.tensorType(shape, f32);
  if (divideIn != f32)
    q = CastOp::create(n.builder, n.loc, wide, q);
  if (zeroType)
    q = AddOp::create(n.builder, n.loc, wide, q, alongXAs(n, *n.input(2), *layout, shape, f32));
  q = MaxOp::create(n.builder, n.loc, wide, q, n.scalar(f32, range->first));
  q = BinaryFnOp::create(n.builder, n.loc, wide, q, n.scalar(f32, range->second),
                         n.builder.getStringAttr("min"));
  return n.setOutput(0, CastOp::create(n.builder, n.loc, n.tensorType(shape, outType), q));
}

} // namespace

Value alongX(NodeImporter &n, Value value, const QuantizationLayout &layout,
             ArrayRef<int64_t> xShape) {
  return alongXAs(n, value, layout, xShape, n.builder.getF32Type());
}

LogicalResult importDequantizeAtRunTime(NodeImporter &n, Type outType) {
  auto xType = n.inputType(0), scaleType = n.inputType(1);
  if (!xType || !scaleType)
    return failure();
  auto layout = readQuantizationLayout(n, xType, scaleType);
  if (failed(layout))
    return failure();
  ArrayRef<int64_t> shape = xType.getShape();
  auto wide = n.tensorType(shape, n.builder.getF32Type());
  Value y = CastOp::create(n.builder, n.loc, wide, *n.input(0));
  if (n.hasInput(2))
    y = SubOp::create(n.builder, n.loc, wide, y, alongX(n, *n.input(2), *layout, shape));
  y = MulOp::create(n.builder, n.loc, wide, y, alongX(n, *n.input(1), *layout, shape));
  if (outType != wide.getElementType())
    y = CastOp::create(n.builder, n.loc, n.tensorType(shape, outType), y);
  return n.setOutput(0, y);
}

void registerQuantizeImports(OpImportRegistry &r) {
  r["QuantizeLinear"] = {importQuantizeLinear, 13};
}

} // namespace sinter::import
