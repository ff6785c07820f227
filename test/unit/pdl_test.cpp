// Programmatic dependent launch (PDL): the SINTER_PDL switch and which launches carry it (CPU),
// and, with a GPU, a chain of 32 dependent kernels (host_overhead_model.so, each kernel reading
// the previous one's output) giving the reference result in direct and graph mode with PDL on
// and off, including many back-to-back runs that reuse the arena.
#include "context.h"
#include "test_util.h"

#include "sinter/sinter.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

namespace {

using sinter::rt::KernelStep;
using sinter::rt::Step;
using sinter::rt::StepKind;

TEST(PdlSwitch, EnvironmentValues) {
  EXPECT_TRUE(sinter::rt::pdl_requested(nullptr)); // unset: on (where the device has it)
  EXPECT_TRUE(sinter::rt::pdl_requested("1"));
  EXPECT_TRUE(sinter::rt::pdl_requested("on"));
  EXPECT_TRUE(sinter::rt::pdl_requested(""));
  EXPECT_FALSE(sinter::rt::pdl_requested("0"));
  EXPECT_FALSE(sinter::rt::pdl_requested("off"));
  EXPECT_FALSE(sinter::rt::pdl_requested("OFF"));
  EXPECT_FALSE(sinter::rt::pdl_requested("false"));
  EXPECT_FALSE(sinter::rt::pdl_requested("no"));
  EXPECT_STREQ(sinter::rt::kPdlEnv, "SINTER_PDL");
}

TEST(PdlPlan, OnlyAKernelThatFollowsAKernel) {
  // gemm, kernel, kernel, gemm, kernel, kernel, kernel
  const std::vector<Step> steps = {{StepKind::Gemm, 0},   {StepKind::Kernel, 0},
                                   {StepKind::Kernel, 1}, {StepKind::Gemm, 1},
                                   {StepKind::Kernel, 2}, {StepKind::Kernel, 3},
                                   {StepKind::Kernel, 4}};
  std::vector<KernelStep> kernels(5);
  sinter::rt::plan_pdl(steps, kernels, true);
  const bool expected[] = {false, true, false, true, true};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(kernels[i].pdl, expected[i]) << "kernel " << i;
  sinter::rt::plan_pdl(steps, kernels, false);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(kernels[i].pdl) << "kernel " << i;
  // The first launch of a run never carries it, kernel or not.
  const std::vector<Step> two = {{StepKind::Kernel, 0}, {StepKind::Kernel, 1}};
  std::vector<KernelStep> k2(2);
  sinter::rt::plan_pdl(two, k2, true);
  EXPECT_FALSE(k2[0].pdl);
  EXPECT_TRUE(k2[1].pdl);
}

// host_overhead_model.cu: y = chain of 32 launches h = a_l * h + 0.125 over 256 floats,
// a_l = 0.5 + 0.01 l, ping-ponging through the arena.
constexpr int kLayers = 32, kN = 256;

float reference(float x) {
  float h = x;
  for (int l = 0; l < kLayers; ++l) h = std::fma(0.5f + 0.01f * float(l), h, 0.125f);
  return h;
}

struct ChainSo {
  void *lib = nullptr;
#define SINTER_SYM(fn) decltype(&::fn) fn = nullptr
  SINTER_SYM(sinter_last_error);
  SINTER_SYM(sinter_model_load);
  SINTER_SYM(sinter_model_destroy);
  SINTER_SYM(sinter_context_create);
  SINTER_SYM(sinter_context_destroy);
  SINTER_SYM(sinter_run);
#undef SINTER_SYM
  bool open() {
    const std::string path =
        sinter::test::test_path("SINTER_TEST_HOST_OVERHEAD_SO", SINTER_TEST_HOST_OVERHEAD_SO);
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); // never closed (static CUDA runtime)
    if (!lib) return false;
#define SINTER_BIND(fn) fn = reinterpret_cast<decltype(fn)>(dlsym(lib, #fn))
    SINTER_BIND(sinter_last_error);
    SINTER_BIND(sinter_model_load);
    SINTER_BIND(sinter_model_destroy);
    SINTER_BIND(sinter_context_create);
    SINTER_BIND(sinter_context_destroy);
    SINTER_BIND(sinter_run);
#undef SINTER_BIND
    return sinter_run != nullptr;
  }
};

struct Param {
  int mode;
  bool pdl;
};
void PrintTo(const Param &p, std::ostream *os) {
  *os << (p.mode == SINTER_MODE_GRAPH ? "graph" : "direct") << ", SINTER_PDL=" << (p.pdl ? 1 : 0);
}

class PdlChainGpu : public ::testing::TestWithParam<Param> {
protected:
  void SetUp() override {
    if (!sinter::test::has_gpu()) GTEST_SKIP() << "needs a CUDA device (none found)";
    static ChainSo chain;
    static const bool ok = chain.open();
    ASSERT_TRUE(ok) << dlerror();
    so = &chain;
    ASSERT_EQ(so->sinter_model_load(SINTER_ABI_VERSION_MAJOR, &model), SINTER_OK)
        << so->sinter_last_error();
    const char *before = std::getenv("SINTER_PDL");
    const std::string saved = before ? before : "";
    setenv("SINTER_PDL", GetParam().pdl ? "1" : "0", 1); // read at context creation
    sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
    opts.mode = GetParam().mode;
    const sinter_status s = so->sinter_context_create(model, &opts, &ctx);
    if (before) setenv("SINTER_PDL", saved.c_str(), 1);
    else unsetenv("SINTER_PDL");
    ASSERT_EQ(s, SINTER_OK) << so->sinter_last_error();
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    for (float *&p : buffers) ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&p), kN * 4), cudaSuccess);
  }
  void TearDown() override {
    if (stream) cudaStreamSynchronize(stream);
    if (ctx) {
      EXPECT_EQ(so->sinter_context_destroy(ctx), SINTER_OK);
    }
    if (model) {
      EXPECT_EQ(so->sinter_model_destroy(model), SINTER_OK);
    }
    for (float *p : buffers) cudaFree(p);
    if (stream) cudaStreamDestroy(stream);
  }
  DLTensor tensor(float *p) {
    DLTensor t{};
    t.data = p;
    t.device = {kDLCUDA, 0};
    t.ndim = 1;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = const_cast<int64_t *>(&shape);
    return t;
  }
  // Uploads x (seeded), issues `runs` back-to-back runs x -> y, checks y once at the end.
  void run_and_check(float *x_dev, float *y_dev, unsigned seed, int runs) {
    std::vector<float> x(kN), y(kN, NAN);
    for (int i = 0; i < kN; ++i) x[i] = float(int((i * 37 + seed * 11) % 97) - 48) / 16.0f;
    ASSERT_EQ(cudaMemcpyAsync(x_dev, x.data(), kN * 4, cudaMemcpyHostToDevice, stream), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(y_dev, 0xff, kN * 4, stream), cudaSuccess); // NaN until written
    DLTensor in = tensor(x_dev), out = tensor(y_dev);
    for (int r = 0; r < runs; ++r)
      ASSERT_EQ(so->sinter_run(ctx, &in, 1, &out, 1, stream), SINTER_OK) << so->sinter_last_error();
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(y.data(), y_dev, kN * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < kN; ++i) {
      const float want = reference(x[i]);
      ASSERT_NEAR(y[i], want, 1e-5f * std::fmax(1.0f, std::fabs(want))) << "y[" << i << "]";
    }
  }
  ChainSo *so = nullptr;
  sinter_model *model = nullptr;
  sinter_context *ctx = nullptr;
  cudaStream_t stream = nullptr;
  float *buffers[3] = {};
  const int64_t shape = kN;
};

TEST_P(PdlChainGpu, MatchesReference) {
  run_and_check(buffers[0], buffers[1], 1, 1);
  run_and_check(buffers[0], buffers[1], 2, 1);
  run_and_check(buffers[2], buffers[0], 3, 1); // I/O pointers moved (graph: node updates)
  run_and_check(buffers[1], buffers[2], 4, 200); // back-to-back runs reusing the arena
}

INSTANTIATE_TEST_SUITE_P(
    Modes, PdlChainGpu,
    ::testing::Values(Param{SINTER_MODE_DIRECT, true}, Param{SINTER_MODE_DIRECT, false},
                      Param{SINTER_MODE_GRAPH, true}, Param{SINTER_MODE_GRAPH, false}),
    [](const ::testing::TestParamInfo<Param> &i) {
      return std::string(i.param.mode == SINTER_MODE_GRAPH ? "Graph" : "Direct") +
             (i.param.pdl ? "PdlOn" : "PdlOff");
    });

} // namespace
