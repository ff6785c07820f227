// attention_decode with the splits of each kv head as one thread-block cluster, merged through
// distributed shared memory (launch_params.h: attention_decode_cluster_fits, attention_decode_cluster_merge). Same
// parameters, arguments and launch as attention_decode; partials and counters are unused
// (nullptr). The cluster shape is part of the kernel, so a plain launch forms the clusters.
#pragma once

#include "attention_decode.cuh"

namespace sinter::kernels {

template <int HQ, int HKV, int D, int Q_OFF, int K_OFF, int V_OFF, int ROW_STRIDE, int MAX_LEN,
          int SPLIT, uint32_t SCALE_BITS, bool KEY_MASK, int BATCH, bool QK_NORM = false,
          typename NormT = bf16, typename TableT = bf16, uint32_t NORM_EPS_BITS = 0u,
          uint32_t SOFTCAP_BITS = 0u>
__global__ void __cluster_dims__(1, attention_decode_num_splits(MAX_LEN, SPLIT), 1)
    __launch_bounds__(kAttentionDecodeThreads)
        attention_decode_clustered(const bf16 *qkv, const int64_t *position, bf16 *k_cache,
                                   bf16 *v_cache, bf16 *out, float *partials, uint32_t *counters,
                                   const int64_t *key_mask, const NormT *q_norm,
                                   const NormT *k_norm, const TableT *cos, const TableT *sin) {
  detail::attention_decode_body<HQ, HKV, D, Q_OFF, K_OFF, V_OFF, ROW_STRIDE, MAX_LEN, SPLIT,
                                SCALE_BITS, KEY_MASK, BATCH, true, QK_NORM, NormT, TableT,
                                NORM_EPS_BITS, SOFTCAP_BITS>(
      qkv, position, k_cache, v_cache, out, partials, counters, key_mask, q_norm, k_norm, cos, sin);
}

} // namespace sinter::kernels
