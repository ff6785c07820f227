// GPU test of rms_norm against a CPU reference with HF LlamaRMSNorm's rounding steps (bf16
// weights) or Gemma's / OLMo 2's (float weights: the weight multiply in fp32, one rounding).
#include "gpu_test_util.h"
#include "rms_norm.cuh"

using namespace sinter::kernels;
using namespace gputest;

template <int M, int D, uint32_t EPS, typename WT = bf16>
bool run_case(const char *name, uint64_t seed, bool in_place) {
  float eps;
  {
    uint32_t b = EPS;
    std::memcpy(&eps, &b, 4);
  }
  std::vector<uint16_t> x = random_bf16(size_t(M) * D, seed * 3 + 1, -4.f, 4.f);
  constexpr bool F32_W = std::is_same_v<WT, float>;
  std::vector<uint16_t> w = random_bf16(D, seed * 3 + 2, -1.5f, 1.5f);
  std::vector<float> wf(D); // values no bf16 holds
  {
    Rng r(seed * 3 + 3);
    for (auto &e : wf) e = r.uniform(-1.5f, 1.5f);
  }
  std::vector<float> ref(size_t(M) * D);
  for (int m = 0; m < M; ++m) {
    double ss = 0;
    for (int d = 0; d < D; ++d) ss += double(bf2f(x[m * D + d])) * bf2f(x[m * D + d]);
    const float r = 1.f / std::sqrt(float(ss / D) + eps);
    for (int d = 0; d < D; ++d)
      ref[m * D + d] = F32_W ? rbf(wf[d] * (bf2f(x[m * D + d]) * r))
                             : rbf(bf2f(w[d]) * rbf(bf2f(x[m * D + d]) * r));
  }
  bf16 *dx = reinterpret_cast<bf16 *>(to_device(x));
  const WT *dw = F32_W ? reinterpret_cast<const WT *>(to_device(wf))
                       : reinterpret_cast<const WT *>(to_device(w));
  bf16 *dout = dx;
  if (!in_place) CUDA_CHECK(cudaMalloc(&dout, size_t(M) * D * 2));
  constexpr LaunchParams lp = rms_norm_launch(M, D);
  launch(rms_norm<M, D, EPS, WT>, lp, 0, (const bf16 *)dx, dw, dout);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> gh = to_host(reinterpret_cast<const uint16_t *>(dout), ref.size());
  std::vector<float> got(gh.size());
  for (size_t i = 0; i < got.size(); ++i) got[i] = bf2f(gh[i]);
  char label[128];
  std::snprintf(label, sizeof label, "%s M=%d D=%d%s%s", name, M, D, F32_W ? " f32 weight" : "",
                in_place ? " in place" : "");
  // 1/128 of |ref| covers one bf16 ulp of difference in the rounded intermediate.
  bool ok = report(label, compare(got, ref, 1.0 / 128));
  // Again under PDL behind a kernel that writes x late (checks griddepcontrol.wait).
  uint16_t *saved = to_device(x);
  launch_after_delayed_producer(dx, saved, x.size() * 2, rms_norm<M, D, EPS, WT>, lp,
                                (const bf16 *)dx, dw, dout);
  gh = to_host(reinterpret_cast<const uint16_t *>(dout), ref.size());
  for (size_t i = 0; i < got.size(); ++i) got[i] = bf2f(gh[i]);
  ok &= report("  same, PDL behind a late producer of x", compare(got, ref, 1.0 / 128));
  CUDA_CHECK(cudaFree(saved));
  CUDA_CHECK(cudaFree(dx));
  CUDA_CHECK(cudaFree(const_cast<WT *>(dw)));
  if (!in_place) CUDA_CHECK(cudaFree(dout));
  return ok;
}

int main() {
  if (!have_device()) return 77;
  constexpr uint32_t e5 = 0x3727c5acu, e6 = 0x358637bdu;
  bool ok = true;
  ok &= run_case<6, 2048, e5>("llama", 61, false);
  ok &= run_case<1, 2048, e5>("llama decode", 62, true);
  ok &= run_case<5, 200, e6>("odd", 63, false);
  ok &= run_case<3, 8192, e5>("wide", 64, false);
  ok &= run_case<2, 2056, e5>("partial vectors", 65, true);
  ok &= run_case<7, 8, e6>("tiny", 66, false);
  ok &= run_case<6, 2304, e6, float>("gemma2", 67, false);
  ok &= run_case<1, 2048, e6, float>("olmo2 decode", 68, true);
  ok &= run_case<2, 2056, e5, float>("partial vectors", 69, false);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
