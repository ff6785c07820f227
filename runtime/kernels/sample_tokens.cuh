// Picks each sequence's next token from its last logits row on the device, so a decode loop
// never returns to the host between tokens. Semantics, argument order and limits:
// launch_params.h ("sample_tokens"); launch: sample_tokens_launch(...).
//
// A cluster of kSampleTokensCluster blocks takes one sequence: each block loads a slice of the
// row once into shared memory as the final fp32 logits (penalty and temperature applied), and
// every later pass reads it from there; per-block results (maxima, histograms, winners) are
// combined through distributed shared memory. A single block would read the 256 KB row of a
// 128k vocabulary from L2 once per pass, several microseconds each.
//
// Nothing is sorted. The top-k and top-p thresholds are found by radix selection over
// order-preserving keys of the logits, 11 bits per pass, counting tokens for top-k and summing
// probability mass for top-p. Mass is summed in 32.32 fixed point in 64-bit integers, so the
// sums, and so the kept set, do not depend on the order in which the atomics land: the same
// seed gives the same tokens in every run. The draw is Gumbel-max (the argmax of x + Gumbel
// noise over the kept tokens is distributed as their softmax): one more pass, no prefix sums.
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
constexpr int kBinsPerLane = kBins / 32;
static_assert(kWarps <= 32 && kCluster <= 32, "block and cluster reductions finish in one warp");
// Radix digits from the most significant bits: 11 + 11 + 10 = 32.
constexpr int kPasses = 3;
__device__ constexpr int kDigitShift[kPasses] = {21, 10, 0};
__device__ constexpr uint32_t kDigitMask[kPasses] = {0x7ffu, 0x7ffu, 0x3ffu};

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(bf16 v) { return __bfloat162float(v); }

// Larger float, larger key; NaN below -inf (never kept, never drawn).
__device__ __forceinline__ uint32_t order_key(float x) {
  if (x != x) return 0u;
  const uint32_t bits = __float_as_uint(x);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

// splitmix64's finalizer: every input bit flips about half the output bits.
__device__ __forceinline__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A uniform draw in (0, 1) for `token` of one (seed, step, sequence) stream: 24 random bits.
__device__ __forceinline__ float uniform(uint64_t stream, uint32_t token) {
  const uint64_t h = mix64(stream + 0x9E3779B97F4A7C15ull * (uint64_t(token) + 1));
  return (float(uint32_t(h >> 40)) + 0.5f) * (1.0f / 16777216.0f);
}

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

// Per-block scalars other blocks of the cluster read.
struct Exchange {
  Candidate warp[kWarps];
  Candidate best;   // this block's winner (greedy or the draw)
  float max_value;  // this block's largest logit
  uint32_t prefix;  // the radix selection's state, the same in every block
  unsigned long long remaining;
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

} // namespace sampling

template <int BATCH, int ROWS, int VOCAB, int IDS_LEN, typename T>
__global__ void __cluster_dims__(kSampleTokensCluster, 1, 1) __launch_bounds__(kSampleTokensThreads)
    sample_tokens(const T *logits, const int64_t *input_ids, SamplingState *sampling,
                  uint32_t *seen, int64_t *next_token) {
  static_assert(sample_tokens_supported(BATCH, ROWS, VOCAB, IDS_LEN),
                "sample_tokens: needs 1..65535 sequences, a vocabulary of 2..2^30 whose slices "
                "fit shared memory, and ids");
  using namespace sampling;
  constexpr int kSlice = int(sample_tokens_slice(VOCAB));
  constexpr int kSeenWords = int(sample_tokens_seen_words(VOCAB));
  constexpr int kPerVector = 16 / int(sizeof(T));
  // 16-byte loads when every row (and so every slice) starts 16-byte aligned.
  constexpr bool kVectorLoads = (int64_t(VOCAB) * int64_t(sizeof(T))) % 16 == 0;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  float *values = reinterpret_cast<float *>(shared_raw);
  unsigned long long *local_hist[2] = {
      reinterpret_cast<unsigned long long *>(shared_raw + size_t(kSlice) * 4),
      reinterpret_cast<unsigned long long *>(shared_raw + size_t(kSlice) * 4 + kBins * 8)};
  unsigned long long *merged_hist =
      reinterpret_cast<unsigned long long *>(shared_raw + size_t(kSlice) * 4 + 2 * kBins * 8);
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
  // Seen bits are read through L2 (__ldcg): the atomics above bypass L1.
  auto finish = [&](float v, int token) {
    if (penalize && ((__ldcg(&seen_row[token >> 5]) >> (token & 31)) & 1u))
      v = v > 0.f ? v / penalty : v * penalty;
    return v / temperature;
  };
  if constexpr (kVectorLoads) {
    for (int v = threadIdx.x; v * kPerVector < count; v += kThreads) {
      const uint4 raw = *reinterpret_cast<const uint4 *>(row + first + v * kPerVector);
      const T *lanes = reinterpret_cast<const T *>(&raw);
#pragma unroll
      for (int j = 0; j < kPerVector; ++j)
        if (v * kPerVector + j < count)
          values[v * kPerVector + j] = finish(to_f32(lanes[j]), first + v * kPerVector + j);
    }
  } else {
#pragma unroll 4
    for (int i = threadIdx.x; i < count; i += kThreads) values[i] = finish(to_f32(row[first + i]), first + i);
  }
  __syncthreads();

  int token;
  if (greedy) {
    Candidate c = kNoCandidate;
    c.index = VOCAB; // loses every tie against a real token
    for (int i = threadIdx.x; i < count; i += kThreads)
      if (better(values[i], first + i, c.value, c.index)) c = {values[i], first + i};
    c = block_best(c, x);
    if (threadIdx.x == 0) x.best = c;
    cluster.sync();
    token = cluster_best(cluster, x).index;
  } else {
    // The largest logit, for the probabilities' scale.
    float m = -INFINITY;
    for (int i = threadIdx.x; i < count; i += kThreads) m = fmaxf(m, values[i]);
    m = warp_max(m);
    __syncthreads();
    if (threadIdx.x % 32 == 0) x.warp[threadIdx.x / 32].value = m;
    __syncthreads();
    if (threadIdx.x == 0) {
      float block_m = -INFINITY;
      for (int w = 0; w < kWarps; ++w) block_m = fmaxf(block_m, x.warp[w].value);
      x.max_value = block_m;
    }
    cluster.sync();
    float cluster_m = threadIdx.x % 32 < kCluster
                          ? cluster.map_shared_rank(&x, threadIdx.x % 32)->max_value
                          : -INFINITY;
    const float max_value = warp_max(cluster_m);

    // Radix selection: the largest key t with weight(keys >= t, keys >= floor) >= the target.
    // Every block merges the cluster's histograms and scans them the same way, so all agree.
    int hist_parity = 0;
    auto select = [&](bool by_mass, uint32_t floor_key, unsigned long long count_target,
                      float fraction) {
      uint32_t prefix = 0, prefix_mask = 0;
      unsigned long long remaining = count_target;
      for (int pass = 0; pass < kPasses; ++pass) {
        const int shift = kDigitShift[pass];
        const uint32_t digit_mask = kDigitMask[pass];
        unsigned long long *hist = local_hist[hist_parity];
        hist_parity ^= 1;
        for (int j = threadIdx.x; j < kBins; j += kThreads) hist[j] = 0;
        __syncthreads();
        for (int i = threadIdx.x; i < count; i += kThreads) {
          const float v = values[i];
          const uint32_t key = order_key(v);
          if (key < floor_key || (key & prefix_mask) != prefix) continue;
          const unsigned long long weight =
              by_mass ? (unsigned long long)(expf(v - max_value) * 4294967296.0f) : 1ull;
          if (weight) atomicAdd(&hist[(key >> shift) & digit_mask], weight);
        }
        // Every block's histogram is complete, and every block is done reading the buffer
        // this one reuses two passes on (double buffering: one cluster barrier per pass).
        cluster.sync();
        for (int j = threadIdx.x; j < kBins; j += kThreads) {
          unsigned long long sum = 0;
#pragma unroll
          for (int r = 0; r < kCluster; ++r) sum += cluster.map_shared_rank(hist, r)[j];
          merged_hist[j] = sum;
        }
        __syncthreads();
        if (threadIdx.x < 32) {
          const int lane = threadIdx.x;
          const int top_bin = kBins - 1 - lane * kBinsPerLane; // lane 0: the highest bins
          unsigned long long lane_sum = 0;
          for (int j = 0; j < kBinsPerLane; ++j) lane_sum += merged_hist[top_bin - j];
          unsigned long long above = lane_sum; // inclusive scan from lane 0
          for (int offset = 1; offset < 32; offset *= 2) {
            const unsigned long long other = __shfl_up_sync(~0u, above, offset);
            if (lane >= offset) above += other;
          }
          const unsigned long long total = __shfl_sync(~0u, above, 31);
          if (by_mass && pass == 0) {
            const double want = ceil(double(fraction) * double(total));
            remaining = want < 1.0 ? 1ull : (unsigned long long)want;
          }
          if (remaining > total) remaining = total; // cannot happen; keeps the scan in range
          above -= lane_sum;                        // exclusive: the bins above this lane's
          const unsigned owner =
              __ballot_sync(~0u, above < remaining && remaining <= above + lane_sum);
          if (owner && lane == __ffs(owner) - 1) {
            unsigned long long acc = above;
            int bin = top_bin - (kBinsPerLane - 1);
            for (int j = 0; j < kBinsPerLane; ++j) {
              const unsigned long long h = merged_hist[top_bin - j];
              if (acc + h >= remaining) {
                bin = top_bin - j;
                break;
              }
              acc += h;
            }
            x.prefix = prefix | (uint32_t(bin) << shift);
            x.remaining = remaining - acc;
          } else if (!owner && lane == 0) { // nothing to select (no weight): keep every key
            x.prefix = prefix;
            x.remaining = remaining;
          }
        }
        __syncthreads();
        prefix = x.prefix;
        remaining = x.remaining;
        prefix_mask |= digit_mask << shift;
      }
      return prefix > floor_key ? prefix : floor_key;
    };

    uint32_t threshold = order_key(-INFINITY);
    if (max_value > -INFINITY) {
      if (params.top_k > 0 && params.top_k < VOCAB)
        threshold = select(false, threshold, (unsigned long long)params.top_k, 0.f);
      if (params.top_p > 0.f && params.top_p < 1.f)
        threshold = select(true, threshold, 0ull, params.top_p);
    }
    const uint64_t stream =
        mix64(params.seed + mix64(params.step + mix64(uint64_t(sequence) + 1)));
    Candidate c = kNoCandidate;
    c.index = VOCAB;
    for (int i = threadIdx.x; i < count; i += kThreads) {
      const float v = values[i];
      if (!(v > -INFINITY) || order_key(v) < threshold) continue;
      const float gumbel = v - logf(-logf(uniform(stream, uint32_t(first + i))));
      if (better(gumbel, first + i, c.value, c.index)) c = {gumbel, first + i};
    }
    c = block_best(c, x);
    if (threadIdx.x == 0) x.best = c;
    cluster.sync();
    token = cluster_best(cluster, x).index;
  }

  if (rank == 0 && threadIdx.x == 0) {
    next_token[sequence] = token < VOCAB ? token : 0;
    // The last sequence of the run moves the counter on: every block read it above.
    __threadfence();
    if (atomicAdd(&sampling->blocks_done, 1u) == uint32_t(BATCH - 1)) {
      sampling->blocks_done = 0;
      sampling->step = params.step + 1;
      __threadfence();
    }
  }
  // No block leaves while another may still read its shared memory.
  cluster.sync();
}

} // namespace sinter::kernels
