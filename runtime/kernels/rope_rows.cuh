// In-place rotary embedding on the q|k columns of a fused QKV activation [M, ROW_STRIDE]
// (row = token), for projections too wide for linear_small_m's RoPE epilogue (M > 16):
//   for each head h of the first ROPE_COLS columns and i < R/2, with q = qkv[m, h*D..] and R
//   = ROTARY_DIM (0: D; fewer: partial rotary, the head's columns from R on untouched):
//     q'_i       = q_i * cos[m, i] - q_{i+R/2} * sin[m, i]
//     q'_{i+R/2} = q_{i+R/2} * cos[m, i+R/2] + q_i * sin[m, i+R/2]
// computed in fp32 from the bf16 values and rounded once, like linear_small_m's ROPE_PAIRS.
// Launch: rope_rows_launch(M, ROPE_COLS) in launch_params.h.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <int M, int ROW_STRIDE, int ROPE_COLS, int HEAD_DIM, int ROTARY_DIM = 0>
__global__ void __launch_bounds__(rope_rows_threads(ROPE_COLS))
    rope_rows(const bf16 *cos, const bf16 *sin, bf16 *qkv) {
  static_assert(rope_rows_supported(M, ROW_STRIDE, ROPE_COLS, HEAD_DIM), "rope_rows: bad shape");
  constexpr int ROT = ROTARY_DIM ? ROTARY_DIM : HEAD_DIM;
  static_assert(ROT >= 2 && ROT % 2 == 0 && ROT <= HEAD_DIM,
                "rope_rows: ROTARY_DIM is an even number of a head's columns");
  constexpr int HALF = ROT / 2;
  constexpr int PAIRS = ROPE_COLS / HEAD_DIM * HALF;
  detail::pdl_launch_dependents();
  detail::pdl_wait();
  const int m = blockIdx.x;
  bf16 *row = qkv + size_t(m) * ROW_STRIDE;
  const bf16 *c = cos + size_t(m) * ROT, *s = sin + size_t(m) * ROT;
  for (int p = threadIdx.x; p < PAIRS; p += blockDim.x) {
    const int head = p / HALF, i = p % HALF;
    bf16 *q = row + head * HEAD_DIM;
    const float a = __bfloat162float(q[i]), b = __bfloat162float(q[i + HALF]);
    const float out_a = a * __bfloat162float(c[i]) - b * __bfloat162float(s[i]);
    const float out_b = b * __bfloat162float(c[i + HALF]) + a * __bfloat162float(s[i + HALF]);
    q[i] = __float2bfloat16_rn(out_a);
    q[i + HALF] = __float2bfloat16_rn(out_b);
  }
}

} // namespace sinter::kernels
