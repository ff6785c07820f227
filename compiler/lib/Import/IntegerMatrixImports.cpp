// Integer matrix products and dynamic quantization, as onnxruntime's quantization tools write
// them: MatMulInteger (dynamic quantization's product, after DynamicQuantizeLinear),
// QLinearMatMul (static quantization's operator form) and DynamicQuantizeLinear. The products
// run in f64, where every sum of 8-bit products is exact (a K of 2^37 would be needed to
// round), so the results are the reference's integers; the requantization follows the
// reference's order of f32 and f64 operations.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
FailureOr<Value> shiftedEightBit(NodeImporter &n, unsigned index, unsigned zeroIndex,
                                 std::optional<ZeroPointAxis> perAxis, StringRef name,
                                 int64_t minRank) {
  auto type = n.inputType(index);
  if (!type)
    return failure();
  auto integer = dyn_cast<IntegerType>(type.getElementType());
  if (!integer || integer.getWidth() != 8) {
    (void)n.fail("input " + name + " must be int8 or uint8");
    return failure();
  }
  const int64_t rank = type.getRank();
  if (rank < minRank) {
    (void)n.fail("input " + name + " must have rank >= " + Twine(minRank));
    return failure();
  }
  Type f64 = n.builder.getF64Type();
  Value x = CastOp::create(n.builder, n.loc, type.clone(f64), *n.input(index));
  if (!n.hasInput(zeroIndex))
    return x;
  auto zeroType = n.inputType(zeroIndex);
  if (!zeroType)
    return failure();
  const std::string zeroName = name.str() + "_zero_point";
  if (zeroType.getElementType() != type.getElementType()) {
    (void)n.fail(zeroName + " must have " + name + "'s element type");
    return failure();
  }
  const int64_t count = zeroType.getNumElements();
  SmallVector<int64_t> shape;
  if (count != 1) {
    const int64_t axis = !perAxis ? -1 : perAxis->axis < 0 ? perAxis->axis + rank : perAxis->axis;
    if (!perAxis || zeroType.getRank() != 1 || axis < 0 || axis >= rank ||
        count != type.getDimSize(axis)) {
      (void)n.fail("unsupported " + zeroName + " shape " + shapeText(zeroType.getShape()) +
                   " for " + name + " " + shapeText(type.getShape()) + ": one value" +
                   (perAxis ? ", or one per " + perAxis->unit.str() : std::string()));
      return failure();
    }
    // Laid along `axis`: [count, 1, ...] broadcasts against the dimensions from there on.
    shape.assign(rank - axis, 1);
    shape[0] = count;
  }
  Value zero = CastOp::create(n.builder, n.loc, zeroType.clone(f64), *n.input(zeroIndex));
  return Value(SubOp::create(n.builder, n.loc, type.clone(f64), x, n.reshape(zero, shape)));
}

namespace {

bool isEightBitInteger(Type t) {
  auto integer = dyn_cast<IntegerType>(t);
  return integer && integer.getWidth() == 8;
}

/// The f64 product of two shifted operands, or failure naming the mismatch.
FailureOr<Value> exactProduct(NodeImporter &n, Value a, Value b) {
  auto shape = matmulShape(cast<RankedTensorType>(a.getType()).getShape(),
                           cast<RankedTensorType>(b.getType()).getShape());
  if (failed(shape)) {
    (void)n.fail("contraction dimensions do not match");
    return failure();
  }
  return Value(
      MatMulOp::create(n.builder, n.loc, n.tensorType(*shape, n.builder.getF64Type()), a, b));
}

/// MatMulInteger(A, B, a_zero_point?, b_zero_point?) = (A - a_zero_point)(B - b_zero_point),
/// in int32.
LogicalResult importMatMulInteger(NodeImporter &n) {
  auto a = shiftedEightBit(n, 0, 2, ZeroPointAxis{-2, "row"}, "A", 1);
  if (failed(a))
    return failure();
  auto b = shiftedEightBit(n, 1, 3, ZeroPointAxis{-1, "column"}, "B", 1);
  if (failed(b))
    return failure();
  auto product = exactProduct(n, *a, *b);
  if (failed(product))
    return failure();
  auto type = cast<RankedTensorType>(product->getType());
  return n.setOutput(
      0, CastOp::create(n.builder, n.loc, type.clone(n.builder.getI32Type()), *product));
}

/// A scale input (one value, or one per column of B for b_scale) in its float type.
FailureOr<Value> scaleInput(NodeImporter &n, unsigned index, StringRef name, int64_t columns) {
  auto type = n.inputType(index);
  if (!type)
    return failure();
  if (failed(requireFloat(n, type, name)))
    return failure();
  const int64_t count = type.getNumElements();
  if (count != 1 && (type.getRank() != 1 || count != columns)) {
    (void)n.fail("unsupported " + name + " shape " + shapeText(type.getShape()) + ": one value" +
                 (columns > 0 ? ", or one per column of b" : ""));
    return failure();
  }
  return n.reshape(*n.input(index),
                   count == 1 ? SmallVector<int64_t>{} : SmallVector<int64_t>{count});
}

/// QLinearMatMul: y = saturate(rint(C * (a_scale * b_scale / y_scale) + y_zero_point)) with
/// C = (a - a_zero_point)(b - b_zero_point); the scale factor in the scales' type, the rest in
/// f64 (the reference multiplies its int32 C by the f32 factor, which numpy does in f64).
LogicalResult importQLinearMatMul(NodeImporter &n) {
  for (unsigned i : {2u, 5u, 7u})
    if (!n.hasInput(i))
      return n.fail("input " + Twine(i) + " (a zero point) is required");
  auto a = shiftedEightBit(n, 0, 2, ZeroPointAxis{-2, "row"}, "a", 1);
  if (failed(a))
    return failure();
  auto b = shiftedEightBit(n, 3, 5, ZeroPointAxis{-1, "column"}, "b", 1);
  if (failed(b))
    return failure();
  const int64_t columns = cast<RankedTensorType>(b->getType()).getShape().back();
  auto aScale = scaleInput(n, 1, "a_scale", 0);
  if (failed(aScale))
    return failure();
  auto bScale = scaleInput(n, 4, "b_scale", columns);
  if (failed(bScale))
    return failure();
  auto yScale = scaleInput(n, 6, "y_scale", 0);
  auto yZeroType = n.inputType(7);
  if (failed(yScale) || !yZeroType)
    return failure();
  Type outType = yZeroType.getElementType();
  if (!isEightBitInteger(outType) || yZeroType.getNumElements() != 1)
    return n.fail("y_zero_point must be one int8 or uint8 value");
  Type scaleType = cast<RankedTensorType>(aScale->getType()).getElementType();
  for (Value s : {*bScale, *yScale})
    if (cast<RankedTensorType>(s.getType()).getElementType() != scaleType)
      return n.fail("a_scale, b_scale and y_scale must have one element type");

  auto product = exactProduct(n, *a, *b);
  if (failed(product))
    return failure();
  auto scaleShape = cast<RankedTensorType>(bScale->getType()).getShape();
  Value factor =
      MulOp::create(n.builder, n.loc, n.tensorType(scaleShape, scaleType), *aScale, *bScale);
  factor = DivOp::create(n.builder, n.loc, n.tensorType(scaleShape, scaleType), factor, *yScale);
  Type f64 = n.builder.getF64Type();
  factor = CastOp::create(n.builder, n.loc, n.tensorType(scaleShape, f64), factor);
  auto wide = cast<RankedTensorType>(product->getType());
  Value y = MulOp::create(n.builder, n.loc, wide, *product, factor);
  Value zero = CastOp::create(n.builder, n.loc, n.tensorType({}, f64), n.reshape(*n.input(7), {}));
  y = AddOp::create(n.builder, n.loc, wide, y, zero);
  y = UnaryFnOp::create(n.builder, n.loc, wide, y, n.builder.getStringAttr("round"),
                        n.builder.getF32FloatAttr(0), n.builder.getF32FloatAttr(0));
  const bool isUnsigned = outType.isUnsignedInteger();
  y = MaxOp::create(n.builder, n.loc, wide, y, n.scalar(f64, isUnsigned ? 0 : -128));
  y = BinaryFnOp::create(n.builder, n.loc, wide, y, n.scalar(f64, isUnsigned ? 255 : 127),
                         n.builder.getStringAttr("min"));
  return n.setOutput(0, CastOp::create(n.builder, n.loc, wide.clone(outType), y));
}

/// DynamicQuantizeLinear(x) -> (y, y_scale, y_zero_point): uint8 quantization over the range
/// of x and 0, all in f32 as the reference computes it: scale = (max - min) / 255 (1 / 255
/// when max = min), zero point = rint(clamp(-min / scale, 0, 255)), y = clamp(rint(x / scale)
/// + zero point, 0, 255).
LogicalResult importDynamicQuantizeLinear(NodeImporter &n) {
  auto xType = n.inputType(0);
  if (!xType)
    return failure();
  Type f32 = n.builder.getF32Type();
  if (xType.getElementType() != f32)
    return n.fail("input x must be float32");
  if (xType.getNumElements() == 0)
    return n.fail("input x must not be empty");
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < xType.getRank(); ++d)
    all.push_back(d);
  auto scalarType = n.tensorType({}, f32);
  auto reduce = [&](StringRef kind) -> Value {
    return ReduceOp::create(n.builder, n.loc, scalarType, *n.input(0),
                            n.builder.getStringAttr(kind), n.builder.getDenseI64ArrayAttr(all),
                            n.builder.getBoolAttr(false));
  };
  Value zero = n.scalar(f32, 0), levels = n.scalar(f32, 255);
  Value maxx = MaxOp::create(n.builder, n.loc, scalarType, reduce("max"), zero);
  Value minx = BinaryFnOp::create(n.builder, n.loc, scalarType, reduce("min"), zero,
                                  n.builder.getStringAttr("min"));
  Value span = SubOp::create(n.builder, n.loc, scalarType, maxx, minx);
  Value flat =
      EqualOp::create(n.builder, n.loc, n.tensorType({}, n.builder.getI1Type()), maxx, minx);
  span = WhereOp::create(n.builder, n.loc, scalarType, flat, n.scalar(f32, 1), span);
  Value scale = DivOp::create(n.builder, n.loc, scalarType, span, levels);
  auto clampRound = [&](Value v, RankedTensorType type) -> Value {
    v = MaxOp::create(n.builder, n.loc, type, v, zero);
    v = BinaryFnOp::create(n.builder, n.loc, type, v, levels, n.builder.getStringAttr("min"));
    return v;
  };
  auto round = [&](Value v, RankedTensorType type) -> Value {
    return UnaryFnOp::create(n.builder, n.loc, type, v, n.builder.getStringAttr("round"),
                             n.builder.getF32FloatAttr(0), n.builder.getF32FloatAttr(0));
  };
  Value zeroPoint = DivOp::create(n.builder, n.loc, scalarType, minx, scale);
  zeroPoint = SubOp::create(n.builder, n.loc, scalarType, zero, zeroPoint);
  zeroPoint = round(clampRound(zeroPoint, scalarType), scalarType);
  auto wide = xType;
  Value y = DivOp::create(n.builder, n.loc, wide, *n.input(0), scale);
  y = AddOp::create(n.builder, n.loc, wide, round(y, wide), zeroPoint);
  y = clampRound(y, wide);
  Type u8 = n.builder.getIntegerType(8, /*isSigned=*/false);
  if (failed(n.setOutput(0, CastOp::create(n.builder, n.loc, wide.clone(u8), y))) ||
      failed(n.setOutput(1, scale)))
    return failure();
  return n.setOutput(2, CastOp::create(n.builder, n.loc, n.tensorType({}, u8), zeroPoint));
}

} // namespace

void registerIntegerMatrixImports(OpImportRegistry &r) {
  r["MatMulInteger"] = {importMatMulInteger, 10};
  r["QLinearMatMul"] = {importQLinearMatMul, 10};
  r["DynamicQuantizeLinear"] = {importDynamicQuantizeLinear, 11};
}

} // namespace sinter::import
