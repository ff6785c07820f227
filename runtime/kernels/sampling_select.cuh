// The sampler's top-k / top-p thresholds (sample_tokens.cuh): a histogram over the distance
// below the row's largest logit picks the bin that holds the threshold, and the bin's tokens,
// gathered into every block, give the exact key (radix passes over the cluster when they are
// too many to gather).
#pragma once

#include "sampling_common.cuh"

namespace sinter::kernels {
namespace sampling {

// The weight a crossing must reach: `fixed_target`, or when `fraction` > 0 that fraction of
// `total` (rounded up, at least 1); never more than `total`.
__device__ __forceinline__ unsigned long long crossing_target(unsigned long long fixed_target,
                                                              float fraction,
                                                              unsigned long long total) {
  unsigned long long target = fixed_target;
  if (fraction > 0.f) {
    const double want = ceil(double(fraction) * double(total));
    target = want < 1.0 ? 1ull : (unsigned long long)want;
  }
  return target > total ? total : target;
}

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
  const unsigned long long running = warp_inclusive_sum(own);
  if (threadIdx.x == 0) x.bin = -1;
  unsigned long long before_warp;
  // The warp's last lane holds the warp's sum.
  const unsigned long long total =
      block_sum(lane == 31 ? running : 0ull, x, &before_warp);
  const unsigned long long before = before_warp + running - own;
  const unsigned long long target = crossing_target(fixed_target, fraction, total);
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
  unsigned long long running, weight;
  scan_cluster(cluster, x, &Exchange::segment_weight, running, weight);
  const unsigned long long total = __shfl_sync(~0u, running, 31);
  const unsigned long long target = crossing_target(fixed_target, fraction, total);
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

// Appends the slice's tokens for which `take(value, key)` holds to this block's list of (key,
// token) pairs (keys first, tokens kCandidates after) in no fixed order; x.candidates counts
// them, also those past kCandidates, which are not stored.
template <int kPerThread, typename Take>
__device__ void list_tokens(const Slice &s, uint32_t *list, Exchange &x, Take &&take) {
  const int lane = threadIdx.x % 32;
#pragma unroll 4
  for (int j = 0; j < kPerThread; ++j) { // whole warps: the ballot needs every lane
    const int i = int(threadIdx.x) + j * kThreads;
    uint32_t key = 0;
    bool taking_this = false;
    if (i < s.count) {
      const float v = s.values[i];
      key = order_key(v);
      taking_this = take(v, key);
    }
    const unsigned taking = __ballot_sync(~0u, taking_this);
    if (!taking) continue;
    int slot = 0;
    if (lane == 0) slot = atomicAdd(&x.candidates, __popc(taking));
    slot = __shfl_sync(~0u, slot, 0) + __popc(taking & ((1u << lane) - 1u));
    if (taking_this && slot < kCandidates) list[slot] = key, list[kCandidates + slot] = s.first + i;
  }
}

// Every block's list of (key, token) pairs (`list` in each block's shared memory, x.candidates
// long, tokens kCandidates after the keys) copied into this block's Slice::merged, in rank order;
// at most kCandidates pairs in all. Each warp copies from one block, all blocks at once.
__device__ void gather_lists(cg::cluster_group &cluster, Slice &s, const uint32_t *list, Exchange &x) {
  static_assert(kWarps % kCluster == 0 || kCluster % kWarps == 0, "warps split the blocks evenly");
  constexpr int kWarpsPerRank = kWarps >= kCluster ? kWarps / kCluster : 1;
  uint32_t *keys = reinterpret_cast<uint32_t *>(s.merged);
  uint32_t *tokens = keys + kCandidates;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned long long count =
      lane < kCluster ? (unsigned long long)cluster.map_shared_rank(&x, lane)->candidates : 0ull;
  const unsigned long long through = warp_inclusive_sum(count);
  for (int rank = warp % kCluster; rank < kCluster; rank += kWarps) {
    const int n = int(__shfl_sync(~0u, count, rank));
    const int offset = int(__shfl_sync(~0u, through, rank)) - n;
    const uint32_t *remote = cluster.map_shared_rank(list, rank);
    for (int j = (warp / kCluster) * 32 + lane; j < n; j += kWarpsPerRank * 32) {
      keys[offset + j] = remote[j];
      tokens[offset + j] = remote[kCandidates + j];
    }
  }
  __syncthreads();
}

// The largest key t >= floor_key such that the listed keys >= t reach `remaining` (tokens, or
// with by_mass their weights), by radix digits of the keys' offsets below the largest listed
// key, in this block's shared memory alone. The keys usually share a few values (tied
// logits), and then a single digit covers them.
__device__ uint32_t threshold_in_list(Slice &s, const uint32_t *keys, int total, uint32_t floor_key,
                                      bool by_mass, unsigned long long remaining, Exchange &x) {
  uint32_t largest = 0, smallest = ~0u;
  for (int c = threadIdx.x; c < total; c += kThreads)
    if (keys[c] >= floor_key) largest = max(largest, keys[c]), smallest = min(smallest, keys[c]);
  // The keys still in the running: largest - span .. largest.
  largest = block_max_key(largest, x);
  smallest = ~block_max_key(~smallest, x);
  if (smallest > largest) return floor_key; // nothing listed at or above the floor
  uint32_t span = largest - smallest;
  // This block's histogram that no other block reads any more.
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

// The exact threshold inside the chosen bin when the cluster's candidates fit one list: every
// block gathers the lists and selects among them (no cluster barrier: all blocks compute the
// same threshold from the same list).
__device__ uint32_t threshold_from_candidates(cg::cluster_group &cluster, Slice &s, bool by_mass,
                                              const uint32_t *list, int total,
                                              unsigned long long remaining, Exchange &x) {
  gather_lists(cluster, s, list, x);
  return threshold_in_list(s, reinterpret_cast<const uint32_t *>(s.merged), total, 0u, by_mass,
                           remaining, x);
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
  list_tokens<kPerThread>(s, list, x, [&](float v, uint32_t key) {
    if (key < floor_key) return false;
    const int token_bin = distance_bin(v, s.max_value, s.bins_per_logit);
    // A weightless token never sets a mass threshold.
    if (token_bin == bin) return !by_mass || mass_weight(v, s.max_value) != 0;
    if (draw && token_bin < bin) sure += mass_weight(v, s.max_value);
    return false;
  });
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

} // namespace sampling
} // namespace sinter::kernels
