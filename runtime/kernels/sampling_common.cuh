// The sampler's building blocks (sample_tokens.cuh): the order-preserving keys, the distance
// bins and fixed-point weights of the logits, the random streams, and the reductions over a
// block and a cluster with the per-block exchange they share.
#pragma once

#include "kernel_common.cuh"

#include <cooperative_groups.h>
#include <cuda_fp16.h>

namespace sinter::kernels {
namespace sampling {

namespace cg = cooperative_groups;

constexpr int kThreads = kSampleTokensThreads;
constexpr int kWarps = kThreads / 32;
constexpr int kCluster = kSampleTokensCluster;
constexpr int kBins = kSampleTokensBins;
static_assert(kWarps <= 32 && kCluster <= 32, "block and cluster reductions finish in one warp");
static_assert(kBins % kThreads == 0, "each thread scans whole bins");
// Weights are fixed point with the largest logit at 2^31; a logit more than kMassRange below
// it weighs 0 (e^-22 < 2^-31), so the distance bins need not reach further.
constexpr float kMassScale = 2147483648.f;
constexpr float kMassRange = 22.f;
// Tokens of the chosen bin that every block gathers: a list of (key, token) pairs fits one
// histogram's space.
constexpr int kCandidates = kBins;
static_assert(kCandidates * 8 <= kBins * 8, "a list of (key, token) fits a histogram buffer");
// Tokens drawn from the whole row for a top-p draw by rejection (draw_nucleus_by_probes): all
// of them fall outside the nucleus with probability (1 - its mass)^kProbes, 1e-4 at top_p 0.9.
constexpr int kProbes = 4;
// Radix digits for a bin with more candidates, from the most significant: 11 + 11 + 10 bits.
constexpr int kRadixPasses = 3;
__device__ constexpr int kDigitShift[kRadixPasses] = {21, 10, 0};
__device__ constexpr uint32_t kDigitMask[kRadixPasses] = {0x7ffu, 0x7ffu, 0x3ffu};
static_assert(kBins >= 2048, "an 11-bit digit has a bin");

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(bf16 v) { return __bfloat162float(v); }

// Larger float, larger key; NaN below -inf (never kept, never drawn).
__device__ __forceinline__ uint32_t order_key(float x) {
  if (x != x) return 0u;
  const uint32_t bits = __float_as_uint(x);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

// The float whose order_key is `key` (a key of a non-NaN float).
__device__ __forceinline__ float value_of_key(uint32_t key) {
  return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

// How far v lies below the row's largest logit; 0 for the largest itself (also when it is
// +inf, where the difference would be NaN). __fsub_rn/__fmul_rn are never contracted, so every
// pass computes the same bin for the same token.
__device__ __forceinline__ float distance(float v, float max_value) {
  return v == max_value ? 0.f : __fsub_rn(max_value, v);
}
// Bin 0 holds the largest logits; a larger logit never lands in a later bin. The bins span
// the row's own range of logits (bins_per_logit, the same in every block), up to kMassRange,
// so that a row of close logits still spreads over them. Rounded by the float adder (adding
// 2^23 leaves the integer in the low mantissa bits): a conversion instruction per token cost
// more than the rest of the pass.
__device__ __forceinline__ int distance_bin(float v, float max_value, float bins_per_logit) {
  const float scaled = fminf(__fmul_rn(distance(v, max_value), bins_per_logit), float(kBins - 1));
  return int(__float_as_uint(__fadd_rn(scaled, 8388608.f)) - 0x4B000000u);
}
// (kBins - 1) bins per spread of the row, the spread capped at kMassRange.
__device__ __forceinline__ float bins_per_logit(float max_value, float min_finite) {
  const float spread = max_value - min_finite;
  return float(kBins - 1) / (spread > 0.f && spread < kMassRange ? spread : kMassRange);
}
__device__ __forceinline__ uint32_t mass_weight(float v, float max_value) {
  return __float2uint_rz(__expf(-distance(v, max_value)) * kMassScale);
}

// A histogram bin is a 64-bit word whose low and high halves count the low 16 and the high
// bits of the weights added to it: 32-bit shared-memory atomics are native, 64-bit ones are
// compare-and-swap loops. Neither half overflows: a block adds at most 45824 weights (the
// largest slice that fits shared memory) of under 2^16 to the low half and up to 2^15 to the
// high half.
__device__ __forceinline__ void hist_add(unsigned long long *hist, int bin, uint32_t weight) {
  uint32_t *halves = reinterpret_cast<uint32_t *>(hist + bin);
  atomicAdd(halves, weight & 0xffffu);
  if (weight >> 16) atomicAdd(halves + 1, weight >> 16);
}
__device__ __forceinline__ unsigned long long hist_value(unsigned long long word) {
  return ((word >> 32) << 16) + (word & 0xffffffffull);
}

// splitmix64's finalizer: every input bit flips about half the output bits.
__device__ __forceinline__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  return x ^ (x >> 16);
}
// A uniform draw in (0, 1) for `token` of one stream: 24 random bits.
__device__ __forceinline__ float uniform(uint64_t stream, uint32_t token) {
  const uint32_t h = hash32(hash32(token ^ uint32_t(stream)) + uint32_t(stream >> 32));
  return (float(h >> 8) + 0.5f) * (1.0f / 16777216.0f);
}
// The inner logarithm is the accurate one: u is often within 2^-24 of 1, where __logf's
// absolute error is larger than -log(u) itself.
__device__ __forceinline__ float gumbel(float u) { return -__logf(-logf(u)); }

// (a_val, a_idx) beats (b_val, b_idx): larger value, then smaller index; NaN counts as the
// largest value, as in torch.argmax.
__device__ __forceinline__ bool better(float a_val, int a_idx, float b_val, int b_idx) {
  const bool a_nan = a_val != a_val, b_nan = b_val != b_val;
  if (a_nan != b_nan) return a_nan;
  if (!a_nan && a_val != b_val) return a_val > b_val;
  return a_idx < b_idx;
}

struct Candidate {
  float value;
  int index;
};
__device__ constexpr Candidate kNoCandidate = {-INFINITY, 0x7fffffff};

__device__ __forceinline__ Candidate warp_best(Candidate c) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const Candidate o = {__shfl_xor_sync(~0u, c.value, offset), __shfl_xor_sync(~0u, c.index, offset)};
    if (better(o.value, o.index, c.value, c.index)) c = o;
  }
  return c;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(~0u, v, offset));
  return v;
}

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(~0u, v, offset);
  return v;
}

// The sum of `v` over this lane and the lanes before it.
__device__ __forceinline__ unsigned long long warp_inclusive_sum(unsigned long long v) {
  const int lane = threadIdx.x % 32;
  for (int offset = 1; offset < 32; offset *= 2) {
    const unsigned long long other = __shfl_up_sync(~0u, v, offset);
    if (lane >= offset) v += other;
  }
  return v;
}

// Per-block scalars: the block's own scratch, and what other blocks of the cluster read
// (max_value, segment_weight, candidates, block_weight).
struct Exchange {
  Candidate warp[kWarps];
  unsigned long long warp_weight[kWarps];
  uint32_t warp_key[kWarps];
  Candidate best;                    // greedy: this block's winner
  float max_value;                   // this block's largest logit
  float min_value;                   // and its smallest above -inf
  unsigned long long segment_weight; // this block's segment of the merged histogram
  int candidates;                    // tokens of the chosen bin in this block's slice
  unsigned long long block_weight;   // the kept tokens' weight in this block's slice
  int bin;                           // a crossing: the entry, -1 when nothing weighs anything
  unsigned long long remaining;      // and the weight still needed inside it
  uint32_t probe_key[kProbes];       // rank 0: the probes' keys and tokens
  int probe_token[kProbes];
  unsigned long long probe_above[kProbes]; // weight of this block's tokens above each probe
};

// The winner among every thread's candidate in the block, to every thread.
__device__ Candidate block_best(Candidate c, Exchange &x) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  c = warp_best(c);
  __syncthreads();
  if (lane == 0) x.warp[warp] = c;
  __syncthreads();
  return warp_best(lane < kWarps ? x.warp[lane] : kNoCandidate);
}

// The winner among every block's x.best, read through distributed shared memory by warp 0.
__device__ Candidate cluster_best(cg::cluster_group &cluster, Exchange &x) {
  Candidate c = kNoCandidate;
  if (threadIdx.x % 32 < kCluster) c = cluster.map_shared_rank(&x, threadIdx.x % 32)->best;
  return warp_best(c);
}

// The largest key in the block, to every thread.
__device__ uint32_t block_max_key(uint32_t key, Exchange &x) {
  key = __reduce_max_sync(~0u, key);
  __syncthreads();
  if (threadIdx.x % 32 == 0) x.warp_key[threadIdx.x / 32] = key;
  __syncthreads();
  return __reduce_max_sync(~0u, threadIdx.x % 32 < kWarps ? x.warp_key[threadIdx.x % 32] : 0u);
}

// The sum over the block (to every thread), and the sum over the warps before this thread's.
__device__ unsigned long long block_sum(unsigned long long v, Exchange &x,
                                        unsigned long long *before_warp = nullptr) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) x.warp_weight[warp] = v;
  __syncthreads();
  unsigned long long total = 0, before = 0;
  for (int w = 0; w < kWarps; ++w) {
    const unsigned long long s = x.warp_weight[w];
    if (w < warp) before += s;
    total += s;
  }
  if (before_warp) *before_warp = before;
  return total;
}

// A value every block of the cluster published in its Exchange (`member`), scanned over the
// blocks: in every lane, the sum over the blocks up to and including the lane's (lanes >=
// kCluster: the total), and the lane's block's own value.
__device__ __forceinline__ void scan_cluster(cg::cluster_group &cluster, Exchange &x,
                                             unsigned long long Exchange::*member,
                                             unsigned long long &through,
                                             unsigned long long &own) {
  const int lane = threadIdx.x % 32;
  own = lane < kCluster ? cluster.map_shared_rank(&x, lane)->*member : 0ull;
  through = warp_inclusive_sum(own);
}

// This thread's place in the draw's order: the weight of the block's threads before it.
// Publishes the block's weight (x.block_weight) for the other blocks, to read after the next
// cluster barrier.
__device__ unsigned long long publish_block_weight(unsigned long long own, Exchange &x) {
  const int lane = threadIdx.x % 32;
  const unsigned long long running = warp_inclusive_sum(own);
  unsigned long long before_warp;
  const unsigned long long block_total = block_sum(lane == 31 ? running : 0ull, x, &before_warp);
  if (threadIdx.x == 0) x.block_weight = block_total;
  return before_warp + running - own;
}

// The thread's elements of the slice are i = threadIdx.x + j * kThreads, j < kPerThread (a
// compile-time count, so that the loops unroll and the independent elements overlap: with 16
// warps per SM, a loop that handles one element at a time waits on its own latency).
template <int kPerThread, typename F>
__device__ __forceinline__ void for_each_element(int count, F &&f) {
#pragma unroll 4
  for (int j = 0; j < kPerThread; ++j) {
    const int i = int(threadIdx.x) + j * kThreads;
    if (i < count) f(i);
  }
}

// The block's slice of the row and its shared-memory buffers.
struct Slice {
  const float *values;
  int first;                 // the slice's first token
  int count;
  float max_value;           // of the whole row
  float bins_per_logit;      // the distance bins' scale
  unsigned long long *hist[2];
  unsigned long long *merged;
  int free_hist;             // the local histogram no other block may still be reading
};

// The draw, prepared by the last selection's candidate pass: the tokens in bins before the
// chosen one are kept for sure, and their weights (in the draw's order: block by block, thread
// by thread, each thread's elements in turn) were summed in that pass; the kept candidates of
// the chosen bin were gathered into every block.
struct FusedDraw {
  bool ready = false;
  int bin;                                // the chosen bin
  uint32_t floor_key, threshold;
  unsigned long long thread_before;       // the sure weight of the block's threads before this one
  unsigned long long thread_own;          // and of this thread's tokens
  int candidates;                         // gathered (key, token) pairs in Slice::merged
  unsigned long long candidate_weight;    // the kept candidates' weight
};

} // namespace sampling
} // namespace sinter::kernels
