// Shapes, weights and layout of state_model.cu, shared with the tests that check its numerics.
#pragma once

namespace sinter::test::state_model {

constexpr int kRows = 4, kCols = 8, kN = 16;
// State block: "acc" f32[kRows][kCols] at 0, ".calls" i32[1] at 256 (256-byte aligned regions).
constexpr unsigned kAccOffset = 0;
constexpr unsigned kAccBytes = kRows * kCols * 4;
constexpr unsigned kCallsOffset = 256;
constexpr unsigned kStateBytes = 512;
// Weight blob: W f32[kCols][kN].
constexpr unsigned kWeightBytes = kCols * kN * 4;

inline float w(int k, int n) { return float((k * kN + n) % 5 - 2) * 0.5f; }

// entry 0 "write": input x f32[kRows,kCols]; acc += x, calls += 1 (one kernel)
// entry 1 "read":  outputs acc f32[kRows,kCols] (a copy), calls i32[1] (a copy),
//                  y f32[kRows,kN] = acc @ W (cuBLASLt, reading the state directly)
inline float reference_y(const float *acc, int m, int n) {
  float sum = 0.0f;
  for (int k = 0; k < kCols; ++k)
    sum += acc[m * kCols + k] * w(k, n);
  return sum;
}

} // namespace sinter::test::state_model
