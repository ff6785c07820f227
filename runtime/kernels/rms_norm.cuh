// out = bf16(w * bf16(x_f32 * rsqrt(mean(x_f32^2) + eps))) for bf16 w (HF LlamaRMSNorm's
// rounding), bf16(w * (x_f32 * rsqrt(...))) for float w (Gemma's and OLMo 2's: one rounding).
// One block per row; launch: rms_norm_launch(M, D) in launch_params.h.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <int M, int D, uint32_t EPS_BITS, typename WT = bf16>
__global__ void __launch_bounds__(rms_norm_threads(D))
    rms_norm(const bf16 *x, const WT *w, bf16 *out) {
  static_assert(rms_norm_supported(M, D), "rms_norm: needs D % 8 == 0");
  static_assert(std::is_same_v<WT, bf16> || std::is_same_v<WT, float>,
                "rms_norm: bf16 or float weights");
  constexpr int V = D / 8;
  constexpr int THREADS = rms_norm_threads(D);
  constexpr int PER = (V + THREADS - 1) / THREADS;
  constexpr int WARPS = THREADS / 32;
  __shared__ float partial[WARPS];

  detail::pdl_launch_dependents();
  detail::pdl_wait();
  const int m = blockIdx.x;
  uint4 v[PER];
  const float total = detail::row_sum_squares_bf16<PER, THREADS>(
      reinterpret_cast<const uint4 *>(x + size_t(m) * D), V, v, partial);
  const float r = rsqrtf(total / float(D) + __uint_as_float(EPS_BITS));

  uint4 *outr = reinterpret_cast<uint4 *>(out + size_t(m) * D);
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int idx = threadIdx.x + i * THREADS;
    if (idx >= V) break;
    if constexpr (std::is_same_v<WT, float>) {
      const uint4 *wv = reinterpret_cast<const uint4 *>(w) + 2 * idx;
      detail::st16(outr + idx, detail::rms_scale_bf16x8_f32w(v[i], detail::ld_ro16(wv),
                                                             detail::ld_ro16(wv + 1), r));
    } else {
      const uint4 wv = detail::ld_ro16(reinterpret_cast<const uint4 *>(w) + idx);
      detail::st16(outr + idx, detail::rms_scale_bf16x8(v[i], wv, r));
    }
  }
}

} // namespace sinter::kernels
