// SwiGLU gate on a fused gate|up activation [M, 2N] (gate columns [0, N), up [N, 2N)):
// out[m, j] = bf16(bf16(silu(g)) * u), HF's act_fn(gate) * up on bf16 tensors, for
// projections too wide for linear_small_m's SILU_MUL_PAIRS epilogue (M > 16).
// Launch: silu_mul_launch(M, N) in launch_params.h.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <int M, int N>
__global__ void __launch_bounds__(kSiluMulThreads) silu_mul(const bf16 *gate_up, bf16 *out) {
  static_assert(silu_mul_supported(M, N), "silu_mul: needs N % 8 == 0");
  detail::pdl_launch_dependents();
  detail::pdl_wait();
  constexpr int V = N / 8; // 16-byte vectors per half row
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= M * V)
    return;
  const int m = idx / V, v = idx % V;
  const bf16 *row = gate_up + size_t(m) * 2 * N;
  const uint4 g = detail::ld16(reinterpret_cast<const uint4 *>(row) + v);
  const uint4 u = detail::ld16(reinterpret_cast<const uint4 *>(row + N) + v);
  const uint32_t *gu = reinterpret_cast<const uint32_t *>(&g);
  const uint32_t *uu = reinterpret_cast<const uint32_t *>(&u);
  uint4 o;
  uint32_t *ou = reinterpret_cast<uint32_t *>(&o);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float g0 = detail::bf16_lo(gu[j]), g1 = detail::bf16_hi(gu[j]);
    const float s0 = detail::round_bf16(g0 / (1.f + __expf(-g0)));
    const float s1 = detail::round_bf16(g1 / (1.f + __expf(-g1)));
    ou[j] = detail::pack_bf16x2(s0 * detail::bf16_lo(uu[j]), s1 * detail::bf16_hi(uu[j]));
  }
  detail::st16(reinterpret_cast<uint4 *>(out + size_t(m) * N) + v, o);
}

} // namespace sinter::kernels
