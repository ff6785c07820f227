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
// Top-p alone is drawn by rejection (draw_nucleus_by_probes), and top-k up to kListedTopK
// (with top-p after it) from one list of every block's own top k, sorted in one block when
// short (draw_top_k_from_lists). Otherwise, and when those lists are too long, nothing is
// sorted: a top-k or top-p threshold is found in two steps:
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

#include "sampling_select.cuh"

namespace sinter::kernels {
namespace sampling {

// The token at `point` of the cumulative weight, in the thread that holds it (-1 in every
// other): the block whose stretch of the scanned block weights (scan_cluster's `through` and
// `block_weight`) holds the point, then the thread whose stretch [block's start +
// thread_before, + own) does, walks its elements, weighed by `weight` in the order their sum
// `own` was taken.
template <int kPerThread, typename Weight>
__device__ int walk_to_point(cg::cluster_group &cluster, const Slice &s,
                             unsigned long long through, unsigned long long block_weight,
                             unsigned long long thread_before, unsigned long long own,
                             unsigned long long point, Weight weight) {
  const int lane = threadIdx.x % 32;
  const unsigned holds = __ballot_sync(
      ~0u, lane < kCluster && through - block_weight <= point && point < through);
  const int block = __ffs(holds) - 1;
  if (block != int(cluster.block_rank())) return -1;
  const unsigned long long before =
      __shfl_sync(~0u, through - block_weight, block) + thread_before;
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
  auto kept_weight = [&](int i) -> uint32_t {
    const float v = s.values[i];
    return order_key(v) >= threshold ? mass_weight(v, s.max_value) : 0u;
  };
  unsigned long long own = 0;
  for_each_element<kPerThread>(s.count, [&](int i) { own += kept_weight(i); });
  const unsigned long long thread_before = publish_block_weight(own, x);
  cluster.sync();
  unsigned long long through, weight;
  scan_cluster(cluster, x, &Exchange::block_weight, through, weight);
  const unsigned long long total = __shfl_sync(~0u, through, 31);
  if (total == 0) // cannot happen (the largest logit weighs 2^31); rank 0 reports no token
    return cluster.block_rank() == 0 && threadIdx.x == 0 ? 0x7fffffff : -1;
  return walk_to_point<kPerThread>(cluster, s, through, weight, thread_before, own,
                                   draw_point(stream, total), kept_weight);
}

// Top-p alone, by rejection: kProbes tokens drawn from the whole row's distribution; a token
// is in the nucleus exactly when the weight of the tokens above it (keys strictly larger) is
// below select_threshold's target, so the first probe inside is a draw from the nucleus, in
// two passes instead of a threshold search. Returns false, with every block agreeing, when no
// probe is inside: the caller then draws as before, from a uniform the probes did not use, so
// the result is still distributed exactly as the nucleus's softmax. Otherwise `token` is set
// in rank 0's thread 0 (-1 elsewhere).
template <int kPerThread>
__device__ bool draw_nucleus_by_probes(cg::cluster_group &cluster, const Slice &s, float top_p,
                                       uint64_t stream, Exchange &x, int &token) {
  auto weight = [&](int i) -> uint32_t { return mass_weight(s.values[i], s.max_value); };
  unsigned long long own = 0;
  for_each_element<kPerThread>(s.count, [&](int i) { own += weight(i); });
  const unsigned long long thread_before = publish_block_weight(own, x);
  cluster.sync();
  unsigned long long through, block_weight;
  scan_cluster(cluster, x, &Exchange::block_weight, through, block_weight);
  const unsigned long long total = __shfl_sync(~0u, through, 31); // > 0: the largest weighs 2^31
  Exchange *root = cluster.map_shared_rank(&x, 0);
#pragma unroll
  for (int p = 0; p < kProbes; ++p) {
    const uint64_t probe_stream = mix64(stream ^ (0xD1B54A32D192ED03ull * uint64_t(p + 1)));
    const int found = walk_to_point<kPerThread>(cluster, s, through, block_weight, thread_before,
                                                own, draw_point(probe_stream, total), weight);
    if (found >= 0) {
      root->probe_key[p] = order_key(s.values[found - s.first]);
      root->probe_token[p] = found;
    }
  }
  cluster.sync();
  uint32_t probe_key[kProbes];
  unsigned long long above[kProbes];
#pragma unroll
  for (int p = 0; p < kProbes; ++p) probe_key[p] = root->probe_key[p], above[p] = 0;
  for_each_element<kPerThread>(s.count, [&](int i) {
    const float v = s.values[i];
    const uint32_t key = order_key(v), w = mass_weight(v, s.max_value);
#pragma unroll
    for (int p = 0; p < kProbes; ++p) above[p] += key > probe_key[p] ? w : 0u;
  });
#pragma unroll
  for (int p = 0; p < kProbes; ++p) {
    const unsigned long long block_above = block_sum(above[p], x);
    if (threadIdx.x == 0) x.probe_above[p] = block_above;
  }
  cluster.sync();
  const unsigned long long target = crossing_target(0ull, top_p, total);
  const int lane = threadIdx.x % 32;
  token = -1;
#pragma unroll
  for (int p = 0; p < kProbes; ++p) {
    const unsigned long long part =
        lane < kCluster ? cluster.map_shared_rank(&x, lane)->probe_above[p] : 0ull;
    const unsigned long long above_probe = __shfl_sync(~0u, warp_inclusive_sum(part), 31);
    if (above_probe < target) {
      if (cluster.block_rank() == 0 && threadIdx.x == 0) token = root->probe_token[p];
      return true;
    }
  }
  return false;
}

// Gumbel-max over the listed tokens that are `kept(j)` (entry j; each thread asks about
// entries threadIdx.x + m * kThreads), weightless ones left out as in every other draw:
// distributed as their softmax. The token to every thread of the block.
template <typename Kept>
__device__ int draw_from_list(const Slice &s, const uint32_t *keys, const uint32_t *tokens,
                              int total, Kept &&kept, uint64_t stream, Exchange &x) {
  const uint64_t candidate_stream = mix64(stream ^ 0x5851F42D4C957F2Dull);
  Candidate c = kNoCandidate;
  for (int j = threadIdx.x; j < total; j += kThreads) {
    if (!kept(j)) continue;
    const float v = value_of_key(keys[j]);
    if (mass_weight(v, s.max_value) == 0) continue;
    const float g = v + gumbel(uniform(candidate_stream, tokens[j]));
    if (better(g, int(tokens[j]), c.value, c.index)) c = {g, int(tokens[j])};
  }
  return block_best(c, x).index;
}

// Top-k, then top-p when top_p > 0, over the gathered list of at most kThreads tokens
// (Slice::merged), sorted in place (bitonic, one entry a thread, largest key first and equal
// keys by token, so the order and the draw do not depend on the order the lists were
// gathered in): the kept tokens are a prefix whose weights' running sums give the top-p
// threshold and the draw by inverse CDF. The same kept set as the radix thresholds. The token
// to thread 0.
__device__ int draw_from_sorted_list(Slice &s, int total, int top_k, float top_p,
                                     uint64_t stream, Exchange &x) {
  static_assert((kThreads & (kThreads - 1)) == 0 && kThreads <= kCandidates,
                "a bitonic sort of one list entry a thread");
  uint32_t *keys = reinterpret_cast<uint32_t *>(s.merged);
  uint32_t *tokens = keys + kCandidates;
  const int i = threadIdx.x, lane = threadIdx.x % 32;
  if (i >= total) keys[i] = 0u, tokens[i] = ~0u; // NaN's key: after every listed token
  __syncthreads();
  for (int size = 2; size <= kThreads; size *= 2)
    for (int stride = size / 2; stride > 0; stride /= 2) {
      const int partner = i ^ stride;
      if (partner > i) {
        const uint32_t ka = keys[i], kb = keys[partner], ta = tokens[i], tb = tokens[partner];
        const bool b_first = kb > ka || (kb == ka && tb < ta);
        // Runs of `size` entries alternate direction until the last, which puts b first.
        if (b_first == ((i & size) == 0)) {
          keys[i] = kb, keys[partner] = ka;
          tokens[i] = tb, tokens[partner] = ta;
        }
      }
      __syncthreads();
    }
  const uint32_t key = keys[i];
  const uint32_t kth_key = keys[(total < top_k ? total : top_k) - 1];
  const bool in_top_k = i < total && key >= kth_key;
  const uint32_t weight = in_top_k ? mass_weight(value_of_key(key), s.max_value) : 0u;
  unsigned long long before_warp;
  const unsigned long long through_lane = warp_inclusive_sum(weight);
  const unsigned long long top_k_weight =
      block_sum(lane == 31 ? through_lane : 0ull, x, &before_warp);
  const unsigned long long through = before_warp + through_lane, before = through - weight;
  bool kept = in_top_k;
  unsigned long long kept_weight = top_k_weight;
  if (top_p > 0.f) {
    // The entry whose running sum first reaches the target holds the threshold key.
    const unsigned long long target = crossing_target(0ull, top_p, top_k_weight);
    if (weight && before < target && target <= through) x.bin = i;
    __syncthreads();
    const uint32_t threshold = keys[x.bin];
    kept = in_top_k && key >= threshold;
    kept_weight = block_sum(kept ? weight : 0u, x);
  }
  // The kept tokens lead the list, so their running sums are `through`.
  const unsigned long long point = draw_point(stream, kept_weight);
  if (kept && weight && before <= point && point < through) x.bin = int(tokens[i]);
  __syncthreads();
  return x.bin;
}

// The largest k the lists of draw_top_k_from_lists are meant for: every block's list of about
// k tokens fits the one list rank 0 gathers.
constexpr int kListedTopK = kCandidates / kCluster;

// Top-k for k <= kListedTopK, with or without top-p after it, from one list: each block lists
// the tokens of its slice in the distance bins up to the one where its own count reaches k (a
// token of the row's top k has fewer than k tokens above it in its own slice too, and ties
// share a bin, so the lists hold the top k and every token tied with the k-th). Rank 0 gathers
// the lists and finds both thresholds and the draw in its own shared memory: one cluster
// barrier instead of a cluster-wide selection per threshold. Returns false, with every block
// agreeing, when the lists are too long to gather (many ties): the caller then selects as
// before. Otherwise `token` is set in rank 0's thread 0 (-1 elsewhere).
template <int kPerThread>
__device__ bool draw_top_k_from_lists(cg::cluster_group &cluster, Slice &s, int top_k, float top_p,
                                      uint64_t stream, Exchange &x, int &token) {
  const uint32_t floor_key = order_key(-INFINITY); // NaN is never kept
  unsigned long long *hist = s.hist[s.free_hist];
  for (int j = threadIdx.x; j < kBins; j += kThreads) hist[j] = 0;
  if (threadIdx.x == 0) x.candidates = 0;
  __syncthreads();
  for_each_element<kPerThread>(s.count, [&](int i) {
    const float v = s.values[i];
    if (order_key(v) >= floor_key) hist_add(hist, distance_bin(v, s.max_value, s.bins_per_logit), 1u);
  });
  __syncthreads();
  // Counts of one only touch a word's low half, so the words are the counts. With fewer than
  // k tokens the crossing is the last bin that holds any (-1: none).
  find_crossing<kBins>(hist, (unsigned long long)top_k, 0.f, 0, x);
  const int last_bin = x.bin;
  uint32_t *list = reinterpret_cast<uint32_t *>(s.hist[s.free_hist ^ 1]);
  list_tokens<kPerThread>(s, list, x, [&](float v, uint32_t key) {
    return key >= floor_key && distance_bin(v, s.max_value, s.bins_per_logit) <= last_bin;
  });
  cluster.sync();
  int total = 0;
  for (int r = 0; r < kCluster; ++r) total += cluster.map_shared_rank(&x, r)->candidates;
  if (total > kCandidates) return false; // every block read the same counts
  token = -1;
  if (cluster.block_rank() != 0) return true; // the kernel's last barrier keeps the lists alive
  gather_lists(cluster, s, list, x);
  const uint32_t *keys = reinterpret_cast<const uint32_t *>(s.merged);
  const uint32_t *tokens = keys + kCandidates;
  const bool top_p_on = top_p > 0.f && top_p < 1.f;
  int drawn; // a short list is sorted; a longer one selected by radix digits
  if (total <= kThreads) {
    drawn = draw_from_sorted_list(s, total, top_k, top_p_on ? top_p : 0.f, stream, x);
  } else {
    uint32_t threshold =
        threshold_in_list(s, keys, total, floor_key, false, (unsigned long long)top_k, x);
    if (top_p_on) {
      unsigned long long kept = 0;
      for (int c = threadIdx.x; c < total; c += kThreads)
        if (keys[c] >= threshold) kept += mass_weight(value_of_key(keys[c]), s.max_value);
      const unsigned long long target = crossing_target(0ull, top_p, block_sum(kept, x));
      threshold = threshold_in_list(s, keys, total, threshold, true, target, x);
    }
    drawn = draw_from_list(s, keys, tokens, total,
                           [&](int j) { return keys[j] >= threshold; }, stream, x);
  }
  if (threadIdx.x == 0) token = drawn;
  return true;
}

// The draw prepared by the last selection (FusedDraw): no pass of its own. The point falls in
// the sure tokens (walked as in draw_token) or among the kept candidates, where rank 0 draws
// by Gumbel-max over their logits (distributed as their softmax).
template <int kPerThread>
__device__ int draw_prepared(cg::cluster_group &cluster, const Slice &s, const FusedDraw &d,
                             uint64_t stream, Exchange &x) {
  unsigned long long through, weight;
  scan_cluster(cluster, x, &Exchange::block_weight, through, weight);
  const unsigned long long sure = __shfl_sync(~0u, through, 31);
  const unsigned long long total = sure + d.candidate_weight;
  if (total == 0) // cannot happen (the largest logit weighs 2^31); rank 0 reports no token
    return cluster.block_rank() == 0 && threadIdx.x == 0 ? 0x7fffffff : -1;
  const unsigned long long point = draw_point(stream, total);
  if (point < sure)
    return walk_to_point<kPerThread>(
        cluster, s, through, weight, d.thread_before, d.thread_own, point,
        [&](int i) -> uint32_t {
          const float v = s.values[i];
          return order_key(v) >= d.floor_key &&
                         distance_bin(v, s.max_value, s.bins_per_logit) < d.bin
                     ? mass_weight(v, s.max_value)
                     : 0u;
        });
  if (cluster.block_rank() != 0) return -1;
  const uint32_t *keys = reinterpret_cast<const uint32_t *>(s.merged);
  const uint32_t *tokens = keys + kCandidates;
  const int drawn = draw_from_list(s, keys, tokens, d.candidates,
                                   [&](int j) { return keys[j] >= d.threshold; }, stream, x);
  return threadIdx.x == 0 ? drawn : -1;
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
      const bool top_k = params.top_k > 0 && params.top_k < VOCAB;
      const bool top_p = params.top_p > 0.f && params.top_p < 1.f;
      const uint64_t stream =
          mix64(params.seed + mix64(params.step + mix64(uint64_t(sequence) + 1)));
      const bool drawn =
          top_k ? params.top_k <= kListedTopK &&
                      draw_top_k_from_lists<kPerThread>(cluster, s, params.top_k,
                                                        top_p ? params.top_p : 0.f, stream, x, token)
                : top_p && draw_nucleus_by_probes<kPerThread>(cluster, s, params.top_p, stream, x,
                                                              token);
      if (!drawn) {
        uint32_t threshold = order_key(-INFINITY);
        FusedDraw draw;
        if (top_k)
          threshold = select_threshold<kPerThread>(cluster, s, threshold,
                                                   (unsigned long long)params.top_k, 0.f, x,
                                                   top_p ? nullptr : &draw);
        if (top_p)
          threshold =
              select_threshold<kPerThread>(cluster, s, threshold, 0ull, params.top_p, x, &draw);
        token = draw.ready ? draw_prepared<kPerThread>(cluster, s, draw, stream, x)
                           : draw_token<kPerThread>(cluster, s, threshold, stream, x);
      }
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
