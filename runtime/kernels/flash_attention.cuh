// Prefill attention for prompts of any length, on tensor cores, reading q/k/v from one fused
// QKV buffer. Semantics, argument order and limits: launch_params.h ("flash_attention");
// launch: flash_attention_launch(S, HQ, D, batch).
//
// One block per (tile of queries, q head, sequence); each of its 4 warps owns ROW_TILES tiles
// of 16 queries.
// Key tiles stream through shared memory in two stages (cp.async), so the next tile loads
// while the warps work on this one. Per tile a warp computes its 16 x tile scores with
// mma.m16n8k16 (q and K fragments by ldmatrix), moves its running row maxima and sums
// (online softmax, base 2 with the scale folded in), and adds p v with the scores' registers
// reused as the A operand (an m16n8 accumulator pair is an m16k16 A fragment) and V read
// transposed by ldmatrix.trans. Causal blocks start from the last query tile, the longest.
// Only the key tiles a mask cuts (the causal diagonal, the prompt's end, a padding mask's
// zeros) pay for the mask; the others go from the MMA's scores to exp2 with one FMA each (the
// scale is folded into the exponent where it is positive, so the row maximum of the raw scores
// is the maximum of the scaled ones).
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

namespace detail {
// The 16-bit element types mma.m16n8k16 multiplies, with fp32 accumulation.
template <typename T> struct TensorCoreElement;
template <> struct TensorCoreElement<bf16> {
  static __device__ __forceinline__ void mma(float (&acc)[4], const uint32_t (&a)[4],
                                             uint32_t b0, uint32_t b1) {
    mma_bf16_16816(acc, a[0], a[1], a[2], a[3], b0, b1);
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    return pack_bf16x2(lo, hi);
  }
};
template <> struct TensorCoreElement<__half> {
  static __device__ __forceinline__ void mma(float (&acc)[4], const uint32_t (&a)[4],
                                             uint32_t b0, uint32_t b1) {
    mma_f16_16816(acc, a[0], a[1], a[2], a[3], b0, b1);
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t *>(&h);
  }
};

// A thread's place in an mma.m16n8k16 accumulator: rows row_in_tile and row_in_tile + 8,
// columns 2 * column_pair and 2 * column_pair + 1 of each 8-wide block.
struct AccumulatorLane {
  int row_in_tile;
  int column_pair;
  __device__ explicit AccumulatorLane(int lane) : row_in_tile(lane >> 2), column_pair(lane & 3) {}
};

// Row offset (within a 16-row tile) and column offset (within a 16-column step) of the
// 16-byte row this lane addresses when ldmatrix.x4 loads a 16 x 16 A fragment: matrices
// (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15).
struct FragmentRowAddress {
  int row;
  int column;
};
__device__ __forceinline__ FragmentRowAddress a_fragment_address(int lane) {
  return {(lane & 7) + ((lane >> 3) & 1) * 8, (lane >> 4) * 8};
}
// The same for two 8-row B fragments of a [n][k] matrix: matrices (n 0-7, k 0-7),
// (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15): r[0], r[1] are the first n block's
// b0, b1 and r[2], r[3] the second's.
__device__ __forceinline__ FragmentRowAddress b_fragment_pair_address(int lane) {
  return {(lane & 7) + (lane >> 4) * 8, ((lane >> 3) & 1) * 8};
}
} // namespace detail

template <int S, int HQ, int HKV, int D, int Q_OFF, int K_OFF, int V_OFF, int ROW_STRIDE,
          uint32_t SCALE_BITS, bool CAUSAL, bool PADDING_MASK, typename T = bf16, typename OutT = T,
          int ROW_TILES = flash_attention_default_tiling(S, D).row_tiles,
          int KEY_TILE = flash_attention_default_tiling(S, D).key_tile,
          int MIN_BLOCKS_PER_SM = flash_attention_default_tiling(S, D).min_blocks_per_sm,
          uint32_t SOFTCAP_BITS = 0u>
__global__ void __launch_bounds__(kFlashAttentionWarps * 32, MIN_BLOCKS_PER_SM)
    flash_attention(const T *qkv, const int64_t *attention_mask, OutT *out) {
  static_assert(flash_attention_supported(S, HQ, HKV, D, Q_OFF, K_OFF, V_OFF, ROW_STRIDE,
                                          int(sizeof(T))),
                "flash_attention: needs 16-bit q/k/v, D % 16 == 0 and <= 256, HQ % HKV == 0, "
                "8-aligned offsets and stride, heads inside the row");
  static_assert(detail::float_bits_nonnegative_finite(SOFTCAP_BITS),
                "flash_attention: SOFTCAP_BITS is a positive, finite cap or 0 (none)");
  static_assert(ROW_TILES >= 1 && KEY_TILE >= 16 && KEY_TILE % 16 == 0 && MIN_BLOCKS_PER_SM >= 0,
                "flash_attention: a tiling of whole 16-row tiles and 16-key steps");
  using Element = detail::TensorCoreElement<T>;
  constexpr FlashAttentionTiling kTiling{ROW_TILES, KEY_TILE, MIN_BLOCKS_PER_SM};
  constexpr int kRowTiles = ROW_TILES; // 16-query tiles per warp
  constexpr int kWarpQueries = 16 * kRowTiles;
  constexpr int kQueryTile = flash_attention_query_tile(kTiling);
  constexpr int kThreads = kFlashAttentionWarps * 32;
  constexpr int kKeyTile = KEY_TILE;
  constexpr int kRowElements = D + 8;           // padded shared row
  constexpr int kKeyBlocks = kKeyTile / 8;      // 8-key accumulator blocks of the scores
  constexpr int kKeySteps = kKeyTile / 16;      // 16-key steps of p v
  constexpr int kKeyFlagWords = (kKeyTile + 31) / 32; // 32-key words of a tile's flags
  constexpr int kDepthSteps = D / 16;           // 16-deep steps of q k^T
  constexpr int kHeadBlocks = D / 8;            // 8-wide accumulator blocks of the output
  constexpr int kVectorsPerRow = D * int(sizeof(T)) / 16;
  constexpr int kElementsPerVector = 16 / int(sizeof(T));
  constexpr int kGroup = HQ / HKV;
  constexpr int kQueryTiles = ceil_div(S, kQueryTile);
  constexpr float kLog2e = 1.4426950408889634f;

  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *query_tile = reinterpret_cast<T *>(smem_raw);
  T *key_stages = query_tile + kQueryTile * kRowElements;
  T *value_stages = key_stages + 2 * kKeyTile * kRowElements;
  int64_t *key_flag_stages =
      reinterpret_cast<int64_t *>(value_stages + 2 * kKeyTile * kRowElements);

  const int tile_index = CAUSAL ? kQueryTiles - 1 - int(blockIdx.x) : int(blockIdx.x);
  const int head = blockIdx.y;
  const int kv_head = head / kGroup;
  const size_t first_row = size_t(blockIdx.z) * S; // the sequence's first row of qkv
  const int query_begin = tile_index * kQueryTile;
  const int key_end = CAUSAL ? min(S, query_begin + kQueryTile) : S;
  const int key_tiles = ceil_div(key_end, kKeyTile);
  const int tid = threadIdx.x;
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const detail::AccumulatorLane acc_lane(lane);
  const int warp_query_begin = query_begin + warp * kWarpQueries;
  // The query of row r (0: row_in_tile, 1: row_in_tile + 8) of the warp's row tile t.
  auto query_row = [&](int t, int r) {
    return warp_query_begin + 16 * t + acc_lane.row_in_tile + 8 * r;
  };
  // Positive, finite and not zero: the scale can go into the exponent's FMA (not under a
  // soft-cap, which is not linear in the score).
  constexpr bool kFoldScale =
      detail::float_bits_nonnegative_finite(SCALE_BITS) && SCALE_BITS != 0 && SOFTCAP_BITS == 0u;
  const float score_scale = __uint_as_float(SCALE_BITS) * kLog2e;
  // Scores are kept raw (kFoldScale) or scaled; exponents are fma(score, fold, -row base).
  const float fold = kFoldScale ? score_scale : 1.f;

  detail::pdl_launch_dependents();
  detail::pdl_wait();

  // Rows [first, first + rows) of a column range into a padded tile; rows past S as zeros.
  auto stage_rows = [&](T *tile, int first, int rows, int column) {
    for (int i = tid; i < rows * kVectorsPerRow; i += kThreads) {
      const int r = i / kVectorsPerRow;
      const int v = i - r * kVectorsPerRow;
      const int row = first + r;
      const bool inside = row < S;
      const T *src = qkv + (first_row + (inside ? row : 0)) * ROW_STRIDE + column +
                     v * kElementsPerVector;
      detail::cp_async16_zfill(tile + r * kRowElements + v * kElementsPerVector, src,
                               inside ? 16u : 0u);
    }
  };
  auto stage_key_tile = [&](int key_tile) {
    const int stage = key_tile & 1;
    const int first = key_tile * kKeyTile;
    stage_rows(key_stages + stage * kKeyTile * kRowElements, first, kKeyTile, K_OFF + kv_head * D);
    stage_rows(value_stages + stage * kKeyTile * kRowElements, first, kKeyTile,
               V_OFF + kv_head * D);
    if constexpr (PADDING_MASK) {
      // Asynchronous like K and V: a plain load here would stall every warp on global
      // latency once a tile. Keys past S read as 0 (masked).
      for (int j = tid; j < kKeyTile; j += kThreads) {
        const int key = first + j;
        const bool inside = key < S;
        detail::cp_async8_zfill(key_flag_stages + stage * kKeyTile + j,
                                attention_mask + first_row + (inside ? key : 0),
                                inside ? 8u : 0u);
      }
    }
    detail::cp_async_commit();
  };

  stage_rows(query_tile, query_begin, kQueryTile, Q_OFF + head * D);
  stage_key_tile(0);

  float output[kRowTiles][kHeadBlocks][4];
  float row_max[kRowTiles][2]; // of the scores seen so far (raw where kFoldScale)
  float row_sum[kRowTiles][2]; // this lane's share of sum 2^(score - row_max)
#pragma unroll
  for (int t = 0; t < kRowTiles; ++t) {
#pragma unroll
    for (int hb = 0; hb < kHeadBlocks; ++hb)
#pragma unroll
      for (int e = 0; e < 4; ++e) output[t][hb][e] = 0.f;
    row_max[t][0] = row_max[t][1] = -INFINITY;
    row_sum[t][0] = row_sum[t][1] = 0.f;
  }

  const detail::FragmentRowAddress a_address = detail::a_fragment_address(lane);
  const detail::FragmentRowAddress b_address = detail::b_fragment_pair_address(lane);
  // ldmatrix.trans of V [key][d]: the A-fragment lane pattern over (keys, d) gives b0/b1 of
  // one 8-wide d block in r[0], r[1] and of the next in r[2], r[3].
  const detail::FragmentRowAddress v_address = a_address;

  for (int key_tile = 0; key_tile < key_tiles; ++key_tile) {
    detail::cp_async_wait<0>();
    __syncthreads(); // the tile has landed, and every warp is done with the other stage
    if (key_tile + 1 < key_tiles) stage_key_tile(key_tile + 1);
    const int stage = key_tile & 1;
    const T *keys = key_stages + stage * kKeyTile * kRowElements;
    const T *values = value_stages + stage * kKeyTile * kRowElements;
    const int key_begin = key_tile * kKeyTile;
    if (CAUSAL && key_begin > warp_query_begin + kWarpQueries - 1) continue; // all in the future

    // The tile's key flags as bits (word w, bit b: key 32 w + b), read once a warp: the
    // mask below tests a register, and a tile whose keys are all attended skips it.
    uint32_t attended_keys[kKeyFlagWords];
    bool all_keys_attended = true;
    if constexpr (PADDING_MASK) {
#pragma unroll
      for (int w = 0; w < kKeyFlagWords; ++w) {
        const int key_in_tile = 32 * w + lane;
        attended_keys[w] = __ballot_sync(
            0xffffffffu,
            key_in_tile < kKeyTile && key_flag_stages[stage * kKeyTile + key_in_tile] != 0);
        const uint32_t tile_keys =
            32 * (w + 1) <= kKeyTile ? 0xffffffffu : (1u << (kKeyTile - 32 * w)) - 1;
        all_keys_attended = all_keys_attended && attended_keys[w] == tile_keys;
      }
    }

    float scores[kRowTiles][kKeyBlocks][4];
#pragma unroll
    for (int t = 0; t < kRowTiles; ++t)
#pragma unroll
      for (int kb = 0; kb < kKeyBlocks; ++kb)
#pragma unroll
        for (int e = 0; e < 4; ++e) scores[t][kb][e] = 0.f;
#pragma unroll
    for (int ds = 0; ds < kDepthSteps; ++ds) {
      uint32_t q_fragments[kRowTiles][4];
#pragma unroll
      for (int t = 0; t < kRowTiles; ++t)
        detail::ldmatrix_x4(q_fragments[t],
                            query_tile +
                                (warp * kWarpQueries + 16 * t + a_address.row) * kRowElements +
                                ds * 16 + a_address.column);
#pragma unroll
      for (int kb = 0; kb < kKeyBlocks; kb += 2) {
        uint32_t k_fragments[4];
        detail::ldmatrix_x4(k_fragments, keys + (kb * 8 + b_address.row) * kRowElements +
                                             ds * 16 + b_address.column);
#pragma unroll
        for (int t = 0; t < kRowTiles; ++t) {
          Element::mma(scores[t][kb], q_fragments[t], k_fragments[0], k_fragments[1]);
          Element::mma(scores[t][kb + 1], q_fragments[t], k_fragments[2], k_fragments[3]);
        }
      }
    }

    if constexpr (!kFoldScale) {
#pragma unroll
      for (int t = 0; t < kRowTiles; ++t)
#pragma unroll
        for (int kb = 0; kb < kKeyBlocks; ++kb)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            scores[t][kb][e] =
                detail::soft_capped_log2_score<SOFTCAP_BITS>(scores[t][kb][e] * score_scale);
    }
    const bool needs_mask = !all_keys_attended || key_begin + kKeyTile > S ||
                            (CAUSAL && key_begin + kKeyTile - 1 > warp_query_begin);
    if (needs_mask) {
#pragma unroll
      for (int t = 0; t < kRowTiles; ++t)
#pragma unroll
        for (int kb = 0; kb < kKeyBlocks; ++kb)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key_in_tile = kb * 8 + 2 * acc_lane.column_pair + (e & 1);
            const int key = key_begin + key_in_tile;
            bool visible = key < S && (!CAUSAL || key <= query_row(t, e >> 1));
            if constexpr (PADDING_MASK)
              visible = visible && (attended_keys[key_in_tile / 32] >> (key_in_tile % 32)) & 1u;
            if (!visible) scores[t][kb][e] = -INFINITY;
          }
    }

#pragma unroll
    for (int t = 0; t < kRowTiles; ++t)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float tile_max = row_max[t][r];
#pragma unroll
        for (int kb = 0; kb < kKeyBlocks; ++kb)
          tile_max = fmaxf(tile_max, fmaxf(scores[t][kb][2 * r], scores[t][kb][2 * r + 1]));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        // A row with every key so far masked keeps -inf: exponents against 0 give zeros.
        const float base = tile_max == -INFINITY ? 0.f : tile_max * fold;
        const float rescale = detail::exp2_ftz(fmaf(row_max[t][r], fold, -base));
        row_max[t][r] = tile_max;
        float sum = row_sum[t][r] * rescale;
#pragma unroll
        for (int hb = 0; hb < kHeadBlocks; ++hb) {
          output[t][hb][2 * r] *= rescale;
          output[t][hb][2 * r + 1] *= rescale;
        }
#pragma unroll
        for (int kb = 0; kb < kKeyBlocks; ++kb) {
          scores[t][kb][2 * r] = detail::exp2_ftz(fmaf(scores[t][kb][2 * r], fold, -base));
          scores[t][kb][2 * r + 1] =
              detail::exp2_ftz(fmaf(scores[t][kb][2 * r + 1], fold, -base));
          sum += scores[t][kb][2 * r] + scores[t][kb][2 * r + 1];
        }
        row_sum[t][r] = sum;
      }

#pragma unroll
    for (int ks = 0; ks < kKeySteps; ++ks) {
      uint32_t p_fragments[kRowTiles][4];
#pragma unroll
      for (int t = 0; t < kRowTiles; ++t) {
        p_fragments[t][0] = Element::pack(scores[t][2 * ks][0], scores[t][2 * ks][1]);
        p_fragments[t][1] = Element::pack(scores[t][2 * ks][2], scores[t][2 * ks][3]);
        p_fragments[t][2] = Element::pack(scores[t][2 * ks + 1][0], scores[t][2 * ks + 1][1]);
        p_fragments[t][3] = Element::pack(scores[t][2 * ks + 1][2], scores[t][2 * ks + 1][3]);
      }
#pragma unroll
      for (int hb = 0; hb < kHeadBlocks; hb += 2) {
        uint32_t v_fragments[4];
        detail::ldmatrix_x4_trans(v_fragments, values +
                                                   (ks * 16 + v_address.row) * kRowElements +
                                                   hb * 8 + v_address.column);
#pragma unroll
        for (int t = 0; t < kRowTiles; ++t) {
          Element::mma(output[t][hb], p_fragments[t], v_fragments[0], v_fragments[1]);
          Element::mma(output[t][hb + 1], p_fragments[t], v_fragments[2], v_fragments[3]);
        }
      }
    }
  }

#pragma unroll
  for (int t = 0; t < kRowTiles; ++t)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = row_sum[t][r];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int row = query_row(t, r);
      if (row >= S) continue;
      const float inverse = sum > 0.f ? 1.f / sum : 0.f; // every key masked: zeros
      OutT *dst = out + (first_row + row) * (HQ * D) + head * D + 2 * acc_lane.column_pair;
#pragma unroll
      for (int hb = 0; hb < kHeadBlocks; ++hb) {
        const float lo = output[t][hb][2 * r] * inverse, hi = output[t][hb][2 * r + 1] * inverse;
        if constexpr (std::is_same_v<OutT, float>)
          *reinterpret_cast<float2 *>(dst + hb * 8) = make_float2(lo, hi);
        else
          *reinterpret_cast<uint32_t *>(dst + hb * 8) =
              detail::TensorCoreElement<OutT>::pack(lo, hi);
      }
    }
}

} // namespace sinter::kernels
