// linear_small_m at other families' decode shapes (not a test: it checks nothing). Each launch
// is timed alone, back to back under PDL on rotating weight copies, and reported against the
// D2D copy bandwidth, beside
// variants that isolate one cause: the prologue (LayerNorm, RMSNorm, none) and K (GPT-2 XL's
// 1600 = 25 chunks of 64, against 1664 and 2048). Built once per tiling knob set
// (CMakeLists.txt) so that knobs compare in one run. The floor counts the model's weight bytes
// (a K padded to whole slices streams more).
#include <cuda_runtime.h>

#include <cstdio>

#include "gpu_test_util.h"
#include "linear_small_m.cuh"

using namespace sinter::kernels;

namespace {

constexpr int kSms = 132;
constexpr int kCalls = 50;
constexpr uint32_t kEpsBits = 925353388u; // 1e-5f

double g_copy = 0;

template <int N_ROWS, int K, LinearPrologue PRO, LinearEpilogue EPI> void bench(const char *name) {
  constexpr int M = 1;
  auto *kernel = &linear_small_m<M, N_ROWS, K, PRO, EPI, bf16, kEpsBits, 0, 0, kSms, bf16>;
  const int rows = linear_small_m_weight_rows(N_ROWS);
  const LinearTiling t = linear_small_m_tiling(M, N_ROWS, K, PRO, kSms);
  // The kernel streams rows of weight_cols (a padded K); the floor counts the model's K.
  const size_t w_bytes = size_t(rows) * t.weight_cols * 2;
  const size_t model_bytes = size_t(rows) * K * 2;
  // Copies of the weight in turn, together at least 256 MiB (five times the H100's L2), so that
  // every call streams from memory as in a decode step rather than from the last call's lines.
  const int copies = int((size_t(256) << 20) / w_bytes + 1);
  bf16 *x, *w, *bias, *residual, *out;
  void *norm;
  CUDA_CHECK(cudaMalloc(&x, K * 2));
  CUDA_CHECK(cudaMalloc(&w, w_bytes * copies));
  CUDA_CHECK(cudaMalloc(&norm, size_t(K) * 8));
  CUDA_CHECK(cudaMalloc(&bias, size_t(rows) * 2));
  CUDA_CHECK(cudaMalloc(&residual, size_t(rows) * 2));
  CUDA_CHECK(cudaMalloc(&out, size_t(rows) * 2));
  CUDA_CHECK(cudaMemset(x, 0x3c, K * 2));
  CUDA_CHECK(cudaMemset(w, 0x1c, w_bytes * copies));
  CUDA_CHECK(cudaMemset(norm, 0, size_t(K) * 8));
  CUDA_CHECK(cudaMemset(bias, 0, size_t(rows) * 2));
  CUDA_CHECK(cudaMemset(residual, 0, size_t(rows) * 2));
  const LaunchParams lp = linear_small_m_launch(M, N_ROWS, K, PRO, kSms);
  const bf16 *none = nullptr;
  uint32_t *no_count = nullptr;
  bf16 *no_x = nullptr;
  int call = 0;
  const double ms = gputest::median_ms(
      [&] {
        const bf16 *wc = w + (call++ % copies) * (w_bytes / 2);
        CUDA_CHECK(gputest::launch_pdl(kernel, lp, 0, (const bf16 *)x, wc,
                                       (const void *)norm, (const bf16 *)bias,
                                       (const bf16 *)residual, none, none, out, no_count, no_x,
                                       no_count, (const float *)nullptr, (const uint8_t *)nullptr,
                                       none, no_x));
      },
      kCalls);
  CUDA_CHECK(cudaDeviceSynchronize());
  const double floor_us = model_bytes / g_copy * 1e6;
  std::printf("%-34s %8.2f us  floor %6.2f  %5.1f %% | warps %2d batch %d slices %3d steps %d "
              "grid %3d tiles/block %2d prewait %d w_smem %d row %d\n",
              name, ms * 1e3, floor_us, 100.0 * floor_us / (ms * 1e3), t.warps, t.batch, t.slices,
              t.steps, t.grid, t.tiles_per_block, t.prewait_items, int(t.w_smem), t.weight_cols);
  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(w));
  CUDA_CHECK(cudaFree(norm));
  CUDA_CHECK(cudaFree(bias));
  CUDA_CHECK(cudaFree(residual));
  CUDA_CHECK(cudaFree(out));
}

} // namespace

int main() {
  if (!gputest::have_device()) return 77;
  g_copy = gputest::copy_bandwidth();
  std::printf("copy %.0f GB/s (read + write); floor = weight bytes / copy bandwidth\n",
              g_copy / 1e9);
  using P = LinearPrologue;
  using E = LinearEpilogue;
  bench<6400, 1600, P::LAYER_NORM, E::GELU_TANH>("gpt2xl fc  LN K1600");
  bench<6400, 1600, P::RMS_NORM, E::GELU_TANH>("gpt2xl fc  RMS K1600");
  bench<6400, 1600, P::NONE, E::GELU_TANH>("gpt2xl fc  none K1600");
  bench<6400, 1664, P::LAYER_NORM, E::GELU_TANH>("gpt2xl fc  LN K1664");
  bench<6400, 2048, P::LAYER_NORM, E::GELU_TANH>("gpt2xl fc  LN K2048");
  bench<4800, 1600, P::LAYER_NORM, E::BIAS>("gpt2xl qkv LN K1600");
  bench<1600, 6400, P::NONE, E::BIAS_RESIDUAL>("gpt2xl proj K6400");
  bench<1600, 1600, P::NONE, E::BIAS_RESIDUAL>("gpt2xl o K1600");
  bench<50257, 1600, P::LAYER_NORM, E::NONE>("gpt2xl lm head LN K1600");
  bench<17920, 1536, P::RMS_NORM, E::SILU_MUL_PAIRS>("qwen2.5 gate_up K1536");
  bench<1536, 8960, P::NONE, E::RESIDUAL>("qwen2.5 down K8960");
  bench<18432, 2304, P::RMS_NORM, E::GELU_TANH_MUL_PAIRS>("gemma2 gate_up K2304");
  bench<2304, 9216, P::NONE, E::RESIDUAL>("gemma2 down K9216");
  bench<16384, 2048, P::RMS_NORM, E::SILU_MUL_PAIRS>("llama gate_up K2048");
  bench<2048, 8192, P::NONE, E::RESIDUAL>("llama down K8192");
  return 0;
}
