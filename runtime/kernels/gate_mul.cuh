// The gate of a gated MLP on a fused gate|up activation [M, 2N] (gate columns [0, N), up
// [N, 2N)): out[m, j] = bf16(bf16(act(g)) * u), HF's act_fn(gate) * up on bf16 tensors, with
// act silu (SwiGLU) or gelu_tanh (GeGLU), for projections too wide for linear_small_m's gate
// pair epilogues (M > 16). Launch: gate_mul_launch(M, N) in launch_params.h.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <int M, int N, GateActivation ACT = GateActivation::SILU>
__global__ void __launch_bounds__(kGateMulThreads) gate_mul(const bf16 *gate_up, bf16 *out) {
  static_assert(gate_mul_supported(M, N), "gate_mul: needs N % 8 == 0");
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
  auto act = [](float x) {
    if constexpr (ACT == GateActivation::GELU_TANH) return detail::gelu_tanh(x);
    else return x / (1.f + __expf(-x));
  };
  uint4 o;
  uint32_t *ou = reinterpret_cast<uint32_t *>(&o);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float s0 = detail::round_bf16(act(detail::bf16_lo(gu[j])));
    const float s1 = detail::round_bf16(act(detail::bf16_hi(gu[j])));
    ou[j] = detail::pack_bf16x2(s0 * detail::bf16_lo(uu[j]), s1 * detail::bf16_hi(uu[j]));
  }
  detail::st16(reinterpret_cast<uint4 *>(out + size_t(m) * N) + v, o);
}

} // namespace sinter::kernels
