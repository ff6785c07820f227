// Writes rows into a KV cache of any layout and float type at their positions along one axis:
// the cache write of the exports no fused-QKV kernel takes (fp32 and f16 caches, batched
// caches, caches whose rows come from separate projections). Semantics, argument order and
// limits: launch_params.h ("cache_rows_write"); launch: cache_rows_write_launch(...).
//
// One thread per row element: it stores rows[outer, row, inner] at
// cache[outer, positions[row], inner], skipping rows whose position is out of range.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <int OUTER, int ROWS, int INNER, int MAX_LEN, typename T>
__global__ void __launch_bounds__(cache_rows_write_threads(OUTER, ROWS, INNER))
    cache_rows_write(const T *rows, const int64_t *positions, T *cache) {
  static_assert(cache_rows_write_supported(OUTER, ROWS, INNER, MAX_LEN),
                "cache_rows_write: needs positive extents and fewer than 2^30 row elements");
  constexpr int ELEMENTS = OUTER * ROWS * INNER;
  detail::pdl_launch_dependents();
  detail::pdl_wait();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= ELEMENTS) return;
  const int outer = i / (ROWS * INNER);
  const int row = (i / INNER) % ROWS;
  const int inner = i % INNER;
  const int64_t position = positions[row];
  if (position < 0 || position >= MAX_LEN) return;
  cache[(size_t(outer) * MAX_LEN + size_t(position)) * INNER + inner] = rows[i];
}

} // namespace sinter::kernels
