// --weight-dtype fp8 in sinter-lower-to-launch and launch-plan-handoffs: every linear_small_m
// launch of an fp8 linear is sized by launch_params.h with LinearWeights::FP8_E4M3, and so are the
// handoff decisions and the producer grid a consumer waits for. Checked against the functions
// themselves, so the test follows any retuning of the fp8 tiling.
#include "lowering_test_util.h"

#include "launch_params.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace mlir;
using namespace sinter::testing;
namespace kn = sinter::kernels;

constexpr int kSms = sinter::testing::kTestSms;
constexpr kn::LinearWeights kFp8 = kn::LinearWeights::FP8_E4M3;

/// Two decode MLPs (one row): hidden 64, gate/up [64, 2 * inner], down [inner, 64].
std::string twoMlps(int inner) {
  std::string in = std::to_string(inner), both = std::to_string(2 * inner);
  std::string text = "func.func @mlps(%x: tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16> {\n";
  std::string prev = "%x";
  for (int i = 0; i < 2; ++i) {
    std::string s = std::to_string(i);
    text += "  %g" + s + " = sinter.constant dense<1.0> : tensor<64xbf16>\n"
            "  %wgu" + s + " = sinter.constant dense<0.5> : tensor<64x" + both + "xbf16>\n"
            "  %gu" + s + " = sinter.linear " + prev + ", %wgu" + s + " norm %g" + s +
            " {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x1x64xbf16>, tensor<64x" + both +
            "xbf16>, tensor<64xbf16>) -> tensor<1x1x" + both + "xbf16>\n"
            "  %gate" + s + " = sinter.slice %gu" + s +
            " {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 1, " + in +
            ">, steps = array<i64: 1, 1, 1>} : (tensor<1x1x" + both + "xbf16>) -> tensor<1x1x" +
            in + "xbf16>\n"
            "  %up" + s + " = sinter.slice %gu" + s + " {starts = array<i64: 0, 0, " + in +
            ">, ends = array<i64: 1, 1, " + both + ">, steps = array<i64: 1, 1, 1>} : (tensor<1x1x" +
            both + "xbf16>) -> tensor<1x1x" + in + "xbf16>\n"
            "  %act" + s + " = sinter.silu_mul %gate" + s + ", %up" + s + " : (tensor<1x1x" + in +
            "xbf16>, tensor<1x1x" + in + "xbf16>) -> tensor<1x1x" + in + "xbf16>\n"
            "  %wd" + s + " = sinter.constant dense<0.25> : tensor<" + in + "x64xbf16>\n"
            "  %y" + s + " = sinter.linear %act" + s + ", %wd" + s + " residual " + prev +
            " : (tensor<1x1x" + in + "xbf16>, tensor<" + in +
            "x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>\n";
    prev = "%y" + s;
  }
  return text + "  return " + prev + " : tensor<1x1x64xbf16>\n}\n";
}

TEST(Fp8Lowering, LaunchesAndHandoffsFollowTheFp8Tiling) {
  int handoffs = 0, plain = 0;
  for (int inner : {1024, 2048, 4096, 8192}) {
    SCOPED_TRACE("inner " + std::to_string(inner));
    Lowered l;
    lowerToLaunch(l, twoMlps(inner), "fp8");
    if (HasFatalFailure())
      return;
    const int upN = 2 * inner;
    const bool pairs =
        kn::linear_small_m_supported(1, upN, 64, kn::LinearPrologue::RMS_NORM,
                                     kn::LinearEpilogue::SILU_MUL_PAIRS, 0, 0, 2, kSms, kFp8) &&
        kn::linear_small_m_handoff_consumer_supported(1, 64, inner, kn::LinearPrologue::NONE,
                                                      kSms, kFp8);
    const int producerGrid =
        kn::linear_small_m_tiling(1, upN, 64, kn::LinearPrologue::RMS_NORM, kSms, 2, kFp8).grid;
    int kernels = 0;
    l.module->walk([&](sinter::launch::KernelOp kernel) {
      ASSERT_EQ(kernel.getKernelTemplate(), "linear_small_m");
      ASSERT_EQ(kernel.getParams().size(), 15u);
      EXPECT_EQ(param(kernel, 13), "__nv_fp8_e4m3");
      EXPECT_EQ(param(kernel, 14), "0") << "W_GROUP";
      ASSERT_EQ(kernel.getArgs().size(), 15u);
      EXPECT_GE(kernel.getArgs()[11], 0) << "no w_scale argument";
      EXPECT_LT(kernel.getArgs()[12], 0) << "a w_zero for fp8 weights";
      const int n = std::stoi(param(kernel, 1)), k = std::stoi(param(kernel, 2));
      const auto pro = k == 64 ? kn::LinearPrologue::RMS_NORM : kn::LinearPrologue::NONE;
      const kn::LaunchParams lp = kn::linear_small_m_launch(1, n, k, pro, kSms, 2, kFp8);
      EXPECT_EQ(kernel.getGrid()[0], int64_t(lp.grid.x));
      EXPECT_EQ(kernel.getBlock()[0], int64_t(lp.block.x));
      EXPECT_EQ(int64_t(kernel.getSharedBytes()), int64_t(lp.shared_bytes));
      const std::string handoff = param(kernel, 11);
      if (k == 64) {
        EXPECT_EQ(handoff, pairs ? "sinter::kernels::LinearHandoff::PRODUCER"
                                 : "sinter::kernels::LinearHandoff::NONE");
      } else {
        EXPECT_EQ(handoff, pairs ? "sinter::kernels::LinearHandoff::CONSUMER"
                                 : "sinter::kernels::LinearHandoff::NONE");
        EXPECT_EQ(param(kernel, 12), pairs ? std::to_string(producerGrid) : "0");
      }
      ++kernels;
    });
    EXPECT_EQ(kernels, 4);
    ++(pairs ? handoffs : plain);
  }
  // The shapes cover a handoff today; should a retuning take them all out of (or into) the
  // handoff, the per-shape checks above still hold.
  EXPECT_EQ(handoffs + plain, 4);
}

TEST(Fp8Lowering, Bf16WeightsSpellEveryParameter) {
  // Every launch names all 15 template parameters (WT = bf16, W_GROUP = 0) and passes all 13
  // arguments, w_scale and w_zero null.
  for (const char *weightDtype : {"model", "bf16"}) {
    Lowered l;
    lowerToLaunch(l, twoMlps(2048), weightDtype);
    if (HasFatalFailure())
      return;
    l.module->walk([&](sinter::launch::KernelOp kernel) {
      ASSERT_EQ(kernel.getParams().size(), 15u) << weightDtype;
      EXPECT_EQ(param(kernel, 13), "__nv_bfloat16") << weightDtype;
      EXPECT_EQ(param(kernel, 14), "0") << weightDtype;
      ASSERT_EQ(kernel.getArgs().size(), 15u) << weightDtype;
      EXPECT_LT(kernel.getArgs()[11], 0) << weightDtype << ": a w_scale for bf16 weights";
      EXPECT_LT(kernel.getArgs()[12], 0) << weightDtype << ": a w_zero for bf16 weights";
    });
  }
}

} // namespace
