// Picks each sequence's next token from its last logits row on the device, so a decode loop
// never returns to the host between tokens. Semantics, argument order and limits:
// launch_params.h ("sample_tokens"); launch: sample_tokens_launch(...).
//
// A cluster of kSampleTokensCluster blocks takes one sequence: each block loads a slice of the
// row once into shared memory as the final fp32 logits (penalty and temperature applied), and
// every later pass reads it from there; per-block results (maxima, histograms, candidates,
// winners) are combined through distributed shared memory. A single block would read the
// 256 KB row of a 128k vocabulary from L2 once per pass, several microseconds each.
//
// Nothing is sorted. A top-k or top-p threshold is found in two steps:
//  1. a histogram over the distance below the largest logit (kBins bins over the row's own
//     range, at most kMassRange; monotone in the logit), counting tokens for top-k or summing
//     probability mass for top-p, gives the bin that holds the threshold. Radix digits of the
//     logits' bits would be the obvious bins, but the logits of a row share their exponent
//     bits, so the first digit put most of the row into a handful of bins;
//  2. every block gathers the chosen bin's tokens from the whole cluster (usually a few runs of
//     tied logits) and selects among them by radix digits in its own shared memory; a bin with
//     more than kCandidates tokens is refined by radix passes over the cluster instead.
// Mass is summed in fixed point (the largest logit weighs 2^31) in 64-bit integers, so the
// sums, and so the kept set, do not depend on the order in which the atomics land.
//
// The draw is an inverse CDF: the kept tokens' weights in a fixed order, and one uniform per
// sequence from (seed, step, sequence). The same seed gives the same tokens in every run.
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
constexpr int kBinsPerThread = kBins / kThreads;
static_assert(kWarps <= 32 && kCluster <= 32, "block and cluster reductions finish in one warp");
static_assert(kBins % kThreads == 0, "each thread scans whole bins");
// Weights are fixed point with the largest logit at 2^31; a logit more than kMassRange below
// it weighs 0 (e^-22 < 2^-31), so the distance bins need not reach further.
constexpr float kMassScale = 2147483648.f;
constexpr float kMassRange = 22.f;
// Tokens of the chosen bin that every block gathers: a list of (key, weight) pairs fits one
// histogram's space.
constexpr int kCandidates = kBins;
static_assert(kCandidates * 8 <= kBins * 8, "a list of (key, token) fits a histogram buffer");
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

// This thread's place in the draw's order: the weight of the block's threads before it.
// Publishes the block's weight (x.block_weight) for the other blocks, to read after the next
// cluster barrier.
__device__ unsigned long long publish_block_weight(unsigned long long own, Exchange &x) {
  const int lane = threadIdx.x % 32;
  unsigned long long running = own; // inclusive scan over the warp
  for (int offset = 1; offset < 32; offset *= 2) {
    const unsigned long long other = __shfl_up_sync(~0u, running, offset);
    if (lane >= offset) running += other;
  }
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

// The first entry of `weights` (kEntries of them, possibly another block's), counting from
// entry 0, at which the running weight reaches the target: `fixed_target`, or when `fraction`
// > 0 that fraction of the total (rounded up, at least 1). Sets x.bin to it plus
// `entry_offset` (-1 if nothing weighs anything) and x.remaining to the weight still needed
// inside it.
template <int kEntries>
__device__ void find_crossing(const unsigned long long *weights, unsigned long long fixed_target,
                              float fraction, int entry_offset, Exchange &x) {
  static_assert(kEntries % kThreads == 0 || kThreads % kEntries == 0, "entries split evenly");
  constexpr int kPerThread = kEntries >= kThreads ? kEntries / kThreads : 1;
  const int lane = threadIdx.x % 32;
  const int first_entry = threadIdx.x * kPerThread;
  unsigned long long mine[kPerThread], own = 0;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j)
    own += mine[j] = first_entry + j < kEntries ? weights[first_entry + j] : 0ull;
  unsigned long long running = own; // inclusive scan over the warp
  for (int offset = 1; offset < 32; offset *= 2) {
    const unsigned long long other = __shfl_up_sync(~0u, running, offset);
    if (lane >= offset) running += other;
  }
  if (threadIdx.x == 0) x.bin = -1;
  unsigned long long before_warp;
  // The warp's last lane holds the warp's sum.
  const unsigned long long total =
      block_sum(lane == 31 ? running : 0ull, x, &before_warp);
  const unsigned long long before = before_warp + running - own;
  unsigned long long target = fixed_target;
  if (fraction > 0.f) {
    const double want = ceil(double(fraction) * double(total));
    target = want < 1.0 ? 1ull : (unsigned long long)want;
  }
  if (target > total) target = total;
  if (target > 0 && before < target && target <= before + own) {
    unsigned long long acc = before;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      if (acc + mine[j] >= target) {
        x.bin = entry_offset + first_entry + j;
        x.remaining = target - acc;
        break;
      }
      acc += mine[j];
    }
  }
  __syncthreads();
}

// Each block merges one segment of the bins across the cluster (a full merge per block read
// all kCluster histograms through distributed shared memory, 128 KB per block: the slowest
// step of a selection), and publishes the segment's weight.
constexpr int kSegment = kBins / kCluster;
__device__ void merge_segment(cg::cluster_group &cluster, const unsigned long long *hist,
                              unsigned long long *merged, Exchange &x) {
  static_assert(kThreads % kSegment == 0 && kCluster % (kThreads / kSegment) == 0,
                "the block's threads split the cluster's ranks evenly");
  constexpr int kRankGroups = kThreads / kSegment;
  constexpr int kRanksPerGroup = kCluster / kRankGroups;
  const int rank = int(cluster.block_rank());
  const int bin = threadIdx.x % kSegment, group = threadIdx.x / kSegment;
  unsigned long long sum = 0;
#pragma unroll
  for (int r = 0; r < kRanksPerGroup; ++r)
    sum += hist_value(cluster.map_shared_rank(hist, group * kRanksPerGroup + r)[rank * kSegment + bin]);
  unsigned long long *partial = merged + kSegment; // beyond the segment: this block's scratch
  partial[threadIdx.x] = sum;
  __syncthreads();
  unsigned long long segment = 0;
  if (threadIdx.x < kSegment) {
    for (int g = 0; g < kRankGroups; ++g) segment += partial[g * kSegment + threadIdx.x];
    merged[threadIdx.x] = segment;
  }
  const unsigned long long weight = block_sum(segment, x);
  if (threadIdx.x == 0) x.segment_weight = weight;
}

// After merge_segment and a cluster barrier: the crossing over the whole merged histogram.
// Every block finds the segment that holds it from the published weights, then the bin in
// that segment's merged counts, so all agree.
__device__ void find_merged_crossing(cg::cluster_group &cluster, const unsigned long long *merged,
                                     unsigned long long fixed_target, float fraction,
                                     Exchange &x) {
  const int lane = threadIdx.x % 32;
  unsigned long long weight =
      lane < kCluster ? cluster.map_shared_rank(&x, lane)->segment_weight : 0ull;
  unsigned long long running = weight; // inclusive scan over the segments
  for (int offset = 1; offset < 32; offset *= 2) {
    const unsigned long long other = __shfl_up_sync(~0u, running, offset);
    if (lane >= offset) running += other;
  }
  const unsigned long long total = __shfl_sync(~0u, running, 31);
  unsigned long long target = fixed_target;
  if (fraction > 0.f) {
    const double want = ceil(double(fraction) * double(total));
    target = want < 1.0 ? 1ull : (unsigned long long)want;
  }
  if (target > total) target = total;
  const unsigned holds = __ballot_sync(~0u, lane < kCluster && target > 0 &&
                                                running - weight < target && target <= running);
  const int segment = holds ? __ffs(holds) - 1 : 0;
  const unsigned long long before = __shfl_sync(~0u, running - weight, segment);
  find_crossing<kSegment>(cluster.map_shared_rank(merged, segment), holds ? target - before : 0ull,
                          0.f, segment * kSegment, x);
}

// The sum of every block's histogram into `merged`, bin by bin (radix passes only).
__device__ void merge_histograms(cg::cluster_group &cluster, const unsigned long long *hist,
                                 unsigned long long *merged) {
  for (int j = threadIdx.x; j < kBins; j += kThreads) {
    unsigned long long sum = 0;
#pragma unroll
    for (int r = 0; r < kCluster; ++r) sum += hist_value(cluster.map_shared_rank(hist, r)[j]);
    merged[j] = sum;
  }
  __syncthreads();
}

// The exact threshold inside the chosen bin when the cluster's candidates fit one list: every
// block gathers the lists and selects among them by radix digits of the keys' offsets below
// the largest candidate key, in this block's shared memory alone (no cluster barrier: all
// blocks compute the same threshold from the same list). The candidates usually share a few
// keys (tied logits), and then a single digit covers them.
__device__ uint32_t threshold_from_candidates(cg::cluster_group &cluster, Slice &s, bool by_mass,
                                              const uint32_t *list, int total,
                                              unsigned long long remaining, Exchange &x) {
  uint32_t *keys = reinterpret_cast<uint32_t *>(s.merged);
  uint32_t *tokens = keys + kCandidates;
  int offset = 0;
  uint32_t largest = 0, smallest = ~0u;
  for (int r = 0; r < kCluster; ++r) {
    const int n = cluster.map_shared_rank(&x, r)->candidates;
    const uint32_t *remote = cluster.map_shared_rank(list, r);
    for (int j = threadIdx.x; j < n; j += kThreads) {
      const uint32_t key = remote[j];
      keys[offset + j] = key;
      tokens[offset + j] = remote[kCandidates + j];
      largest = max(largest, key), smallest = min(smallest, key);
    }
    offset += n;
  }
  // The keys still in the running: largest - span .. largest.
  largest = block_max_key(largest, x);
  uint32_t span = largest - ~block_max_key(~smallest, x);
  // The distance pass's histogram: every block finished merging it before the last barrier.
  unsigned long long *hist = s.hist[s.free_hist];
  while (span > 0) {
    const int bits = 32 - __clz(span);
    const int shift = bits > 11 ? bits - 11 : 0;
    for (int j = threadIdx.x; j < kBins; j += kThreads) hist[j] = 0;
    __syncthreads();
    for (int c = threadIdx.x; c < total; c += kThreads) {
      const uint32_t below = largest - keys[c];
      if (keys[c] <= largest && below <= span)
        hist_add(hist, int(below >> shift),
                 by_mass ? mass_weight(value_of_key(keys[c]), s.max_value) : 1u);
    }
    __syncthreads();
    for (int j = threadIdx.x; j < kBins; j += kThreads) hist[j] = hist_value(hist[j]);
    __syncthreads();
    find_crossing<kBins>(hist, remaining, 0.f, 0, x);
    // x.bin >= 0: the keys in the running weigh at least `remaining`.
    largest -= uint32_t(x.bin) << shift;
    remaining = x.remaining;
    span = shift > 0 ? (1u << shift) - 1u : 0u;
  }
  return largest;
}

// The exact threshold inside bin `bin` by radix selection over the tokens' keys, one cluster
// barrier per digit (a chosen bin of more than kCandidates tokens).
template <int kPerThread>
__device__ uint32_t threshold_by_radix(cg::cluster_group &cluster, Slice &s, bool by_mass,
                                       uint32_t floor_key, int bin,
                                       unsigned long long remaining, Exchange &x) {
  uint32_t prefix = 0, prefix_mask = 0;
  for (int pass = 0; pass < kRadixPasses; ++pass) {
    const int shift = kDigitShift[pass];
    const uint32_t digit_mask = kDigitMask[pass];
    unsigned long long *hist = s.hist[s.free_hist];
    for (int j = threadIdx.x; j < kBins; j += kThreads) hist[j] = 0;
    __syncthreads();
    for_each_element<kPerThread>(s.count, [&](int i) {
      const float v = s.values[i];
      const uint32_t key = order_key(v);
      if (key < floor_key || (key & prefix_mask) != prefix ||
          distance_bin(v, s.max_value, s.bins_per_logit) != bin)
        return;
      const uint32_t weight = by_mass ? mass_weight(v, s.max_value) : 1u;
      // Bin 0 takes the largest digit, as find_crossing scans from entry 0.
      if (weight) hist_add(hist, kBins - 1 - int((key >> shift) & digit_mask), weight);
    });
    // Every block's histogram is complete, and every block is done reading the buffer this
    // one reuses on the next pass but one (double buffering: one barrier per pass).
    cluster.sync();
    s.free_hist ^= 1;
    merge_histograms(cluster, hist, s.merged);
    find_crossing<kBins>(s.merged, remaining, 0.f, 0, x);
    if (x.bin < 0) break; // cannot happen: the bin's weight covers `remaining`
    prefix |= uint32_t(kBins - 1 - x.bin) << shift;
    remaining = x.remaining;
    prefix_mask |= digit_mask << shift;
  }
  return prefix;
}

// The largest key t such that the tokens with keys >= max(t, floor_key) reach the target:
// `count_target` tokens (top-k) or, when `fraction` > 0, that fraction of their probability
// mass (top-p). Every block returns the same t.
template <int kPerThread>
__device__ uint32_t select_threshold(cg::cluster_group &cluster, Slice &s, uint32_t floor_key,
                                     unsigned long long count_target, float fraction,
                                     Exchange &x, FusedDraw *draw = nullptr) {
  const bool by_mass = fraction > 0.f;
  const int lane = threadIdx.x % 32;
  unsigned long long *hist = s.hist[s.free_hist];
  for (int j = threadIdx.x; j < kBins; j += kThreads) hist[j] = 0;
  __syncthreads();
  for_each_element<kPerThread>(s.count, [&](int i) {
    const float v = s.values[i];
    if (order_key(v) < floor_key) return;
    const uint32_t weight = by_mass ? mass_weight(v, s.max_value) : 1u;
    if (weight) hist_add(hist, distance_bin(v, s.max_value, s.bins_per_logit), weight);
  });
  // Every block's histogram is complete before any block merges a segment of it.
  cluster.sync();
  merge_segment(cluster, hist, s.merged, x);
  // Every block read the other blocks' candidate counts of the previous selection before
  // the barrier above; this block's segment is published after this one.
  if (threadIdx.x == 0) x.candidates = 0;
  cluster.sync();
  find_merged_crossing(cluster, s.merged, count_target, fraction, x);
  const int bin = x.bin;
  const unsigned long long remaining = x.remaining;
  if (bin < 0) return floor_key;

  // This block's tokens of the chosen bin, listed in the other local histogram's space; with
  // a draw to prepare, the weight of the tokens in earlier bins too.
  uint32_t *list = reinterpret_cast<uint32_t *>(s.hist[s.free_hist ^ 1]);
  unsigned long long sure = 0;
#pragma unroll 4
  for (int j = 0; j < kPerThread; ++j) { // whole warps: the ballot needs every lane
    const int i = int(threadIdx.x) + j * kThreads;
    bool take = false;
    uint32_t key = 0;
    if (i < s.count) {
      const float v = s.values[i];
      key = order_key(v);
      if (key >= floor_key) {
        const int token_bin = distance_bin(v, s.max_value, s.bins_per_logit);
        // A weightless token never sets a mass threshold.
        if (token_bin == bin) take = !by_mass || mass_weight(v, s.max_value) != 0;
        else if (draw && token_bin < bin) sure += mass_weight(v, s.max_value);
      }
    }
    const unsigned taking = __ballot_sync(~0u, take);
    if (!taking) continue;
    int slot = 0;
    if (lane == 0) slot = atomicAdd(&x.candidates, __popc(taking));
    slot = __shfl_sync(~0u, slot, 0) + __popc(taking & ((1u << lane) - 1u));
    if (take && slot < kCandidates) list[slot] = key, list[kCandidates + slot] = s.first + i;
  }
  if (draw) {
    draw->thread_before = publish_block_weight(sure, x);
    draw->thread_own = sure;
  }
  cluster.sync();
  int total = 0;
  bool overflow = false;
  for (int r = 0; r < kCluster; ++r) {
    const int n = cluster.map_shared_rank(&x, r)->candidates;
    overflow |= n > kCandidates;
    total += n;
  }
  uint32_t threshold;
  if (!overflow && total <= kCandidates) {
    // Other blocks may be reading this block's list until they pass the next barrier: the
    // next histogram goes where this one was.
    threshold = threshold_from_candidates(cluster, s, by_mass, list, total, remaining, x);
    threshold = threshold > floor_key ? threshold : floor_key;
    if (draw) {
      const uint32_t *keys = reinterpret_cast<const uint32_t *>(s.merged);
      unsigned long long kept = 0;
      for (int c = threadIdx.x; c < total; c += kThreads)
        if (keys[c] >= threshold) kept += mass_weight(value_of_key(keys[c]), s.max_value);
      draw->candidate_weight = block_sum(kept, x);
      draw->ready = true;
      draw->bin = bin;
      draw->floor_key = floor_key;
      draw->threshold = threshold;
      draw->candidates = total;
    }
  } else {
    // No block gathers lists on this path, so the list's buffer is free for the first digit.
    s.free_hist ^= 1;
    threshold = threshold_by_radix<kPerThread>(cluster, s, by_mass, floor_key, bin, remaining, x);
  }
  return threshold > floor_key ? threshold : floor_key;
}

// The published block weights: in every lane, the weight of the blocks up to and including
// the lane's (lanes >= kCluster: the total), and the lane's block's own.
__device__ void scan_block_weights(cg::cluster_group &cluster, Exchange &x,
                                   unsigned long long &through, unsigned long long &weight) {
  const int lane = threadIdx.x % 32;
  weight = lane < kCluster ? cluster.map_shared_rank(&x, lane)->block_weight : 0ull;
  through = weight;
  for (int offset = 1; offset < 32; offset *= 2) {
    const unsigned long long other = __shfl_up_sync(~0u, through, offset);
    if (lane >= offset) through += other;
  }
}

// The thread (of the block) whose stretch [before, before + own) of the cumulative weight
// holds `point` walks its elements to the token there; every other thread returns -1.
template <int kPerThread, typename Weight>
__device__ int walk_to_point(const Slice &s, unsigned long long before, unsigned long long own,
                             unsigned long long point, Weight weight) {
  if (!(before <= point && point < before + own)) return -1;
  unsigned long long acc = before;
  for (int j = 0; j < kPerThread; ++j) {
    const int i = int(threadIdx.x) + j * kThreads;
    if (i >= s.count) break;
    acc += weight(i);
    if (point < acc) return s.first + i;
  }
  return -1; // cannot happen: the stretch holds the point
}

// floor(h * total / 2^64) for a 64-bit hash h: uniform over [0, total) up to 2^-14 relative
// (total < 2^50).
__device__ __forceinline__ unsigned long long draw_point(uint64_t stream,
                                                         unsigned long long total) {
  return __umul64hi(mix64(stream), total);
}

// The draw: the kept tokens' weights in a fixed order (block by block, thread by thread, each
// thread's elements in turn) form a cumulative distribution, and one uniform per sequence
// picks the token where it crosses u * total. One pass of exponentials and integer sums; a
// Gumbel-max draw needs a hash and two logarithms per token. Returns the token in the thread
// that holds it, -1 in every other.
template <int kPerThread>
__device__ int draw_token(cg::cluster_group &cluster, const Slice &s, uint32_t threshold,
                          uint64_t stream, Exchange &x) {
  const int lane = threadIdx.x % 32;
  auto kept_weight = [&](int i) -> uint32_t {
    const float v = s.values[i];
    return order_key(v) >= threshold ? mass_weight(v, s.max_value) : 0u;
  };
  unsigned long long own = 0;
  for_each_element<kPerThread>(s.count, [&](int i) { own += kept_weight(i); });
  const unsigned long long thread_before = publish_block_weight(own, x);
  cluster.sync();
  unsigned long long through, weight;
  scan_block_weights(cluster, x, through, weight);
  const unsigned long long total = __shfl_sync(~0u, through, 31);
  if (total == 0) // cannot happen (the largest logit weighs 2^31); rank 0 reports no token
    return cluster.block_rank() == 0 && threadIdx.x == 0 ? 0x7fffffff : -1;
  const unsigned long long point = draw_point(stream, total);
  const unsigned holds =
      __ballot_sync(~0u, lane < kCluster && through - weight <= point && point < through);
  const int block = __ffs(holds) - 1;
  if (block != int(cluster.block_rank())) return -1;
  const unsigned long long before = __shfl_sync(~0u, through - weight, block) + thread_before;
  return walk_to_point<kPerThread>(s, before, own, point, kept_weight);
}

// The draw prepared by the last selection (FusedDraw): no pass of its own. The point falls in
// the sure tokens (walked as in draw_token) or among the kept candidates, where rank 0 draws
// by Gumbel-max over their logits (distributed as their softmax).
template <int kPerThread>
__device__ int draw_prepared(cg::cluster_group &cluster, const Slice &s, const FusedDraw &d,
                             uint64_t stream, Exchange &x) {
  const int lane = threadIdx.x % 32;
  unsigned long long through, weight;
  scan_block_weights(cluster, x, through, weight);
  const unsigned long long sure = __shfl_sync(~0u, through, 31);
  const unsigned long long total = sure + d.candidate_weight;
  if (total == 0) // cannot happen (the largest logit weighs 2^31); rank 0 reports no token
    return cluster.block_rank() == 0 && threadIdx.x == 0 ? 0x7fffffff : -1;
  const unsigned long long point = draw_point(stream, total);
  if (point < sure) {
    const unsigned holds =
        __ballot_sync(~0u, lane < kCluster && through - weight <= point && point < through);
    const int block = __ffs(holds) - 1;
    if (block != int(cluster.block_rank())) return -1;
    const unsigned long long before = __shfl_sync(~0u, through - weight, block) + d.thread_before;
    return walk_to_point<kPerThread>(s, before, d.thread_own, point, [&](int i) -> uint32_t {
      const float v = s.values[i];
      return order_key(v) >= d.floor_key &&
                     distance_bin(v, s.max_value, s.bins_per_logit) < d.bin
                 ? mass_weight(v, s.max_value)
                 : 0u;
    });
  }
  if (cluster.block_rank() != 0) return -1;
  const uint32_t *keys = reinterpret_cast<const uint32_t *>(s.merged);
  const uint32_t *tokens = keys + kCandidates;
  const uint64_t candidate_stream = mix64(stream ^ 0x5851F42D4C957F2Dull);
  Candidate c = kNoCandidate;
  for (int j = threadIdx.x; j < d.candidates; j += kThreads) {
    if (keys[j] < d.threshold) continue;
    const float v = value_of_key(keys[j]);
    if (mass_weight(v, s.max_value) == 0) continue; // weighs nothing in the split either
    const float g = v + gumbel(uniform(candidate_stream, tokens[j]));
    if (better(g, int(tokens[j]), c.value, c.index)) c = {g, int(tokens[j])};
  }
  c = block_best(c, x);
  return threadIdx.x == 0 ? c.index : -1;
}

} // namespace sampling

template <int BATCH, int ROWS, int VOCAB, int IDS_LEN, typename T>
__global__ void __cluster_dims__(kSampleTokensCluster, 1, 1) __launch_bounds__(kSampleTokensThreads, 1)
    sample_tokens(const T *logits, const int64_t *input_ids, SamplingState *sampling,
                  uint32_t *seen, int64_t *next_token) {
  static_assert(sample_tokens_supported(BATCH, ROWS, VOCAB, IDS_LEN),
                "sample_tokens: needs 1..65535 sequences, a vocabulary of 2..2^30 whose slices "
                "fit shared memory, and ids");
  using namespace sampling;
  constexpr int kSlice = int(sample_tokens_slice(VOCAB));
  constexpr int kPerThread = (kSlice + kThreads - 1) / kThreads;
  constexpr int kSeenWords = int(sample_tokens_seen_words(VOCAB));
  constexpr int kPerVector = 16 / int(sizeof(T));
  constexpr int kVectorsPerThread = (kSlice / kPerVector + kThreads - 1) / kThreads;
  // 16-byte loads when every row (and so every slice) starts 16-byte aligned.
  constexpr bool kVectorLoads = (int64_t(VOCAB) * int64_t(sizeof(T))) % 16 == 0;
  static_assert(kSlice % kPerVector == 0 && 32 % kPerVector == 0,
                "a vector's tokens share one word of seen bits");
  extern __shared__ __align__(16) unsigned char shared_raw[];
  float *values = reinterpret_cast<float *>(shared_raw);
  __shared__ Exchange x;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  const int sequence = blockIdx.y;
  const int first = rank * kSlice;
  const int count = VOCAB - first < kSlice ? (VOCAB - first > 0 ? VOCAB - first : 0) : kSlice;

  detail::pdl_launch_dependents();
  detail::pdl_wait();
  const SamplingState params = *sampling;
  const T *row = logits + (size_t(sequence) * ROWS + (ROWS - 1)) * VOCAB;
  uint32_t *seen_row = seen + size_t(sequence) * kSeenWords;

  // This block marks the ids in its slice (all that its penalty reads).
  for (int i = threadIdx.x; i < IDS_LEN; i += kThreads) {
    const int64_t id = input_ids[size_t(sequence) * IDS_LEN + i];
    if (id >= first && id < first + count) atomicOr(&seen_row[id >> 5], 1u << (id & 31));
  }
  __syncthreads();

  const float penalty = params.repetition_penalty;
  const bool penalize = penalty > 0.f && penalty != 1.f;
  const bool greedy = !(params.temperature > 0.f);
  const float temperature = greedy ? 1.f : params.temperature;
  // The logit as Hugging Face's processors leave it: repetition penalty, then temperature.
  // Seen bits are read through L2 (__ldcg): the atomics above bypass L1. The thread's
  // largest logit comes along (NaN ignored), for the probabilities' scale.
  float thread_max = -INFINITY, thread_min = INFINITY;
  auto finish = [&](float v, bool was_seen) {
    if (was_seen) v = v > 0.f ? v / penalty : v * penalty;
    v = v / temperature;
    thread_max = fmaxf(thread_max, v);
    thread_min = fminf(thread_min, v > -INFINITY ? v : INFINITY);
    return v;
  };
  if constexpr (kVectorLoads) {
    // All of the thread's loads in flight at once, then the arithmetic.
    uint4 raw[kVectorsPerThread];
#pragma unroll
    for (int j = 0; j < kVectorsPerThread; ++j) {
      const int v = int(threadIdx.x) + j * kThreads;
      if (v * kPerVector < count) raw[j] = *reinterpret_cast<const uint4 *>(row + first + v * kPerVector);
    }
#pragma unroll
    for (int j = 0; j < kVectorsPerThread; ++j) {
      const int v = int(threadIdx.x) + j * kThreads;
      if (v * kPerVector >= count) continue;
      const int token0 = first + v * kPerVector;
      const uint32_t seen_bits =
          penalize ? __ldcg(&seen_row[token0 >> 5]) >> (token0 & 31) : 0u;
      const T *lanes = reinterpret_cast<const T *>(&raw[j]);
#pragma unroll
      for (int k = 0; k < kPerVector; ++k)
        if (v * kPerVector + k < count)
          values[v * kPerVector + k] = finish(to_f32(lanes[k]), (seen_bits >> k) & 1u);
    }
  } else {
    for_each_element<kPerThread>(count, [&](int i) {
      const int token = first + i;
      const bool was_seen = penalize && ((__ldcg(&seen_row[token >> 5]) >> (token & 31)) & 1u);
      values[i] = finish(to_f32(row[token]), was_seen);
    });
  }
  __syncthreads();

  int token = -1; // the chosen token, in the block that found it
  if (greedy) {
    // Two interleaved running winners: each comparison waits on the previous one.
    Candidate even = {-INFINITY, VOCAB}, odd = {-INFINITY, VOCAB}; // lose ties to real tokens
#pragma unroll 4
    for (int j = 0; j < kPerThread; j += 2) {
      const int i = int(threadIdx.x) + j * kThreads, k = i + kThreads;
      if (i < count && better(values[i], first + i, even.value, even.index)) even = {values[i], first + i};
      if (j + 1 < kPerThread && k < count && better(values[k], first + k, odd.value, odd.index))
        odd = {values[k], first + k};
    }
    if (better(odd.value, odd.index, even.value, even.index)) even = odd;
    const Candidate block_winner = block_best(even, x);
    if (threadIdx.x == 0) x.best = block_winner;
    cluster.sync();
    const int winner = cluster_best(cluster, x).index;
    if (rank == 0 && threadIdx.x == 0) token = winner;
  } else {
    // The row's largest logit and its smallest finite one, to every block.
    const float warp_largest = warp_max(thread_max), warp_smallest = -warp_max(-thread_min);
    if (threadIdx.x % 32 == 0) {
      x.warp[threadIdx.x / 32].value = warp_largest;
      x.warp_weight[threadIdx.x / 32] = __float_as_uint(warp_smallest);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      float block_max = -INFINITY, block_min = INFINITY;
      for (int w = 0; w < kWarps; ++w) {
        block_max = fmaxf(block_max, x.warp[w].value);
        block_min = fminf(block_min, __uint_as_float(uint32_t(x.warp_weight[w])));
      }
      x.max_value = block_max, x.min_value = block_min;
    }
    cluster.sync();
    const int lane = threadIdx.x % 32;
    const float max_value =
        warp_max(lane < kCluster ? cluster.map_shared_rank(&x, lane)->max_value : -INFINITY);
    const float min_finite =
        -warp_max(lane < kCluster ? -cluster.map_shared_rank(&x, lane)->min_value : -INFINITY);

    auto *hist = reinterpret_cast<unsigned long long *>(shared_raw + size_t(kSlice) * 4);
    Slice s{values, first, count, max_value, bins_per_logit(max_value, min_finite),
            {hist, hist + kBins}, hist + 2 * kBins, 0};
    if (max_value > -INFINITY) {
      uint32_t threshold = order_key(-INFINITY);
      const bool top_k = params.top_k > 0 && params.top_k < VOCAB;
      const bool top_p = params.top_p > 0.f && params.top_p < 1.f;
      FusedDraw draw;
      if (top_k)
        threshold = select_threshold<kPerThread>(cluster, s, threshold,
                                                 (unsigned long long)params.top_k, 0.f, x,
                                                 top_p ? nullptr : &draw);
      if (top_p)
        threshold = select_threshold<kPerThread>(cluster, s, threshold, 0ull, params.top_p, x, &draw);
      const uint64_t stream =
          mix64(params.seed + mix64(params.step + mix64(uint64_t(sequence) + 1)));
      token = draw.ready ? draw_prepared<kPerThread>(cluster, s, draw, stream, x)
                         : draw_token<kPerThread>(cluster, s, threshold, stream, x);
    } else if (rank == 0 && threadIdx.x == 0) {
      token = VOCAB; // nothing to draw from: every logit NaN or -inf
    }
  }

  if (token >= 0) {
    next_token[sequence] = token < VOCAB ? token : 0;
    // The counter moves on once every block of the run has read it. Every block of this
    // cluster did before a barrier that preceded this; with more sequences, the last one to
    // finish moves it (the fences and the atomic cost about a microsecond).
    if constexpr (BATCH == 1) {
      sampling->step = params.step + 1;
    } else {
      __threadfence();
      if (atomicAdd(&sampling->blocks_done, 1u) == uint32_t(BATCH - 1)) {
        sampling->blocks_done = 0;
        sampling->step = params.step + 1;
        __threadfence();
      }
    }
  }
  // No block leaves while another may still read its shared memory.
  cluster.sync();
}

} // namespace sinter::kernels
