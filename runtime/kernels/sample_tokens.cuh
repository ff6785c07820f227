// Picks each sequence's next token from its last logits row on the device, so a decode loop
// never returns to the host between tokens. Semantics, argument order and limits:
// launch_params.h ("sample_tokens"); launch: sample_tokens_launch(...).
//
// Nothing is sorted. The top-k and top-p thresholds are found by radix selection over
// order-preserving keys of the (penalized, temperature-scaled) logits, 11 bits per pass,
// counting tokens for top-k and summing probability mass for top-p. Mass is summed in 32.32
// fixed point in 64-bit integers, so the sums, and so the kept set, do not depend on the order
// in which the atomics land: the same seed gives the same tokens in every run. The draw is
// Gumbel-max (the argmax of x + Gumbel noise over the kept tokens is distributed as their
// softmax): one more pass, no prefix sums.
#pragma once

#include "kernel_common.cuh"

#include <cuda_fp16.h>

namespace sinter::kernels {
namespace sampling {

constexpr int kThreads = kSampleTokensThreads;
constexpr int kWarps = kThreads / 32;
static_assert(kWarps == 32, "block reductions finish in one warp");
constexpr int kBins = 1 << 11;
constexpr int kBinsPerLane = kBins / 32;
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

struct Shared {
  unsigned long long hist[kBins];
  float warp_val[kWarps];
  int warp_idx[kWarps];
  uint32_t prefix;
  unsigned long long remaining;
};

// The winning (value, index) of the block, returned to every thread.
__device__ int block_argmax(float val, int idx, Shared &s) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other_val = __shfl_xor_sync(~0u, val, offset);
    const int other_idx = __shfl_xor_sync(~0u, idx, offset);
    if (better(other_val, other_idx, val, idx)) val = other_val, idx = other_idx;
  }
  __syncthreads(); // the previous reduction's readers are done with warp_val / warp_idx
  if (lane == 0) s.warp_val[warp] = val, s.warp_idx[warp] = idx;
  __syncthreads();
  val = s.warp_val[lane];
  idx = s.warp_idx[lane];
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other_val = __shfl_xor_sync(~0u, val, offset);
    const int other_idx = __shfl_xor_sync(~0u, idx, offset);
    if (better(other_val, other_idx, val, idx)) val = other_val, idx = other_idx;
  }
  return idx;
}

// The largest of every thread's `val` (NaN ignored), returned to every thread.
__device__ float block_max(float val, Shared &s) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int offset = 16; offset > 0; offset /= 2) val = fmaxf(val, __shfl_xor_sync(~0u, val, offset));
  __syncthreads();
  if (lane == 0) s.warp_val[warp] = val;
  __syncthreads();
  val = s.warp_val[lane];
  for (int offset = 16; offset > 0; offset /= 2) val = fmaxf(val, __shfl_xor_sync(~0u, val, offset));
  return val;
}

// The largest key t such that the tokens with keys >= t (among those >= floor_key) weigh at
// least the target: one per token with target `count` (top-k), or the 32.32 fixed-point
// probability exp(x - max) with target ceil(fraction * total) (top-p). Three radix passes; the
// histogram is scanned from the top by warp 0, 64 bins per lane.
template <int VOCAB, bool BY_MASS, typename ValueFn>
__device__ uint32_t select_threshold(ValueFn value, float max_value, uint32_t floor_key,
                                     unsigned long long count, float fraction, Shared &s) {
  const int lane = threadIdx.x % 32;
  uint32_t prefix = 0, prefix_mask = 0;
  unsigned long long remaining = count;
  for (int pass = 0; pass < kPasses; ++pass) {
    const int shift = kDigitShift[pass];
    const uint32_t digit_mask = kDigitMask[pass];
    for (int j = threadIdx.x; j < kBins; j += kThreads) s.hist[j] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < VOCAB; i += kThreads) {
      const float x = value(i);
      const uint32_t key = order_key(x);
      if (key < floor_key || (key & prefix_mask) != prefix) continue;
      const unsigned long long weight =
          BY_MASS ? (unsigned long long)(expf(x - max_value) * 4294967296.0f) : 1ull;
      if (weight) atomicAdd(&s.hist[(key >> shift) & digit_mask], weight);
    }
    __syncthreads();
    if (threadIdx.x < 32) {
      // Lane 0 holds the highest 64 bins, lane 31 the lowest.
      const int top_bin = kBins - 1 - lane * kBinsPerLane;
      unsigned long long lane_sum = 0;
      for (int j = 0; j < kBinsPerLane; ++j) lane_sum += s.hist[top_bin - j];
      unsigned long long above = lane_sum; // inclusive scan from lane 0
      for (int offset = 1; offset < 32; offset *= 2) {
        const unsigned long long other = __shfl_up_sync(~0u, above, offset);
        if (lane >= offset) above += other;
      }
      const unsigned long long total = __shfl_sync(~0u, above, 31);
      if (BY_MASS && pass == 0) {
        const double want = ceil(double(fraction) * double(total));
        remaining = want < 1.0 ? 1ull : (unsigned long long)want;
      }
      if (remaining > total) remaining = total; // cannot happen; keeps the scan in range
      above -= lane_sum;                        // exclusive: the bins above this lane's
      const unsigned owner = __ballot_sync(~0u, above < remaining && remaining <= above + lane_sum);
      if (owner && lane == __ffs(owner) - 1) {
        unsigned long long acc = above;
        int bin = top_bin - (kBinsPerLane - 1);
        for (int j = 0; j < kBinsPerLane; ++j) {
          const unsigned long long h = s.hist[top_bin - j];
          if (acc + h >= remaining) {
            bin = top_bin - j;
            break;
          }
          acc += h;
        }
        s.prefix = prefix | (uint32_t(bin) << shift);
        s.remaining = remaining - acc;
      } else if (!owner && lane == 0) { // nothing to select (no weight): keep every key
        s.prefix = prefix;
        s.remaining = remaining;
      }
    }
    __syncthreads();
    prefix = s.prefix;
    remaining = s.remaining;
    prefix_mask |= digit_mask << shift;
  }
  return prefix > floor_key ? prefix : floor_key;
}

} // namespace sampling

template <int BATCH, int ROWS, int VOCAB, int IDS_LEN, typename T>
__global__ void __launch_bounds__(kSampleTokensThreads)
    sample_tokens(const T *logits, const int64_t *input_ids, SamplingState *sampling,
                  uint32_t *seen, int64_t *next_token) {
  static_assert(sample_tokens_supported(BATCH, ROWS, VOCAB, IDS_LEN),
                "sample_tokens: needs 1..65535 sequences, a vocabulary of 2..2^30 and ids");
  using namespace sampling;
  constexpr int kSeenWords = int(sample_tokens_seen_words(VOCAB));
  __shared__ Shared s;
  detail::pdl_launch_dependents();
  detail::pdl_wait();
  const int sequence = blockIdx.x;
  const T *row = logits + (size_t(sequence) * ROWS + (ROWS - 1)) * VOCAB;
  uint32_t *seen_row = seen + size_t(sequence) * kSeenWords;
  const SamplingState params = *sampling;

  for (int i = threadIdx.x; i < IDS_LEN; i += kThreads) {
    const int64_t id = input_ids[size_t(sequence) * IDS_LEN + i];
    if (id >= 0 && id < VOCAB) atomicOr(&seen_row[id >> 5], 1u << (id & 31));
  }
  __syncthreads();

  const float penalty = params.repetition_penalty;
  const bool penalize = penalty > 0.f && penalty != 1.f;
  const bool greedy = !(params.temperature > 0.f);
  const float temperature = greedy ? 1.f : params.temperature;
  // The logit of token i as Hugging Face's processors leave it: repetition penalty, then
  // temperature. Seen bits are read through L2 (__ldcg): the atomics above bypass L1.
  auto value = [&](int i) {
    float x = to_f32(row[i]);
    if (penalize && ((__ldcg(&seen_row[i >> 5]) >> (i & 31)) & 1u)) x = x > 0.f ? x / penalty : x * penalty;
    return x / temperature;
  };

  int token;
  if (greedy) {
    float best = -INFINITY;
    int best_index = VOCAB; // loses every tie against a real token
    for (int i = threadIdx.x; i < VOCAB; i += kThreads) {
      const float x = value(i);
      if (better(x, i, best, best_index)) best = x, best_index = i;
    }
    token = block_argmax(best, best_index, s);
  } else {
    float max_value = -INFINITY;
    for (int i = threadIdx.x; i < VOCAB; i += kThreads) max_value = fmaxf(max_value, value(i));
    max_value = block_max(max_value, s);
    uint32_t threshold = order_key(-INFINITY);
    if (max_value > -INFINITY) {
      if (params.top_k > 0 && params.top_k < VOCAB)
        threshold = select_threshold<VOCAB, false>(value, max_value, threshold,
                                                   (unsigned long long)params.top_k, 0.f, s);
      if (params.top_p > 0.f && params.top_p < 1.f)
        threshold = select_threshold<VOCAB, true>(value, max_value, threshold, 0ull,
                                                  params.top_p, s);
    }
    const uint64_t stream =
        mix64(params.seed + mix64(params.step + mix64(uint64_t(sequence) + 1)));
    float best = -INFINITY;
    int best_index = VOCAB;
    for (int i = threadIdx.x; i < VOCAB; i += kThreads) {
      const float x = value(i);
      if (!(x > -INFINITY) || order_key(x) < threshold) continue;
      const float gumbel = x - logf(-logf(uniform(stream, uint32_t(i))));
      if (better(gumbel, i, best, best_index)) best = gumbel, best_index = i;
    }
    token = block_argmax(best, best_index, s);
  }

  if (threadIdx.x == 0) {
    next_token[sequence] = token < VOCAB ? token : 0;
    // The last block of the run moves the counter on: every block read it above.
    __threadfence();
    if (atomicAdd(&sampling->blocks_done, 1u) == uint32_t(BATCH - 1)) {
      sampling->blocks_done = 0;
      sampling->step = params.step + 1;
      __threadfence();
    }
  }
}

} // namespace sinter::kernels
