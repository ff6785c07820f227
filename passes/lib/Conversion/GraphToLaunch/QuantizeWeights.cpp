#include "sinter/Passes/QuantizeWeights.h"

#include "launch_params.h"

#include <array>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

namespace kn = sinter::kernels;

namespace sinter::fp8 {
namespace {

float bf16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

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
