// The nvcc-built test_model.so (built exactly as the emitter builds a model) loaded with dlopen,
// as an application would: exports, NO_DEVICE without a GPU, numerics and graph updates with one.
#include "test_model_data.h"
#include "test_util.h"

#include "sinter/sinter.h"

#include <dlfcn.h>

#include <atomic>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

using namespace sinter::test::model;

namespace {

struct ModelSo {
  void *lib = nullptr;
  template <typename F> F sym(const char *name) {
    return reinterpret_cast<F>(dlsym(lib, name));
  }
#define SINTER_SYM(fn) decltype(&::fn) fn = nullptr
  SINTER_SYM(sinter_abi_version);
  SINTER_SYM(sinter_last_error);
  SINTER_SYM(sinter_model_load);
  SINTER_SYM(sinter_model_destroy);
  SINTER_SYM(sinter_model_num_launches);
  SINTER_SYM(sinter_context_create);
  SINTER_SYM(sinter_context_destroy);
  SINTER_SYM(sinter_run);
#undef SINTER_SYM
  bool open() {
    // Never closed: the .so holds a static CUDA runtime (see RunCommand.cpp).
    lib = dlopen(sinter::test::test_model_so().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
#define SINTER_BIND(fn) fn = sym<decltype(fn)>(#fn)
    SINTER_BIND(sinter_abi_version);
    SINTER_BIND(sinter_last_error);
    SINTER_BIND(sinter_model_load);
    SINTER_BIND(sinter_model_destroy);
    SINTER_BIND(sinter_model_num_launches);
    SINTER_BIND(sinter_context_create);
    SINTER_BIND(sinter_context_destroy);
    SINTER_BIND(sinter_run);
#undef SINTER_BIND
    return sinter_run != nullptr;
  }
};

ModelSo &model_so() {
  static ModelSo so;
  static const bool ok = so.open();
  EXPECT_TRUE(ok) << dlerror();
  return so;
}

TEST(ModelSo, ExportsTheAbiOnly) {
  ModelSo &so = model_so();
  ASSERT_NE(so.lib, nullptr);
  EXPECT_EQ(so.sinter_abi_version(), SINTER_ABI_VERSION);
  EXPECT_NE(dlsym(so.lib, "sinter_build_info"), nullptr);
  EXPECT_EQ(dlsym(so.lib, "sinter_generated_program"), nullptr);
  EXPECT_EQ(dlsym(so.lib, "cudaMalloc"), nullptr);
}

TEST(ModelSo, WithoutGpuIsNoDevice) {
  SKIP_WITH_GPU("a CUDA device is present; NO_DEVICE cannot be observed");
  ModelSo &so = model_so();
  sinter_model *m = nullptr;
  EXPECT_EQ(so.sinter_model_load(SINTER_ABI_VERSION_MAJOR, &m), SINTER_NO_DEVICE);
  EXPECT_CONTAINS(std::string(so.sinter_last_error()), "no CUDA device");
}

// Device buffers for one run.
struct Buffers {
  float *x = nullptr, *y = nullptr, *z = nullptr;
  Buffers() {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&x), kM * kK * 4), cudaSuccess);
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&y), kM * kN * 4), cudaSuccess);
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&z), kM * kK * 4), cudaSuccess);
  }
  ~Buffers() {
    cudaFree(x);
    cudaFree(y);
    cudaFree(z);
  }
};

DLTensor tensor(float *p, const int64_t *shape) {
  DLTensor t{};
  t.data = p;
  t.device = {kDLCUDA, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = const_cast<int64_t *>(shape);
  return t;
}

const int64_t kXShape[] = {kM, kK}, kYShape[] = {kM, kN};

class ModelSoGpu : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override {
    if (!sinter::test::has_gpu()) GTEST_SKIP() << "needs a CUDA device (none found)";
    so = &model_so();
    ASSERT_EQ(so->sinter_model_load(SINTER_ABI_VERSION_MAJOR, &model), SINTER_OK)
        << so->sinter_last_error();
    sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
    opts.mode = GetParam();
    ASSERT_EQ(so->sinter_context_create(model, &opts, &ctx), SINTER_OK) << so->sinter_last_error();
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  }
  void TearDown() override {
    if (stream) cudaStreamSynchronize(stream);
    if (ctx) {
      EXPECT_EQ(so->sinter_context_destroy(ctx), SINTER_OK);
    }
    if (model) {
      EXPECT_EQ(so->sinter_model_destroy(model), SINTER_OK);
    }
    if (stream) cudaStreamDestroy(stream);
  }
  // Fills b.x with fresh random values, runs, and checks y and z against the reference.
  void run_and_check(Buffers &in, Buffers &out, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> x(kM * kK), y(kM * kN, NAN), z(kM * kK, NAN);
    for (float &v : x) v = u(rng);
    ASSERT_EQ(cudaMemcpy(in.x, x.data(), x.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    DLTensor inputs[] = {tensor(in.x, kXShape)};
    DLTensor outputs[] = {tensor(out.y, kYShape), tensor(out.z, kXShape)};
    ASSERT_EQ(so->sinter_run(ctx, inputs, 1, outputs, 2, stream), SINTER_OK)
        << so->sinter_last_error();
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(y.data(), out.y, y.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(z.data(), out.z, z.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n)
        ASSERT_NEAR(y[m * kN + n], reference_y(x.data(), m, n), 1e-4) << "y[" << m << "," << n << "]";
    for (int i = 0; i < kM * kK; ++i)
      ASSERT_EQ(z[i], 2.0f * x[i]) << "z[" << i << "]";
  }
  ModelSo *so = nullptr;
  sinter_model *model = nullptr;
  sinter_context *ctx = nullptr;
  cudaStream_t stream = nullptr;
};

TEST_P(ModelSoGpu, MatchesReference) {
  Buffers b;
  EXPECT_EQ(so->sinter_model_num_launches(model), 3u);
  run_and_check(b, b, 1);
  run_and_check(b, b, 2); // same pointers: graph replay without update
}

TEST_P(ModelSoGpu, FollowsChangingIoPointers) {
  Buffers b1, b2;
  run_and_check(b1, b1, 1);
  run_and_check(b2, b2, 2); // every I/O pointer moved: kernel nodes and the GEMM child update
  run_and_check(b1, b2, 3); // only the input moved
  run_and_check(b1, b1, 4); // only the outputs moved
}

TEST_P(ModelSoGpu, RejectsHostMemory) {
  Buffers b;
  static float host[kM * kK];
  DLTensor inputs[] = {tensor(host, kXShape)};
  DLTensor outputs[] = {tensor(b.y, kYShape), tensor(b.z, kXShape)};
  EXPECT_EQ(so->sinter_run(ctx, inputs, 1, outputs, 2, stream), SINTER_INVALID_ARGUMENT);
  EXPECT_CONTAINS(std::string(so->sinter_last_error()), "input 'x': expected device memory");
  run_and_check(b, b, 5); // the context is still usable
}

TEST_P(ModelSoGpu, ModelDestroyWaitsForContexts) {
  EXPECT_EQ(so->sinter_model_destroy(model), SINTER_BUSY);
}

TEST_P(ModelSoGpu, ConcurrentUseIsBusyNotARace) {
  Buffers b;
  DLTensor inputs[] = {tensor(b.x, kXShape)};
  DLTensor outputs[] = {tensor(b.y, kYShape), tensor(b.z, kXShape)};
  std::atomic<int> ok{0}, busy{0}, other{0};
  auto hammer = [&] {
    for (int i = 0; i < 2000; ++i) {
      const sinter_status s = so->sinter_run(ctx, inputs, 1, outputs, 2, stream);
      (s == SINTER_OK ? ok : s == SINTER_BUSY ? busy : other)++;
    }
  };
  std::thread t1(hammer), t2(hammer);
  t1.join();
  t2.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(ok.load(), 0);
  EXPECT_EQ(ok.load() + busy.load(), 4000);
}

TEST_P(ModelSoGpu, TwoContextsShareOneModel) {
  sinter_context *second = nullptr;
  sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
  opts.mode = GetParam();
  ASSERT_EQ(so->sinter_context_create(model, &opts, &second), SINTER_OK);
  Buffers b;
  run_and_check(b, b, 6);
  std::swap(ctx, second);
  run_and_check(b, b, 7);
  std::swap(ctx, second);
  EXPECT_EQ(so->sinter_context_destroy(second), SINTER_OK);
}

INSTANTIATE_TEST_SUITE_P(Modes, ModelSoGpu,
                         ::testing::Values(int(SINTER_MODE_DIRECT), int(SINTER_MODE_GRAPH)),
                         [](const ::testing::TestParamInfo<int> &i) {
                           return std::string(i.param == SINTER_MODE_GRAPH ? "Graph" : "Direct");
                         });

} // namespace
