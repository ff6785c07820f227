// Decode attention (one new token per sequence, BATCH sequences at one position) over bf16 KV
// caches, with the cache update fused in. Semantics, argument order, partials layout and
// limits: launch_params.h ("attention_decode"); launch: attention_decode_launch(HKV, MAX_LEN,
// SPLIT, BATCH), SPLIT from attention_decode_split(MAX_LEN, HQ, HKV, D, num_sms).
//
// Block (g, s, b) handles the GROUP query heads of kv head g of sequence b over split s of the
// keys [0, p] (with KEY_MASK: of the whole cache, the keys the mask keeps).
// Tensor-core path (attention_decode_tensor_cores): see the comment at its loop below. The
// scalar path: lanes come in runs of LPK = next_pow2(D/8) per key: lane c of a run loads the
// 16-byte chunk c of that key's K and V rows (row p from qkv, the others from the cache), so a
// warp covers 32/LPK keys and the block KPB = 128/LPK keys per pass. Scores are reduced over
// the run with xor shuffles; every thread keeps its own online softmax (running max, sum and 8
// accumulators per head, log2 domain) over the keys of its slot, U passes' loads in flight at
// a time. The slots are merged with shuffles. Both paths merge the warps through shared
// memory. With more than one active split the blocks write partial records and the last to
// arrive merges them, or (attention_decode_clustered) the splits of a kv head form a cluster
// that merges the records, kept in shared memory, across the cluster. With QK_NORM every block
// first normalizes and rotates its q heads and the new key into shared memory
// (decode_qk_norm_rope) and reads them from there.
#pragma once

#include "kernel_common.cuh"

#include <cooperative_groups.h>

namespace sinter::kernels {

namespace detail {
// Merges the online-softmax state (mo, lo, ao) into (m, l, a), log2 domain.
template <int N>
__device__ __forceinline__ void decode_merge(float &m, float &l, float (&a)[N], float mo, float lo,
                                             const float (&ao)[N]) {
  const float mn = fmaxf(m, mo);
  const float ca = mn == -INFINITY ? 0.f : exp2f(m - mn);
  const float cb = mn == -INFINITY ? 0.f : exp2f(mo - mn);
  l = l * ca + lo * cb;
#pragma unroll
  for (int k = 0; k < N; ++k) a[k] = a[k] * ca + ao[k] * cb;
  m = mn;
}

// QK_NORM: the GROUP query heads of a kv head (q: consecutive heads of D) and its new key (k),
// each normalized over its D columns as qk_norm_rope does (weights q_norm / k_norm [D], bf16 or
// fp32) and then rotated with this sequence's table row cos / sin [D] as rope_rows does, into
// staged [(GROUP + 1) * D] (the q heads, then the key). One warp per head for the norm (a lane
// per 16-byte vector: D <= 256), then every thread on the rotation pairs; both barriers are
// the whole block's.
template <int GROUP, int D, int THREADS, uint32_t EPS_BITS, typename NormT, typename TableT>
__device__ __forceinline__ void decode_qk_norm_rope(const bf16 *q, const bf16 *k,
                                                    const NormT *q_norm, const NormT *k_norm,
                                                    const TableT *cos, const TableT *sin,
                                                    bf16 *staged) {
  static_assert(std::is_same_v<NormT, bf16> || std::is_same_v<NormT, float>,
                "attention_decode: bf16 or float q/k norm weights");
  static_assert(std::is_same_v<TableT, bf16> || std::is_same_v<TableT, float>,
                "attention_decode: bf16 or float cos / sin tables");
  constexpr int HEADS = GROUP + 1;
  constexpr int HALF = D / 2;
  constexpr int VECTORS = D / 8;
  constexpr int WARPS = THREADS / 32;
  constexpr int PAIRS = HEADS * HALF;
  constexpr int PAIRS_PER_THREAD = (PAIRS + THREADS - 1) / THREADS;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  // The table entries of this thread's rotation pairs, loaded beside the heads.
  float cos_lo[PAIRS_PER_THREAD], cos_hi[PAIRS_PER_THREAD];
  float sin_lo[PAIRS_PER_THREAD], sin_hi[PAIRS_PER_THREAD];
#pragma unroll
  for (int t = 0; t < PAIRS_PER_THREAD; ++t) {
    const int i = (tid + t * THREADS) % HALF;
    cos_lo[t] = to_float(cos[i]);
    cos_hi[t] = to_float(cos[i + HALF]);
    sin_lo[t] = to_float(sin[i]);
    sin_hi[t] = to_float(sin[i + HALF]);
  }
  for (int h = warp; h < HEADS; h += WARPS) {
    const bf16 *row = h < GROUP ? q + h * D : k;
    const NormT *w = h < GROUP ? q_norm : k_norm;
    const uint4 v = lane < VECTORS ? ld16(row + lane * 8) : make_uint4(0u, 0u, 0u, 0u);
    const float r =
        rsqrtf(warp_sum(sum_squares_bf16x8(v, 0.f)) / float(D) + __uint_as_float(EPS_BITS));
    if (lane < VECTORS) {
      uint4 n;
      if constexpr (std::is_same_v<NormT, float>) {
        const uint4 *wv = reinterpret_cast<const uint4 *>(w + lane * 8);
        n = rms_scale_bf16x8_f32w(v, ld_ro16(wv), ld_ro16(wv + 1), r);
      } else {
        n = rms_scale_bf16x8(v, ld_ro16(w + lane * 8), r);
      }
      st16(staged + h * D + lane * 8, n);
    }
  }
  __syncthreads();
#pragma unroll
  for (int t = 0; t < PAIRS_PER_THREAD; ++t) {
    const int pair = tid + t * THREADS;
    if (pair < PAIRS) {
      bf16 *row = staged + (pair / HALF) * D;
      const int i = pair % HALF;
      const float a = __bfloat162float(row[i]), b = __bfloat162float(row[i + HALF]);
      row[i] = __float2bfloat16_rn(a * cos_lo[t] - b * sin_lo[t]);
      row[i + HALF] = __float2bfloat16_rn(b * cos_hi[t] + a * sin_hi[t]);
    }
  }
  __syncthreads();
}

// The kernel's body, shared by attention_decode (splits merged through global memory) and
// attention_decode_clustered (CLUSTER: the splits of a kv head form one thread-block cluster
// and merge through distributed shared memory).
template <int HQ, int HKV, int D, int Q_OFF, int K_OFF, int V_OFF, int ROW_STRIDE, int MAX_LEN,
          int SPLIT, uint32_t SCALE_BITS, bool KEY_MASK, int BATCH, bool CLUSTER, bool QK_NORM,
          typename NormT, typename TableT, uint32_t NORM_EPS_BITS, uint32_t SOFTCAP_BITS>
__device__ __forceinline__ void attention_decode_body(const bf16 *qkv, const int64_t *position,
                                                      bf16 *k_cache, bf16 *v_cache, bf16 *out,
                                                      float *partials, uint32_t *counters,
                                                      const int64_t *key_mask,
                                                      const NormT *q_norm, const NormT *k_norm,
                                                      const TableT *cos, const TableT *sin) {
  static_assert(attention_decode_supported(HQ, HKV, D, Q_OFF, K_OFF, V_OFF, ROW_STRIDE, MAX_LEN,
                                           SPLIT, BATCH),
                "attention_decode: needs HQ % HKV == 0, HQ / HKV <= 8, D % 8 == 0, D <= 256, "
                "8-aligned offsets and stride, heads inside the row, MAX_LEN >= 1, SPLIT >= 1, "
                "at most 256 splits and 1 <= BATCH <= 65535");
  static_assert(float_bits_nonnegative_finite(SOFTCAP_BITS),
                "attention_decode: SOFTCAP_BITS is a positive, finite cap or 0 (none)");
  static_assert(!CLUSTER || attention_decode_cluster_fits(MAX_LEN, SPLIT),
                "attention_decode_clustered: 2 to kAttentionDecodeMaxClusterSplits splits");
  constexpr int THREADS = kAttentionDecodeThreads;
  constexpr int WARPS = THREADS / 32;
  constexpr int GROUP = HQ / HKV;
  constexpr int NSPLIT = attention_decode_num_splits(MAX_LEN, SPLIT);
  constexpr int DV = D / 8;                           // 16-byte vectors per head row
  constexpr int LPK = attention_decode_lanes_per_key(D);
  constexpr int KPB = THREADS / LPK;                  // key slots per block
  // Passes in flight (register budget): with GROUP <= 4, 8 passes cover a 128-key split in
  // one round trip (test/gpu/decode_chain_bench: 128-key splits with 8 passes decode 2.2 %
  // faster at p = 127 and 1.3 % at p = 1023 than 64-key splits with 4).
  constexpr int UMAX = attention_decode_passes(GROUP);
  constexpr int U = ceil_div(SPLIT, KPB) < UMAX ? ceil_div(SPLIT, KPB) : UMAX;
  constexpr int TILE = KPB * U;
  constexpr int REC = D + 2; // partial record: acc[D], m, l
  constexpr float LOG2E = 1.4426950408889634f;

  __shared__ float red_m[WARPS][GROUP];
  __shared__ float red_l[WARPS][GROUP];
  __shared__ __align__(16) float red_acc[WARPS][GROUP][D];
  __shared__ int is_last;
  __shared__ float2 rec_ml[CLUSTER ? GROUP : 1]; // the block's record: (m, l) per head
  // Tensor-core path (attention_decode_tensor_cores): each warp stages the V rows of its keys.
  constexpr bool TC = attention_decode_tensor_cores(D, GROUP, QK_NORM);
  // QK_NORM: the normalized, rotated q heads and new key (decode_qk_norm_rope).
  __shared__ __align__(16) bf16 qk_staged[QK_NORM ? (GROUP + 1) * D : 8];
  constexpr int QC = D / 32; // 16-byte chunks per lane of a q or K row (k = 32c + 8 * (lane % 4))
  constexpr int KW = 32;     // keys per warp and round
  constexpr int ROUND = KW * WARPS;
  constexpr int VS = D + 8; // row stride of the staged V (elements): ldmatrix rows in distinct banks
  __shared__ __align__(16) bf16 v_stage[TC ? WARPS * KW * VS : 8];

  const int g = blockIdx.x;
  const int s = blockIdx.y;
  // Sequence b of the batch: its qkv row, caches, output row, key mask and scratch.
  if constexpr (BATCH > 1) {
    const int b = blockIdx.z;
    qkv += size_t(b) * ROW_STRIDE;
    k_cache += size_t(b) * HKV * MAX_LEN * D;
    v_cache += size_t(b) * HKV * MAX_LEN * D;
    out += size_t(b) * HQ * D;
    if constexpr (KEY_MASK) key_mask += size_t(b) * MAX_LEN;
    if constexpr (QK_NORM) {
      cos += size_t(b) * D;
      sin += size_t(b) * D;
    }
    if constexpr (NSPLIT > 1) {
      partials += size_t(b) * HKV * NSPLIT * GROUP * REC;
      counters += size_t(b) * HKV;
    }
  }
  const int tid = threadIdx.x;
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int c = lane & (LPK - 1);  // 16-byte chunk of the row
  const int slot = tid / LPK;      // key slot in the block
  const bool has_chunk = c < DV;

  detail::BlockTrace trace;
  detail::pdl_launch_dependents();
  // The cache rows of this split below the position were written by earlier calls: ask the L2
  // for them (as many as it holds: attention_decode_prefetch_rows) while the QKV projection
  // still runs, so the loads after the wait hit the L2. The position is read before the wait
  // and may be stale under PDL; it only steers the hint.
  constexpr int PREFETCH_ROWS = attention_decode_prefetch_rows(HKV, D, MAX_LEN, SPLIT, BATCH);
  if (tid == 0) {
    const int64_t hint = *reinterpret_cast<const volatile int64_t *>(position);
    const int first = s * SPLIT;
    const int last = hint > 0 && hint < MAX_LEN ? min(first + PREFETCH_ROWS, int(hint)) : first;
    if (first < last) {
      const size_t row = size_t(g) * MAX_LEN + first;
      detail::prefetch_l2(k_cache + row * D, uint32_t(last - first) * D * 2);
      detail::prefetch_l2(v_cache + row * D, uint32_t(last - first) * D * 2);
    }
  }
  const bf16 *new_k = qkv + K_OFF + g * D;
  const bf16 *new_v = qkv + V_OFF + g * D;
  const bf16 *kc = k_cache + size_t(g) * MAX_LEN * D;
  const bf16 *vc = v_cache + size_t(g) * MAX_LEN * D;
  const int r8 = lane >> 2; // tensor-core fragments: row / column group of the lane
  const int q4 = lane & 3;  // and its k pair
  // Whether key j (of the split's rows below `limit`) is attended (the scalar path).
  auto attended = [&](int j, int limit) {
    return j < limit && (!KEY_MASK || key_mask[j] != 0);
  };
  // Tensor-core path: one round of this warp's keys kb .. kb + 31, rows below `limit` only
  // (zeros from there on), row `fresh` from qkv: the V rows into the warp's stage through
  // cp.async (one group), the K rows into the B fragments kf[4][QC] of the 4 column tiles.
  // With a key mask, bit r of `keep` says whether row kb + r is attended (unused without).
  auto load_round = [&](int kb, int limit, int fresh, auto &kf, uint32_t keep) {
    bf16 *vsw = v_stage + warp * KW * VS;
    for (int i = lane; i < KW * DV; i += 32) {
      const int r = i / DV;
      const int cv = i - r * DV;
      const int j = kb + r;
      const bool live = j < limit && (!KEY_MASK || ((keep >> r) & 1u));
      const bf16 *src = j == fresh ? new_v : vc + size_t(live ? j : s * SPLIT) * D;
      detail::cp_async16_zfill(vsw + r * VS + cv * 8, src + cv * 8, live ? 16u : 0u);
    }
    detail::cp_async_commit();
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      const int j = kb + 8 * nt + r8;
      const bf16 *row = j == fresh ? new_k : kc + size_t(j) * D;
#pragma unroll
      for (int cq = 0; cq < QC; ++cq)
        kf[nt][cq] = j < limit && (!KEY_MASK || ((keep >> (8 * nt + r8)) & 1u))
                         ? detail::ld16(row + 32 * cq + q4 * 8)
                         : make_uint4(0, 0, 0, 0);
    }
  };
  // Round 0 is loaded before the wait, bounded by the split's rows (the position is not known
  // yet). Cache rows below the position were written by earlier calls, and no launch that can
  // still run writes them (launch_params.h); rows at or past the position are fixed after it
  // is read: row p comes from qkv, later V rows become zeros, later keys are masked.
  // With a key mask the rows to read are known after the wait only (preloading every row of
  // every split measured slower: results/attention_decode_s28b.log).
  constexpr bool PRELOAD = TC && SINTER_ATTENTION_DECODE_PRELOAD && !KEY_MASK;
  uint4 kf0[PRELOAD ? 4 : 1][PRELOAD ? QC : 1];
  if constexpr (PRELOAD)
    load_round(s * SPLIT + warp * KW, min(s * SPLIT + SPLIT, MAX_LEN), -1, kf0, 0u);
  detail::pdl_wait();
  trace.waited();

  const int64_t p64 = *position;
  if constexpr (QK_NORM) {
    detail::decode_qk_norm_rope<GROUP, D, THREADS, NORM_EPS_BITS>(
        qkv + Q_OFF + size_t(g) * GROUP * D, new_k, q_norm, k_norm, cos, sin, qk_staged);
    new_k = qk_staged + GROUP * D;
  }
  // The new key and value (row p), loaded beside the position for the preloaded round.
  uint4 nk[PRELOAD ? QC : 1], nv = make_uint4(0, 0, 0, 0);
  if constexpr (PRELOAD) {
#pragma unroll
    for (int cq = 0; cq < QC; ++cq) nk[cq] = detail::ld16(new_k + 32 * cq + q4 * 8);
    if (lane < DV) nv = detail::ld16(new_v + lane * 8);
  }
  // q chunk c of the GROUP heads, scaled by scale * log2(e), in fp32 registers (loaded while
  // the position, which the K/V addresses depend on, is in flight).
  float q[TC ? 1 : GROUP][8];
  uint4 qa[TC ? QC : 1];    // A fragment: q of head r8 (heads >= GROUP: zeros)
  if constexpr (TC) {
#pragma unroll
    for (int cq = 0; cq < QC; ++cq)
      qa[cq] = r8 < GROUP ? detail::ld16((QK_NORM ? qk_staged + r8 * D
                                                  : qkv + Q_OFF + (g * GROUP + r8) * D) +
                                         32 * cq + q4 * 8)
                          : make_uint4(0, 0, 0, 0);
  } else {
    const float qs = __uint_as_float(SCALE_BITS) * LOG2E;
#pragma unroll
    for (int h = 0; h < GROUP; ++h) {
      uint4 v = make_uint4(0, 0, 0, 0);
      if (has_chunk)
        v = detail::ld16((QK_NORM ? qk_staged + h * D : qkv + Q_OFF + (g * GROUP + h) * D) +
                         c * 8);
      const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        q[h][2 * k] = detail::bf16_lo(w[k]) * qs;
        q[h][2 * k + 1] = detail::bf16_hi(w[k]) * qs;
      }
    }
  }

  bf16 *out_g = out + size_t(g) * GROUP * D;
  if (p64 < 0 || p64 >= MAX_LEN) { // out of range: zeros, no cache write
    if (s == 0)
      for (int i = tid; i < GROUP * DV; i += THREADS) detail::st16(out_g + i * 8, make_uint4(0, 0, 0, 0));
    if constexpr (PRELOAD) detail::cp_async_wait<0>();
    return;
  }
  const int p = int(p64);
  trace.mark(0);
  const int start = s * SPLIT;
  // Nothing to do for this split (and no counter arrival); in a cluster it still takes part
  // in the merge when there is one (p past the first split).
  if (!KEY_MASK && start > p && (!CLUSTER || p < SPLIT)) {
    if constexpr (PRELOAD) detail::cp_async_wait<0>();
    return;
  }
  // Without a key mask the keys are [0, p]: splits with s * SPLIT <= p are active. With one,
  // any key of the cache may be attended: every split is.
  const int end = KEY_MASK ? min(start + SPLIT, MAX_LEN) : min(start + SPLIT, p + 1);
  const int nact = KEY_MASK ? NSPLIT : p / SPLIT + 1;
  const bool active = KEY_MASK || start <= p;
  // Block-uniform; always true without a cluster (the inactive returned above).
  if (!CLUSTER || active) {

    // Cache update: the block whose split holds p writes row p (nobody reads it in this launch).
    if ((!KEY_MASK || p >= start) && p < end && tid < 2 * DV) {
      const bool is_v = tid >= DV;
      const int cc = is_v ? tid - DV : tid;
      const uint4 v = detail::ld16((is_v ? new_v : new_k) + cc * 8);
      detail::st16((is_v ? v_cache : k_cache) + (size_t(g) * MAX_LEN + p) * D + cc * 8, v);
    }

    if constexpr (TC) {
      // Per round, warp w takes keys kb = start + round + 32w .. +31 as 4 column tiles of 8 keys.
      // Scores S[head][key] = q K^T: A = q (16 rows: the GROUP heads, then zeros), B = K rows
      // loaded straight into fragments (lane r8 of tile nt holds key kb + 8nt + r8); the k order
      // inside each MMA is permuted alike for A and B (see detail::mma_16x8). The C fragment
      // gives lane (r8, q4) head r8's scores of keys kb + 8nt + 2q4 + {0, 1}: exactly its A
      // fragment of P V over the 16 keys of tiles (2ks, 2ks+1). P goes in as bf16 hi + lo parts
      // (fp32-accurate P), V through shared memory with ldmatrix.trans. Online softmax per warp
      // and head across rounds, log2 domain.
      const float qs = __uint_as_float(SCALE_BITS) * LOG2E;
      const uint4 zero = make_uint4(0, 0, 0, 0);
      float m_run = -INFINITY, l_run = 0.f;
      float o[D / 8][4]; // d tile n: [0], [1] = O[head r8][8n + 2q4 + {0, 1}]; [2], [3] stay 0
#pragma unroll
      for (int n = 0; n < D / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[n][e] = 0.f;
      bf16 *vs = v_stage + warp * KW * VS;
      for (int rb = start; rb < end; rb += ROUND) {
        const int kb = rb + warp * KW;
        if (kb >= end) continue; // warp-uniform
        // Key mask of the round's 32 rows, one load a lane: bit r for row kb + r.
        uint32_t keep = 0;
        if constexpr (KEY_MASK)
          keep = __ballot_sync(0xffffffffu, kb + lane < end && key_mask[kb + lane] != 0);
        uint4 kf[4][QC];
        if (PRELOAD && rb == start) { // round 0 came in before the wait: fix rows >= p
          detail::cp_async_wait<0>();
          __syncwarp();
          for (int i = lane; i < KW * DV; i += 32) {
            const int r = i / DV;
            if (kb + r >= end) detail::st16(vs + r * VS + (i - r * DV) * 8, zero);
          }
          if (p >= kb && p < kb + KW && lane < DV) detail::st16(vs + (p - kb) * VS + lane * 8, nv);
#pragma unroll
          for (int nt = 0; nt < 4; ++nt) {
            const bool fresh = kb + 8 * nt + r8 == p;
#pragma unroll
            for (int cq = 0; cq < QC; ++cq) kf[nt][cq] = fresh ? nk[cq] : kf0[nt][cq];
          }
        } else {
          load_round(kb, end, p, kf, keep);
        }
        float sc[4][4];
        float mx = m_run;
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) sc[nt][e] = 0.f;
#pragma unroll
          for (int cq = 0; cq < QC; ++cq) detail::mma_16x8(sc[nt], qa[cq], zero, kf[nt][cq]);
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int j = kb + 8 * nt + 2 * q4 + e;
            const bool live = j < end && (!KEY_MASK || ((keep >> (j - kb)) & 1u));
            sc[nt][e] = live ? soft_capped_log2_score<SOFTCAP_BITS>(sc[nt][e] * qs) : -INFINITY;
            mx = fmaxf(mx, sc[nt][e]);
          }
        }
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float ref = mx == -INFINITY ? 0.f : mx;
        const float corr = exp2f(m_run - ref); // m_run == -inf -> 0
        m_run = mx;
        l_run *= corr;
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
          o[n][0] *= corr;
          o[n][1] *= corr;
        }
        uint32_t ph[2][2], pl[2][2]; // [k step][tile of the step]: P of keys 2q4, 2q4 + 1
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
          const float p0 = exp2f(sc[nt][0] - ref), p1 = exp2f(sc[nt][1] - ref); // -inf -> 0
          l_run += p0 + p1;
          const uint32_t hi = detail::pack_bf16x2(p0, p1);
          ph[nt >> 1][nt & 1] = hi;
          pl[nt >> 1][nt & 1] = detail::pack_bf16x2(p0 - detail::bf16_lo(hi), p1 - detail::bf16_hi(hi));
        }
        detail::cp_async_wait<0>();
        __syncwarp();
        // ldmatrix: lane i addresses row i % 8 of matrix i / 8 = (keys +8 if odd, d +8 if >= 2).
        const int mi = lane >> 3;
        const bf16 *vrow = vs + ((mi & 1) * 8 + (lane & 7)) * VS + (mi >> 1) * 8;
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) {
#pragma unroll
          for (int n2 = 0; n2 < D / 16; ++n2) {
            uint32_t b[4];
            detail::ldmatrix_x4_trans(b, vrow + 16 * ks * VS + 16 * n2);
            detail::mma_bf16_16816(o[2 * n2], ph[ks][0], 0u, ph[ks][1], 0u, b[0], b[1]);
            detail::mma_bf16_16816(o[2 * n2], pl[ks][0], 0u, pl[ks][1], 0u, b[0], b[1]);
            detail::mma_bf16_16816(o[2 * n2 + 1], ph[ks][0], 0u, ph[ks][1], 0u, b[2], b[3]);
            detail::mma_bf16_16816(o[2 * n2 + 1], pl[ks][0], 0u, pl[ks][1], 0u, b[2], b[3]);
          }
        }
        __syncwarp(); // every lane's ldmatrix is done before the next round restages
      }
      if constexpr (PRELOAD) detail::cp_async_wait<0>(); // a warp that skipped round 0
      l_run += __shfl_xor_sync(0xffffffffu, l_run, 1);
      l_run += __shfl_xor_sync(0xffffffffu, l_run, 2);
      trace.mark(1);
      if (r8 < GROUP) {
#pragma unroll
        for (int n = 0; n < D / 8; ++n)
          *reinterpret_cast<float2 *>(&red_acc[warp][r8][8 * n + 2 * q4]) = make_float2(o[n][0], o[n][1]);
        if (q4 == 0) {
          red_m[warp][r8] = m_run;
          red_l[warp][r8] = l_run;
        }
      }
    } else {
      float m[GROUP], l[GROUP], acc[GROUP][8];
    #pragma unroll
      for (int h = 0; h < GROUP; ++h) {
        m[h] = -INFINITY;
        l[h] = 0.f;
    #pragma unroll
        for (int k = 0; k < 8; ++k) acc[h][k] = 0.f;
      }

      for (int base = start; base < end; base += TILE) {
        uint4 kv[U], vv[U];
        bool live[U];
    #pragma unroll
        for (int u = 0; u < U; ++u) {
          const int j = base + u * KPB + slot;
          kv[u] = make_uint4(0, 0, 0, 0);
          vv[u] = make_uint4(0, 0, 0, 0);
          live[u] = attended(j, end);
          if (live[u] && has_chunk) {
            const bool fresh = j == p;
            kv[u] = detail::ld16((fresh ? new_k : kc + size_t(j) * D) + c * 8);
            vv[u] = detail::ld16((fresh ? new_v : vc + size_t(j) * D) + c * 8);
          }
        }
        float sc[U][GROUP];
    #pragma unroll
        for (int u = 0; u < U; ++u) {
          const uint32_t w[4] = {kv[u].x, kv[u].y, kv[u].z, kv[u].w};
    #pragma unroll
          for (int h = 0; h < GROUP; ++h) {
            float d0 = 0.f, d1 = 0.f;
    #pragma unroll
            for (int k = 0; k < 4; ++k) {
              d0 = fmaf(q[h][2 * k], detail::bf16_lo(w[k]), d0);
              d1 = fmaf(q[h][2 * k + 1], detail::bf16_hi(w[k]), d1);
            }
            float d = d0 + d1;
    #pragma unroll
            for (int o = 1; o < LPK; o <<= 1) d += __shfl_xor_sync(0xffffffffu, d, o);
            sc[u][h] = live[u] ? soft_capped_log2_score<SOFTCAP_BITS>(d) : -INFINITY;
          }
        }
    #pragma unroll
        for (int h = 0; h < GROUP; ++h) {
          float mt = m[h];
    #pragma unroll
          for (int u = 0; u < U; ++u) mt = fmaxf(mt, sc[u][h]);
          if (mt != -INFINITY) {
            const float corr = exp2f(m[h] - mt); // m[h] == -inf -> 0
            l[h] *= corr;
    #pragma unroll
            for (int k = 0; k < 8; ++k) acc[h][k] *= corr;
    #pragma unroll
            for (int u = 0; u < U; ++u) {
              const float pr = exp2f(sc[u][h] - mt); // -inf -> 0
              l[h] += pr;
              const uint32_t w[4] = {vv[u].x, vv[u].y, vv[u].z, vv[u].w};
    #pragma unroll
              for (int k = 0; k < 4; ++k) {
                acc[h][2 * k] = fmaf(pr, detail::bf16_lo(w[k]), acc[h][2 * k]);
                acc[h][2 * k + 1] = fmaf(pr, detail::bf16_hi(w[k]), acc[h][2 * k + 1]);
              }
            }
            m[h] = mt;
          }
        }
      }

      // Merge the key slots of the warp (lanes with the same chunk), then the warps.
    #pragma unroll
      for (int o = LPK; o < 32; o <<= 1) {
    #pragma unroll
        for (int h = 0; h < GROUP; ++h) {
          const float mo = __shfl_xor_sync(0xffffffffu, m[h], o);
          const float lo = __shfl_xor_sync(0xffffffffu, l[h], o);
          float ao[8];
    #pragma unroll
          for (int k = 0; k < 8; ++k) ao[k] = __shfl_xor_sync(0xffffffffu, acc[h][k], o);
          detail::decode_merge(m[h], l[h], acc[h], mo, lo, ao);
        }
      }
      trace.mark(1);
      if (lane < LPK && has_chunk) {
    #pragma unroll
        for (int h = 0; h < GROUP; ++h) {
          float4 *dst = reinterpret_cast<float4 *>(&red_acc[warp][h][c * 8]);
          dst[0] = make_float4(acc[h][0], acc[h][1], acc[h][2], acc[h][3]);
          dst[1] = make_float4(acc[h][4], acc[h][5], acc[h][6], acc[h][7]);
          if (lane == 0) {
            red_m[warp][h] = m[h];
            red_l[warp][h] = l[h];
          }
        }
      }
    }
    __syncthreads();
    trace.mark(2);

    constexpr int DP = D / 2;
    // The only active block (always when NSPLIT == 1) writes out directly.
    const bool direct = NSPLIT == 1 || nact == 1;
    float *rec_base = partials + (size_t(g) * NSPLIT * GROUP) * REC;
    // Block result per (head, column pair): unnormalized acc relative to the block max M.
    for (int i = tid; i < GROUP * DP; i += THREADS) {
      const int h = i / DP;
      const int d = 2 * (i - h * DP);
      float mx = -INFINITY;
#pragma unroll
      for (int w = 0; w < WARPS; ++w) mx = fmaxf(mx, red_m[w][h]);
      float L = 0.f, a0 = 0.f, a1 = 0.f;
#pragma unroll
      for (int w = 0; w < WARPS; ++w) {
        const float mw = red_m[w][h];
        const float f = mw == -INFINITY ? 0.f : exp2f(mw - mx);
        L = fmaf(red_l[w][h], f, L);
        a0 = fmaf(red_acc[w][h][d], f, a0);
        a1 = fmaf(red_acc[w][h][d + 1], f, a1);
      }
      if (direct) {
        // Every key masked (a key mask only): zeros, as the NaN-guarded softmax gives.
        const float inv = KEY_MASK && L == 0.f ? 0.f : 1.f / L;
        reinterpret_cast<uint32_t *>(out_g + h * D)[d / 2] = detail::pack_bf16x2(a0 * inv, a1 * inv);
      } else if constexpr (CLUSTER) {
        // The block's record stays in shared memory: acc in place of warp 0's (only this
        // thread reads red_acc[*][h][d, d + 1]), (m, l) beside it.
        *reinterpret_cast<float2 *>(&red_acc[0][h][d]) = make_float2(a0, a1);
        if (d == 0) rec_ml[h] = make_float2(mx, L);
      } else {
        float *rec = rec_base + (size_t(s) * GROUP + h) * REC;
        *reinterpret_cast<float2 *>(rec + d) = make_float2(a0, a1);
        if (d == 0) *reinterpret_cast<float2 *>(rec + D) = make_float2(mx, L);
      }
    }
    trace.mark(3);
    if constexpr (!CLUSTER && NSPLIT > 1) {
      if (direct) return;
      // Last-arriving active block of kv head g merges the nact records.
      __threadfence();
      __syncthreads();
      if (tid == 0) is_last = atomicAdd(&counters[g], 1u) == uint32_t(nact - 1);
      __syncthreads();
      if (!is_last) return;
      __threadfence();
      // Each thread merges the nact records of its (head, column pair), CH records' loads in
      // flight at a time (one round trip for NSPLIT <= CH).
      constexpr int CH = NSPLIT < 16 ? NSPLIT : 16;
      for (int i = tid; i < GROUP * DP; i += THREADS) {
        const int h = i / DP;
        const int d = 2 * (i - h * DP);
        const float *rh = rec_base + h * REC; // record (t, h) at rh + t * GROUP * REC
        float M = -INFINITY, L = 0.f, a0 = 0.f, a1 = 0.f;
        for (int t0 = 0; t0 < nact; t0 += CH) {
          float2 ml[CH], av[CH];
#pragma unroll
          for (int k = 0; k < CH; ++k) {
            const int t = t0 + k;
            ml[k] = make_float2(-INFINITY, 0.f);
            av[k] = make_float2(0.f, 0.f);
            if (t < nact) {
              ml[k] = __ldcg(reinterpret_cast<const float2 *>(rh + size_t(t) * GROUP * REC + D));
              av[k] = __ldcg(reinterpret_cast<const float2 *>(rh + size_t(t) * GROUP * REC + d));
            }
          }
          float mc = M;
#pragma unroll
          for (int k = 0; k < CH; ++k) mc = fmaxf(mc, ml[k].x);
          // Without a key mask mc is finite: record t0 < nact is active, and every active record
          // has a finite max. With one, a split may have no attended key (max -inf).
          const float corr = KEY_MASK && mc == -INFINITY ? 0.f : exp2f(M - mc); // M == -inf -> 0
          L *= corr;
          a0 *= corr;
          a1 *= corr;
#pragma unroll
          for (int k = 0; k < CH; ++k) {
            const float f = KEY_MASK && ml[k].x == -INFINITY ? 0.f : exp2f(ml[k].x - mc); // -inf -> 0
            L = fmaf(ml[k].y, f, L);
            a0 = fmaf(av[k].x, f, a0);
            a1 = fmaf(av[k].y, f, a1);
          }
          M = mc;
        }
        const float inv = KEY_MASK && L == 0.f ? 0.f : 1.f / L;
        reinterpret_cast<uint32_t *>(out_g + h * D)[d / 2] = detail::pack_bf16x2(a0 * inv, a1 * inv);
      }
      if (tid == 0) counters[g] = 0u; // ready for the next launch
    }
  } // active
  if constexpr (CLUSTER) {
    if (nact == 1) return; // block 0 wrote out directly
    constexpr int DP = D / 2;
    // Split t of kv head g is block rank t of its cluster (cluster dims (1, NSPLIT, 1)). After
    // the barrier (release / acquire at cluster scope) every record is visible; the cluster's
    // NSPLIT * THREADS threads share the (head, column pair) items, each reading the nact
    // records of its item from the other blocks' shared memory, all loads in flight at once.
    // The second barrier keeps every block's shared memory alive until the reads are done.
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    for (int i = s * THREADS + tid; i < GROUP * DP; i += NSPLIT * THREADS) {
      const int h = i / DP;
      const int d = 2 * (i - h * DP);
      float2 ml[NSPLIT], av[NSPLIT];
#pragma unroll
      for (int t = 0; t < NSPLIT; ++t) {
        ml[t] = make_float2(-INFINITY, 0.f);
        av[t] = make_float2(0.f, 0.f);
        if (t < nact) {
          ml[t] = cluster.map_shared_rank(rec_ml, t)[h];
          av[t] = *reinterpret_cast<const float2 *>(&cluster.map_shared_rank(&red_acc[0][0][0], t)[h * D + d]);
        }
      }
      float M = -INFINITY;
#pragma unroll
      for (int t = 0; t < NSPLIT; ++t) M = fmaxf(M, ml[t].x);
      float L = 0.f, a0 = 0.f, a1 = 0.f;
#pragma unroll
      for (int t = 0; t < NSPLIT; ++t) {
        // -inf: a split past nact, or (key mask) one with no attended key.
        const float f = ml[t].x == -INFINITY ? 0.f : exp2f(ml[t].x - M);
        L = fmaf(ml[t].y, f, L);
        a0 = fmaf(av[t].x, f, a0);
        a1 = fmaf(av[t].y, f, a1);
      }
      const float inv = KEY_MASK && L == 0.f ? 0.f : 1.f / L;
      reinterpret_cast<uint32_t *>(out_g + h * D)[d / 2] = detail::pack_bf16x2(a0 * inv, a1 * inv);
    }
    cluster.sync();
  }
}
} // namespace detail

template <int HQ, int HKV, int D, int Q_OFF, int K_OFF, int V_OFF, int ROW_STRIDE, int MAX_LEN,
          int SPLIT, uint32_t SCALE_BITS, bool KEY_MASK, int BATCH, bool QK_NORM = false,
          typename NormT = bf16, typename TableT = bf16, uint32_t NORM_EPS_BITS = 0u,
          uint32_t SOFTCAP_BITS = 0u>
__global__ void __launch_bounds__(kAttentionDecodeThreads)
    attention_decode(const bf16 *qkv, const int64_t *position, bf16 *k_cache, bf16 *v_cache,
                     bf16 *out, float *partials, uint32_t *counters, const int64_t *key_mask,
                     const NormT *q_norm, const NormT *k_norm, const TableT *cos,
                     const TableT *sin) {
  detail::attention_decode_body<HQ, HKV, D, Q_OFF, K_OFF, V_OFF, ROW_STRIDE, MAX_LEN, SPLIT,
                                SCALE_BITS, KEY_MASK, BATCH, false, QK_NORM, NormT, TableT,
                                NORM_EPS_BITS, SOFTCAP_BITS>(
      qkv, position, k_cache, v_cache, out, partials, counters, key_mask, q_norm, k_norm, cos, sin);
}

} // namespace sinter::kernels
