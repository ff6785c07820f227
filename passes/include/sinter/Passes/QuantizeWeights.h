// fp8 weights (--weight-dtype fp8): e4m3fn values with one fp32 scale per output row, and int4
// weights (--weight-dtype int4): 4-bit integers with one fp32 scale per output row and group of
// k, in the layouts linear_small_m streams them (runtime/kernels/launch_params.h, "fp8 weights"
// and "int4 weights").
// Plain C++ over raw bits: a 1B model has ~1.2 billion weights, so no APFloat per element.
#ifndef SINTER_PASSES_QUANTIZEWEIGHTS_H
#define SINTER_PASSES_QUANTIZEWEIGHTS_H

#include <cstdint>
#include <cstring>

namespace sinter::fp8 {

/// The e4m3fn bits nearest `f`, ties to even (subnormals are m * 2^-9). Magnitudes from 464
/// (half a step past 448) up, infinities included, saturate to +-448 where IEEE rounding would
/// overflow: e4m3fn has no infinity and 0x7F / 0xFF are NaN. A NaN stays NaN.
inline uint8_t encodeE4m3(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const uint8_t sign = uint8_t((bits >> 24) & 0x80u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u)
    return sign | 0x7Fu;
  if (magnitude >= 0x43E80000u) // 464.0f; 464 itself ties to 448, the even neighbour
    return sign | 0x7Eu;
  if (magnitude >= 0x3C800000u) { // 2^-6, the smallest normal: keep 3 of 23 mantissa bits
    const uint32_t rounded = magnitude + 0x7FFFFu + ((magnitude >> 20) & 1u);
    return sign | uint8_t((rounded >> 20) - ((127u - 7u) << 3));
  }
  // m = |f| * 2^9 rounded to an integer (even on a tie) by the addition of 2^23, whose last
  // mantissa bit is worth 1; m = 8 reads as 0x08, the smallest normal.
  float scaled;
  std::memcpy(&scaled, &magnitude, sizeof scaled);
  scaled = scaled * 512.0f + 8388608.0f;
  uint32_t m;
  std::memcpy(&m, &scaled, sizeof m);
  return sign | uint8_t(m - 0x4B000000u);
}

/// The value of e4m3fn bits (NaN for 0x7F and 0xFF).
float decodeE4m3(uint8_t bits);

/// Per-row quantization of a [rows, k] bf16 matrix (raw bits, row-major; k a multiple of 64)
/// into linear_small_m's fp8 layout: scale[r] = max|w[r, :]| / 448 (1 for an all-zero row;
/// non-finite values do not count), q[r, :] = e4m3(w[r, :] / scale[r]), and within every
/// 64-wide chunk of a row byte p holds k = linear_fp8_chunk_k(p) of the chunk.
void quantizeRows(const uint16_t *w, int64_t rows, int64_t k, uint8_t *q, float *scale);

/// A [k, n] row-major bf16 matrix (the graph's weight layout) through the fp8 weights of its
/// columns and back: out[i, c] = bf16(scale[c] * e4m3(q[i, c])), the product in fp32, with the
/// scale and q quantizeRows gives column c taken as a row. What a library GEMM multiplies
/// where the kernels read fp8, so that both compute with the same weights.
void dequantizedColumns(const uint16_t *w, int64_t k, int64_t n, uint16_t *out);

} // namespace sinter::fp8

namespace sinter::int4 {

/// The stored nibble of one weight: clamp(round_half_even(v), -8, 7) + 8 for v = w / scale;
/// +-infinity clamp to 15 / 0 and NaN becomes 8 (zero).
inline uint8_t encodeNibble(float v) {
  if (!(v == v))
    return 8;
  if (v >= 7.0f)
    return 15;
  if (v <= -8.0f)
    return 0;
  // |v| < 8: adding 1.5 * 2^23 rounds it to an integer, ties to even (the sum's last mantissa
  // bit is worth 1, and 1.5 * 2^23 is even), and subtracting it again is exact. IEEE
  // arithmetic: without -ffast-math the compiler keeps both operations.
  const float rounded = (v + 12582912.0f) - 12582912.0f;
  return uint8_t(int(rounded) + 8);
}

/// The group scale of weights whose largest finite magnitude is `maxAbs`: maxAbs / 7, or 1 for
/// a group without a nonzero finite value.
inline float groupScale(float maxAbs) { return maxAbs > 0.0f ? maxAbs / 7.0f : 1.0f; }

/// Symmetric group-wise quantization of a [rows, k] bf16 matrix (raw bits, row-major; k a
/// multiple of kLinearInt4BlockK and of `group`) into linear_small_m's int4 layout:
/// scale[r, g] = max|w[r, g*group .. (g+1)*group)| / 7 over the finite values (1 for a group
/// without a nonzero one), nibble = encodeNibble(w / scale) (q - 8 in [-8, 7]), packed two to a
/// byte into q [rows, k / 2]; within every 128-wide block of a row nibble p (byte p / 2, low
/// nibble first) holds k = linear_int4_block_k(p) of the block. scale is [rows, k / group].
void quantizeGroups(const uint16_t *w, int64_t rows, int64_t k, int64_t group, uint8_t *q,
                    float *scale);

/// The bf16 bits nearest the exact product scale * (nibble - 8) (ties to even): the value a
/// dequantized weight holds.
uint16_t dequantizedBf16(float scale, uint8_t nibble);

/// A [k, n] row-major bf16 matrix (the graph's weight layout) through the int4 weights of its
/// columns and back: out[i, c] = dequantizedBf16(scale[c, i / group], nibble[c, i]), with the
/// scales and nibbles quantizeGroups gives column c taken as a row (k a multiple of group).
/// What a library GEMM multiplies where the kernels read int4.
void dequantizedColumns(const uint16_t *w, int64_t k, int64_t n, int64_t group, uint16_t *out);

} // namespace sinter::int4

#endif
