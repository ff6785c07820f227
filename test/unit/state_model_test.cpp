// state_model.so (two entry points over a state block, built as the emitter builds a model)
// through the C++ wrapper, as an application would: exports and NO_DEVICE without a GPU; with
// one, each entry's numerics, state kept across runs and entries, reset_state, separate state
// per context, and graph mode with one graph per entry.
#include "state_model_data.h"
#include "test_util.h"

#include "sinter/sinter.hpp"

#include <dlfcn.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

using namespace sinter::test::state_model;

namespace {

std::string state_model_so() {
  return sinter::test::test_path("SINTER_TEST_STATE_MODEL_SO", SINTER_TEST_STATE_MODEL_SO);
}

sinter::Library &library() {
  static sinter::Library lib(state_model_so()); // never closed (see sinter.hpp)
  return lib;
}

TEST(StateModelSo, ExportsTheEntryAndStateFunctions) {
  const sinter::Api &api = library().api();
  EXPECT_EQ(api.abi_version(), SINTER_ABI_VERSION);
  EXPECT_NE(api.model_num_entries, nullptr);
  EXPECT_NE(api.model_entry_name, nullptr);
  EXPECT_NE(api.model_find_entry, nullptr);
  EXPECT_NE(api.model_entry_num_inputs, nullptr);
  EXPECT_NE(api.model_entry_num_outputs, nullptr);
  EXPECT_NE(api.model_entry_input_info, nullptr);
  EXPECT_NE(api.model_entry_output_info, nullptr);
  EXPECT_NE(api.model_entry_num_launches, nullptr);
  EXPECT_NE(api.model_state_bytes, nullptr);
  EXPECT_NE(api.run_entry, nullptr);
  EXPECT_NE(api.context_reset_state, nullptr);
  EXPECT_NE(api.model_num_states, nullptr);
  EXPECT_NE(api.model_state_info, nullptr);
}

TEST(StateModelSo, WithoutGpuIsNoDevice) {
  SKIP_WITH_GPU("a CUDA device is present; NO_DEVICE cannot be observed");
  try {
    sinter::Model model = sinter::Model::load(library().api());
    FAIL() << "no exception";
  } catch (const sinter::Error &e) {
    EXPECT_EQ(e.status(), SINTER_NO_DEVICE);
  }
}

// A device buffer of `count` T, freed on scope exit.
template <typename T> struct DeviceArray {
  T *data = nullptr;
  size_t count;
  explicit DeviceArray(size_t n) : count(n) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&data), n * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemset(data, 0xff, n * sizeof(T)), cudaSuccess); // garbage until written
  }
  ~DeviceArray() { cudaFree(data); }
  std::vector<T> read() const {
    std::vector<T> host(count);
    EXPECT_EQ(cudaMemcpy(host.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }
};

const int64_t kAccShape[] = {kRows, kCols}, kCallsShape[] = {1}, kYShape[] = {kRows, kN};

DLTensor tensor(void *p, const int64_t *shape, int ndim, DLDataType dtype) {
  DLTensor t{};
  t.data = p;
  t.device = {kDLCUDA, 0};
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = const_cast<int64_t *>(shape);
  return t;
}
constexpr DLDataType kF32 = {kDLFloat, 32, 1}, kI32 = {kDLInt, 32, 1};

// What "read" returned.
struct Snapshot {
  std::vector<float> acc, y;
  int calls = -1;
};

class StateModelGpu : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override {
    if (!sinter::test::has_gpu()) GTEST_SKIP() << "needs a CUDA device (none found)";
    model = std::make_unique<sinter::Model>(sinter::Model::load(library().api()));
    ctx = std::make_unique<sinter::Context>(*model, GetParam());
    write = model->find_entry("write");
    read = model->find_entry("read");
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  }
  void TearDown() override {
    if (stream) cudaStreamSynchronize(stream);
    ctx.reset();
    model.reset();
    if (stream) cudaStreamDestroy(stream);
  }
  // Runs "write" with x (host values) on `c`.
  void run_write(sinter::Context &c, const std::vector<float> &x) {
    DeviceArray<float> in(x.size());
    ASSERT_EQ(cudaMemcpy(in.data, x.data(), x.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    c.run_entry(write, {tensor(in.data, kAccShape, 2, kF32)}, {}, stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess); // `in` is freed on return
  }
  // Runs "read" on `c` into fresh buffers (so graph mode also sees changing output pointers).
  Snapshot run_read(sinter::Context &c) {
    DeviceArray<float> acc(kRows * kCols), y(kRows * kN);
    DeviceArray<int> calls(1);
    c.run_entry(read, {},
                {tensor(acc.data, kAccShape, 2, kF32), tensor(calls.data, kCallsShape, 1, kI32),
                 tensor(y.data, kYShape, 2, kF32)},
                stream);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    Snapshot s;
    s.acc = acc.read();
    s.y = y.read();
    s.calls = calls.read()[0];
    return s;
  }
  // "read" gives `expected` as the state, its call count and y = expected @ W.
  static void expect_state(const Snapshot &s, const std::vector<float> &expected, int calls) {
    EXPECT_EQ(s.calls, calls);
    for (int i = 0; i < kRows * kCols; ++i)
      ASSERT_EQ(s.acc[i], expected[i]) << "acc[" << i << "]";
    for (int m = 0; m < kRows; ++m)
      for (int n = 0; n < kN; ++n)
        ASSERT_NEAR(s.y[m * kN + n], reference_y(expected.data(), m, n), 1e-4)
            << "y[" << m << "," << n << "]";
  }
  static std::vector<float> random_x(unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> u(-8, 8); // exact in f32, so sums compare exactly
    std::vector<float> x(kRows * kCols);
    for (float &v : x) v = float(u(rng)) * 0.25f;
    return x;
  }
  std::unique_ptr<sinter::Model> model;
  std::unique_ptr<sinter::Context> ctx;
  uint32_t write = 0, read = 0;
  cudaStream_t stream = nullptr;
};

TEST_P(StateModelGpu, EntriesAreListed) {
  EXPECT_EQ(model->num_entries(), 2u);
  EXPECT_EQ(model->entry_name(0), "write");
  EXPECT_EQ(model->entry_name(1), "read");
  EXPECT_EQ(write, 0u);
  EXPECT_EQ(read, 1u);
  EXPECT_EQ(model->state_bytes(), kStateBytes);
  ASSERT_EQ(model->num_states(), 2u); // through the .so (ABI 1.3)
  EXPECT_EQ(model->state(0).name, std::string("acc"));
  EXPECT_EQ(model->state(0).shape[1], int64_t(kCols));
  EXPECT_EQ(model->state(1).name, std::string(".calls"));
  EXPECT_THROW(model->state(2), sinter::Error);
  EXPECT_EQ(model->entry_num_inputs(read), 0u);
  EXPECT_EQ(model->entry_num_outputs(read), 3u);
  EXPECT_EQ(model->entry_output(read, 2).name, std::string("y"));
  EXPECT_EQ(model->entry_input(write, 0).name, std::string("x"));
  EXPECT_EQ(model->num_inputs(), 1u); // the single-entry queries are entry 0
  try {
    model->find_entry("decode");
    FAIL() << "no exception";
  } catch (const sinter::Error &e) {
    EXPECT_EQ(e.status(), SINTER_INVALID_ARGUMENT);
    EXPECT_CONTAINS(std::string(e.what()), "no entry 'decode': the model's entries are "
                                           "'write', 'read'");
  }
  EXPECT_THROW(model->entry_name(2), sinter::Error);
}

TEST_P(StateModelGpu, NewContextStartsFromZero) {
  expect_state(run_read(*ctx), std::vector<float>(kRows * kCols, 0.0f), 0);
}

TEST_P(StateModelGpu, StatePersistsAcrossRunsAndEntries) {
  const std::vector<float> x1 = random_x(1), x2 = random_x(2);
  std::vector<float> sum(x1.size());
  run_write(*ctx, x1);
  expect_state(run_read(*ctx), x1, 1);
  run_write(*ctx, x2);
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = x1[i] + x2[i];
  expect_state(run_read(*ctx), sum, 2);
  expect_state(run_read(*ctx), sum, 2); // reading leaves the state alone
}

TEST_P(StateModelGpu, ResetStateZeroesIt) {
  run_write(*ctx, random_x(3));
  run_write(*ctx, random_x(4));
  ctx->reset_state(stream);
  expect_state(run_read(*ctx), std::vector<float>(kRows * kCols, 0.0f), 0);
  const std::vector<float> x = random_x(5);
  run_write(*ctx, x); // a new sequence starts from zero
  expect_state(run_read(*ctx), x, 1);
}

TEST_P(StateModelGpu, ResetIsOrderedOnTheStream) {
  // write, reset, write queued back to back without a host wait: only the last write remains.
  const std::vector<float> x1 = random_x(6), x2 = random_x(7);
  DeviceArray<float> in1(x1.size()), in2(x2.size());
  ASSERT_EQ(cudaMemcpy(in1.data, x1.data(), x1.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(in2.data, x2.data(), x2.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ctx->run_entry(write, {tensor(in1.data, kAccShape, 2, kF32)}, {}, stream);
  ctx->reset_state(stream);
  ctx->run_entry(write, {tensor(in2.data, kAccShape, 2, kF32)}, {}, stream);
  expect_state(run_read(*ctx), x2, 1);
}

TEST_P(StateModelGpu, EachContextHasItsOwnState) {
  sinter::Context other(*model, GetParam());
  const std::vector<float> x = random_x(8);
  run_write(*ctx, x);
  expect_state(run_read(other), std::vector<float>(kRows * kCols, 0.0f), 0);
  expect_state(run_read(*ctx), x, 1);
}

TEST_P(StateModelGpu, RunIsEntryZero) {
  const std::vector<float> x = random_x(9);
  DeviceArray<float> in(x.size());
  ASSERT_EQ(cudaMemcpy(in.data, x.data(), x.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ctx->run({tensor(in.data, kAccShape, 2, kF32)}, {}, stream); // sinter_run
  expect_state(run_read(*ctx), x, 1);
}

TEST_P(StateModelGpu, ManyAlternatingRuns) {
  // Graph mode: each entry replays its own graph; "read" changes its output pointers each time.
  std::vector<float> sum(kRows * kCols, 0.0f);
  for (int i = 0; i < 20; ++i) {
    const std::vector<float> x = random_x(100 + i);
    run_write(*ctx, x);
    for (size_t j = 0; j < sum.size(); ++j) sum[j] += x[j];
    expect_state(run_read(*ctx), sum, i + 1);
  }
}

TEST_P(StateModelGpu, EntryErrorsThroughTheCAbi) {
  const sinter::Api &api = library().api();
  uint32_t index = 9;
  EXPECT_EQ(api.model_find_entry(model->get(), nullptr, &index), SINTER_INVALID_ARGUMENT);
  EXPECT_CONTAINS(std::string(api.last_error()), "name is null");
  EXPECT_EQ(api.run_entry(ctx->get(), 2, nullptr, 0, nullptr, 0, stream), SINTER_INVALID_ARGUMENT);
  EXPECT_CONTAINS(std::string(api.last_error()),
                  "entry 2 out of range: the model has 2 entries ('write', 'read')");
  DeviceArray<float> acc(kRows * kCols);
  DLTensor one = tensor(acc.data, kAccShape, 2, kF32);
  EXPECT_EQ(api.run_entry(ctx->get(), read, &one, 1, nullptr, 0, stream), SINTER_INVALID_ARGUMENT);
  EXPECT_CONTAINS(std::string(api.last_error()), "expected 0 inputs, got 1");
  expect_state(run_read(*ctx), std::vector<float>(kRows * kCols, 0.0f), 0); // still usable
}

INSTANTIATE_TEST_SUITE_P(Modes, StateModelGpu,
                         ::testing::Values(int(SINTER_MODE_DIRECT), int(SINTER_MODE_GRAPH)),
                         [](const ::testing::TestParamInfo<int> &i) {
                           return std::string(i.param == SINTER_MODE_GRAPH ? "Graph" : "Direct");
                         });

} // namespace
