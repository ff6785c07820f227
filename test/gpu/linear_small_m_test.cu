// GPU test of linear_small_m: every prologue/epilogue on odd small shapes and on the Llama 3.2
// 1B shapes (M = 6 prefill and M = 1 decode) against a CPU reference that applies HF's
// bf16 rounding steps; then times the Llama shapes (weights rotated through > L2 worth of
// copies, so they stream from DRAM) against a device-to-device copy measured here.
#include "gpu_test_util.h"
#include "linear_small_m.cuh"

#include <cstring>
#include <string>

using namespace sinter::kernels;
using namespace gputest;

constexpr int kSms = 132; // compile-time target SM count (H200)
constexpr uint32_t kEps = 0x3727c5acu; // 1e-5f
uint32_t *const kNoCount = nullptr; // the handoff arguments of launches without one
bf16 *const kNoX = nullptr;
const uint8_t *const kNoZero = nullptr; // w_zero of every launch but asymmetric int4

struct BenchRow {
  std::string name;
  double mb, us_stream, us_graph, us_stream_pdl, us_graph_pdl; // < 0: not measured
};
static std::vector<BenchRow> g_bench;
// LINEAR_BENCH_ONLY=1: Llama shapes only, timing without the CPU reference (tuning runs).
static const bool g_bench_only = std::getenv("LINEAR_BENCH_ONLY") != nullptr;
// LINEAR_CASES=text: only the cases whose name contains it (the whole run takes minutes).
static const char *const g_case_filter = std::getenv("LINEAR_CASES");

// fp8 e4m3fn, the test's own codec (independent of the compiler's quantizer): code -> value,
// and value -> nearest code (ties to the even code), saturated at +-448, never NaN.
float e4m3_value(uint8_t c) {
  const int e = (c >> 3) & 15, m = c & 7;
  if ((c & 0x7F) == 0x7F) return 0.f; // NaN codes: never produced, read as 0 by the sweeps
  const float mag = e ? std::ldexp(1.f + m / 8.f, e - 7) : std::ldexp(float(m), -9);
  return c & 0x80 ? -mag : mag;
}
uint8_t e4m3_encode(float v) {
  const float a = std::fabs(v);
  int lo = 0, hi = 126; // largest code whose value is <= a
  if (a >= e4m3_value(126)) {
    lo = 126;
  } else {
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (e4m3_value(uint8_t(mid)) <= a) lo = mid;
      else hi = mid - 1;
    }
    const float d0 = a - e4m3_value(uint8_t(lo)), d1 = e4m3_value(uint8_t(lo + 1)) - a;
    if (d1 < d0 || (d1 == d0 && lo % 2 == 1)) ++lo;
  }
  return uint8_t(lo | (v < 0 && lo ? 0x80 : 0));
}

// XT = float: fp32 x (not bf16-representable values), which the kernel splits into bf16 hi and
// lo parts; the reference keeps x in fp32, and with an fp32 output the tolerance is tight
// enough (2e-4) that dropping the lo part (~4e-3) fails.
// WT = __nv_fp8_e4m3: the weights quantized per row as the compiler does (scale = max / 448),
// the reference computing with the dequantized weights; code_sweep makes every row hold every
// e4m3 code (zero, subnormals, both signs, 448: scale 1), so each code's decoding is checked.
// WT = Int4x2 with group G: the test's own symmetric quantization per group (scale = max / 7,
// q = clamp(rne(w / scale), -8, 7) + 8), the reference on the dequantized weights; code_sweep
// instead draws every code 0..15 and random zero points (w_zero) and scales: asymmetric.
template <int M, int N, int K, LinearPrologue PRO, LinearEpilogue EPI, typename OutT, int RR = 0,
          int HD = 2, typename XT = bf16, typename WT = bf16, int G = 0, int ROTARY = 0>
bool run_case(const char *name, uint64_t seed, bool alias_residual, bool bench,
              bool code_sweep = false, bool rope_bias = false, bool gelu_bias = true) {
  if (g_bench_only && !bench) return true;
  if (g_case_filter && !std::strstr(name, g_case_filter)) return true;
  constexpr bool INT4 = std::is_same_v<WT, Int4x2>;
  constexpr bool FP8 = std::is_same_v<WT, __nv_fp8_e4m3>;
  constexpr LinearWeights WF =
      INT4 ? LinearWeights::INT4 : FP8 ? LinearWeights::FP8_E4M3 : LinearWeights::BF16;
  constexpr int NG = INT4 ? K / G : 1; // groups per row
  using H = HostT<OutT>;
  using HT = typename H::type;
  using HX = HostT<XT>;
  constexpr bool WIDE_X = sizeof(XT) == 4;
  const double tol = WIDE_X && sizeof(OutT) == 4 ? 2e-4 : 1.0 / 64;
  constexpr int N_OUT = linear_epilogue_gates(EPI) ? N / 2 : N;
  constexpr bool NORM = linear_prologue_normalizes(PRO);
  // RESIDUAL_NORM: x is the post-norm's input; the pre-norm's input is residual + postnorm(x).
  constexpr bool RESIDUAL_NORM = PRO == LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT;
  constexpr bool FP32_NORM_W = PRO == LinearPrologue::RMS_NORM_FP32_WEIGHT || RESIDUAL_NORM;
  constexpr bool LAYER_NORM = PRO == LinearPrologue::LAYER_NORM;
  auto rt = [](float f) { return H::get(H::put(f)); }; // round to OutT

  // ---- data ----
  const float xr = NORM ? 3.f : 1.f;
  std::vector<typename HX::type> x(size_t(M) * K);
  {
    // LayerNorm rows off zero mean (1.5), so that a kernel that did not center them fails.
    Rng r(seed * 7 + 1);
    for (auto &e : x) e = HX::put(r.uniform(-xr, xr) + (LAYER_NORM ? 1.5f : 0.f));
  }
  const float a = std::sqrt(3.f / K);
  std::vector<uint16_t> w = random_bf16(size_t(N) * K, seed * 7 + 2, -a, a); // original [N, K]
  if (FP8 && code_sweep)
    for (size_t n = 0; n < size_t(N); ++n)
      for (size_t k = 0; k < size_t(K); ++k)
        w[n * K + k] = f2bf(e4m3_value(uint8_t((n * 37 + k) % 256)));
  // fp8: per original row, scale and codes; wq holds the dequantized values the reference uses.
  std::vector<uint8_t> q(FP8 || INT4 ? size_t(N) * K : 0);
  std::vector<float> scale(FP8 ? N : INT4 ? size_t(N) * NG : 0),
      wq(FP8 || INT4 ? size_t(N) * K : 0);
  std::vector<uint8_t> zero(INT4 && code_sweep ? size_t(N) * NG : 0);
  if constexpr (INT4)
    parallel_for(N, [&](size_t n) {
      Rng r(seed * 1000003 + n);
      for (int gi = 0; gi < NG; ++gi) {
        const size_t k0 = size_t(gi) * G;
        float amax = 0.f;
        for (int k = 0; k < G; ++k) amax = std::max(amax, std::fabs(bf2f(w[n * K + k0 + k])));
        float &sc = scale[n * NG + gi];
        sc = code_sweep ? r.uniform(0.5f, 1.5f) * a / 7.f : amax > 0.f ? amax / 7.f : 1.f;
        const int z = code_sweep ? int(r.next() % 16) : 8;
        if (code_sweep) zero[n * NG + gi] = uint8_t(z);
        for (int k = 0; k < G; ++k) {
          int code;
          if (code_sweep) {
            code = int((n * 7 + k0 + k) % 16);
          } else {
            const float v = std::nearbyint(bf2f(w[n * K + k0 + k]) / sc); // ties to even
            code = int(std::min(7.f, std::max(-8.f, v))) + 8;
          }
          q[n * K + k0 + k] = uint8_t(code);
          wq[n * K + k0 + k] = sc * float(code - z);
        }
      }
    });
  if constexpr (FP8)
    parallel_for(N, [&](size_t n) {
      float amax = 0.f;
      for (int k = 0; k < K; ++k) amax = std::max(amax, std::fabs(bf2f(w[n * K + k])));
      scale[n] = amax > 0.f ? amax / kFp8E4m3Max : 1.f;
      for (int k = 0; k < K; ++k) {
        q[n * K + k] = e4m3_encode(bf2f(w[n * K + k]) / scale[n]);
        wq[n * K + k] = scale[n] * e4m3_value(q[n * K + k]);
      }
    });
  std::vector<uint16_t> nw = random_bf16(K, seed * 7 + 3, 0.5f, 1.5f);
  // fp32 norm weights (Gemma's 1 + w): values no bf16 holds, so a kernel that rounded them
  // would miss the reference.
  std::vector<float> nwf(K);
  {
    Rng r(seed * 7 + 6);
    for (auto &e : nwf) e = r.uniform(0.5f, 1.5f);
  }
  // LayerNorm: the kernel's [2, K] fp32 norm_weight, the scale (nwf) then the shift.
  std::vector<float> ln_weight(nwf);
  {
    Rng r(seed * 7 + 8);
    for (int k = 0; k < K; ++k) ln_weight.push_back(r.uniform(-0.5f, 0.5f));
  }
  // RESIDUAL_NORM: the kernel's [2, K] norm_weight, the post-norm's then the pre-norm's (nwf),
  // and the residual stream the post-normalized x is added to.
  std::vector<float> post_pre_weight;
  std::vector<uint16_t> xres = random_bf16(RESIDUAL_NORM ? size_t(M) * K : 0, seed * 7 + 9,
                                           -2.f, 2.f);
  if (RESIDUAL_NORM) {
    Rng r(seed * 7 + 10);
    for (int k = 0; k < K; ++k) post_pre_weight.push_back(r.uniform(0.5f, 1.5f));
    post_pre_weight.insert(post_pre_weight.end(), nwf.begin(), nwf.end());
  }
  std::vector<uint16_t> bias = random_bf16(N, seed * 7 + 4, -1.f, 1.f);
  std::vector<HT> res(size_t(M) * N_OUT);
  {
    Rng r(seed * 7 + 5);
    for (auto &e : res) e = H::put(r.uniform(-1.f, 1.f));
  }
  // RoPE tables of RW columns: the whole head, or its rotated part (ROTARY, partial rotary).
  constexpr int RW = ROTARY ? ROTARY : HD;
  std::vector<uint16_t> cs(size_t(M) * RW), sn(size_t(M) * RW);
  for (int m = 0; m < M; ++m)
    for (int i = 0; i < RW / 2; ++i) {
      const double pos = m + double(seed % 50);
      const double ang = pos * std::pow(500000.0, -2.0 * i / RW);
      cs[m * RW + i] = cs[m * RW + i + RW / 2] = f2bf(float(std::cos(ang)));
      sn[m * RW + i] = sn[m * RW + i + RW / 2] = f2bf(float(std::sin(ang)));
    }
  // Kernel layout of the weight (the compiler's compile-time re-layout).
  // Whole 16-row tiles: rows past N (a ragged N) zero, their scales 1 and zero points 8.
  constexpr int NW = linear_small_m_weight_rows(N);
  // Rows of KW >= K (linear_small_m_weight_cols: a zero chunk past K for some prologues).
  constexpr int KW = linear_small_m_weight_cols(K, PRO, int(sizeof(XT)), WF);
  std::vector<uint16_t> wk(FP8 || INT4 ? 0 : size_t(NW) * KW);
  std::vector<uint8_t> wk8(FP8 ? size_t(NW) * K : INT4 ? size_t(NW) * K / 2 : 0, 0);
  std::vector<float> scale_k(scale.size() / N * NW, 1.f);
  std::vector<uint8_t> zero_k(zero.size() / N * NW, 8);
  if (INT4) std::fill(wk8.begin(), wk8.end(), uint8_t(0x88));
  parallel_for(N, [&](size_t r) {
    int o = int(r);
    if (EPI == LinearEpilogue::ROPE_PAIRS) o = linear_rope_pairs_row(int(r), RR, HD, ROTARY);
    if (linear_epilogue_gates(EPI)) o = linear_silu_pairs_row(int(r), N / 2);
    if (INT4) {
      for (int gi = 0; gi < NG; ++gi) {
        scale_k[r * NG + gi] = scale[size_t(o) * NG + gi];
        if (!zero.empty()) zero_k[r * NG + gi] = zero[size_t(o) * NG + gi];
      }
      for (int c = 0; c < K; c += kLinearInt4BlockK)
        for (int p = 0; p < kLinearInt4BlockK; p += 2) {
          const uint8_t lo = q[size_t(o) * K + c + linear_int4_block_k(p)];
          const uint8_t hi = q[size_t(o) * K + c + linear_int4_block_k(p + 1)];
          wk8[(r * K + c) / 2 + p / 2] = uint8_t(lo | (hi << 4));
        }
      return;
    }
    if (!FP8) {
      std::memcpy(&wk[r * KW], &w[size_t(o) * K], K * 2);
      return;
    }
    scale_k[r] = scale[o];
    for (int c = 0; c < K; c += 64)
      for (int p = 0; p < 64; ++p) wk8[r * K + c + p] = q[size_t(o) * K + c + linear_fp8_chunk_k(p)];
  });

  // ---- reference ----
  std::vector<float> ref(size_t(M) * N_OUT);
  std::vector<float> sum_ref(RESIDUAL_NORM ? size_t(M) * K : 0); // s = residual + postnorm(x)
  if (!g_bench_only) {
  std::vector<float> xin(size_t(M) * K);
  for (int m = 0; m < M; ++m) {
    if (RESIDUAL_NORM) {
      auto rms = [&](auto value) {
        double ss = 0;
        for (int k = 0; k < K; ++k) ss += double(value(k)) * value(k);
        return 1.f / std::sqrt(float(ss / K) + 1e-5f);
      };
      float *sm = &sum_ref[size_t(m) * K];
      const float r1 = rms([&](int k) { return HX::get(x[m * K + k]); });
      for (int k = 0; k < K; ++k)
        sm[k] = rbf(bf2f(xres[m * K + k]) + rbf(post_pre_weight[k] * (HX::get(x[m * K + k]) * r1)));
      const float r2 = rms([&](int k) { return sm[k]; });
      for (int k = 0; k < K; ++k) xin[m * K + k] = rbf(nwf[k] * (sm[k] * r2));
    } else if (LAYER_NORM) {
      double sum = 0, ss = 0;
      for (int k = 0; k < K; ++k) sum += HX::get(x[m * K + k]);
      const double mean = sum / K;
      for (int k = 0; k < K; ++k) {
        const double d = HX::get(x[m * K + k]) - mean;
        ss += d * d;
      }
      const double r = 1.0 / std::sqrt(ss / K + 1e-5);
      for (int k = 0; k < K; ++k)
        xin[m * K + k] =
            rbf(float((HX::get(x[m * K + k]) - mean) * r * ln_weight[k] + ln_weight[K + k]));
    } else if (NORM) {
      double ss = 0;
      for (int k = 0; k < K; ++k) ss += double(HX::get(x[m * K + k])) * HX::get(x[m * K + k]);
      const float var = float(ss / K);
      const float r = 1.f / std::sqrt(var + 1e-5f);
      for (int k = 0; k < K; ++k)
        xin[m * K + k] = FP32_NORM_W ? rbf(nwf[k] * (HX::get(x[m * K + k]) * r))
                         : WIDE_X    ? bf2f(nw[k]) * (HX::get(x[m * K + k]) * r)
                                     : rbf(bf2f(nw[k]) * rbf(HX::get(x[m * K + k]) * r));
    } else {
      for (int k = 0; k < K; ++k) xin[m * K + k] = HX::get(x[m * K + k]);
    }
  }
  std::vector<float> acc(size_t(M) * N);
  parallel_for(N, [&](size_t n) {
    std::vector<float> wr(K);
    for (int k = 0; k < K; ++k) wr[k] = FP8 || INT4 ? wq[n * K + k] : bf2f(w[n * K + k]);
    for (int m = 0; m < M; ++m) {
      double s = 0;
      const float *xm = &xin[size_t(m) * K];
      for (int k = 0; k < K; ++k) s += double(xm[k]) * wr[k];
      acc[size_t(m) * N + n] = float(s);
    }
  });
  for (int m = 0; m < M; ++m)
    for (int c = 0; c < N_OUT; ++c) {
      const float v = acc[size_t(m) * N + c];
      float o = 0;
      switch (EPI) {
      case LinearEpilogue::NONE: o = rt(v); break;
      case LinearEpilogue::BIAS: o = rt(v + bf2f(bias[c])); break;
      case LinearEpilogue::RESIDUAL: o = rt(rt(v) + H::get(res[size_t(m) * N_OUT + c])); break;
      case LinearEpilogue::BIAS_RESIDUAL:
        o = rt(rt(v + bf2f(bias[c])) + H::get(res[size_t(m) * N_OUT + c]));
        break;
      case LinearEpilogue::GELU_TANH: {
        const double g = rt(v + (gelu_bias ? bf2f(bias[c]) : 0.f));
        const double u = 0.79788456080286535588 * (g + 0.044715 * g * g * g);
        o = rt(float(0.5 * g * (1.0 + std::tanh(u))));
        break;
      }
      case LinearEpilogue::GELU: {
        const double g = rt(v + (gelu_bias ? bf2f(bias[c]) : 0.f));
        o = rt(float(0.5 * g * (1.0 + std::erf(g * 0.70710678118654752440))));
        break;
      }
      case LinearEpilogue::SILU_MUL_PAIRS: {
        const float g = rt(v), u = rt(acc[size_t(m) * N + N / 2 + c]);
        o = rt(rt(g / (1.f + std::exp(-g))) * u);
        break;
      }
      case LinearEpilogue::GELU_TANH_MUL_PAIRS: {
        const double g = rt(v);
        const float u = rt(acc[size_t(m) * N + N / 2 + c]);
        const double gelu =
            0.5 * g * (1.0 + std::tanh(0.79788456080286535588 * (g + 0.044715 * g * g * g)));
        o = rt(rt(float(gelu)) * u);
        break;
      }
      case LinearEpilogue::ROPE_PAIRS: {
        // A biased projection (rope_bias) adds bias[column] before rounding and rotating.
        auto biased = [&](int col) {
          return acc[size_t(m) * N + col] + (rope_bias ? bf2f(bias[col]) : 0.f);
        };
        if (c >= RR || c % HD >= RW) { // v, and a head's columns past the rotated ones
          o = rt(biased(c));
          break;
        }
        const int i = c % HD, half = RW / 2;
        const float cv = bf2f(cs[m * RW + i]), sv = bf2f(sn[m * RW + i]);
        if (i < half) {
          const float q1 = rt(biased(c)), q2 = rt(biased(c + half));
          o = rt(q1 * cv - q2 * sv);
        } else {
          const float q2 = rt(biased(c)), q1 = rt(biased(c - half));
          o = rt(q2 * cv + q1 * sv);
        }
        break;
      }
      }
      ref[size_t(m) * N_OUT + c] = o;
    }
  } // reference

  // ---- device ----
  XT *dx = reinterpret_cast<XT *>(to_device(x));
  const WT *dw = FP8 || INT4 ? reinterpret_cast<const WT *>(to_device(wk8))
                            : reinterpret_cast<const WT *>(to_device(wk));
  const float *dscale = FP8 || INT4 ? to_device(scale_k) : nullptr;
  const uint8_t *dzero = zero_k.empty() ? nullptr : to_device(zero_k);
  bf16 *dnw = reinterpret_cast<bf16 *>(to_device(nw));
  float *dnwf = to_device(nwf);
  float *dln = to_device(ln_weight);
  float *dpost_pre = RESIDUAL_NORM ? to_device(post_pre_weight) : nullptr;
  const bf16 *pres = RESIDUAL_NORM ? reinterpret_cast<const bf16 *>(to_device(xres)) : nullptr;
  bf16 *psum = nullptr;
  if (RESIDUAL_NORM) {
    CUDA_CHECK(cudaMalloc(&psum, size_t(M) * K * 2));
    CUDA_CHECK(cudaMemset(psum, 0xff, size_t(M) * K * 2));
  }
  bf16 *db = reinterpret_cast<bf16 *>(to_device(bias));
  bf16 *dcs = reinterpret_cast<bf16 *>(to_device(cs));
  bf16 *dsn = reinterpret_cast<bf16 *>(to_device(sn));
  OutT *dres = reinterpret_cast<OutT *>(to_device(res));
  OutT *dout = nullptr;
  if (alias_residual) {
    dout = dres;
  } else {
    CUDA_CHECK(cudaMalloc(&dout, sizeof(OutT) * M * N_OUT));
    CUDA_CHECK(cudaMemset(dout, 0xff, sizeof(OutT) * M * N_OUT)); // NaN pattern
  }
  auto fn = linear_small_m<M, N, K, PRO, EPI, OutT, kEps, RR, HD, kSms, XT, LinearHandoff::NONE,
                           0, WT, G, ROTARY>;
  constexpr LaunchParams lp = linear_small_m_launch(M, N, K, PRO, kSms, int(sizeof(XT)), WF);
  const void *pn = PRO == LinearPrologue::RMS_NORM               ? static_cast<const void *>(dnw)
                   : PRO == LinearPrologue::RMS_NORM_FP32_WEIGHT ? static_cast<const void *>(dnwf)
                   : LAYER_NORM                                  ? static_cast<const void *>(dln)
                   : RESIDUAL_NORM ? static_cast<const void *>(dpost_pre)
                                   : nullptr;
  // The RoPE epilogue's bias is in the kernel's row order (the compiler permutes it).
  std::vector<uint16_t> bias_rows(N);
  for (int r = 0; r < N; ++r)
    bias_rows[r] =
        bias[EPI == LinearEpilogue::ROPE_PAIRS ? linear_rope_pairs_row(r, RR, HD, ROTARY) : r];
  bf16 *db_rows = reinterpret_cast<bf16 *>(to_device(bias_rows));
  const bf16 *pb = EPI == LinearEpilogue::BIAS || EPI == LinearEpilogue::BIAS_RESIDUAL ||
                           ((EPI == LinearEpilogue::GELU_TANH || EPI == LinearEpilogue::GELU) &&
                            gelu_bias)
                       ? db
                   : EPI == LinearEpilogue::ROPE_PAIRS && rope_bias ? db_rows
                                                                  : nullptr;
  const OutT *pr = linear_epilogue_adds_residual(EPI) ? dres : nullptr;
  const bf16 *pc = EPI == LinearEpilogue::ROPE_PAIRS ? dcs : nullptr;
  const bf16 *ps = EPI == LinearEpilogue::ROPE_PAIRS ? dsn : nullptr;
  launch(fn, lp, 0, (const XT *)dx, dw, pn, pb, pr, pc, ps, dout, kNoCount, kNoX, kNoCount,
         dscale, dzero, pres, psum);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<HT> got_h = to_host(reinterpret_cast<const HT *>(dout), size_t(M) * N_OUT);
  std::vector<float> got(got_h.size());
  for (size_t i = 0; i < got.size(); ++i) got[i] = H::get(got_h[i]);

  char label[160];
  std::snprintf(label, sizeof label, "%s M=%d N=%d K=%d%s%s", name, M, N, K,
                FP8 ? " fp8" : INT4 ? (code_sweep ? " int4 asym" : " int4") : "",
                alias_residual ? " (residual=out)" : "");
  std::printf("  [grid %u block %u smem %u]\n", lp.grid.x, lp.block.x, lp.shared_bytes);
  bool ok = g_bench_only || report(label, compare(got, ref, tol));
  if (RESIDUAL_NORM && !g_bench_only) { // block 0's copy of s
    const std::vector<uint16_t> sum_h = to_host(reinterpret_cast<const uint16_t *>(psum),
                                                size_t(M) * K);
    std::vector<float> sum_got(sum_h.size());
    for (size_t i = 0; i < sum_h.size(); ++i) sum_got[i] = bf2f(sum_h[i]);
    ok &= report("  residual_sum = residual + postnorm(x)", compare(sum_got, sum_ref, tol));
  }
  if (!g_bench_only) {
    // Again under PDL, behind a kernel that writes x late: checks griddepcontrol.wait.
    XT *saved_x = device_copy(dx, size_t(M) * K);
    if (alias_residual)
      CUDA_CHECK(cudaMemcpy(dres, res.data(), res.size() * sizeof(HT), cudaMemcpyHostToDevice));
    else
      CUDA_CHECK(cudaMemset(dout, 0xff, sizeof(OutT) * M * N_OUT));
    launch_after_delayed_producer(dx, saved_x, size_t(M) * K * sizeof(XT), fn, lp, (const XT *)dx,
                                  dw, pn, pb, pr, pc, ps, dout, kNoCount, kNoX, kNoCount,
                                  dscale, dzero, pres, psum);
    got_h = to_host(reinterpret_cast<const HT *>(dout), size_t(M) * N_OUT);
    for (size_t i = 0; i < got.size(); ++i) got[i] = H::get(got_h[i]);
    ok &= report("  same, PDL behind a late producer of x", compare(got, ref, tol));
    CUDA_CHECK(cudaFree(saved_x));
  }

  if (bench) {
    // Rotate through enough weight copies that consecutive launches miss in L2.
    // The model's bytes (the bandwidth table's), and each copy's: whole 16-row tiles of rows of
    // KW (a padded K), as the kernel reads them.
    const size_t wbytes = INT4 ? size_t(N) * K / 2 : size_t(N) * K * sizeof(WT);
    const size_t copy_bytes = INT4 ? size_t(NW) * K / 2 : size_t(NW) * KW * sizeof(WT);
    // int4: the group scales too (1/16 of the weight bytes at group 128), so they miss in L2.
    const size_t sbytes = INT4 ? scale_k.size() * sizeof(float) : 0;
    const int nc = int(std::max<size_t>(1, (size_t(320) << 20) / wbytes + 1));
    std::vector<WT *> ws(nc, const_cast<WT *>(dw));
    std::vector<float *> ss(nc, const_cast<float *>(dscale));
    for (int i = 1; i < nc; ++i) {
      CUDA_CHECK(cudaMalloc(&ws[i], copy_bytes));
      CUDA_CHECK(cudaMemcpy(ws[i], dw, copy_bytes, cudaMemcpyDeviceToDevice));
      if (sbytes) {
        CUDA_CHECK(cudaMalloc(&ss[i], sbytes));
        CUDA_CHECK(cudaMemcpy(ss[i], dscale, sbytes, cudaMemcpyDeviceToDevice));
      }
    }
    OutT *dout2 = nullptr;
    CUDA_CHECK(cudaMalloc(&dout2, sizeof(OutT) * M * N_OUT));
    const int iters = nc * std::max(1, 40 / nc);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    auto enqueue = [&] {
      for (int it = 0; it < iters; ++it)
        launch(fn, lp, s, (const XT *)dx, (const WT *)ws[it % nc], pn, pb, pr, pc, ps, dout2,
               kNoCount, kNoX, kNoCount, (const float *)ss[it % nc], dzero, pres, psum);
    };
    cudaError_t pdl_err = cudaSuccess;
    auto enqueue_pdl = [&] {
      for (int it = 0; it < iters; ++it) {
        cudaError_t e = launch_pdl(fn, lp, s, (const XT *)dx, (const WT *)ws[it % nc], pn, pb,
                                   pr, pc, ps, dout2, kNoCount, kNoX, kNoCount,
                                   (const float *)ss[it % nc], dzero, pres, psum);
        if (e != cudaSuccess && pdl_err == cudaSuccess) pdl_err = e;
      }
    };
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    auto median_us = [&](auto &&body) {
      body();
      CUDA_CHECK(cudaStreamSynchronize(s));
      std::vector<float> t;
      for (int r = 0; r < 5; ++r) {
        CUDA_CHECK(cudaEventRecord(e0, s));
        body();
        CUDA_CHECK(cudaEventRecord(e1, s));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms * 1000.f / iters);
      }
      std::sort(t.begin(), t.end());
      return double(t[2]);
    };
    const double us_stream = median_us(enqueue);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    enqueue();
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const double us_graph = median_us([&] { CUDA_CHECK(cudaGraphLaunch(exec, s)); });
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    // With programmatic dependent launch, on a stream and captured into a graph.
    double us_stream_pdl = median_us(enqueue_pdl);
    if (pdl_err != cudaSuccess) {
      std::printf("  PDL launch failed: %s\n", cudaGetErrorString(pdl_err));
      us_stream_pdl = -1;
      (void)cudaGetLastError();
    }
    double us_graph_pdl = -1;
    {
      cudaGraph_t g2 = nullptr;
      cudaGraphExec_t x2 = nullptr;
      cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
      if (e == cudaSuccess) {
        enqueue_pdl();
        e = cudaStreamEndCapture(s, &g2);
      }
      if (e == cudaSuccess && pdl_err == cudaSuccess) e = cudaGraphInstantiate(&x2, g2, 0);
      if (e == cudaSuccess && pdl_err == cudaSuccess)
        us_graph_pdl = median_us([&] { CUDA_CHECK(cudaGraphLaunch(x2, s)); });
      else
        std::printf("  PDL graph failed: %s / %s\n", cudaGetErrorString(e),
                    cudaGetErrorString(pdl_err));
      (void)cudaGetLastError();
      if (x2) cudaGraphExecDestroy(x2);
      if (g2) cudaGraphDestroy(g2);
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    CUDA_CHECK(cudaStreamDestroy(s));
    for (int i = 1; i < nc; ++i) {
      CUDA_CHECK(cudaFree(ws[i]));
      if (sbytes) CUDA_CHECK(cudaFree(ss[i]));
    }
    CUDA_CHECK(cudaFree(dout2));
    g_bench.push_back({label, (wbytes + sbytes) / 1e6, us_stream, us_graph, us_stream_pdl, us_graph_pdl});
  }

  CUDA_CHECK(cudaFree(dx));
  CUDA_CHECK(cudaFree(const_cast<WT *>(dw)));
  if (dscale) CUDA_CHECK(cudaFree(const_cast<float *>(dscale)));
  if (dzero) CUDA_CHECK(cudaFree(const_cast<uint8_t *>(dzero)));
  CUDA_CHECK(cudaFree(dnw));
  CUDA_CHECK(cudaFree(dnwf));
  if (dpost_pre) CUDA_CHECK(cudaFree(dpost_pre));
  if (pres) CUDA_CHECK(cudaFree(const_cast<bf16 *>(pres)));
  if (psum) CUDA_CHECK(cudaFree(psum));
  CUDA_CHECK(cudaFree(db));
  CUDA_CHECK(cudaFree(dcs));
  CUDA_CHECK(cudaFree(dsn));
  CUDA_CHECK(cudaFree(dres));
  if (!alias_residual) CUDA_CHECK(cudaFree(dout));
  return ok;
}

// gate/up -> down through handoff buffers (LinearHandoff): two pairs in a row, each resetting
// the other's buffers, each producer launched under PDL behind a kernel that writes
// its x late, so the consumer waits on the handoff, not on the stream. Against the same two
// launches without a handoff: the consumer's output bit for bit, the producer's buffer holding
// the inverted bits and its count the producer's grid, the reset buffers zero.
// WT = fp8: random codes and per-row scales (the pairing does not depend on how they came).
// act [N1] = silu(gate) * up, out [N2]; N1 = 8960 is Qwen2.5-1.5B's (the consumer's K is
// ragged: 70 slices on 16 warps). PRO_UP / EPI_UP / EPI_DOWN: other MLPs (GPT-2's LayerNorm
// c_fc with its bias and GeLU into c_proj with its bias and the residual).
template <typename WT = bf16, int K1 = 1024, int N1 = 2048, int N2 = 1024,
          LinearPrologue PRO_UP = LinearPrologue::RMS_NORM,
          LinearEpilogue EPI_UP = LinearEpilogue::SILU_MUL_PAIRS,
          LinearEpilogue EPI_DOWN = LinearEpilogue::RESIDUAL>
bool run_handoff_case() {
  constexpr LinearWeights WB =
      sizeof(WT) == 1 ? LinearWeights::FP8_E4M3 : LinearWeights::BF16;
  using P = LinearPrologue;
  using E = LinearEpilogue;
  using Hd = LinearHandoff;
  constexpr int UP_ROWS = linear_epilogue_gates(EPI_UP) ? 2 * N1 : N1;
  constexpr bool LN = PRO_UP == P::LAYER_NORM;
  if constexpr (!linear_small_m_handoff_consumer_supported(1, N2, N1, P::NONE, kSms, WB)) {
    std::printf("handoff pair N1=%d -> N2=%d with %d-byte weights: no consumer configuration "
                "for the second launch (so the compiler never pairs them), skipped\n",
                N1, N2, int(sizeof(WT)));
    return true;
  } else {
  static_assert(!linear_small_m_handoff_consumer_supported(1, N2, N1, P::RMS_NORM, kSms, WB));
  static_assert(!linear_small_m_handoff_consumer_supported(6, N2, N1, P::NONE, kSms, WB));
  constexpr LinearTiling up_tiling = linear_small_m_tiling(1, UP_ROWS, K1, PRO_UP, kSms, 2, WB);
  constexpr int kProducerBlocks = up_tiling.grid;
  auto plain_up = linear_small_m<1, UP_ROWS, K1, PRO_UP, EPI_UP, bf16, kEps, 0, 2, kSms, bf16,
                                 Hd::NONE, 0, WT>;
  auto plain_down = linear_small_m<1, N2, N1, P::NONE, EPI_DOWN, bf16, 0u, 0, 2, kSms, bf16,
                                   Hd::NONE, 0, WT>;
  auto up = linear_small_m<1, UP_ROWS, K1, PRO_UP, EPI_UP, bf16, kEps, 0, 2, kSms, bf16,
                           Hd::PRODUCER, 0, WT>;
  auto down = linear_small_m<1, N2, N1, P::NONE, EPI_DOWN, bf16, 0u, 0, 2, kSms, bf16,
                             Hd::CONSUMER, kProducerBlocks, WT>;
  constexpr LaunchParams lp_up = linear_small_m_launch(1, UP_ROWS, K1, PRO_UP, kSms, 2, WB);
  constexpr LaunchParams lp_down = linear_small_m_launch(1, N2, N1, P::NONE, kSms, 2, WB);

  std::vector<uint16_t> x = random_bf16(K1, 901, -3.f, 3.f);
  const float a1 = std::sqrt(3.f / K1), a2 = std::sqrt(3.f / N1);
  auto weights = [&](size_t rows, size_t cols, uint64_t seed, float a) -> const WT * {
    if constexpr (sizeof(WT) == 2)
      return reinterpret_cast<const WT *>(to_device(random_bf16(rows * cols, seed, -a, a)));
    std::vector<uint8_t> codes(rows * cols);
    Rng r(seed);
    for (auto &c : codes) c = e4m3_encode(r.uniform(-448.f, 448.f));
    return reinterpret_cast<const WT *>(to_device(codes));
  };
  auto scales = [&](size_t rows, uint64_t seed, float a) -> const float * {
    if constexpr (sizeof(WT) == 2) return nullptr;
    std::vector<float> sc(rows);
    Rng r(seed);
    for (auto &v : sc) v = r.uniform(0.5f, 1.5f) * a / kFp8E4m3Max;
    return to_device(sc);
  };
  bf16 *dx = reinterpret_cast<bf16 *>(to_device(x));
  // Rows of the producer's weight_cols (a padded K); the columns past K1 meet zero x.
  const WT *dw1 = weights(size_t(UP_ROWS), up_tiling.weight_cols, 902, a1);
  const float *ds1 = scales(size_t(UP_ROWS), 906, a1);
  // The norm weight: bf16 [K1] for RMS_NORM, the fp32 scale and shift [2, K1] for LAYER_NORM.
  std::vector<float> ln(2 * K1);
  {
    Rng r(908);
    for (int k = 0; k < K1; ++k) ln[k] = r.uniform(0.5f, 1.5f);
    for (int k = 0; k < K1; ++k) ln[K1 + k] = r.uniform(-0.5f, 0.5f);
  }
  // RESIDUAL_RMS_NORM_FP32_WEIGHT: fp32 [2, K1] too (the post-norm's and pre-norm's weights),
  // a residual stream, and the sum block 0 writes.
  constexpr bool RN = PRO_UP == P::RESIDUAL_RMS_NORM_FP32_WEIGHT;
  if (RN)
    for (int k = 0; k < K1; ++k) ln[K1 + k] = ln[k] * 0.75f + 0.25f;
  const void *dnw = LN || RN
                        ? static_cast<const void *>(to_device(ln))
                        : static_cast<const void *>(to_device(random_bf16(K1, 903, 0.5f, 1.5f)));
  const bf16 *up_res =
      RN ? reinterpret_cast<const bf16 *>(to_device(random_bf16(K1, 910, -2.f, 2.f))) : nullptr;
  bf16 *up_sum = nullptr, *up_sum_ref = nullptr;
  if (RN) {
    CUDA_CHECK(cudaMalloc(&up_sum, K1 * 2));
    CUDA_CHECK(cudaMalloc(&up_sum_ref, K1 * 2));
  }
  const WT *dw2 = weights(N2, N1, 904, a2);
  const float *ds2 = scales(N2, 907, a2);
  bf16 *dres = reinterpret_cast<bf16 *>(to_device(random_bf16(N2, 905, -1.f, 1.f)));
  // Biases where the epilogues take them (GPT-2's c_fc and c_proj).
  const bool up_bias = EPI_UP == E::GELU_TANH || EPI_UP == E::GELU;
  const bf16 *db1 = up_bias ? reinterpret_cast<bf16 *>(to_device(random_bf16(N1, 909, -1.f, 1.f)))
                            : nullptr;
  const bf16 *db2 = EPI_DOWN == E::BIAS_RESIDUAL
                        ? reinterpret_cast<bf16 *>(to_device(random_bf16(N2, 910, -1.f, 1.f)))
                        : nullptr;
  bf16 *saved_x = device_copy(dx, K1);
  const bf16 *none = nullptr;

  bf16 *act = nullptr, *ref = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&act, N1 * 2));
  CUDA_CHECK(cudaMalloc(&ref, N2 * 2));
  CUDA_CHECK(cudaMalloc(&out, N2 * 2));
  launch(plain_up, lp_up, 0, (const bf16 *)dx, dw1, dnw, db1, none, none, none, act, kNoCount,
         kNoX, kNoCount, ds1, kNoZero, up_res, up_sum_ref);
  launch(plain_down, lp_down, 0, (const bf16 *)act, dw2, (const void *)nullptr, db2,
         (const bf16 *)dres, none, none, ref, kNoCount, kNoX, kNoCount, ds2, kNoZero, none, kNoX);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint16_t> act_ref = to_host(reinterpret_cast<const uint16_t *>(act), N1);
  const std::vector<uint16_t> out_ref = to_host(reinterpret_cast<const uint16_t *>(ref), N2);

  // Pair buffers: x [N1] and a count each, zeroed like the context state.
  bf16 *hx[2];
  uint32_t *hc[2];
  for (int p = 0; p < 2; ++p) {
    CUDA_CHECK(cudaMalloc(&hx[p], N1 * 2));
    CUDA_CHECK(cudaMalloc(&hc[p], 4));
    CUDA_CHECK(cudaMemset(hx[p], 0, N1 * 2));
    CUDA_CHECK(cudaMemset(hc[p], 0, 4));
  }
  // Pair 1's buffers hold a finished handoff (as after the previous call) for pair 0 to reset.
  CUDA_CHECK(cudaMemset(hx[1], 0x5a, N1 * 2));
  const uint32_t stale = kProducerBlocks;
  CUDA_CHECK(cudaMemcpy(hc[1], &stale, 4, cudaMemcpyHostToDevice));

  bool ok = true;
  for (int p = 0; p < 2; ++p) {
    const int q = 1 - p;
    CUDA_CHECK(cudaMemset(out, 0xff, N2 * 2));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemset(dx, 0, K1 * 2));
    delayed_copy_kernel<<<16, 256>>>(reinterpret_cast<const unsigned char *>(saved_x),
                                     reinterpret_cast<unsigned char *>(dx), K1 * 2, 30000ull);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(launch_pdl(up, lp_up, 0, (const bf16 *)dx, dw1, dnw, db1, none, none, none,
                          hx[p], hc[p], kNoX, kNoCount, ds1, kNoZero, up_res, up_sum));
    CUDA_CHECK(launch_pdl(down, lp_down, 0, (const bf16 *)hx[p], dw2, (const void *)nullptr, db2,
                          (const bf16 *)dres, none, none, out, hc[p], hx[q], hc[q], ds2,
                          kNoZero, none, kNoX));
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<uint16_t> got = to_host(reinterpret_cast<const uint16_t *>(out), N2);
    const std::vector<uint16_t> buf = to_host(reinterpret_cast<const uint16_t *>(hx[p]), N1);
    const std::vector<uint16_t> reset = to_host(reinterpret_cast<const uint16_t *>(hx[q]), N1);
    uint32_t count = 0, reset_count = 1;
    CUDA_CHECK(cudaMemcpy(&count, hc[p], 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&reset_count, hc[q], 4, cudaMemcpyDeviceToHost));
    size_t out_diff = 0, buf_diff = 0, not_reset = 0;
    for (int i = 0; i < N2; ++i) out_diff += got[i] != out_ref[i];
    if (RN) { // block 0's residual sum, as the plain launch wrote it
      const std::vector<uint16_t> sum = to_host(reinterpret_cast<const uint16_t *>(up_sum), K1);
      const std::vector<uint16_t> sum_ref =
          to_host(reinterpret_cast<const uint16_t *>(up_sum_ref), K1);
      for (int i = 0; i < K1; ++i) out_diff += sum[i] != sum_ref[i];
    }
    for (int i = 0; i < N1; ++i) {
      buf_diff += buf[i] != uint16_t(~act_ref[i]);
      not_reset += reset[i] != 0;
    }
    const bool pass = out_diff == 0 && buf_diff == 0 && not_reset == 0 &&
                      count == uint32_t(kProducerBlocks) && reset_count == 0;
    std::printf("%-44s %s  out differs at %zu/%d, buffer at %zu/%d, %zu not reset, count %u "
                "(want %d), reset count %u\n",
                (std::string(p == 0 ? "handoff up -> down" : "handoff, pair 1") +
                 (WB == LinearWeights::FP8_E4M3 ? " fp8" : "") + (LN ? " ln+gelu" : "") +
                 (RN ? " residual norm" : "") +
                 " N1=" + std::to_string(N1) +
                 (p == 0 ? ", pair 0" : " (resets pair 0)"))
                    .c_str(),
                pass ? "ok  " : "FAIL", out_diff, N2, buf_diff, N1, not_reset, count,
                kProducerBlocks, reset_count);
    ok &= pass;
  }
  for (const void *ptr : {(const void *)ds1, (const void *)ds2, (const void *)db1,
                          (const void *)db2})
    if (ptr) CUDA_CHECK(cudaFree(const_cast<void *>(ptr)));
  for (void *ptr : {(void *)dx, (void *)dw1, const_cast<void *>(dnw), (void *)dw2, (void *)dres,
                    (void *)saved_x, (void *)act, (void *)ref, (void *)out, (void *)hx[0],
                    (void *)hx[1], (void *)hc[0], (void *)hc[1]})
    CUDA_CHECK(cudaFree(ptr));
  return ok;
  }
}

// The timed launches' table, then the verdict (the exit status).
int print_bench(bool ok) {
  const double bw = copy_bandwidth();
  std::printf("-- bandwidth (weight bytes / time per launch; copy = D2D bytes read+written)\n");
  std::printf("copy bandwidth: %.0f GB/s\n", bw / 1e9);
  std::printf("%-44s %9s | %-17s| %-17s| %-17s| %-17s\n", "us per launch, % of copy bw",
              "weights", "stream", "graph", "stream+PDL", "graph+PDL");
  for (const auto &b : g_bench) {
    std::printf("%-44s %6.2f MB", b.name.c_str(), b.mb);
    const double us[4] = {b.us_stream, b.us_graph, b.us_stream_pdl, b.us_graph_pdl};
    for (double u : us) {
      if (u > 0)
        std::printf(" | %7.2f us %5.1f%%", u, 100.0 * b.mb * 1e12 / u / bw);
      else
        std::printf(" | %17s", "n/a");
    }
    std::printf("\n");
  }
  // W1's five linears (M=6), with bf16 and with fp32 activations.
  for (const char *group : {"", " x32"}) {
    double tot_bytes = 0, tot_us[4] = {0, 0, 0, 0};
    for (const auto &b : g_bench) {
      if (b.name.find("M=6 ") == std::string::npos ||
          (b.name.find(" x32") != std::string::npos) != (*group != 0))
        continue;
      tot_bytes += b.mb;
      const double us[4] = {b.us_stream, b.us_graph, b.us_stream_pdl, b.us_graph_pdl};
      for (int i = 0; i < 4; ++i) tot_us[i] += us[i];
    }
    if (tot_bytes == 0) continue;
    std::string label = std::string("W1 linears (M=6") + group + ") total";
    std::printf("%-44s %6.1f MB", label.c_str(), tot_bytes);
    for (double u : tot_us)
      std::printf(" | %7.2f us %5.1f%%", u, u > 0 ? 100.0 * tot_bytes * 1e12 / u / bw : 0.0);
    std::printf("\n");
  }
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

// int4 weights: group scales (32, 64, 128, 256), symmetric and asymmetric (every code, random
// zero points), every prologue/epilogue, fp32 x, then the 1B decode shapes timed.
bool run_int4_cases() {
  using P = LinearPrologue;
  using E = LinearEpilogue;
  using I4 = Int4x2;
  static_assert(linear_small_m_supported(1, 64, 512, P::NONE, E::NONE, 0, 2, 2, kSms,
                                         LinearWeights::INT4, 128) &&
                    !linear_small_m_supported(1, 64, 448, P::NONE, E::NONE, 0, 2, 2, kSms,
                                              LinearWeights::INT4, 64) &&
                    !linear_small_m_supported(1, 64, 512, P::NONE, E::NONE, 0, 2, 2, kSms,
                                              LinearWeights::INT4, 16) &&
                    !linear_small_m_supported(1, 64, 384, P::NONE, E::NONE, 0, 2, 2, kSms,
                                              LinearWeights::INT4, 256) &&
                    !linear_small_m_tiling(1, 2048, 8192, P::NONE, kSms, 2, LinearWeights::INT4)
                         .w_smem,
                "int4: K % 128, groups 32, 64 or k*128 dividing K; registers, not w_smem");
  bool ok = true;
  std::printf("-- int4 weights (group scales, dequantized in registers)\n");
  ok &= run_case<3, 64, 512, P::NONE, E::NONE, bf16, 0, 2, bf16, I4, 128>("every code", 81, false,
                                                                        false, true);
  ok &= run_case<3, 64, 512, P::NONE, E::NONE, bf16, 0, 2, bf16, I4, 32>("every code g32", 82,
                                                                       false, false, true);
  ok &= run_case<5, 96, 1024, P::NONE, E::NONE, bf16, 0, 2, bf16, I4, 64>("every code g64", 83,
                                                                        false, false, true);
  ok &= run_case<2, 48, 1536, P::NONE, E::NONE, bf16, 0, 2, bf16, I4, 256>("g256 (not 2^n K)",
                                                                         84, false, false);
  ok &= run_case<2, 8208, 384, P::NONE, E::BIAS, bf16, 0, 2, bf16, I4, 128>(
      "bias multi-tile, 2 chunks a step", 85, false, false);
  ok &= run_case<11, 96, 512, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16, 0, 2, bf16, I4, 128>(
      "rms+silu", 86, false, false);
  ok &= run_case<16, 128, 1024, P::RMS_NORM, E::ROPE_PAIRS, bf16, 64, 32, bf16, I4, 64>(
      "rms+rope", 87, false, false);
  ok &= run_case<9, 2048, 1536, P::NONE, E::RESIDUAL, bf16, 0, 2, bf16, I4, 128>("residual", 88,
                                                                               true, false);
  ok &= run_case<3, 4656, 2048, P::RMS_NORM, E::NONE, bf16, 0, 2, bf16, I4, 128>(
      "several tiles a block", 89, false, false);
  ok &= run_case<5, 80, 512, P::NONE, E::NONE, float, 0, 2, float, I4, 128>("none x32", 90,
                                                                          false, false, true);
  ok &= run_case<7, 4352, 384, P::NONE, E::BIAS, float, 0, 2, float, I4, 128>(
      "bias multi-tile x32", 91, false, false);
  ok &= run_case<6, 2048, 2048, P::RMS_NORM, E::ROPE_PAIRS, float, 2048, 64, float, I4, 128>(
      "rms+rope x32", 92, false, false);
  ok &= run_case<6, 16384, 2048, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16, 0, 2, bf16, I4, 128>(
      "gate_up M=6", 93, false, false);
  std::printf("-- Llama 3.2 1B, M=6 prefill, int4 weights (group 128)\n");
  ok &= run_case<6, 3072, 2048, P::RMS_NORM, E::ROPE_PAIRS, bf16, 2560, 64, bf16, I4, 128>(
      "qkv", 99, false, false);
  ok &= run_case<6, 2048, 2048, P::NONE, E::RESIDUAL, bf16, 0, 2, bf16, I4, 128>("o_proj", 100,
                                                                               true, false);
  ok &= run_case<6, 2048, 8192, P::NONE, E::RESIDUAL, bf16, 0, 2, bf16, I4, 128>("down", 101,
                                                                               true, false);
  ok &= run_case<6, 128256, 2048, P::RMS_NORM, E::NONE, bf16, 0, 2, bf16, I4, 128>(
      "lm_head", 102, false, false);
  std::printf("-- Llama 3.2 1B, M=1 decode, int4 weights (group 128)\n");
  ok &= run_case<1, 3072, 2048, P::RMS_NORM, E::ROPE_PAIRS, bf16, 2560, 64, bf16, I4, 128>(
      "qkv", 94, false, true);
  ok &= run_case<1, 2048, 2048, P::NONE, E::RESIDUAL, bf16, 0, 2, bf16, I4, 128>("o_proj", 95,
                                                                               true, true);
  ok &= run_case<1, 16384, 2048, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16, 0, 2, bf16, I4, 128>(
      "gate_up", 96, false, true);
  ok &= run_case<1, 2048, 8192, P::NONE, E::RESIDUAL, bf16, 0, 2, bf16, I4, 128>("down", 97,
                                                                               true, true);
  ok &= run_case<1, 128256, 2048, P::RMS_NORM, E::NONE, bf16, 0, 2, bf16, I4, 128>(
      "lm_head", 98, false, true);
  return ok;
}

int main() {
  if (!have_device()) return 77;
  if (sm_count() != kSms)
    std::printf("note: kernels tuned for %d SMs, device has %d\n", kSms, sm_count());
  using P = LinearPrologue;
  using E = LinearEpilogue;
  bool ok = true;
  if (std::getenv("LINEAR_INT4_ONLY")) { // the int4 cases and their timings alone
    return print_bench(run_int4_cases());
  } else if (std::getenv("LINEAR_FP8_ONLY")) { // debugging the fp8 path alone (compute-sanitizer)
    ok &= run_case<3, 64, 320, P::NONE, E::NONE, bf16, 0, 2, bf16, __nv_fp8_e4m3>(
        "every code", 61, false, false, true);
    ok &= run_case<1, 4096, 1024, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16, 0, 2, bf16,
                   __nv_fp8_e4m3>("gate_up", 62, false, false);
    ok &= run_case<1, 1024, 2048, P::NONE, E::RESIDUAL, bf16, 0, 2, bf16, __nv_fp8_e4m3>(
        "down", 63, true, false);
    ok &= run_handoff_case<__nv_fp8_e4m3>();
    return ok ? 0 : 1;
  }
  if (!g_bench_only && (!g_case_filter || std::strstr("handoff", g_case_filter)))
    ok &= run_handoff_case() && run_handoff_case<__nv_fp8_e4m3>() &&
          run_handoff_case<bf16, 1536, 8960, 1536>() &&
          // GPT-2 XL's MLP: LayerNorm over K = 1600 (padded to 1664), c_fc + bias + GeLU,
          // c_proj + bias + residual.
          run_handoff_case<bf16, 1600, 6400, 1600, P::LAYER_NORM, E::GELU_TANH,
                           E::BIAS_RESIDUAL>() &&
          // Gemma 2's MLP: post-norm + residual + pre-norm, GeGLU pairs, a plain down.
          run_handoff_case<bf16, 2304, 9216, 2304, P::RESIDUAL_RMS_NORM_FP32_WEIGHT,
                           E::GELU_TANH_MUL_PAIRS, E::NONE>();
  std::printf("-- odd shapes\n");
  ok &= run_case<1, 48, 192, P::NONE, E::BIAS, float>("bias f32", 11, false, false);
  ok &= run_case<3, 64, 320, P::NONE, E::NONE, bf16>("none", 12, false, false);
  ok &= run_case<11, 96, 512, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16>("rms+silu", 13, false, false);
  ok &= run_case<16, 128, 1024, P::RMS_NORM, E::ROPE_PAIRS, bf16, 64, 32>("rms+rope", 14, false,
                                                                         false);
  ok &= run_case<9, 2048, 1536, P::NONE, E::RESIDUAL, bf16>("residual", 15, true, false);
  // 2 vectors of x per row and thread, 9 rows: the RMS prologue stages x with cp.async.
  ok &= run_case<9, 2176, 4096, P::RMS_NORM, E::NONE, bf16>("rms (x via cp.async)", 19, false,
                                                             false);
  ok &= run_case<2, 8208, 192, P::NONE, E::BIAS, bf16>("bias multi-tile", 16, false, false);
  ok &= run_case<8, 9600, 2048, P::RMS_NORM, E::RESIDUAL, float>("rms+residual f32", 17, false,
                                                                  false);
  ok &= run_case<13, 160, 8192, P::NONE, E::ROPE_PAIRS, float, 128, 64>("rope f32", 18, false,
                                                                       false);
  std::printf("-- Llama 3.2 1B, M=6 prefill\n");
  ok &= run_case<6, 3072, 2048, P::RMS_NORM, E::ROPE_PAIRS, bf16, 2560, 64>("qkv", 21, false, true);
  // Qwen2's biased q, k and v: the bias before the rotation (prompt and decode rows).
  ok &= run_case<6, 3072, 2048, P::RMS_NORM, E::ROPE_PAIRS, bf16, 2560, 64>(
      "qkv + bias", 22, false, false, false, true);
  ok &= run_case<1, 128, 1024, P::RMS_NORM, E::ROPE_PAIRS, bf16, 64, 32>(
      "rms+rope + bias, 1 row", 23, false, false, false, true);
  ok &= run_case<6, 2048, 2048, P::NONE, E::RESIDUAL, bf16>("o_proj", 22, true, true);
  ok &= run_case<6, 16384, 2048, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16>("gate_up", 23, false, true);
  ok &= run_case<6, 2048, 8192, P::NONE, E::RESIDUAL, bf16>("down", 24, true, true);
  ok &= run_case<6, 128256, 2048, P::RMS_NORM, E::NONE, bf16>("lm_head", 25, false, true);
  // x staging: BF16_PLANES (RMS_NORM), F32_RING (one tile per block; the ring is refilled when
  // steps > 2: "none", "residual", "down"), F32_ROWS ("bias multi-tile").
  std::printf("-- fp32 activations (x split into bf16 hi + lo)\n");
  ok &= run_case<5, 80, 448, P::NONE, E::NONE, float, 0, 2, float>("none x32", 41, false, false);
  ok &= run_case<16, 96, 1024, P::RMS_NORM, E::SILU_MUL_PAIRS, float, 0, 2, float>(
      "rms+silu x32", 42, false, false);
  ok &= run_case<3, 256, 512, P::RMS_NORM, E::ROPE_PAIRS, float, 128, 64, float>("rms+rope x32", 43,
                                                                                false, false);
  ok &= run_case<9, 512, 768, P::NONE, E::RESIDUAL, float, 0, 2, float>("residual x32", 44, true,
                                                                         false);
  ok &= run_case<4, 64, 256, P::RMS_NORM, E::NONE, bf16, 0, 2, float>("rms x32 -> bf16", 45, false,
                                                                      false);
  ok &= run_case<7, 4352, 320, P::NONE, E::BIAS, float, 0, 2, float>("bias multi-tile x32", 51,
                                                                     false, false);
  ok &= run_case<9, 32, 4096, P::RMS_NORM, E::NONE, float, 0, 2, float>("rms x32 (x read twice)", 52,
                                                                       false, false);
  // 16 rows of K = 8192: fits only through the ring (8 warps, 8 steps through 2 slots).
  ok &= run_case<16, 2048, 8192, P::NONE, E::RESIDUAL, float, 0, 2, float>(
      "down x32 (ring, 8 warps)", 53, true, false);
  ok &= run_case<6, 3072, 2048, P::RMS_NORM, E::ROPE_PAIRS, float, 2560, 64, float>(
      "qkv x32", 46, false, true);
  ok &= run_case<6, 2048, 2048, P::NONE, E::RESIDUAL, float, 0, 2, float>("o_proj x32", 47, true,
                                                                          true);
  ok &= run_case<6, 16384, 2048, P::RMS_NORM, E::SILU_MUL_PAIRS, float, 0, 2, float>(
      "gate_up x32", 48, false, true);
  ok &= run_case<6, 2048, 8192, P::NONE, E::RESIDUAL, float, 0, 2, float>("down x32", 49, true,
                                                                          true);
  ok &= run_case<6, 128256, 2048, P::RMS_NORM, E::NONE, float, 0, 2, float>("lm_head x32", 50,
                                                                           false, true);
  std::printf("-- Llama 3.2 1B, M=1 decode\n");
  ok &= run_case<1, 3072, 2048, P::RMS_NORM, E::ROPE_PAIRS, bf16, 2560, 64>("qkv", 31, false, true);
  ok &= run_case<1, 2048, 2048, P::NONE, E::RESIDUAL, bf16>("o_proj", 32, true, true);
  // GPT-2's biased projections into the residual stream (GPT-2 XL: 1600 wide, MLP 6400), and
  // fp32 activations.
  ok &= run_case<1, 1600, 1600, P::NONE, E::BIAS_RESIDUAL, bf16>("gpt2-xl c_proj (attn)", 110,
                                                                 true, true);
  ok &= run_case<1, 1600, 6400, P::NONE, E::BIAS_RESIDUAL, bf16>("gpt2-xl c_proj (mlp)", 111,
                                                                 true, true);
  ok &= run_case<6, 1600, 6400, P::NONE, E::BIAS_RESIDUAL, bf16>("gpt2-xl c_proj 6 tokens", 112,
                                                                 false, false);
  ok &= run_case<5, 768, 768, P::NONE, E::BIAS_RESIDUAL, float, 0, 2, float>(
      "bias+residual x32", 113, true, false);
  // GPT-2's LayerNorm before QKV and c_fc (GPT-2 XL: 1600 wide, QKV 4800, MLP 6400): one
  // decode row, 6 prompt tokens, 16 rows whose x a thread stages through cp.async, tiny, and
  // LM heads (GPT-2 small's 768 wide).
  ok &= run_case<1, 4800, 1600, P::LAYER_NORM, E::BIAS, bf16>("gpt2-xl ln+qkv", 114, false,
                                                              true);
  ok &= run_case<1, 6400, 1600, P::LAYER_NORM, E::BIAS, bf16>("gpt2-xl ln+c_fc", 115, false,
                                                              true);
  ok &= run_case<6, 4800, 1600, P::LAYER_NORM, E::BIAS, bf16>("gpt2-xl ln+qkv 6 tokens", 116,
                                                              false, false);
  ok &= run_case<16, 2304, 768, P::LAYER_NORM, E::BIAS, bf16>("ln 16 rows", 117, false, false);
  ok &= run_case<9, 2176, 4096, P::LAYER_NORM, E::NONE, bf16>("ln (x via cp.async)", 118, false,
                                                             false);
  ok &= run_case<3, 64, 64, P::LAYER_NORM, E::BIAS, bf16>("ln tiny", 119, false, false);
  ok &= run_case<1, 50272, 768, P::LAYER_NORM, E::NONE, bf16>("gpt2 ln+lm_head", 120, false,
                                                              true);
  ok &= run_case<4, 128, 256, P::LAYER_NORM, E::RESIDUAL, float>("ln -> f32 + residual", 121,
                                                                 true, false);
  // GPT-2's c_fc with its GeLU (ln_2 + c_fc + gelu_new: one launch), with and without a bias,
  // fp32 out.
  ok &= run_case<1, 6400, 1600, P::LAYER_NORM, E::GELU_TANH, bf16>("gpt2-xl ln+c_fc+gelu", 122,
                                                                   false, true);
  ok &= run_case<6, 6400, 1600, P::LAYER_NORM, E::GELU_TANH, bf16>(
      "gpt2-xl ln+c_fc+gelu 6 tokens", 123, false, false);
  ok &= run_case<3, 256, 512, P::NONE, E::GELU_TANH, bf16>("gelu, no bias", 124, false, false,
                                                           false, false, false);
  ok &= run_case<5, 192, 320, P::NONE, E::GELU_TANH, float>("gelu f32", 125, false, false);
  // The exact GeLU (GPT-NeoX / Pythia-1.4B's dense_h_to_4h: LayerNorm, bias), at decode and a
  // prompt; without a bias into fp32.
  ok &= run_case<1, 8192, 2048, P::LAYER_NORM, E::GELU, bf16>("neox ln+fc+gelu", 126, false,
                                                               false);
  ok &= run_case<7, 8192, 2048, P::LAYER_NORM, E::GELU, bf16>("neox ln+fc+gelu", 127, false,
                                                               false);
  ok &= run_case<3, 256, 512, P::NONE, E::GELU, float>("exact gelu f32, no bias", 128, false,
                                                       false, false, false, false);
  // A ragged N (GPT-2's 50257-token LM head; an odd bias width): the last tile's rows past N
  // are zero and write nothing; bf16, fp8 and int4 weights.
  ok &= run_case<1, 50257, 1600, P::LAYER_NORM, E::NONE, bf16>("gpt2-xl ln+lm_head (ragged N)",
                                                               126, false, true);
  ok &= run_case<6, 50257, 768, P::LAYER_NORM, E::NONE, bf16>("gpt2 lm_head 6 tokens (ragged N)",
                                                              127, false, false);
  ok &= run_case<3, 101, 256, P::NONE, E::BIAS, bf16>("bias, N = 101", 128, false, false);
  // An odd number of K chunks under a normalizing prologue: a zero chunk past K in the weight
  // rows and the staged x (linear_small_m_weight_cols; the GPT-2 XL cases above are padded
  // too): RMS norm with x staged through cp.async, fp32 norm weights with the gate pairs, and a
  // LayerNorm over 16 rows; 15 chunks stay unpadded.
  static_assert(linear_small_m_tiling(1, 6400, 1600, P::LAYER_NORM, kSms).weight_cols == 1664 &&
                    linear_small_m_tiling(1, 6400, 1600, P::LAYER_NORM, kSms).batch == 2 &&
                    linear_small_m_tiling(1, 6400, 1600, P::NONE, kSms).weight_cols == 1600 &&
                    linear_small_m_tiling(1, 6400, 960, P::RMS_NORM, kSms).weight_cols == 960 &&
                    linear_small_m_tiling(1, 6400, 1600, P::RMS_NORM, kSms, 4).weight_cols ==
                        1600,
                "linear_small_m: odd K chunk counts padded under normalizing bf16 prologues");
  ok &= run_case<9, 2176, 4160, P::RMS_NORM, E::NONE, bf16>("rms, 65 chunks, x via cp.async",
                                                             129, false, false);
  ok &= run_case<3, 4608, 1088, P::RMS_NORM_FP32_WEIGHT, E::GELU_TANH_MUL_PAIRS, bf16>(
      "rms fp32 w + geglu, 17 chunks", 130, false, false);
  ok &= run_case<16, 3200, 1600, P::LAYER_NORM, E::ROPE_PAIRS, bf16, 1600, 64>(
      "ln + rope, 25 chunks, 16 rows", 131, false, false);
  ok &= run_case<2, 25, 128, P::NONE, E::NONE, float, 0, 2, float>("N = 25, x32", 129, false,
                                                                   false);
  ok &= run_case<1, 1003, 512, P::RMS_NORM, E::NONE, bf16, 0, 2, bf16, __nv_fp8_e4m3>(
      "fp8, N = 1003", 130, false, false);
  ok &= run_case<1, 1003, 512, P::RMS_NORM, E::NONE, bf16, 0, 2, bf16, Int4x2, 128>(
      "int4, N = 1003", 131, false, false);
  ok &= run_case<1, 16384, 2048, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16>("gate_up", 33, false, true);
  ok &= run_case<1, 2048, 8192, P::NONE, E::RESIDUAL, bf16>("down", 34, true, true);
  ok &= run_case<1, 128256, 2048, P::RMS_NORM, E::NONE, bf16>("lm_head", 35, false, true);
  // Qwen2.5-1.5B (hidden 1536 = 12 slices of 128: 8 warps, ragged; intermediate 8960 = 70
  // slices: 16 warps, ragged; 96 tiles for o_proj and down).
#if SINTER_LINEAR_RAGGED_K // (off: the previous tiling, for timing side by side)
  static_assert(linear_small_m_tiling(1, 1536, 8960, P::NONE, kSms).warps == 16 &&
                    linear_small_m_tiling(1, 1536, 8960, P::NONE, kSms).steps == 5 &&
                    linear_small_m_tiling(1, 1536, 1536, P::NONE, kSms).warps == 8 &&
                    linear_small_m_tiling(1, 1536, 1536, P::NONE, kSms).steps == 2,
                "ragged K: the warp cap, not a divisor of the K slices");
#endif
  std::printf("-- Qwen2.5-1.5B, M=1 decode (ragged K)\n");
  // Partial rotary (GPT-NeoX / Pythia-1.4B: 16 heads of 128, the first 32 columns rotated),
  // with its LayerNorm prologue and QKV bias; the tiny fixture's shape; fp8 weights.
  ok &= run_case<1, 6144, 2048, P::LAYER_NORM, E::ROPE_PAIRS, bf16, 4096, 128, bf16, bf16, 0, 32>(
      "neox qkv partial rope", 311, false, false, false, true);
  ok &= run_case<6, 192, 64, P::LAYER_NORM, E::ROPE_PAIRS, bf16, 128, 16, bf16, bf16, 0, 4>(
      "tiny partial rope", 312, false, false, false, true);
  ok &= run_case<16, 384, 512, P::NONE, E::ROPE_PAIRS, bf16, 256, 64, bf16, __nv_fp8_e4m3, 0, 16>(
      "partial rope fp8", 313, false, false, false, true);
  ok &= run_case<1, 2048, 1536, P::RMS_NORM, E::ROPE_PAIRS, bf16, 1792, 128>("qwen2 qkv", 301,
                                                                             false, true);
  ok &= run_case<1, 1536, 1536, P::NONE, E::RESIDUAL, bf16>("qwen2 o_proj", 302, true, true);
  ok &= run_case<1, 17920, 1536, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16>("qwen2 gate_up", 303,
                                                                        false, true);
  ok &= run_case<1, 1536, 8960, P::NONE, E::RESIDUAL, bf16>("qwen2 down", 304, true, true);
  ok &= run_case<1, 151936, 1536, P::RMS_NORM, E::NONE, bf16>("qwen2 lm_head", 305, false, true);
  // Gemma 2 2B (hidden 2304, 8 + 4 + 4 heads of 256, intermediate 9216): its RMSNorms scale
  // in fp32 (RMS_NORM_FP32_WEIGHT), its MLP gate is GeGLU (GELU_TANH_MUL_PAIRS).
  std::printf("-- Gemma 2 2B, fp32-scaled norms and GeGLU\n");
  ok &= run_case<11, 96, 512, P::RMS_NORM_FP32_WEIGHT, E::GELU_TANH_MUL_PAIRS, bf16>(
      "f32 norm+geglu", 311, false, false);
  ok &= run_case<9, 2176, 4096, P::RMS_NORM_FP32_WEIGHT, E::NONE, bf16>(
      "f32 norm (x via cp.async)", 312, false, false);
  ok &= run_case<6, 18432, 2304, P::RMS_NORM_FP32_WEIGHT, E::GELU_TANH_MUL_PAIRS, bf16>(
      "gemma2 gate_up", 313, false, true);
  ok &= run_case<1, 4096, 2304, P::RMS_NORM_FP32_WEIGHT, E::ROPE_PAIRS, bf16, 3072, 256>(
      "gemma2 qkv", 314, false, true);
  ok &= run_case<1, 2304, 2048, P::NONE, E::NONE, bf16>("gemma2 o_proj", 315, false, true);
  ok &= run_case<1, 18432, 2304, P::RMS_NORM_FP32_WEIGHT, E::GELU_TANH_MUL_PAIRS, bf16>(
      "gemma2 gate_up", 316, false, true);
  ok &= run_case<1, 2304, 9216, P::NONE, E::NONE, bf16>("gemma2 down", 317, false, true);
  ok &= run_case<1, 256000, 2304, P::RMS_NORM_FP32_WEIGHT, E::NONE, bf16>("gemma2 lm_head", 318,
                                                                          false, true);
  // Gemma 2's post-norm and residual add in the next projection's prologue (decode and
  // 6-token prompts: the residual held in registers; 9 rows of 4096: x via cp.async and the
  // residual read in the pass; 65 chunks: K padded).
  std::printf("-- Gemma 2 2B, post-norm + residual in the next prologue\n");
  constexpr P RN = P::RESIDUAL_RMS_NORM_FP32_WEIGHT;
  ok &= run_case<3, 96, 512, RN, E::GELU_TANH_MUL_PAIRS, bf16>("residual norm + geglu",
                                                                      321, false, false);
  ok &= run_case<9, 2176, 4096, RN, E::NONE, bf16>("residual norm (x via cp.async)", 322,
                                                          false, false);
  ok &= run_case<2, 256, 4160, RN, E::NONE, bf16>("residual norm, 65 chunks", 323, false,
                                                         false);
  ok &= run_case<6, 18432, 2304, RN, E::GELU_TANH_MUL_PAIRS, bf16>(
      "gemma2 residual norm + gate_up", 324, false, true);
  ok &= run_case<1, 4096, 2304, RN, E::ROPE_PAIRS, bf16, 3072, 256>(
      "gemma2 residual norm + qkv", 325, false, true);
  ok &= run_case<1, 18432, 2304, RN, E::GELU_TANH_MUL_PAIRS, bf16>(
      "gemma2 residual norm + gate_up", 326, false, true);
  ok &= run_case<1, 256000, 2304, RN, E::NONE, bf16>("gemma2 residual norm + lm_head",
                                                            327, false, true);
  // The weight double buffer in shared memory (w_smem: 16 warps, bf16 x, no prologue) with
  // several rows of x and a tile count below the SM count.
  static_assert(linear_small_m_tiling(1, 2048, 8192, P::NONE, kSms).w_smem &&
                    linear_small_m_tiling(3, 1024, 4096, P::NONE, kSms).w_smem &&
                    !linear_small_m_tiling(6, 2048, 8192, P::NONE, kSms).w_smem &&
                    linear_small_m_tiling(1, 2048, 2048, P::NONE, kSms).w_smem &&
                    linear_small_m_tiling(1, 2048, 2048, P::NONE, kSms).warps == 8 &&
                    linear_small_m_tiling(1, 2048, 2048, P::NONE, kSms).reg_blocks == 4 &&
                    !linear_small_m_tiling(1, 4096, 2048, P::NONE, kSms).w_smem,
                "w_smem where it fits: 16 warps, or 8 warps owning one tile");
  ok &= run_case<3, 1024, 4096, P::NONE, E::NONE, bf16>("w_smem M=3", 36, false, false);
  // Handoff consumers: the 1B decode down projection and o_proj (w_smem, one or two rows);
  // not prefill rows, not a prologue, not register-buffered tiles.
  static_assert(linear_small_m_handoff_consumer_supported(1, 2048, 8192, P::NONE, kSms) &&
                    linear_small_m_handoff_consumer_supported(1, 2048, 2048, P::NONE, kSms) &&
                    linear_small_m_handoff_consumer_supported(2, 2048, 8192, P::NONE, kSms) &&
                    !linear_small_m_handoff_consumer_supported(3, 1024, 4096, P::NONE, kSms) &&
                    !linear_small_m_handoff_consumer_supported(6, 2048, 8192, P::NONE, kSms) &&
                    !linear_small_m_handoff_consumer_supported(1, 2048, 8192, P::RMS_NORM,
                                                               kSms) &&
                    !linear_small_m_handoff_consumer_supported(1, 4096, 2048, P::NONE, kSms),
                "handoff consumers: w_smem staging of at most 32 vectors per warp and step");
  // Prewait items: RMS_NORM blocks with several tiles copy up to a tile of further steps
  // into shared memory before the wait (gate_up and the LM head: the whole second tile; at
  // M=6 or K=4096 one step, to leave room for the launches beside them).
  static_assert(linear_small_m_tiling(1, 16384, 2048, P::RMS_NORM, kSms).prewait_items == 2 &&
                    linear_small_m_tiling(1, 128256, 2048, P::RMS_NORM, kSms).prewait_items == 2 &&
                    linear_small_m_tiling(6, 16384, 2048, P::RMS_NORM, kSms).prewait_items == 1 &&
                    linear_small_m_tiling(1, 4656, 4096, P::RMS_NORM, kSms).prewait_items == 1 &&
                    linear_small_m_tiling(1, 3072, 2048, P::RMS_NORM, kSms).prewait_items == 0 &&
                    linear_small_m_tiling(1, 16384, 2048, P::NONE, kSms).prewait_items == 0,
                "prewait items where blocks own several tiles and room is left");
  // 291 tiles on 146 blocks: the last block owns one tile (its prewait copies are empty).
  ok &= run_case<3, 4656, 2048, P::RMS_NORM, E::NONE, bf16>("prewait, a block with one tile", 37,
                                                          false, false);
  ok &= run_case<1, 4656, 4096, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16>("prewait, 1 of 4 steps",
                                                                     38, false, false);
  std::printf("-- fp8 weights (per-row scales, dequantized in registers)\n");
  using F8 = __nv_fp8_e4m3;
  ok &= run_case<3, 64, 320, P::NONE, E::NONE, bf16, 0, 2, bf16, F8>("every code", 61, false,
                                                                     false, true);
  ok &= run_case<2, 8208, 192, P::NONE, E::BIAS, bf16, 0, 2, bf16, F8>("bias multi-tile", 62,
                                                                       false, false);
  ok &= run_case<11, 96, 512, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16, 0, 2, bf16, F8>(
      "rms+silu", 63, false, false);
  ok &= run_case<16, 128, 1024, P::RMS_NORM, E::ROPE_PAIRS, bf16, 64, 32, bf16, F8>(
      "rms+rope", 64, false, false);
  ok &= run_case<9, 2048, 1536, P::NONE, E::RESIDUAL, bf16, 0, 2, bf16, F8>("residual", 65, true,
                                                                            false);
  ok &= run_case<3, 1024, 4096, P::NONE, E::NONE, bf16, 0, 2, bf16, F8>("w_smem M=3", 66, false,
                                                                        false);
  ok &= run_case<3, 4656, 2048, P::RMS_NORM, E::NONE, bf16, 0, 2, bf16, F8>("prewait", 67, false,
                                                                            false);
  ok &= run_case<5, 80, 448, P::NONE, E::NONE, float, 0, 2, float, F8>("none x32", 68, false,
                                                                       false);
  ok &= run_case<6, 2048, 2048, P::RMS_NORM, E::ROPE_PAIRS, float, 2048, 64, float, F8>(
      "rms+rope x32", 69, false, false);
  ok &= run_case<6, 16384, 2048, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16, 0, 2, bf16, F8>(
      "gate_up M=6", 70, false, false);
  std::printf("-- Llama 3.2 1B, M=1 decode, fp8 weights\n");
  ok &= run_case<1, 3072, 2048, P::RMS_NORM, E::ROPE_PAIRS, bf16, 2560, 64, bf16, F8>(
      "qkv", 71, false, true);
  ok &= run_case<1, 2048, 2048, P::NONE, E::RESIDUAL, bf16, 0, 2, bf16, F8>("o_proj", 72, true,
                                                                            true);
  ok &= run_case<1, 16384, 2048, P::RMS_NORM, E::SILU_MUL_PAIRS, bf16, 0, 2, bf16, F8>(
      "gate_up", 73, false, true);
  ok &= run_case<1, 2048, 8192, P::NONE, E::RESIDUAL, bf16, 0, 2, bf16, F8>("down", 74, true,
                                                                            true);
  ok &= run_case<1, 128256, 2048, P::RMS_NORM, E::NONE, bf16, 0, 2, bf16, F8>("lm_head", 75,
                                                                              false, true);
  if (!std::getenv("LINEAR_SKIP_INT4")) ok &= run_int4_cases();

  return print_bench(ok);
}
