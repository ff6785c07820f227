// fp32 GEMMs with fp32 accuracy on TF32 tensor cores (--precision=strict): each operand is split
// in registers into a TF32 high part and a TF32 remainder, and three products (hi*hi, hi*lo,
// lo*hi) are summed in fp32 (CUTLASS's OpMultiplyAddFastF32, "3xTF32"). The dropped lo*lo term
// and the remainder's own TF32 rounding are about 2^-22 of each product, below fp32 FMA
// summation error at these depths. Precompiled into the runtime archive (gemm_split_tf32.cu),
// so compiling a model instantiates nothing.
#pragma once

#include "sinter/program.h"

#include <cstddef>
#include <cuda_runtime_api.h>

namespace sinter::rt {

// One kernel configuration and its K split: what context creation times against cuBLASLt's
// algorithms and what the plan keeps. variant < 0: none (cuBLASLt).
struct SplitTf32Choice {
  int variant = -1;
  int split_k = 1;
};

// Row-major d[m, n] = a[m, k] @ b[k, n] + beta * c, where c is [m, n] with row stride ldc, or
// one row broadcast to every row when ldc == 0 (a bias). a, b, c, d 16-byte aligned.
struct SplitTf32Operands {
  int m = 0, n = 0, k = 0;
  const float *a = nullptr, *b = nullptr, *c = nullptr;
  long long ldc = 0;
  float beta = 0.f;
  float *d = nullptr;
};

// Whether a gemm of the program may run as split-TF32: fp32 at strict precision, one product
// (no batch) of at least 2^26 multiply-adds with k >= 256, not both a bias and a residual (the
// epilogue adds one source), n and k multiples of 4 (16-byte rows), the dimensions within int.
bool split_tf32_applies(const sinter_gemm_desc &desc);

// Whether the operand pointers allow the 16-byte accesses (I/O pointers move per run; a
// misaligned run falls back to the plan's cuBLASLt algorithm).
bool split_tf32_aligned(const SplitTf32Operands &ops);

// The candidates for a product over k: kernel configurations times the K splits worth timing.
// Returns how many were written to out (at most max).
int split_tf32_candidates(int k, SplitTf32Choice *out, int max);

// Enqueues one product on `stream`; the workspace holds the K split's tile semaphores.
cudaError_t split_tf32_gemm(const SplitTf32Choice &choice, const SplitTf32Operands &ops,
                            void *workspace, size_t workspace_bytes, cudaStream_t stream);

// A variant's tile shape ("128x64x32"; "cublasLt" for none), for the GPU test's report.
const char *split_tf32_variant_name(int variant);

} // namespace sinter::rt
