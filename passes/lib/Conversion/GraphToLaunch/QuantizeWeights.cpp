#include "sinter/Passes/QuantizeWeights.h"

#include "launch_params.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

namespace kn = sinter::kernels;

namespace {

float bf16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

} // namespace

namespace sinter::fp8 {
namespace {

uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return uint16_t((bits >> 16) | 0x40u); // quiet, whatever the payload's low bits
  return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

/// Every e4m3fn value by its bits: dequantizing looks values up instead of decoding.
const std::array<float, 256> &e4m3Values() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int b = 0; b < 256; ++b)
      t[b] = decodeE4m3(uint8_t(b));
    return t;
  }();
  return table;
}

/// Whether `a` (an absolute value) counts towards a scale: NaN and infinity do not.
bool raisesMax(float a, float maxAbs) {
  return a > maxAbs && a <= std::numeric_limits<float>::max();
}

/// max|w| / 448 over a row's finite values, 1 when none is nonzero.
float scaleFor(float maxAbs) { return maxAbs > 0.0f ? maxAbs / kn::kFp8E4m3Max : 1.0f; }

} // namespace

float decodeE4m3(uint8_t bits) {
  const int exponent = (bits >> 3) & 0xF, mantissa = bits & 7;
  float magnitude;
  if ((bits & 0x7F) == 0x7F)
    magnitude = std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0)
    magnitude = std::ldexp(float(mantissa), -9);
  else
    magnitude = std::ldexp(1.0f + float(mantissa) / 8.0f, exponent - 7);
  return bits & 0x80 ? -magnitude : magnitude;
}

void quantizeRows(const uint16_t *w, int64_t rows, int64_t k, uint8_t *q, float *scale) {
  assert(k % 64 == 0 && "linear_small_m's fp8 rows are whole 64-wide chunks");
  int chunkK[64];
  for (int p = 0; p < 64; ++p)
    chunkK[p] = kn::linear_fp8_chunk_k(p);
  std::vector<float> row(k);
  for (int64_t r = 0; r < rows; ++r) {
    float maxAbs = 0.0f;
    for (int64_t i = 0; i < k; ++i) {
      row[i] = bf16ToFloat(w[r * k + i]);
      if (raisesMax(std::fabs(row[i]), maxAbs))
        maxAbs = std::fabs(row[i]);
    }
    const float s = scaleFor(maxAbs);
    scale[r] = s;
    uint8_t *out = q + r * k;
    for (int64_t c = 0; c < k; c += 64)
      for (int p = 0; p < 64; ++p)
        out[c + p] = encodeE4m3(row[c + chunkK[p]] / s);
  }
}

void dequantizedColumns(const uint16_t *w, int64_t k, int64_t n, uint16_t *out) {
  const std::array<float, 256> &values = e4m3Values();
  // Both passes read the matrix in memory order, every column's running max at hand.
  std::vector<float> scale(n, 0.0f);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t c = 0; c < n; ++c) {
      const float a = std::fabs(bf16ToFloat(w[i * n + c]));
      if (raisesMax(a, scale[c]))
        scale[c] = a;
    }
  for (float &s : scale)
    s = scaleFor(s);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t c = 0; c < n; ++c) {
      const float s = scale[c];
      out[i * n + c] = floatToBf16(s * values[encodeE4m3(bf16ToFloat(w[i * n + c]) / s)]);
    }
}

} // namespace sinter::fp8

namespace sinter::int4 {
namespace {

/// Whether `a` (an absolute value) counts towards a scale: NaN and infinity do not.
bool raisesMax(float a, float maxAbs) {
  return a > maxAbs && a <= std::numeric_limits<float>::max();
}

/// Round-to-nearest-even of a double to bf16 bits (a single rounding: the exact value, not its
/// fp32 rounding, decides).
uint16_t doubleToBf16(double d) {
  if (d != d)
    return 0x7FC0;
  const uint16_t sign = std::signbit(d) ? 0x8000u : 0u;
  const double magnitude = std::fabs(d);
  if (magnitude == 0.0)
    return sign;
  // The nearest multiple of the bf16 ulp at this magnitude, ties to even, by exact scaling.
  int exponent;
  std::frexp(magnitude, &exponent);          // magnitude in [2^(exponent-1), 2^exponent)
  int ulpExp = std::max(exponent - 8, -133); // 8 significant bits; subnormals' ulp is 2^-133
  const double units = std::nearbyint(std::ldexp(magnitude, -ulpExp)); // ties to even
  const double rounded = std::ldexp(units, ulpExp);
  if (rounded > double(std::numeric_limits<float>::max()))
    return sign | 0x7F80u; // past the largest bf16 (which is below fp32's): infinity
  const float value = float(rounded); // exact: a bf16 value
  uint32_t f;
  std::memcpy(&f, &value, sizeof f);
  return sign | uint16_t(f >> 16);
}

} // namespace

void quantizeGroups(const uint16_t *w, int64_t rows, int64_t k, int64_t group, uint8_t *q,
                    float *scale) {
  assert(k % kn::kLinearInt4BlockK == 0 && group > 0 && k % group == 0 &&
         "linear_small_m's int4 rows are whole 128-wide blocks of whole groups");
  int blockK[kn::kLinearInt4BlockK];
  for (int p = 0; p < kn::kLinearInt4BlockK; ++p)
    blockK[p] = kn::linear_int4_block_k(p);
  const int64_t groups = k / group;
  std::vector<float> row(k);
  std::vector<uint8_t> nibble(k);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < k; ++i)
      row[i] = bf16ToFloat(w[r * k + i]);
    for (int64_t g = 0; g < groups; ++g) {
      float maxAbs = 0.0f;
      for (int64_t i = g * group; i < (g + 1) * group; ++i)
        if (raisesMax(std::fabs(row[i]), maxAbs))
          maxAbs = std::fabs(row[i]);
      const float s = groupScale(maxAbs);
      scale[r * groups + g] = s;
      for (int64_t i = g * group; i < (g + 1) * group; ++i)
        nibble[i] = encodeNibble(row[i] / s);
    }
    uint8_t *out = q + r * (k / 2);
    for (int64_t b = 0; b < k; b += kn::kLinearInt4BlockK)
      for (int p = 0; p < kn::kLinearInt4BlockK; p += 2)
        out[(b + p) / 2] =
            uint8_t(nibble[b + blockK[p]] | (nibble[b + blockK[p + 1]] << 4));
  }
}

uint16_t dequantizedBf16(float scale, uint8_t nibble) {
  // 24 + 4 significant bits: the product is exact in double.
  return doubleToBf16(double(scale) * double(int(nibble) - 8));
}

void dequantizedColumns(const uint16_t *w, int64_t k, int64_t n, int64_t group, uint16_t *out) {
  assert(group > 0 && k % group == 0 && "whole groups");
  std::vector<float> scale(n);
  for (int64_t g0 = 0; g0 < k; g0 += group) {
    // Both passes read the group's rows in memory order, every column's running max at hand.
    std::fill(scale.begin(), scale.end(), 0.0f);
    for (int64_t i = g0; i < g0 + group; ++i)
      for (int64_t c = 0; c < n; ++c) {
        const float a = std::fabs(bf16ToFloat(w[i * n + c]));
        if (raisesMax(a, scale[c]))
          scale[c] = a;
      }
    for (float &s : scale)
      s = groupScale(s);
    for (int64_t i = g0; i < g0 + group; ++i)
      for (int64_t c = 0; c < n; ++c)
        out[i * n + c] =
            dequantizedBf16(scale[c], encodeNibble(bf16ToFloat(w[i * n + c]) / scale[c]));
  }
}

} // namespace sinter::int4
