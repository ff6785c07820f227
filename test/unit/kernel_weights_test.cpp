// The compile-time data sinter-lower-to-launch hands linear_small_m for GPT-2's layers, read
// back from the lowered module: a LayerNorm prologue's scale and shift packed as one fp32
// [2, K] weight (the bf16 values widened exactly), and a ragged N (an LM head over 50257
// tokens) as whole 16-row tiles, the weight's columns as rows and zero rows after them (fp8:
// the quantizer's codes and scales, the padding's codes 0 and scale 1), and an odd count of K
// chunks under a norm with a zero chunk after each row. Checked against the graph's
// constants and QuantizeWeights.h, so that a kernel reads what the model holds.
#include "lowering_test_util.h"
#include "sinter/Passes/QuantizeWeights.h"

#include "launch_params.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace mlir;
using namespace sinter::testing;
namespace kn = sinter::kernels;
namespace launch = sinter::launch;

float widen(uint16_t bf16) {
  const uint32_t bits = uint32_t(bf16) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

launch::KernelOp onlyKernel(ModuleOp module) {
  launch::KernelOp found;
  int count = 0;
  module.walk([&](launch::KernelOp kernel) {
    found = kernel;
    ++count;
  });
  EXPECT_EQ(count, 1);
  return found;
}

/// `text` lowered to launches (held by `l`) and its one kernel; null after a fatal failure.
launch::KernelOp lowerOnlyKernel(Lowered &l, const std::string &text,
                                 const std::string &weightDtype = "model") {
  lowerToLaunch(l, text, weightDtype);
  return ::testing::Test::HasFatalFailure() ? launch::KernelOp() : onlyKernel(*l.module);
}

ArrayRef<char> weightBytes(launch::KernelOp kernel, unsigned i) {
  launch::WeightOp weight = weightOf(argument(kernel, i));
  return weight ? cast<DenseElementsAttr>(weight.getValue()).getRawData() : ArrayRef<char>();
}

/// The kernel's bf16 weight `bytes` hold `rows` rows of `cols`: row r < n, column c < k is the
/// graph's [k, n] weight `w` at (c, r), the rest zero.
void expectKernelRows(ArrayRef<char> bytes, const std::vector<uint16_t> &w, int n, int k,
                      int rows, int cols) {
  ASSERT_EQ(bytes.size(), size_t(rows) * cols * 2);
  std::vector<uint16_t> got(size_t(rows) * cols);
  std::memcpy(got.data(), bytes.data(), bytes.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      ASSERT_EQ(got[size_t(r) * cols + c], r < n && c < k ? w[size_t(c) * n + r] : 0)
          << "row " << r << " k " << c;
}

TEST(KernelWeights, LayerNormScaleAndShiftArePackedAsFp32) {
  const int k = 64, n = 32;
  const std::vector<uint16_t> scale = randomBf16(k, 1, -6, 2, false), shift = randomBf16(k, 2, -6, 2, false);
  const std::string x = tensorType({1, 1, k}), w = tensorType({k, n}), v = tensorType({k}),
                    y = tensorType({1, 1, n});
  const std::string text =
      "func.func @ln(%x: " + x + ") -> " + y + " {\n  %w = sinter.constant dense<0.5> : " + w +
      "\n  %g = sinter.constant dense<" + hexOf(scale) + "> : " + v +
      "\n  %b = sinter.constant dense<" + hexOf(shift) + "> : " + v +
      "\n  %y = sinter.linear %x, %w norm %g norm_bias %b {norm_epsilon = 1.0e-5 : f32} : (" +
      x + ", " + w + ", " + v + ", " + v + ") -> " + y + "\n  return %y : " + y + "\n}\n";
  Lowered l;
  launch::KernelOp kernel = lowerOnlyKernel(l, text);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(param(kernel, 3), kn::kLinearPrologueNames[int(kn::LinearPrologue::LAYER_NORM)]);
  ArrayRef<char> packed = weightBytes(kernel, 2); // norm_weight
  ASSERT_EQ(packed.size(), size_t(2 * k) * sizeof(float));
  std::vector<float> got(2 * k);
  std::memcpy(got.data(), packed.data(), packed.size());
  for (int i = 0; i < k; ++i) {
    EXPECT_EQ(got[i], widen(scale[i])) << "scale " << i;
    EXPECT_EQ(got[k + i], widen(shift[i])) << "shift " << i;
  }
}

/// One decode row through a [k, n] weight with no epilogue (an LM head).
std::string lmHead(int k, int n, const std::vector<uint16_t> &w) {
  const std::string x = tensorType({1, 1, k}), wt = tensorType({k, n}), y = tensorType({1, 1, n});
  return "func.func @head(%x: " + x + ") -> " + y + " {\n  %w = sinter.constant dense<" +
         hexOf(w) + "> : " + wt + "\n  %y = sinter.linear %x, %w : (" + x + ", " + wt +
         ") -> " + y + "\n  return %y : " + y + "\n}\n";
}

TEST(KernelWeights, RaggedNIsPaddedToWholeTilesWithZeroRows) {
  const int k = 128, n = 37; // 3 tiles: 48 rows, 11 of them padding
  const int rows = kn::linear_small_m_weight_rows(n);
  ASSERT_EQ(rows, 48);
  const std::vector<uint16_t> w = randomBf16(size_t(k) * n, 3, -6, 2, false);
  Lowered l;
  launch::KernelOp kernel = lowerOnlyKernel(l, lmHead(k, n, w));
  ASSERT_TRUE(kernel);
  EXPECT_EQ(param(kernel, 1), std::to_string(n)); // N_ROWS is the model's
  EXPECT_EQ(kernel.getGrid()[0], kn::linear_small_m_tiling(1, n, k, kn::LinearPrologue::NONE,
                                                           kTestSms).grid);
  expectKernelRows(weightBytes(kernel, 1), w, n, k, rows, k);
}

TEST(KernelWeights, OddChunkCountUnderANormIsPaddedWithAZeroChunk) {
  // 17 chunks of 64 under an RMSNorm prologue (GPT-2 XL's LayerNorm linears have 25): rows of
  // 18 chunks, the last one zero; the same weight without a norm keeps rows of K.
  const int k = 1088, n = 32;
  const int cols = kn::linear_small_m_weight_cols(k, kn::LinearPrologue::RMS_NORM);
  ASSERT_EQ(cols, k + 64);
  ASSERT_EQ(kn::linear_small_m_weight_cols(k, kn::LinearPrologue::NONE), k);
  const std::vector<uint16_t> w = randomBf16(size_t(k) * n, 5, -6, 2, false);
  const std::string x = tensorType({1, 1, k}), wt = tensorType({k, n}), v = tensorType({k}),
                    y = tensorType({1, 1, n});
  const std::string text = "func.func @normed(%x: " + x + ") -> " + y +
                           " {\n  %w = sinter.constant dense<" + hexOf(w) + "> : " + wt +
                           "\n  %g = sinter.constant dense<1.0> : " + v +
                           "\n  %y = sinter.linear %x, %w norm %g {norm_epsilon = 1.0e-5 : f32} : (" +
                           x + ", " + wt + ", " + v + ") -> " + y + "\n  return %y : " + y +
                           "\n}\n";
  Lowered l;
  launch::KernelOp kernel = lowerOnlyKernel(l, text);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(param(kernel, 2), std::to_string(k)); // K is the model's
  EXPECT_EQ(kernel.getSharedBytes(),
            kn::linear_small_m_tiling(1, n, k, kn::LinearPrologue::RMS_NORM, kTestSms)
                .shared_bytes);
  expectKernelRows(weightBytes(kernel, 1), w, n, k, n, cols);
}

TEST(KernelWeights, RaggedNInFp8PadsCodesAndScales) {
  const int k = 128, n = 21;
  const int rows = kn::linear_small_m_weight_rows(n);
  const std::vector<uint16_t> w = randomBf16(size_t(k) * n, 4, -6, 2, false);
  Lowered l;
  launch::KernelOp kernel = lowerOnlyKernel(l, lmHead(k, n, w), "fp8");
  ASSERT_TRUE(kernel);
  // The quantizer on the padded rows: the model's columns, then zero rows.
  std::vector<uint16_t> padded(size_t(rows) * k, 0);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < k; ++c)
      padded[size_t(r) * k + c] = w[size_t(c) * n + r];
  std::vector<uint8_t> q(size_t(rows) * k);
  std::vector<float> scale(rows);
  sinter::fp8::quantizeRows(padded.data(), rows, k, q.data(), scale.data());
  for (int r = n; r < rows; ++r)
    EXPECT_EQ(scale[r], 1.0f) << "padding row " << r;
  ArrayRef<char> codes = weightBytes(kernel, 1), scales = weightBytes(kernel, 11);
  ASSERT_EQ(codes.size(), q.size());
  ASSERT_EQ(scales.size(), scale.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(scales.data(), scale.data(), scales.size()), 0);
  EXPECT_EQ(std::memcmp(codes.data(), q.data(), q.size()), 0);
  // The padding rows' codes are zeros (e4m3 0), whatever order a chunk is in.
  for (size_t i = size_t(n) * k; i < q.size(); ++i)
    ASSERT_EQ(uint8_t(codes[i]), 0) << "padding byte " << i;
}

} // namespace

namespace {

/// The first launch of `name` in `module`.
launch::KernelOp firstKernel(ModuleOp module, StringRef name) {
  launch::KernelOp found;
  module.walk([&](launch::KernelOp kernel) {
    if (!found && kernel.getKernelTemplate() == name)
      found = kernel;
  });
  return found;
}

// Partial rotary (GPT-NeoX: 4 of a head's 16 columns rotate): within each q and k head the
// kernel's rows 2i and 2i + 1 (2i < 4) hold the head's columns i and i + 2, its rows from 4
// on their own column; v's rows stay in order.
TEST(KernelWeights, PartialRotaryPairsOnlyTheRotatedColumns) {
  const int k = 64, n = 128, headDim = 16, rotary = 4, ropeRows = 96;
  const std::vector<uint16_t> w = randomBf16(size_t(k) * n, 5, -6, 2, false);
  const std::string x = tensorType({1, 6, k}), wt = tensorType({k, n}),
                    qkv = tensorType({1, 6, n}), table = tensorType({1, 1, 6, rotary}),
                    q = tensorType({1, 4, 6, headDim}), kv = tensorType({1, 2, 6, headDim}),
                    mask = tensorType({1, 6}, "i64"), y = tensorType({1, 6, 64});
  const std::string text =
      "func.func @qkv(%x: " + x + ", %m: " + mask + ") -> " + y +
      " {\n  %w = sinter.constant dense<" + hexOf(w) + "> : " + wt +
      "\n  %c = sinter.constant dense<1.0> : " + table +
      "\n  %s = sinter.constant dense<0.0> : " + table + "\n  %l = sinter.linear %x, %w : (" +
      x + ", " + wt + ") -> " + qkv + "\n  %q, %k, %v = sinter.split_qkv_heads %l rope(%c, %s) : (" +
      qkv + ", " + table + ", " + table + ") -> (" + q + ", " + kv + ", " + kv +
      ")\n  %a = sinter.fused_attention %q, %k, %v key_mask %m {scale = 0.25 : f32, causal = "
      "true, merged_heads} : (" + q + ", " + kv + ", " + kv + ", " + mask + ") -> " + y +
      "\n  return %a : " + y + "\n}\n";
  Lowered l;
  lowerToLaunch(l, text);
  if (HasFatalFailure())
    return;
  launch::KernelOp kernel = firstKernel(*l.module, "linear_small_m");
  ASSERT_TRUE(kernel);
  EXPECT_EQ(param(kernel, 4), kn::kLinearEpilogueNames[int(kn::LinearEpilogue::ROPE_PAIRS)]);
  EXPECT_EQ(param(kernel, 15), std::to_string(rotary));
  ArrayRef<char> bytes = weightBytes(kernel, 1);
  ASSERT_EQ(bytes.size(), size_t(n) * k * 2);
  std::vector<uint16_t> got(size_t(n) * k);
  std::memcpy(got.data(), bytes.data(), bytes.size());
  for (int r = 0; r < n; ++r) {
    int l = r % headDim, column = r;
    if (r < ropeRows && l < rotary)
      column = r - l + (l % 2 ? rotary / 2 + l / 2 : l / 2);
    for (int i = 0; i < k; ++i)
      ASSERT_EQ(got[size_t(r) * k + i], w[size_t(i) * n + column]) << "row " << r << " k " << i;
  }
}

} // namespace
