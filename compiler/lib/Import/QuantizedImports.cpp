// Import of quantized weights: DequantizeLinear on constants (QDQ exports) and com.microsoft
// MatMulNBits (onnxruntime's block-quantized 2/4/8-bit weights). Both dequantize at compile time
// into a constant of the float type they produce, so the linear that reads it compiles like any
// other (and --weight-dtype may quantize it again for the kernels). A DequantizeLinear whose
// operands are known only at run time (a quantized activation) goes to QuantizeImports.cpp.
#include "NodeImporter.h"
#include "QuantizationLayout.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// Every value of an integer or float constant as a double (exact for every type here).
std::vector<double> valuesOf(DenseElementsAttr a) {
  std::vector<double> out;
  out.reserve(a.getNumElements());
  if (auto it = dyn_cast<IntegerType>(a.getElementType())) {
    for (const APInt &v : a.getValues<APInt>())
      out.push_back(it.isUnsigned() ? double(v.getZExtValue()) : double(v.getSExtValue()));
  } else {
    for (const APFloat &v : a.getValues<APFloat>())
      out.push_back(v.convertToDouble());
  }
  return out;
}

/// A constant of float type `type` holding `values` rounded to nearest even.
DenseElementsAttr floatConstant(RankedTensorType type, const std::vector<float> &values) {
  Type et = type.getElementType();
  if (et.isF32())
    return DenseElementsAttr::get(type, ArrayRef<float>(values));
  const auto &semantics = cast<FloatType>(et).getFloatSemantics();
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    APFloat f(values[i]);
    bool lost = false;
    f.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    bits[i] = uint16_t(f.bitcastToAPInt().getZExtValue());
  }
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(bits.data()), bits.size() * 2));
}

/// The bytes of an 8-bit constant, one per element (a splat expanded).
std::vector<uint8_t> bytesOf(DenseElementsAttr a) {
  ArrayRef<char> raw = a.getRawData();
  if (a.isSplat())
    return std::vector<uint8_t>(size_t(a.getNumElements()), raw.empty() ? 0 : uint8_t(raw[0]));
  return std::vector<uint8_t>(raw.begin(), raw.end());
}

bool isFloat16Or32(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }

/// DequantizeLinear(x, x_scale, x_zero_point): y = (x - x_zero_point) * x_scale, per tensor,
/// per axis or per block along one axis.
LogicalResult importDequantizeLinear(NodeImporter &n) {
  auto xType = n.inputType(0), scaleType = n.inputType(1);
  if (!xType || !scaleType)
    return failure();
  if (!isFloat16Or32(scaleType.getElementType()))
    return n.fail("x_scale must be float, float16 or bfloat16");
  if (n.hasInput(2)) {
    auto zeroType = n.inputType(2);
    if (!zeroType)
      return failure();
    if (zeroType.getElementType() != xType.getElementType() ||
        zeroType.getShape() != scaleType.getShape())
      return n.fail("x_zero_point must have x's element type and x_scale's shape");
  }
  Type outType = scaleType.getElementType();
  if (n.opset() >= 23) {
    if (int64_t dtype = n.attrInt("output_dtype", 0)) {
      outType = elementTypeFor(n.builder.getContext(), int(dtype));
      if (!outType || !isFloat16Or32(outType))
        return n.fail("output_dtype " + Twine(dtype) + " is not float, float16 or bfloat16");
    }
  }
  // Constant operands (quantized weights) dequantize here, into a constant; anything known
  // only at run time (quantized activations) becomes the ops of the definition.
  DenseElementsAttr x = n.constantInput(0), scale = n.constantInput(1);
  DenseElementsAttr zero = n.hasInput(2) ? n.constantInput(2) : DenseElementsAttr();
  if (!x || !scale || (n.hasInput(2) && !zero))
    return importDequantizeAtRunTime(n, outType);
  auto quantLayout = readQuantizationLayout(n, xType, scaleType);
  if (failed(quantLayout))
    return failure();
  const QuantizationLayout::Kind kind = quantLayout->kind;
  const int64_t rank = xType.getRank(), axis = quantLayout->axis,
                blockSize = quantLayout->blockSize;
  const std::vector<double> xs = valuesOf(x), scales = valuesOf(scale);
  const std::vector<double> zeros = zero ? valuesOf(zero) : std::vector<double>();
  int64_t inner = 1; // elements after `axis`
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= xType.getDimSize(d);
  const int64_t axisLen = rank ? xType.getDimSize(axis) : 1;
  const int64_t blocks = blockSize ? (axisLen + blockSize - 1) / blockSize : 1;
  std::vector<float> out(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    size_t s = 0;
    if (kind == QuantizationLayout::PerAxis) {
      s = size_t((int64_t(i) / inner) % axisLen);
    } else if (kind == QuantizationLayout::Blocked) {
      const int64_t outer = int64_t(i) / (inner * axisLen);
      const int64_t along = (int64_t(i) / inner) % axisLen;
      s = size_t((outer * blocks + along / blockSize) * inner + int64_t(i) % inner);
    }
    out[i] = float((xs[i] - (zero ? zeros[s] : 0.0)) * scales[s]);
  }
  auto type = n.tensorType(xType.getShape(), outType);
  return n.setOutput(0, n.constant(floatConstant(type, out)));
}

/// com.microsoft MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?): Y = A @ W^T (+ bias),
/// W [N, K] from B [N, k_blocks, block_size * bits / 8] (values packed from the low bits up),
/// W[n, k] = (q[n, k] - zero[n, g]) * scales[n, g] with g = k / block_size (or g_idx[k]); zero
/// points packed like B (uint8) or of the scales' type, 2^(bits-1) when absent.
LogicalResult importMatMulNBits(NodeImporter &n) {
  auto aType = n.inputType(0);
  if (!aType)
    return failure();
  const int64_t K = n.attrInt("K", -1), N = n.attrInt("N", -1);
  const int64_t bits = n.attrInt("bits", 4), blockSize = n.attrInt("block_size", -1);
  if (K <= 0 || N <= 0)
    return n.fail("attributes K and N must be given and positive");
  if (K > kMaxElements / N)
    return n.fail("K x N = " + Twine(K) + " x " + Twine(N) + " is too large");
  if (bits != 2 && bits != 4 && bits != 8)
    return n.fail("unsupported quantization layout: bits " + Twine(bits) + " (supported 2, 4, 8)");
  if (blockSize < 16 || (blockSize & (blockSize - 1)))
    return n.fail("unsupported quantization layout: block_size " + Twine(blockSize) +
                  " (a power of two >= 16)");
  Type et = aType.getElementType();
  if (!isFloat16Or32(et))
    return n.fail("A must be float, float16 or bfloat16");
  if (aType.getRank() < 1 || aType.getShape().back() != K)
    return n.fail("A's last dimension must be K = " + Twine(K) + ", A is " +
                  shapeText(aType.getShape()));
  const int64_t kBlocks = (K + blockSize - 1) / blockSize;
  const int64_t blob = blockSize * bits / 8;
  DenseElementsAttr b = n.constantInput(1), scale = n.constantInput(2);
  if (!b || !scale)
    return n.fail("B and scales must be constants (quantized weights)");
  auto bInt = dyn_cast<IntegerType>(b.getElementType());
  if (!bInt || bInt.getWidth() != 8 || !bInt.isUnsigned() || b.getNumElements() != N * kBlocks * blob)
    return n.fail("B must be uint8 [N, k_blocks, blob] = [" + Twine(N) + ", " + Twine(kBlocks) +
                  ", " + Twine(blob) + "], is " + shapeText(b.getType().getShape()));
  if (scale.getElementType() != et || scale.getNumElements() != N * kBlocks)
    return n.fail("scales must be A's type with N * k_blocks = " + Twine(N * kBlocks) +
                  " values, are " + shapeText(scale.getType().getShape()));
  std::vector<double> zeros(size_t(N * kBlocks), double(1 << (bits - 1)));
  if (n.hasInput(3)) {
    DenseElementsAttr zero = n.constantInput(3);
    if (!zero)
      return n.fail("zero_points must be a constant");
    auto zInt = dyn_cast<IntegerType>(zero.getElementType());
    const int64_t packedPerRow = (kBlocks * bits + 7) / 8;
    if (zInt && zInt.getWidth() == 8 && zInt.isUnsigned() &&
        zero.getNumElements() == N * packedPerRow) {
      const std::vector<uint8_t> packed = bytesOf(zero);
      const int64_t perByte = 8 / bits;
      for (int64_t r = 0; r < N; ++r)
        for (int64_t g = 0; g < kBlocks; ++g) {
          const uint32_t byte = packed[size_t(r * packedPerRow + g / perByte)];
          zeros[size_t(r * kBlocks + g)] = double((byte >> ((g % perByte) * bits)) & ((1u << bits) - 1));
        }
    } else if (zero.getElementType() == et && zero.getNumElements() == N * kBlocks) {
      zeros = valuesOf(zero);
    } else {
      return n.fail("unsupported quantization layout: zero_points " +
                    shapeText(zero.getType().getShape()) + " (uint8 [N * " + Twine(packedPerRow) +
                    "] packed, or A's type [N * k_blocks])");
    }
  }
  // onnxruntime reads packed zero points differently once g_idx is given (measured against
  // onnxruntime 1.32 on CPU: float zero points and none agree, packed ones do not).
  if (n.hasInput(4) && n.hasInput(3) && isa<IntegerType>(n.constantInput(3).getElementType()))
    return n.fail("unsupported quantization layout: g_idx with packed uint8 zero_points");
  std::vector<int64_t> groupOf(static_cast<size_t>(K));
  for (int64_t k = 0; k < K; ++k)
    groupOf[size_t(k)] = k / blockSize;
  if (n.hasInput(4)) {
    DenseElementsAttr gIdx = n.constantInput(4);
    if (!gIdx || !isa<IntegerType>(gIdx.getElementType()) || gIdx.getNumElements() != K)
      return n.fail("g_idx must be a constant of K = " + Twine(K) + " integers");
    int64_t k = 0;
    for (const APInt &v : gIdx.getValues<APInt>()) {
      const int64_t g = v.getSExtValue();
      if (g < 0 || g >= kBlocks)
        return n.fail("g_idx[" + Twine(k) + "] = " + Twine(g) + " is not a block index below " +
                      Twine(kBlocks));
      groupOf[size_t(k++)] = g;
    }
  }
  const std::vector<double> scales = valuesOf(scale);
  const std::vector<uint8_t> q = bytesOf(b);
  const int64_t perByte = 8 / bits;
  // W^T [K, N], the MatMul's right operand.
  std::vector<float> wt(size_t(K * N));
  for (int64_t r = 0; r < N; ++r)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t blk = k / blockSize, j = k % blockSize;
      const uint32_t byte = q[size_t((r * kBlocks + blk) * blob + j / perByte)];
      const double code = double((byte >> ((j % perByte) * bits)) & ((1u << bits) - 1));
      const size_t g = size_t(r * kBlocks + groupOf[size_t(k)]);
      wt[size_t(k * N + r)] = float((code - zeros[g]) * scales[g]);
    }
  Value w = n.constant(floatConstant(n.tensorType({K, N}, et), wt));
  SmallVector<int64_t> shape(aType.getShape());
  shape.back() = N;
  Value y = MatMulOp::create(n.builder, n.loc, n.tensorType(shape, et), *n.input(0), w);
  if (n.hasInput(5)) {
    auto biasType = n.inputType(5);
    if (!biasType)
      return failure();
    if (biasType.getElementType() != et || biasType.getRank() != 1 || biasType.getDimSize(0) != N)
      return n.fail("bias must be A's type with shape [" + Twine(N) + "]");
    y = AddOp::create(n.builder, n.loc, n.tensorType(shape, et), y, *n.input(5));
  }
  return n.setOutput(0, y);
}

} // namespace

void registerQuantizedImports(OpImportRegistry &r) {
  r["DequantizeLinear"] = {importDequantizeLinear, 13};
}

void registerMicrosoftImports(OpImportRegistry &r) {
  r["MatMulNBits"] = {importMatMulNBits, 1};
}

} // namespace sinter::import
