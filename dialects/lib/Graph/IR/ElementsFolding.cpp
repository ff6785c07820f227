#include "sinter/Dialect/Graph/IR/ElementsFolding.h"

#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir;

namespace sinter::graph {

std::optional<HostValues> readValues(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  HostValues out;
  Type et = dense.getElementType();
  if (et.isF32() || et.isBF16() || et.isF16()) { // bit-level reads (exact in float)
    out.isFloat = true;
    std::vector<float> values = readFloat32(dense);
    out.floats.assign(values.begin(), values.end());
  } else if (et.isF64()) {
    out.isFloat = true;
    auto values = dense.getValues<double>();
    out.floats.assign(values.begin(), values.end());
  } else if (isa<FloatType>(et)) {
    out.isFloat = true;
    out.floats.reserve(dense.getNumElements());
    for (const APFloat &v : dense.getValues<APFloat>())
      out.floats.push_back(v.convertToDouble());
  } else if (auto it = dyn_cast<IntegerType>(et)) {
    // Signless and signed integers read sign-extended at their width, booleans as 0 / 1.
    auto assign = [&](auto values) { out.ints.assign(values.begin(), values.end()); };
    bool signExtended = !it.isUnsigned();
    if (it.getWidth() == 1)
      assign(dense.getValues<bool>());
    else if (signExtended && it.getWidth() == 8)
      assign(dense.getValues<int8_t>());
    else if (signExtended && it.getWidth() == 16)
      assign(dense.getValues<int16_t>());
    else if (signExtended && it.getWidth() == 32)
      assign(dense.getValues<int32_t>());
    else if (signExtended && it.getWidth() == 64)
      assign(dense.getValues<int64_t>());
    else {
      out.ints.reserve(dense.getNumElements());
      // Unsigned values read zero-extended (a uint64 past INT64_MAX wraps to negative).
      for (const APInt &v : dense.getValues<APInt>())
        out.ints.push_back(signExtended ? v.getSExtValue() : int64_t(v.getZExtValue()));
    }
  } else {
    return std::nullopt;
  }
  return out;
}

namespace {
/// `value` rounded to float toward an odd last bit when inexact: rounding that float to 16 bits
/// (8 or 11 significant bits of float's 24) then gives the correctly rounded result of `value`
/// itself, with no double rounding.
float roundToOddFloat(double value) {
  float f = (float)value;
  if (std::isfinite(f) && (double)f != value) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 1u) == 0) // rounded to the even neighbour: the odd one is on value's other side
      f = std::nextafter(f, value > (double)f ? INFINITY : -INFINITY);
  }
  return f;
}
} // namespace

DenseElementsAttr makeElements(RankedTensorType type, const HostValues &values) {
  Type et = type.getElementType();
  if (et.isF32() || et.isBF16() || et.isF16()) {
    std::vector<float> narrowed(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      narrowed[i] = et.isF32() ? (float)values.asDouble(i) : roundToOddFloat(values.asDouble(i));
    return fromFloat32(type, narrowed);
  }
  if (et.isF64()) {
    std::vector<double> data(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      data[i] = values.asDouble(i);
    return DenseElementsAttr::get(type, llvm::ArrayRef<double>(data));
  }
  if (auto ft = dyn_cast<FloatType>(et)) {
    SmallVector<APFloat> data;
    data.reserve(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      APFloat v(values.asDouble(i));
      bool lost;
      v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      data.push_back(v);
    }
    return DenseElementsAttr::get(type, data);
  }
  auto it = cast<IntegerType>(et);
  // Truncated to the width, as APInt(width, v, true) does.
  auto build = [&](auto zero) {
    std::vector<decltype(zero)> data(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      data[i] = (decltype(zero))values.asInt(i);
    return DenseElementsAttr::get(type, llvm::ArrayRef<decltype(zero)>(data));
  };
  if (it.getWidth() == 1) {
    SmallVector<bool> data(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      data[i] = values.asInt(i) != 0;
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(data));
  }
  if (!it.isUnsigned() && it.getWidth() == 8)
    return build(int8_t());
  if (!it.isUnsigned() && it.getWidth() == 16)
    return build(int16_t());
  if (!it.isUnsigned() && it.getWidth() == 32)
    return build(int32_t());
  if (!it.isUnsigned() && it.getWidth() == 64)
    return build(int64_t());
  SmallVector<APInt> data;
  data.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    data.push_back(APInt(it.getWidth(), uint64_t(values.asInt(i)), /*isSigned=*/false,
                         /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, data);
}

BroadcastWalk::BroadcastWalk(ArrayRef<int64_t> outShape, ArrayRef<int64_t> srcShape)
    : extents(outShape), strides(outShape.size(), 0), coords(outShape.size(), 0) {
  size_t offset = outShape.size() - srcShape.size();
  int64_t stride = 1;
  for (size_t d = srcShape.size(); d-- > 0;) {
    if (srcShape[d] != 1)
      strides[d + offset] = stride;
    stride *= srcShape[d];
  }
}

int64_t broadcastSourceIndex(int64_t flat, ArrayRef<int64_t> outShape,
                             ArrayRef<int64_t> srcShape) {
  int64_t src = 0, srcStride = 1;
  size_t offset = outShape.size() - srcShape.size();
  for (int64_t d = (int64_t)outShape.size() - 1; d >= 0; --d) {
    int64_t coord = flat % outShape[d];
    flat /= outShape[d];
    if (d < (int64_t)offset)
      continue;
    int64_t extent = srcShape[d - offset];
    if (extent != 1)
      src += coord * srcStride;
    srcStride *= extent;
  }
  return src;
}

Attribute foldBinary(Attribute lhs, Attribute rhs, RankedTensorType resultType,
                     const BinaryFn &floatFn, const BinaryIntFn &intFn) {
  if (!lhs || !rhs || resultType.getNumElements() > kMaxFoldElements)
    return {};
  auto a = readValues(lhs), b = readValues(rhs);
  if (!a || !b || resultType.getNumElements() > kMaxFoldElements)
    return {};
  auto aShape = cast<ShapedType>(cast<DenseElementsAttr>(lhs).getType()).getShape();
  auto bShape = cast<ShapedType>(cast<DenseElementsAttr>(rhs).getType()).getShape();
  auto outShape = resultType.getShape();
  HostValues out;
  bool useFloat = a->isFloat || b->isFloat;
  out.isFloat = useFloat;
  if (useFloat)
    out.floats.reserve(resultType.getNumElements());
  else
    out.ints.reserve(resultType.getNumElements());
  BroadcastWalk walkA(outShape, aShape), walkB(outShape, bShape);
  for (int64_t i = 0, e = resultType.getNumElements(); i < e;
       ++i, walkA.next(), walkB.next()) {
    int64_t ia = walkA.index(), ib = walkB.index();
    if (useFloat)
      out.floats.push_back(floatFn(a->asDouble(ia), b->asDouble(ib)));
    else
      out.ints.push_back(intFn(a->ints[ia], b->ints[ib]));
  }
  return makeElements(resultType, out);
}

Attribute foldUnary(Attribute input, RankedTensorType resultType,
                    const std::function<double(double)> &fn) {
  auto a = readValues(input);
  if (!a)
    return {};
  HostValues out;
  out.isFloat = true;
  for (size_t i = 0; i < a->size(); ++i)
    out.floats.push_back(fn(a->asDouble(i)));
  if (!isa<FloatType>(resultType.getElementType())) {
    out.isFloat = false;
    for (double v : out.floats)
      out.ints.push_back((int64_t)v);
  }
  return makeElements(resultType, out);
}

namespace {
/// The transpose loop for one element size: a fixed-size copy per element (a memcpy of a
/// run-time size would be a libc call per element, minutes on a model's weights).
template <typename Word>
void transposeWords(const char *raw, char *out, int64_t n, ArrayRef<int64_t> outShape,
                    ArrayRef<int64_t> srcStrides, bool swapsLastTwo) {
  const Word *src = reinterpret_cast<const Word *>(raw);
  Word *dst = reinterpret_cast<Word *>(out);
  int64_t rank = outShape.size();
  // A swap of the last two axes (a weight's [K, N] -> [N, K]) in 64 x 64 tiles, so both
  // sides stay in cache: element-wise it strides a whole row per element.
  constexpr int64_t kTile = 64;
  if (swapsLastTwo) {
    int64_t rows = outShape[rank - 2], cols = outShape[rank - 1], plane = rows * cols;
    for (int64_t base = 0; base < n; base += plane)
      for (int64_t r0 = 0; r0 < rows; r0 += kTile)
        for (int64_t c0 = 0; c0 < cols; c0 += kTile)
          for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r)
            for (int64_t c = c0; c < std::min(cols, c0 + kTile); ++c)
              std::memcpy(&dst[base + r * cols + c], &src[base + c * rows + r], sizeof(Word));
    return;
  }
  SmallVector<int64_t> coord(rank, 0);
  int64_t inner = rank ? outShape[rank - 1] : 1, innerStride = rank ? srcStrides[rank - 1] : 0;
  for (int64_t i = 0; i < n; i += inner) {
    int64_t base = 0;
    for (int64_t d = 0; d + 1 < rank; ++d)
      base += coord[d] * srcStrides[d];
    for (int64_t j = 0; j < inner; ++j)
      std::memcpy(&dst[i + j], &src[base + j * innerStride], sizeof(Word));
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++coord[d] < outShape[d])
        break;
      coord[d] = 0;
    }
  }
}
} // namespace

namespace {
// Booleans are stored one bit each: permuted as host values instead of raw words.
DenseElementsAttr transposeBooleans(DenseElementsAttr input, ArrayRef<int64_t> perm,
                                   RankedTensorType resultType) {
  std::optional<HostValues> values = readValues(input);
  if (!values)
    return {};
  auto inShape = input.getType().getShape();
  auto outShape = resultType.getShape();
  int64_t rank = inShape.size();
  SmallVector<int64_t> inStrides(rank, 1), coords(rank, 0);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * inShape[d + 1];
  HostValues out;
  out.ints.reserve(values->ints.size());
  for (size_t n = 0; n < values->ints.size(); ++n) {
    int64_t source = 0;
    for (int64_t d = 0; d < rank; ++d)
      source += coords[d] * inStrides[perm[d]];
    out.ints.push_back(values->ints[source]);
    for (int64_t d = rank - 1; d >= 0 && ++coords[d] == outShape[d]; --d)
      coords[d] = 0;
  }
  return makeElements(resultType, out);
}
} // namespace

DenseElementsAttr transposeElements(DenseElementsAttr input, ArrayRef<int64_t> perm,
                                    RankedTensorType resultType) {
  if (input.isSplat())
    return input.resizeSplat(resultType);
  Type et = input.getElementType();
  if (et.isInteger(1))
    return transposeBooleans(input, perm, resultType);
  if (et.getIntOrFloatBitWidth() % 8 != 0)
    return {};
  size_t elemBytes = et.getIntOrFloatBitWidth() / 8;
  ArrayRef<char> raw = input.getRawData();
  auto inShape = input.getType().getShape();
  int64_t rank = inShape.size(), n = input.getNumElements();
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * inShape[d + 1];
  // Output dimension d walks input dimension perm[d].
  SmallVector<int64_t> srcStrides;
  for (int64_t d = 0; d < rank; ++d)
    srcStrides.push_back(inStrides[perm[d]]);
  auto outShape = resultType.getShape();
  bool swapsLastTwo = rank >= 2 && perm[rank - 1] == rank - 2 && perm[rank - 2] == rank - 1;
  for (int64_t d = 0; d + 2 < rank; ++d)
    swapsLastTwo = swapsLastTwo && perm[d] == d;
  std::vector<char> out(raw.size());
  if (n > 0) {
    switch (elemBytes) {
    case 1: transposeWords<uint8_t>(raw.data(), out.data(), n, outShape, srcStrides, swapsLastTwo); break;
    case 2: transposeWords<uint16_t>(raw.data(), out.data(), n, outShape, srcStrides, swapsLastTwo); break;
    case 4: transposeWords<uint32_t>(raw.data(), out.data(), n, outShape, srcStrides, swapsLastTwo); break;
    case 8: transposeWords<uint64_t>(raw.data(), out.data(), n, outShape, srcStrides, swapsLastTwo); break;
    default: return {};
    }
  }
  return DenseElementsAttr::getFromRawBuffer(resultType, out);
}

std::vector<float> readFloat32(DenseElementsAttr input) {
  int64_t n = input.getNumElements();
  std::vector<float> out(n);
  Type et = input.getElementType();
  if (input.isSplat()) {
    std::fill(out.begin(), out.end(),
              (float)input.getSplatValue<APFloat>().convertToDouble());
    return out;
  }
  ArrayRef<char> raw = input.getRawData();
  if (et.isF32()) {
    std::memcpy(out.data(), raw.data(), n * sizeof(float));
  } else if (et.isBF16()) {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits = (uint32_t)(uint8_t)raw[2 * i] | ((uint32_t)(uint8_t)raw[2 * i + 1] << 8);
      bits <<= 16;
      std::memcpy(&out[i], &bits, 4);
    }
  } else if (et.isF16()) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = widenF16Bits(uint16_t((uint8_t)raw[2 * i] | ((uint8_t)raw[2 * i + 1] << 8)));
  } else {
    int64_t i = 0;
    for (const APFloat &v : input.getValues<APFloat>())
      out[i++] = (float)v.convertToDouble();
  }
  return out;
}

uint16_t roundToF16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u, magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return uint16_t(sign | 0x7e00u); // quiet NaN
  if (magnitude >= 0x477ff000u)      // 65520 and above round to infinity
    return uint16_t(sign | 0x7c00u);
  uint32_t half, rest, halfway;
  if (magnitude < 0x38800000u) {      // below 2^-14: a subnormal half, or zero
    if (magnitude <= 0x33000000u)     // up to 2^-25 (half the smallest subnormal): zero
      return uint16_t(sign);
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    const int shift = 126 - int(magnitude >> 23); // 14..24
    half = mantissa >> shift;
    rest = mantissa & ((1u << shift) - 1u);
    halfway = 1u << (shift - 1);
  } else {
    half = (magnitude - 0x38000000u) >> 13; // exponent rebiased by 112, 10 mantissa bits
    rest = magnitude & 0x1fffu;
    halfway = 0x1000u;
  }
  if (rest > halfway || (rest == halfway && (half & 1u)))
    ++half; // a carry into the exponent is the right encoding
  return uint16_t(sign | half);
}

float widenF16Bits(uint16_t bits) {
  const uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  uint32_t out;
  if (exponent == 0) {
    const float magnitude = float(mantissa) * 0x1p-24f; // exact: a subnormal or zero
    std::memcpy(&out, &magnitude, 4);
    out |= sign;
  } else if (exponent == 31) {
    out = sign | 0x7f800000u | (mantissa << 13);
  } else {
    out = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &out, 4);
  return value;
}

DenseElementsAttr fromFloat32(RankedTensorType type, ArrayRef<float> values) {
  Type et = type.getElementType();
  if (et.isF32())
    return DenseElementsAttr::get(type, values);
  if (et.isBF16()) {
    std::vector<char> raw(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, &values[i], 4);
      if ((bits & 0x7fffffffu) > 0x7f800000u) {
        bits = 0x7fc00000u; // quiet NaN
      } else {
        bits += 0x7fffu + ((bits >> 16) & 1u); // round to nearest even
      }
      raw[2 * i] = (char)((bits >> 16) & 0xff);
      raw[2 * i + 1] = (char)(bits >> 24);
    }
    return DenseElementsAttr::getFromRawBuffer(type, raw);
  }
  if (et.isF16()) {
    std::vector<char> raw(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t bits = roundToF16Bits(values[i]);
      raw[2 * i] = (char)(bits & 0xff);
      raw[2 * i + 1] = (char)(bits >> 8);
    }
    return DenseElementsAttr::getFromRawBuffer(type, raw);
  }
  auto ft = cast<FloatType>(et);
  SmallVector<APFloat> data;
  for (float v : values) {
    APFloat f(v);
    bool lost;
    f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    data.push_back(f);
  }
  return DenseElementsAttr::get(type, data);
}

} // namespace sinter::graph
