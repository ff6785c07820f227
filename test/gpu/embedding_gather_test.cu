// GPU test of embedding_gather: exact row copies; ids outside [0, VOCAB) give zero rows; a bf16
// table gathered into fp32 rows (fp32 activations) widens exactly.
#include "embedding_gather.cuh"
#include "gpu_test_util.h"

using namespace sinter::kernels;
using namespace gputest;

template <int M, int D, int VOCAB, typename T>
bool run_case(const char *name, uint64_t seed, const std::vector<int64_t> &fixed_ids) {
  Rng r(seed);
  std::vector<T> table(size_t(VOCAB) * D);
  for (auto &e : table) {
    const float f = r.uniform(-1.f, 1.f);
    std::memcpy(&e, &f, sizeof(T)); // any bit pattern; compared bitwise
    if (sizeof(T) == 2) e = T(f2bf(f));
  }
  std::vector<int64_t> ids(M);
  for (int m = 0; m < M; ++m)
    ids[m] = m < int(fixed_ids.size()) ? fixed_ids[m] : int64_t(r.next() % VOCAB);
  std::vector<T> ref(size_t(M) * D, T(0));
  for (int m = 0; m < M; ++m)
    if (ids[m] >= 0 && ids[m] < VOCAB)
      std::memcpy(&ref[size_t(m) * D], &table[size_t(ids[m]) * D], D * sizeof(T));
  T *dt = to_device(table);
  int64_t *di = to_device(ids);
  T *dout = nullptr;
  CUDA_CHECK(cudaMalloc(&dout, size_t(M) * D * sizeof(T)));
  CUDA_CHECK(cudaMemset(dout, 0x7f, size_t(M) * D * sizeof(T)));
  using K = std::conditional_t<sizeof(T) == 2, bf16, float>;
  constexpr LaunchParams lp = embedding_gather_launch(M, D, int(sizeof(T)));
  launch(embedding_gather<M, D, VOCAB, K>, lp, 0, (const int64_t *)di,
         reinterpret_cast<const K *>(dt), reinterpret_cast<K *>(dout));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> got = to_host(dout, ref.size());
  size_t bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) bad += std::memcmp(&got[i], &ref[i], sizeof(T)) != 0;
  // Again under PDL behind a kernel that writes the ids late (zeros until then).
  int64_t *saved = to_device(ids);
  CUDA_CHECK(cudaMemset(dout, 0x7f, size_t(M) * D * sizeof(T)));
  launch_after_delayed_producer(di, saved, ids.size() * sizeof(int64_t),
                                embedding_gather<M, D, VOCAB, K>, lp, (const int64_t *)di,
                                reinterpret_cast<const K *>(dt), reinterpret_cast<K *>(dout));
  got = to_host(dout, ref.size());
  for (size_t i = 0; i < ref.size(); ++i) bad += std::memcmp(&got[i], &ref[i], sizeof(T)) != 0;
  CUDA_CHECK(cudaFree(saved));
  CUDA_CHECK(cudaFree(dt));
  CUDA_CHECK(cudaFree(di));
  CUDA_CHECK(cudaFree(dout));
  std::printf("%-44s %s  (%zu/%zu elements differ; bitwise; plain launch + PDL launch)\n", name,
              bad ? "FAIL" : "ok  ", bad, 2 * ref.size());
  return bad == 0;
}

template <int M, int D, int VOCAB>
bool run_widen(const char *name, uint64_t seed, const std::vector<int64_t> &fixed_ids) {
  Rng r(seed);
  std::vector<uint16_t> table(size_t(VOCAB) * D);
  for (auto &e : table) e = f2bf(r.uniform(-1.f, 1.f));
  std::vector<int64_t> ids(M);
  for (int m = 0; m < M; ++m)
    ids[m] = m < int(fixed_ids.size()) ? fixed_ids[m] : int64_t(r.next() % VOCAB);
  std::vector<float> ref(size_t(M) * D, 0.f);
  for (int m = 0; m < M; ++m)
    if (ids[m] >= 0 && ids[m] < VOCAB)
      for (int d = 0; d < D; ++d) ref[size_t(m) * D + d] = bf2f(table[size_t(ids[m]) * D + d]);
  uint16_t *dt = to_device(table);
  int64_t *di = to_device(ids);
  float *dout = nullptr;
  CUDA_CHECK(cudaMalloc(&dout, ref.size() * sizeof(float)));
  CUDA_CHECK(cudaMemset(dout, 0x7f, ref.size() * sizeof(float)));
  constexpr LaunchParams lp = embedding_gather_launch(M, D, 2);
  auto fn = embedding_gather<M, D, VOCAB, bf16, float>;
  launch(fn, lp, 0, (const int64_t *)di, reinterpret_cast<const bf16 *>(dt), dout);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got = to_host(dout, ref.size());
  size_t bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) bad += std::memcmp(&got[i], &ref[i], 4) != 0;
  CUDA_CHECK(cudaFree(dt));
  CUDA_CHECK(cudaFree(di));
  CUDA_CHECK(cudaFree(dout));
  std::printf("%-44s %s  (%zu/%zu elements differ; bitwise)\n", name, bad ? "FAIL" : "ok  ", bad,
              ref.size());
  return bad == 0;
}

int main() {
  if (!have_device()) return 77;
  bool ok = true;
  ok &= run_case<6, 2048, 128256, uint16_t>("llama M=6 D=2048 (ids -1, V, 0, V-1)", 71,
                                            {-1, 128256, 0, 128255});
  ok &= run_case<1, 2048, 128256, uint16_t>("llama decode", 72, {});
  ok &= run_case<3, 24, 10, uint16_t>("odd bf16 D=24", 73, {9, -5, 3});
  ok &= run_case<5, 12, 7, float>("f32 D=12", 74, {6, 7, int64_t(1) << 40, 0});
  ok &= run_case<17, 4096, 1000, uint16_t>("D=4096", 75, {});
  ok &= run_widen<6, 2048, 128256>("bf16 -> f32 llama M=6 (ids -1, V, 0, V-1)", 76,
                                   {-1, 128256, 0, 128255});
  ok &= run_widen<3, 8, 10>("bf16 -> f32 D=8", 77, {9, 2, 3});
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
