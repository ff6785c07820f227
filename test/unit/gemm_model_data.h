// Shapes and weights of gemm_model.cu: one GEMM per dtype/precision, writing straight into
// outputs (so the GEMM operands themselves are patched I/O pointers).
#pragma once

namespace sinter::test::gemm_model {

struct Problem {
  int m, n, k;
  unsigned w_offset, bias_offset; // bytes into the weight blob; bias_offset 0 = no bias
  int salt;
};
// 0: bf16 native, bias   1: f32 tf32, no bias   2: f16 strict (fp32 compute), bias
constexpr Problem kProblems[3] = {
    {64, 256, 128, 0, 65536, 0},
    {32, 96, 64, 66048, 0, 1},
    {16, 48, 32, 90624, 93696, 2},
};
constexpr unsigned kWeightBytes = 93792;

// Small multiples of 1/16 and 1/8: exact in bf16, f16 and tf32, so only output rounding differs.
inline float w(int k, int n, int salt) { return float((k * 31 + n * 17 + salt) % 13 - 6) / 16.0f; }
inline float bias(int n) { return float(n % 5 - 2) / 8.0f; }

} // namespace sinter::test::gemm_model
