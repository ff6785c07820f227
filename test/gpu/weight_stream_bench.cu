// Weight streaming bandwidth in linear_small_m's access pattern (not a test: it checks
// nothing). 525 MB of 16-row tiles of K = 2048 bf16 (the 1B LM head), 264 blocks of 8 warps,
// two steps of 8 16-byte loads per lane in flight. Each lane reads 64 bytes of a row per pair
// of load instructions, so a warp's instruction covers half of 16 rows' 128-byte lines:
//   stream      detail::ld_stream16 (what the kernels use)
//   stream_cp   detail::cp_async16_stream into lane-private shared-memory slots
//   no_alloc    the hints used before: L1::no_allocate, L2::256B, evict-first (and the cp.async
//               twin: .cg with the same L2 hints)
//   coalesced   plain loads of 512 contiguous bytes per warp instruction (the ceiling)
// and the LM head linear_small_m launch alone, back to back under PDL. Prints GB/s and the
// share of the D2D copy bandwidth.
#include <cuda_runtime.h>

#include <cstdio>

#include "gpu_test_util.h"
#include "linear_small_m.cuh"

using namespace sinter::kernels;

namespace {

constexpr int K = 2048, WARPS = 8, STEPS = 2, L = 8, THREADS = WARPS * 32, BLOCKS = 264;
constexpr int NTILES = 8016; // 128256 rows
constexpr int kCalls = 20;    // back-to-back calls per timed run

enum class Load { STREAM, NO_ALLOC, COALESCED };

__device__ __forceinline__ uint4 ld_no_alloc(const void *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0, %1, %2, %3}, "
               "[%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(detail::weight_l2_policy()));
  return v;
}
__device__ __forceinline__ void cp_cg(void *smem, const void *g) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global.L2::cache_hint.L2::256B [%0], [%1], 16, %2;" ::"r"(s),
               "l"(g), "l"(detail::weight_l2_policy())
               : "memory");
}

// Lane (g, t) of warp w, step s of a tile: rows g and g + 8, k = (s * WARPS + w) * 128 + c * 64
// + {0, 32} + t * 8 for c = 0, 1 (linear_small_m's copy_item / load).
__device__ __forceinline__ const bf16 *row_base(const bf16 *w, int tile, int s) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  return w + size_t(tile * 16 + (lane >> 2)) * K + (s * WARPS + warp) * 128 + (lane & 3) * 8;
}

template <Load LOAD> __global__ void __launch_bounds__(THREADS, 2)
    stream(const bf16 *w, uint32_t *sink) {
  uint32_t acc = 0;
  for (int tile = blockIdx.x; tile < NTILES; tile += gridDim.x) {
    uint4 v[STEPS][L];
#pragma unroll
    for (int s = 0; s < STEPS; ++s) {
      const bf16 *r0 = row_base(w, tile, s), *r1 = r0 + size_t(8) * K;
      const uint4 *flat = reinterpret_cast<const uint4 *>(w) +
                          ((size_t(tile) * STEPS + s) * WARPS + (threadIdx.x >> 5)) * (L * 32) +
                          (threadIdx.x & 31);
#pragma unroll
      for (int j = 0; j < L; ++j) {
        const bf16 *p = (j & 2 ? r1 : r0) + (j >> 2) * 64 + (j & 1) * 32;
        if constexpr (LOAD == Load::STREAM) v[s][j] = detail::ld_stream16(p);
        else if constexpr (LOAD == Load::NO_ALLOC) v[s][j] = ld_no_alloc(p);
        else v[s][j] = __ldg(flat + j * 32);
      }
    }
#pragma unroll
    for (int s = 0; s < STEPS; ++s)
#pragma unroll
      for (int j = 0; j < L; ++j) acc += v[s][j].x ^ v[s][j].y ^ v[s][j].z ^ v[s][j].w;
  }
  if (acc == 0x12345678u) *sink = acc;
}

template <bool CURRENT> __global__ void __launch_bounds__(THREADS, 2)
    stream_cp(const bf16 *w, uint32_t *sink) {
  extern __shared__ uint4 slots[]; // [STEPS][L][THREADS]
  uint32_t acc = 0;
  for (int tile = blockIdx.x; tile < NTILES; tile += gridDim.x) {
#pragma unroll
    for (int s = 0; s < STEPS; ++s) {
      const bf16 *r0 = row_base(w, tile, s), *r1 = r0 + size_t(8) * K;
#pragma unroll
      for (int j = 0; j < L; ++j) {
        const bf16 *p = (j & 2 ? r1 : r0) + (j >> 2) * 64 + (j & 1) * 32;
        uint4 *dst = slots + (s * L + j) * THREADS + threadIdx.x;
        if constexpr (CURRENT) detail::cp_async16_stream(dst, p);
        else cp_cg(dst, p);
      }
      detail::cp_async_commit();
    }
    detail::cp_async_wait<0>();
#pragma unroll
    for (int j = 0; j < STEPS * L; ++j) {
      const uint4 v = slots[j * THREADS + threadIdx.x];
      acc += v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  if (acc == 0x12345678u) *sink = acc;
}

} // namespace

int main() {
  if (!gputest::have_device()) return 77;
  const double copy = gputest::copy_bandwidth();
  const size_t bytes = size_t(NTILES) * 16 * K * 2;
  bf16 *w = nullptr;
  uint32_t *sink = nullptr;
  CUDA_CHECK(cudaMalloc(&w, bytes));
  CUDA_CHECK(cudaMalloc(&sink, 4));
  CUDA_CHECK(cudaMemset(w, 0x3c, bytes));
  std::printf("copy %.0f GB/s; %.1f MB of weights, %d blocks of %d threads\n", copy / 1e9,
              bytes / 1e6, BLOCKS, THREADS);
  auto report = [&](const char *name, double ms) {
    std::printf("%-44s %8.2f us  %5.0f GB/s  %5.1f %% of copy\n", name, ms * 1e3,
                bytes / (ms * 1e-3) / 1e9, 100.0 * bytes / (ms * 1e-3) / copy);
  };
  report("registers, ld_stream16",
         gputest::median_ms([&] { stream<Load::STREAM><<<BLOCKS, THREADS>>>(w, sink); }, kCalls));
  report("registers, no_allocate + L2::256B (before)",
         gputest::median_ms([&] { stream<Load::NO_ALLOC><<<BLOCKS, THREADS>>>(w, sink); }, kCalls));
  report("registers, coalesced (ceiling)",
         gputest::median_ms([&] { stream<Load::COALESCED><<<BLOCKS, THREADS>>>(w, sink); }, kCalls));
  constexpr int SMEM = STEPS * L * THREADS * 16;
  CUDA_CHECK(cudaFuncSetAttribute(stream_cp<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  CUDA_CHECK(cudaFuncSetAttribute(stream_cp<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  report("shared memory, cp_async16_stream",
         gputest::median_ms([&] { stream_cp<true><<<BLOCKS, THREADS, SMEM>>>(w, sink); }, kCalls));
  report("shared memory, cp.async.cg + L2::256B (before)",
         gputest::median_ms([&] { stream_cp<false><<<BLOCKS, THREADS, SMEM>>>(w, sink); }, kCalls));
  CUDA_CHECK(cudaGetLastError());

  // The LM head launch itself (RMS prologue, 128256 x 2048), back to back under PDL.
  constexpr int kVocab = NTILES * 16, kHidden = K;
  auto *lm_head = &linear_small_m<1, kVocab, kHidden, LinearPrologue::RMS_NORM,
                                  LinearEpilogue::NONE, bf16, 925353388u, 0, 0, 132, bf16>;
  bf16 *x = nullptr, *norm = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&x, kHidden * 2));
  CUDA_CHECK(cudaMalloc(&norm, kHidden * 2));
  CUDA_CHECK(cudaMalloc(&out, kVocab * 2));
  CUDA_CHECK(cudaMemset(x, 0x3c, kHidden * 2));
  CUDA_CHECK(cudaMemset(norm, 0x3c, kHidden * 2));
  const LaunchParams lp = linear_small_m_launch(1, kVocab, kHidden, LinearPrologue::RMS_NORM, 132);
  const bf16 *none = nullptr;
  uint32_t *no_count = nullptr;
  bf16 *no_x = nullptr;
  report("linear_small_m LM head launch", gputest::median_ms([&] {
           CUDA_CHECK(gputest::launch_pdl(lm_head, lp, 0, (const bf16 *)x, (const bf16 *)w,
                                          (const bf16 *)norm, none, none, none, none, out,
                                          no_count, no_x, no_count, (const float *)nullptr,
                                          (const uint8_t *)nullptr, none, (bf16 *)nullptr));
         }, kCalls));
  CUDA_CHECK(cudaDeviceSynchronize());
  return 0;
}
