// GPU test of rope_rows (in-place RoPE on the q|k columns of a fused QKV buffer) against a CPU
// reference: fp32 rotation of the bf16 values, rounded once; with ROTARY (partial rotary) only
// each head's first ROTARY columns rotate, the rest stay as they are.
#include "gpu_test_util.h"
#include "rope_rows.cuh"

using namespace sinter::kernels;
using namespace gputest;

template <int M, int STRIDE, int ROPE, int HD, int ROTARY = 0>
bool run_case(const char *name, uint64_t seed) {
  constexpr int RW = ROTARY ? ROTARY : HD; // the tables' columns
  std::vector<uint16_t> qkv = random_bf16(size_t(M) * STRIDE, seed * 3 + 1, -3.f, 3.f);
  std::vector<uint16_t> c = random_bf16(size_t(M) * RW, seed * 3 + 2, -1.f, 1.f);
  std::vector<uint16_t> s = random_bf16(size_t(M) * RW, seed * 3 + 3, -1.f, 1.f);
  std::vector<float> ref(qkv.size());
  for (size_t i = 0; i < qkv.size(); ++i) ref[i] = bf2f(qkv[i]);
  for (int m = 0; m < M; ++m)
    for (int h = 0; h < ROPE / HD; ++h)
      for (int i = 0; i < RW / 2; ++i) {
        const size_t lo = size_t(m) * STRIDE + h * HD + i, hi = lo + RW / 2;
        const float a = bf2f(qkv[lo]), b = bf2f(qkv[hi]);
        ref[lo] = rbf(a * bf2f(c[m * RW + i]) - b * bf2f(s[m * RW + i]));
        ref[hi] = rbf(b * bf2f(c[m * RW + i + RW / 2]) + a * bf2f(s[m * RW + i + RW / 2]));
      }
  bf16 *dq = reinterpret_cast<bf16 *>(to_device(qkv));
  bf16 *dc = reinterpret_cast<bf16 *>(to_device(c));
  bf16 *ds = reinterpret_cast<bf16 *>(to_device(s));
  constexpr LaunchParams lp = rope_rows_launch(M, ROPE);
  launch(rope_rows<M, STRIDE, ROPE, HD, ROTARY>, lp, 0, (const bf16 *)dc, (const bf16 *)ds, dq);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> gh = to_host(reinterpret_cast<const uint16_t *>(dq), ref.size());
  std::vector<float> got(gh.size());
  for (size_t i = 0; i < got.size(); ++i) got[i] = bf2f(gh[i]);
  char label[128];
  std::snprintf(label, sizeof label, "%s M=%d stride=%d rope=%d head_dim=%d rotary=%d", name, M,
                STRIDE, ROPE, HD, RW);
  // One bf16 ulp: the kernel's fused multiply-adds may round differently from the reference.
  bool ok = report(label, compare(got, ref, 1.0 / 128));
  CUDA_CHECK(cudaFree(dq));
  CUDA_CHECK(cudaFree(dc));
  CUDA_CHECK(cudaFree(ds));
  return ok;
}

int main() {
  if (!have_device()) return 77;
  bool ok = true;
  ok &= run_case<128, 3072, 2560, 64>("llama 128 tokens", 71);
  ok &= run_case<17, 128, 96, 16>("tiny", 72);
  ok &= run_case<33, 640, 384, 128>("head_dim 128", 73);
  // Partial rotary: Pythia-1.4B's 32 of 128 (a 40-token prompt), the tiny fixture's 4 of 16.
  ok &= run_case<40, 6144, 4096, 128, 32>("neox partial", 74);
  ok &= run_case<17, 192, 128, 16, 4>("tiny partial", 75);
  return ok ? 0 : 1;
}
