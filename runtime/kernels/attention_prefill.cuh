// Prefill attention for short prompts (S up to a few hundred) reading q/k/v from one fused
// QKV buffer. Semantics, argument order and limits: launch_params.h ("attention_prefill");
// launch: attention_prefill_launch(S, HQ, D, sizeof(T)).
//
// One block per (q head, tile of 16 queries); K and V of the head's kv group (only the keys
// the tile can see when CAUSAL) are staged in shared memory in their own type (bf16 pairs in
// 32-bit words, or fp32 pairs in float2) with rows padded to D+2 elements (conflict-free
// column reads). Each warp takes one query at a time: lane j scores keys j, j+32, ... in
// fp32, softmax with warp reductions, then lanes split D for P @ V.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

namespace detail {
// One pair of adjacent elements of a K/V row as staged in shared memory.
template <typename T> struct AttentionPair;
template <> struct AttentionPair<bf16> {
  using type = uint32_t;
  static __device__ __forceinline__ float lo(uint32_t v) { return bf16_lo(v); }
  static __device__ __forceinline__ float hi(uint32_t v) { return bf16_hi(v); }
};
template <> struct AttentionPair<float> {
  using type = float2;
  static __device__ __forceinline__ float lo(float2 v) { return v.x; }
  static __device__ __forceinline__ float hi(float2 v) { return v.y; }
};
} // namespace detail

template <int S, int HQ, int HKV, int D, int Q_OFF, int K_OFF, int V_OFF, int ROW_STRIDE,
          uint32_t SCALE_BITS, bool CAUSAL, bool PADDING_MASK, typename T = bf16,
          typename OutT = T>
__global__ void __launch_bounds__(kAttentionWarps * 32)
    attention_prefill(const T *qkv, const int64_t *attention_mask, OutT *out) {
  static_assert(attention_prefill_supported(S, HQ, HKV, D, Q_OFF, K_OFF, V_OFF, ROW_STRIDE,
                                            int(sizeof(T))),
                "attention_prefill: needs HQ % HKV == 0, D % 8 == 0, 8-aligned offsets and "
                "stride, heads inside the row, and shared memory within the target's per-block limit");
  constexpr int QT = kAttentionQueryTile;
  constexpr int WARPS = kAttentionWarps;
  constexpr int THREADS = WARPS * 32;
  constexpr int SP = round_up(S, 32);
  constexpr int JJ = SP / 32;       // keys per lane
  using Pair = detail::AttentionPair<T>;
  using Word = typename Pair::type;
  constexpr int KW = (D + 2) / 2;   // element pairs per padded K/V row
  constexpr int DP = D / 2;         // element pairs per row
  constexpr int PP = (DP + 31) / 32; // pairs per lane in P @ V
  constexpr int GROUP = HQ / HKV;

  extern __shared__ __align__(16) unsigned char smem_raw[];
  Word *ks = reinterpret_cast<Word *>(smem_raw);
  Word *vs = ks + S * KW;
  float *qs = reinterpret_cast<float *>(vs + S * KW);
  float *ps = qs + QT * D;
  int *keyok = reinterpret_cast<int *>(ps + WARPS * SP);

  const int h = blockIdx.x;
  const int kvh = h / GROUP;
  const int q0 = blockIdx.y * QT;
  const int nq = min(QT, S - q0);
  const int nk = CAUSAL ? min(S, q0 + QT) : S; // keys any query of this tile can see
  const int tid = threadIdx.x;
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const float scale = __uint_as_float(SCALE_BITS);

  detail::pdl_launch_dependents();
  detail::pdl_wait();
  // Stage K, V rows [0, nk) and the q tile.
  constexpr int EV = 16 / int(sizeof(T)); // elements per 16-byte vector
  constexpr int PV = EV / 2;              // pairs per 16-byte vector
  constexpr int DV = D / EV;              // 16-byte vectors per head row
  for (int i = tid; i < nk * DV; i += THREADS) {
    const int j = i / DV;
    const int c = i - j * DV;
    const T *row = qkv + size_t(j) * ROW_STRIDE;
    const uint4 kv = detail::ld16(row + K_OFF + kvh * D + c * EV);
    const uint4 vv = detail::ld16(row + V_OFF + kvh * D + c * EV);
    const Word *kw = reinterpret_cast<const Word *>(&kv);
    const Word *vw = reinterpret_cast<const Word *>(&vv);
    Word *kd = ks + j * KW + c * PV;
    Word *vd = vs + j * KW + c * PV;
#pragma unroll
    for (int p = 0; p < PV; ++p) {
      kd[p] = kw[p];
      vd[p] = vw[p];
    }
  }
  for (int i = tid; i < nq * DV; i += THREADS) {
    const int qi = i / DV;
    const int c = i - qi * DV;
    const uint4 qv = detail::ld16(qkv + size_t(q0 + qi) * ROW_STRIDE + Q_OFF + h * D + c * EV);
    const Word *u = reinterpret_cast<const Word *>(&qv);
    float *qd = qs + qi * D + c * EV;
#pragma unroll
    for (int p = 0; p < PV; ++p) {
      qd[2 * p] = Pair::lo(u[p]) * scale;
      qd[2 * p + 1] = Pair::hi(u[p]) * scale;
    }
  }
  for (int j = tid; j < SP; j += THREADS) {
    int ok = j < S;
    if constexpr (PADDING_MASK) {
      if (ok) ok = attention_mask[j] != 0;
    }
    keyok[j] = ok;
  }
  __syncthreads();

  float *pw = ps + warp * SP;
  for (int qi = warp; qi < nq; qi += WARPS) {
    const int i = q0 + qi;
    const int jmax = CAUSAL ? i + 1 : S; // keys [0, jmax) before the padding mask
    const float *q = qs + qi * D;
    float s[JJ];
#pragma unroll
    for (int jj = 0; jj < JJ; ++jj) s[jj] = 0.f;
    for (int d = 0; d < DP; ++d) {
      const float2 qd = *reinterpret_cast<const float2 *>(q + 2 * d);
#pragma unroll
      for (int jj = 0; jj < JJ; ++jj) {
        const int j = jj * 32 + lane;
        if (j < jmax) {
          const Word kw = ks[j * KW + d];
          s[jj] = fmaf(qd.x, Pair::lo(kw), s[jj]);
          s[jj] = fmaf(qd.y, Pair::hi(kw), s[jj]);
        }
      }
    }
    float mx = -INFINITY;
#pragma unroll
    for (int jj = 0; jj < JJ; ++jj) {
      const int j = jj * 32 + lane;
      if (!(j < jmax && keyok[j])) s[jj] = -INFINITY;
      mx = fmaxf(mx, s[jj]);
    }
    mx = detail::warp_max(mx);
    OutT *orow = out + size_t(i) * (HQ * D) + h * D;
    if (mx == -INFINITY) { // every key masked: zeros (HF's exported IsNaN -> 0)
#pragma unroll
      for (int pp = 0; pp < PP; ++pp) {
        const int dp = pp * 32 + lane;
        if (dp < DP) {
          orow[2 * dp] = detail::from_float<OutT>(0.f);
          orow[2 * dp + 1] = detail::from_float<OutT>(0.f);
        }
      }
      continue;
    }
    float sum = 0.f;
#pragma unroll
    for (int jj = 0; jj < JJ; ++jj) {
      const float p = s[jj] == -INFINITY ? 0.f : expf(s[jj] - mx);
      sum += p;
      pw[jj * 32 + lane] = p;
    }
    sum = detail::warp_sum(sum);
    __syncwarp();
    const float inv = 1.f / sum;
#pragma unroll
    for (int pp = 0; pp < PP; ++pp) {
      const int dp = pp * 32 + lane;
      if (dp < DP) {
        float o0 = 0.f, o1 = 0.f;
        for (int j = 0; j < jmax; ++j) {
          const float p = pw[j];
          const Word vw = vs[j * KW + dp];
          o0 = fmaf(p, Pair::lo(vw), o0);
          o1 = fmaf(p, Pair::hi(vw), o1);
        }
        if constexpr (sizeof(OutT) == 2)
          reinterpret_cast<uint32_t *>(orow)[dp] = detail::pack_bf16x2(o0 * inv, o1 * inv);
        else
          reinterpret_cast<float2 *>(orow)[dp] = make_float2(o0 * inv, o1 * inv);
      }
    }
    __syncwarp();
  }
}

} // namespace sinter::kernels
