// Per-head (Qwen3) or per-projection q / k RMSNorm followed by RoPE, in place on a fused QKV
// activation: what the attention kernels need when a model normalizes q and k before rotating
// them (the projection's RoPE epilogue cannot: a norm spans a whole head, many weight tiles).
// Semantics and limits: launch_params.h ("qk_norm_rope"); launch: qk_norm_rope_launch.
// The norm rounds as rms_norm does (HF's RMSNorm in bf16 with bf16 weights; fp32 weights scale in
// fp32 with one rounding, as OLMo 2's does), the rotation as rope_rows does (fp32 from the
// normalized bf16 values, rounded once) with bf16 or fp32 cos / sin tables.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <int M, int ROW_STRIDE, int Q_COLS, int K_COLS, int HEAD_DIM, int Q_SPAN, int K_SPAN,
          bool ROPE, uint32_t EPS_BITS, typename WT = bf16, typename TableT = bf16>
__global__ void __launch_bounds__(qk_norm_rope_threads(Q_SPAN > K_SPAN ? Q_SPAN : K_SPAN))
    qk_norm_rope(const WT *q_weight, const WT *k_weight, const TableT *cos, const TableT *sin,
                 bf16 *qkv) {
  static_assert(qk_norm_rope_supported(M, ROW_STRIDE, Q_COLS, K_COLS, HEAD_DIM, Q_SPAN, K_SPAN),
                "qk_norm_rope: bad shape");
  static_assert(std::is_same_v<WT, bf16> || std::is_same_v<WT, float>,
                "qk_norm_rope: bf16 or float norm weights");
  static_assert(std::is_same_v<TableT, bf16> || std::is_same_v<TableT, float>,
                "qk_norm_rope: bf16 or float cos / sin tables");
  constexpr int MAX_SPAN = Q_SPAN > K_SPAN ? Q_SPAN : K_SPAN;
  constexpr int THREADS = qk_norm_rope_threads(MAX_SPAN);
  constexpr int WARPS = THREADS / 32;
  constexpr int PER = (MAX_SPAN / 8 + THREADS - 1) / THREADS; // 8-column vectors per thread
  constexpr int HALF = HEAD_DIM / 2;
  constexpr int Q_SPANS = Q_COLS / Q_SPAN;
  __shared__ float partial[WARPS];
  __shared__ __align__(16) bf16 normed[ROPE ? MAX_SPAN : 8];

  detail::pdl_launch_dependents();
  detail::pdl_wait();
  const int m = blockIdx.x;
  const bool is_q = int(blockIdx.y) < Q_SPANS;
  const int span = is_q ? Q_SPAN : K_SPAN;
  const int col0 = is_q ? int(blockIdx.y) * Q_SPAN : Q_COLS + (int(blockIdx.y) - Q_SPANS) * K_SPAN;
  const WT *w = is_q ? q_weight : k_weight;
  bf16 *row = qkv + size_t(m) * ROW_STRIDE + col0;
  const int vectors = span / 8;

  uint4 v[PER];
  const float total = detail::row_sum_squares_bf16<PER, THREADS>(
      reinterpret_cast<const uint4 *>(row), vectors, v, partial);
  const float r = rsqrtf(total / float(span) + __uint_as_float(EPS_BITS));

#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int idx = threadIdx.x + i * THREADS;
    if (idx >= vectors) break;
    uint4 n;
    if constexpr (std::is_same_v<WT, float>) {
      const uint4 *wv = reinterpret_cast<const uint4 *>(w + idx * 8);
      n = detail::rms_scale_bf16x8_f32w(v[i], detail::ld_ro16(wv), detail::ld_ro16(wv + 1), r);
    } else {
      n = detail::rms_scale_bf16x8(v[i], detail::ld_ro16(w + idx * 8), r);
    }
    if constexpr (ROPE) detail::st16(normed + idx * 8, n);
    else detail::st16(row + idx * 8, n);
  }
  if constexpr (ROPE) {
    __syncthreads();
    const TableT *c = cos + size_t(m) * HEAD_DIM, *s = sin + size_t(m) * HEAD_DIM;
    for (int p = threadIdx.x; p < span / 2; p += THREADS) {
      const int head = p / HALF, i = p % HALF;
      const bf16 *q = normed + head * HEAD_DIM;
      const float a = __bfloat162float(q[i]), b = __bfloat162float(q[i + HALF]);
      row[head * HEAD_DIM + i] = __float2bfloat16_rn(a * detail::to_float(c[i]) -
                                                     b * detail::to_float(s[i]));
      row[head * HEAD_DIM + i + HALF] = __float2bfloat16_rn(
          b * detail::to_float(c[i + HALF]) + a * detail::to_float(s[i + HALF]));
    }
  }
}

} // namespace sinter::kernels
