// out[M, N] = prologue(x)[M, K] @ W^T + epilogue for small M (1..16): a memory-bound,
// weight-streaming kernel. Semantics, argument order and limits: launch_params.h
// ("linear_small_m"); launch: linear_small_m_launch(M, N_ROWS, K, PRO, NUM_SMS, x and weight
// bytes).
//
// How it works. W is stored [N_ROWS, K] row-major (transposed). A block owns one 16-row tile of W
// at a time (grid-stride over tiles, the same tile sequence for all its warps); its warps split K
// (a tile's K slices of 64 * batch in turn; when the warps do not divide them, some warps idle in
// the last step: "ragged K" in the tiling). The product of a 16-row x 64-k slice of W with x^T is
// done with bf16 mma.m16n8k16 (fp32 accumulation), W as the A operand (16 rows) and x^T as the B
// operand (8 token columns; a second n-tile for M > 8). K is a reduction, so the k order inside an
// MMA may be permuted as long as A and B agree: lane (g = lane/4, t = lane%4) loads 16 bytes at k
// = t*8 and 32 + t*8 of rows g and g+8 (each load instruction reads 2 whole 32-byte sectors per
// row), and the matching 16 bytes of x row g from shared memory are exactly that lane's B
// fragment. Every lane keeps two steps of weight loads (2 x batch x 4 x 16 bytes) in flight: in
// registers, or with w_smem (see the tiling) in its own shared-memory slots through cp.async (one
// group per step), read back just before the MMAs, so that the block needs <= 64 registers a
// thread and the next launch's blocks fit beside it. Partial sums of the warps are reduced through
// shared memory (double buffered, one barrier per tile), then the epilogue runs on pairs of
// adjacent rows (gate/up, rope pairs).
// The first weight loads are issued before griddepcontrol.wait (weights never depend on the
// previous kernel), so under programmatic dependent launch they overlap the previous kernel;
// blocks with several tiles may also copy the next steps into shared memory then (prewait
// items, see linear_small_m_prewait_items), read back into registers in their turn.
// x is staged with cp.async: for the RMS_NORM prologues the whole block stages all of x (the
// norm needs whole rows); otherwise each warp copies only the k slices it reads, one cp.async group per
// step, and waits for a step's group just before that step's MMAs (first tile only).
// fp32 x (XT = float) is carried as bf16 hi and lo parts, each multiplied with the same weight
// fragment: twice the MMAs for an fp32-accurate product. With RMS_NORM the prologue reads x
// from global memory and writes the normalized rows as two bf16 planes (split once, reused by
// every tile); otherwise x is staged as fp32 and split at each fragment load.
// Handoff (launch_params.h, "Handoff"): a gate/up launch stores its output bit-inverted into a
// zeroed state buffer and counts its blocks; the down launch right after it waits on the count
// and on the data itself instead of griddepcontrol.wait, which releases only a while after the
// producer's last block exits.
#pragma once

#include "kernel_common.cuh"

namespace sinter::kernels {

template <typename WT> __host__ __device__ constexpr LinearWeights linear_weights_of() {
  if constexpr (std::is_same_v<WT, __nv_fp8_e4m3>) return LinearWeights::FP8_E4M3;
  else if constexpr (std::is_same_v<WT, Int4x2>) return LinearWeights::INT4;
  else return LinearWeights::BF16;
}

template <int M, int N_ROWS, int K, LinearPrologue PRO, LinearEpilogue EPI, typename OutT,
          uint32_t EPS_BITS, int ROPE_ROWS, int HEAD_DIM, int NUM_SMS, typename XT = bf16,
          LinearHandoff HANDOFF = LinearHandoff::NONE, int HANDOFF_BLOCKS = 0,
          typename WT = bf16, int W_GROUP = 0, int ROTARY_DIM = 0>
__global__ void __launch_bounds__(
    linear_small_m_tiling(M, N_ROWS, K, PRO, NUM_SMS, int(sizeof(XT)), linear_weights_of<WT>()).warps *
        32,
    linear_small_m_tiling(M, N_ROWS, K, PRO, NUM_SMS, int(sizeof(XT)), linear_weights_of<WT>())
        .reg_blocks)
    linear_small_m(const XT *x, const WT *__restrict__ w, const void *__restrict__ norm_weight,
                   const bf16 *__restrict__ bias, const OutT *residual, const bf16 *cos,
                   const bf16 *sin, OutT *out, uint32_t *handoff_count,
                   bf16 *handoff_reset_x, uint32_t *handoff_reset_count,
                   const float *__restrict__ w_scale, const uint8_t *__restrict__ w_zero,
                   const bf16 *__restrict__ prologue_residual, bf16 *__restrict__ residual_sum) {
  static_assert(std::is_same_v<WT, bf16> || std::is_same_v<WT, __nv_fp8_e4m3> ||
                    std::is_same_v<WT, Int4x2>,
                "linear_small_m: bf16, fp8 e4m3 or int4 weights");
  constexpr LinearWeights WF = linear_weights_of<WT>();
  // ROPE_PAIRS rotates the first ROT columns of each head (ROTARY_DIM 0: all of them; fewer:
  // partial rotary, GPT-NeoX's), the rest pass through; cos and sin are [M, ROT].
  constexpr int ROT = ROTARY_DIM ? ROTARY_DIM : HEAD_DIM;
  constexpr bool PARTIAL_ROPE = ROT < HEAD_DIM;
  static_assert(EPI != LinearEpilogue::ROPE_PAIRS || ROTARY_DIM == 0 ||
                    (ROTARY_DIM >= 2 && ROTARY_DIM % 2 == 0 && ROTARY_DIM <= HEAD_DIM),
                "linear_small_m: ROTARY_DIM is an even number of a head's columns");
  static_assert((WF == LinearWeights::INT4) == (W_GROUP != 0),
                "linear_small_m: W_GROUP is the int4 group size, 0 for other weights");
  static_assert(linear_small_m_supported(M, N_ROWS, K, PRO, EPI, ROPE_ROWS, HEAD_DIM,
                                         int(sizeof(XT)), NUM_SMS, WF, W_GROUP),
                "linear_small_m: needs 1 <= M <= 16, N_ROWS % 16 == 0 (any N_ROWS >= 16 for the "
                "NONE and BIAS epilogues), K % 64 == 0, "
                "x in shared memory (linear_small_m_shared_bytes) within the target's limit, and for "
                "ROPE_PAIRS an even HEAD_DIM dividing ROPE_ROWS <= N_ROWS; int4: K % 128 == 0 "
                "and a group of 32, 64 or a multiple of 128 dividing K");
  constexpr LinearTiling T =
      linear_small_m_tiling(M, N_ROWS, K, PRO, NUM_SMS, int(sizeof(XT)), WF);
  // A weight row's length: K, or K + 64 (a zero chunk; the staged x is zero there too).
  constexpr int KW = T.weight_cols;
  static_assert(KW == K || (linear_prologue_normalizes(PRO) && sizeof(XT) == 2 &&
                            WF == LinearWeights::BF16),
                "linear_small_m: only a normalizing prologue over bf16 x pads K");
  constexpr bool FP8_W = WF == LinearWeights::FP8_E4M3; // 16 weights a load, one chunk of a row
  constexpr bool INT4_W = WF == LinearWeights::INT4;    // 32 weights a load, two chunks of a row
  // int4: the 32-k regions of a 128-k block that share a group (the products of a group are
  // summed apart, then scaled), and the groups per block.
  constexpr int REGIONS_PER_GROUP = INT4_W ? min_int(W_GROUP, kLinearInt4BlockK) / 32 : 1;
  constexpr int GROUPS_PER_BLOCK = 4 / REGIONS_PER_GROUP;
  constexpr bool WIDE_X = sizeof(XT) == 4; // fp32 x, split into bf16 hi + lo
  constexpr bool X_PLANES = T.x_staging == LinearXStaging::BF16_PLANES;
  constexpr bool X_RING = T.x_staging == LinearXStaging::F32_RING;
  constexpr bool W_SMEM = T.w_smem; // weight double buffer in shared memory (see tiling)
  constexpr int PREWAIT = T.prewait_items; // items [PRE0, PRE0 + PREWAIT) in shared memory
  // The first of them: past the first tile, and past the two items the register buffers take
  // before the wait (a one-step tile's second item is the next tile's first).
  constexpr int PRE0 = T.steps < 2 ? 2 : T.steps;
  constexpr int RING = X_RING ? linear_small_m_ring_slots(K, T.warps, WF) : 1;
  static_assert(!X_RING || T.tiles_per_block == 1, "linear_small_m: the x ring needs one tile");
  constexpr int WARPS = T.warps;
  constexpr int THREADS = WARPS * 32;
  constexpr int BATCH = T.batch;
  constexpr int STEPS = T.steps;
  constexpr int NT = T.mma_n;
  constexpr int XS = T.x_stride;
  constexpr int GRID = T.grid;
  constexpr int NTILES = T.n_tiles;
  constexpr int L = linear_small_m_weight_loads(KW, WF); // uint4 loads/lane/step
  constexpr int LB = W_SMEM ? 1 : L; // of them held across steps in registers
  // A step's weights as loaded: the 16-byte loads, and for int4 the scale and zero point
  // (z, widened at the MMAs) of rows g and g + 8 for each group of each 128-k block.
  constexpr int QP = INT4_W ? BATCH / 2 * GROUPS_PER_BLOCK * 2 : 1;
  struct StepWeights {
    uint4 raw[LB];
    float scale[QP];
    uint32_t zero[QP];
  };
  constexpr int N_OUT = linear_epilogue_gates(EPI) ? N_ROWS / 2 : N_ROWS;
  // The last tile's rows past N_ROWS (zero weights) write nothing.
  constexpr bool RAGGED_N = N_ROWS % kLinearTileRows != 0;
  constexpr bool NORM = linear_prologue_normalizes(PRO);
  // A post-norm and residual add first: s = residual + postnorm(x) replaces x in place, a
  // second pass sums s^2 (the pre-norm's statistics) into csum.
  constexpr bool RESIDUAL_NORM = PRO == LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT;
  constexpr bool FP32_NORM_W = PRO == LinearPrologue::RMS_NORM_FP32_WEIGHT || RESIDUAL_NORM;
  // LayerNorm: the first pass sums x (the mean), a second one (x - mean)^2 over the staged rows.
  constexpr bool CENTERED = PRO == LinearPrologue::LAYER_NORM;
  static_assert(!linear_prologue_needs_16bit_x(PRO) || sizeof(XT) == 2,
                "linear_small_m: this prologue reads bf16 x");
  constexpr int SLICES = T.slices;
  static_assert(SLICES * BATCH * 64 == KW && (STEPS - 1) * WARPS < SLICES &&
                    SLICES <= STEPS * WARPS,
                "linear_small_m: K tiling");
  // Ragged K: in the last step of a tile, warps from LAST_STEP_WARPS on have no slice.
  constexpr int LAST_STEP_WARPS = SLICES - (STEPS - 1) * WARPS;
  constexpr bool PRODUCER = HANDOFF == LinearHandoff::PRODUCER;
  constexpr bool CONSUMER = HANDOFF == LinearHandoff::CONSUMER;
  static_assert(!PRODUCER || std::is_same_v<OutT, bf16>, "linear_small_m: a handoff is bf16");
  static_assert(!CONSUMER || (std::is_same_v<XT, bf16> && HANDOFF_BLOCKS > 0 &&
                              linear_small_m_handoff_consumer_supported(M, N_ROWS, K, PRO,
                                                                        NUM_SMS, WF)),
                "linear_small_m: a handoff consumer needs "
                "linear_small_m_handoff_consumer_supported and the producer's grid");

  extern __shared__ __align__(16) unsigned char smem_raw[];
  // x: [M][XS] of XT; (X_PLANES) hi rows [M][XS] then lo rows [M][XS] of bf16; (X_RING)
  // [WARPS][RING][M][XS] floats.
  using XS_T = std::conditional_t<X_PLANES, bf16, XT>;
  constexpr size_t X_BYTES = size_t(X_RING ? WARPS * RING * M : M) * XS * sizeof(XT);
  XS_T *xs = reinterpret_cast<XS_T *>(smem_raw);
  // The norm weights: K bf16, K floats for RMS_NORM_FP32_WEIGHT, 2K floats (scale, shift)
  // for LAYER_NORM, (post-norm, pre-norm) for RESIDUAL_RMS_NORM_FP32_WEIGHT.
  unsigned char *nws = smem_raw + X_BYTES;
  float *red =
      reinterpret_cast<float *>(smem_raw + X_BYTES + size_t(K) * linear_norm_weight_bytes(PRO));
  // W_SMEM: [2 steps][L][THREADS] uint4, each lane's own 16-byte slots (conflict-free);
  // PREWAIT: [PREWAIT items][L][THREADS] alike.
  uint4 *wbuf = reinterpret_cast<uint4 *>(red + 2 * WARPS * NT * 4 * 32);

  const int tid = threadIdx.x;
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int g = lane >> 2;
  const int t = lane & 3;

  if (blockIdx.x >= GRID) return;
  const int my_tiles = (NTILES - 1 - int(blockIdx.x)) / GRID + 1;
  const int n_items = my_tiles * STEPS;

  // Item i = (tile blockIdx.x + (i / STEPS) * GRID, step i % STEPS).
  auto item_tile = [&](int i) { return int(blockIdx.x) + (i / STEPS) * GRID; };
  auto item_k0 = [&](int i) { return ((i % STEPS) * WARPS + warp) * (BATCH * 64); };
  // Whether this warp has a K slice at step s of a tile (always, unless K is ragged).
  auto has_slice = [&](int s) {
    return LAST_STEP_WARPS == WARPS || s < STEPS - 1 || warp < LAST_STEP_WARPS;
  };

  // Item i's weights into the lane-private shared-memory slots at slot_base + r * THREADS
  // (register r of the lane), through cp.async.
  auto copy_item = [&](int i, uint4 *slot_base) {
    if constexpr (FP8_W) { // lane t's 16 bytes of a row's 64-byte chunk (see "fp8 weights")
      const WT *r0 = w + size_t(item_tile(i) * 16 + g) * KW + item_k0(i) + t * 16;
      const WT *r1 = r0 + size_t(8) * KW;
#pragma unroll
      for (int c = 0; c < BATCH; ++c) {
        detail::cp_async16_stream_no_hint(slot_base + (c * 2 + 0) * THREADS, r0 + c * 64);
        detail::cp_async16_stream_no_hint(slot_base + (c * 2 + 1) * THREADS, r1 + c * 64);
      }
      return;
    }
    const WT *r0 = w + size_t(item_tile(i) * 16 + g) * KW + item_k0(i) + t * 8;
    const WT *r1 = r0 + size_t(8) * KW;
#pragma unroll
    for (int c = 0; c < BATCH; ++c) {
      detail::cp_async16_stream(slot_base + (c * 4 + 0) * THREADS, r0 + c * 64);
      detail::cp_async16_stream(slot_base + (c * 4 + 1) * THREADS, r0 + c * 64 + 32);
      detail::cp_async16_stream(slot_base + (c * 4 + 2) * THREADS, r1 + c * 64);
      detail::cp_async16_stream(slot_base + (c * 4 + 3) * THREADS, r1 + c * 64 + 32);
    }
  };

  // Step i's weights into buf (registers), or with W_SMEM into shared-memory slot i % 2 as one
  // cp.async group; with W_SMEM a group is committed for every i, empty past the last item,
  // so that the group of item i is always the second newest when item i is computed.
  auto load = [&](StepWeights &buf, int i) {
    if constexpr (PREWAIT > 0) {
      if (i >= PRE0 && i < PRE0 + PREWAIT) { // copied before the wait (copy_prewait_items)
        detail::cp_async_wait_dyn(PRE0 + PREWAIT - 1 - i);
#pragma unroll
        for (int r = 0; r < L; ++r)
          buf.raw[r] = detail::ld16(wbuf + ((i - PRE0) * L + r) * THREADS + tid);
        return;
      }
    }
    if constexpr (W_SMEM) {
      if (i < n_items && has_slice(i % STEPS)) copy_item(i, wbuf + (i & 1) * L * THREADS + tid);
      detail::cp_async_commit();
    } else if (!has_slice(i % STEPS)) {
      return;
    } else if constexpr (INT4_W) { // lane t's 16 bytes of a row's 128-k block ("int4 weights")
      const int row = item_tile(i) * 16 + g;
      const int kb = item_k0(i);
      const uint8_t *r0 =
          reinterpret_cast<const uint8_t *>(w) + size_t(row) * (K / 2) + kb / 2 + t * 16;
      const uint8_t *r1 = r0 + size_t(8) * (K / 2);
      constexpr int GROUPS = K / W_GROUP;
#pragma unroll
      for (int b = 0; b < BATCH / 2; ++b) {
        buf.raw[b * 2 + 0] = detail::ld_stream16(r0 + b * 64);
        buf.raw[b * 2 + 1] = detail::ld_stream16(r1 + b * 64);
#pragma unroll
        for (int q = 0; q < GROUPS_PER_BLOCK; ++q) {
          const size_t i0 =
              size_t(row) * GROUPS + (kb + b * 128 + q * REGIONS_PER_GROUP * 32) / W_GROUP;
          const size_t i1 = i0 + size_t(8) * GROUPS;
          const int j = (b * GROUPS_PER_BLOCK + q) * 2;
          buf.scale[j] = __ldg(w_scale + i0);
          buf.scale[j + 1] = __ldg(w_scale + i1);
          buf.zero[j] = w_zero ? uint32_t(__ldg(w_zero + i0)) : 8u;
          buf.zero[j + 1] = w_zero ? uint32_t(__ldg(w_zero + i1)) : 8u;
        }
      }
    } else if constexpr (FP8_W) {
      const WT *r0 = w + size_t(item_tile(i) * 16 + g) * KW + item_k0(i) + t * 16;
      const WT *r1 = r0 + size_t(8) * KW;
#pragma unroll
      for (int c = 0; c < BATCH; ++c) {
        buf.raw[c * 2 + 0] = detail::ld_stream16(r0 + c * 64);
        buf.raw[c * 2 + 1] = detail::ld_stream16(r1 + c * 64);
      }
    } else {
      const WT *r0 = w + size_t(item_tile(i) * 16 + g) * KW + item_k0(i) + t * 8;
      const WT *r1 = r0 + size_t(8) * KW;
#pragma unroll
      for (int c = 0; c < BATCH; ++c) {
        buf.raw[c * 4 + 0] = detail::ld_stream16(r0 + c * 64);
        buf.raw[c * 4 + 1] = detail::ld_stream16(r0 + c * 64 + 32);
        buf.raw[c * 4 + 2] = detail::ld_stream16(r1 + c * 64);
        buf.raw[c * 4 + 3] = detail::ld_stream16(r1 + c * 64 + 32);
      }
    }
  };

  // PREWAIT: items [PRE0, PRE0 + PREWAIT) into their lane-private slots, one cp.async group
  // each (empty past the last item), so that item i's group is complete once at most
  // PRE0 + PREWAIT - 1 - i newer groups are pending.
  auto copy_prewait_items = [&] {
    for (int i = PRE0; i < PRE0 + PREWAIT; ++i) {
      if (i < n_items && has_slice(i % STEPS))
        copy_item(i, wbuf + (i - PRE0) * L * THREADS + tid);
      detail::cp_async_commit();
    }
  };

  float acc[NT][4];

  // X_RING: this warp's x slice of step s (all M rows) into ring slot s % RING, one group.
  auto stage_ring = [&](int s) {
    constexpr int VS = BATCH * 16; // 16-byte vectors per row slice
    const int kb = (s * WARPS + warp) * (BATCH * 64);
    XS_T *slot = xs + (warp * RING + s % RING) * M * XS;
    for (int j = lane; has_slice(s) && j < M * VS; j += 32) {
      const int m = j / VS;
      const int v = j - m * VS;
      detail::cp_async16(slot + m * XS + v * 4, x + size_t(m) * K + kb + v * 4);
    }
    detail::cp_async_commit();
  };

  auto compute = [&](const StepWeights &buf, int i) {
    uint4 wl[W_SMEM ? L : 1]; // W_SMEM: this step's weights, read back from shared memory
    if constexpr (W_SMEM) {
      detail::cp_async_wait<1>(); // item i's group (the newest one is item i + 1's)
#pragma unroll
      for (int r = 0; r < L; ++r) wl[r] = detail::ld16(wbuf + ((i & 1) * L + r) * THREADS + tid);
    }
    auto raw = [&](int r) -> const uint4 & {
      if constexpr (W_SMEM) return wl[r];
      else return buf.raw[r];
    };
    if constexpr (X_RING) { // one tile: step i's slice is ring group i
      detail::cp_async_wait_dyn(min(STEPS - 1 - i, RING - 1));
      __syncwarp();
    } else if constexpr (PRO == LinearPrologue::NONE && !W_SMEM) {
      if (i < STEPS) { // first tile: this step's x slices must have landed
        detail::cp_async_wait_dyn(STEPS - 1 - i);
        __syncwarp();
      }
    }
    if (i % STEPS == 0) {
#pragma unroll
      for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[n][r] = 0.f;
    }
    if (!has_slice(i % STEPS)) { // ragged K: nothing to multiply; an X_RING slot stays empty
      if constexpr (X_RING) {
        __syncwarp();
        if (i + RING < STEPS) stage_ring(i + RING);
      }
      return;
    }
    const int k0 = item_k0(i) + t * 8;
    // Token tok's x fragments of chunk c (k0 + 64c and k0 + 64c + 32); with fp32 x also their
    // lo halves l0, l1. Zero past the last token.
    auto load_x = [&](int tok, int c, uint4 &x0, uint4 &x1, uint4 &l0, uint4 &l1) {
      x0 = x1 = l0 = l1 = make_uint4(0u, 0u, 0u, 0u);
      if (tok >= M) return;
      if constexpr (X_PLANES) {
        const bf16 *xr = xs + tok * XS + k0 + c * 64;
        l0 = detail::ld16(xr + M * XS);
        l1 = detail::ld16(xr + M * XS + 32);
        x0 = detail::ld16(xr);
        x1 = detail::ld16(xr + 32);
      } else if constexpr (WIDE_X) {
        const float *xr = X_RING ? xs + ((warp * RING + i % RING) * M + tok) * XS + t * 8 + c * 64
                                 : xs + tok * XS + k0 + c * 64;
        detail::split_bf16x8(detail::ld16(xr), detail::ld16(xr + 4), x0, l0);
        detail::split_bf16x8(detail::ld16(xr + 32), detail::ld16(xr + 36), x1, l1);
      } else {
        x0 = detail::ld16(xs + tok * XS + k0 + c * 64);
        x1 = detail::ld16(xs + tok * XS + k0 + c * 64 + 32);
      }
    };
    if constexpr (INT4_W) {
#pragma unroll
      for (int b = 0; b < BATCH / 2; ++b) {
        // Region r of the block (32 k: chunk 2b + r/2, half r%2) is word r of each row's load.
        uint4 row_g[4], row_g8[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int j = (b * GROUPS_PER_BLOCK + r / REGIONS_PER_GROUP) * 2;
          const uint32_t word_g = r == 0 ? raw(b * 2).x : r == 1 ? raw(b * 2).y
                                : r == 2 ? raw(b * 2).z : raw(b * 2).w;
          const uint32_t word_g8 = r == 0 ? raw(b * 2 + 1).x : r == 1 ? raw(b * 2 + 1).y
                                 : r == 2 ? raw(b * 2 + 1).z : raw(b * 2 + 1).w;
          row_g[r] = detail::int4x8_to_bf16x8(word_g, detail::int4_zero_bf16x2(buf.zero[j]));
          row_g8[r] = detail::int4x8_to_bf16x8(word_g8, detail::int4_zero_bf16x2(buf.zero[j + 1]));
        }
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          uint4 xh[4], xl[4];
          load_x(g + 8 * n, 2 * b, xh[0], xh[1], xl[0], xl[1]);
          load_x(g + 8 * n, 2 * b + 1, xh[2], xh[3], xl[2], xl[3]);
#pragma unroll
          for (int q = 0; q < GROUPS_PER_BLOCK; ++q) {
            float part[4] = {0.f, 0.f, 0.f, 0.f}; // C fragment: rows g (0, 1) and g + 8 (2, 3)
#pragma unroll
            for (int r = q * REGIONS_PER_GROUP; r < (q + 1) * REGIONS_PER_GROUP; ++r) {
              if constexpr (WIDE_X) detail::mma_16x8(part, row_g[r], row_g8[r], xl[r]);
              detail::mma_16x8(part, row_g[r], row_g8[r], xh[r]);
            }
            const int j = (b * GROUPS_PER_BLOCK + q) * 2;
            acc[n][0] = fmaf(buf.scale[j], part[0], acc[n][0]);
            acc[n][1] = fmaf(buf.scale[j], part[1], acc[n][1]);
            acc[n][2] = fmaf(buf.scale[j + 1], part[2], acc[n][2]);
            acc[n][3] = fmaf(buf.scale[j + 1], part[3], acc[n][3]);
          }
        }
      }
    } else {
#pragma unroll
      for (int c = 0; c < BATCH; ++c) {
        // This chunk's A fragments: rows g and g + 8, k at 8t and 32 + 8t (bf16 loads as they
        // are; an fp8 load holds both k parts of one row).
        uint4 w_chunk[FP8_W ? 4 : 1];
        if constexpr (FP8_W) {
          detail::e4m3x16_to_bf16x16(raw(c * 2 + 0), w_chunk[0], w_chunk[1]);
          detail::e4m3x16_to_bf16x16(raw(c * 2 + 1), w_chunk[2], w_chunk[3]);
        }
        auto wf = [&](int r) -> const uint4 & {
          if constexpr (FP8_W) return w_chunk[r - c * 4];
          else return raw(r);
        };
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          uint4 x0, x1, l0, l1;
          load_x(g + 8 * n, c, x0, x1, l0, l1);
          if constexpr (WIDE_X) {
            detail::mma_16x8(acc[n], wf(c * 4 + 0), wf(c * 4 + 2), l0);
            detail::mma_16x8(acc[n], wf(c * 4 + 1), wf(c * 4 + 3), l1);
          }
          detail::mma_16x8(acc[n], wf(c * 4 + 0), wf(c * 4 + 2), x0);
          detail::mma_16x8(acc[n], wf(c * 4 + 1), wf(c * 4 + 3), x1);
        }
      }
    }
    if constexpr (X_RING) { // every lane has read slot i % RING: refill it with step i + RING
      __syncwarp();
      if (i + RING < STEPS) stage_ring(i + RING);
    }
  };

  // The epilogue operands of token m, rows n0 and n0 + 1: RESIDUAL residual[m, n0], [m, n0+1];
  // ROPE_PAIRS (rows below ROPE_ROWS) cos and sin at the pair's two columns i and i + H/2.
  auto read_epilogue_operands = [&](int m, int n0, float (&o)[4]) {
    if constexpr (linear_epilogue_adds_residual(EPI)) {
      const OutT *rrow = residual + size_t(m) * N_ROWS;
      o[0] = detail::to_float(rrow[n0]);
      o[1] = detail::to_float(rrow[n0 + 1]);
    } else if constexpr (EPI == LinearEpilogue::ROPE_PAIRS) {
      if (n0 < ROPE_ROWS && (!PARTIAL_ROPE || n0 % HEAD_DIM < ROT)) {
        const int ii = (n0 % HEAD_DIM) >> 1;
        const bf16 *cr = cos + size_t(m) * ROT;
        const bf16 *sr = sin + size_t(m) * ROT;
        o[0] = __bfloat162float(cr[ii]);
        o[1] = __bfloat162float(sr[ii]);
        o[2] = __bfloat162float(cr[ii + ROT / 2]);
        o[3] = __bfloat162float(sr[ii + ROT / 2]);
      }
    }
  };
  // Epilogue operands of this block's first tile, read right after griddepcontrol.wait: their
  // round trip then overlaps the weight stream instead of following the reduction. Thread
  // e < 8*M holds pair e of the tile (see finish).
  float pre[4] = {0.f, 0.f, 0.f, 0.f};
  auto load_epilogue_operands = [&] {
    if (tid < 8 * M) read_epilogue_operands(tid >> 3, int(blockIdx.x) * 16 + 2 * (tid & 7), pre);
  };

  // A handoff producer stores ~bits, never zero (a 0xFFFF NaN becomes ~0x7FFF).
  auto put = [](OutT *p, float v) {
    if constexpr (PRODUCER) {
      uint16_t bits = __bfloat16_as_ushort(detail::from_float<bf16>(v));
      *reinterpret_cast<uint16_t *>(p) = uint16_t(~(bits == 0xFFFFu ? 0x7FFFu : bits));
    } else {
      *p = detail::from_float<OutT>(v);
    }
  };

  // Cross-warp reduction and epilogue of one finished tile.
  auto finish = [&](int i) {
    const int tile = item_tile(i);
    float *rb = red + ((i / STEPS) & 1) * (WARPS * NT * 4 * 32);
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
      for (int r = 0; r < 4; ++r) rb[(warp * NT * 4 + n * 4 + r) * 32 + lane] = acc[n][r];
    __syncthreads();
    for (int e = tid; e < 8 * M; e += THREADS) {
      const int m = e >> 3;
      const int p = e & 7; // local rows 2p, 2p+1
      // C fragment: reg (n*4 + hi*2 + lo) of lane (row%8)*4 + (tok%8)/2 holds
      // row (row%8) + 8*hi, token 8*n + 2*((tok%8)/2) + lo.
      const int hi = p >> 2;
      const int lane0 = ((2 * p) & 7) * 4 + ((m & 7) >> 1);
      const int lane1 = ((2 * p + 1) & 7) * 4 + ((m & 7) >> 1);
      const int reg = (m >> 3) * 4 + hi * 2 + (m & 1);
      float v0 = 0.f, v1 = 0.f;
#pragma unroll
      for (int ww = 0; ww < WARPS; ++ww) {
        v0 += rb[(ww * NT * 4 + reg) * 32 + lane0];
        v1 += rb[(ww * NT * 4 + reg) * 32 + lane1];
      }
      const int n0 = tile * 16 + 2 * p;
      if (RAGGED_N && n0 >= N_ROWS) continue;
      const bool second = !RAGGED_N || n0 + 1 < N_ROWS; // the pair's second column exists
      if constexpr (FP8_W) {
        v0 *= w_scale[n0];
        v1 *= w_scale[n0 + 1];
      }
      float ops[4] = {0.f, 0.f, 0.f, 0.f};
      if constexpr (linear_epilogue_adds_residual(EPI) || EPI == LinearEpilogue::ROPE_PAIRS) {
        if (i < STEPS && e == tid) { // this block's first tile, pair tid: read after the wait
#pragma unroll
          for (int j = 0; j < 4; ++j) ops[j] = pre[j];
        } else {
          read_epilogue_operands(m, n0, ops);
        }
      }
      OutT *orow = out + size_t(m) * N_OUT;
      if constexpr (EPI == LinearEpilogue::NONE) {
        put(&orow[n0], v0);
        if (second) put(&orow[n0 + 1], v1);
      } else if constexpr (EPI == LinearEpilogue::BIAS) {
        put(&orow[n0], v0 + __bfloat162float(bias[n0]));
        if (second) put(&orow[n0 + 1], v1 + __bfloat162float(bias[n0 + 1]));
      } else if constexpr (EPI == LinearEpilogue::RESIDUAL) {
        put(&orow[n0], detail::round_to<OutT>(v0) + ops[0]);
        put(&orow[n0 + 1], detail::round_to<OutT>(v1) + ops[1]);
      } else if constexpr (EPI == LinearEpilogue::GELU_TANH || EPI == LinearEpilogue::GELU) {
        if (bias) {
          v0 += __bfloat162float(bias[n0]);
          v1 += __bfloat162float(bias[n0 + 1]);
        }
        auto gelu = [](float g) {
          return EPI == LinearEpilogue::GELU ? detail::gelu_erf(g) : detail::gelu_tanh(g);
        };
        put(&orow[n0], gelu(detail::round_to<OutT>(v0)));
        put(&orow[n0 + 1], gelu(detail::round_to<OutT>(v1)));
      } else if constexpr (EPI == LinearEpilogue::BIAS_RESIDUAL) {
        put(&orow[n0], detail::round_to<OutT>(v0 + __bfloat162float(bias[n0])) + ops[0]);
        put(&orow[n0 + 1], detail::round_to<OutT>(v1 + __bfloat162float(bias[n0 + 1])) + ops[1]);
      } else if constexpr (linear_epilogue_gates(EPI)) {
        const float gt = detail::round_to<OutT>(v0), up = detail::round_to<OutT>(v1);
        const float act = EPI == LinearEpilogue::GELU_TANH_MUL_PAIRS ? detail::gelu_tanh(gt)
                                                                     : gt / (1.f + expf(-gt));
        put(&orow[n0 >> 1], detail::round_to<OutT>(act) * up);
      } else if constexpr (EPI == LinearEpilogue::ROPE_PAIRS) {
        if (bias) { // a biased projection (Qwen2): the bias before the rotation
          v0 += __bfloat162float(bias[n0]);
          v1 += __bfloat162float(bias[n0 + 1]);
        }
        if (n0 < ROPE_ROWS && (!PARTIAL_ROPE || n0 % HEAD_DIM < ROT)) {
          const int head = n0 / HEAD_DIM;
          const int ii = (n0 % HEAD_DIM) >> 1;
          const float q1 = detail::round_to<OutT>(v0), q2 = detail::round_to<OutT>(v1);
          // ops: cos and sin at column ii, then at ii + R/2
          put(&orow[head * HEAD_DIM + ii], q1 * ops[0] - q2 * ops[1]);
          put(&orow[head * HEAD_DIM + ii + ROT / 2], q2 * ops[2] + q1 * ops[3]);
        } else {
          put(&orow[n0], v0);
          put(&orow[n0 + 1], v1);
        }
      }
    }
    // No second barrier: the next tile reduces through the other half of `red`, and the
    // barrier of that tile orders this tile's reads before the half is written again.
  };

  detail::BlockTrace trace;
  detail::pdl_launch_dependents();
  StepWeights buf_a, buf_b;
  // Weight loads first: they overlap the previous kernel (PDL) and the staging of x.
  load(buf_a, 0);
  if (W_SMEM || n_items > 1) load(buf_b, 1);

  constexpr int EV = 16 / int(sizeof(XT)); // elements of x per 16-byte vector
  constexpr int KV = K / EV;                // 16-byte vectors per row of x
  if constexpr (NORM) {
    // Every warp takes part in every row (M is small, the norm is on the dependency chain):
    // per-warp partial sums of squares go through `red`, unused until the first tile ends.
    constexpr int NW_VECTORS = K * linear_norm_weight_bytes(PRO) / 16;
    for (int i = tid; i < NW_VECTORS; i += THREADS)
      detail::cp_async16(nws + i * 16, static_cast<const unsigned char *>(norm_weight) + i * 16);
    detail::cp_async_commit();
    copy_prewait_items(); // after the norm weights' group, so the prologue need not wait for them
    detail::pdl_wait();
    trace.waited();
    load_epilogue_operands();
    float *ssum = red; // [M][WARPS]: sums of squares (LAYER_NORM: sums, the mean's)
    // LAYER_NORM: [M][WARPS] sums of squares about the mean; RESIDUAL_NORM: of s
    float *csum = red + M * WARPS;
    auto row_total = [&](const float *partial, int m) {
      float ss = 0.f;
#pragma unroll
      for (int w = 0; w < WARPS; ++w) ss += partial[m * WARPS + w];
      return ss;
    };
    auto rms_scale_of = [&](const float *partial, int m) {
      return rsqrtf(row_total(partial, m) / float(K) + __uint_as_float(EPS_BITS));
    };
    auto row_scale = [&](int m) { // after the barrier that follows the partial sums
      return rms_scale_of(CENTERED || RESIDUAL_NORM ? csum : ssum, m);
    };
    auto row_stat = [](const uint4 &v, float acc) {
      return CENTERED ? detail::sum_bf16x8(v, acc) : detail::sum_squares_bf16x8(v, acc);
    };
    if constexpr (X_PLANES) {
      // fp32 x read from global memory (no fp32 staging area, so the two bf16 planes fit where
      // fp32 rows would): held in registers between the sum of squares and the scaling when
      // this thread's share is small, else read twice.
      constexpr int KQ = K / 4;                         // 16-byte vectors per row
      constexpr int PER = (KQ + THREADS - 1) / THREADS; // of them per thread
      constexpr bool HOLD = M * PER <= 16;
      uint4 held[HOLD ? M : 1][HOLD ? PER : 1];
#pragma unroll
      for (int m = 0; m < M; ++m) {
        const float *row = x + size_t(m) * K;
        float ss = 0.f;
        if constexpr (HOLD) {
#pragma unroll
          for (int p = 0; p < PER; ++p) {
            const int kq = tid + p * THREADS;
            held[m][p] = kq < KQ ? detail::ld16(row + kq * 4) : make_uint4(0u, 0u, 0u, 0u);
          }
#pragma unroll
          for (int p = 0; p < PER; ++p) ss = detail::sum_squares_f32x4(held[m][p], ss);
        } else {
          for (int kq = tid; kq < KQ; kq += THREADS)
            ss = detail::sum_squares_f32x4(detail::ld16(row + kq * 4), ss);
        }
        ss = detail::warp_sum(ss);
        if (lane == 0) ssum[m * WARPS + warp] = ss;
      }
      detail::cp_async_wait<0>();
      __syncthreads();
#pragma unroll
      for (int m = 0; m < M; ++m) {
        const float r = row_scale(m);
        const float *row = x + size_t(m) * K;
        bf16 *hi = xs + m * XS;
        auto put = [&](int kq, const uint4 &v) {
          uint2 h, l;
          detail::split_bf16x4(
              detail::rms_scale_f32x4(v, reinterpret_cast<const bf16 *>(nws) + kq * 4, r), h, l);
          *reinterpret_cast<uint2 *>(hi + kq * 4) = h;
          *reinterpret_cast<uint2 *>(hi + M * XS + kq * 4) = l;
        };
        if constexpr (HOLD) {
#pragma unroll
          for (int p = 0; p < PER; ++p)
            if (tid + p * THREADS < KQ) put(tid + p * THREADS, held[m][p]);
        } else {
          for (int kq = tid; kq < KQ; kq += THREADS) put(kq, detail::ld16(row + kq * 4));
        }
      }
    } else {
      // bf16 x goes through registers into shared memory, summing squares on the way (one
      // global round trip, no shared-memory pass before the sums) when each thread's share is
      // small; the rows are then normalized in place.
      constexpr int PER = (KV + THREADS - 1) / THREADS; // vectors per row and thread
      // This thread's share of M rows of K (vector p of row m: kv = tid + p * THREADS).
      auto load_share = [&](const bf16 *rows, uint4 (&share)[M][PER]) {
#pragma unroll
        for (int m = 0; m < M; ++m)
#pragma unroll
          for (int p = 0; p < PER; ++p) {
            const int kv = tid + p * THREADS;
            share[m][p] = kv < KV ? detail::ld16(rows + size_t(m) * K + kv * 8)
                                  : make_uint4(0u, 0u, 0u, 0u);
          }
      };
      // RESIDUAL_NORM: a small share of the residual (decode) is loaded with x, in registers.
      constexpr bool HOLD_RESIDUAL = RESIDUAL_NORM && M * PER <= 8;
      [[maybe_unused]] uint4 held_residual[M][HOLD_RESIDUAL ? PER : 1];
      if constexpr (HOLD_RESIDUAL) load_share(prologue_residual, held_residual);
      if constexpr (M * PER <= 16) {
        // All loads issued before the first store (a generic x might alias shared memory, so
        // the compiler would not hoist them past it).
        uint4 v[M][PER];
        load_share(x, v);
#pragma unroll
        for (int m = 0; m < M; ++m) {
          float ss = 0.f;
#pragma unroll
          for (int p = 0; p < PER; ++p) {
            const int kv = tid + p * THREADS;
            if (kv < KV) detail::st16(xs + m * XS + kv * 8, v[m][p]);
            ss = row_stat(v[m][p], ss);
          }
          ss = detail::warp_sum(ss);
          if (lane == 0) ssum[m * WARPS + warp] = ss;
        }
        trace.mark(2);
      } else { // a large share per thread: cp.async into shared memory, then the sums
        for (int i = tid; i < M * KV; i += THREADS) {
          const int m = i / KV;
          const int kv = i - m * KV;
          detail::cp_async16(xs + m * XS + kv * 8, x + size_t(m) * K + kv * 8);
        }
        detail::cp_async_commit();
        detail::cp_async_wait<0>();
        __syncthreads();
        for (int m = 0; m < M; ++m) {
          float ss = 0.f;
          for (int kv = tid; kv < KV; kv += THREADS)
            ss = row_stat(detail::ld16(xs + m * XS + kv * 8), ss);
          ss = detail::warp_sum(ss);
          if (lane == 0) ssum[m * WARPS + warp] = ss;
        }
      }
      detail::cp_async_wait<PREWAIT>(); // the norm weights; prewait items may still pend
      __syncthreads();
      if constexpr (RESIDUAL_NORM) { // s = residual + bf16(postnorm(x)) in place, and its sums
        const float *post_w = reinterpret_cast<const float *>(nws);
        const bool write_sum = blockIdx.x == 0 && residual_sum != nullptr;
#pragma unroll
        for (int m = 0; m < M; ++m) {
          const float r = rms_scale_of(ssum, m);
          bf16 *row = xs + m * XS;
          float ss = 0.f;
#pragma unroll
          for (int p = 0; p < PER; ++p) {
            const int kv = tid + p * THREADS;
            if (kv >= KV) continue;
            uint4 res;
            if constexpr (HOLD_RESIDUAL) res = held_residual[m][p];
            else res = detail::ld16(prologue_residual + size_t(m) * K + kv * 8);
            const uint4 s = detail::add_bf16x8(
                res, detail::rms_scale_bf16x8_f32w(detail::ld16(row + kv * 8),
                                                   detail::ld16(post_w + kv * 8),
                                                   detail::ld16(post_w + kv * 8 + 4), r));
            detail::st16(row + kv * 8, s);
            if (write_sum) detail::st16(residual_sum + size_t(m) * K + kv * 8, s);
            ss = detail::sum_squares_bf16x8(s, ss);
          }
          ss = detail::warp_sum(ss);
          if (lane == 0) csum[m * WARPS + warp] = ss;
        }
        __syncthreads();
      }
      if constexpr (CENTERED) { // the variance about the mean, from the staged rows
        for (int m = 0; m < M; ++m) {
          const float mean = row_total(ssum, m) / float(K);
          float cs = 0.f;
          for (int kv = tid; kv < KV; kv += THREADS)
            cs = detail::sum_centered_squares_bf16x8(detail::ld16(xs + m * XS + kv * 8), mean, cs);
          cs = detail::warp_sum(cs);
          if (lane == 0) csum[m * WARPS + warp] = cs;
        }
        __syncthreads();
      }
      trace.mark(3);
      for (int m = 0; m < M; ++m) {
        const float r = row_scale(m);
        [[maybe_unused]] const float mean = CENTERED ? row_total(ssum, m) / float(K) : 0.f;
        bf16 *row = xs + m * XS;
        for (int kv = tid; kv < KV; kv += THREADS) {
          if constexpr (CENTERED) {
            const float *scale = reinterpret_cast<const float *>(nws) + kv * 8;
            const float *shift = scale + K;
            detail::st16(row + kv * 8, detail::layer_norm_bf16x8(
                                           detail::ld16(row + kv * 8), mean, r, detail::ld16(scale),
                                           detail::ld16(scale + 4), detail::ld16(shift),
                                           detail::ld16(shift + 4)));
          } else if constexpr (FP32_NORM_W) { // RESIDUAL_NORM: the pre-norm's, after the post's
            const float *nw =
                reinterpret_cast<const float *>(nws) + (RESIDUAL_NORM ? K : 0) + kv * 8;
            detail::st16(row + kv * 8,
                         detail::rms_scale_bf16x8_f32w(detail::ld16(row + kv * 8),
                                                       detail::ld16(nw), detail::ld16(nw + 4), r));
          } else {
            detail::st16(row + kv * 8,
                         detail::rms_scale_bf16x8(detail::ld16(row + kv * 8),
                                                  detail::ld16(reinterpret_cast<const bf16 *>(nws) +
                                                               kv * 8),
                                                  r));
          }
        }
      }
      if constexpr (KW > K) { // the padded columns: zero x against the zero weight chunk
        constexpr int PAD_VECTORS = (KW - K) / 8;
        for (int i = tid; i < M * PAD_VECTORS; i += THREADS)
          detail::st16(xs + (i / PAD_VECTORS) * XS + K + (i % PAD_VECTORS) * 8,
                       make_uint4(0u, 0u, 0u, 0u));
      }
    }
    __syncthreads();
  } else {
    // Each warp copies the x slices it will read: step s, all M rows, k in
    // [(s*WARPS + warp) * 64*BATCH, +64*BATCH): one cp.async group per step.
    if constexpr (CONSUMER)
      detail::handoff_wait(handoff_count, uint32_t(HANDOFF_BLOCKS));
    else
      detail::pdl_wait();
    trace.waited();
    load_epilogue_operands();
    if constexpr (CONSUMER) {
      // The producer's blocks have all counted themselves, but a store of theirs may still be
      // on its way: volatile loads again until no halfword is zero, then un-inverted.
      constexpr int VS = BATCH * 64 / EV;
      const bool mine = lane < M * VS;
      const int m = lane / VS;
      const int v = lane - m * VS;
      uint4 got[STEPS];
      const unsigned long long t0 = detail::global_ns();
      for (;;) {
        // All loads before any test: volatile loads stay in program order, so a test between
        // them would wait for each round trip in turn.
#pragma unroll
        for (int st = 0; st < STEPS; ++st)
          if (mine && has_slice(st))
            got[st] = detail::ld_volatile16(x + size_t(m) * K + item_k0(st) + v * EV);
        bool missing = false;
#pragma unroll
        for (int st = 0; st < STEPS; ++st)
          missing |= mine && has_slice(st) && detail::has_zero_half(got[st]);
        if (!__any_sync(0xffffffffu, missing)) break;
        if (detail::global_ns() - t0 > detail::kHandoffTimeoutNs) __trap();
        __nanosleep(32);
      }
#pragma unroll
      for (int st = 0; st < STEPS; ++st)
        if (mine && has_slice(st))
          detail::st16(xs + m * XS + item_k0(st) + v * EV,
                       make_uint4(~got[st].x, ~got[st].y, ~got[st].z, ~got[st].w));
      __syncwarp();
      // The next pair's buffers back to "not written" (their last reader has completed).
      for (int i = int(blockIdx.x) + GRID * tid; i < M * K / 8; i += GRID * THREADS)
        detail::st16(handoff_reset_x + size_t(i) * 8, make_uint4(0u, 0u, 0u, 0u));
      if (blockIdx.x == 0 && tid == 0) *handoff_reset_count = 0u;
    } else if constexpr (X_RING) {
#pragma unroll
      for (int st = 0; st < RING; ++st) stage_ring(st);
    } else if constexpr (W_SMEM) {
      // Plain loads (the cp.async groups count weight steps here): all slices at once.
      constexpr int VS = BATCH * 64 / EV;
      for (int st = 0; st < STEPS; ++st) {
        const int kb = (st * WARPS + warp) * (BATCH * 64);
        for (int j = lane; has_slice(st) && j < M * VS; j += 32) {
          const int m = j / VS;
          const int v = j - m * VS;
          detail::st16(xs + m * XS + kb + v * EV, detail::ld16(x + size_t(m) * K + kb + v * EV));
        }
      }
      __syncwarp();
    } else {
      constexpr int VS = BATCH * 64 / EV; // 16-byte vectors per row slice
#pragma unroll 1
      for (int st = 0; st < STEPS; ++st) {
        const int kb = (st * WARPS + warp) * (BATCH * 64);
        for (int j = lane; has_slice(st) && j < M * VS; j += 32) {
          const int m = j / VS;
          const int v = j - m * VS;
          detail::cp_async16(xs + m * XS + kb + v * EV, x + size_t(m) * K + kb + v * EV);
        }
        detail::cp_async_commit();
      }
    }
  }

  trace.mark(0);
  // Main loop, unrolled by two for the register double buffer: while one buffer's MMAs run,
  // the other buffer's loads are in flight; a buffer is refilled right after its MMAs.
  for (int i = 0; i < n_items; i += 2) {
    compute(buf_a, i);
    if (W_SMEM || i + 2 < n_items) load(buf_a, i + 2);
    if (i % STEPS == STEPS - 1) finish(i);
    if (i + 1 >= n_items) break;
    compute(buf_b, i + 1);
    if (W_SMEM || i + 3 < n_items) load(buf_b, i + 3);
    if ((i + 1) % STEPS == STEPS - 1) finish(i + 1);
  }
  trace.mark(1);
  if constexpr (PRODUCER) { // every thread's stores are issued; the consumer checks they landed
    // The consumer checks only x; the residual sum must be visible before the count.
    if constexpr (RESIDUAL_NORM)
      if (blockIdx.x == 0 && residual_sum != nullptr) __threadfence();
    __syncthreads();
    if (tid == 0) detail::red_add_relaxed(handoff_count, 1u);
  }
}

} // namespace sinter::kernels
