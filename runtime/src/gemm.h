// One GEMM: cuBLASLt descriptors and algorithm built once per context, or for strict fp32 a
// split-TF32 kernel (gemm_split_tf32.h) where it timed faster, enqueued per run.
#pragma once

#include "gemm_split_tf32.h"
#include "sinter/program.h"
#include "sinter/sinter.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

namespace sinter::rt {

// Row-major c[m,n] = a[m,k] @ b[k,n] (+ bias[n]) is column-major C^T[n,m] = B^T[n,k] * A^T[k,m],
// so cuBLASLt sees A := b (n x k, ld n), B := a (k x m, ld k), C := c (n x m, ld n), no
// transposes, and the bias (length n) runs along its rows as CUBLASLT_EPILOGUE_BIAS expects.
struct GemmPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t layout_b = nullptr; // cuBLASLt A
  cublasLtMatrixLayout_t layout_a = nullptr; // cuBLASLt B
  cublasLtMatrixLayout_t layout_c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  // Device pointers of the row-major operands. All void* so the run path patches I/O slots
  // through one `void **` type.
  void *a = nullptr, *b = nullptr, *bias = nullptr, *c = nullptr, *residual = nullptr;
  bool has_bias = false;
  bool f64 = false;          // f64 operands: f64 compute and alpha/beta as doubles
  bool has_residual = false; // beta = 1 with the residual as cuBLASLt's C, c as its D
  bool bias_is_io = false; // bias pointer must be re-set on the descriptor each run
  int m = 0, n = 0, k = 0;   // split_tf32_applies: the product's dimensions
  bool split_tf32_applies = false;
  // The split-TF32 kernel context creation timed fastest (variant < 0: cuBLASLt's algo). A run
  // whose I/O pointers are not 16-byte aligned takes `algo` instead.
  SplitTf32Choice split_tf32;
};

// What one model keeps per GEMM launch, so that every context runs the same kernels.
struct GemmChoice {
  cublasLtMatmulAlgo_t algo{};
  SplitTf32Choice split_tf32;
};

// The outcome of enqueuing one GEMM: cuBLASLt's status, or the split-TF32 kernel's CUDA error.
struct GemmEnqueueResult {
  cublasStatus_t lt = CUBLAS_STATUS_SUCCESS;
  cudaError_t cuda = cudaSuccess;
  bool ok() const { return lt == CUBLAS_STATUS_SUCCESS && cuda == cudaSuccess; }
  // "cublasLtMatmul: CUBLAS_STATUS_..." or "split-TF32 gemm: cudaError...".
  const char *what() const;
  const char *name() const;
};

// Bytes operand `which` of a GEMM spans ('a', 'b', 'c', 'r' residual, 'x' bias), every batch
// included (a broadcast operand is one matrix): what a stand-in for an I/O operand must hold
// while algorithms are timed. The sizes are check_program's, which rejected any that overflow.
uint64_t gemm_operand_bytes(const sinter_gemm_desc &desc, char which);

// Builds descriptors and layouts (no device work). Pointers are filled in by the caller.
sinter_status gemm_plan_init(const sinter_gemm_desc &desc, GemmPlan &plan);
void gemm_plan_destroy(GemmPlan &plan);

// Asks the heuristic for up to 8 algorithms within `workspace_bytes` and, where
// split_tf32_applies, adds the split-TF32 candidates; times each a few times on the plan's
// current pointers (which must be valid device memory) on `stream` and keeps the fastest
// cuBLASLt algorithm and, if one of them beat it, the fastest split-TF32 kernel.
sinter_status gemm_select_algo(cublasLtHandle_t handle, GemmPlan &plan, void *workspace,
                               size_t workspace_bytes, cudaStream_t stream, uint32_t launch);

// Takes a choice another context of the model made (gemm_select_algo's result).
sinter_status gemm_adopt_choice(GemmPlan &plan, const GemmChoice &choice, uint32_t launch);
GemmChoice gemm_choice(const GemmPlan &plan);

GemmEnqueueResult gemm_enqueue(cublasLtHandle_t handle, GemmPlan &plan, void *workspace,
                               size_t workspace_bytes, cudaStream_t stream);

} // namespace sinter::rt
