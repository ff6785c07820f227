// GPU test of gate_mul (SwiGLU and GeGLU on a gate|up buffer) against a CPU reference with
// HF's rounding: bf16(bf16(act(gate)) * up), act silu or gelu_tanh (in double).
#include "gate_mul.cuh"
#include "gpu_test_util.h"

#include <cmath>

using namespace sinter::kernels;
using namespace gputest;

double reference_activation(GateActivation act, double g) {
  if (act == GateActivation::GELU_TANH)
    return 0.5 * g * (1.0 + std::tanh(0.79788456080286535588 * (g + 0.044715 * g * g * g)));
  return g / (1.0 + std::exp(-g));
}

template <int M, int N, GateActivation ACT>
bool run_case(const char *name, uint64_t seed) {
  std::vector<uint16_t> gu = random_bf16(size_t(M) * 2 * N, seed * 3 + 1, -6.f, 6.f);
  std::vector<float> ref(size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < N; ++j) {
      const float g = bf2f(gu[size_t(m) * 2 * N + j]), u = bf2f(gu[size_t(m) * 2 * N + N + j]);
      ref[size_t(m) * N + j] = rbf(rbf(float(reference_activation(ACT, g))) * u);
    }
  bf16 *din = reinterpret_cast<bf16 *>(to_device(gu));
  bf16 *dout = nullptr;
  CUDA_CHECK(cudaMalloc(&dout, ref.size() * 2));
  constexpr LaunchParams lp = gate_mul_launch(M, N);
  launch(gate_mul<M, N, ACT>, lp, 0, (const bf16 *)din, dout);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> gh = to_host(reinterpret_cast<const uint16_t *>(dout), ref.size());
  std::vector<float> got(gh.size());
  for (size_t i = 0; i < got.size(); ++i) got[i] = bf2f(gh[i]);
  char label[128];
  std::snprintf(label, sizeof label, "%s M=%d N=%d", name, M, N);
  // Fast exp: the activation can land one bf16 ulp apart before the product.
  bool ok = report(label, compare(got, ref, 1.0 / 64));
  CUDA_CHECK(cudaFree(din));
  CUDA_CHECK(cudaFree(dout));
  return ok;
}

int main() {
  if (!have_device()) return 77;
  bool ok = true;
  ok &= run_case<128, 8192, GateActivation::SILU>("silu, llama 128 tokens", 81);
  ok &= run_case<17, 128, GateActivation::SILU>("silu, tiny", 82);
  ok &= run_case<3, 8, GateActivation::SILU>("silu, smallest", 83);
  ok &= run_case<64, 9216, GateActivation::GELU_TANH>("gelu_tanh, gemma 2 64 tokens", 84);
  ok &= run_case<17, 128, GateActivation::GELU_TANH>("gelu_tanh, tiny", 85);
  return ok ? 0 : 1;
}
