// Shared helpers of the standalone GPU kernel tests (no gtest): device check with the ctest
// skip code 77, deterministic random data, host bf16 rounding, a threaded loop for the CPU
// references, launches through launch_params.h, and error reporting.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "launch_params.h"

namespace gputest {

#define CUDA_CHECK(expr)                                                                       \
  do {                                                                                         \
    cudaError_t err_ = (expr);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,                       \
                   cudaGetErrorString(err_));                                                  \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

// Returns true when a CUDA device is usable; prints the skip line otherwise.
inline bool have_device() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device (%s)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    return false;
  }
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, %d SMs, sm_%d%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  return true;
}

inline int sm_count() {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
  return v;
}

// ---- host bf16 -------------------------------------------------------------------------------
inline float bf2f(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t f2bf(float f) { // round to nearest even (finite inputs)
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
inline float rbf(float f) { return bf2f(f2bf(f)); }

// Host storage of a device element type: bf16 as its bit pattern, float as itself.
template <typename T> struct HostT;
template <> struct HostT<__nv_bfloat16> {
  using type = uint16_t;
  static float get(uint16_t v) { return bf2f(v); }
  static uint16_t put(float f) { return f2bf(f); }
};
template <> struct HostT<float> {
  using type = float;
  static float get(float v) { return v; }
  static float put(float f) { return f; }
};
template <> struct HostT<__half> {
  using type = uint16_t;
  static float get(uint16_t v) {
    __half_raw r;
    r.x = v;
    return __half2float(__half(r));
  }
  static uint16_t put(float f) { return __half_raw(__float2half_rn(f)).x; }
};
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// ---- random ----------------------------------------------------------------------------------
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x1234567ull) {}
  uint64_t next() { // splitmix64
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * float(next() >> 40) * (1.0f / 16777216.0f); }
};

inline std::vector<uint16_t> random_bf16(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<uint16_t> v(n);
  Rng r(seed);
  for (auto &e : v) e = f2bf(r.uniform(lo, hi));
  return v;
}

// ---- threaded loop for the references ----------------------------------------------------------
template <typename F> void parallel_for(size_t n, F f) {
  unsigned nt = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  if (n < 64) nt = 1;
  std::vector<std::thread> th;
  size_t chunk = (n + nt - 1) / nt;
  for (unsigned i = 0; i < nt; ++i) {
    size_t b = i * chunk, e = std::min(n, b + chunk);
    if (b >= e) break;
    th.emplace_back([=] {
      for (size_t j = b; j < e; ++j) f(j);
    });
  }
  for (auto &t : th) t.join();
}

// ---- device buffers --------------------------------------------------------------------------
template <typename T> T *to_device(const std::vector<T> &h) {
  T *d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, std::max<size_t>(16, h.size() * sizeof(T))));
  if (!h.empty()) CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T> std::vector<T> to_host(const T *d, size_t n) {
  std::vector<T> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// Launches `fn` with the grid/block/shared bytes that launch_params.h computed, opting in to
// more than 48 KiB of dynamic shared memory exactly as the runtime does.
inline void opt_in(const void *fn, const sinter::kernels::LaunchParams &lp) {
  static std::vector<const void *> opted_in; // once per function, never during a capture
  if (lp.shared_bytes > 48u * 1024u &&
      std::find(opted_in.begin(), opted_in.end(), fn) == opted_in.end()) {
    opted_in.push_back(fn);
    CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(lp.shared_bytes)));
    // Clusters above 8 blocks; a kernel without clusters may refuse it, which is harmless.
    if (cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
      (void)cudaGetLastError();
  }
}
template <typename... Params, typename... Args>
void launch(void (*fn)(Params...), const sinter::kernels::LaunchParams &lp, cudaStream_t stream,
            Args... args) {
  opt_in(reinterpret_cast<const void *>(fn), lp);
  fn<<<dim3(lp.grid.x, lp.grid.y, lp.grid.z), dim3(lp.block.x, lp.block.y, lp.block.z),
       lp.shared_bytes, stream>>>(args...);
  CUDA_CHECK(cudaGetLastError());
}

// Same, with the programmatic-dependent-launch attribute (the launch may begin while the
// previous kernel in the stream is still running; the kernel's griddepcontrol.wait orders it).
template <typename... Params, typename... Args>
cudaError_t launch_pdl(void (*fn)(Params...), const sinter::kernels::LaunchParams &lp,
                       cudaStream_t stream, Args... args) {
  opt_in(reinterpret_cast<const void *>(fn), lp);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(lp.grid.x, lp.grid.y, lp.grid.z);
  cfg.blockDim = dim3(lp.block.x, lp.block.y, lp.block.z);
  cfg.dynamicSmemBytes = lp.shared_bytes;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, fn, static_cast<Params>(args)...);
}

// Lets its dependents start at once, sleeps `delay_ns`, then copies src -> dst.
__global__ void delayed_copy_kernel(const unsigned char *src, unsigned char *dst, size_t n,
                                    unsigned long long delay_ns) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < delay_ns);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// PDL ordering check: zeroes `input` (a kernel argument), launches a kernel that refills it
// from `saved` after 30 us while letting dependents start immediately, then launches `fn`
// with the PDL attribute. A kernel reading its input before griddepcontrol.wait sees zeros.
template <typename... Params, typename... Args>
void launch_after_delayed_producer(void *input, const void *saved, size_t bytes,
                                   void (*fn)(Params...), const sinter::kernels::LaunchParams &lp,
                                   Args... args) {
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemset(input, 0, bytes));
  delayed_copy_kernel<<<16, 256>>>(static_cast<const unsigned char *>(saved),
                                   static_cast<unsigned char *>(input), bytes, 30000ull);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(launch_pdl(fn, lp, 0, args...));
  CUDA_CHECK(cudaDeviceSynchronize());
}

template <typename T> T *device_copy(const T *src, size_t n) {
  T *d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, std::max<size_t>(16, n * sizeof(T))));
  CUDA_CHECK(cudaMemcpy(d, src, n * sizeof(T), cudaMemcpyDeviceToDevice));
  return d;
}

// ---- comparison ------------------------------------------------------------------------------
struct Compare {
  double max_abs = 0, max_rel = 0, rms_ref = 0;
  size_t bad = 0, n = 0, first_bad = size_t(-1);
  double bad_got = 0, bad_ref = 0;
};

// |got - ref| <= rtol * (|ref| + rms(ref)) + atol for every element.
inline Compare compare(const std::vector<float> &got, const std::vector<float> &ref, double rtol,
                       double atol = 0) {
  Compare c;
  c.n = ref.size();
  double ss = 0;
  for (float r : ref) ss += double(r) * r;
  c.rms_ref = c.n ? std::sqrt(ss / c.n) : 0;
  const double floor_ = std::max(c.rms_ref, 1e-30);
  for (size_t i = 0; i < c.n; ++i) {
    const double g = got[i], r = ref[i];
    const double e = std::fabs(g - r);
    if (!(e <= rtol * (std::fabs(r) + floor_) + atol) || std::isnan(g)) {
      if (c.bad == 0) {
        c.first_bad = i;
        c.bad_got = g;
        c.bad_ref = r;
      }
      ++c.bad;
    }
    c.max_abs = std::isnan(e) ? INFINITY : std::max(c.max_abs, e);
    c.max_rel = std::max(c.max_rel, e / std::max(std::fabs(r), 1e-2 * floor_));
  }
  return c;
}

inline bool report(const char *name, const Compare &c) {
  std::printf("%-44s %s  max_abs %.3e  max_rel %.3e  (rms ref %.3e, %zu/%zu out of tolerance)",
              name, c.bad ? "FAIL" : "ok  ", c.max_abs, c.max_rel, c.rms_ref, c.bad, c.n);
  if (c.bad) std::printf("  first at %zu: got %.6g ref %.6g", c.first_bad, c.bad_got, c.bad_ref);
  std::printf("\n");
  return c.bad == 0;
}

// Milliseconds per call of f() (work queued on the default stream): two warm-up calls, then
// the median of 7 event-timed runs of `calls` back-to-back calls.
template <typename F> double median_ms(F f, int calls) {
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  for (int i = 0; i < 2; ++i) f();
  std::vector<float> ms;
  for (int r = 0; r < 7; ++r) {
    CUDA_CHECK(cudaEventRecord(e0));
    for (int i = 0; i < calls; ++i) f();
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t / calls);
  }
  std::sort(ms.begin(), ms.end());
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  return ms[3];
}

// Device-to-device copy bandwidth (bytes read + written per second), median of 7.
inline double copy_bandwidth() {
  const size_t bytes = size_t(1) << 30;
  void *a = nullptr, *b = nullptr;
  CUDA_CHECK(cudaMalloc(&a, bytes));
  CUDA_CHECK(cudaMalloc(&b, bytes));
  CUDA_CHECK(cudaMemset(a, 1, bytes));
  const double ms = median_ms(
      [&] { CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); }, 5);
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  return 2.0 * bytes / (ms * 1e-3);
}

// n consecutive cache positions from `first`: a prompt written at an offset.
inline std::vector<int64_t> iota_from(int n, int64_t first) {
  std::vector<int64_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = first + i;
  return v;
}

} // namespace gputest
