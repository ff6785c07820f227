// Copies the new keys and values of N tokens from a fused QKV activation into the bf16 KV
// cache (after prefill attention). Semantics, argument order and limits: launch_params.h
// ("kv_cache_write"); launch: kv_cache_write_launch(N, HKV, D).
//
// One thread per (token, kv head, 16-byte vector): it copies that vector of the key into
// k_cache and of the value into v_cache, skipping tokens whose position is out of range.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <int N, int HKV, int D, int K_OFF, int V_OFF, int ROW_STRIDE, int MAX_LEN, int BATCH>
__global__ void __launch_bounds__(kv_cache_write_threads(BATCH * N, HKV, D))
    kv_cache_write(const bf16 *qkv, const int64_t *positions, bf16 *k_cache, bf16 *v_cache) {
  static_assert(kv_cache_write_supported(N, HKV, D, K_OFF, V_OFF, ROW_STRIDE, MAX_LEN) &&
                    BATCH >= 1,
                "kv_cache_write: needs D % 8 == 0, 8-aligned offsets and stride, heads inside "
                "the row, MAX_LEN >= 1, BATCH >= 1");
  constexpr int DV = D / 8;
  constexpr int TOTAL = kv_cache_write_vectors(BATCH * N, HKV, D);
  detail::pdl_launch_dependents();
  detail::pdl_wait();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= TOTAL) return;
  const int token = i / (HKV * DV); // b * N + n
  const int r = i - token * (HKV * DV); // g * DV + c
  const int g = r / DV;
  const int c = r - g * DV;
  const int b = token / N;
  const int64_t pos = positions[token - b * N];
  if (pos < 0 || pos >= MAX_LEN) return;
  const bf16 *row = qkv + size_t(token) * ROW_STRIDE;
  const uint4 k = detail::ld16(row + K_OFF + g * D + c * 8);
  const uint4 v = detail::ld16(row + V_OFF + g * D + c * 8);
  const size_t dst = ((size_t(b) * HKV + g) * MAX_LEN + size_t(pos)) * D + c * 8;
  detail::st16(k_cache + dst, k);
  detail::st16(v_cache + dst, v);
}

} // namespace sinter::kernels
