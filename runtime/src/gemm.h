// One cuBLASLt GEMM: descriptors and algorithm built once per context, enqueued per run.
#pragma once

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
};

// Bytes operand `which` of a GEMM spans ('a', 'b', 'c', 'r' residual, 'x' bias), every batch
// included (a broadcast operand is one matrix): what a stand-in for an I/O operand must hold
// while algorithms are timed. The sizes are check_program's, which rejected any that overflow.
uint64_t gemm_operand_bytes(const sinter_gemm_desc &desc, char which);

// Builds descriptors and layouts (no device work). Pointers are filled in by the caller.
sinter_status gemm_plan_init(const sinter_gemm_desc &desc, GemmPlan &plan);
void gemm_plan_destroy(GemmPlan &plan);

// Asks the heuristic for up to 8 algorithms within `workspace_bytes`; times each a few times on
// the plan's current pointers (which must be valid device memory) on `stream`, keeps the fastest.
sinter_status gemm_select_algo(cublasLtHandle_t handle, GemmPlan &plan, void *workspace,
                               size_t workspace_bytes, cudaStream_t stream, uint32_t launch);

cublasStatus_t gemm_enqueue(cublasLtHandle_t handle, GemmPlan &plan, void *workspace,
                            size_t workspace_bytes, cudaStream_t stream);

} // namespace sinter::rt
