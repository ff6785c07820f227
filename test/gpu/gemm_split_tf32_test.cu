// The runtime's split-TF32 fp32 GEMM (runtime/src/gemm_split_tf32.cu) against a float64 CPU
// reference: every kernel variant and K split, shapes that are not multiples of the tiles, a
// bias broadcast from one row (ldc 0), a residual, and W2's three LoRA MLP products. The bound
// is fp32's own: the relative Frobenius error of the same product summed in fp32 on the CPU,
// times 1.5, within [1e-6, 4e-6] (TF32 alone is ~1e-3: a plain TF32 product fails it, which the
// test checks too). Prints each variant's time beside cuBLASLt fp32 and TF32 on W2's shapes.
#include <cublasLt.h>

#include "gemm_split_tf32.h"
#include "gpu_test_util.h"

using namespace sinter::rt;

namespace {

struct Problem {
  const char *name;
  int m, n, k;
  enum Source { NONE, BIAS, RESIDUAL } source;
  bool timed; // W2's shapes: also timed against cuBLASLt
};

// Reference rows: all of them for small m, else 48 spread over m (the first and last included).
std::vector<int> reference_rows(int m) {
  std::vector<int> rows;
  if (m <= 64) {
    for (int i = 0; i < m; ++i) rows.push_back(i);
  } else {
    for (int i = 0; i < 48; ++i) rows.push_back(int(int64_t(i) * (m - 1) / 47));
  }
  return rows;
}

// Relative Frobenius error of got against the float64 product over the reference rows.
double rel_error(const std::vector<float> &got, const std::vector<double> &ref,
                 const std::vector<int> &rows, int n) {
  double num = 0, den = 0;
  for (size_t r = 0; r < rows.size(); ++r)
    for (int j = 0; j < n; ++j) {
      const double d = double(got[size_t(rows[r]) * n + j]) - ref[r * n + j];
      num += d * d;
      den += ref[r * n + j] * ref[r * n + j];
    }
  return std::sqrt(num / std::max(den, 1e-300));
}

float tf32_round(float x) { // round to nearest, ties away (cvt.rna.tf32.f32)
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x1000u) & ~0x1FFFu;
  std::memcpy(&x, &u, 4);
  return x;
}

double lt_ms(cublasLtHandle_t lt, const Problem &p, const float *a, const float *b, float *d,
             void *ws, size_t ws_bytes, cublasComputeType_t compute) {
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulDescCreate(&op, compute, CUDA_R_32F);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, p.n, p.k, p.n);
  cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, p.k, p.m, p.k);
  cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, p.n, p.m, p.n);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  uint64_t wsb = ws_bytes;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb,
                                       sizeof wsb);
  cublasLtMatmulHeuristicResult_t res[8];
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(lt, op, lb, la, lc, lc, pref, 8, res, &found);
  const float one = 1.f, zero = 0.f;
  double best = 1e30;
  for (int i = 0; i < found; ++i)
    best = std::min(best, gputest::median_ms(
                              [&] {
                                cublasLtMatmul(lt, op, &one, b, lb, a, la, &zero, d, lc, d, lc,
                                               &res[i].algo, ws, ws_bytes, 0);
                              },
                              20));
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(op);
  return best;
}

} // namespace

int main() {
  if (!gputest::have_device()) return 77;
  const Problem problems[] = {
      {"tiny 1x4x4", 1, 4, 4, Problem::NONE, false},
      {"ragged 77x36x52 + bias", 77, 36, 52, Problem::BIAS, false},
      {"ragged 130x260x1028 + residual", 130, 260, 1028, Problem::RESIDUAL, false},
      {"ragged 333x132x2100", 333, 132, 2100, Problem::NONE, false},
      {"W2 down 4096x256x3584 + bias", 4096, 256, 3584, Problem::BIAS, true},
      {"W2 mid 4096x256x256 + bias", 4096, 256, 256, Problem::BIAS, true},
      {"W2 up 4096x3584x256 + bias", 4096, 3584, 256, Problem::BIAS, true},
  };
  constexpr size_t kWorkspace = 32u << 20;
  void *ws = nullptr;
  CUDA_CHECK(cudaMalloc(&ws, kWorkspace));
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) return 1;
  bool all_ok = true;
  for (const Problem &p : problems) {
    gputest::Rng rng(uint64_t(p.m) * 131 + p.n * 7 + p.k);
    std::vector<float> a(size_t(p.m) * p.k), b(size_t(p.k) * p.n), src;
    for (auto &v : a) v = rng.uniform(-1.f, 1.f);
    for (auto &v : b) v = rng.uniform(-1.f, 1.f) / std::sqrt(float(p.k));
    if (p.source == Problem::BIAS) src.resize(p.n);
    if (p.source == Problem::RESIDUAL) src.resize(size_t(p.m) * p.n);
    for (auto &v : src) v = rng.uniform(-1.f, 1.f);
    const std::vector<int> rows = reference_rows(p.m);
    std::vector<double> ref(rows.size() * p.n);
    std::vector<float> fp32(size_t(p.m) * p.n), tf32(size_t(p.m) * p.n);
    gputest::parallel_for(rows.size(), [&](size_t r) {
      const int i = rows[r];
      for (int j = 0; j < p.n; ++j) {
        double acc = 0;
        float acc32 = 0, acc_tf32 = 0;
        for (int kk = 0; kk < p.k; ++kk) {
          const float x = a[size_t(i) * p.k + kk], w = b[size_t(kk) * p.n + j];
          acc += double(x) * double(w);
          acc32 = std::fma(x, w, acc32);
          acc_tf32 = std::fma(tf32_round(x), tf32_round(w), acc_tf32);
        }
        const float s = p.source == Problem::BIAS       ? src[j]
                        : p.source == Problem::RESIDUAL ? src[size_t(i) * p.n + j]
                                                        : 0.f;
        ref[r * p.n + j] = acc + s;
        fp32[size_t(i) * p.n + j] = acc32 + s;
        tf32[size_t(i) * p.n + j] = acc_tf32 + s;
      }
    });
    const double fp32_err = rel_error(fp32, ref, rows, p.n);
    const double tf32_err = rel_error(tf32, ref, rows, p.n);
    const double bound = std::min(4e-6, std::max(1.5 * fp32_err, 1e-6));
    if (tf32_err <= bound) {
      std::printf("FAIL %s: the bound %.2e does not reject plain TF32 (%.2e)\n", p.name, bound,
                  tf32_err);
      all_ok = false;
    }
    float *da = gputest::to_device(a), *db = gputest::to_device(b);
    float *dsrc = src.empty() ? nullptr : gputest::to_device(src);
    float *dd = nullptr;
    CUDA_CHECK(cudaMalloc(&dd, size_t(p.m) * p.n * 4));
    SplitTf32Operands ops;
    ops.m = p.m;
    ops.n = p.n;
    ops.k = p.k;
    ops.a = da;
    ops.b = db;
    ops.d = dd;
    ops.c = dsrc ? dsrc : dd;
    ops.ldc = p.source == Problem::BIAS ? 0 : p.n;
    ops.beta = dsrc ? 1.f : 0.f;
    if (!split_tf32_aligned(ops)) {
      std::printf("FAIL %s: cudaMalloc'd operands reported misaligned\n", p.name);
      all_ok = false;
    }
    SplitTf32Choice choices[64];
    const int count = split_tf32_candidates(p.k, choices, 64);
    std::printf("%s: fp32 CPU error %.2e, TF32 %.2e, bound %.2e\n", p.name, fp32_err, tf32_err,
                bound);
    for (int c = 0; c < count; ++c) {
      CUDA_CHECK(cudaMemset(dd, 0xFF, size_t(p.m) * p.n * 4)); // NaN: unwritten shows
      const cudaError_t err = split_tf32_gemm(choices[c], ops, ws, kWorkspace, 0);
      CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<float> got = gputest::to_host(dd, size_t(p.m) * p.n);
      const double e = err == cudaSuccess ? rel_error(got, ref, rows, p.n) : 1.0;
      const bool ok = err == cudaSuccess && e <= bound;
      all_ok = all_ok && ok;
      double us = 0;
      if (p.timed)
        us = 1e3 *
             gputest::median_ms([&] { split_tf32_gemm(choices[c], ops, ws, kWorkspace, 0); }, 20);
      std::printf("  %s %-10s split %d: error %.2e%s", ok ? "ok  " : "FAIL",
                  split_tf32_variant_name(choices[c].variant), choices[c].split_k, e,
                  err == cudaSuccess ? "" : " (launch failed)");
      if (p.timed) std::printf("  %8.1f us  %6.1f TFLOP/s", us, 2.0 * p.m * p.n * p.k / us / 1e6);
      std::printf("\n");
    }
    if (p.timed) {
      const double fp32_ms = lt_ms(lt, p, da, db, dd, ws, kWorkspace, CUBLAS_COMPUTE_32F);
      const double tf32_ms = lt_ms(lt, p, da, db, dd, ws, kWorkspace, CUBLAS_COMPUTE_32F_FAST_TF32);
      std::printf("  cuBLASLt fp32 %8.1f us, TF32 %8.1f us\n", fp32_ms * 1e3, tf32_ms * 1e3);
    }
    CUDA_CHECK(cudaFree(da));
    CUDA_CHECK(cudaFree(db));
    CUDA_CHECK(cudaFree(dd));
    if (dsrc) CUDA_CHECK(cudaFree(dsrc));
  }
  // Not 16-byte aligned: the runtime must fall back to cuBLASLt.
  SplitTf32Operands odd;
  odd.a = reinterpret_cast<const float *>(uintptr_t(256 + 4));
  odd.b = odd.a;
  odd.d = reinterpret_cast<float *>(uintptr_t(256));
  if (split_tf32_aligned(odd)) {
    std::printf("FAIL: a 4-byte offset operand reported aligned\n");
    all_ok = false;
  }
  cublasLtDestroy(lt);
  CUDA_CHECK(cudaFree(ws));
  std::printf("%s\n", all_ok ? "PASS" : "FAIL");
  return all_ok ? 0 : 1;
}
