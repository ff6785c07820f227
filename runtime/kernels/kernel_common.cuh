// Small device helpers shared by the kernels in runtime/kernels/. Header-only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include <type_traits>

#include "launch_params.h"

namespace sinter::kernels {

using bf16 = __nv_bfloat16;

namespace detail {

// Gemma 2's attention soft-cap in the log2 domain the attention kernels' scores live in: a
// score x = s * scale * log2(e) becomes log2(e) * cap * tanh(s * scale / cap), which is
// c * tanh(x / c) with c = cap * log2(e). SOFTCAP_BITS 0: no cap.
template <uint32_t SOFTCAP_BITS> __device__ __forceinline__ float soft_capped_log2_score(float x) {
  if constexpr (SOFTCAP_BITS == 0u) {
    return x;
  } else {
    const float cap = __uint_as_float(SOFTCAP_BITS) * 1.4426950408889634f;
    return cap * tanhf(x * (1.f / cap));
  }
}
// Whether a float's bits are a finite value >= 0 (a soft-cap: 0 for none, or a scale).
__host__ __device__ constexpr bool float_bits_nonnegative_finite(uint32_t bits) {
  return (bits >> 31) == 0 && (bits & 0x7f800000u) != 0x7f800000u;
}

// 16-byte load of data that is read once (weights), through the read-only path.
// linear_small_m's lanes read each 128-byte line of a weight row as two halves, one per load
// instruction. Loads that allocate in L1 merge the two halves into one line request, and the
// L2::128B hint fetches the whole line from DRAM at once. On the H200, in that access pattern
// (test/gpu/weight_stream_bench), 525 MB stream at 4.46 TB/s, as fast as fully coalesced
// loads, against 3.95 with the earlier L1::no_allocate + L2::256B; the decode step of
// test/gpu/decode_chain_bench went from 0.667 to 0.641 ms (p = 127).
// Weights also go through the L2 as evict-first lines: a decode step streams 2.5 GB of them
// through a 50 MB L2 once each, and at normal priority they evicted what is read again (the
// activations, the KV cache rows, the norm weights) for the launches' dependent loads
// (test/gpu/decode_chain_bench: -3.1 % per step at p = 127, -3.3 % at p = 1023).
// SINTER_KERNELS_WEIGHT_EVICT_FIRST=0 drops that policy (experiments only).
#ifndef SINTER_KERNELS_WEIGHT_EVICT_FIRST
#define SINTER_KERNELS_WEIGHT_EVICT_FIRST 1
#endif
__device__ __forceinline__ uint64_t weight_l2_policy() {
  uint64_t pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ uint4 ld_stream16(const void *p) {
  uint4 v;
#if SINTER_KERNELS_WEIGHT_EVICT_FIRST
  asm volatile("ld.global.nc.L2::cache_hint.L2::128B.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(weight_l2_policy()));
#else
  asm volatile("ld.global.nc.L2::128B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
#endif
  return v;
}
// 16-byte load through the read-only path: only for weights (never written while any kernel
// runs). Activations use plain loads: under PDL the previous kernel may still be writing them
// until griddepcontrol.wait returns.
__device__ __forceinline__ uint4 ld_ro16(const void *p) {
  return __ldg(reinterpret_cast<const uint4 *>(p));
}
__device__ __forceinline__ uint4 ld16(const void *p) { return *reinterpret_cast<const uint4 *>(p); }
__device__ __forceinline__ void st16(void *p, uint4 v) { *reinterpret_cast<uint4 *>(p) = v; }

// bf16 pair <-> fp32 (the low half holds the lower-addressed element).
__device__ __forceinline__ float bf16_lo(uint32_t v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t v) { return __uint_as_float(v & 0xffff0000u); }
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&h);
}
__device__ __forceinline__ float round_bf16(float f) {
  return __bfloat162float(__float2bfloat16_rn(f));
}

template <typename T> __device__ __forceinline__ T from_float(float f);
template <> __device__ __forceinline__ float from_float<float>(float f) { return f; }
template <> __device__ __forceinline__ bf16 from_float<bf16>(float f) {
  return __float2bfloat16_rn(f);
}
__device__ __forceinline__ float to_float(float f) { return f; }
__device__ __forceinline__ float to_float(bf16 f) { return __bfloat162float(f); }

// Rounds to the storage type T (identity for float).
template <typename T> __device__ __forceinline__ float round_to(float f) {
  return to_float(from_float<T>(f));
}

// cp.async: 16-byte global -> shared copies that bypass registers and L1.
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
// Weights into shared memory, with ld_stream16's policy: through L1 (.ca), so that a line's
// two halves merge into one request, the L2::128B hint and evict-first lines.
__device__ __forceinline__ void cp_async16_stream(void *smem, const void *gmem) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
#if SINTER_KERNELS_WEIGHT_EVICT_FIRST
  asm volatile("cp.async.ca.shared.global.L2::cache_hint.L2::128B [%0], [%1], 16, %2;" ::"r"(s),
               "l"(gmem), "l"(weight_l2_policy())
               : "memory");
#else
  asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 16;" ::"r"(s), "l"(gmem)
               : "memory");
#endif
}
// cp_async16_stream without the evict-first hint. linear_small_m's fp8 weight copies (4 chunks
// a step) with the hint stopped with "illegal instruction" on the H200 (CUDA 13.0, driver
// 580; compute-sanitizer points at the copy) while the same copies without it, and the bf16
// copies with it, run; so fp8 copies go without it.
__device__ __forceinline__ void cp_async16_stream_no_hint(void *smem, const void *gmem) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 16;" ::"r"(s), "l"(gmem)
               : "memory");
}
// cp.async that writes zeros past the first src_bytes (0 or 16) bytes: rows past the end
// of a range stay finite without a branch around the copy.
__device__ __forceinline__ void cp_async16_zfill(void *smem, const void *gmem, uint32_t src_bytes) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(gmem), "r"(src_bytes)
               : "memory");
}
// 8 bytes (cp.async.cg takes only 16): through L1, as .ca does for 4 and 8.
__device__ __forceinline__ void cp_async8_zfill(void *smem, const void *gmem, uint32_t src_bytes) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(s), "l"(gmem), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
// Waits until at most n of this thread's committed groups are pending (n > 7: at most 7).
__device__ __forceinline__ void cp_async_wait_dyn(int n) {
  switch (n) {
  case 0: cp_async_wait<0>(); break;
  case 1: cp_async_wait<1>(); break;
  case 2: cp_async_wait<2>(); break;
  case 3: cp_async_wait<3>(); break;
  case 4: cp_async_wait<4>(); break;
  case 5: cp_async_wait<5>(); break;
  case 6: cp_async_wait<6>(); break;
  default: cp_async_wait<7>(); break;
  }
}

// 2^t in one special-function-unit instruction (exp2f adds a denormal range check around
// it); results below 2^-126 are 0.
__device__ __forceinline__ float exp2_ftz(float t) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(t));
  return y;
}

// Tensor-core products (bf16 inputs, fp32 accumulation) and their operand loads.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], uint32_t a0, uint32_t a1,
                                               uint32_t a2, uint32_t a3, uint32_t b0,
                                               uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// acc += A(16 rows: ra for row g, rb for row g+8; 8 k each) x B(8 k of x row g: xb).
// The thread's 8 k values are split into two MMAs: elements 0-3 then 4-7; within each, the
// MMA's logical k pair (2t, 2t+1) takes elements (0,1) and pair (2t+8, 2t+9) elements (2,3).
__device__ __forceinline__ void mma_16x8(float (&acc)[4], const uint4 &ra, const uint4 &rb,
                                         const uint4 &xb) {
  mma_bf16_16816(acc, ra.x, rb.x, ra.y, rb.y, xb.x, xb.y);
  mma_bf16_16816(acc, ra.z, rb.z, ra.w, rb.w, xb.z, xb.w);
}

__device__ __forceinline__ void mma_f16_16816(float (&d)[4], uint32_t a0, uint32_t a1,
                                              uint32_t a2, uint32_t a3, uint32_t b0,
                                              uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Four 8x8 16-bit matrices from shared memory: lane i gives the address of row i % 8 of
// matrix i / 8 (16 contiguous bytes); r[j] holds matrix j's row lane / 4, elements
// 2 (lane % 4) and 2 (lane % 4) + 1: an A fragment quarter of mma.m16n8k16, or a B fragment
// half when the matrix rows are n and its columns k.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void *row) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

// Four 8x8 bf16 matrices from shared memory, transposed: lane i gives the address of row i % 8
// of matrix i / 8 (16 contiguous bytes); r[j] is matrix j's B fragment of mma.m16n8k16 when
// the matrix rows are k and its columns n.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void *row) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

// Programmatic dependent launch (sm_90). Without the launch attribute both are no-ops.
// launch_dependents lets the next kernel in the stream start (its blocks run up to their
// wait); wait blocks until the previous kernel has completed and its writes are visible.
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Handoff between two launches through the context state (linear_small_m, "Handoff" in
// launch_params.h): relaxed gpu-scope counter operations, volatile 16-byte loads, and a
// bounded wait (on the globaltimer, ns; BlockTrace reads it too) that traps instead of
// hanging when a pairing is broken.
__device__ __forceinline__ void red_add_relaxed(uint32_t *p, uint32_t v) {
  asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t ld_relaxed(const uint32_t *p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint4 ld_volatile16(const void *p) {
  return __ldcv(reinterpret_cast<const uint4 *>(p));
}
__device__ __forceinline__ bool has_zero_half(const uint4 &v) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  bool z = false;
#pragma unroll
  for (int i = 0; i < 4; ++i) z |= (w[i] & 0xFFFFu) == 0u || (w[i] >> 16) == 0u;
  return z;
}
constexpr unsigned long long kHandoffTimeoutNs = 2000000000ull;
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Thread 0 waits until *count >= target; then the whole block goes on.
__device__ __forceinline__ void handoff_wait(const uint32_t *count, uint32_t target) {
  if (threadIdx.x == 0) {
    const unsigned long long t0 = global_ns();
    while (ld_relaxed(count) < target) {
      if (global_ns() - t0 > kHandoffTimeoutNs) __trap();
      __nanosleep(64);
    }
  }
  __syncthreads();
}

// Asks the L2 for [p, p + bytes) (16-byte aligned, bytes a multiple of 16): a hint that
// neither reads into registers nor orders anything, so it may run before griddepcontrol.wait.
__device__ __forceinline__ void prefetch_l2(const void *p, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}

// Block timeline probes for test/gpu/decode_chain_bench.cu, compiled in only with
// -DSINTER_TRACE (otherwise an empty object): thread 0 of each block records its SM and the
// globaltimer (ns) at start, at release from the dependency wait and at exit, and up to
// kTraceMarks points inside the kernel (mark(i): SM clock cycles since the release, 0 = not
// reached).
#ifdef SINTER_TRACE
constexpr int kTraceMarks = 4;
struct TraceRecord {
  unsigned long long start, waited, end;
  uint32_t smid, block, grid, threads;
  uint32_t marks[kTraceMarks];
};
constexpr uint32_t kTraceCapacity = 1u << 17;
__device__ TraceRecord trace_records[kTraceCapacity];
__device__ uint32_t trace_count;
struct BlockTrace {
  unsigned long long start = 0, waited_at = 0;
  long long waited_clock = 0;
  uint32_t marks[kTraceMarks] = {};
  __device__ BlockTrace() {
    if (threadIdx.x == 0) start = global_ns();
  }
  __device__ void waited() {
    if (threadIdx.x == 0) {
      waited_at = global_ns();
      waited_clock = clock64();
    }
  }
  __device__ void mark(int i) {
    if (threadIdx.x == 0) marks[i] = uint32_t(clock64() - waited_clock);
  }
  __device__ ~BlockTrace() {
    if (threadIdx.x != 0) return;
    uint32_t smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    const uint32_t i = atomicAdd(&trace_count, 1u);
    if (i < kTraceCapacity)
      trace_records[i] = {start,
                          waited_at,
                          global_ns(),
                          smid,
                          blockIdx.x + blockIdx.y * gridDim.x,
                          gridDim.x * gridDim.y * gridDim.z,
                          blockDim.x,
                          {marks[0], marks[1], marks[2], marks[3]}};
  }
};
#else
struct BlockTrace {
  __device__ void waited() {}
  __device__ void mark(int) {}
};
#endif

// RMSNorm on 8 packed bf16 (HF LlamaRMSNorm's rounding), shared by rms_norm and the
// linear_small_m prologue: ss += x^2 over the 8 values, then
// out = bf16(w * bf16(x * r)) with r = rsqrt(mean(x^2) + eps).
__device__ __forceinline__ float sum_squares_bf16x8(const uint4 &v, float ss) {
  const uint32_t *u = reinterpret_cast<const uint32_t *>(&v);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float a = bf16_lo(u[j]), b = bf16_hi(u[j]);
    ss = fmaf(a, a, ss);
    ss = fmaf(b, b, ss);
  }
  return ss;
}
__device__ __forceinline__ uint4 rms_scale_bf16x8(const uint4 &v, const uint4 &w, float r) {
  const uint32_t *u = reinterpret_cast<const uint32_t *>(&v);
  const uint32_t *wu = reinterpret_cast<const uint32_t *>(&w);
  uint4 o;
  uint32_t *ou = reinterpret_cast<uint32_t *>(&o);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float a = round_bf16(bf16_lo(u[j]) * r);
    const float b = round_bf16(bf16_hi(u[j]) * r);
    ou[j] = pack_bf16x2(bf16_lo(wu[j]) * a, bf16_hi(wu[j]) * b);
  }
  return o;
}

// 8 packed bf16 normalized and scaled by fp32 weights (w0: elements 0-3, w1: 4-7) with one
// rounding, out = bf16(w * (x * r)) (Gemma's and OLMo 2's RMSNorm, whose weight multiply runs
// in fp32).
__device__ __forceinline__ uint4 rms_scale_bf16x8_f32w(const uint4 &v, const uint4 &w0,
                                                       const uint4 &w1, float r) {
  const uint32_t *u = reinterpret_cast<const uint32_t *>(&v);
  const float w[8] = {__uint_as_float(w0.x), __uint_as_float(w0.y), __uint_as_float(w0.z),
                      __uint_as_float(w0.w), __uint_as_float(w1.x), __uint_as_float(w1.y),
                      __uint_as_float(w1.z), __uint_as_float(w1.w)};
  uint4 o;
  uint32_t *ou = reinterpret_cast<uint32_t *>(&o);
#pragma unroll
  for (int j = 0; j < 4; ++j)
    ou[j] = pack_bf16x2(w[2 * j] * (bf16_lo(u[j]) * r), w[2 * j + 1] * (bf16_hi(u[j]) * r));
  return o;
}
// bf16(a + b) for 8 bf16 pairs, the sum in fp32 (a residual add).
__device__ __forceinline__ uint4 add_bf16x8(const uint4 &a, const uint4 &b) {
  const uint32_t *au = reinterpret_cast<const uint32_t *>(&a);
  const uint32_t *bu = reinterpret_cast<const uint32_t *>(&b);
  uint4 o;
  uint32_t *ou = reinterpret_cast<uint32_t *>(&o);
#pragma unroll
  for (int j = 0; j < 4; ++j)
    ou[j] = pack_bf16x2(bf16_lo(au[j]) + bf16_lo(bu[j]), bf16_hi(au[j]) + bf16_hi(bu[j]));
  return o;
}

// LayerNorm's passes over 8 bf16 values: their sum, their squares about `mean`, and
// (x - mean) * r * scale + shift rounded once (scale and shift fp32, 4 a vector).
__device__ __forceinline__ float sum_bf16x8(const uint4 &v, float s) {
  const uint32_t *u = reinterpret_cast<const uint32_t *>(&v);
#pragma unroll
  for (int j = 0; j < 4; ++j) s += bf16_lo(u[j]) + bf16_hi(u[j]);
  return s;
}
__device__ __forceinline__ float sum_centered_squares_bf16x8(const uint4 &v, float mean,
                                                            float ss) {
  const uint32_t *u = reinterpret_cast<const uint32_t *>(&v);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float a = bf16_lo(u[j]) - mean, b = bf16_hi(u[j]) - mean;
    ss = fmaf(a, a, ss);
    ss = fmaf(b, b, ss);
  }
  return ss;
}
__device__ __forceinline__ uint4 layer_norm_bf16x8(const uint4 &v, float mean, float r,
                                                   const uint4 &scale0, const uint4 &scale1,
                                                   const uint4 &shift0, const uint4 &shift1) {
  const uint32_t *u = reinterpret_cast<const uint32_t *>(&v);
  const uint32_t sc[8] = {scale0.x, scale0.y, scale0.z, scale0.w,
                          scale1.x, scale1.y, scale1.z, scale1.w};
  const uint32_t sh[8] = {shift0.x, shift0.y, shift0.z, shift0.w,
                          shift1.x, shift1.y, shift1.z, shift1.w};
  uint4 o;
  uint32_t *ou = reinterpret_cast<uint32_t *>(&o);
#pragma unroll
  for (int j = 0; j < 4; ++j)
    ou[j] = pack_bf16x2(
        fmaf((bf16_lo(u[j]) - mean) * r, __uint_as_float(sc[2 * j]), __uint_as_float(sh[2 * j])),
        fmaf((bf16_hi(u[j]) - mean) * r, __uint_as_float(sc[2 * j + 1]),
             __uint_as_float(sh[2 * j + 1])));
  return o;
}

// GeGLU's gate activation in fp32, as g * sigmoid(2u) = 0.5 g (1 + tanh(u)): no cancellation,
// and exp(-2u) overflowing to inf for very negative u gives the right limit, 0.
__device__ __forceinline__ float gelu_tanh(float g) {
  const float u = 0.79788456080286535588f * (g + 0.044715f * g * g * g);
  return g / (1.f + expf(-2.f * u));
}

// The exact GeLU in fp32, as the generated kernels' fn_gelu evaluates it.
__device__ __forceinline__ float gelu_erf(float g) {
  return 0.5f * g * (1.f + erff(g * 0.70710678118654752f));
}

// The fp32 counterparts for fp32 activations (4 packed floats): no rounding,
// out = w * (x * r).
__device__ __forceinline__ float sum_squares_f32x4(const uint4 &v, float ss) {
  const float a = __uint_as_float(v.x), b = __uint_as_float(v.y), c = __uint_as_float(v.z),
              d = __uint_as_float(v.w);
  return fmaf(d, d, fmaf(c, c, fmaf(b, b, fmaf(a, a, ss))));
}
__device__ __forceinline__ uint4 rms_scale_f32x4(const uint4 &v, const bf16 *w, float r) {
  const uint2 wv = *reinterpret_cast<const uint2 *>(w);
  return make_uint4(__float_as_uint(bf16_lo(wv.x) * (__uint_as_float(v.x) * r)),
                    __float_as_uint(bf16_hi(wv.x) * (__uint_as_float(v.y) * r)),
                    __float_as_uint(bf16_lo(wv.y) * (__uint_as_float(v.z) * r)),
                    __float_as_uint(bf16_hi(wv.y) * (__uint_as_float(v.w) * r)));
}

// 4 floats as bf16 hi and lo halves whose sum is the input to ~16 mantissa bits:
// hi = bf16(x), lo = bf16(x - hi).
__device__ __forceinline__ void split_bf16x4(const uint4 &a, uint2 &hi, uint2 &lo) {
  const float x0 = __uint_as_float(a.x), x1 = __uint_as_float(a.y), x2 = __uint_as_float(a.z),
              x3 = __uint_as_float(a.w);
  hi = make_uint2(pack_bf16x2(x0, x1), pack_bf16x2(x2, x3));
  lo = make_uint2(pack_bf16x2(x0 - bf16_lo(hi.x), x1 - bf16_hi(hi.x)),
                  pack_bf16x2(x2 - bf16_lo(hi.y), x3 - bf16_hi(hi.y)));
}

// 8 floats (a: elements 0-3, b: 4-7) split the same way, as two bf16 MMA fragments packed like
// 8 consecutive bf16.
__device__ __forceinline__ void split_bf16x8(const uint4 &a, const uint4 &b, uint4 &hi,
                                             uint4 &lo) {
  uint2 ha, la, hb, lb;
  split_bf16x4(a, ha, la);
  split_bf16x4(b, hb, lb);
  hi = make_uint4(ha.x, ha.y, hb.x, hb.y);
  lo = make_uint4(la.x, la.y, lb.x, lb.y);
}

// Four e4m3fn values (bytes of w, lowest first) as four bf16 (two bf16x2 words, lowest first),
// exactly: bf16 holds every e4m3 value. sm_90 converts fp8 only to f16, and f16 -> bf16 costs
// more than this. Each byte goes to the top of a 16-bit lane; shifted down by 4 its exponent
// and mantissa bits land where bf16's low exponent bits and top mantissa bits are, which reads
// as the value times 2^(7 - 127) (the bias difference) for normals, subnormals and zero alike;
// one bf16x2 multiply by 2^120 rescales (exact: a power of two, the result a bf16 normal).
__device__ __forceinline__ uint32_t e4m3x2_to_bf16x2(uint32_t pair_in_high_bytes) {
  const uint32_t magnitude = (pair_in_high_bytes >> 4) & 0x07F007F0u;
  const uint32_t bits = magnitude | (pair_in_high_bytes & 0x80008000u);
  const __nv_bfloat162 scaled =
      __hmul2(*reinterpret_cast<const __nv_bfloat162 *>(&bits),
              __nv_bfloat162(__ushort_as_bfloat16(0x7B80u), __ushort_as_bfloat16(0x7B80u)));
  return *reinterpret_cast<const uint32_t *>(&scaled);
}
__device__ __forceinline__ void e4m3x4_to_bf16x4(uint32_t w, uint32_t &lo, uint32_t &hi) {
  lo = e4m3x2_to_bf16x2(__byte_perm(w, 0u, 0x1404u)); // bytes 0, 1 to the top of each lane
  hi = e4m3x2_to_bf16x2(__byte_perm(w, 0u, 0x3424u)); // bytes 2, 3
}
// 16 e4m3 values as two 8-value bf16 vectors (the first 8 bytes, then the last 8).
__device__ __forceinline__ void e4m3x16_to_bf16x16(const uint4 &w, uint4 &first, uint4 &second) {
  e4m3x4_to_bf16x4(w.x, first.x, first.y);
  e4m3x4_to_bf16x4(w.y, first.z, first.w);
  e4m3x4_to_bf16x4(w.z, second.x, second.y);
  e4m3x4_to_bf16x4(w.w, second.z, second.w);
}

// One word of 4-bit weights (launch_params.h, "int4 weights": nibbles i and i + 4 are k 2i and
// 2i + 1 of an 8-k run) as 8 bf16, q - z each, exactly. 0x4300 | q reads as the bf16 128 + q
// (exponent 2^7, ulp 1), and (128 + q) - (128 + z) is exact; zero_bf16x2 holds 128 + z twice.
__device__ __forceinline__ uint32_t int4_pair_to_bf16x2(uint32_t nibbles_at_0_and_16,
                                                        uint32_t zero_bf16x2) {
  uint32_t biased;
  asm("lop3.b32 %0, %1, 0x000F000F, 0x43004300, 0xEA;" // (a & b) | c
      : "=r"(biased)
      : "r"(nibbles_at_0_and_16));
  const __nv_bfloat162 v = __hsub2(*reinterpret_cast<const __nv_bfloat162 *>(&biased),
                                   *reinterpret_cast<const __nv_bfloat162 *>(&zero_bf16x2));
  return *reinterpret_cast<const uint32_t *>(&v);
}
__device__ __forceinline__ uint4 int4x8_to_bf16x8(uint32_t w, uint32_t zero_bf16x2) {
  return make_uint4(int4_pair_to_bf16x2(w, zero_bf16x2), int4_pair_to_bf16x2(w >> 4, zero_bf16x2),
                    int4_pair_to_bf16x2(w >> 8, zero_bf16x2),
                    int4_pair_to_bf16x2(w >> 12, zero_bf16x2));
}
// 128 + z in both halves of a bf16x2 (z in [0, 15]).
__device__ __forceinline__ uint32_t int4_zero_bf16x2(uint32_t z) { return (0x4300u | z) * 0x10001u; }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// A row's sum of squares for an RMS norm: the first `vectors` 16-byte vectors of `row` (8 bf16
// each, 16-byte aligned), PER per thread of THREADS, kept in v (zeros past the row) for the scaling after it;
// summed over the block through `partial` (one float per warp). All threads take part.
template <int PER, int THREADS>
__device__ __forceinline__ float row_sum_squares_bf16(const uint4 *row, int vectors,
                                                      uint4 (&v)[PER], float *partial) {
  float ss = 0.f;
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int idx = threadIdx.x + i * THREADS;
    v[i] = idx < vectors ? ld16(row + idx) : make_uint4(0u, 0u, 0u, 0u);
    ss = sum_squares_bf16x8(v[i], ss);
  }
  ss = warp_sum(ss);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = ss;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int i = 0; i < THREADS / 32; ++i) total += partial[i];
  return total;
}

} // namespace detail
} // namespace sinter::kernels
