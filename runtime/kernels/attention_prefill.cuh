// Prefill attention for short prompts (S up to a few hundred) reading q/k/v from one fused
// QKV buffer. Semantics, argument order and limits: launch_params.h ("attention_prefill");
// launch: attention_prefill_launch(S, HQ, D).
//
// One block per (q head, tile of 16 queries); K and V of the head's kv group (only the keys
// the tile can see when CAUSAL) are staged in shared memory as bf16 with rows padded to D+2
// elements (conflict-free column reads). Each warp takes one query at a time: lane j scores
// keys j, j+32, ... in fp32, softmax with warp reductions, then lanes split D for P @ V.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <int S, int HQ, int HKV, int D, int Q_OFF, int K_OFF, int V_OFF, int ROW_STRIDE,
          uint32_t SCALE_BITS, bool CAUSAL, bool PADDING_MASK>
__global__ void __launch_bounds__(kAttentionWarps * 32)
    attention_prefill(const bf16 *qkv, const int64_t *attention_mask, bf16 *out) {
  static_assert(attention_prefill_supported(S, HQ, HKV, D, Q_OFF, K_OFF, V_OFF, ROW_STRIDE),
                "attention_prefill: needs HQ % HKV == 0, D % 8 == 0, 8-aligned offsets and "
                "stride, heads inside the row, and shared memory <= 227 KiB");
  constexpr int QT = kAttentionQueryTile;
  constexpr int WARPS = kAttentionWarps;
  constexpr int THREADS = WARPS * 32;
  constexpr int SP = round_up(S, 32);
  constexpr int JJ = SP / 32;       // keys per lane
  constexpr int KW = (D + 2) / 2;   // 32-bit words per padded K/V row
  constexpr int DP = D / 2;         // bf16 pairs per row
  constexpr int PP = (DP + 31) / 32; // pairs per lane in P @ V
  constexpr int GROUP = HQ / HKV;

  extern __shared__ __align__(16) unsigned char smem_raw[];
  uint32_t *ks = reinterpret_cast<uint32_t *>(smem_raw);
  uint32_t *vs = ks + S * KW;
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
  constexpr int DV = D / 8; // 16-byte vectors per head row
  for (int i = tid; i < nk * DV; i += THREADS) {
    const int j = i / DV;
    const int c = i - j * DV;
    const bf16 *row = qkv + size_t(j) * ROW_STRIDE;
    const uint4 kv = detail::ld16(row + K_OFF + kvh * D + c * 8);
    const uint4 vv = detail::ld16(row + V_OFF + kvh * D + c * 8);
    uint32_t *kd = ks + j * KW + c * 4;
    uint32_t *vd = vs + j * KW + c * 4;
    kd[0] = kv.x; kd[1] = kv.y; kd[2] = kv.z; kd[3] = kv.w;
    vd[0] = vv.x; vd[1] = vv.y; vd[2] = vv.z; vd[3] = vv.w;
  }
  for (int i = tid; i < nq * DV; i += THREADS) {
    const int qi = i / DV;
    const int c = i - qi * DV;
    const uint4 qv = detail::ld16(qkv + size_t(q0 + qi) * ROW_STRIDE + Q_OFF + h * D + c * 8);
    const uint32_t *u = reinterpret_cast<const uint32_t *>(&qv);
    float *qd = qs + qi * D + c * 8;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      qd[2 * j] = detail::bf16_lo(u[j]) * scale;
      qd[2 * j + 1] = detail::bf16_hi(u[j]) * scale;
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
          const uint32_t kw = ks[j * KW + d];
          s[jj] = fmaf(qd.x, detail::bf16_lo(kw), s[jj]);
          s[jj] = fmaf(qd.y, detail::bf16_hi(kw), s[jj]);
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
    bf16 *orow = out + size_t(i) * (HQ * D) + h * D;
    if (mx == -INFINITY) { // every key masked: zeros (HF's exported IsNaN -> 0)
#pragma unroll
      for (int pp = 0; pp < PP; ++pp) {
        const int dp = pp * 32 + lane;
        if (dp < DP) reinterpret_cast<uint32_t *>(orow)[dp] = 0u;
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
          const uint32_t vw = vs[j * KW + dp];
          o0 = fmaf(p, detail::bf16_lo(vw), o0);
          o1 = fmaf(p, detail::bf16_hi(vw), o1);
        }
        reinterpret_cast<uint32_t *>(orow)[dp] = detail::pack_bf16x2(o0 * inv, o1 * inv);
      }
    }
    __syncwarp();
  }
}

} // namespace sinter::kernels
