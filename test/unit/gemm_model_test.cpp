// gemm_model.so on a GPU: the row-major mapping, bias epilogue and each dtype/precision pair
// (bf16 native, f32 tf32, f16 strict) against a CPU reference, in direct and graph mode.
#include "gemm_model_data.h"
#include "test_util.h"

#include "sinter/sinter.h"

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace sinter::test::gemm_model;

namespace {

uint16_t to_bf16(float f) { uint32_t u; std::memcpy(&u, &f, 4); return uint16_t(u >> 16); } // exact inputs
float from_bf16(uint16_t h) { uint32_t u = uint32_t(h) << 16; float f; std::memcpy(&f, &u, 4); return f; }
uint16_t to_f16(float f) { // normal or zero inputs only (multiples of 1/8 up to 1)
  if (f == 0.0f) return 0;
  uint32_t u; std::memcpy(&u, &f, 4);
  return uint16_t(((u >> 16) & 0x8000u) | ((((u >> 23) & 0xffu) - 112u) << 10) | ((u >> 13) & 0x3ffu));
}
float from_f16(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(float(mant), -24);
  uint32_t u = sign | ((exp + 112u) << 23) | (mant << 13);
  float f; std::memcpy(&f, &u, 4); return f;
}

template <typename F> F bind(void *lib, const char *name) { return reinterpret_cast<F>(dlsym(lib, name)); }

class GemmModelGpu : public ::testing::TestWithParam<int> {};

TEST_P(GemmModelGpu, EachPrecisionMatchesReference) {
  SKIP_WITHOUT_GPU();
  void *lib = dlopen(sinter::test::test_path("SINTER_TEST_GEMM_MODEL_SO", SINTER_TEST_GEMM_MODEL_SO).c_str(), RTLD_NOW | RTLD_LOCAL); // never closed
  ASSERT_NE(lib, nullptr) << dlerror();
  auto load = bind<decltype(&sinter_model_load)>(lib, "sinter_model_load");
  auto create = bind<decltype(&sinter_context_create)>(lib, "sinter_context_create");
  auto run = bind<decltype(&sinter_run)>(lib, "sinter_run");
  auto destroy_ctx = bind<decltype(&sinter_context_destroy)>(lib, "sinter_context_destroy");
  auto destroy_model = bind<decltype(&sinter_model_destroy)>(lib, "sinter_model_destroy");
  auto last_error = bind<decltype(&sinter_last_error)>(lib, "sinter_last_error");
  sinter_model *model = nullptr;
  ASSERT_EQ(load(SINTER_ABI_VERSION_MAJOR, &model), SINTER_OK) << last_error();
  sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
  opts.mode = GetParam();
  sinter_context *ctx = nullptr;
  ASSERT_EQ(create(model, &opts, &ctx), SINTER_OK) << last_error();

  const DLDataType types[3] = {{kDLBfloat, 16, 1}, {kDLFloat, 32, 1}, {kDLFloat, 16, 1}};
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> eighths(-8, 8);
  std::vector<std::vector<float>> a(3);
  std::vector<void *> dev_a(3), dev_c(3);
  std::vector<int64_t> shapes(12);
  DLTensor in[3] = {}, out[3] = {};
  for (int i = 0; i < 3; ++i) {
    const Problem &p = kProblems[i];
    const size_t e = types[i].bits / 8;
    a[i].resize(size_t(p.m) * p.k);
    std::vector<unsigned char> host(a[i].size() * e);
    for (size_t j = 0; j < a[i].size(); ++j) {
      a[i][j] = float(eighths(rng)) / 8.0f;
      if (e == 4) std::memcpy(&host[j * 4], &a[i][j], 4);
      else { uint16_t h = i == 0 ? to_bf16(a[i][j]) : to_f16(a[i][j]); std::memcpy(&host[j * 2], &h, 2); }
    }
    ASSERT_EQ(cudaMalloc(&dev_a[i], host.size()), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dev_c[i], size_t(p.m) * p.n * e), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dev_a[i], host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
    int64_t *s = &shapes[4 * i];
    s[0] = p.m; s[1] = p.k; s[2] = p.m; s[3] = p.n;
    in[i].data = dev_a[i]; in[i].device = {kDLCUDA, 0}; in[i].ndim = 2; in[i].dtype = types[i]; in[i].shape = s;
    out[i] = in[i]; out[i].data = dev_c[i]; out[i].shape = s + 2;
  }
  for (int rep = 0; rep < 2; ++rep) { // the second run replays the graph
    ASSERT_EQ(run(ctx, in, 3, out, 3, nullptr), SINTER_OK) << last_error();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  for (int i = 0; i < 3; ++i) {
    const Problem &p = kProblems[i];
    const size_t e = types[i].bits / 8;
    std::vector<unsigned char> host(size_t(p.m) * p.n * e);
    ASSERT_EQ(cudaMemcpy(host.data(), dev_c[i], host.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    for (int m = 0; m < p.m; ++m)
      for (int n = 0; n < p.n; ++n) {
        double ref = p.bias_offset ? bias(n) : 0.0;
        for (int k = 0; k < p.k; ++k) ref += double(a[i][size_t(m) * p.k + k]) * w(k, n, p.salt);
        const size_t j = size_t(m) * p.n + n;
        float got;
        if (e == 4) std::memcpy(&got, &host[j * 4], 4);
        else { uint16_t h; std::memcpy(&h, &host[j * 2], 2); got = i == 0 ? from_bf16(h) : from_f16(h); }
        ASSERT_NEAR(got, ref, 1e-3 + std::fabs(ref) * (e == 4 ? 1e-5 : 1e-2))
            << "problem " << i << " c[" << m << "," << n << "]";
      }
    cudaFree(dev_a[i]);
    cudaFree(dev_c[i]);
  }
  EXPECT_EQ(destroy_ctx(ctx), SINTER_OK);
  EXPECT_EQ(destroy_model(model), SINTER_OK);
}

INSTANTIATE_TEST_SUITE_P(Modes, GemmModelGpu,
                         ::testing::Values(int(SINTER_MODE_DIRECT), int(SINTER_MODE_GRAPH)),
                         [](const ::testing::TestParamInfo<int> &i) {
                           return std::string(i.param == SINTER_MODE_GRAPH ? "Graph" : "Direct");
                         });

} // namespace
