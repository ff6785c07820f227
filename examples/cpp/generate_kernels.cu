// The device half of `generate`: one greedy step after a model run. A single block finds the
// argmax of the last logits row (the first index among equal maxima, as torch.argmax), writes it
// into the decode entry's input_ids buffer and into the generated-token list, and advances the
// decode entry's cache_position, so the next run needs nothing from the host.
#include "generate_kernels.h"

#include <cuda_fp16.h>

namespace {

constexpr int kThreads = 1024;

__device__ __forceinline__ float load(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __half *p, int64_t i) { return __half2float(p[i]); }
// bf16 as raw bits: the top half of a float.
__device__ __forceinline__ float load(const unsigned short *p, int64_t i) {
  return __uint_as_float(static_cast<unsigned int>(p[i]) << 16);
}

// (a_val, a_idx) beats (b_val, b_idx): larger value, then smaller index. NaN counts as the
// largest value, as in torch.argmax.
__device__ __forceinline__ bool better(float a_val, int64_t a_idx, float b_val, int64_t b_idx) {
  const bool a_nan = a_val != a_val, b_nan = b_val != b_val;
  if (a_nan != b_nan) return a_nan;
  if (!a_nan && a_val != b_val) return a_val > b_val;
  return a_idx < b_idx;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    argmax_step(const T *row, int64_t n, int64_t *ids, int64_t *token_out, int64_t *pos,
                int64_t set_pos) {
  __shared__ float s_val[kThreads];
  __shared__ int64_t s_idx[kThreads];
  float best = -INFINITY;
  int64_t best_i = n;  // loses every tie against a real index
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = load(row, i);
    if (better(v, i, best, best_i)) {
      best = v;
      best_i = i;
    }
  }
  s_val[threadIdx.x] = best;
  s_idx[threadIdx.x] = best_i;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
      const int o = threadIdx.x + stride;
      if (better(s_val[o], s_idx[o], s_val[threadIdx.x], s_idx[threadIdx.x])) {
        s_val[threadIdx.x] = s_val[o];
        s_idx[threadIdx.x] = s_idx[o];
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const int64_t token = s_idx[0] < n ? s_idx[0] : 0;
    *ids = token;
    *token_out = token;
    *pos = set_pos >= 0 ? set_pos : *pos + 1;
  }
}

} // namespace

cudaError_t launch_argmax_step(const void *row, LogitsType type, int64_t n, int64_t *ids,
                               int64_t *token_out, int64_t *pos, int64_t set_pos,
                               cudaStream_t stream) {
  if (n <= 0) return cudaErrorInvalidValue;
  switch (type) {
  case LogitsType::f32:
    argmax_step<<<1, kThreads, 0, stream>>>(static_cast<const float *>(row), n, ids, token_out,
                                            pos, set_pos);
    break;
  case LogitsType::f16:
    argmax_step<<<1, kThreads, 0, stream>>>(static_cast<const __half *>(row), n, ids, token_out,
                                            pos, set_pos);
    break;
  case LogitsType::bf16:
    argmax_step<<<1, kThreads, 0, stream>>>(static_cast<const unsigned short *>(row), n, ids,
                                            token_out, pos, set_pos);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}
