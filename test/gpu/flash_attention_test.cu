// GPU test of flash_attention against a double-precision CPU reference: prompt lengths that
// are not multiples of the query or key tiles, GQA and MHA, head dims 64, 128 and 256, causal
// and not, key padding (left, right, random, all masked -> zero rows), fused QKV layouts with
// the parts in any order and extra columns, two sequences with different masks, bf16 and
// fp16, fp32 output, scales the exponent cannot absorb (negative, zero), the default tilings
// of long prompts, Gemma 2's soft-capped scores, and a launch behind a late producer of qkv
// (PDL).
#include "flash_attention.cuh"
#include "gpu_test_util.h"

using namespace sinter::kernels;
using namespace gputest;

enum class MaskKind { ONES, LEFT_PAD, RIGHT_PAD, RANDOM, ALL_ZERO };

template <int S, int HQ, int HKV, int D, int QO, int KO, int VO, int RS, uint32_t SCALE,
          bool CAUSAL, bool PAD, typename T = bf16, typename OutT = T, uint32_t SOFTCAP = 0u>
bool run_case(const char *name, uint64_t seed, MaskKind mk, int batch = 1) {
  using H = HostT<T>;
  using HT = typename H::type;
  using HO = HostT<OutT>;
  using HOT = typename HO::type;
  // p is rounded to T before p v (as FlashAttention does): a few T ulps of the output.
  const double tol = sizeof(T) == 2 && std::is_same_v<T, bf16> ? 1.0 / 64 : 1.0 / 256;
  const size_t rows = size_t(batch) * S;
  std::vector<HT> qkv(rows * RS);
  {
    Rng rq(seed * 5 + 1);
    for (auto &e : qkv) e = H::put(rq.uniform(-2.f, 2.f));
  }
  std::vector<int64_t> mask(rows, 1);
  Rng r(seed * 5 + 2);
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < S; ++j) {
      int64_t &m = mask[size_t(b) * S + j];
      // Sequence b > 0 gets a different padding than sequence 0.
      const int pad = S / 5 + 1 + 7 * b;
      switch (mk) {
      case MaskKind::ONES: break;
      case MaskKind::LEFT_PAD: m = j < pad ? 0 : 1; break;
      case MaskKind::RIGHT_PAD: m = j >= S - S / 4 - 3 * b ? 0 : 1; break;
      case MaskKind::RANDOM: m = (r.next() % 4 == 0) ? 0 : 1; break;
      case MaskKind::ALL_ZERO: m = 0; break;
      }
    }
  float scale, softcap;
  {
    uint32_t bits = SCALE, cap_bits = SOFTCAP;
    std::memcpy(&scale, &bits, 4);
    std::memcpy(&softcap, &cap_bits, 4);
  }
  std::vector<float> ref(rows * HQ * D);
  auto at = [&](size_t row, int col) { return double(H::get(qkv[row * RS + col])); };
  parallel_for(size_t(batch) * HQ * S, [&](size_t idx) {
    const int b = int(idx / (size_t(HQ) * S));
    const int h = int(idx / S % HQ), i = int(idx % S), g = h / (HQ / HKV);
    const size_t base = size_t(b) * S;
    std::vector<double> p(S, 0.0);
    auto visible = [&](int j) { return !((CAUSAL && j > i) || (PAD && mask[base + j] == 0)); };
    double mx = -INFINITY;
    for (int j = 0; j < S; ++j) {
      if (!visible(j)) continue;
      double s = 0;
      for (int d = 0; d < D; ++d) s += at(base + i, QO + h * D + d) * at(base + j, KO + g * D + d);
      p[j] = s * scale;
      if (SOFTCAP != 0u)
        p[j] = softcap * std::tanh(p[j] / softcap);
      mx = std::max(mx, p[j]);
    }
    double sum = 0;
    for (int j = 0; j < S; ++j) {
      p[j] = visible(j) ? std::exp(p[j] - mx) : 0.0;
      sum += p[j];
    }
    for (int d = 0; d < D; ++d) {
      double o = 0;
      if (sum > 0)
        for (int j = 0; j < S; ++j)
          if (p[j] != 0.0) o += p[j] * at(base + j, VO + g * D + d);
      ref[(base + i) * HQ * D + h * D + d] = sum > 0 ? float(o / sum) : 0.f;
    }
  });

  const size_t out_bytes = ref.size() * sizeof(OutT);
  T *dqkv = reinterpret_cast<T *>(to_device(qkv));
  int64_t *dmask = to_device(mask);
  OutT *dout = nullptr;
  CUDA_CHECK(cudaMalloc(&dout, out_bytes));
  CUDA_CHECK(cudaMemset(dout, 0xff, out_bytes));
  constexpr FlashAttentionTiling tiling = flash_attention_default_tiling(S, D);
  auto fn = flash_attention<S, HQ, HKV, D, QO, KO, VO, RS, SCALE, CAUSAL, PAD, T, OutT,
                            tiling.row_tiles, tiling.key_tile, tiling.min_blocks_per_sm, SOFTCAP>;
  const LaunchParams lp = flash_attention_launch(S, HQ, D, batch);
  launch(fn, lp, 0, (const T *)dqkv, PAD ? (const int64_t *)dmask : nullptr, dout);
  CUDA_CHECK(cudaDeviceSynchronize());
  auto read_out = [&] {
    std::vector<HOT> h = to_host(reinterpret_cast<const HOT *>(dout), ref.size());
    std::vector<float> f(h.size());
    for (size_t i = 0; i < f.size(); ++i) f[i] = HO::get(h[i]);
    return f;
  };
  std::vector<float> got = read_out();
  HT *saved = to_device(qkv);
  CUDA_CHECK(cudaMemset(dout, 0xff, out_bytes));
  launch_after_delayed_producer(dqkv, saved, qkv.size() * sizeof(HT), fn, lp, (const T *)dqkv,
                                PAD ? (const int64_t *)dmask : nullptr, dout);
  std::vector<float> got2 = read_out();
  CUDA_CHECK(cudaFree(saved));
  CUDA_CHECK(cudaFree(dqkv));
  CUDA_CHECK(cudaFree(dmask));
  CUDA_CHECK(cudaFree(dout));
  char label[200];
  std::snprintf(label, sizeof label, "%s B=%d S=%d HQ=%d HKV=%d D=%d%s%s%s%s softcap %g", name,
                batch, S, HQ, HKV, D, CAUSAL ? " causal" : "", PAD ? " pad" : "",
                std::is_same_v<T, bf16> ? "" : " f16", std::is_same_v<OutT, float> ? " ->f32" : "",
                softcap);
  std::printf("  [grid %u,%u,%u block %u smem %u]\n", lp.grid.x, lp.grid.y, lp.grid.z,
              lp.block.x, lp.shared_bytes);
  Compare c = compare(got, ref, tol);
  if (mk == MaskKind::ALL_ZERO || mk == MaskKind::LEFT_PAD) // fully masked rows: exact zeros
    for (size_t i = 0; i < ref.size(); ++i)
      if (ref[i] == 0.f && got[i] != 0.f) ++c.bad;
  bool ok = report(label, c);
  ok &= report("  same, PDL behind a late producer of qkv", compare(got2, ref, tol));
  return ok;
}

int main() {
  if (!have_device()) return 77;
  constexpr uint32_t s64 = 0x3e000000u, s32 = 0x3e3504f3u, s128 = 0x3db504f3u,
                     s256 = 0x3d800000u;
  bool ok = true;
  // Llama 3.2 1B: fused QKV [S, 3072] = q (32 x 64) | k (8 x 64) | v (8 x 64).
  ok &= run_case<1024, 32, 8, 64, 0, 2048, 2560, 3072, s64, true, false>("llama", 41,
                                                                        MaskKind::ONES);
  ok &= run_case<200, 32, 8, 64, 0, 2048, 2560, 3072, s64, true, true>("llama", 42,
                                                                      MaskKind::LEFT_PAD);
  // Llama 3 8B heads (D 128), length not a multiple of 64.
  ok &= run_case<301, 32, 8, 128, 0, 4096, 5120, 6144, s128, true, false>("llama8b", 43,
                                                                         MaskKind::ONES);
  // Gemma-style D 256, GQA 2, key tile 32.
  ok &= run_case<177, 8, 4, 256, 0, 2048, 3072, 4096, s256, true, true>("d256", 44,
                                                                       MaskKind::RIGHT_PAD);
  ok &= run_case<95, 4, 1, 256, 0, 1024, 1280, 1536, s256, false, true>("d256 mqa", 45,
                                                                       MaskKind::RANDOM);
  // Odd layouts: v | q | k with extra columns, not causal, random keys masked.
  ok &= run_case<130, 4, 2, 32, 64, 192, 0, 264, s32, false, true>("v|q|k+pad cols", 46,
                                                                   MaskKind::RANDOM);
  ok &= run_case<1, 2, 1, 64, 0, 128, 192, 256, s64, true, true>("single token", 47,
                                                                 MaskKind::ONES);
  ok &= run_case<70, 4, 1, 64, 0, 256, 320, 384, s64, false, true>("all masked", 48,
                                                                   MaskKind::ALL_ZERO);
  ok &= run_case<100, 8, 8, 128, 0, 1024, 2048, 3072, s128, false, false>("mha d128", 49,
                                                                         MaskKind::ONES);
  ok &= run_case<50, 4, 4, 16, 0, 64, 128, 192, 0x3e800000u, true, true>("d16 random", 50,
                                                                       MaskKind::RANDOM);
  // Two sequences, different left padding each.
  ok &= run_case<150, 8, 2, 64, 0, 512, 640, 768, s64, true, true>("batch 2", 51,
                                                                  MaskKind::LEFT_PAD, 2);
  ok &= run_case<257, 16, 4, 64, 0, 1024, 1280, 1536, s64, true, false>("batch 3", 52,
                                                                       MaskKind::ONES, 3);
  // The default tilings of longer prompts: D 64 from 512 tokens (two row tiles, 64 keys),
  // D 128 from 2048 (two row tiles, 32 keys), lengths not multiples of the tiles, padding.
  ok &= run_case<700, 8, 2, 64, 0, 512, 640, 768, s64, true, true>("two row tiles", 55,
                                                                  MaskKind::LEFT_PAD);
  ok &= run_case<2100, 8, 2, 128, 0, 1024, 1280, 1536, s128, true, true>("llama8b long", 56,
                                                                        MaskKind::RIGHT_PAD);
  // Scales the exponent cannot absorb (the scores are scaled before the row maximum):
  // negative, and zero (every visible key weighs the same).
  ok &= run_case<90, 4, 2, 64, 0, 256, 384, 512, 0xbe000000u, false, true>("scale -1/8", 57,
                                                                          MaskKind::RANDOM);
  ok &= run_case<90, 4, 2, 64, 0, 256, 384, 512, 0u, true, false>("scale 0", 58, MaskKind::ONES);
  // fp16, and fp32 output.
  ok &= run_case<333, 16, 4, 128, 0, 2048, 2560, 3072, s128, true, true, __half>(
      "f16", 53, MaskKind::LEFT_PAD);
  ok &= run_case<129, 8, 2, 64, 0, 512, 640, 768, s64, true, false, bf16, float>("f32 out", 54,
                                                                                MaskKind::ONES);
  // Gemma 2's attention soft-cap: its cap (50) on its heads with padding, and a tight cap (2:
  // scores near saturation) on Llama heads over two row tiles and a batch.
  constexpr uint32_t cap50 = 0x42480000u, cap2 = 0x40000000u;
  ok &= run_case<177, 8, 4, 256, 0, 2048, 3072, 4096, s256, true, true, bf16, bf16, cap50>(
      "gemma2 softcap", 59, MaskKind::LEFT_PAD);
  ok &= run_case<700, 8, 2, 64, 0, 512, 640, 768, s64, true, true, bf16, bf16, cap2>(
      "softcap 2", 60, MaskKind::RANDOM, 2);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
