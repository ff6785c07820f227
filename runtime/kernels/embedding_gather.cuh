// out[m, :] = table[ids[m], :], 16-byte vectorized. An id outside [0, VOCAB) writes zeros.
// Launch: embedding_gather_launch(M, D, sizeof(T)) in launch_params.h.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <int M, int D, int VOCAB, typename T>
__global__ void __launch_bounds__(embedding_gather_threads(D, int(sizeof(T))))
    embedding_gather(const int64_t *ids, const T *table, T *out) {
  static_assert(embedding_gather_supported(M, D, VOCAB, int(sizeof(T))),
                "embedding_gather: needs D * sizeof(T) % 16 == 0");
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
  detail::st16(reinterpret_cast<uint4 *>(out + size_t(m) * D) + v, val);
}

} // namespace sinter::kernels
