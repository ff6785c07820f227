// --weight-dtype int4 in sinter-lower-to-launch: every linear_small_m launch of an int4 linear
// is sized by launch_params.h with LinearWeights::INT4 and the group kLinearInt4Group, spells
// WT = sinter::kernels::Int4x2 and W_GROUP, and reads the packed nibbles and group scales that
// QuantizeWeights.h computes from the graph's weight; a K the int4 layout does not take keeps
// bf16 weights; int4 launches never take part in a handoff; past linear_small_m's rows a
// library GEMM reads the dequantized weights. Checked against the functions themselves, so the
// test follows any retuning of the int4 tiling.
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

constexpr int kSms = sinter::testing::kTestSms;
constexpr kn::LinearWeights kInt4 = kn::LinearWeights::INT4;
constexpr int kGroup = kn::kLinearInt4Group;

/// Two decode MLPs (one row): hidden, gate/up [hidden, 2 * inner], down [inner, hidden].
std::string twoMlps(int hidden, int inner) {
  const std::string in = std::to_string(inner), both = std::to_string(2 * inner);
  const std::string x = tensorType({1, 1, hidden}), wgu = tensorType({hidden, 2 * inner}),
                    gu = tensorType({1, 1, 2 * inner}), half = tensorType({1, 1, inner}),
                    wd = tensorType({inner, hidden}), g = tensorType({hidden});
  std::string text = "func.func @mlps(%x: " + x + ") -> " + x + " {\n";
  std::string prev = "%x";
  for (int i = 0; i < 2; ++i) {
    std::string s = std::to_string(i);
    text += "  %g" + s + " = sinter.constant dense<1.0> : " + g + "\n"
            "  %wgu" + s + " = sinter.constant dense<0.5> : " + wgu + "\n"
            "  %gu" + s + " = sinter.linear " + prev + ", %wgu" + s + " norm %g" + s +
            " {norm_epsilon = 9.99999974E-6 : f32} : (" + x + ", " + wgu + ", " + g + ") -> " +
            gu + "\n"
            "  %gate" + s + " = sinter.slice %gu" + s +
            " {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 1, " + in +
            ">, steps = array<i64: 1, 1, 1>} : (" + gu + ") -> " + half + "\n"
            "  %up" + s + " = sinter.slice %gu" + s + " {starts = array<i64: 0, 0, " + in +
            ">, ends = array<i64: 1, 1, " + both + ">, steps = array<i64: 1, 1, 1>} : (" + gu +
            ") -> " + half + "\n"
            "  %act" + s + " = sinter.silu_mul %gate" + s + ", %up" + s + " : (" + half + ", " +
            half + ") -> " + half + "\n"
            "  %wd" + s + " = sinter.constant dense<0.25> : " + wd + "\n"
            "  %y" + s + " = sinter.linear %act" + s + ", %wd" + s + " residual " + prev +
            " : (" + half + ", " + wd + ", " + x + ") -> " + x + "\n";
    prev = "%y" + s;
  }
  return text + "  return " + prev + " : " + x + "\n}\n";
}

/// One linear on m rows of k with the given [k, n] weight.
std::string oneLinear(int m, int k, int n, const std::vector<uint16_t> &w) {
  const std::string x = tensorType({m, k}), wt = tensorType({k, n}), y = tensorType({m, n});
  return "func.func @linear(%x: " + x + ") -> " + y + " {\n  %w = sinter.constant dense<" +
         hexOf(w) + "> : " + wt + "\n  %y = sinter.linear %x, %w : (" + x + ", " + wt +
         ") -> " + y + "\n  return %y : " + y + "\n}\n";
}

TEST(Int4Lowering, LaunchesFollowTheInt4TilingAndNeverHandOff) {
  for (int inner : {1024, 2048, 4096, 8192}) {
    SCOPED_TRACE("inner " + std::to_string(inner));
    Lowered l;
    lowerToLaunch(l, twoMlps(128, inner), "int4");
    if (HasFatalFailure())
      return;
    // The shapes would pair with bf16 weights; an int4 down launch is no handoff consumer.
    EXPECT_FALSE(kn::linear_small_m_handoff_consumer_supported(1, 128, inner,
                                                               kn::LinearPrologue::NONE, kSms,
                                                               kInt4));
    int kernels = 0;
    l.module->walk([&](launch::KernelOp kernel) {
      ASSERT_EQ(kernel.getKernelTemplate(), "linear_small_m");
      ASSERT_EQ(kernel.getParams().size(), 15u);
      EXPECT_EQ(param(kernel, 11), "sinter::kernels::LinearHandoff::NONE");
      EXPECT_EQ(param(kernel, 12), "0");
      EXPECT_EQ(param(kernel, 13), "sinter::kernels::Int4x2");
      EXPECT_EQ(param(kernel, 14), std::to_string(kGroup));
      ASSERT_EQ(kernel.getArgs().size(), 15u);
      EXPECT_FALSE(argument(kernel, 12)) << "a w_zero for symmetric int4";
      const int n = std::stoi(param(kernel, 1)), k = std::stoi(param(kernel, 2));
      auto q = weightOf(argument(kernel, 1)), scale = weightOf(argument(kernel, 11));
      ASSERT_TRUE(q && scale);
      EXPECT_EQ(q.getBuffer().getType().getShape(), (ArrayRef<int64_t>{n, k / 2}));
      EXPECT_TRUE(q.getBuffer().getType().getElementType().isUnsignedInteger(8));
      EXPECT_EQ(scale.getBuffer().getType().getShape(), (ArrayRef<int64_t>{n, k / kGroup}));
      EXPECT_TRUE(scale.getBuffer().getType().getElementType().isF32());
      EXPECT_TRUE(StringRef(q.getSymName()).ends_with(".int4")) << q.getSymName().str();
      EXPECT_EQ(scale.getSymName().str(), q.getSymName().str() + "_scale");
      const auto pro = k == 128 ? kn::LinearPrologue::RMS_NORM : kn::LinearPrologue::NONE;
      const auto epi =
          k == 128 ? kn::LinearEpilogue::SILU_MUL_PAIRS : kn::LinearEpilogue::RESIDUAL;
      EXPECT_TRUE(kn::linear_small_m_supported(1, n, k, pro, epi, 0, 0, 2, kSms, kInt4, kGroup));
      const kn::LaunchParams lp = kn::linear_small_m_launch(1, n, k, pro, kSms, 2, kInt4);
      EXPECT_EQ(kernel.getGrid()[0], int64_t(lp.grid.x));
      EXPECT_EQ(kernel.getBlock()[0], int64_t(lp.block.x));
      EXPECT_EQ(int64_t(kernel.getSharedBytes()), int64_t(lp.shared_bytes));
      ++kernels;
    });
    EXPECT_EQ(kernels, 4);
  }
}

TEST(Int4Lowering, KNotAMultipleOf128KeepsBf16Weights) {
  // Hidden 64: gate/up (K = 64) stays bf16 and keeps the handoff producer role only when the
  // down launch consumes, which an int4 down launch (K = 2048) never does.
  Lowered l;
  lowerToLaunch(l, twoMlps(64, 2048), "int4");
  if (HasFatalFailure())
    return;
  int bf16 = 0, int4 = 0;
  l.module->walk([&](launch::KernelOp kernel) {
    ASSERT_EQ(kernel.getParams().size(), 15u);
    ASSERT_EQ(kernel.getArgs().size(), 15u);
    EXPECT_EQ(param(kernel, 11), "sinter::kernels::LinearHandoff::NONE");
    const int k = std::stoi(param(kernel, 2));
    if (k == 64) {
      EXPECT_EQ(param(kernel, 13), "__nv_bfloat16");
      EXPECT_EQ(param(kernel, 14), "0");
      EXPECT_FALSE(argument(kernel, 11)) << "a w_scale for bf16 weights";
      EXPECT_TRUE(weightOf(argument(kernel, 1)).getBuffer().getType().getElementType().isBF16());
      ++bf16;
    } else {
      EXPECT_EQ(param(kernel, 13), "sinter::kernels::Int4x2");
      EXPECT_EQ(param(kernel, 14), std::to_string(kGroup));
      ++int4;
    }
  });
  EXPECT_EQ(bf16, 2);
  EXPECT_EQ(int4, 2);
}

TEST(Int4Lowering, KernelWeightsAreTheQuantizersNibblesAndScales) {
  const int k = 384, n = 48;
  const std::vector<uint16_t> w = randomBf16(size_t(k) * n, 5);
  Lowered l;
  lowerToLaunch(l, oneLinear(2, k, n, w), "int4");
  if (HasFatalFailure())
    return;
  // The kernel's rows are the weight's columns (no pair epilogue): quantized as rows.
  std::vector<uint16_t> rows(size_t(n) * k);
  for (int i = 0; i < k; ++i)
    for (int c = 0; c < n; ++c)
      rows[size_t(c) * k + i] = w[size_t(i) * n + c];
  std::vector<uint8_t> q(size_t(n) * k / 2);
  std::vector<float> scale(size_t(n) * (k / kGroup));
  sinter::int4::quantizeGroups(rows.data(), n, k, kGroup, q.data(), scale.data());
  int kernels = 0;
  l.module->walk([&](launch::KernelOp kernel) {
    auto qw = weightOf(argument(kernel, 1)), sw = weightOf(argument(kernel, 11));
    ASSERT_TRUE(qw && sw);
    auto qData = cast<DenseElementsAttr>(qw.getValue()).getRawData();
    auto sData = cast<DenseElementsAttr>(sw.getValue()).getRawData();
    ASSERT_EQ(qData.size(), q.size());
    ASSERT_EQ(sData.size(), scale.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(qData.data(), q.data(), q.size()), 0);
    EXPECT_EQ(std::memcmp(sData.data(), scale.data(), sData.size()), 0);
    ++kernels;
  });
  EXPECT_EQ(kernels, 1);
}

TEST(Int4Lowering, GemmsPastTheKernelReadTheDequantizedWeights) {
  const int k = 256, n = 32;
  const std::vector<uint16_t> w = randomBf16(size_t(k) * n, 9);
  Lowered l;
  lowerToLaunch(l, oneLinear(32, k, n, w), "int4");
  if (HasFatalFailure())
    return;
  std::vector<uint16_t> expected(w.size());
  sinter::int4::dequantizedColumns(w.data(), k, n, kGroup, expected.data());
  int gemms = 0;
  l.module->walk([&](launch::GemmOp gemm) {
    auto weight = weightOf(gemm.getWeight());
    ASSERT_TRUE(weight);
    EXPECT_TRUE(StringRef(weight.getSymName()).ends_with(".int4_dequantized"))
        << weight.getSymName().str();
    auto data = cast<DenseElementsAttr>(weight.getValue()).getRawData();
    ASSERT_EQ(data.size(), expected.size() * 2);
    EXPECT_EQ(std::memcmp(data.data(), expected.data(), data.size()), 0);
    ++gemms;
  });
  EXPECT_EQ(gemms, 1);
  int kernels = 0;
  l.module->walk([&](launch::KernelOp) { ++kernels; });
  EXPECT_EQ(kernels, 0);
}

} // namespace
