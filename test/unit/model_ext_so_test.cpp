// test_model_ext.so (external weights) and test_model.so opened through the RAII header's
// sinter::Library, as an application would: the weights-file paths that need no device run
// everywhere; loading, running, swapping checkpoints and profiling run on a GPU.
#include "safetensors_writer.h"
#include "test_model_data.h"
#include "test_util.h"

#include "sinter/sinter.hpp"

#include <cmath>
#include <memory>
#include <random>
#include <vector>

using namespace sinter::test::model;
namespace st = sinter::safetensors;

namespace {

std::string ext_so() { return sinter::test::test_path("SINTER_TEST_MODEL_EXT_SO", SINTER_TEST_MODEL_EXT_SO); }

sinter::Library &ext_library() {
  static std::unique_ptr<sinter::Library> lib(new sinter::Library(ext_so()));
  return *lib;
}
sinter::Library &embedded_library() {
  static std::unique_ptr<sinter::Library> lib(new sinter::Library(sinter::test::test_model_so()));
  return *lib;
}

// The model's weights times `factor`, written as the compiler would write them.
std::string write_weights(const std::string &name, float factor, bool drop_scale = false) {
  std::vector<float> wv(kK * kN), bv(kN), sv(kN);
  for (int k = 0; k < kK; ++k)
    for (int n = 0; n < kN; ++n)
      wv[k * kN + n] = w(k, n) * factor;
  for (int n = 0; n < kN; ++n) {
    bv[n] = bias(n) * factor;
    sv[n] = scale(n) * factor;
  }
  std::vector<st::TensorData> t = {{"scale", "F32", {kN}, sv.data(), kN * 4u},
                                   {"w", "F32", {kK, kN}, wv.data(), kK * kN * 4u},
                                   {"bias", "F32", {kN}, bv.data(), kN * 4u}};
  if (drop_scale) t.erase(t.begin());
  const std::string path = ::testing::TempDir() + "sinter_ext_" + name + ".safetensors";
  std::string error;
  EXPECT_TRUE(st::write_file(path, t, {{"format", "sinter"}}, error)) << error;
  return path;
}

TEST(ExternalSo, ReportsExternalWeights) {
  EXPECT_TRUE(ext_library().weights_external());
  EXPECT_FALSE(embedded_library().weights_external());
  EXPECT_EQ(ext_library().abi_version(), SINTER_ABI_VERSION);
}

TEST(ExternalSo, PlainLoadAsksForTheFile) {
  try {
    sinter::Model m = sinter::Model::load(ext_library().api());
    FAIL() << "loaded without weights";
  } catch (const sinter::Error &e) {
    EXPECT_EQ(e.status(), SINTER_INVALID_ARGUMENT);
    EXPECT_CONTAINS(std::string(e.what()), "sinter_model_load_from_file");
  }
}

TEST(ExternalSo, MismatchedFileIsCorruptWeightsOnAnyMachine) {
  const std::string path = write_weights("noscale", 1.0f, true);
  sinter_model *m = nullptr;
  EXPECT_EQ(ext_library().api().model_load_from_file(SINTER_ABI_VERSION_MAJOR, path.c_str(), &m),
            SINTER_CORRUPT_WEIGHTS);
  EXPECT_CONTAINS(std::string(ext_library().api().last_error()), "tensor 'scale' is missing");
}

const int64_t kXShape[] = {kM, kK}, kYShape[] = {kM, kN};

DLTensor tensor(float *p, const int64_t *shape) {
  DLTensor t{};
  t.data = p;
  t.device = {kDLCUDA, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = const_cast<int64_t *>(shape);
  return t;
}

struct Io {
  float *x = nullptr, *y = nullptr, *z = nullptr;
  std::vector<float> hx;
  Io() {
    cudaMalloc(reinterpret_cast<void **>(&x), kM * kK * 4);
    cudaMalloc(reinterpret_cast<void **>(&y), kM * kN * 4);
    cudaMalloc(reinterpret_cast<void **>(&z), kM * kK * 4);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1, 1);
    hx.resize(kM * kK);
    for (float &v : hx) v = u(rng);
    cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice);
  }
  ~Io() {
    cudaFree(x);
    cudaFree(y);
    cudaFree(z);
  }
  std::vector<DLTensor> in() { return {tensor(x, kXShape)}; }
  std::vector<DLTensor> out() { return {tensor(y, kYShape), tensor(z, kXShape)}; }
  std::vector<float> run(sinter::Context &ctx) {
    ctx.run(in(), out());
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<float> hy(kM * kN);
    cudaMemcpy(hy.data(), y, hy.size() * 4, cudaMemcpyDeviceToHost);
    return hy;
  }
};

// y2 == 4 * y1 up to fp32 rounding (the two models may sum in different orders).
void expect_four_times(const std::vector<float> &y1, const std::vector<float> &y2) {
  ASSERT_EQ(y1.size(), y2.size());
  for (size_t i = 0; i < y1.size(); ++i)
    ASSERT_NEAR(y2[i], 4.0f * y1[i], 1e-5f * std::fabs(4.0f * y1[i]) + 1e-6f) << i;
}

TEST(ExternalSo, LoadRunAndSwapCheckpoints) {
  SKIP_WITHOUT_GPU();
  const sinter::Api &api = ext_library().api();
  Io io;
  std::vector<float> y1, y2;
  {
    sinter::Model model = sinter::Model::load(api, write_weights("orig", 1.0f));
    EXPECT_EQ(api.model_num_weights(model.get()), 3u);
    sinter::Context ctx(model, SINTER_MODE_GRAPH);
    y1 = io.run(ctx);
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n)
        ASSERT_NEAR(y1[m * kN + n], reference_y(io.hx.data(), m, n), 1e-4);
  }
  // A "fine-tuned" checkpoint: every weight doubled. Refused by checksum, loaded on request.
  const std::string tuned = write_weights("tuned", 2.0f);
  try {
    sinter::Model m = sinter::Model::load(api, tuned);
    FAIL() << "a different checkpoint passed the checksum";
  } catch (const sinter::Error &e) {
    EXPECT_EQ(e.status(), SINTER_CORRUPT_WEIGHTS);
    EXPECT_CONTAINS(std::string(e.what()), "fails its checksum");
  }
  {
    sinter::Model model = sinter::Model::load(api, tuned, /*allow_new_values=*/true);
    sinter::Context ctx(model, SINTER_MODE_DIRECT);
    y2 = io.run(ctx);
  }
  // relu(2(xW + b)) * 2 scale = 4 relu(xW + b) scale: exact for one summation order, but each
  // model picks its cuBLASLt algorithm by timing (split-K or not), so allow fp32 rounding.
  expect_four_times(y1, y2);
}

TEST(ExternalSo, EmbeddedLibraryTakesAFileToo) {
  SKIP_WITHOUT_GPU();
  const sinter::Api &api = embedded_library().api();
  Io io;
  sinter::Model embedded = sinter::Model::load(api);
  sinter::Context c1(embedded);
  const std::vector<float> y1 = io.run(c1);
  sinter::Model swapped = sinter::Model::load(api, write_weights("emb_tuned", 2.0f), true);
  sinter::Context c2(swapped);
  const std::vector<float> y2 = io.run(c2);
  expect_four_times(y1, y2);
}

TEST(ProfileSo, TimesEveryLaunch) {
  SKIP_WITHOUT_GPU();
  const sinter::Api &api = embedded_library().api();
  Io io;
  sinter::Model model = sinter::Model::load(api);
  for (int mode : {int(SINTER_MODE_DIRECT), int(SINTER_MODE_GRAPH)}) {
    sinter::Context ctx(model, mode);
    const std::vector<float> ms = ctx.profile(io.in(), io.out());
    ASSERT_EQ(ms.size(), 3u);
    for (float t : ms) {
      EXPECT_GT(t, 0.0f);
      EXPECT_LT(t, 100.0f);
    }
    std::vector<float> ms_small(1);
    auto in = io.in();
    auto out = io.out();
    EXPECT_EQ(api.context_profile(ctx.get(), in.data(), 1, out.data(), 2, nullptr, ms_small.data(), 1),
              SINTER_INVALID_ARGUMENT);
    EXPECT_CONTAINS(std::string(api.last_error()), "capacity 1 is less than the 3 launches");
    // The profiled run computed the real outputs, and the context still runs normally.
    const std::vector<float> y = io.run(ctx);
    EXPECT_NEAR(y[5], reference_y(io.hx.data(), 0, 5), 1e-4);
  }
  EXPECT_STREQ(model.launch(1).label, "relu_scale");
  EXPECT_STREQ(model.launch(1).sources, "Relu_0,Mul_0");
  EXPECT_STREQ(model.launch(0).kind, "gemm");
}

} // namespace
