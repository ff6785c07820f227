// cuBLASLt plan construction and algorithm choice (context creation), and the per-run call.
#include "gemm.h"

#include "error.h"
#include "validate.h" // dtype_bytes

#include <cfloat>

namespace sinter::rt {
namespace {

cudaDataType_t cuda_type(int32_t dtype) {
  switch (dtype) {
  case SINTER_DTYPE_F16: return CUDA_R_16F;
  case SINTER_DTYPE_BF16: return CUDA_R_16BF;
  case SINTER_DTYPE_F64: return CUDA_R_64F;
  default: return CUDA_R_32F;
  }
}

sinter_status fail_lt(cublasStatus_t st, const char *what) {
  return fail(st == CUBLAS_STATUS_ALLOC_FAILED ? SINTER_OUT_OF_MEMORY : SINTER_CUDA_ERROR,
              "%s: cuBLASLt status %d (%s)", what, int(st), cublasLtGetStatusName(st));
}

const float kOne = 1.0f, kZero = 0.0f;
const double kOneF64 = 1.0, kZeroF64 = 0.0;

} // namespace

uint64_t gemm_operand_bytes(const sinter_gemm_desc &g, char which) {
  const uint64_t e = dtype_bytes(g.dtype);
  const uint64_t batch = g.batch > 1 ? uint64_t(g.batch) : 1;
  switch (which) {
  case 'a': return uint64_t(g.m) * uint64_t(g.k) * e * (g.broadcast_a ? 1 : batch);
  case 'b': return uint64_t(g.k) * uint64_t(g.n) * e * (g.broadcast_b ? 1 : batch);
  case 'c':
  case 'r': return uint64_t(g.m) * uint64_t(g.n) * e * batch;
  default: return uint64_t(g.n) * e;
  }
}

sinter_status gemm_plan_init(const sinter_gemm_desc &g, GemmPlan &plan) {
  // strict: plain fp32 FMA; tf32: fp32 storage on TF32 tensor cores; native: 16-bit operands,
  // fp32 accumulation; f64: f64 throughout. The scale type (alpha/beta) is fp32 except for f64.
  plan.f64 = g.dtype == SINTER_DTYPE_F64;
  const cublasComputeType_t compute = plan.f64 ? CUBLAS_COMPUTE_64F
                                      : g.precision == SINTER_PRECISION_TF32
                                          ? CUBLAS_COMPUTE_32F_FAST_TF32
                                          : CUBLAS_COMPUTE_32F;
  const cudaDataType_t type = cuda_type(g.dtype);
  cublasStatus_t st =
      cublasLtMatmulDescCreate(&plan.op, compute, plan.f64 ? CUDA_R_64F : CUDA_R_32F);
  if (st != CUBLAS_STATUS_SUCCESS)
    return fail_lt(st, "cublasLtMatmulDescCreate");
  plan.has_bias = g.bias.space != SINTER_BUFFER_NONE;
  plan.has_residual = g.residual.space != SINTER_BUFFER_NONE;
  plan.bias_is_io = g.bias.space == SINTER_BUFFER_INPUT || g.bias.space == SINTER_BUFFER_OUTPUT;
  plan.split_tf32_applies = split_tf32_applies(g);
  if (plan.split_tf32_applies) {
    plan.m = int(g.m);
    plan.n = int(g.n);
    plan.k = int(g.k);
  }
  if (plan.has_bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    st = cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                        sizeof epilogue);
    if (st != CUBLAS_STATUS_SUCCESS)
      return fail_lt(st, "setting the bias epilogue");
  }
  const uint64_t m = uint64_t(g.m), n = uint64_t(g.n), k = uint64_t(g.k);
  if ((st = cublasLtMatrixLayoutCreate(&plan.layout_b, type, n, k, int64_t(n))) !=
          CUBLAS_STATUS_SUCCESS ||
      (st = cublasLtMatrixLayoutCreate(&plan.layout_a, type, k, m, int64_t(k))) !=
          CUBLAS_STATUS_SUCCESS ||
      (st = cublasLtMatrixLayoutCreate(&plan.layout_c, type, n, m, int64_t(n))) !=
          CUBLAS_STATUS_SUCCESS)
    return fail_lt(st, "cublasLtMatrixLayoutCreate");
  if (g.batch > 1) {
    // cuBLASLt's A is our b, its B our a (see gemm.h); a broadcast operand has stride 0.
    const int32_t count = int32_t(g.batch);
    const int64_t strides[3] = {g.broadcast_b ? 0 : int64_t(k * n),
                                g.broadcast_a ? 0 : int64_t(m * k), int64_t(m * n)};
    cublasLtMatrixLayout_t layouts[3] = {plan.layout_b, plan.layout_a, plan.layout_c};
    for (int i = 0; i < 3; ++i) {
      if ((st = cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                 &count, sizeof count)) != CUBLAS_STATUS_SUCCESS ||
          (st = cublasLtMatrixLayoutSetAttribute(layouts[i],
                                                 CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                 &strides[i], sizeof strides[i])) !=
              CUBLAS_STATUS_SUCCESS)
        return fail_lt(st, "setting the batch of a gemm layout");
    }
  }
  return SINTER_OK;
}

void gemm_plan_destroy(GemmPlan &plan) {
  if (plan.layout_c) cublasLtMatrixLayoutDestroy(plan.layout_c);
  if (plan.layout_a) cublasLtMatrixLayoutDestroy(plan.layout_a);
  if (plan.layout_b) cublasLtMatrixLayoutDestroy(plan.layout_b);
  if (plan.op) cublasLtMatmulDescDestroy(plan.op);
  plan = GemmPlan{};
}

const char *GemmEnqueueResult::what() const {
  return cuda != cudaSuccess ? "split-TF32 gemm" : "cublasLtMatmul";
}

const char *GemmEnqueueResult::name() const {
  return cuda != cudaSuccess ? cudaGetErrorName(cuda) : cublasLtGetStatusName(lt);
}

namespace {

// The plan's product as split_tf32_gemm takes it: a bias is the epilogue's source broadcast
// from one row (ldc 0), a residual its full source.
SplitTf32Operands split_tf32_operands(const GemmPlan &plan) {
  SplitTf32Operands o;
  o.m = plan.m;
  o.n = plan.n;
  o.k = plan.k;
  o.a = static_cast<const float *>(plan.a);
  o.b = static_cast<const float *>(plan.b);
  o.d = static_cast<float *>(plan.c);
  if (plan.has_bias) {
    o.c = static_cast<const float *>(plan.bias);
    o.ldc = 0;
    o.beta = 1.f;
  } else if (plan.has_residual) {
    o.c = static_cast<const float *>(plan.residual);
    o.ldc = plan.n;
    o.beta = 1.f;
  } else {
    o.c = o.d; // not read: beta 0
    o.ldc = plan.n;
  }
  return o;
}

cublasStatus_t lt_enqueue(cublasLtHandle_t handle, GemmPlan &plan, void *workspace,
                          size_t workspace_bytes, cudaStream_t stream) {
  if (plan.bias_is_io) {
    // A weights/arena bias pointer is set once (gemm_select_algo); an I/O bias moves per run.
    cublasStatus_t st = cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                       &plan.bias, sizeof plan.bias);
    if (st != CUBLAS_STATUS_SUCCESS)
      return st;
  }
  const void *one = plan.f64 ? static_cast<const void *>(&kOneF64) : &kOne;
  const void *zero = plan.f64 ? static_cast<const void *>(&kZeroF64) : &kZero;
  return cublasLtMatmul(handle, plan.op, one, plan.b, plan.layout_b, plan.a, plan.layout_a,
                        plan.has_residual ? one : zero,
                        plan.has_residual ? plan.residual : plan.c, plan.layout_c, plan.c,
                        plan.layout_c, &plan.algo, workspace, workspace_bytes, stream);
}

} // namespace

GemmEnqueueResult gemm_enqueue(cublasLtHandle_t handle, GemmPlan &plan, void *workspace,
                               size_t workspace_bytes, cudaStream_t stream) {
  GemmEnqueueResult r;
  if (plan.split_tf32.variant >= 0) {
    const SplitTf32Operands ops = split_tf32_operands(plan);
    if (split_tf32_aligned(ops)) {
      r.cuda = split_tf32_gemm(plan.split_tf32, ops, workspace, workspace_bytes, stream);
      return r;
    }
  }
  r.lt = lt_enqueue(handle, plan, workspace, workspace_bytes, stream);
  return r;
}

GemmChoice gemm_choice(const GemmPlan &plan) { return GemmChoice{plan.algo, plan.split_tf32}; }

namespace {

// A weights / arena bias is set on the descriptor once, when the plan's algorithm is chosen or
// adopted (an I/O bias moves per run: lt_enqueue sets it).
sinter_status set_bias_pointer(GemmPlan &plan, uint32_t launch) {
  if (!plan.has_bias)
    return SINTER_OK;
  cublasStatus_t st = cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                     &plan.bias, sizeof plan.bias);
  if (st == CUBLAS_STATUS_SUCCESS)
    return SINTER_OK;
  return fail(SINTER_CUDA_ERROR, "launch %u: setting the bias pointer: %s", launch,
              cublasLtGetStatusName(st));
}

} // namespace

sinter_status gemm_adopt_choice(GemmPlan &plan, const GemmChoice &choice, uint32_t launch) {
  plan.algo = choice.algo;
  plan.split_tf32 = plan.split_tf32_applies ? choice.split_tf32 : SplitTf32Choice{};
  return set_bias_pointer(plan, launch);
}

sinter_status gemm_select_algo(cublasLtHandle_t handle, GemmPlan &plan, void *workspace,
                               size_t workspace_bytes, cudaStream_t stream, uint32_t launch) {
  if (sinter_status status = set_bias_pointer(plan, launch); status != SINTER_OK)
    return status;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasStatus_t st = cublasLtMatmulPreferenceCreate(&pref);
  if (st != CUBLAS_STATUS_SUCCESS)
    return fail_lt(st, "cublasLtMatmulPreferenceCreate");
  uint64_t ws = workspace_bytes;
  st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                            sizeof ws);
  constexpr int kCandidates = 8;
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(handle, plan.op, plan.layout_b, plan.layout_a,
                                        plan.layout_c, plan.layout_c, pref, kCandidates, results,
                                        &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS)
    return fail_lt(st, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    return fail(SINTER_CUDA_ERROR, "launch %u: cuBLASLt has no algorithm for this gemm", launch);

  // Time each candidate on the real buffers: one warm-up call, then kTimed calls.
  constexpr int kTimed = 3;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaError_t err = cudaEventCreate(&start);
  if (err == cudaSuccess)
    err = cudaEventCreate(&stop);
  if (err != cudaSuccess) {
    if (start) cudaEventDestroy(start);
    return fail_cuda(err, "cudaEventCreate");
  }
  // Milliseconds for kTimed calls after a warm-up one, or FLT_MAX when a call failed.
  auto time_calls = [&](auto &&enqueue) {
    bool ok = enqueue();
    ok = ok && cudaEventRecord(start, stream) == cudaSuccess;
    for (int r = 0; ok && r < kTimed; ++r)
      ok = enqueue();
    ok = ok && cudaEventRecord(stop, stream) == cudaSuccess &&
         cudaEventSynchronize(stop) == cudaSuccess;
    float ms = 0;
    if (!ok || cudaEventElapsedTime(&ms, start, stop) != cudaSuccess)
      ms = FLT_MAX;
    (void)cudaGetLastError(); // a failed candidate must not poison the next one
    return ms;
  };
  float best_ms = FLT_MAX;
  int best = -1;
  for (int i = 0; i < found; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS)
      continue;
    plan.algo = results[i].algo;
    const float ms = time_calls([&] {
      return lt_enqueue(handle, plan, workspace, workspace_bytes, stream) == CUBLAS_STATUS_SUCCESS;
    });
    if (ms < best_ms) {
      best_ms = ms;
      best = i;
    }
  }
  if (best >= 0)
    plan.algo = results[best].algo;
  plan.split_tf32 = SplitTf32Choice{};
  const SplitTf32Operands ops = split_tf32_operands(plan);
  if (plan.split_tf32_applies && split_tf32_aligned(ops)) {
    SplitTf32Choice candidates[64];
    const int count = split_tf32_candidates(plan.k, candidates, 64);
    for (int i = 0; i < count; ++i) {
      const float ms = time_calls([&] {
        return split_tf32_gemm(candidates[i], ops, workspace, workspace_bytes, stream) ==
               cudaSuccess;
      });
      if (ms < best_ms) {
        best_ms = ms;
        plan.split_tf32 = candidates[i];
      }
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (best < 0)
    return fail(SINTER_CUDA_ERROR, "launch %u: none of the %d cuBLASLt candidates ran", launch,
                found);
  return SINTER_OK;
}

} // namespace sinter::rt
