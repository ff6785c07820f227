// out[m, :] = table[ids[m], :], 16-byte vectorized. An id outside [0, VOCAB) writes zeros.
// OutT is T, or float for a bf16 table (fp32 activations: each 16-byte vector of the table
// becomes two of the output). Launch: embedding_gather_launch(M, D, sizeof(T)) in
// launch_params.h.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <int M, int D, int VOCAB, typename T, typename OutT = T>
__global__ void __launch_bounds__(embedding_gather_threads(D, int(sizeof(T))))
    embedding_gather(const int64_t *ids, const T *table, OutT *out) {
  static_assert(embedding_gather_supported(M, D, VOCAB, int(sizeof(T))),
                "embedding_gather: needs D * sizeof(T) % 16 == 0");
  constexpr bool WIDEN = sizeof(OutT) != sizeof(T);
  static_assert(!WIDEN || (sizeof(T) == 2 && sizeof(OutT) == 4),
                "embedding_gather: OutT is T or float for a bf16 table");
  constexpr int V = embedding_gather_vectors(D, int(sizeof(T)));
  constexpr int THREADS = embedding_gather_threads(D, int(sizeof(T)));
  detail::pdl_launch_dependents();
  const int m = blockIdx.y;
  const int v = blockIdx.x * THREADS + threadIdx.x;
  detail::pdl_wait();
  if (v >= V) return;
  const int64_t id = ids[m];
  uint4 val = make_uint4(0u, 0u, 0u, 0u);
  if (id >= 0 && id < VOCAB)
    val = detail::ld_ro16(reinterpret_cast<const uint4 *>(table + size_t(id) * D) + v);
  uint4 *orow = reinterpret_cast<uint4 *>(out + size_t(m) * D);
  if constexpr (WIDEN) { // two bf16 pairs -> four floats
    auto widen = [](uint32_t p, uint32_t q) {
      return make_uint4(__float_as_uint(detail::bf16_lo(p)), __float_as_uint(detail::bf16_hi(p)),
                        __float_as_uint(detail::bf16_lo(q)), __float_as_uint(detail::bf16_hi(q)));
    };
    detail::st16(orow + 2 * v, widen(val.x, val.y));
    detail::st16(orow + 2 * v + 1, widen(val.z, val.w));
  } else {
    detail::st16(orow + v, val);
  }
}

} // namespace sinter::kernels
