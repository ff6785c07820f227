// Launch parameters of the kernels in runtime/kernels/*.cuh, as plain C++17 constexpr
// functions. The compiler includes this header (no CUDA headers needed) to fill in
// sinter_kernel_desc {grid, block, shared_bytes, buffers}; every kernel computes its own
// block size, tiling and shared-memory layout from the same functions (and static_asserts
// its shape limits with the *_supported() functions), so the two can never disagree.
//
// Conventions for every kernel here:
//  - arguments are device pointers only, in the order documented below (program.h passes one
//    pointer per sinter_buffer_ref, in order); an argument a kernel variant does not use
//    must still be present and may be nullptr;
//  - every pointer must be 16-byte aligned (arena/weight offsets multiples of 16);
//  - bf16 is __nv_bfloat16; shapes are row-major and compact;
//  - programmatic dependent launch: every kernel issues griddepcontrol.launch_dependents at
//    its start and griddepcontrol.wait before it reads or writes anything but weights, so a
//    launch with cudaLaunchAttributeProgrammaticStreamSerialization (cudaLaunchKernelEx, or a
//    programmatic graph edge) may start while the previous kernel finishes; without the
//    attribute both instructions are no-ops.
//
// Dynamic shared memory: a launch whose shared_bytes exceeds 48 KiB needs
// cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes) once
// per function before its first launch (the runtime's context.cpp does exactly that). All
// values are <= the target's per-block limit (SharedMemoryLimits below).
#ifndef SINTER_KERNELS_LAUNCH_PARAMS_H
#define SINTER_KERNELS_LAUNCH_PARAMS_H

#include <cstdint>

// The kernels call these functions in device code under nvcc; for every other compiler they
// are plain constexpr functions.
#if defined(__CUDACC__)
#define SINTER_LP_FN constexpr __host__ __device__
#else
#define SINTER_LP_FN constexpr
#endif

namespace sinter::kernels {

struct Dim3 {
  uint32_t x, y, z;
};

struct LaunchParams {
  Dim3 grid;
  Dim3 block;
  uint32_t shared_bytes; // dynamic shared memory
};

// The GPU's limits that kernel configurations depend on. The compiler passes the target
// description's values (compiler/targets/*.yaml, carried by the module as `sinter.target`);
// the generated source defines SINTER_TARGET_SHARED_PER_BLOCK, SINTER_TARGET_SHARED_PER_SM and
// SINTER_TARGET_L2_BYTES to the same values before it includes this header, so that each
// kernel derives, through the defaulted arguments below, the configuration the compiler chose.
// Kernels built without them (the GPU tests) get sm_90's (H100/H200; the L2 is the H100's).
struct SharedMemoryLimits {
  uint32_t per_block; // opt-in dynamic shared memory of one block
  uint32_t per_sm;    // one SM's capacity; each resident block also reserves the amount below
};
constexpr uint32_t kReservedSharedPerBlock = 1024;
#ifndef SINTER_TARGET_SHARED_PER_BLOCK
#define SINTER_TARGET_SHARED_PER_BLOCK 232448u
#endif
#ifndef SINTER_TARGET_SHARED_PER_SM
#define SINTER_TARGET_SHARED_PER_SM 233472u
#endif
#ifndef SINTER_TARGET_L2_BYTES
#define SINTER_TARGET_L2_BYTES 52428800ull
#endif
constexpr SharedMemoryLimits kTargetSharedMemory{SINTER_TARGET_SHARED_PER_BLOCK,
                                                 SINTER_TARGET_SHARED_PER_SM};
constexpr uint64_t kTargetL2Bytes = SINTER_TARGET_L2_BYTES;

// gridDim.y and gridDim.z of every CUDA device: the kernels put sequences (and query heads)
// of a batch there.
constexpr int kMaxGridYZ = 65535;

SINTER_LP_FN int ceil_div(int a, int b) { return (a + b - 1) / b; }
SINTER_LP_FN int round_up(int a, int b) { return ceil_div(a, b) * b; }
SINTER_LP_FN int min_int(int a, int b) { return a < b ? a : b; }
SINTER_LP_FN int max_int(int a, int b) { return a > b ? a : b; }

// =============================================================================================
// embedding_gather<M, D, VOCAB, T, OutT>(const int64_t *ids, const T *table, OutT *out)
//   args: ids [M] int64, table [VOCAB, D], out [M, D]
//   out[m, :] = table[ids[m], :]; an id outside [0, VOCAB) gives a row of zeros. OutT is T,
//   or float for a bf16 table (exact widening).
//   Requires D * sizeof(T) % 16 == 0. grid (ceil(V / block), M, 1), block (min(256,
//   round_up(V, 32))), no shared memory, where V = D * sizeof(T) / 16 vectors per row.
// =============================================================================================
SINTER_LP_FN bool embedding_gather_supported(int M, int D, int vocab, int elem_bytes) {
  return M >= 1 && D >= 1 && vocab >= 1 && elem_bytes >= 1 && (D * elem_bytes) % 16 == 0;
}
SINTER_LP_FN int embedding_gather_vectors(int D, int elem_bytes) { return D * elem_bytes / 16; }
SINTER_LP_FN int embedding_gather_threads(int D, int elem_bytes) {
  return min_int(256, round_up(embedding_gather_vectors(D, elem_bytes), 32));
}
SINTER_LP_FN LaunchParams embedding_gather_launch(int M, int D, int elem_bytes) {
  return {{uint32_t(ceil_div(embedding_gather_vectors(D, elem_bytes),
                             embedding_gather_threads(D, elem_bytes))),
           uint32_t(M), 1u},
          {uint32_t(embedding_gather_threads(D, elem_bytes)), 1u, 1u},
          0u};
}

// =============================================================================================
// rms_norm<M, D, EPS_BITS, WT>(const bf16 *x, const WT *w, bf16 *out)
//   args: x [M, D], w [D] bf16 or float (WT), out [M, D] (out may alias x)
//   bf16 w:  out = bf16(w * bf16(x_f32 * rsqrt(mean(x_f32^2) + eps)))  (HF LlamaRMSNorm's
//            rounding: the normalized row is cast to bf16 before the weight multiply);
//   float w: out = bf16(w * (x_f32 * rsqrt(mean(x_f32^2) + eps)))  (Gemma's and OLMo 2's:
//            the weight multiply in fp32, one rounding);
//   EPS_BITS is the float eps's bit pattern. Requires D % 8 == 0.
//   grid (M), block (min(256, round_up(D / 8, 32))), no shared memory.
// =============================================================================================
SINTER_LP_FN bool rms_norm_supported(int M, int D) { return M >= 1 && D >= 8 && D % 8 == 0; }
SINTER_LP_FN int rms_norm_threads(int D) { return min_int(256, round_up(D / 8, 32)); }
SINTER_LP_FN LaunchParams rms_norm_launch(int M, int D) {
  return {{uint32_t(M), 1u, 1u}, {uint32_t(rms_norm_threads(D)), 1u, 1u}, 0u};
}

// =============================================================================================
// linear_small_m<M, N_ROWS, K, PRO, EPI, OutT, EPS_BITS, ROPE_ROWS, HEAD_DIM, NUM_SMS, XT,
//                HANDOFF, HANDOFF_BLOCKS, WT, W_GROUP[, ROTARY_DIM = 0]>(
//     const XT *x, const WT *w, const void *norm_weight, const bf16 *bias,
//     const OutT *residual, const bf16 *cos, const bf16 *sin, OutT *out,
//     uint32_t *handoff_count, bf16 *handoff_reset_x, uint32_t *handoff_reset_count,
//     const float *w_scale, const uint8_t *w_zero, const bf16 *prologue_residual,
//     bf16 *residual_sum)
//   x [M, K] bf16 or fp32 (XT; must not alias out). fp32 x is split into x_hi = bf16(x) and
//   x_lo = bf16(x - x_hi), and each MMA runs on both (x carried to ~16 mantissa bits, so the
//   product is as accurate as an fp32 one on the bf16 weights); w [N_ROWS, KW] bf16 (the
//   TRANSPOSED weight, row n = output feature n, after the compile-time re-layouts below;
//   KW = linear_small_m_weight_cols(K, PRO, sizeof(XT), weights): K, or K + 64 with a zero
//   last chunk for some normalizing prologues);
//   norm_weight [K] (bf16 for PRO == RMS_NORM, fp32 for RMS_NORM_FP32_WEIGHT; for LAYER_NORM
//   fp32 [2, K]: the scale, then the shift); bias [N_ROWS] (EPI == BIAS, BIAS_RESIDUAL;
//   optional for GELU_TANH and GELU); residual [M, N_ROWS] (EPI == RESIDUAL, BIAS_RESIDUAL; may alias
//   out); cos, sin [M, R] bf16 with R = ROTARY_DIM (0: HEAD_DIM), row m for token m
//   (EPI == ROPE_PAIRS);
//   out [M, N_out] with N_out = N_ROWS / 2 for the gate pairs (linear_epilogue_gates), else
//   N_ROWS.
//   acc = prologue(x) @ w^T in fp32 (bf16 tensor-core MMA, fp32 accumulation), then:
//     NONE            out = acc
//     BIAS            out = acc + bias[n]
//     RESIDUAL        out = bf16(acc) + residual[m, n]      (bf16(acc) only when OutT is bf16)
//     BIAS_RESIDUAL   out = bf16(acc + bias[n]) + residual[m, n]  (a biased projection into
//                     the residual stream, GPT-2's: the rounding of addmm, then the add)
//     GELU_TANH       out = r(gelu_tanh(r(acc + bias[n]))), bias optional (null for none), r
//                     rounding to OutT: an MLP's first projection and its GeLU (GPT-2's c_fc
//                     and gelu_new)
//     GELU            the same with the exact gelu(g) = 0.5 g (1 + erf(g / sqrt(2)))
//                     (GPT-NeoX's dense_h_to_4h and GeLU)
//     SILU_MUL_PAIRS  rows 2j / 2j+1 = gate j / up j: g = r(acc_2j), u = r(acc_2j+1),
//                     out[m, j] = r(silu(g)) * u, where r rounds to OutT (bf16: exactly HF's
//                     act_fn(gate) * up on bf16 tensors; fp32: no rounding)
//     GELU_TANH_MUL_PAIRS  the same with gelu_tanh(g) = 0.5 g (1 + tanh(sqrt(2/pi) (g +
//                     0.044715 g^3))) for silu (Gemma's GeGLU)
//     ROPE_PAIRS      rows [0, ROPE_ROWS) are heads of HEAD_DIM rows whose first R columns
//                     rotate; within a head, rows 2i and 2i+1 (2i < R) hold original columns i
//                     and i + R/2 (linear_rope_pairs_row), rows from R on their own column.
//                     q = r(acc + bias[row]) for both (r rounds to OutT; bias optional,
//                     null for none, in the kernel's row order), then in fp32:
//                       out[col i]       = q_i * cos[m, i] - q_{i+R/2} * sin[m, i]
//                       out[col i + R/2] = q_{i+R/2} * cos[m, i+R/2] + q_i * sin[m, i+R/2]
//                     written in ORIGINAL column order; a head's columns from R on (partial
//                     rotary) and rows >= ROPE_ROWS pass through (+ bias[row]).
//   PRO == RMS_NORM: x is replaced by bf16(norm_weight * bf16(x * rsqrt(mean(x^2) + eps)))
//   for bf16 x, by norm_weight * (x * rsqrt(mean(x^2) + eps)) unrounded for fp32 x
//   (eps = bit_cast<float>(EPS_BITS); ignored for PRO == NONE).
//   PRO == RMS_NORM_FP32_WEIGHT (bf16 x only): norm_weight is fp32 [K] and x is replaced by
//   bf16(norm_weight * (x * rsqrt(mean(x^2) + eps))), one rounding (Gemma's (1 + w) and
//   OLMo 2's RMSNorm multiply in fp32).
//   PRO == LAYER_NORM (bf16 x only): x is replaced by bf16((x - mean) * rsqrt(var + eps) *
//   norm_weight[0, k] + norm_weight[1, k]), the statistics in fp32 over the row (the variance
//   about the mean, two passes), one rounding (PyTorch's and ONNX's LayerNormalization).
//   PRO == RESIDUAL_RMS_NORM_FP32_WEIGHT (bf16 x only): a post-norm and residual add before the
//   pre-norm (Gemma 2's post_attention_layernorm, residual, pre_feedforward_layernorm; its
//   post_feedforward_layernorm, residual, next input_layernorm): norm_weight is fp32 [2, K],
//   the post-norm's weight then the pre-norm's;
//     s = bf16(prologue_residual + bf16(norm_weight[0, k] * (x * rsqrt(mean(x^2) + eps))))
//   is written to residual_sum [M, K] by block 0 when residual_sum is given (it must alias
//   neither x nor prologue_residual, which every block reads), then x is replaced by
//   bf16(norm_weight[1, k] * (s * rsqrt(mean(s^2) + eps))). Each block recomputes s (M x K is
//   small) instead of a launch of its own computing it. A handoff producer's block 0 fences
//   its residual_sum stores before it counts itself, so launches after the consumer see them.
//
//   Tiling (linear_small_m_tiling): one 16-row tile of w per block at a time (grid-stride over
//   tiles); the block's `warps` warps split K: at step s warp w reads k in
//   [(s*warps + w) * 64*batch, +64*batch) (ragged K: none past K, the last step's higher warps
//   idle). Each lane keeps two steps of 16-byte weight loads
//   in flight: a register double buffer, or (w_smem: 16-warp blocks and 8-warp blocks that
//   own one tile, bf16 x, no prologue, when it fits) a shared-memory one of
//   2 * threads * batch * 64 bytes at <= 64 registers a thread, so the next launch's blocks
//   start beside it. 16 warps (1 block/SM) when there are
//   no more tiles than SMs and a tile is more than two steps of 8 warps (K > 2048 at batch 2),
//   else 8 warps and up to 2 blocks/SM. x is staged in shared memory with cp.async (plain
//   loads with w_smem): the whole of it (and norm_weight) for RMS_NORM, else each warp copies
//   just its own slices.
//   Under programmatic dependent launch its first weight loads (two steps per warp, and
//   norm_weight) overlap the previous kernel; RMS_NORM blocks with several tiles also copy up
//   to a tile of further steps into shared memory then (linear_small_m_prewait_items).
//   WT: bf16 weights, or fp8 e4m3 weights with a per-row fp32 scale (the 12th argument
//   w_scale [N_ROWS], null for bf16; layout: "fp8 weights" below), dequantized in registers
//   (the bf16 MMAs take the e4m3 values exactly) and scaled in the epilogue; or Int4x2
//   weights, 4 bits each, with group scales w_scale and zero points w_zero (the 13th
//   argument, null for every other type and for symmetric int4; "int4 weights" below),
//   template parameter W_GROUP the group size (0 for bf16 and fp8).
//   Requires 1 <= M <= 16, N_ROWS % 16 == 0 (or any N_ROWS >= 16 for the NONE and BIAS
//   epilogues: w and an fp8 / int4 w_scale then hold linear_small_m_weight_rows(N_ROWS) rows,
//   those past N_ROWS zero, and only the N_ROWS columns are written), K % 64 == 0 (int4:
//   K % 128 == 0 and a group linear_int4_group_supported takes), shared bytes within the target's per-block limit
//   (bf16 x: M*(K+32)*2 [+ K*2 for RMS_NORM, K*4 for RMS_NORM_FP32_WEIGHT, K*8 for
//   LAYER_NORM] + reduction:
//   M=6,K=8192 needs ~113 KiB; M=16 fits K<=6400; fp32 x: twice the x bytes unless it streams through a ring, see LinearXStaging).
//
//   Handoff (HANDOFF, HANDOFF_BLOCKS; the last three arguments handoff_count [1] uint32,
//   handoff_reset_x [M, K] bf16, handoff_reset_count [1] uint32): a producer launch and the
//   consumer launched right after it pass x through a buffer in the context state instead of
//   the consumer's griddepcontrol.wait (decode: gate/up -> down; the release after the
//   producer's last block is the longest launch boundary of the step, see RESULTS.md).
//     PRODUCER  out is stored bit-inverted (~bits; a 0xFFFF result, a NaN, is stored as
//               ~0x7FFF), so a zero halfword means "not written yet"; after its stores each
//               block adds 1 to handoff_count. OutT bf16.
//     CONSUMER  instead of griddepcontrol.wait: waits until handoff_count reaches
//               HANDOFF_BLOCKS (the producer's grid), then reads x (the producer's out) with
//               volatile loads again until no halfword of it is zero, and un-inverts it; then
//               zeroes handoff_reset_x and handoff_reset_count: the next pair's buffers (the
//               first pair's for the last). Launch-order requirements (the
//               compiler's lowering meets them): the consumer is launched right after its
//               producer; the buffers start zeroed (context state); the launch that last read
//               the reset buffers has completed before the producer's griddepcontrol.wait
//               returns, and their next writer waits for this launch; every input but x was
//               complete before the producer's wait returned. A wait that lasts over 2 s
//               traps (a broken pairing fails the call instead of hanging it).
//               Needs linear_small_m_handoff_consumer_supported.
// =============================================================================================
enum class LinearPrologue : int {
  NONE = 0,
  RMS_NORM = 1,
  RMS_NORM_FP32_WEIGHT = 2,
  LAYER_NORM = 3,
  RESIDUAL_RMS_NORM_FP32_WEIGHT = 4
};
enum class LinearHandoff : int { NONE = 0, PRODUCER = 1, CONSUMER = 2 };
enum class LinearEpilogue : int {
  NONE = 0,
  BIAS = 1,
  RESIDUAL = 2,
  SILU_MUL_PAIRS = 3,
  ROPE_PAIRS = 4,
  GELU_TANH_MUL_PAIRS = 5,
  BIAS_RESIDUAL = 6,
  GELU_TANH = 7,
  GELU = 8
};
// As the generated code spells them (indexed by the enumerator), for the lowering and the
// launch passes that read a launch back.
constexpr const char *kLinearPrologueNames[] = {
    "sinter::kernels::LinearPrologue::NONE", "sinter::kernels::LinearPrologue::RMS_NORM",
    "sinter::kernels::LinearPrologue::RMS_NORM_FP32_WEIGHT",
    "sinter::kernels::LinearPrologue::LAYER_NORM",
    "sinter::kernels::LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT"};
constexpr const char *kLinearEpilogueNames[] = {
    "sinter::kernels::LinearEpilogue::NONE",
    "sinter::kernels::LinearEpilogue::BIAS",
    "sinter::kernels::LinearEpilogue::RESIDUAL",
    "sinter::kernels::LinearEpilogue::SILU_MUL_PAIRS",
    "sinter::kernels::LinearEpilogue::ROPE_PAIRS",
    "sinter::kernels::LinearEpilogue::GELU_TANH_MUL_PAIRS",
    "sinter::kernels::LinearEpilogue::BIAS_RESIDUAL",
    "sinter::kernels::LinearEpilogue::GELU_TANH",
    "sinter::kernels::LinearEpilogue::GELU"};
SINTER_LP_FN bool linear_prologue_normalizes(LinearPrologue pro) {
  return pro != LinearPrologue::NONE;
}
// Prologues that read 16-bit x only (their weights are fp32).
SINTER_LP_FN bool linear_prologue_needs_16bit_x(LinearPrologue pro) {
  return pro == LinearPrologue::RMS_NORM_FP32_WEIGHT || pro == LinearPrologue::LAYER_NORM ||
         pro == LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT;
}
// Bytes of norm_weight per element of K (0: no prologue); LAYER_NORM's holds the scale and
// the shift, RESIDUAL_RMS_NORM_FP32_WEIGHT's the post-norm's and the pre-norm's weights.
SINTER_LP_FN int linear_norm_weight_bytes(LinearPrologue pro) {
  return pro == LinearPrologue::RMS_NORM                        ? 2
         : pro == LinearPrologue::RMS_NORM_FP32_WEIGHT          ? 4
         : pro == LinearPrologue::LAYER_NORM                    ? 8
         : pro == LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT ? 8
                                                                : 0;
}
// Epilogues that add residual[m, n] to the (rounded) product.
SINTER_LP_FN bool linear_epilogue_adds_residual(LinearEpilogue epi) {
  return epi == LinearEpilogue::RESIDUAL || epi == LinearEpilogue::BIAS_RESIDUAL;
}
// Epilogues whose rows pair a gate with an up projection (half as many outputs as rows).
SINTER_LP_FN bool linear_epilogue_gates(LinearEpilogue epi) {
  return epi == LinearEpilogue::SILU_MUL_PAIRS || epi == LinearEpilogue::GELU_TANH_MUL_PAIRS;
}

// How w is stored: bf16; fp8 e4m3 with a scale per row ("fp8 weights"); 4-bit integers with a
// scale (and optionally a zero point) per row and group of k ("int4 weights").
enum class LinearWeights : int { BF16 = 0, FP8_E4M3 = 1, INT4 = 2 };

// int4 weights (WT = Int4x2, group size W_GROUP): w[n, k] = w_scale[n, k / W_GROUP] *
// (q[n, k] - z), q in [0, 15], z = w_zero[n, k / W_GROUP] (uint8 in [0, 15]; 8 when w_zero is
// null: symmetric, q - 8 in [-8, 7]); w_scale fp32 [N_ROWS, K / W_GROUP], w_zero uint8
// [N_ROWS, K / W_GROUP], both in kernel-row order. q is packed two to a byte, [N_ROWS, K / 2]
// bytes; within every kLinearInt4BlockK-wide block of k a row's 64 bytes are permuted so that
// the 16 bytes lane t loads are the k its bf16 fragments of two 64-wide chunks take, one
// little-endian 32-bit word per 8-k run: nibble p of a block (byte p / 2, low nibble first)
// holds k = linear_int4_block_k(p). In a word, nibbles i and i + 4 are k 2i and 2i + 1 of
// its run, so one shift and mask puts a k pair into a bf16x2 (exactly: 0x4300 | q = 128 + q).
// The products of a group are summed apart and scaled in fp32 (no rounding of scale * q).
// Groups: 32, 64 or a multiple of 128 dividing K. Compile-time quantization (--weight-dtype
// int4): symmetric, group kLinearInt4Group, scale = max|w| / 7 over the group (1 for all
// zeros), q = clamp(round_half_even(w / scale), -8, 7) + 8.
struct Int4x2 {
  uint8_t bits;
};
// WT as the generated code spells it, by LinearWeights (linear_weights_of in linear_small_m.cuh
// maps it back): what the lowering writes into a launch and the launch passes read.
constexpr const char *kLinearWeightTypeNames[] = {"__nv_bfloat16", "__nv_fp8_e4m3",
                                                  "sinter::kernels::Int4x2"};
constexpr int kLinearInt4BlockK = 128;
constexpr int kLinearInt4Group = 128;
SINTER_LP_FN int linear_int4_block_k(int p) {
  const int byte = p / 2;
  const int lane_t = byte / 16;                  // the lane (t = lane % 4) that loads it
  const int word = (byte % 16) / 4;              // its chunk (word / 2) and half (word % 2)
  const int nibble = 2 * (byte % 4) + p % 2;     // within the word
  const int in_run = nibble < 4 ? 2 * nibble : 2 * (nibble - 4) + 1;
  return 64 * (word / 2) + 32 * (word % 2) + 8 * lane_t + in_run;
}
SINTER_LP_FN bool linear_int4_group_supported(int K, int group) {
  return group >= 32 && K % group == 0 &&
         (group == 32 || group == 64 || group % kLinearInt4BlockK == 0);
}

// How x sits in shared memory:
//   BF16_ROWS    bf16 x: M rows of K+32 (cp.async, normalized in place for RMS_NORM);
//   BF16_PLANES  fp32 x with RMS_NORM: normalized from global memory straight into two bf16
//                planes (hi, lo) of M rows of K+32 each, split once and reused by every tile;
//   F32_ROWS     fp32 x, no prologue, blocks with several tiles: M rows of K+4 floats, split at
//                each fragment load;
//   F32_RING     fp32 x, no prologue, one tile per block (N_ROWS/16 <= NUM_SMS): each warp
//                streams its own k slices through a ring of min(2, steps) slots of M rows of
//                64*batch+4 floats, so the block holds a fraction of x (co-resident kernels
//                under PDL need the room).
// Strides: +64 bytes per bf16 row, +16 bytes per fp32 row keep the fragment loads of 8 rows
// in distinct banks.
enum class LinearXStaging : int { BF16_ROWS = 0, BF16_PLANES = 1, F32_ROWS = 2, F32_RING = 3 };

struct LinearTiling {
  int warps;       // warps per block, each takes a K slice (block = warps * 32 threads)
  int batch;       // 64-wide K chunks per warp per step
  int weight_cols; // a weight row's length: K or more (linear_small_m_weight_cols)
  int slices;      // K slices of 64 * batch per tile (weight_cols / (64 * batch))
  int steps;       // steps per tile: ceil(slices / warps); when warps does not divide slices
                   // (ragged K), the last step's warps from slices % warps on idle
  int n_tiles;     // ceil(N_ROWS / 16)
  int mma_n;       // 8-token MMA column tiles: 1 for M <= 8, 2 for M <= 16
  LinearXStaging x_staging;
  int x_stride;    // shared-memory row stride of x in elements (linear_small_m_x_stride)
  bool w_smem;      // weight double buffer in shared memory instead of registers
  int prewait_items; // weight steps after the first tile's, copied to shared memory before
                     // griddepcontrol.wait (linear_small_m_prewait_items)
  int reg_blocks;   // blocks per SM the registers are budgeted for (__launch_bounds__)
  int blocks_per_sm;
  int tiles_per_block;
  int grid;
  uint32_t shared_bytes;
  LinearWeights weights; // bf16, fp8 e4m3 or grouped int4 (see "fp8 weights", "int4 weights")
};

// Tuning knobs, for experiments only: a value other than the default must be defined
// identically for the compiler and for the generated code, or launches and kernels disagree.
#ifndef SINTER_LINEAR_MAX_WARPS
#define SINTER_LINEAR_MAX_WARPS 16
#endif
#ifndef SINTER_LINEAR_MAX_BLOCKS_PER_SM
#define SINTER_LINEAR_MAX_BLOCKS_PER_SM 2
#endif
#ifndef SINTER_LINEAR_WEIGHTS_IN_SHARED
#define SINTER_LINEAR_WEIGHTS_IN_SHARED 1
#endif
// Ragged K: as many warps as the cap allows when they do not divide a tile's K slices (the
// last step partly idle) rather than the largest count that divides them: Qwen2.5-1.5B's
// down (K = 8960, 70 slices) otherwise gets 2 warps a block and keeps too few bytes in flight.
#ifndef SINTER_LINEAR_RAGGED_K
#define SINTER_LINEAR_RAGGED_K 1
#endif
#ifndef SINTER_LINEAR_FP8_W_SMEM
#define SINTER_LINEAR_FP8_W_SMEM 1
#endif
// int4: 64-wide k chunks per warp and step at most (16-byte loads per lane and step: as many).
// 4 rather than 8: twice the warps on a tile, faster on the 1B decode shapes (RESULTS.md, "int4
// weights").
#ifndef SINTER_LINEAR_INT4_BATCH
#define SINTER_LINEAR_INT4_BATCH 4
#endif
#ifndef SINTER_LINEAR_PREWAIT_SHARED
#define SINTER_LINEAR_PREWAIT_SHARED 1
#endif

constexpr int kLinearTileRows = 16;

SINTER_LP_FN LinearXStaging linear_small_m_x_staging(int N_rows, LinearPrologue pro, int x_bytes,
                                                     int num_sms) {
  if (x_bytes != 4) return LinearXStaging::BF16_ROWS;
  if (linear_prologue_normalizes(pro)) return LinearXStaging::BF16_PLANES;
  return ceil_div(N_rows, kLinearTileRows) <= num_sms ? LinearXStaging::F32_RING
                                                      : LinearXStaging::F32_ROWS;
}
// 64-wide k chunks per warp and step. fp8 weights take twice the chunks of bf16 where K
// allows, so that a lane keeps as many bytes in flight (2 steps x 128 bytes) as with bf16.
#ifndef SINTER_LINEAR_FP8_WIDE_BATCH
#define SINTER_LINEAR_FP8_WIDE_BATCH 1
#endif
SINTER_LP_FN int linear_small_m_batch(int K, LinearWeights weights = LinearWeights::BF16) {
  if (weights == LinearWeights::INT4) {
    for (int b = SINTER_LINEAR_INT4_BATCH; b > 2; b /= 2)
      if ((K / 64) % b == 0) return b;
    return 2;
  }
  if (SINTER_LINEAR_FP8_WIDE_BATCH && weights == LinearWeights::FP8_E4M3 && (K / 64) % 4 == 0)
    return 4;
  return (K / 64) % 2 == 0 ? 2 : 1;
}
// The length of a kernel weight row: K, or for a normalizing prologue over bf16 x with bf16
// weights and an odd number of 64-wide chunks (GPT-2 XL's K = 1600: 25), one zero chunk more.
// An odd count takes one chunk a step, and its slices divide unevenly over the warps;
// linear_shapes_bench on the H100: GPT-2 XL's fc (LayerNorm, K 1600) 78.9 % of the copy
// bandwidth, padded to 1664 101 % (results/linear_shapes_default_s38.log). The staged x is
// zero past K and the row statistics stay over the K columns. From 16 chunks on only, where
// the zero chunk adds at most 1/17 of the bytes. SINTER_LINEAR_PAD_ODD_K=0: never (experiments
// only).
#ifndef SINTER_LINEAR_PAD_ODD_K
#define SINTER_LINEAR_PAD_ODD_K 1
#endif
SINTER_LP_FN int linear_small_m_weight_cols(int K, LinearPrologue pro, int x_bytes = 2,
                                            LinearWeights weights = LinearWeights::BF16) {
  const int chunks = K / 64;
  return SINTER_LINEAR_PAD_ODD_K && linear_prologue_normalizes(pro) && x_bytes == 2 &&
                 weights == LinearWeights::BF16 && K % 64 == 0 && chunks > 16 && chunks % 2 == 1
             ? K + 64
             : K;
}
SINTER_LP_FN int linear_small_m_x_stride(int K, LinearXStaging xs, LinearWeights weights = LinearWeights::BF16) {
  return xs == LinearXStaging::F32_ROWS   ? K + 4
         : xs == LinearXStaging::F32_RING ? linear_small_m_batch(K, weights) * 64 + 4
                                          : K + 32;
}
SINTER_LP_FN int linear_small_m_ring_slots(int K, int warps, LinearWeights weights = LinearWeights::BF16) {
  return min_int(2, ceil_div(K / 64 / linear_small_m_batch(K, weights), warps));
}

// 16-byte weight loads per lane and step: a step covers 64 * batch k of two rows (g, g + 8)
// per lane, 8 bf16 or 16 fp8 values a load.
SINTER_LP_FN int linear_small_m_weight_loads(int K, LinearWeights weights) {
  return weights == LinearWeights::INT4       ? linear_small_m_batch(K, weights)
         : weights == LinearWeights::FP8_E4M3 ? linear_small_m_batch(K, weights) * 2
                                              : linear_small_m_batch(K, weights) * 4;
}
// Bytes of the weight double buffer in shared memory (w_smem): two steps of a lane's loads.
SINTER_LP_FN uint32_t linear_small_m_weight_buffer_bytes(int K, int warps, LinearWeights weights = LinearWeights::BF16) {
  return 2u * uint32_t(warps) * 32u * uint32_t(linear_small_m_weight_loads(K, weights)) * 16u;
}

// Bytes of dynamic shared memory: x (see LinearXStaging), norm_weight (K of them, prologues only),
// the double-buffered cross-warp reduction (2 * warps * mma_n*4 * 32 floats), then with w_smem
// the weight double buffer, or the prewait_items weight steps copied before the wait.
SINTER_LP_FN uint32_t linear_small_m_shared_bytes(int M, int K, int warps, LinearPrologue pro,
                                                  LinearXStaging xs = LinearXStaging::BF16_ROWS,
                                                  bool w_smem = false, int prewait_items = 0,
                                                  LinearWeights weights = LinearWeights::BF16) {
  // x rows and weight steps span the padded K, the norm weights K.
  const int kw = linear_small_m_weight_cols(K, pro, xs == LinearXStaging::BF16_ROWS ? 2 : 4,
                                            weights);
  const uint32_t row_bytes = uint32_t(linear_small_m_x_stride(kw, xs, weights)) *
                             (xs == LinearXStaging::BF16_ROWS ? 2u : 4u); // planes: 2 x bf16
  const uint32_t rows = xs == LinearXStaging::F32_RING
                            ? uint32_t(warps * linear_small_m_ring_slots(K, warps, weights) * M)
                            : uint32_t(M);
  const uint32_t x = rows * row_bytes;
  return x + uint32_t(K) * uint32_t(linear_norm_weight_bytes(pro)) +
         2u * uint32_t(warps) * uint32_t(M > 8 ? 8 : 4) * 32u * 4u +
         (w_smem ? linear_small_m_weight_buffer_bytes(kw, warps, weights) : 0u) +
         uint32_t(prewait_items) * (linear_small_m_weight_buffer_bytes(kw, warps, weights) / 2u);
}

// Shared memory an SM keeps free of one launch's blocks when they take prewait items: room
// for the blocks of the launches that run beside them (attention <= 48 KiB, o_proj, down).
// decode_chain_bench, gate_up at 2 blocks per SM: 2 items (64 KiB a block, 66 KiB left free)
// -1.9 % per step; 1 item (129 KiB left) -1.4 %; 3 items (2 KiB left) +15 %.
// (A tuning knob like those above.)
#ifndef SINTER_LINEAR_PREWAIT_FREE_KIB
#define SINTER_LINEAR_PREWAIT_FREE_KIB 64
#endif
constexpr uint32_t kLinearPrewaitFreeBytesPerSm = SINTER_LINEAR_PREWAIT_FREE_KIB * 1024u;

// Weight steps after a block's first tile that it copies into shared memory before
// griddepcontrol.wait, beside the first tile's steps in registers. Only launches whose blocks
// own several tiles and start early gain: gate_up and the LM head start while the attention
// chain leaves the HBM mostly idle (decode_chain_bench: gate_up's span 17.2 -> 14.9 us, -1.9 %
// per step), so up to a tile of steps, while blocks_per_sm such blocks leave
// kLinearPrewaitFreeBytesPerSm free. Register buffers and bf16 x only (w_smem blocks already
// keep their steps in shared memory), RMS_NORM prologue (its x arrives without cp.async groups,
// so the copies' groups stay apart).
SINTER_LP_FN int linear_small_m_prewait_items(int M, int K, LinearPrologue pro,
                                              const LinearTiling &t, SharedMemoryLimits smem) {
  if (!SINTER_LINEAR_PREWAIT_SHARED || !linear_prologue_normalizes(pro) || t.w_smem ||
      t.weights == LinearWeights::INT4 || // its group scales are loaded beside the weights
      t.x_staging != LinearXStaging::BF16_ROWS || t.tiles_per_block < 2)
    return 0;
  for (int items = t.steps; items > 0; --items) {
    const uint32_t per_block =
        linear_small_m_shared_bytes(M, K, t.warps, pro, t.x_staging, false, items, t.weights) +
        kReservedSharedPerBlock;
    if (per_block <= smem.per_block &&
        uint32_t(t.blocks_per_sm) * per_block + kLinearPrewaitFreeBytesPerSm <= smem.per_sm)
      return items;
  }
  return 0;
}

SINTER_LP_FN LinearTiling linear_small_m_tiling(int M, int N_rows, int K, LinearPrologue pro,
                                                int num_sms, int x_bytes = 2,
                                                LinearWeights weights = LinearWeights::BF16,
                                                SharedMemoryLimits smem = kTargetSharedMemory) {
  LinearTiling t{};
  t.weights = weights;
  t.weight_cols = linear_small_m_weight_cols(K, pro, x_bytes, weights);
  const int chunks = t.weight_cols / 64;
  t.batch = linear_small_m_batch(t.weight_cols, weights);
  t.x_staging = linear_small_m_x_staging(N_rows, pro, x_bytes, num_sms);
  t.slices = chunks / t.batch;
  t.n_tiles = ceil_div(N_rows, kLinearTileRows);
  // 16 warps when the tiles fit the SMs and a block streams after the wait; 8 warps when its
  // whole tile fits the two register buffers of 8 warps (slices <= 16: all loads are issued
  // before griddepcontrol.wait, so more warps add no bandwidth) or there are more tiles than
  // SMs. A 16-warp block fills the register file, so the next launch's blocks could not start
  // beside it (decode_chain_bench: o_proj at 8 warps lets gate_up load early, -1.3 % per step).
  // A power of two dividing the slices; with ragged K the largest power of two up to the cap
  // and the slices (every warp has at least one slice).
  const int cap =
      min_int(t.n_tiles <= num_sms && t.slices > 16 ? 16 : 8, SINTER_LINEAR_MAX_WARPS);
  t.warps = 1;
  while (t.warps * 2 <= cap &&
         (SINTER_LINEAR_RAGGED_K ? t.warps * 2 <= t.slices : t.slices % (t.warps * 2) == 0))
    t.warps *= 2;
  while (t.warps > 1 &&
         linear_small_m_shared_bytes(M, K, t.warps, pro, t.x_staging, false, 0, weights) >
             smem.per_block)
    t.warps /= 2;
  t.steps = ceil_div(t.slices, t.warps);
  t.mma_n = M > 8 ? 2 : 1;
  t.x_stride = linear_small_m_x_stride(t.weight_cols, t.x_staging, weights);
  // A 16-warp block keeps its weight double buffer in shared memory when it fits: at 128
  // registers a thread it would fill the register file, and the next launch's blocks (QKV and
  // the LM head behind `down`) could only start as it exits; at <= 64 they start beside it.
  // So does an 8-warp block that owns one tile (o_proj): at <= 64 registers instead of ~100 it
  // leaves room for the next launch's blocks, whose early weight copies then fill the HBM
  // during attention (decode_chain_bench: -2.0 % per step at p=127, -1.2 % at p=1023).
  t.w_smem = SINTER_LINEAR_WEIGHTS_IN_SHARED &&
             (weights == LinearWeights::BF16 ||
              (weights == LinearWeights::FP8_E4M3 && SINTER_LINEAR_FP8_W_SMEM)) &&
             (t.warps == 16 || (t.warps == 8 && t.n_tiles <= num_sms)) &&
             pro == LinearPrologue::NONE &&
             t.x_staging == LinearXStaging::BF16_ROWS &&
             linear_small_m_shared_bytes(M, K, t.warps, pro, t.x_staging, true, 0, weights) <=
                 smem.per_block;
  t.shared_bytes =
      linear_small_m_shared_bytes(M, K, t.warps, pro, t.x_staging, t.w_smem, 0, weights);
  const int by_smem = int(smem.per_sm / (t.shared_bytes + kReservedSharedPerBlock));
  // Two blocks of up to 256 threads per SM at <= 128 registers per thread.
  const int by_regs = t.warps * 32 > 256 ? 1 : 2;
  t.blocks_per_sm =
      max_int(1, min_int(min_int(SINTER_LINEAR_MAX_BLOCKS_PER_SM, by_regs), by_smem));
  t.reg_blocks = t.w_smem ? 2 * 16 / t.warps : t.blocks_per_sm; // w_smem: <= 64 registers
  const int slots = max_int(1, num_sms) * t.blocks_per_sm;
  t.tiles_per_block = max_int(1, ceil_div(t.n_tiles, slots));
  t.grid = max_int(1, ceil_div(t.n_tiles, t.tiles_per_block));
  t.prewait_items = linear_small_m_prewait_items(M, K, pro, t, smem);
  if (t.prewait_items > 0)
    t.shared_bytes = linear_small_m_shared_bytes(M, K, t.warps, pro, t.x_staging, false,
                                                 t.prewait_items, weights);
  return t;
}

// Epilogues that take an N_ROWS that is not a multiple of 16 (an LM head over GPT-2's 50257
// tokens): each output column on its own.
SINTER_LP_FN bool linear_small_m_ragged_n_supported(LinearEpilogue epi) {
  return epi == LinearEpilogue::NONE || epi == LinearEpilogue::BIAS;
}
// The rows of w (and of an fp8 or int4 w_scale) the kernel reads: N_ROWS rounded up to whole
// 16-row tiles, the rows past N_ROWS zero.
SINTER_LP_FN int linear_small_m_weight_rows(int N_rows) {
  return round_up(N_rows, kLinearTileRows);
}
// num_sms matters for fp32 x: one tile per block lets x stream through the ring.
SINTER_LP_FN bool linear_small_m_supported(int M, int N_rows, int K, LinearPrologue pro,
                                           LinearEpilogue epi, int rope_rows, int head_dim,
                                           int x_bytes, int num_sms,
                                           LinearWeights weights = LinearWeights::BF16,
                                           int w_group = 0,
                                           SharedMemoryLimits smem = kTargetSharedMemory) {
  return M >= 1 && M <= 16 && N_rows >= kLinearTileRows &&
         (N_rows % kLinearTileRows == 0 || linear_small_m_ragged_n_supported(epi)) && K >= 64 &&
         K % 64 == 0 &&
         (x_bytes == 2 || x_bytes == 4) &&
         (!linear_prologue_needs_16bit_x(pro) || x_bytes == 2) &&
         (weights != LinearWeights::INT4 ||
          (K % kLinearInt4BlockK == 0 && linear_int4_group_supported(K, w_group))) &&
         linear_small_m_tiling(M, N_rows, K, pro, num_sms, x_bytes, weights, smem)
                 .shared_bytes <= smem.per_block &&
         (epi != LinearEpilogue::ROPE_PAIRS ||
          (head_dim >= 2 && head_dim % 2 == 0 && rope_rows >= 0 && rope_rows <= N_rows &&
           rope_rows % head_dim == 0));
}

// A consumer of a handoff (see "Handoff" above): bf16 x read by each warp with plain loads
// (the w_smem staging) and no prologue, at most 32 16-byte vectors per warp and step.
SINTER_LP_FN bool linear_small_m_handoff_consumer_supported(int M, int N_rows, int K,
                                                            LinearPrologue pro, int num_sms,
                                                            LinearWeights weights = LinearWeights::BF16,
                                                            SharedMemoryLimits smem = kTargetSharedMemory) {
  if (!linear_small_m_supported(M, N_rows, K, pro, LinearEpilogue::NONE, 0, 0, 2, num_sms,
                                weights, 0, smem))
    return false;
  const LinearTiling t = linear_small_m_tiling(M, N_rows, K, pro, num_sms, 2, weights, smem);
  return pro == LinearPrologue::NONE && N_rows % kLinearTileRows == 0 && t.w_smem &&
         t.x_staging == LinearXStaging::BF16_ROWS &&
         M * t.batch * 64 / 8 <= 32;
}

SINTER_LP_FN LaunchParams linear_small_m_launch(int M, int N_rows, int K, LinearPrologue pro,
                                                int num_sms, int x_bytes = 2,
                                                LinearWeights weights = LinearWeights::BF16,
                                                SharedMemoryLimits smem = kTargetSharedMemory) {
  const LinearTiling t = linear_small_m_tiling(M, N_rows, K, pro, num_sms, x_bytes, weights, smem);
  return {{uint32_t(t.grid), 1u, 1u}, {uint32_t(t.warps * 32), 1u, 1u}, t.shared_bytes};
}

// Compile-time weight re-layout for the pair epilogues: kernel row r holds which row of the
// original (transposed, [N, K]) weight.
//   ROPE_PAIRS: r < rope_rows: head h = r / head_dim, l = r % head_dim, rotated columns
//               R = rotary_dim (0: head_dim) -> l < R: h * head_dim + l / 2 + (l % 2) * R / 2;
//               l >= R (partial rotary's passed columns) and r >= rope_rows -> r.
SINTER_LP_FN int linear_rope_pairs_row(int r, int rope_rows, int head_dim, int rotary_dim = 0) {
  const int rotated = rotary_dim ? rotary_dim : head_dim;
  return r >= rope_rows || r % head_dim >= rotated
             ? r
             : (r / head_dim) * head_dim + (r % head_dim) / 2 + (r % head_dim % 2) * (rotated / 2);
}
//   SILU_MUL_PAIRS over a [gate; up] concatenation of 2 * n_half rows: r even -> gate r/2,
//   r odd -> up r/2, i.e. row n_half + r/2 of the concatenation.
SINTER_LP_FN int linear_silu_pairs_row(int r, int n_half) { return (r % 2) * n_half + r / 2; }

// fp8 weights (WT = __nv_fp8_e4m3): w[n, k] ~= w_scale[n] * e4m3fn(q[n, k]), one fp32 scale per
// kernel row (after the row re-layouts above), the acc of each row multiplied by its scale
// before the epilogue. Within every 64-wide chunk of k a row's bytes are permuted so that the
// 16 bytes lane t loads are the k its bf16 fragments take (8t..8t+7, then 32+8t..32+8t+7):
// byte p of a chunk holds k = linear_fp8_chunk_k(p). Quantized at compile time: scale =
// max|w[n, :]| / 448 (1 for an all-zero row), q = w / scale rounded to nearest even.
constexpr float kFp8E4m3Max = 448.0f;
SINTER_LP_FN int linear_fp8_chunk_k(int p) {
  return (p % 16 < 8 ? 0 : 32) + (p / 16) * 8 + p % 8;
}

// =============================================================================================
// attention_prefill<S, HQ, HKV, D, Q_OFF, K_OFF, V_OFF, ROW_STRIDE, SCALE_BITS, CAUSAL,
//                   PADDING_MASK, T, OutT>(const T *qkv, const int64_t *attention_mask,
//                                          OutT *out)
//   T and OutT are bf16 or float (fp32 activations; K and V then staged as fp32).
//   qkv [S, ROW_STRIDE] T (q head h at columns Q_OFF + h*D, kv head g at K_OFF + g*D and
//   V_OFF + g*D; q head h uses kv head h / (HQ / HKV)); attention_mask [S] int64 (batch 1,
//   keys with 0 are masked; nullptr when !PADDING_MASK); out [S, HQ*D] OutT.
//   fp32 softmax(q k^T * scale + mask) v; key j > query i masked when CAUSAL; a fully masked
//   row writes zeros. Requires D % 8 == 0, ROW_STRIDE and the offsets % 8 == 0, HQ % HKV == 0.
//   grid (HQ, ceil(S / 16)), block 128 (4 warps, one query at a time each), dynamic shared:
//   K and V (S rows of D+2 elements of T each), q tile (16 x D fp32), probabilities (4 x round_up(S,32)
//   fp32), key flags (round_up(S,32) int32). S=128,D=64: 40.5 KiB; D=128 needs the opt-in.
// =============================================================================================
constexpr int kAttentionQueryTile = 16;
constexpr int kAttentionWarps = 4;

SINTER_LP_FN uint32_t attention_prefill_shared_bytes(int S, int D, int elem_bytes = 2) {
  return uint32_t(2 * S * (D + 2) * elem_bytes + kAttentionQueryTile * D * 4 +
                  kAttentionWarps * round_up(S, 32) * 4 + round_up(S, 32) * 4);
}
SINTER_LP_FN bool attention_prefill_supported(int S, int HQ, int HKV, int D, int q_off, int k_off,
                                           int v_off, int row_stride, int elem_bytes = 2,
                                           SharedMemoryLimits smem = kTargetSharedMemory) {
  return S >= 1 && HQ >= 1 && HKV >= 1 && HQ % HKV == 0 && D >= 8 && D % 8 == 0 &&
         row_stride % 8 == 0 && q_off % 8 == 0 && k_off % 8 == 0 && v_off % 8 == 0 &&
         q_off >= 0 && k_off >= 0 && v_off >= 0 && q_off + HQ * D <= row_stride &&
         k_off + HKV * D <= row_stride && v_off + HKV * D <= row_stride &&
         (elem_bytes == 2 || elem_bytes == 4) &&
         attention_prefill_shared_bytes(S, D, elem_bytes) <= smem.per_block;
}
SINTER_LP_FN LaunchParams attention_prefill_launch(int S, int HQ, int D, int elem_bytes = 2) {
  return {{uint32_t(HQ), uint32_t(ceil_div(S, kAttentionQueryTile)), 1u},
          {uint32_t(kAttentionWarps * 32), 1u, 1u},
          attention_prefill_shared_bytes(S, D, elem_bytes)};
}

// =============================================================================================
// flash_attention<S, HQ, HKV, D, Q_OFF, K_OFF, V_OFF, ROW_STRIDE, SCALE_BITS, CAUSAL,
//                 PADDING_MASK, T, OutT, ROW_TILES, KEY_TILE, MIN_BLOCKS_PER_SM,
//                 SOFTCAP_BITS = 0>
//                (const T *qkv, const int64_t *attention_mask, OutT *out)
//   attention_prefill's semantics and layouts for prompts of any length, with a batch: T is
//   bf16 or half (OutT T or float); qkv [B * S, ROW_STRIDE], attention_mask [B * S] int64
//   (nullptr when !PADDING_MASK), out [B * S, HQ * D]. q k^T and p v on tensor cores
//   (mma.m16n8k16, fp32 accumulation, p rounded to T), online softmax in fp32 over tiles of
//   KEY_TILE keys. Requires D % 16 == 0, 16 <= D <= 256, ROW_STRIDE and the offsets % 8 == 0,
//   HQ % HKV == 0. ROW_TILES, KEY_TILE and MIN_BLOCKS_PER_SM are a FlashAttentionTiling
//   (defaults: flash_attention_default_tiling(S, D); the compiler uses the defaults).
//   SOFTCAP_BITS != 0 (cap = bit_cast<float>(SOFTCAP_BITS) > 0, finite): each scaled score
//   s = q . k * scale becomes cap * tanh(s / cap) (fp32 tanhf) before the masks (Gemma 2).
//   grid (ceil(S / flash_attention_query_tile(tiling)), HQ, B), block 128 (4 warps, each with
//   ROW_TILES tiles of 16 queries), dynamic shared flash_attention_shared_bytes(tiling, D): the
//   q tile and two stages of K and V tiles, rows padded to D + 8 elements (ldmatrix rows on
//   distinct banks), and two stages of key flags (the int64 attention_mask entries).
// =============================================================================================
constexpr int kFlashAttentionWarps = 4;

// How flash_attention divides a head's work: 16-query tiles per warp, keys per shared-memory
// stage, and the blocks per SM the registers are budgeted for (__launch_bounds__; 0 leaves it
// to ptxas, which then takes fewer registers than with 1). The kernel's last template
// parameters; flash_attention_default_tiling picks them from S and D.
struct FlashAttentionTiling {
  int row_tiles;
  int key_tile;
  int min_blocks_per_sm;
};
// Two 16-query tiles a warp once the prompt gives enough blocks anyway (512 tokens and more
// at D 64, 2048 at D 128): each K and V fragment read from shared memory then feeds two MMAs
// instead of one. Longer key tiles where the registers allow: fewer barriers and running-max
// updates a key. Chosen from flash_attention_bench's tilings on the H200 (RESULTS.md).
SINTER_LP_FN FlashAttentionTiling flash_attention_default_tiling(int S, int D) {
  if (D <= 64 && S >= 512)
    return {2, S >= 1024 ? 128 : 64, 0};
  if (D <= 128 && S >= 2048)
    return {2, 32, 0};
  return {1, D > 128 ? 32 : 64, 0};
}
SINTER_LP_FN int flash_attention_query_tile(FlashAttentionTiling tiling) {
  return 16 * kFlashAttentionWarps * tiling.row_tiles;
}
SINTER_LP_FN uint32_t flash_attention_shared_bytes(FlashAttentionTiling tiling, int D) {
  return uint32_t((flash_attention_query_tile(tiling) + 4 * tiling.key_tile) * (D + 8) * 2 +
                  2 * tiling.key_tile * 8);
}
// Whether flash_attention tiles a head of D elements of elem_bytes each.
SINTER_LP_FN bool flash_attention_tiles_head(int D, int elem_bytes) {
  return elem_bytes == 2 && D >= 16 && D <= 256 && D % 16 == 0;
}
SINTER_LP_FN bool flash_attention_supported(int S, int HQ, int HKV, int D, int q_off, int k_off,
                                         int v_off, int row_stride, int elem_bytes = 2,
                                         int batch = 1,
                                         SharedMemoryLimits smem = kTargetSharedMemory) {
  return S >= 1 && batch >= 1 && batch <= kMaxGridYZ && HQ >= 1 && HQ <= kMaxGridYZ && HKV >= 1 &&
         HQ % HKV == 0 && flash_attention_tiles_head(D, elem_bytes) && row_stride % 8 == 0 &&
         q_off % 8 == 0 && k_off % 8 == 0 && v_off % 8 == 0 && q_off >= 0 && k_off >= 0 &&
         v_off >= 0 && q_off + HQ * D <= row_stride && k_off + HKV * D <= row_stride &&
         v_off + HKV * D <= row_stride &&
         flash_attention_shared_bytes(flash_attention_default_tiling(S, D), D) <= smem.per_block;
}
SINTER_LP_FN LaunchParams flash_attention_launch(int S, int HQ, int D, int batch,
                                               FlashAttentionTiling tiling) {
  return {{uint32_t(ceil_div(S, flash_attention_query_tile(tiling))), uint32_t(HQ),
           uint32_t(batch)},
          {uint32_t(kFlashAttentionWarps * 32), 1u, 1u},
          flash_attention_shared_bytes(tiling, D)};
}
SINTER_LP_FN LaunchParams flash_attention_launch(int S, int HQ, int D, int batch = 1) {
  return flash_attention_launch(S, HQ, D, batch, flash_attention_default_tiling(S, D));
}

// =============================================================================================
// qk_norm_rope<M, ROW_STRIDE, Q_COLS, K_COLS, HEAD_DIM, Q_SPAN, K_SPAN, ROPE, EPS_BITS
//              [, WT = bf16, TableT = bf16]>
//   (const WT *q_weight, const WT *k_weight, const TableT *cos, const TableT *sin, bf16 *qkv)
//   The q and k heads of a fused QKV activation qkv [M, ROW_STRIDE] (q in columns
//   [0, Q_COLS), k in [Q_COLS, Q_COLS + K_COLS), heads of HEAD_DIM), normalized and rotated in
//   place: q and k each split into spans of Q_SPAN / K_SPAN columns (HEAD_DIM: a norm per head,
//   as Qwen3's q_norm / k_norm; Q_COLS / K_COLS: one over the whole projection), each span
//   normalized as rms_norm does with the weight q_weight [Q_SPAN] / k_weight [K_SPAN] (WT float:
//   scaled in fp32, one rounding), then with ROPE rotated as rope_rows does with cos, sin
//   [M, HEAD_DIM] (bf16 or float; null without ROPE).
//   grid (M, Q_COLS / Q_SPAN + K_COLS / K_SPAN): one block per row and span; block
//   qk_norm_rope_threads(max span), static shared memory: the span's normalized values.
// =============================================================================================
constexpr int kQkNormMaxSpan = 8192; // bf16 columns of one span (16 KiB of shared memory)
SINTER_LP_FN bool qk_norm_rope_supported(int M, int row_stride, int q_cols, int k_cols,
                                         int head_dim, int q_span, int k_span) {
  auto span_ok = [&](int cols, int span) {
    return span >= head_dim && span % head_dim == 0 && cols % span == 0 && span % 8 == 0 &&
           span <= kQkNormMaxSpan;
  };
  return M >= 1 && head_dim >= 2 && head_dim % 2 == 0 && q_cols >= head_dim &&
         k_cols >= head_dim && q_cols % head_dim == 0 && k_cols % head_dim == 0 &&
         q_cols + k_cols <= row_stride && row_stride % 8 == 0 && q_cols % 8 == 0 &&
         span_ok(q_cols, q_span) && span_ok(k_cols, k_span) &&
         q_cols / q_span + k_cols / k_span <= kMaxGridYZ;
}
SINTER_LP_FN int qk_norm_rope_threads(int max_span) { return min_int(256, round_up(max_span / 8, 32)); }
SINTER_LP_FN LaunchParams qk_norm_rope_launch(int M, int q_cols, int k_cols, int q_span,
                                              int k_span) {
  return {{uint32_t(M), uint32_t(q_cols / q_span + k_cols / k_span), 1u},
          {uint32_t(qk_norm_rope_threads(max_int(q_span, k_span))), 1u, 1u},
          0u};
}

// =============================================================================================
// rope_rows<M, ROW_STRIDE, ROPE_COLS, HEAD_DIM[, ROTARY_DIM = 0]>(const bf16 *cos,
//   const bf16 *sin, bf16 *qkv)
//   cos, sin [M, R] (row m for token m; R = ROTARY_DIM, 0: HEAD_DIM); qkv [M, ROW_STRIDE],
//   rotated in place on its first ROPE_COLS columns (heads of HEAD_DIM, the first R columns of
//   each). grid (M), block min(256, round_up(ROPE_COLS/2, 32)), no shared memory.
// =============================================================================================
SINTER_LP_FN bool rope_rows_supported(int M, int row_stride, int rope_cols, int head_dim) {
  return M >= 1 && head_dim >= 2 && head_dim % 2 == 0 && rope_cols >= head_dim &&
         rope_cols % head_dim == 0 && rope_cols <= row_stride;
}
SINTER_LP_FN int rope_rows_threads(int rope_cols) { return min_int(256, round_up(rope_cols / 2, 32)); }
SINTER_LP_FN LaunchParams rope_rows_launch(int M, int rope_cols) {
  return {{uint32_t(M), 1u, 1u}, {uint32_t(rope_rows_threads(rope_cols)), 1u, 1u}, 0u};
}

// =============================================================================================
// gate_mul<M, N, ACT>(const bf16 *gate_up, bf16 *out)
//   gate_up [M, 2N] (gate columns first), out [M, N] = bf16(bf16(act(gate)) * up) with act
//   silu (SwiGLU) or gelu_tanh (GeGLU). Requires N % 8 == 0. grid (ceil(M * N / 8 / 256)),
//   block 256, no shared memory.
// =============================================================================================
enum class GateActivation : int { SILU = 0, GELU_TANH = 1 };
constexpr const char *kGateActivationNames[] = {"sinter::kernels::GateActivation::SILU",
                                                "sinter::kernels::GateActivation::GELU_TANH"};
constexpr int kGateMulThreads = 256;
SINTER_LP_FN bool gate_mul_supported(int M, int N) { return M >= 1 && N >= 8 && N % 8 == 0; }
SINTER_LP_FN LaunchParams gate_mul_launch(int M, int N) {
  return {{uint32_t(ceil_div(M * (N / 8), kGateMulThreads)), 1u, 1u},
          {uint32_t(kGateMulThreads), 1u, 1u}, 0u};
}

// =============================================================================================
// attention_decode<HQ, HKV, D, Q_OFF, K_OFF, V_OFF, ROW_STRIDE, MAX_LEN, SPLIT, SCALE_BITS,
//                  KEY_MASK, BATCH[, QK_NORM = false, NormT = bf16, TableT = bf16,
//                  NORM_EPS_BITS = 0, SOFTCAP_BITS = 0]>(
//     const bf16 *qkv, const int64_t *position, bf16 *k_cache, bf16 *v_cache, bf16 *out,
//     float *partials, uint32_t *counters, const int64_t *key_mask, const NormT *q_norm,
//     const NormT *k_norm, const TableT *cos, const TableT *sin)
//   One decode step (batch 1) with a KV cache. qkv [1, ROW_STRIDE] bf16: q head h (rotated) at
//   columns Q_OFF + h*D, the NEW key / value of kv head g (key rotated) at K_OFF + g*D /
//   V_OFF + g*D; q head h uses kv head h / GROUP, GROUP = HQ / HKV. position [1] int64: p, this
//   token's cache slot. k_cache, v_cache [HKV, MAX_LEN, D] bf16 (persistent, updated in place).
//   out [1, HQ*D] bf16. partials: attention_decode_partials_floats(...) fp32 scratch; counters:
//   attention_decode_counter_words(...) uint32 scratch that must be zero before the first
//   launch and is zero again after every launch (both may be nullptr when NSPLIT == 1; the
//   same buffers may be shared by every layer's launch on one stream, never by concurrent
//   launches).
//   When 0 <= p < MAX_LEN: k_cache[g, p, :] / v_cache[g, p, :] = the new key / value (one block
//   writes each row) and out[h] = softmax_j(q_h . K[g, j] * scale) V[g, j] over j in [0, p],
//   row p taken from qkv (not from the cache), rows < p from the cache; fp32 scores, softmax
//   and accumulation, bf16 output; scale = bit_cast<float>(SCALE_BITS). Slots > p are never
//   used. Otherwise out = 0 and no cache row is written.
//   KEY_MASK (key_mask [MAX_LEN] int64, nullptr without): the sum runs over the keys j of the
//   whole cache with key_mask[j] != 0 instead of [0, p] (row p still from qkv, every other row
//   from the cache); with every key masked out = 0. Every split is active (NACT = NSPLIT); the
//   mask is read after griddepcontrol.wait only.
//   BATCH sequences at the one position p: qkv [BATCH, ROW_STRIDE], caches [BATCH, HKV,
//   MAX_LEN, D], out [BATCH, HQ*D], key_mask [BATCH, MAX_LEN]; grid z = BATCH, block (g, s, b)
//   works on sequence b alone (partials and counters: BATCH times the sizes below, sequence b's
//   at b times them; attention_decode_partials_floats / _counter_words take the batch).
//   The tensor-core path reads its first 128 cache rows of the split before
//   griddepcontrol.wait, so no launch that may still run under PDL may write k_cache or
//   v_cache (in a compiled model only this launch writes its layer's cache, and each call's
//   first launch waits for the previous call).
//   Split-KV: grid (HKV, NSPLIT), NSPLIT = ceil(MAX_LEN / SPLIT); block (g, s) takes the GROUP
//   query heads of kv head g over keys [s*SPLIT, min((s+1)*SPLIT, p+1)) (KEY_MASK:
//   min((s+1)*SPLIT, MAX_LEN)); without KEY_MASK blocks with s*SPLIT > p return at once. With
//   NACT = p / SPLIT + 1 active splits > 1, each active block writes its partial record and
//   the last to arrive (atomicAdd on counters[g]) merges them (log-sum-exp) into out and
//   resets counters[g] to 0; with NACT == 1 (always when NSPLIT == 1) block 0 writes out
//   directly and partials/counters are not touched.
//   partials layout: [HKV][NSPLIT][GROUP][D + 2] fp32: acc[0..D) = sum_j 2^(t_j - m) v_j,
//   [D] = m = max_j t_j, [D+1] = l = sum_j 2^(t_j - m), with t_j = score_j * log2(e).
//   attention_decode_clustered (attention_decode_clustered.cuh; needs
//   attention_decode_cluster_fits(MAX_LEN, SPLIT), 2 to 8 splits; the compiler's choice when
//   attention_decode_cluster_merge(...)): the same parameters,
//   arguments, grid and results; the NSPLIT blocks of (g, b) form one thread-block cluster
//   (compile-time cluster dims (1, NSPLIT, 1), sm_90) and exchange the same records through
//   distributed shared memory behind cluster barriers; inactive splits (s*SPLIT > p) take
//   part in the barriers and the merge. partials and counters are not used (nullptr).
//   block 128 threads (4 warps). With attention_decode_tensor_cores(D, GROUP) (D % 32 == 0 and
//   the staged V fits) q K^T and P V run as bf16 MMAs with fp32 accumulation (P as bf16 hi +
//   lo parts), each warp taking 32 keys a round with its own online softmax; otherwise lanes
//   are grouped in runs of LPK = next_pow2(D/8) lanes per key (one 16-byte K/V vector each)
//   and every thread keeps an online softmax over its keys.
//   QK_NORM (q_norm, k_norm [D] NormT = bf16 or float; cos, sin [BATCH, D] TableT = bf16 or
//   float, sequence b's row at b * D; all nullptr without): the q heads and the new key in qkv
//   are raw; each is first RMS-normalized over its D columns with its weight and epsilon
//   bit_cast<float>(NORM_EPS_BITS), rounded as qk_norm_rope rounds, then rotated as rope_rows
//   does (column i < D/2 with i + D/2): Qwen3's q_norm / k_norm and RoPE in the attention
//   instead of a qk_norm_rope launch before it. Cache row p gets the normalized, rotated key.
//   SOFTCAP_BITS != 0 (cap = bit_cast<float>(SOFTCAP_BITS) > 0, finite): each scaled score
//   s = q_h . K[g, j] * scale becomes cap * tanh(s / cap) (fp32 tanhf) before the softmax and
//   the key mask (Gemma 2's attention soft-capping).
//   Static shared memory only (<= 48 KiB): no dynamic shared bytes.
//   H200, Llama 3.2 1B shapes, p = MAX_LEN-1, back-to-back launches in a CUDA graph (an empty
//   kernel: 0.55 us), tensor-core path: MAX_LEN 128 ~2.9 us, 1024 ~4.1 us (clustered; 4.6
//   merged through global memory), 4096 ~6.5 us per launch (scalar path: 4.3, 6.2, 8.5).
//   Requires D % 8 == 0, 8 <= D <= 256, HQ % HKV == 0, GROUP <= 8, 8-aligned offsets and
//   stride, heads inside the row, MAX_LEN >= 1, 1 <= SPLIT, NSPLIT <= 256.
// =============================================================================================
// 256 or 512 threads, or 32- and 64-key splits, measured slower in the decode chain on the
// H200 (RESULTS.md, sixth session): the key loop's time does not shrink with the work per
// thread.
constexpr int kAttentionDecodeThreads = 128;
constexpr int kAttentionDecodeMaxSplits = 256;

SINTER_LP_FN int attention_decode_num_splits(int max_len, int split) {
  return ceil_div(max_len, split);
}
// Whether attention_decode multiplies on tensor cores (q K^T and P V as bf16 MMAs with fp32
// accumulation, P as bf16 hi + lo parts): whole 32-element k chunks per lane and the staged V
// (4 warps x 32 keys x (D + 8) bf16) beside the warp merge's buffers inside 48 KiB of static
// shared memory. Otherwise every lane keeps its own fp32 online softmax over whole K/V
// vectors (the scalar path). SINTER_ATTENTION_DECODE_TENSOR_CORES=0 keeps the scalar path
// everywhere (experiments only: the compiler and the generated code must agree).
#ifndef SINTER_ATTENTION_DECODE_TENSOR_CORES
#define SINTER_ATTENTION_DECODE_TENSOR_CORES 1
#endif
// The tensor-core path issues its first round's K and V loads before griddepcontrol.wait
// (SINTER_ATTENTION_DECODE_PRELOAD=0: after the position is read; experiments only).
#ifndef SINTER_ATTENTION_DECODE_PRELOAD
#define SINTER_ATTENTION_DECODE_PRELOAD 1
#endif
SINTER_LP_FN bool attention_decode_tensor_cores(int D, int GROUP, bool qk_norm = false) {
  constexpr int warps = kAttentionDecodeThreads / 32;
  return SINTER_ATTENTION_DECODE_TENSOR_CORES && D % 32 == 0 &&
         warps * 32 * (D + 8) * 2 + warps * GROUP * (D + 2) * 4 + 64 +
                 (qk_norm ? (GROUP + 1) * D * 2 + 64 : 0) <=
             48 * 1024;
}
SINTER_LP_FN bool attention_decode_supported(int HQ, int HKV, int D, int q_off, int k_off,
                                             int v_off, int row_stride, int max_len, int split,
                                             int batch = 1) {
  return batch >= 1 && batch <= kMaxGridYZ && HQ >= 1 && HKV >= 1 && HQ % HKV == 0 &&
         HQ / HKV <= 8 && D >= 8 && D <= 256 && D % 8 == 0 && row_stride % 8 == 0 &&
         q_off % 8 == 0 && k_off % 8 == 0 && v_off % 8 == 0 && q_off >= 0 && k_off >= 0 &&
         v_off >= 0 && q_off + HQ * D <= row_stride && k_off + HKV * D <= row_stride &&
         v_off + HKV * D <= row_stride && max_len >= 1 && split >= 1 &&
         attention_decode_num_splits(max_len, split) <= kAttentionDecodeMaxSplits;
}
// The scalar path's lanes per key (one 16-byte chunk of the row each, a power of two) and
// passes in flight (register budget: 8 fp32 accumulators per head and pass).
SINTER_LP_FN int attention_decode_lanes_per_key(int D) {
  int lanes = 1;
  while (lanes < D / 8) lanes *= 2;
  return lanes;
}
SINTER_LP_FN int attention_decode_passes(int GROUP) { return GROUP > 4 ? 2 : 8; }
// Keys one block covers with one round trip of its loads: the tensor-core path's 4 warps of
// 32 keys; the scalar path's key slots times its passes (32 at D 256: a 128-key split there
// took four dependent round trips, results/attention_decode_s33.log).
SINTER_LP_FN int attention_decode_round_keys(int D, int GROUP, bool qk_norm = false) {
  return attention_decode_tensor_cores(D, GROUP, qk_norm)
             ? kAttentionDecodeThreads
             : kAttentionDecodeThreads / attention_decode_lanes_per_key(D) *
                   attention_decode_passes(GROUP);
}
// Whether a launch of NSPLIT splits may merge inside thread-block clusters
// (attention_decode_clustered: one cluster of the NSPLIT blocks of a kv head and sequence,
// cluster dims (1, NSPLIT, 1), sm_90): 2 to kAttentionDecodeMaxClusterSplits (the portable
// cluster size) splits. SINTER_ATTENTION_DECODE_CLUSTER=0: never (experiments only).
#ifndef SINTER_ATTENTION_DECODE_CLUSTER
#define SINTER_ATTENTION_DECODE_CLUSTER 1
#endif
constexpr int kAttentionDecodeMaxClusterSplits = 8;
SINTER_LP_FN bool attention_decode_cluster_fits(int max_len, int split) {
  const int splits = attention_decode_num_splits(max_len, split);
  return SINTER_ATTENTION_DECODE_CLUSTER && splits > 1 &&
         splits <= kAttentionDecodeMaxClusterSplits;
}
// Whether the compiler takes attention_decode_clustered: the records then go through
// distributed shared memory behind two cluster barriers instead of to `partials`, a fence, an
// atomic arrival and a read back by the last block. Only while the grid fits in one wave:
// with more blocks than SMs the clusters wait for whole free groups of SMs (Llama 3.2 1B at
// 1024 slots, H200: batch 1, 64 blocks, 4.61 -> 4.07 us; batch 8, 512 blocks, 11.06 -> 11.92
// and 8.36 -> 11.49 with a key mask, results/attention_decode_s34.log).
SINTER_LP_FN bool attention_decode_cluster_merge(int HKV, int max_len, int split, int batch,
                                                 int num_sms) {
  return attention_decode_cluster_fits(max_len, split) &&
         HKV * attention_decode_num_splits(max_len, split) * batch <= num_sms;
}
// SPLIT for a cache of max_len slots: enough blocks (HKV * NSPLIT) to fill the SMs for long
// caches, at least one round trip's keys per split (attention_decode_round_keys, rounded up to
// a multiple of 32), at most kAttentionDecodeMaxSplits splits; max_len itself (NSPLIT = 1)
// when one split covers it.
SINTER_LP_FN int attention_decode_split(int max_len, int HQ, int HKV, int D, int num_sms,
                                        bool qk_norm = false) {
  const int target = max_int(1, max_int(1, num_sms) / max_int(1, HKV));
  const int round_keys =
      round_up(attention_decode_round_keys(D, HQ / max_int(1, HKV), qk_norm), 32);
  int split = max_int(round_keys, round_up(ceil_div(max_len, target), 32));
  split = max_int(split, round_up(ceil_div(max_len, kAttentionDecodeMaxSplits), 32));
  return split >= max_len ? max_len : split;
}
// Rows of its split a block asks the L2 for before griddepcontrol.wait: all of them while the
// launch's blocks together hint at most half the L2 (the QKV projection streams its weights
// through the other half); past that the hinted lines would evict each other before the loads
// after the wait reach them, and the cache would be read from memory twice.
SINTER_LP_FN int attention_decode_prefetch_rows(int HKV, int D, int max_len, int split,
                                                int batch = 1,
                                                uint64_t l2_bytes = kTargetL2Bytes) {
  const uint64_t bytes_per_row = uint64_t(batch) * HKV *
                                 attention_decode_num_splits(max_len, split) *
                                 2 * uint64_t(D) * 2; // K and V rows of bf16, every block
  const uint64_t rows = l2_bytes / 2 / bytes_per_row;
  return rows < uint64_t(split) ? int(rows) : split;
}
// fp32 elements of `partials` for the merge through global memory (0 when NSPLIT == 1; the
// clustered kernel takes none: pass nullptr).
SINTER_LP_FN int attention_decode_partials_floats(int HQ, int HKV, int D, int max_len,
                                                  int split, int batch = 1) {
  return attention_decode_num_splits(max_len, split) == 1
             ? 0
             : batch * HKV * attention_decode_num_splits(max_len, split) * (HQ / HKV) * (D + 2);
}
// uint32 elements of `counters` (likewise).
SINTER_LP_FN int attention_decode_counter_words(int HKV, int max_len, int split,
                                                int batch = 1) {
  return attention_decode_num_splits(max_len, split) == 1 ? 0 : batch * HKV;
}
SINTER_LP_FN LaunchParams attention_decode_launch(int HKV, int max_len, int split,
                                                  int batch = 1) {
  return {{uint32_t(HKV), uint32_t(attention_decode_num_splits(max_len, split)), uint32_t(batch)},
          {uint32_t(kAttentionDecodeThreads), 1u, 1u},
          0u};
}

// =============================================================================================
// kv_cache_write<N, HKV, D, K_OFF, V_OFF, ROW_STRIDE, MAX_LEN, BATCH>(const bf16 *qkv,
//     const int64_t *positions, bf16 *k_cache, bf16 *v_cache)
//   qkv [N, ROW_STRIDE] bf16 (token n's new key / value of kv head g, key already rotated, at
//   columns K_OFF + g*D / V_OFF + g*D); positions [N] int64; k_cache, v_cache [HKV, MAX_LEN, D].
//   k_cache[g, positions[n], :] = key and v_cache likewise, for every n and g; a position
//   outside [0, MAX_LEN) is skipped (two tokens with the same position: either one wins).
//   BATCH sequences written at the same positions: qkv [BATCH, N, ROW_STRIDE], caches [BATCH,
//   HKV, MAX_LEN, D], sequence b's rows into its own caches.
//   One thread per (b, n, g, 16-byte vector), copying the K and the V vector: the launch of
//   BATCH * N tokens, kv_cache_write_launch(BATCH * N, HKV, D): grid (ceil(BATCH*N*HKV*D/8 /
//   block)), block min(256, round_up(BATCH*N*HKV*D/8, 32)), no shared memory.
//   Requires D % 8 == 0, 8-aligned offsets and stride, heads inside the row, MAX_LEN >= 1.
// =============================================================================================
SINTER_LP_FN bool kv_cache_write_supported(int N, int HKV, int D, int k_off, int v_off,
                                           int row_stride, int max_len) {
  return N >= 1 && HKV >= 1 && D >= 8 && D % 8 == 0 && row_stride % 8 == 0 && k_off % 8 == 0 &&
         v_off % 8 == 0 && k_off >= 0 && v_off >= 0 && k_off + HKV * D <= row_stride &&
         v_off + HKV * D <= row_stride && max_len >= 1;
}
SINTER_LP_FN int kv_cache_write_vectors(int N, int HKV, int D) { return N * HKV * (D / 8); }
SINTER_LP_FN int kv_cache_write_threads(int N, int HKV, int D) {
  return min_int(256, round_up(kv_cache_write_vectors(N, HKV, D), 32));
}
SINTER_LP_FN LaunchParams kv_cache_write_launch(int N, int HKV, int D) {
  return {{uint32_t(ceil_div(kv_cache_write_vectors(N, HKV, D), kv_cache_write_threads(N, HKV, D))),
           1u, 1u},
          {uint32_t(kv_cache_write_threads(N, HKV, D)), 1u, 1u},
          0u};
}

// =============================================================================================
// cache_rows_write<OUTER, ROWS, INNER, MAX_LEN, T>(const T *rows, const int64_t *positions,
//     T *cache)
//   rows [OUTER, ROWS, INNER]; positions [ROWS] int64; cache [OUTER, MAX_LEN, INNER]; T any
//   element type. cache[o, positions[r], i] = rows[o, r, i] for every o, r, i: a cache write
//   along one axis, OUTER the product of the dimensions before it and INNER of those after it.
//   A position outside [0, MAX_LEN) is skipped (two rows with the same position: either wins).
//   One thread per row element; grid (ceil(OUTER*ROWS*INNER / block)), block
//   min(256, round_up(OUTER*ROWS*INNER, 32)), no shared memory.
//   Requires positive extents and OUTER*ROWS*INNER < 2^30.
// =============================================================================================
SINTER_LP_FN bool cache_rows_write_supported(int64_t outer, int64_t rows, int64_t inner,
                                             int64_t max_len) {
  return outer >= 1 && rows >= 1 && inner >= 1 && max_len >= 1 &&
         outer * rows * inner < (int64_t(1) << 30);
}
SINTER_LP_FN int cache_rows_write_threads(int outer, int rows, int inner) {
  return min_int(256, round_up(outer * rows * inner, 32));
}
SINTER_LP_FN LaunchParams cache_rows_write_launch(int outer, int rows, int inner) {
  return {{uint32_t(ceil_div(outer * rows * inner, cache_rows_write_threads(outer, rows, inner))),
           1u, 1u},
          {uint32_t(cache_rows_write_threads(outer, rows, inner)), 1u, 1u},
          0u};
}


// =============================================================================================
// sample_tokens<BATCH, ROWS, VOCAB, IDS_LEN, T>(const T *logits, const int64_t *input_ids,
//     SamplingState *sampling, uint32_t *seen, int64_t *next_token)
//   logits [BATCH, ROWS, VOCAB] (T float, __half or bf16); input_ids [BATCH, IDS_LEN] int64;
//   sampling: the ".sampling" state region (one SamplingState, written by
//   sinter_context_set_sampling; all zero = greedy); seen [BATCH, sample_tokens_seen_words]
//   bits, the ".sampling.seen" state region; next_token [BATCH] int64.
//   For each sequence b: marks input_ids[b, :] in seen[b] (ids outside [0, VOCAB) ignored),
//   then picks next_token[b] from logits[b, ROWS - 1, :] after the repetition penalty (on the
//   tokens marked in seen[b]): the argmax (first among equal maxima, NaN largest) when
//   temperature <= 0, else a draw from softmax(logits / temperature) restricted to the top_k
//   largest (0: all) and then to the smallest set of largest whose mass reaches top_p (0 or 1:
//   all), ties at either threshold kept. The draw depends only on the row and on (seed, step,
//   b), so it is reproducible; step moves on by 1 per launch (the last sequence to finish
//   moves it).
//   One cluster of kSampleTokensCluster blocks per sequence (grid [cluster, BATCH]), each
//   holding a slice of the row in shared memory, kSampleTokensThreads threads per block;
//   dynamic shared memory sample_tokens_shared_bytes(VOCAB).
// =============================================================================================
struct SamplingState {
  float temperature;
  int32_t top_k;
  float top_p;
  float repetition_penalty;
  uint64_t seed;
  uint64_t step;          // runs since the parameters were set
  uint32_t blocks_done;   // sequences of the current run that finished (the last one resets it)
  uint32_t reserved;
};
static_assert(sizeof(SamplingState) == 40, "SamplingState is the .sampling state region");
// The state regions' names: the compiler creates them, sinter_context_set_sampling finds the
// parameters' region by name.
constexpr const char *kSamplingStateRegion = ".sampling";
constexpr const char *kSamplingSeenRegion = ".sampling.seen";
constexpr int kSampleTokensThreads = 512;
// Blocks per sequence. Above 8 the cluster size is not portable: a launch must allow it with
// cudaFuncAttributeNonPortableClusterSizeAllowed (sm_90 allows 16).
#ifndef SINTER_SAMPLE_TOKENS_CLUSTER
#define SINTER_SAMPLE_TOKENS_CLUSTER 8
#endif
constexpr int kSampleTokensCluster = SINTER_SAMPLE_TOKENS_CLUSTER;
constexpr int kSampleTokensBins = 2048; // histogram bins (and radix digits of 11 bits)
SINTER_LP_FN int64_t sample_tokens_seen_words(int64_t vocab) { return (vocab + 31) / 32; }
// Tokens per block: a multiple of 8, so that each slice starts 16-byte aligned.
SINTER_LP_FN int64_t sample_tokens_slice(int64_t vocab) {
  return (vocab + 8 * kSampleTokensCluster - 1) / (8 * kSampleTokensCluster) * 8;
}
// The slice as fp32, and three 64-bit histograms (two local, one merged).
SINTER_LP_FN int64_t sample_tokens_shared_bytes(int64_t vocab) {
  return sample_tokens_slice(vocab) * 4 + 3 * kSampleTokensBins * 8;
}
SINTER_LP_FN bool sample_tokens_supported(int64_t batch, int64_t rows, int64_t vocab,
                                          int64_t ids_len,
                                          SharedMemoryLimits smem = kTargetSharedMemory) {
  return batch >= 1 && batch <= kMaxGridYZ && rows >= 1 && vocab >= 2 && vocab < (int64_t(1) << 30) &&
         ids_len >= 1 && batch * rows * vocab < (int64_t(1) << 62) &&
         sample_tokens_shared_bytes(vocab) <= int64_t(smem.per_block);
}
SINTER_LP_FN LaunchParams sample_tokens_launch(int batch, int64_t vocab) {
  return {{uint32_t(kSampleTokensCluster), uint32_t(batch), 1u},
          {uint32_t(kSampleTokensThreads), 1u, 1u},
          uint32_t(sample_tokens_shared_bytes(vocab))};
}

} // namespace sinter::kernels

#endif // SINTER_KERNELS_LAUNCH_PARAMS_H
