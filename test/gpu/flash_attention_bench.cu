// Prefill attention timing (not a test: it checks nothing): flash_attention on Llama 3.2 1B
// heads (32 q, 8 kv, D 64) and Llama 3 8B heads (D 128), causal, at several prompt lengths,
// against the bf16 dense matrix rate cuBLAS reaches in the same run (8192^3 GEMM), and the
// short-prompt kernel attention_prefill where it fits (to place kFlashAttentionMinPrompt);
// from 2048 tokens also other FlashAttentionTilings than the default, and the default and one
// other with an (all-ones) padding mask.
//
//   flash_attention_bench
#include <cublas_v2.h>

#include "attention_prefill.cuh"
#include "flash_attention.cuh"
#include "gpu_test_util.h"

using namespace sinter::kernels;
using namespace gputest;

static double matrix_rate() {
  const int n = 8192;
  bf16 *a, *b;
  float *c;
  CUDA_CHECK(cudaMalloc(&a, size_t(n) * n * 2));
  CUDA_CHECK(cudaMalloc(&b, size_t(n) * n * 2));
  CUDA_CHECK(cudaMalloc(&c, size_t(n) * n * 4));
  CUDA_CHECK(cudaMemset(a, 0x3c, size_t(n) * n * 2));
  CUDA_CHECK(cudaMemset(b, 0x3c, size_t(n) * n * 2));
  cublasHandle_t handle;
  cublasCreate(&handle);
  const float one = 1.f, zero = 0.f;
  const double ms = median_ms(
      [&] {
        cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b,
                     CUDA_R_16BF, n, &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT);
      },
      3);
  cublasDestroy(handle);
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(c));
  return 2.0 * n * n * double(n) / (ms * 1e-3);
}

// With a padding mask (key_mask non-null: what an export with an attention_mask input
// compiles to) every key tile takes the masked path.
template <int S, int HQ, int HKV, int D, int ROW_TILES, int KEY_TILE, int MIN_BLOCKS,
          bool PADDING_MASK = false>
double time_tiling(const bf16 *qkv, bf16 *out, int calls, const int64_t *key_mask = nullptr) {
  constexpr int RS = (HQ + 2 * HKV) * D;
  constexpr uint32_t kScale = D == 64 ? 0x3e000000u : 0x3db504f3u;
  auto flash = flash_attention<S, HQ, HKV, D, 0, HQ * D, (HQ + HKV) * D, RS, kScale, true,
                               PADDING_MASK, bf16, bf16, ROW_TILES, KEY_TILE, MIN_BLOCKS>;
  const LaunchParams lp = flash_attention_launch(S, HQ, D, 1, {ROW_TILES, KEY_TILE, MIN_BLOCKS});
  return median_ms([&] { launch(flash, lp, 0, qkv, key_mask, out); }, calls);
}

// Causal: HQ heads x (q k^T + p v) over S (S + 1) / 2 visible pairs, 2 flops a multiply-add.
template <int S, int HQ, int D> double tflops(double ms) {
  return 4.0 * HQ * D * (double(S) * (S + 1) / 2) / (ms * 1e-3) / 1e12;
}

template <int S, int HQ, int HKV, int D>
void time_case(double rate) {
  constexpr int RS = (HQ + 2 * HKV) * D;
  constexpr uint32_t kScale = D == 64 ? 0x3e000000u : 0x3db504f3u;
  std::vector<uint16_t> qkv = random_bf16(size_t(S) * RS, 7, -2.f, 2.f);
  bf16 *dqkv = reinterpret_cast<bf16 *>(to_device(qkv));
  bf16 *dout = nullptr;
  CUDA_CHECK(cudaMalloc(&dout, size_t(S) * HQ * D * 2));
  constexpr FlashAttentionTiling kDefault = flash_attention_default_tiling(S, D);
  const int calls = S >= 8192 ? 5 : 50;
  const double flash_ms =
      time_tiling<S, HQ, HKV, D, kDefault.row_tiles, kDefault.key_tile,
                  kDefault.min_blocks_per_sm>(dqkv, dout, calls);
  std::printf("S=%-6d HQ=%d HKV=%d D=%-3d flash %9.4f ms  %6.1f TFLOP/s  %5.1f %% of matrix rate",
              S, HQ, HKV, D, flash_ms, tflops<S, HQ, D>(flash_ms),
              100.0 * tflops<S, HQ, D>(flash_ms) * 1e12 / rate);
  if constexpr (attention_prefill_supported(S, HQ, HKV, D, 0, HQ * D, (HQ + HKV) * D, RS)) {
    auto small = attention_prefill<S, HQ, HKV, D, 0, HQ * D, (HQ + HKV) * D, RS, kScale, true,
                                   false>;
    constexpr LaunchParams slp = attention_prefill_launch(S, HQ, D);
    const double small_ms = median_ms(
        [&] { launch(small, slp, 0, (const bf16 *)dqkv, (const int64_t *)nullptr, dout); }, calls);
    std::printf("   attention_prefill %9.4f ms", small_ms);
  }
  std::printf("\n");
  // Other tilings at the lengths where prompts are compute-bound (to choose the default).
  if constexpr (S >= 2048) {
    auto row = [&](const char *name, double ms) {
      std::printf("    tiling %-22s %9.4f ms  %6.1f TFLOP/s  %5.1f %%\n", name, ms,
                  tflops<S, HQ, D>(ms), 100.0 * tflops<S, HQ, D>(ms) * 1e12 / rate);
    };
    // An all-ones padding mask: the same result, every tile through the mask's path.
    int64_t *ones = to_device(std::vector<int64_t>(S, 1));
    row("padding mask, default",
        time_tiling<S, HQ, HKV, D, kDefault.row_tiles, kDefault.key_tile,
                    kDefault.min_blocks_per_sm, true>(dqkv, dout, calls, ones));
    // The tiling the default replaced (session 23's): two row tiles of 64 keys at D 64, one at
    // D 128.
    row(D <= 64 ? "padding mask, rows 2, keys 64" : "padding mask, rows 1, keys 64",
        time_tiling<S, HQ, HKV, D, D <= 64 ? 2 : 1, 64, 0, true>(dqkv, dout, calls, ones));
    CUDA_CHECK(cudaFree(ones));
    if constexpr (D <= 64) {
      row("rows 2, keys 64, 3/SM", time_tiling<S, HQ, HKV, D, 2, 64, 3>(dqkv, dout, calls));
      row("rows 2, keys 32, 3/SM", time_tiling<S, HQ, HKV, D, 2, 32, 3>(dqkv, dout, calls));
      row("rows 2, keys 32", time_tiling<S, HQ, HKV, D, 2, 32, 0>(dqkv, dout, calls));
      row("rows 2, keys 64", time_tiling<S, HQ, HKV, D, 2, 64, 0>(dqkv, dout, calls));
      row("rows 1, keys 64", time_tiling<S, HQ, HKV, D, 1, 64, 0>(dqkv, dout, calls));
      row("rows 1, keys 64, 4/SM", time_tiling<S, HQ, HKV, D, 1, 64, 4>(dqkv, dout, calls));
      row("rows 1, keys 128, 3/SM", time_tiling<S, HQ, HKV, D, 1, 128, 3>(dqkv, dout, calls));
    } else {
      row("rows 1, keys 64, 3/SM", time_tiling<S, HQ, HKV, D, 1, 64, 3>(dqkv, dout, calls));
      row("rows 1, keys 128", time_tiling<S, HQ, HKV, D, 1, 128, 0>(dqkv, dout, calls));
      row("rows 1, keys 32, 4/SM", time_tiling<S, HQ, HKV, D, 1, 32, 4>(dqkv, dout, calls));
      row("rows 1, keys 64", time_tiling<S, HQ, HKV, D, 1, 64, 0>(dqkv, dout, calls));
    }
  }
  CUDA_CHECK(cudaFree(dqkv));
  CUDA_CHECK(cudaFree(dout));
}

int main() {
  if (!have_device()) return 77;
  const double rate = matrix_rate();
  std::printf("bf16 dense matrix rate (cuBLAS 8192^3): %.1f TFLOP/s\n", rate / 1e12);
  time_case<16, 32, 8, 64>(rate);
  time_case<64, 32, 8, 64>(rate);
  time_case<128, 32, 8, 64>(rate);
  time_case<256, 32, 8, 64>(rate);
  time_case<512, 32, 8, 64>(rate);
  time_case<2048, 32, 8, 64>(rate);
  time_case<8192, 32, 8, 64>(rate);
  time_case<32768, 32, 8, 64>(rate);
  time_case<128, 32, 8, 128>(rate);
  time_case<512, 32, 8, 128>(rate);
  time_case<2048, 32, 8, 128>(rate);
  time_case<8192, 32, 8, 128>(rate);
  return 0;
}
