// GPU test of attention_prefill against a double-precision CPU reference: GQA and MHA,
// causal and not, padding masks (left, right, random, all-zero -> zero rows), fused QKV
// layouts with the parts in any order and extra columns; fp32 q/k/v and output (fp32
// activations) with a tolerance that bf16 staging would fail.
#include "attention_prefill.cuh"
#include "gpu_test_util.h"

using namespace sinter::kernels;
using namespace gputest;

enum class MaskKind { ONES, LEFT_PAD, RIGHT_PAD, RANDOM, ALL_ZERO };

template <int S, int HQ, int HKV, int D, int QO, int KO, int VO, int RS, uint32_t SCALE,
          bool CAUSAL, bool PAD, typename T = bf16>
bool run_case(const char *name, uint64_t seed, MaskKind mk) {
  using H = HostT<T>;
  using HT = typename H::type;
  const double tol = sizeof(T) == 4 ? 1e-4 : 1.0 / 128;
  std::vector<HT> qkv(size_t(S) * RS);
  {
    Rng rq(seed * 5 + 1);
    for (auto &e : qkv) e = H::put(rq.uniform(-2.f, 2.f));
  }
  std::vector<int64_t> mask(S, 1);
  Rng r(seed * 5 + 2);
  for (int j = 0; j < S; ++j) {
    switch (mk) {
    case MaskKind::ONES: break;
    case MaskKind::LEFT_PAD: mask[j] = j < S / 5 + 1 ? 0 : 1; break;
    case MaskKind::RIGHT_PAD: mask[j] = j >= S - S / 4 ? 0 : 1; break;
    case MaskKind::RANDOM: mask[j] = (r.next() % 4 == 0) ? 0 : 1; break;
    case MaskKind::ALL_ZERO: mask[j] = 0; break;
    }
  }
  float scale;
  {
    uint32_t b = SCALE;
    std::memcpy(&scale, &b, 4);
  }
  // Reference.
  std::vector<float> ref(size_t(S) * HQ * D);
  auto at = [&](int row, int col) { return double(H::get(qkv[size_t(row) * RS + col])); };
  parallel_for(size_t(HQ) * S, [&](size_t idx) {
    const int h = int(idx / S), i = int(idx % S), g = h / (HQ / HKV);
    std::vector<double> p(S, 0.0);
    double mx = -INFINITY;
    for (int j = 0; j < S; ++j) {
      if ((CAUSAL && j > i) || (PAD && mask[j] == 0)) continue;
      double s = 0;
      for (int d = 0; d < D; ++d) s += at(i, QO + h * D + d) * at(j, KO + g * D + d);
      p[j] = s * scale;
      mx = std::max(mx, p[j]);
    }
    double sum = 0;
    for (int j = 0; j < S; ++j) {
      const bool ok = !((CAUSAL && j > i) || (PAD && mask[j] == 0));
      p[j] = ok ? std::exp(p[j] - mx) : 0.0;
      sum += p[j];
    }
    for (int d = 0; d < D; ++d) {
      double o = 0;
      if (sum > 0)
        for (int j = 0; j < S; ++j) o += p[j] * at(j, VO + g * D + d);
      ref[size_t(i) * HQ * D + h * D + d] = sum > 0 ? float(o / sum) : 0.f;
    }
  });

  constexpr size_t kOutBytes = size_t(S) * HQ * D * sizeof(T);
  T *dqkv = reinterpret_cast<T *>(to_device(qkv));
  int64_t *dmask = to_device(mask);
  T *dout = nullptr;
  CUDA_CHECK(cudaMalloc(&dout, kOutBytes));
  CUDA_CHECK(cudaMemset(dout, 0xff, kOutBytes));
  auto fn = attention_prefill<S, HQ, HKV, D, QO, KO, VO, RS, SCALE, CAUSAL, PAD, T, T>;
  constexpr LaunchParams lp = attention_prefill_launch(S, HQ, D, int(sizeof(T)));
  launch(fn, lp, 0, (const T *)dqkv, PAD ? (const int64_t *)dmask : nullptr, dout);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<HT> got_h = to_host(reinterpret_cast<const HT *>(dout), ref.size());
  std::vector<float> got(got_h.size());
  for (size_t i = 0; i < got.size(); ++i) got[i] = H::get(got_h[i]);
  // Again under PDL behind a kernel that writes qkv late (checks griddepcontrol.wait).
  HT *saved = to_device(qkv);
  CUDA_CHECK(cudaMemset(dout, 0xff, kOutBytes));
  launch_after_delayed_producer(dqkv, saved, qkv.size() * sizeof(HT), fn, lp, (const T *)dqkv,
                                PAD ? (const int64_t *)dmask : nullptr, dout);
  std::vector<HT> got2_h = to_host(reinterpret_cast<const HT *>(dout), ref.size());
  std::vector<float> got2(got2_h.size());
  for (size_t i = 0; i < got2.size(); ++i) got2[i] = H::get(got2_h[i]);
  CUDA_CHECK(cudaFree(saved));
  CUDA_CHECK(cudaFree(dqkv));
  CUDA_CHECK(cudaFree(dmask));
  CUDA_CHECK(cudaFree(dout));
  char label[160];
  std::snprintf(label, sizeof label, "%s S=%d HQ=%d HKV=%d D=%d%s%s%s", name, S, HQ, HKV, D,
                CAUSAL ? " causal" : "", PAD ? " pad" : "", sizeof(T) == 4 ? " f32" : "");
  std::printf("  [grid %u,%u block %u smem %u]\n", lp.grid.x, lp.grid.y, lp.block.x,
              lp.shared_bytes);
  // A fully masked row must be exactly zero.
  Compare c = compare(got, ref, tol);
  for (size_t i = 0; i < ref.size(); ++i)
    if (ref[i] == 0.f && got[i] != 0.f && mk == MaskKind::ALL_ZERO) ++c.bad;
  bool ok = report(label, c);
  ok &= report("  same, PDL behind a late producer of qkv", compare(got2, ref, tol));
  return ok;
}

int main() {
  if (!have_device()) return 77;
  constexpr uint32_t s64 = 0x3e000000u, s32 = 0x3e3504f3u, s128 = 0x3db504f3u;
  bool ok = true;
  // Llama 3.2 1B: fused QKV [S, 3072] = q (32 x 64) | k (8 x 64) | v (8 x 64).
  ok &= run_case<6, 32, 8, 64, 0, 2048, 2560, 3072, s64, true, false>("llama", 41, MaskKind::ONES);
  ok &= run_case<6, 32, 8, 64, 0, 2048, 2560, 3072, s64, true, true>("llama", 42, MaskKind::LEFT_PAD);
  ok &= run_case<128, 32, 8, 64, 0, 2048, 2560, 3072, s64, true, true>("llama", 43,
                                                                     MaskKind::LEFT_PAD);
  ok &= run_case<128, 32, 8, 64, 0, 2048, 2560, 3072, s64, true, false>("llama", 44,
                                                                      MaskKind::ONES);
  // Odd shapes and layouts.
  ok &= run_case<37, 4, 2, 32, 64, 192, 0, 264, s32, false, true>("v|q|k+pad cols", 45,
                                                                  MaskKind::RANDOM);
  ok &= run_case<1, 2, 1, 64, 0, 128, 192, 256, s64, true, true>("single token", 46,
                                                                 MaskKind::ONES);
  ok &= run_case<100, 8, 8, 128, 0, 1024, 2048, 3072, s128, true, false>("mha d128", 47,
                                                                        MaskKind::ONES);
  ok &= run_case<20, 4, 1, 64, 0, 256, 320, 384, s64, false, true>("all masked", 48,
                                                                   MaskKind::ALL_ZERO);
  ok &= run_case<77, 6, 3, 64, 0, 384, 576, 768, s64, true, true>("right pad", 49,
                                                                  MaskKind::RIGHT_PAD);
  ok &= run_case<50, 4, 4, 16, 0, 64, 128, 192, 0x3e800000u, true, true>("d16 random", 50,
                                                                       MaskKind::RANDOM);
  // fp32 activations.
  ok &= run_case<6, 32, 8, 64, 0, 2048, 2560, 3072, s64, true, false, float>("llama", 51,
                                                                            MaskKind::ONES);
  ok &= run_case<37, 4, 2, 32, 64, 192, 0, 264, s32, false, true, float>("v|q|k+pad cols", 52,
                                                                         MaskKind::RANDOM);
  ok &= run_case<20, 4, 1, 64, 0, 256, 320, 384, s64, false, true, float>("all masked", 53,
                                                                          MaskKind::ALL_ZERO);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
