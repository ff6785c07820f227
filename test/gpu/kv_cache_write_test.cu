// GPU test of kv_cache_write (new keys/values of N tokens from a fused QKV buffer into the bf16
// KV cache) against a CPU reference, bitwise: rows at the tokens' positions replaced, every
// other row unchanged, out-of-range positions skipped. Llama 3.2 1B shapes and odd layouts;
// then again under PDL behind a late producer of qkv.
#include "gpu_test_util.h"
#include "kv_cache_write.cuh"

using namespace sinter::kernels;
using namespace gputest;

template <int N, int HKV, int D, int KO, int VO, int RS, int MAX_LEN, int BATCH = 1>
bool run_case(const char *name, uint64_t seed, const std::vector<int64_t> &positions) {
  if (positions.size() != size_t(N)) {
    std::printf("%s: test bug: %zu positions for N=%d\n", name, positions.size(), N);
    return false;
  }
  constexpr size_t CACHE = size_t(BATCH) * HKV * MAX_LEN * D;
  std::vector<uint16_t> qkv = random_bf16(size_t(BATCH) * N * RS, seed * 5 + 1, -2.f, 2.f);
  std::vector<uint16_t> kc = random_bf16(CACHE, seed * 5 + 2, -2.f, 2.f);
  std::vector<uint16_t> vc = random_bf16(CACHE, seed * 5 + 3, -2.f, 2.f);
  std::vector<uint16_t> kw = kc, vw = vc;
  for (int b = 0; b < BATCH; ++b)
    for (int n = 0; n < N; ++n) {
      const int64_t p = positions[n];
      if (p < 0 || p >= MAX_LEN) continue;
      const size_t row = (size_t(b) * N + n) * RS;
      for (int g = 0; g < HKV; ++g)
        for (int e = 0; e < D; ++e) {
          const size_t at = ((size_t(b) * HKV + g) * MAX_LEN + p) * D + e;
          kw[at] = qkv[row + KO + g * D + e];
          vw[at] = qkv[row + VO + g * D + e];
        }
    }
  bf16 *dqkv = reinterpret_cast<bf16 *>(to_device(qkv));
  int64_t *dpos = to_device(positions);
  bf16 *dk = reinterpret_cast<bf16 *>(to_device(kc));
  bf16 *dv = reinterpret_cast<bf16 *>(to_device(vc));
  auto fn = kv_cache_write<N, HKV, D, KO, VO, RS, MAX_LEN, BATCH>;
  constexpr LaunchParams lp = kv_cache_write_launch(BATCH * N, HKV, D);
  auto check = [&](const char *what) {
    std::vector<uint16_t> gk = to_host(reinterpret_cast<const uint16_t *>(dk), CACHE);
    std::vector<uint16_t> gv = to_host(reinterpret_cast<const uint16_t *>(dv), CACHE);
    size_t bad_k = 0, bad_v = 0;
    for (size_t i = 0; i < CACHE; ++i) {
      bad_k += gk[i] != kw[i];
      bad_v += gv[i] != vw[i];
    }
    char label[160];
    std::snprintf(label, sizeof label, "%s N=%d HKV=%d D=%d MAX_LEN=%d BATCH=%d%s", name, N, HKV,
                  D, MAX_LEN, BATCH, what);
    std::printf("%-60s %s  (%zu k, %zu v of %zu elements wrong)\n", label,
                bad_k || bad_v ? "FAIL" : "ok  ", bad_k, bad_v, CACHE);
    return bad_k == 0 && bad_v == 0;
  };
  launch(fn, lp, 0, (const bf16 *)dqkv, (const int64_t *)dpos, dk, dv);
  CUDA_CHECK(cudaDeviceSynchronize());
  bool ok = check("");
  // Again under PDL behind a kernel that writes qkv late (checks griddepcontrol.wait).
  CUDA_CHECK(cudaMemcpy(dk, kc.data(), CACHE * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dv, vc.data(), CACHE * 2, cudaMemcpyHostToDevice));
  uint16_t *saved = to_device(qkv);
  launch_after_delayed_producer(dqkv, saved, qkv.size() * 2, fn, lp, (const bf16 *)dqkv,
                                (const int64_t *)dpos, dk, dv);
  ok &= check(", PDL behind a late producer");
  CUDA_CHECK(cudaFree(saved));
  CUDA_CHECK(cudaFree(dqkv));
  CUDA_CHECK(cudaFree(dpos));
  CUDA_CHECK(cudaFree(dk));
  CUDA_CHECK(cudaFree(dv));
  return ok;
}

int main() {
  if (!have_device()) return 77;
  bool ok = true;
  // Llama 3.2 1B: fused QKV [N, 3072] = q (32 x 64) | k (8 x 64) | v (8 x 64).
  ok &= run_case<1, 8, 64, 2048, 2560, 3072, 128>("llama one token", 81, {5});
  ok &= run_case<6, 8, 64, 2048, 2560, 3072, 128>("llama prompt", 82, iota_from(6, 0));
  ok &= run_case<128, 8, 64, 2048, 2560, 3072, 1024>("llama prompt", 83, iota_from(128, 0));
  ok &= run_case<128, 8, 64, 2048, 2560, 3072, 128>("llama full cache", 84, iota_from(128, 0));
  // Odd layout (v | k | spare columns), scattered positions and out-of-range ones.
  {
    std::vector<int64_t> pos = {39, 0, -1, 17, 40, 3, int64_t(1) << 40, 38, 21, -(int64_t(1) << 33),
                                1, 9, 30, 25, 2, 100, 11, 12, 5, 36};
    ok &= run_case<20, 2, 16, 32, 0, 72, 40>("small scattered", 85, pos);
  }
  // D 128 and D 40 (5 vectors per row), prompt continuing at an offset, the end of the cache.
  ok &= run_case<37, 4, 128, 512, 1024, 1536, 64>("d128 offset", 86, iota_from(37, 27));
  ok &= run_case<9, 3, 40, 0, 120, 240, 50>("d40 past the end", 87, iota_from(9, 45));
  // A batch of sequences, each into its own caches at the same positions.
  ok &= run_case<6, 8, 64, 2048, 2560, 3072, 128, 3>("llama batch", 88, iota_from(6, 0));
  ok &= run_case<1, 8, 64, 2048, 2560, 3072, 1024, 8>("llama batch one token", 89, {700});
  ok &= run_case<9, 3, 40, 0, 120, 240, 50, 5>("d40 batch past the end", 90, iota_from(9, 45));
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
