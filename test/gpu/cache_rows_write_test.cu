// GPU test of cache_rows_write (rows of any float type written into a cache at their positions
// along one axis) against a CPU reference, bitwise: rows at their positions replaced, every
// other element unchanged, out-of-range positions skipped. fp32, f16 and bf16 caches; one
// decode row, a prompt, a batch of sequences; then again under PDL behind a late producer.
#include "cache_rows_write.cuh"
#include "gpu_test_util.h"

#include <cuda_fp16.h>

using namespace sinter::kernels;
using namespace gputest;

template <int OUTER, int ROWS, int INNER, int MAX_LEN, typename T>
bool run_case(const char *name, uint64_t seed, const std::vector<int64_t> &positions) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "16- or 32-bit elements");
  using Bits = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
  if (positions.size() != size_t(ROWS)) {
    std::printf("%s: test bug: %zu positions for ROWS=%d\n", name, positions.size(), ROWS);
    return false;
  }
  constexpr size_t CACHE = size_t(OUTER) * MAX_LEN * INNER, ROW_ELEMENTS = size_t(OUTER) * ROWS * INNER;
  // Random bit patterns: the kernel copies elements, so any bits must arrive unchanged.
  auto random_bits = [](size_t n, uint64_t s) {
    std::vector<Bits> v(n);
    uint64_t x = s * 0x9E3779B97F4A7C15ull + 1;
    for (auto &e : v) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      e = Bits(x);
    }
    return v;
  };
  std::vector<Bits> rows = random_bits(ROW_ELEMENTS, seed * 3 + 1);
  std::vector<Bits> cache = random_bits(CACHE, seed * 3 + 2), want = cache;
  for (int o = 0; o < OUTER; ++o)
    for (int r = 0; r < ROWS; ++r) {
      const int64_t p = positions[r];
      if (p < 0 || p >= MAX_LEN) continue;
      for (int i = 0; i < INNER; ++i)
        want[(size_t(o) * MAX_LEN + p) * INNER + i] = rows[(size_t(o) * ROWS + r) * INNER + i];
    }
  Bits *drows = to_device(rows);
  int64_t *dpos = to_device(positions);
  Bits *dcache = to_device(cache);
  auto fn = cache_rows_write<OUTER, ROWS, INNER, MAX_LEN, T>;
  constexpr LaunchParams lp = cache_rows_write_launch(OUTER, ROWS, INNER);
  auto check = [&](const char *what) {
    std::vector<Bits> got = to_host(dcache, CACHE);
    size_t bad = 0;
    for (size_t i = 0; i < CACHE; ++i) bad += got[i] != want[i];
    char label[160];
    std::snprintf(label, sizeof label, "%s OUTER=%d ROWS=%d INNER=%d MAX_LEN=%d%s", name, OUTER,
                  ROWS, INNER, MAX_LEN, what);
    std::printf("%-72s %s  (%zu of %zu elements wrong)\n", label, bad ? "FAIL" : "ok  ", bad, CACHE);
    return bad == 0;
  };
  launch(fn, lp, 0, (const T *)drows, (const int64_t *)dpos, (T *)dcache);
  CUDA_CHECK(cudaDeviceSynchronize());
  bool ok = check("");
  CUDA_CHECK(cudaMemcpy(dcache, cache.data(), CACHE * sizeof(Bits), cudaMemcpyHostToDevice));
  Bits *saved = to_device(rows);
  launch_after_delayed_producer(drows, saved, ROW_ELEMENTS * sizeof(Bits), fn, lp,
                                (const T *)drows, (const int64_t *)dpos, (T *)dcache);
  ok &= check(", PDL behind a late producer");
  CUDA_CHECK(cudaFree(saved));
  CUDA_CHECK(cudaFree(drows));
  CUDA_CHECK(cudaFree(dpos));
  CUDA_CHECK(cudaFree(dcache));
  return ok;
}

int main() {
  if (!have_device()) return 77;
  bool ok = true;
  // Llama 3.2 1B caches [B, 8, L, 64]: OUTER = B * 8, INNER = 64.
  ok &= run_case<8, 1, 64, 128, float>("fp32 decode row", 91, {5});
  ok &= run_case<8, 6, 64, 1024, __half>("f16 prompt", 92, iota_from(6, 0));
  ok &= run_case<32, 1, 64, 256, __nv_bfloat16>("bf16 batch of 4, one row", 93, {200});
  ok &= run_case<32, 17, 64, 64, float>("fp32 batch of 4, prompt past the end", 94, iota_from(17, 50));
  // Scattered and out-of-range positions; a cache written along its first axis (OUTER 1).
  ok &= run_case<1, 7, 48, 40, __half>("f16 scattered", 95,
                                        {39, -1, 17, int64_t(1) << 40, 0, 40, 3});
  ok &= run_case<3, 5, 1, 9, float>("fp32 inner 1", 96, {8, 0, 4, -(int64_t(1) << 33), 2});
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
