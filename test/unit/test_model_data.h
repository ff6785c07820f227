// Shapes and weight values of test_model.cu, shared with the test that checks its numerics.
#pragma once

namespace sinter::test::model {

constexpr int kM = 4, kK = 8, kN = 16;
// Weight blob layout (bytes): W[kK][kN] f32 | bias[kN] f32 | scale[kN] f32.
constexpr unsigned kWOffset = 0;
constexpr unsigned kBiasOffset = kK * kN * 4;
constexpr unsigned kScaleOffset = kBiasOffset + kN * 4;
constexpr unsigned kWeightBytes = kScaleOffset + kN * 4;

inline float w(int k, int n) { return float((k * kN + n) % 7 - 3) * 0.25f; }
inline float bias(int n) { return float(n) * 0.125f - 1.0f; }
inline float scale(int n) { return 1.0f + float(n) * 0.0625f; }

// y = relu(x @ W + bias) * scale   (gemm into the arena, then a kernel)
// z = 2 * x                        (a kernel reading an input, writing an output)
inline float reference_y(const float *x, int m, int n) {
  float acc = bias(n);
  for (int k = 0; k < kK; ++k)
    acc += x[m * kK + k] * w(k, n);
  return (acc > 0.0f ? acc : 0.0f) * scale(n);
}

} // namespace sinter::test::model
