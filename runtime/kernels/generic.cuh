// Device helpers of the kernels the generic tier generates (compiler/lib/Emit/
// GenericKernelEmitter.cpp): element conversions, the scalar functions of
// dialects/.../ScalarFunctions.h (one fn_<name> per table entry), and row reductions.
// Floating-point values are computed in float (double for f64) and rounded to their tensor's
// type after every op, as the graph's per-op types say.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

namespace sinter::generic {

using bf16 = __nv_bfloat16;
using f16 = __half;

// Programmatic dependent launch: a generated kernel may start before the previous launch has
// finished (context.cpp launches kernels after kernels with PDL), so it waits before reading.
__device__ __forceinline__ void pdl_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ float widen(f16 x) { return __half2float(x); }
__device__ __forceinline__ float widen(bf16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float widen(float x) { return x; }
__device__ __forceinline__ double widen(double x) { return x; }
__device__ __forceinline__ long long widen(long long x) { return x; }
__device__ __forceinline__ int widen(int x) { return x; }
__device__ __forceinline__ short widen(short x) { return x; }
__device__ __forceinline__ signed char widen(signed char x) { return x; }
__device__ __forceinline__ unsigned long long widen(unsigned long long x) { return x; }
__device__ __forceinline__ unsigned int widen(unsigned int x) { return x; }
__device__ __forceinline__ unsigned short widen(unsigned short x) { return x; }
__device__ __forceinline__ unsigned char widen(unsigned char x) { return x; }
__device__ __forceinline__ bool widen(bool x) { return x; }

template <typename Storage> struct Narrow {
  template <typename T> __device__ __forceinline__ static Storage of(T x) { return Storage(x); }
};
template <> struct Narrow<f16> {
  __device__ __forceinline__ static f16 of(float x) { return __float2half_rn(x); }
};
template <> struct Narrow<bf16> {
  __device__ __forceinline__ static bf16 of(float x) { return __float2bfloat16_rn(x); }
};
template <typename Storage, typename T> __device__ __forceinline__ Storage narrow(T x) {
  return Narrow<Storage>::of(x);
}

// kWidth consecutive elements, loaded and stored as 16-byte (or narrower) vectors; the
// generated code checks the pointers' alignment before it takes this path.
template <typename T, int kWidth>
struct alignas(sizeof(T) * kWidth < 16 ? sizeof(T) * kWidth : 16) Vec {
  T v[kWidth];
};
template <int kWidth, typename T> __device__ __forceinline__ Vec<T, kWidth> load_vec(const T *p) {
  return *reinterpret_cast<const Vec<T, kWidth> *>(p);
}
template <typename T, int kWidth>
__device__ __forceinline__ void store_vec(T *p, const Vec<T, kWidth> &v) {
  *reinterpret_cast<Vec<T, kWidth> *>(p) = v;
}

__device__ __forceinline__ float round_f16(float x) { return __half2float(__float2half_rn(x)); }
__device__ __forceinline__ float round_bf16(float x) {
  return __bfloat162float(__float2bfloat16_rn(x));
}

// Float to integer conversion truncates toward zero, as ONNX Cast does (saturating instead of
// undefined out of range).
template <typename Int, typename F> __device__ __forceinline__ Int to_int(F x) {
  return x != x ? Int(0) : Int(x);
}

// Binary arithmetic whose C++ spelling differs by type.
__device__ __forceinline__ float pow_(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double pow_(double a, double b) { return pow(a, b); }
template <typename Int> __device__ __forceinline__ Int pow_(Int base, Int exp) {
  Int result = 1;
  for (; exp > 0; --exp)
    result *= base;
  return result;
}
// numpy's maximum/minimum: a NaN operand gives NaN.
template <typename T> __device__ __forceinline__ T max_(T a, T b) {
  return (a != a || a > b) ? a : b;
}
template <typename T> __device__ __forceinline__ T fn_min(T a, T b) {
  return (a != a || a < b) ? a : b;
}
__device__ __forceinline__ float sigmoid_(float x) { return 1.f / (1.f + expf(-x)); }
__device__ __forceinline__ double sigmoid_(double x) { return 1. / (1. + exp(-x)); }

// Unary entries of the scalar function table: fn_<name>(x, alpha, beta).
template <typename T> __device__ __forceinline__ T fn_abs(T x, float, float) {
  return x < T(0) ? T(-x) : x;
}
// A libm function as a table entry: its float (NAMEf) and double forms.
#define SINTER_GENERIC_LIBM_FN(NAME)                                                            \
  __device__ __forceinline__ float fn_##NAME(float x, float, float) { return NAME##f(x); }      \
  __device__ __forceinline__ double fn_##NAME(double x, float, float) { return NAME(x); }
SINTER_GENERIC_LIBM_FN(exp)
SINTER_GENERIC_LIBM_FN(log)
SINTER_GENERIC_LIBM_FN(tanh)
SINTER_GENERIC_LIBM_FN(erf)
template <typename T> __device__ __forceinline__ T fn_relu(T x, float, float) {
  return x > T(0) ? x : T(0);
}
template <typename T> __device__ __forceinline__ T fn_leaky_relu(T x, float alpha, float) {
  return x >= T(0) ? x : T(alpha) * x;
}
template <typename T> __device__ __forceinline__ T fn_elu(T x, float alpha, float) {
  return x >= T(0) ? x : T(alpha) * T(expm1(double(x)));
}
__device__ __forceinline__ float fn_softplus(float x, float, float) { return log1pf(expf(x)); }
__device__ __forceinline__ double fn_softplus(double x, float, float) { return log1p(exp(x)); }
template <typename T> __device__ __forceinline__ T fn_hard_sigmoid(T x, float alpha, float beta) {
  T y = T(alpha) * x + T(beta);
  return y < T(0) ? T(0) : (y > T(1) ? T(1) : y);
}
template <typename T> __device__ __forceinline__ T fn_hard_swish(T x, float, float) {
  return x * fn_hard_sigmoid(x, 1.f / 6.f, 0.5f);
}
__device__ __forceinline__ float fn_gelu(float x, float, float) {
  return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
}
__device__ __forceinline__ double fn_gelu(double x, float, float) {
  return 0.5 * x * (1. + erf(x * 0.70710678118654752440));
}
__device__ __forceinline__ float fn_gelu_tanh(float x, float, float) {
  return 0.5f * x * (1.f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ double fn_gelu_tanh(double x, float, float) {
  return 0.5 * x * (1. + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}
SINTER_GENERIC_LIBM_FN(tan)
SINTER_GENERIC_LIBM_FN(asin)
SINTER_GENERIC_LIBM_FN(acos)
SINTER_GENERIC_LIBM_FN(atan)
SINTER_GENERIC_LIBM_FN(sinh)
SINTER_GENERIC_LIBM_FN(cosh)
SINTER_GENERIC_LIBM_FN(asinh)
SINTER_GENERIC_LIBM_FN(acosh)
SINTER_GENERIC_LIBM_FN(atanh)
#undef SINTER_GENERIC_LIBM_FN
template <typename T> __device__ __forceinline__ T fn_softsign(T x, float, float) {
  return x / (T(1) + (x < T(0) ? T(-x) : x));
}
// alpha, gamma: ONNX Selu's attributes.
__device__ __forceinline__ float fn_selu(float x, float alpha, float gamma) {
  return x > 0.f ? gamma * x : gamma * (alpha * expf(x) - alpha);
}
__device__ __forceinline__ double fn_selu(double x, float alpha, float gamma) {
  return x > 0. ? gamma * x : gamma * (alpha * exp(x) - alpha);
}
__device__ __forceinline__ float fn_celu(float x, float alpha, float) {
  return fmaxf(0.f, x) + fminf(0.f, alpha * expm1f(x / alpha));
}
__device__ __forceinline__ double fn_celu(double x, float alpha, float) {
  return fmax(0., x) + fmin(0., alpha * expm1(x / alpha));
}
template <typename T> __device__ __forceinline__ T fn_thresholded_relu(T x, float alpha, float) {
  return x > T(alpha) ? x : T(0);
}
// lambd, bias: ONNX Shrink's attributes.
template <typename T> __device__ __forceinline__ T fn_shrink(T x, float lambd, float bias) {
  return x < T(-lambd) ? T(x + T(bias)) : (x > T(lambd) ? T(x - T(bias)) : T(0));
}
__device__ __forceinline__ float fn_mish(float x, float, float) {
  return x * tanhf(log1pf(expf(x)));
}
__device__ __forceinline__ double fn_mish(double x, float, float) {
  return x * tanh(log1p(exp(x)));
}
__device__ __forceinline__ float fn_swish(float x, float alpha, float) {
  return x / (1.f + expf(-alpha * x));
}
__device__ __forceinline__ double fn_swish(double x, float alpha, float) {
  return x / (1. + exp(-double(alpha) * x));
}
template <typename T> __device__ __forceinline__ T fn_sign(T x, float, float) {
  return T((x > T(0)) - (x < T(0)));
}
__device__ __forceinline__ float fn_floor(float x, float, float) { return floorf(x); }
__device__ __forceinline__ double fn_floor(double x, float, float) { return floor(x); }
__device__ __forceinline__ float fn_ceil(float x, float, float) { return ceilf(x); }
__device__ __forceinline__ double fn_ceil(double x, float, float) { return ceil(x); }
__device__ __forceinline__ float fn_round(float x, float, float) { return rintf(x); }
__device__ __forceinline__ double fn_round(double x, float, float) { return rint(x); }
__device__ __forceinline__ bool fn_not(bool x, float, float) { return !x; }
template <typename T> __device__ __forceinline__ T fn_bitwise_not(T x, float, float) {
  return T(~x);
}
template <typename T> __device__ __forceinline__ bool fn_is_inf(T x, float pos, float neg) {
  return (pos != 0.f && x == T(CUDART_INF)) || (neg != 0.f && x == -T(CUDART_INF));
}

// Variants for results rounded to a 16-bit type right away (the table's `roundedVariant`):
// fn_<name>_rounded<Storage>(x, alpha, beta). The accurate float functions cost more than a
// 16-bit element's load and store; these use the special-function unit with a relative error
// under an eighth of Storage's ulp, so the rounded result is the accurate function's or, within
// that distance of a rounding midpoint, its neighbour (test/gpu/generic_functions_test.cu
// checks every 16-bit input).
__device__ __forceinline__ float tanh_approx(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return tanhf(x);
#endif
}
// 2^t on the special-function unit (relative error about 2^-22; 0 below 2^-126, inf above 2^128).
__device__ __forceinline__ float exp2_approx(float t) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(t));
  return y;
#else
  return exp2f(t);
#endif
}
template <typename Storage> __device__ __forceinline__ float fn_tanh_rounded(float x, float, float);
// bf16 (ulp 2^-8..2^-7 relative): the hardware tanh, relative error about 2^-11; x itself
// below 2^-12, where tanh(x) = x to 2^-25 (and the hardware's subnormal handling is moot).
template <> __device__ __forceinline__ float fn_tanh_rounded<bf16>(float x, float, float) {
  return fabsf(x) < 0.000244140625f ? x : tanh_approx(x);
}
// f16 (ulp 2^-11..2^-10): (1 - e) / (1 + e) with e = exp(-2|x|); below 2^-6 the series
// x - x^3/3, where 1 - e would cancel.
template <> __device__ __forceinline__ float fn_tanh_rounded<f16>(float x, float, float) {
  const float magnitude = fabsf(x);
  if (magnitude < 0.015625f)
    return x * (1.f - x * x * (1.f / 3.f));
  const float e = exp2_approx(-2.88539008177792681f * magnitude); // exp(-2|x|)
  return copysignf(__fdividef(1.f - e, 1.f + e), x);
}
// 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), or x exp(2u) / (1 + exp(2u)) for negative u: no
// cancellation and no overflow. exp(-2|u|) is squared from exp(-|u|) so that results down to
// the subnormals keep their precision.
template <typename Storage>
__device__ __forceinline__ float fn_gelu_tanh_rounded(float x, float, float) {
  const float u = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
  const float half = exp2_approx(-1.44269504088896341f * fabsf(u)); // exp(-|u|)
  return (u >= 0.f ? x : x * half * half) * __fdividef(1.f, 1.f + half * half);
}

// Binary entries: fn_<name>(a, b).
template <typename T> __device__ __forceinline__ T fn_fmod(T a, T b) { return a % b; }
__device__ __forceinline__ float fn_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double fn_fmod(double a, double b) { return fmod(a, b); }
template <typename T> __device__ __forceinline__ T fn_mod(T a, T b) {
  T r = fn_fmod(a, b);
  return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? T(r + b) : r;
}
template <typename T> __device__ __forceinline__ bool fn_less(T a, T b) { return a < b; }
template <typename T> __device__ __forceinline__ bool fn_greater(T a, T b) { return a > b; }
template <typename T> __device__ __forceinline__ bool fn_greater_or_equal(T a, T b) {
  return a >= b;
}
__device__ __forceinline__ bool fn_or(bool a, bool b) { return a || b; }
__device__ __forceinline__ bool fn_xor(bool a, bool b) { return a != b; }
template <typename T> __device__ __forceinline__ T fn_prelu(T a, T b) {
  return a < T(0) ? T(a * b) : a;
}
template <typename T> __device__ __forceinline__ T fn_bitwise_and(T a, T b) { return T(a & b); }
template <typename T> __device__ __forceinline__ T fn_bitwise_or(T a, T b) { return T(a | b); }
template <typename T> __device__ __forceinline__ T fn_bitwise_xor(T a, T b) { return T(a ^ b); }
// Shifts by the width or more (or by a negative count) give 0, or for a right shift of a
// negative value -1, as the host folder's do; right shifts of signed values are arithmetic.
template <typename T> __device__ __forceinline__ T fn_bitshift_left(T a, T b) {
  return (unsigned long long)b >= sizeof(T) * 8 ? T(0) : T((unsigned long long)a << b);
}
template <typename T> __device__ __forceinline__ T fn_bitshift_right(T a, T b) {
  if ((unsigned long long)b >= sizeof(T) * 8)
    return T(0) > T(a) ? T(-1) : T(0);
  return T(a >> b);
}

// Reduction of one value per thread over the kThreadsPerRow threads of a row: aligned groups
// of lanes when kThreadsPerRow <= 32, consecutive whole warps otherwise (a block may hold
// several rows). Every thread of the row gets the result.
template <int kThreadsPerRow, typename T, typename Combine>
__device__ __forceinline__ T row_reduce(T v, T identity, Combine combine) {
  constexpr int kWarpSpan = kThreadsPerRow < 32 ? kThreadsPerRow : 32;
#pragma unroll
  for (int offset = kWarpSpan / 2; offset > 0; offset /= 2)
    v = combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
  if constexpr (kThreadsPerRow > 32) {
    // One slot per warp of the block; a row's warps are consecutive (rows may share a block).
    __shared__ T partial[32];
    constexpr int kWarps = kThreadsPerRow / 32;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int row_first_warp = warp / kWarps * kWarps;
    if (lane == 0)
      partial[warp] = v;
    __syncthreads();
    v = lane < kWarps ? partial[row_first_warp + lane] : identity;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
      v = combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
    __syncthreads();
  }
  return v;
}

// Running sums (products with kProduct) of one value per thread over the kThreadsPerRow
// threads of a row (laid out as in row_reduce), from the row's first thread or, with kReverse,
// from its last: returns the sum through this thread, sets `before` to the sum of the threads
// ahead of it (the identity for the first) and `total` to the row's sum, in every thread.
template <int kThreadsPerRow, bool kReverse, bool kProduct, typename T>
__device__ __forceinline__ T row_scan(T v, T &before, T &total) {
  constexpr int kWarpSpan = kThreadsPerRow < 32 ? kThreadsPerRow : 32;
  const auto combine = [](T a, T b) { return kProduct ? T(a * b) : T(a + b); };
  const T identity = T(kProduct ? 1 : 0);
  const int position = threadIdx.x % kWarpSpan;
  T through = v;
#pragma unroll
  for (int offset = 1; offset < kWarpSpan; offset *= 2) {
    const T other = kReverse ? __shfl_down_sync(0xffffffffu, through, offset, kWarpSpan)
                             : __shfl_up_sync(0xffffffffu, through, offset, kWarpSpan);
    if (kReverse ? position + offset < kWarpSpan : position >= offset)
      through = combine(through, other);
  }
  T ahead = kReverse ? __shfl_down_sync(0xffffffffu, through, 1, kWarpSpan)
                     : __shfl_up_sync(0xffffffffu, through, 1, kWarpSpan);
  if (kReverse ? position == kWarpSpan - 1 : position == 0)
    ahead = identity;
  total = __shfl_sync(0xffffffffu, through, kReverse ? 0 : kWarpSpan - 1, kWarpSpan);
  if constexpr (kThreadsPerRow > 32) {
    __shared__ T partial[32];
    constexpr int kWarps = kThreadsPerRow / 32;
    const int warp = threadIdx.x / 32;
    const int row_first_warp = warp / kWarps * kWarps;
    if (position == 0)
      partial[warp] = total;
    __syncthreads();
    T warps_ahead = identity, row_total = identity;
    for (int w = row_first_warp; w < row_first_warp + kWarps; ++w) {
      row_total = combine(row_total, partial[w]);
      if (kReverse ? w > warp : w < warp)
        warps_ahead = combine(warps_ahead, partial[w]);
    }
    __syncthreads();
    through = combine(warps_ahead, through);
    ahead = combine(warps_ahead, ahead);
    total = row_total;
  }
  before = ahead;
  return through;
}

// ArgMax / ArgMin: the better of (value, index) pairs; ties go to the first index, or the
// last with kSelectLast. NaN counts as the largest value, as numpy's argmax finds it first.
template <bool kMax, bool kSelectLast, typename T>
__device__ __forceinline__ bool arg_better(T v, long long i, T best, long long best_i) {
  if (best_i < 0)
    return i >= 0;
  if (i < 0)
    return false;
  if (v != v || best != best)
    return (v != v) && (best == best || (kSelectLast ? i > best_i : i < best_i));
  if (v == best)
    return kSelectLast ? i > best_i : i < best_i;
  return kMax ? v > best : v < best;
}
template <int kThreadsPerRow, bool kMax, bool kSelectLast, typename T>
__device__ __forceinline__ long long row_arg_reduce(T v, long long i) {
  constexpr int kWarpSpan = kThreadsPerRow < 32 ? kThreadsPerRow : 32;
#pragma unroll
  for (int offset = kWarpSpan / 2; offset > 0; offset /= 2) {
    T ov = __shfl_xor_sync(0xffffffffu, v, offset);
    long long oi = __shfl_xor_sync(0xffffffffu, i, offset);
    if (arg_better<kMax, kSelectLast>(ov, oi, v, i))
      v = ov, i = oi;
  }
  if constexpr (kThreadsPerRow > 32) {
    __shared__ T partial_v[32];
    __shared__ long long partial_i[32];
    constexpr int kWarps = kThreadsPerRow / 32;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int row_first_warp = warp / kWarps * kWarps;
    if (lane == 0)
      partial_v[warp] = v, partial_i[warp] = i;
    __syncthreads();
    v = lane < kWarps ? partial_v[row_first_warp + lane] : v;
    i = lane < kWarps ? partial_i[row_first_warp + lane] : -1;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      T ov = __shfl_xor_sync(0xffffffffu, v, offset);
      long long oi = __shfl_xor_sync(0xffffffffu, i, offset);
      if (arg_better<kMax, kSelectLast>(ov, oi, v, i))
        v = ov, i = oi;
    }
    __syncthreads();
  }
  return i;
}

} // namespace sinter::generic
