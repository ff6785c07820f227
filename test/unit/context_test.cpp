// Context creation arguments and sinter_run's public entry (null handles, BUSY, validation
// before any CUDA call), using a hand-built model/context so no GPU is needed.
#include "context.h"
#include "fake_program.h"
#include "test_util.h"

#include <cmath>
#include <string>

using sinter::test::fake_program;
using sinter::test::make_tensors;
using sinter::test::TensorSet;

namespace {

class ContextTest : public ::testing::Test {
protected:
  void SetUp() override {
    model.program = &fake_program();
    sinter::rt::init_entries(model);
    ctx.model = &model;
    ctx.entries.resize(1);
    ctx.entries[0].checked_inputs.assign(2, nullptr);
    ctx.entries[0].checked_outputs.assign(1, nullptr);
    in = make_tensors(fake_program().inputs, 2, false);
    out = make_tensors(fake_program().outputs, 1, false);
  }
  sinter_status run() {
    return sinter_run(&ctx, in.tensors.data(), 2, out.tensors.data(), 1, nullptr);
  }
  sinter_model model;
  sinter_context ctx;
  TensorSet in, out;
};

TEST(NullHandles, ContextFunctions) {
  sinter_context *c = reinterpret_cast<sinter_context *>(0x1);
  EXPECT_EQ(sinter_context_create(nullptr, nullptr, &c), SINTER_INVALID_ARGUMENT);
  EXPECT_EQ(c, nullptr);
  EXPECT_LAST_ERROR_CONTAINS("sinter_context_create: model is null");
  EXPECT_EQ(sinter_context_destroy(nullptr), SINTER_OK);
  EXPECT_EQ(sinter_run(nullptr, nullptr, 0, nullptr, 0, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_run: context is null");
}

TEST_F(ContextTest, CreateNeedsOut) {
  EXPECT_EQ(sinter_context_create(&model, nullptr, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_context_create: out is null");
}

TEST_F(ContextTest, CreateRejectsSmallOptions) {
  sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
  opts.struct_size = 4;
  sinter_context *c = nullptr;
  EXPECT_EQ(sinter_context_create(&model, &opts, &c), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("options.struct_size 4 is too small (expected 8)");
  EXPECT_EQ(model.num_contexts.load(), 0u);
}

TEST_F(ContextTest, CreateRejectsUnknownMode) {
  sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
  opts.mode = 5;
  sinter_context *c = nullptr;
  EXPECT_EQ(sinter_context_create(&model, &opts, &c), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("mode 5 is neither SINTER_MODE_DIRECT (0) nor SINTER_MODE_GRAPH (1)");
}

TEST_F(ContextTest, RunValidatesBeforeAnyCudaCall) {
  in.tensors[0].dtype = {kDLInt, 64, 1};
  EXPECT_EQ(run(), SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "input 'x': expected dtype float32, got int64");
  EXPECT_FALSE(ctx.busy.load()); // released on the error path
}

TEST_F(ContextTest, RunWrongCounts) {
  EXPECT_EQ(sinter_run(&ctx, in.tensors.data(), 1, out.tensors.data(), 1, nullptr),
            SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "expected 2 inputs, got 1");
  EXPECT_EQ(sinter_run(&ctx, in.tensors.data(), 2, nullptr, 0, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "expected 1 outputs, got 0");
}

TEST_F(ContextTest, RunWhileBusy) {
  ctx.busy = true; // another thread is inside sinter_run
  EXPECT_EQ(run(), SINTER_BUSY);
  EXPECT_LAST_ERROR_CONTAINS("in use by another thread");
  EXPECT_TRUE(ctx.busy.load()); // the other thread's claim is untouched
  ctx.busy = false;
}

TEST_F(ContextTest, DestroyWhileBusy) {
  ctx.busy = true;
  EXPECT_EQ(sinter_context_destroy(&ctx), SINTER_BUSY);
  ctx.busy = false;
}

TEST_F(ContextTest, RunRejectsNonDeviceMemory) {
  // Well-formed descriptions, but the addresses are not CUDA allocations: the pointer check
  // (cudaPointerGetAttributes) refuses them, with or without a GPU.
  EXPECT_EQ(run(), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("input 'x': ");
}

TEST_F(ContextTest, RunRejectsHostMemoryOnGpu) {
  SKIP_WITHOUT_GPU();
  alignas(16) static float host[8];
  in.tensors[0].data = host;
  EXPECT_EQ(run(), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("input 'x': expected device memory, got host memory");
}

} // namespace

// ABI 1.4: the sampling parameters are checked before anything else, each range error names
// its parameter, and a library without a sampler says how to get one.
TEST_F(ContextTest, SetSamplingChecksEveryParameter) {
  EXPECT_EQ(sinter_model_has_sampler(&model), 0);
  EXPECT_EQ(sinter_model_has_sampler(nullptr), 0);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_has_sampler: model is null");
  sinter_sampling_params ok = SINTER_SAMPLING_PARAMS_INIT;
  EXPECT_EQ(sinter_context_set_sampling(nullptr, &ok, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("context is null");
  EXPECT_EQ(sinter_context_set_sampling(&ctx, nullptr, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("params is null");
  struct Case {
    void (*edit)(sinter_sampling_params &);
    const char *message;
  };
  const Case cases[] = {
      {[](sinter_sampling_params &p) { p.struct_size = 8; }, "struct_size 8 is smaller"},
      {[](sinter_sampling_params &p) { p.temperature = -0.5f; }, "temperature must be finite and >= 0"},
      {[](sinter_sampling_params &p) { p.temperature = INFINITY; }, "temperature must be finite"},
      {[](sinter_sampling_params &p) { p.top_k = -1; }, "top_k must be >= 0 (0: off), got -1"},
      {[](sinter_sampling_params &p) { p.top_p = 0.f; }, "top_p must be in (0, 1]"},
      {[](sinter_sampling_params &p) { p.top_p = 1.5f; }, "top_p must be in (0, 1]"},
      {[](sinter_sampling_params &p) { p.top_p = NAN; }, "top_p must be in (0, 1]"},
      {[](sinter_sampling_params &p) { p.repetition_penalty = 0.f; }, "repetition_penalty must be finite and > 0"},
  };
  for (const Case &c : cases) {
    sinter_sampling_params p = SINTER_SAMPLING_PARAMS_INIT;
    c.edit(p);
    EXPECT_EQ(sinter_context_set_sampling(&ctx, &p, nullptr), SINTER_INVALID_ARGUMENT);
    EXPECT_LAST_ERROR_CONTAINS(c.message);
  }
  EXPECT_EQ(sinter_context_set_sampling(&ctx, &ok, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("compiled without --sample");
  EXPECT_FALSE(ctx.sampling_set);
}
