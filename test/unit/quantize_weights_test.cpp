// fp8 weights (--weight-dtype fp8): the bit-level e4m3fn encoder against llvm::APFloat, and the
// per-row quantizer against the kernel contract in launch_params.h ("fp8 weights"). int4 weights
// (--weight-dtype int4): the group quantizer against a plain reference written from the
// contract ("int4 weights"), and its dequantized bf16 values against APFloat's rounding.
#include "sinter/Passes/QuantizeWeights.h"

#include "launch_params.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <vector>

namespace {

namespace fp8 = sinter::fp8;
namespace int4 = sinter::int4;
namespace kn = sinter::kernels;

/// What APFloat rounds `f` to in Float8E4M3FN, nearest even (NaN past 464: no infinity).
uint8_t apfloatE4m3(float f) {
  llvm::APFloat value(f);
  bool losesInfo = false;
  value.convert(llvm::APFloat::Float8E4M3FN(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return uint8_t(value.bitcastToAPInt().getZExtValue());
}

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t bf16Of(float f) { // the test's values are exact in bf16
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  EXPECT_EQ(bits & 0xFFFFu, 0u) << f << " is not a bf16 value";
  return uint16_t(bits >> 16);
}

float floatOf(uint16_t bf16) { return bitsToFloat(uint32_t(bf16) << 16); }

uint32_t floatBitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

bool isNaN(uint8_t bits) { return (bits & 0x7F) == 0x7F; }

/// Every finite e4m3fn value, ascending from +0.
std::vector<float> positiveValues() {
  std::vector<float> values;
  for (int b = 0; b < 0x7F; ++b)
    values.push_back(fp8::decodeE4m3(uint8_t(b)));
  return values;
}

TEST(Fp8Encoder, DecodesEveryValueAsAPFloat) {
  for (int b = 0; b < 256; ++b) {
    llvm::APFloat reference(llvm::APFloat::Float8E4M3FN(), llvm::APInt(8, b));
    float value = fp8::decodeE4m3(uint8_t(b));
    if (isNaN(uint8_t(b))) {
      EXPECT_TRUE(std::isnan(value)) << b;
      EXPECT_TRUE(reference.isNaN()) << b;
      continue;
    }
    EXPECT_EQ(value, reference.convertToFloat()) << b;
    EXPECT_EQ(std::signbit(value), reference.isNegative()) << b;
  }
  EXPECT_EQ(fp8::decodeE4m3(0x01), std::ldexp(1.0f, -9)); // smallest subnormal
  EXPECT_EQ(fp8::decodeE4m3(0x08), std::ldexp(1.0f, -6)); // smallest normal
  EXPECT_EQ(fp8::decodeE4m3(0x7E), kn::kFp8E4m3Max);
}

TEST(Fp8Encoder, EncodesEveryValueToItself) {
  for (int b = 0; b < 256; ++b)
    if (!isNaN(uint8_t(b)))
      EXPECT_EQ(fp8::encodeE4m3(fp8::decodeE4m3(uint8_t(b))), b) << b;
}

TEST(Fp8Encoder, RoundsMidpointsAndTheirNeighboursAsAPFloat) {
  std::vector<float> values = positiveValues();
  int checked = 0;
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    // Exact in fp32: the two differ by at most 5 significant bits.
    float mid = (values[i] + values[i + 1]) / 2;
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1000.0f)})
      for (float signed_ : {f, -f}) {
        EXPECT_EQ(fp8::encodeE4m3(signed_), apfloatE4m3(signed_)) << signed_;
        ++checked;
      }
  }
  EXPECT_EQ(checked, 126 * 6);
  // Ties go to the even neighbour: 2^-9 * 0.5 -> 0, 2^-9 * 1.5 -> 2 * 2^-9, 1.0625 -> 1.
  EXPECT_EQ(fp8::encodeE4m3(std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(fp8::encodeE4m3(std::ldexp(3.0f, -10)), 0x02);
  EXPECT_EQ(fp8::encodeE4m3(1.0625f), 0x38);
  EXPECT_EQ(fp8::encodeE4m3(1.1875f), 0x3A);
  // The largest subnormal's upper midpoint rounds to the smallest normal.
  EXPECT_EQ(fp8::encodeE4m3(std::ldexp(7.5f, -9)), 0x08);
}

TEST(Fp8Encoder, RoundsRandomFloatsAsAPFloat) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  int checked = 0;
  for (int i = 0; i < 400000; ++i) {
    // Half of them anywhere, half with exponents around e4m3's range (2^-12 .. 2^9).
    uint32_t b = bits(rng);
    if (i % 2)
      b = (b & 0x807FFFFFu) | ((115u + b % 22u) << 23);
    float f = bitsToFloat(b);
    if (std::isnan(f) || std::fabs(f) >= 464.0f)
      continue;
    ASSERT_EQ(fp8::encodeE4m3(f), apfloatE4m3(f)) << f << " (bits 0x" << std::hex << b << ")";
    ++checked;
  }
  EXPECT_GT(checked, 200000);
}

TEST(Fp8Encoder, SaturatesInsteadOfOverflowing) {
  // APFloat rounds past the largest value to NaN (e4m3fn has no infinity); weights saturate.
  EXPECT_TRUE(isNaN(apfloatE4m3(500.0f)));
  for (float f : {448.0f, 463.99f, 464.0f, 464.01f, 480.0f, 1e30f,
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity()}) {
    EXPECT_EQ(fp8::encodeE4m3(f), 0x7E) << f;
    EXPECT_EQ(fp8::encodeE4m3(-f), 0xFE) << -f;
  }
  EXPECT_EQ(apfloatE4m3(464.0f), 0x7E); // the tie goes to the even 448 in both
  EXPECT_TRUE(isNaN(fp8::encodeE4m3(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(fp8::encodeE4m3(-0.0f), 0x80);
  EXPECT_EQ(fp8::encodeE4m3(std::numeric_limits<float>::denorm_min()), 0x00);
}

TEST(Fp8Layout, ChunkPermutationIsTheLanesLoadOrder) {
  // Lane t's 16 bytes: k 8t..8t+7, then 32+8t..32+8t+7.
  std::set<int> seen;
  for (int p = 0; p < 64; ++p) {
    int lane = p / 16, half = p % 16 / 8, j = p % 8;
    EXPECT_EQ(kn::linear_fp8_chunk_k(p), half * 32 + lane * 8 + j) << p;
    seen.insert(kn::linear_fp8_chunk_k(p));
  }
  EXPECT_EQ(seen.size(), 64u);
  EXPECT_EQ(*seen.rbegin(), 63);
}

/// A [rows, k] bf16 matrix quantized by quantizeRows.
struct Quantized {
  std::vector<uint8_t> q;
  std::vector<float> scale;
};
Quantized quantize(const std::vector<float> &w, int64_t rows, int64_t k) {
  std::vector<uint16_t> bits;
  for (float f : w)
    bits.push_back(bf16Of(f));
  Quantized out{std::vector<uint8_t>(rows * k, 0xAA), std::vector<float>(rows, -1.0f)};
  fp8::quantizeRows(bits.data(), rows, k, out.q.data(), out.scale.data());
  return out;
}

TEST(Fp8Quantizer, ScalesEachRowByItsLargestMagnitude) {
  const int64_t k = 128;
  std::vector<float> w(2 * k);
  for (int64_t i = 0; i < k; ++i) {
    w[i] = float(i % 9 - 4) / 8;          // row 0: max |w| = 0.5
    w[k + i] = float(i % 5 + 1) * 0.75f;  // row 1: max |w| = 3.75
  }
  w[77] = -3.0f; // row 0's largest magnitude is negative
  Quantized q = quantize(w, 2, k);
  EXPECT_EQ(q.scale[0], 3.0f / 448.0f);
  EXPECT_EQ(q.scale[1], 3.75f / 448.0f);
  // The largest magnitude is +-448 in e4m3.
  for (int64_t p = 0; p < k; ++p) {
    int64_t kk = p / 64 * 64 + kn::linear_fp8_chunk_k(p % 64);
    if (kk == 77)
      EXPECT_EQ(q.q[p], 0xFE);
    // Three mantissa bits: every value within 2^-4 of itself (these are all normal).
    for (int r = 0; r < 2; ++r) {
      float back = q.scale[r] * fp8::decodeE4m3(q.q[r * k + p]);
      EXPECT_NEAR(back, w[r * k + kk], std::fabs(w[r * k + kk]) / 16 + 1e-7f) << r << " " << p;
    }
  }
}

TEST(Fp8Quantizer, PermutesTheBytesOfEveryChunk) {
  const int64_t rows = 3, k = 192;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(-120, 120);
  std::vector<float> w(rows * k);
  for (float &v : w)
    v = float(small(rng)) / 64; // exact in bf16
  Quantized q = quantize(w, rows, k);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < k; c += 64)
      for (int p = 0; p < 64; ++p)
        ASSERT_EQ(q.q[r * k + c + p],
                  fp8::encodeE4m3(w[r * k + c + kn::linear_fp8_chunk_k(p)] / q.scale[r]))
            << r << " " << c << " " << p;
}

TEST(Fp8Quantizer, AllZeroRowHasScaleOne) {
  std::vector<float> w(2 * 64, 0.0f);
  w[64 + 5] = -0.0f;
  w[64 + 9] = 0.25f;
  Quantized q = quantize(w, 2, 64);
  EXPECT_EQ(q.scale[0], 1.0f);
  for (int p = 0; p < 64; ++p)
    EXPECT_EQ(q.q[p], 0x00) << p;
  EXPECT_EQ(q.scale[1], 0.25f / 448.0f);
}

TEST(Fp8Quantizer, SaturatesNonFiniteValuesAndKeepsNaN) {
  std::vector<float> w(2 * 64, 0.5f);
  w[3] = std::numeric_limits<float>::infinity();
  w[4] = -std::numeric_limits<float>::infinity();
  w[5] = 2.0f;
  for (int i = 64; i < 128; ++i)
    w[i] = std::numeric_limits<float>::infinity(); // no finite value: scale 1
  std::vector<uint16_t> bits;
  for (float f : w)
    bits.push_back(bf16Of(f));
  bits[6] = 0x7FC0; // NaN
  std::vector<uint8_t> q(128);
  std::vector<float> scale(2);
  fp8::quantizeRows(bits.data(), 2, 64, q.data(), scale.data());
  EXPECT_EQ(scale[0], 2.0f / 448.0f); // infinities do not set the scale
  EXPECT_EQ(scale[1], 1.0f);
  auto at = [&](int row, int kk) {
    for (int p = 0; p < 64; ++p)
      if (kn::linear_fp8_chunk_k(p) == kk)
        return q[row * 64 + p];
    return uint8_t(0);
  };
  EXPECT_EQ(at(0, 3), 0x7E);
  EXPECT_EQ(at(0, 4), 0xFE);
  EXPECT_EQ(at(0, 5), 0x7E);
  EXPECT_TRUE(isNaN(at(0, 6)));
  EXPECT_EQ(at(1, 0), 0x7E);
}

TEST(Fp8Quantizer, DequantizedColumnsAreTheKernelsWeights) {
  // The graph's [k, n] weight: column c is kernel row c.
  const int64_t k = 64, n = 5;
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-255, 255);
  std::vector<float> w(k * n);
  for (float &v : w)
    v = float(small(rng)) / 256; // exact in bf16
  for (int64_t i = 0; i < k; ++i)
    w[i * n + 4] = 0.0f; // an all-zero column
  std::vector<float> rows(n * k);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t c = 0; c < n; ++c)
      rows[c * k + i] = w[i * n + c];
  Quantized q = quantize(rows, n, k);
  std::vector<uint16_t> bits, out(k * n);
  for (float f : w)
    bits.push_back(bf16Of(f));
  fp8::dequantizedColumns(bits.data(), k, n, out.data());
  for (int64_t c = 0; c < n; ++c)
    for (int p = 0; p < 64; ++p) {
      int64_t i = kn::linear_fp8_chunk_k(p);
      float expected = q.scale[c] * fp8::decodeE4m3(q.q[c * k + p]);
      uint32_t e;
      std::memcpy(&e, &expected, 4);
      uint16_t rounded = uint16_t((e + 0x7FFFu + ((e >> 16) & 1u)) >> 16);
      ASSERT_EQ(out[i * n + c], rounded) << i << " " << c;
    }
  EXPECT_EQ(floatOf(out[4]), 0.0f);
}

// ---------------------------------------------------------------------------------------------
// int4

TEST(Int4Layout, BlockPermutationIsTheLanesLoadOrder) {
  // Every k of a 128-wide block once; lane t's 16 bytes (16t .. 16t + 15) hold the k its bf16
  // fragments of two 64-wide chunks take: 8t .. 8t + 7 of each 32-wide quarter; in a word,
  // nibbles i and i + 4 are k 2i and 2i + 1 of its 8-k run.
  std::set<int> seen;
  for (int p = 0; p < kn::kLinearInt4BlockK; ++p) {
    const int k = kn::linear_int4_block_k(p), byte = p / 2, t = byte / 16;
    EXPECT_EQ(k % 32 / 8, t) << p;
    const int word = byte / 4, nibble = 2 * (byte % 4) + p % 2;
    const int runStart = k - k % 8;
    EXPECT_EQ(k - runStart, nibble < 4 ? 2 * nibble : 2 * (nibble - 4) + 1) << p;
    EXPECT_EQ(word % 4, runStart / 32) << p; // words: chunk 0 low/high half, chunk 1 low/high
    seen.insert(k);
  }
  EXPECT_EQ(seen.size(), 128u);
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 127);
}

/// The contract written plainly: per row and group, scale = max|w| / 7 over the finite values
/// (1 for a group without a nonzero one), q = clamp(round-half-even(w / scale), -8, 7) + 8
/// (NaN: 8); unpacked, in k order.
struct Int4Reference {
  std::vector<uint8_t> nibbles; // [rows, k]
  std::vector<float> scales;    // [rows, k / group]
};
Int4Reference int4Reference(const std::vector<float> &w, int64_t rows, int64_t k,
                            int64_t group) {
  Int4Reference ref{std::vector<uint8_t>(rows * k), std::vector<float>(rows * (k / group))};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < k / group; ++g) {
      float maxAbs = 0.0f;
      for (int64_t i = g * group; i < (g + 1) * group; ++i)
        if (std::isfinite(w[r * k + i]))
          maxAbs = std::max(maxAbs, std::fabs(w[r * k + i]));
      const float scale = maxAbs == 0.0f ? 1.0f : maxAbs / 7.0f;
      ref.scales[r * (k / group) + g] = scale;
      for (int64_t i = g * group; i < (g + 1) * group; ++i) {
        const float v = w[r * k + i] / scale;
        ref.nibbles[r * k + i] =
            std::isnan(v) ? 8
                          : uint8_t(int(std::max(-8.0f, std::min(7.0f, std::nearbyint(v)))) + 8);
      }
    }
  return ref;
}

/// quantizeGroups' output, unpacked back to k order through the contract's permutation.
Int4Reference int4Quantize(const std::vector<uint16_t> &bits, int64_t rows, int64_t k,
                           int64_t group) {
  std::vector<uint8_t> packed(rows * k / 2, 0xAA);
  Int4Reference out{std::vector<uint8_t>(rows * k, 0xFF),
                    std::vector<float>(rows * (k / group), -1.0f)};
  int4::quantizeGroups(bits.data(), rows, k, group, packed.data(), out.scales.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < k; b += kn::kLinearInt4BlockK)
      for (int p = 0; p < kn::kLinearInt4BlockK; ++p) {
        const uint8_t byte = packed[(r * k + b + p) / 2];
        out.nibbles[r * k + b + kn::linear_int4_block_k(p)] = p % 2 ? byte >> 4 : byte & 15;
      }
  return out;
}

void expectMatchesReference(const std::vector<uint16_t> &bits, int64_t rows, int64_t k,
                            int64_t group) {
  std::vector<float> w;
  for (uint16_t b : bits)
    w.push_back(floatOf(b));
  Int4Reference ref = int4Reference(w, rows, k, group), got = int4Quantize(bits, rows, k, group);
  for (size_t i = 0; i < ref.scales.size(); ++i)
    ASSERT_EQ(floatBitsOf(got.scales[i]), floatBitsOf(ref.scales[i])) << "scale " << i;
  for (size_t i = 0; i < ref.nibbles.size(); ++i)
    ASSERT_EQ(int(got.nibbles[i]), int(ref.nibbles[i]))
        << "row " << i / k << " k " << i % k << " w " << w[i];
}

TEST(Int4Quantizer, MatchesTheReferenceOnRandomValues) {
  std::mt19937 rng(21);
  std::uniform_int_distribution<uint32_t> any;
  for (int64_t group : {128, 64, 32, 256}) {
    const int64_t rows = 5, k = 512;
    std::vector<uint16_t> bits(rows * k);
    for (size_t i = 0; i < bits.size(); ++i) {
      uint32_t b = any(rng);
      // Most values with exponents near 1, some anywhere (subnormals and huge ones too), never
      // NaN or infinity (checked apart below).
      uint16_t v = i % 7 ? uint16_t((b & 0x807F) | ((120 + b % 12) << 7)) : uint16_t(b);
      if ((v & 0x7F80) == 0x7F80)
        v &= 0xBFFF;
      bits[i] = v;
    }
    SCOPED_TRACE("group " + std::to_string(group));
    expectMatchesReference(bits, rows, k, group);
  }
}

TEST(Int4Quantizer, RoundsTiesToEven) {
  // Group maximum 7: scale 1, so w / scale is w itself; maximum 3.5: scale 0.5.
  const float ones[] = {7.0f, 0.5f, 1.5f, 2.5f, 3.5f, -0.5f, -1.5f, -2.5f, 6.5f, -6.5f, 4.5f};
  const int expectedOnes[] = {15, 8, 10, 10, 12, 8, 6, 6, 14, 2, 12};
  const float halves[] = {3.5f, 0.25f, 0.75f, 1.25f, -0.25f, -0.75f, 3.25f, -3.25f};
  const int expectedHalves[] = {15, 8, 10, 10, 8, 6, 14, 2};
  std::vector<float> w(2 * 128, 0.0f);
  for (size_t i = 0; i < std::size(ones); ++i)
    w[i] = ones[i];
  for (size_t i = 0; i < std::size(halves); ++i)
    w[128 + i] = halves[i];
  std::vector<uint16_t> bits;
  for (float f : w)
    bits.push_back(bf16Of(f));
  Int4Reference got = int4Quantize(bits, 2, 128, 128);
  EXPECT_EQ(got.scales[0], 1.0f);
  EXPECT_EQ(got.scales[1], 0.5f);
  for (size_t i = 0; i < std::size(ones); ++i)
    EXPECT_EQ(int(got.nibbles[i]), expectedOnes[i]) << ones[i];
  for (size_t i = 0; i < std::size(halves); ++i)
    EXPECT_EQ(int(got.nibbles[128 + i]), expectedHalves[i]) << halves[i];
  expectMatchesReference(bits, 2, 128, 128);
}

TEST(Int4Quantizer, AllZeroGroupsHaveScaleOne) {
  // Row 0: group 0 all zeros (one -0), group 1 not; row 1 all zeros.
  std::vector<float> w(2 * 256, 0.0f);
  w[17] = -0.0f;
  w[128 + 3] = -0.125f;
  std::vector<uint16_t> bits;
  for (float f : w)
    bits.push_back(bf16Of(f));
  Int4Reference got = int4Quantize(bits, 2, 256, 128);
  EXPECT_EQ(got.scales[0], 1.0f);
  EXPECT_EQ(got.scales[1], 0.125f / 7.0f);
  EXPECT_EQ(got.scales[2], 1.0f);
  EXPECT_EQ(got.scales[3], 1.0f);
  for (int i = 0; i < 512; ++i)
    EXPECT_EQ(int(got.nibbles[i]), i == 128 + 3 ? 1 : 8) << i;
  expectMatchesReference(bits, 2, 256, 128);
}

TEST(Int4Quantizer, ExtremesSaturateAndNonFiniteValuesDoNotScale) {
  std::vector<uint16_t> bits(3 * 128, bf16Of(0.25f));
  bits[0] = 0x7F7F;            // the largest bf16: scale = max / 7, q - 8 = 7
  bits[1] = 0xFF7F;            // its negative: -7
  bits[2] = 0x0001;            // the smallest subnormal: 0
  bits[128 + 0] = 0x7F80;      // +inf: does not count, clamps to 15
  bits[128 + 1] = 0xFF80;      // -inf: clamps to 0
  bits[128 + 2] = 0x7FC0;      // NaN: 8
  bits[128 + 3] = bf16Of(-1.0f);
  for (int i = 256; i < 384; ++i)
    bits[i] = i % 2 ? 0x0001 : 0x8003; // subnormals only: max 3 * 2^-133
  Int4Reference got = int4Quantize(bits, 3, 128, 128);
  EXPECT_EQ(got.scales[0], floatOf(0x7F7F) / 7.0f);
  EXPECT_EQ(int(got.nibbles[0]), 15);
  EXPECT_EQ(int(got.nibbles[1]), 1);
  EXPECT_EQ(int(got.nibbles[2]), 8);
  EXPECT_EQ(int(got.nibbles[3]), 8); // 0.25 is far below the scale
  EXPECT_EQ(got.scales[1], 1.0f / 7.0f);
  EXPECT_EQ(int(got.nibbles[128 + 0]), 15);
  EXPECT_EQ(int(got.nibbles[128 + 1]), 0);
  EXPECT_EQ(int(got.nibbles[128 + 2]), 8);
  EXPECT_EQ(int(got.nibbles[128 + 3]), 1);
  EXPECT_EQ(int(got.nibbles[128 + 4]), 10); // 0.25 * 7 = 1.75 -> 2
  EXPECT_EQ(int(got.nibbles[256]), 1);      // -3 * 2^-133 is the group's largest magnitude
  // Only infinities: no finite value sets the scale.
  std::vector<uint16_t> infs(128, 0x7F80);
  EXPECT_EQ(int4Quantize(infs, 1, 128, 128).scales[0], 1.0f);
  std::vector<uint16_t> finite = bits;
  finite[128 + 0] = finite[128 + 1] = finite[128 + 2] = 0;
  expectMatchesReference(finite, 3, 128, 128);
}

/// What APFloat rounds the exact double `d` to in bf16, nearest even.
uint16_t apfloatBf16(double d) {
  llvm::APFloat value(d);
  bool losesInfo = false;
  value.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return uint16_t(value.bitcastToAPInt().getZExtValue());
}

TEST(Int4Dequantize, RoundsTheExactProductOnceAsAPFloat) {
  std::mt19937 rng(4);
  std::uniform_int_distribution<uint32_t> any;
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    // Scales anywhere a group scale can be: max|w| / 7 for finite bf16 max|w|.
    float scale = bitsToFloat((any(rng) & 0x007FFFFFu) | ((1 + any(rng) % 253) << 23));
    if (i % 4 == 0)
      scale = floatOf(uint16_t(1 + any(rng) % 0x7F7F)) / 7.0f; // a real group scale
    for (int nibble = 0; nibble < 16; ++nibble) {
      const double exact = double(scale) * (nibble - 8);
      ASSERT_EQ(int4::dequantizedBf16(scale, uint8_t(nibble)), apfloatBf16(exact))
          << scale << " * " << nibble - 8;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 200000 * 16);
  EXPECT_EQ(int4::dequantizedBf16(1.0f, 8), 0x0000);
  EXPECT_EQ(int4::dequantizedBf16(1.0f, 0), bf16Of(-8.0f));
  EXPECT_EQ(int4::dequantizedBf16(0.5f, 15), bf16Of(3.5f));
}

TEST(Int4Dequantize, ColumnsAreTheKernelsWeights) {
  // The graph's [k, n] weight: column c is kernel row c, quantized in groups along k.
  const int64_t k = 256, n = 7, group = 128;
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> small(-255, 255);
  std::vector<float> w(k * n);
  for (float &v : w)
    v = float(small(rng)) / 64; // exact in bf16
  for (int64_t i = 0; i < group; ++i)
    w[i * n + 6] = 0.0f; // an all-zero group
  std::vector<uint16_t> rows(n * k), bits, out(k * n);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t c = 0; c < n; ++c)
      rows[c * k + i] = bf16Of(w[i * n + c]);
  for (float f : w)
    bits.push_back(bf16Of(f));
  Int4Reference q = int4Quantize(rows, n, k, group);
  int4::dequantizedColumns(bits.data(), k, n, group, out.data());
  for (int64_t c = 0; c < n; ++c)
    for (int64_t i = 0; i < k; ++i) {
      const float scale = q.scales[c * (k / group) + i / group];
      ASSERT_EQ(out[i * n + c],
                apfloatBf16(double(scale) * (int(q.nibbles[c * k + i]) - 8)))
          << i << " " << c;
    }
  EXPECT_EQ(floatOf(out[6]), 0.0f);
}

} // namespace
