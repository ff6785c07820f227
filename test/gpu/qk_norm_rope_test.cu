// GPU test of qk_norm_rope (q / k RMSNorm per head or per projection, then RoPE, in place on a
// fused QKV buffer) against a CPU reference: the norm as rms_norm rounds it (bf16 weights: bf16
// after the scaling, then after the weight; fp32 weights, OLMo 2's: once, after both), the
// rotation in fp32 from those values with bf16 or fp32 tables, rounded once; the v columns and
// the row padding past them unchanged.
#include "gpu_test_util.h"
#include "qk_norm_rope.cuh"

#include <cmath>
#include <type_traits>

using namespace sinter::kernels;
using namespace gputest;

constexpr uint32_t kEps = 0x358637bdu; // 1e-6f

/// `n` values of T drawn from [lo, hi) (bf16: rounded), as the host stores them.
template <typename T>
std::vector<typename HostT<T>::type> random_values(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<typename HostT<T>::type> v(n);
  Rng r(seed);
  for (auto &e : v) e = HostT<T>::put(r.uniform(lo, hi));
  return v;
}

template <int M, int STRIDE, int QC, int KC, int HD, int QS, int KS, bool ROPE,
          typename WT = bf16, typename TableT = bf16>
bool run_case(const char *name, uint64_t seed) {
  using W = HostT<WT>;
  using Table = HostT<TableT>;
  std::vector<uint16_t> qkv = random_bf16(size_t(M) * STRIDE, seed * 5 + 1, -3.f, 3.f);
  auto qw = random_values<WT>(QS, seed * 5 + 2, 0.5f, 1.5f);
  auto kw = random_values<WT>(KS, seed * 5 + 3, 0.5f, 1.5f);
  auto c = random_values<TableT>(size_t(M) * HD, seed * 5 + 4, -1.f, 1.f);
  auto s = random_values<TableT>(size_t(M) * HD, seed * 5 + 5, -1.f, 1.f);
  const float eps = 1e-6f;
  std::vector<float> ref(qkv.size());
  for (size_t i = 0; i < qkv.size(); ++i) ref[i] = bf2f(qkv[i]);
  for (int m = 0; m < M; ++m) {
    auto span = [&](int col0, int width, const std::vector<typename W::type> &w) {
      float ss = 0.f;
      for (int j = 0; j < width; ++j) {
        const float x = bf2f(qkv[size_t(m) * STRIDE + col0 + j]);
        ss += x * x;
      }
      const float r = 1.f / std::sqrt(ss / float(width) + eps);
      std::vector<float> n(width);
      for (int j = 0; j < width; ++j) {
        const float scaled = bf2f(qkv[size_t(m) * STRIDE + col0 + j]) * r;
        n[j] = std::is_same_v<WT, float> ? rbf(W::get(w[j]) * scaled)
                                         : rbf(W::get(w[j]) * rbf(scaled));
      }
      for (int h = 0; h < width / HD; ++h)
        for (int i = 0; i < HD / 2; ++i) {
          const int lo = h * HD + i, hi = lo + HD / 2;
          float out_lo = n[lo], out_hi = n[hi];
          if (ROPE) {
            out_lo = rbf(n[lo] * Table::get(c[m * HD + i]) - n[hi] * Table::get(s[m * HD + i]));
            out_hi = rbf(n[hi] * Table::get(c[m * HD + i + HD / 2]) +
                         n[lo] * Table::get(s[m * HD + i + HD / 2]));
          }
          ref[size_t(m) * STRIDE + col0 + lo] = out_lo;
          ref[size_t(m) * STRIDE + col0 + hi] = out_hi;
        }
    };
    for (int g = 0; g < QC / QS; ++g) span(g * QS, QS, qw);
    for (int g = 0; g < KC / KS; ++g) span(QC + g * KS, KS, kw);
  }
  bf16 *dq = reinterpret_cast<bf16 *>(to_device(qkv));
  const WT *dqw = reinterpret_cast<const WT *>(to_device(qw));
  const WT *dkw = reinterpret_cast<const WT *>(to_device(kw));
  const TableT *dc = ROPE ? reinterpret_cast<const TableT *>(to_device(c)) : nullptr;
  const TableT *ds = ROPE ? reinterpret_cast<const TableT *>(to_device(s)) : nullptr;
  constexpr LaunchParams lp = qk_norm_rope_launch(M, QC, KC, QS, KS);
  launch(qk_norm_rope<M, STRIDE, QC, KC, HD, QS, KS, ROPE, kEps, WT, TableT>, lp, 0, dqw, dkw,
         dc, ds, dq);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> gh = to_host(reinterpret_cast<const uint16_t *>(dq), ref.size());
  std::vector<float> got(gh.size());
  for (size_t i = 0; i < got.size(); ++i) got[i] = bf2f(gh[i]);
  char label[160];
  std::snprintf(label, sizeof label, "%s M=%d q %d/%d k %d/%d head_dim=%d%s%s%s", name, M, QC,
                QS, KC, KS, HD, ROPE ? " +rope" : "",
                std::is_same_v<WT, float> ? " fp32 weights" : "",
                ROPE && std::is_same_v<TableT, float> ? " fp32 tables" : "");
  // One bf16 ulp (relative 1/128): the kernel's sums and fused multiply-adds may round
  // differently from the reference; and 1/64 absolute: a sum of squares in another order can
  // flip the rounding of a normalized value (magnitude ~2: one ulp 1/64), which a rotation
  // that cancels to near zero keeps (H200: 1 of 151552 values past the relative bound alone).
  // A wrong norm or pairing is off by O(1). v columns are compared too (unchanged).
  bool ok = report(label, compare(got, ref, 1.0 / 128, 1.0 / 64));
  for (const void *p : {(const void *)dq, (const void *)dqw, (const void *)dkw, (const void *)dc,
                        (const void *)ds})
    if (p) CUDA_CHECK(cudaFree(const_cast<void *>(p)));
  return ok;
}

int main() {
  if (!have_device()) return 77;
  bool ok = true;
  // Qwen3-1.7B decode and a prompt: 16 q heads, 8 kv heads of 128, a norm per head.
  ok &= run_case<1, 4096, 2048, 1024, 128, 128, 128, true>("qwen3 decode", 81);
  ok &= run_case<37, 4096, 2048, 1024, 128, 128, 128, true>("qwen3 prompt", 82);
  // OLMo 2 1B: one norm over the whole q and the whole k projection (16 heads of 128 each).
  ok &= run_case<3, 6144, 2048, 2048, 128, 2048, 2048, true>("olmo2 projection norm", 83);
  // Tiny heads, q per head and k over its projection, spans that do not fill a warp, no rope.
  ok &= run_case<5, 96, 32, 16, 16, 16, 16, false>("tiny, no rope", 84);
  ok &= run_case<2, 104, 48, 32, 16, 16, 32, true>("mixed spans", 85);
  // OLMo 2 as exported: fp32 norm weights (one rounding) and fp32 cos / sin tables, at decode,
  // at a prompt, and in the 7B shape (32 heads of 128: 4096-column spans); one with fp32
  // weights and bf16 tables, and the tiny fixture's shape.
  ok &= run_case<1, 6144, 2048, 2048, 128, 2048, 2048, true, float, float>("olmo2 decode", 86);
  ok &= run_case<19, 6144, 2048, 2048, 128, 2048, 2048, true, float, float>("olmo2 prompt", 87);
  ok &= run_case<2, 12288, 4096, 4096, 128, 4096, 4096, true, float, float>("olmo2 7B", 88);
  ok &= run_case<3, 6144, 2048, 2048, 128, 2048, 2048, true, float, bf16>("fp32 weights", 89);
  ok &= run_case<6, 128, 64, 32, 16, 64, 32, true, float, float>("olmo2 tiny", 90);
  return ok ? 0 : 1;
}
