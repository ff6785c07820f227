// GPU test of generic.cuh's 16-bit function variants (fn_<name>_rounded<Storage>): for every
// one of the 65,536 inputs of each 16-bit type, the variant's result rounded to that type must
// lie within 0.625 ulp of the exact value (computed in double): the correctly rounded result,
// or its neighbour when the exact value is within 1/8 ulp of the midpoint. Also prints how
// often the result differs from the correctly rounded one and the accurate float function's
// count for comparison.
#include "generic.cuh"
#include "gpu_test_util.h"

#include <limits>

using namespace gputest;
namespace g = sinter::generic;

enum class Fn { Tanh, GeluTanh };

template <typename Storage> __device__ Storage from_bits(unsigned short bits);
template <> __device__ __nv_bfloat16 from_bits(unsigned short bits) {
  return __ushort_as_bfloat16(bits);
}
template <> __device__ __half from_bits(unsigned short bits) { return __ushort_as_half(bits); }

template <typename Storage, Fn kFn, bool kRoundedVariant>
__global__ void evaluate_all(Storage *out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536)
    return;
  const float x = g::widen(from_bits<Storage>((unsigned short)i));
  float y;
  if constexpr (kFn == Fn::Tanh)
    y = kRoundedVariant ? g::fn_tanh_rounded<Storage>(x, 0.f, 0.f) : g::fn_tanh(x, 0.f, 0.f);
  else
    y = kRoundedVariant ? g::fn_gelu_tanh_rounded<Storage>(x, 0.f, 0.f)
                        : g::fn_gelu_tanh(x, 0.f, 0.f);
  out[i] = g::narrow<Storage>(y);
}

double exact(Fn fn, double x) {
  if (fn == Fn::Tanh)
    return std::tanh(x);
  // x / (1 + exp(-2u)): the same function as 0.5 x (1 + tanh(u)), without its cancellation.
  const double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
  return x / (1.0 + std::exp(-2.0 * u));
}

// The host value of a 16-bit pattern, and the spacing of the type's values at magnitude |v|.
template <typename Storage> double value_of(uint16_t bits) {
  return HostT<Storage>::get(bits);
}
template <typename Storage> double ulp_at(double v) {
  constexpr int kMantissaBits = std::is_same_v<Storage, __half> ? 10 : 7;
  constexpr int kMinExponent = std::is_same_v<Storage, __half> ? -14 : -126;
  int e = 0;
  std::frexp(std::fabs(v), &e); // |v| = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0, std::max(e - 1, kMinExponent) - kMantissaBits);
}

template <typename Storage, Fn kFn>
bool run_case(const char *name) {
  uint16_t *dout = nullptr;
  CUDA_CHECK(cudaMalloc(&dout, 65536 * 2));
  evaluate_all<Storage, kFn, true><<<256, 256>>>(reinterpret_cast<Storage *>(dout));
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> fast = to_host(dout, 65536);
  evaluate_all<Storage, kFn, false><<<256, 256>>>(reinterpret_cast<Storage *>(dout));
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> accurate = to_host(dout, 65536);
  CUDA_CHECK(cudaFree(dout));
  size_t bad = 0, fast_off = 0, accurate_off = 0, finite = 0;
  double worst = 0, worst_x = 0;
  const double inf = std::numeric_limits<double>::infinity();
  for (uint32_t i = 0; i < 65536; ++i) {
    const double x = value_of<Storage>(uint16_t(i));
    const double want = exact(kFn, x), got = value_of<Storage>(fast[i]);
    if (std::isnan(x) || std::isnan(want)) {
      bad += !std::isnan(got);
      continue;
    }
    if (std::isinf(x)) {
      bad += got != want;
      continue;
    }
    ++finite;
    // The exact value rounded to Storage (through float: a double rounding, off only at
    // near-ties, and only in the counts printed).
    const double rounded = HostT<Storage>::get(HostT<Storage>::put(float(want)));
    fast_off += got != rounded;
    accurate_off += value_of<Storage>(accurate[i]) != rounded;
    const double error = std::isinf(got) ? inf : std::fabs(got - want) / ulp_at<Storage>(want);
    if (error > worst)
      worst = error, worst_x = x;
    if (error > 0.625 && bad < 3)
      std::printf("  x=%.9g (0x%04x): got %.9g (0x%04x), exact %.9g, correctly rounded %.9g\n", x,
                  i, got, fast[i], want, rounded);
    bad += error > 0.625;
  }
  std::printf("%-26s %s  (%zu of %zu finite inputs beyond 0.625 ulp; worst %.3f ulp at x=%.6g; "
              "differs from the correctly rounded value at %zu inputs, the accurate float "
              "function at %zu)\n",
              name, bad ? "FAIL" : "ok  ", bad, finite, worst, worst_x, fast_off, accurate_off);
  return bad == 0;
}

int main() {
  if (!have_device())
    return 77;
  bool ok = true;
  ok &= run_case<__nv_bfloat16, Fn::Tanh>("tanh bf16");
  ok &= run_case<__half, Fn::Tanh>("tanh f16");
  ok &= run_case<__nv_bfloat16, Fn::GeluTanh>("gelu_tanh bf16");
  ok &= run_case<__half, Fn::GeluTanh>("gelu_tanh f16");
  return ok ? 0 : 1;
}
