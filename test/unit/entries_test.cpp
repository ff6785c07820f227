// Entry points and state without a GPU (ABI 1.2): the entry queries on a hand-built model, and
// sinter_run_entry / sinter_context_reset_state's argument checks, entry range, per-entry I/O
// validation and BUSY on a hand-built context (all answered before any CUDA call).
#include "context.h"
#include "entries.h"
#include "fake_program.h"
#include "test_util.h"

#include <cstring>
#include <string>

using sinter::test::fake_program;
using sinter::test::make_tensors;
using sinter::test::StateProgram;
using sinter::test::TensorSet;

namespace {

class EntryQueryTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(sinter::rt::check_program(sp.program), SINTER_OK) << sinter_last_error();
    model.program = &sp.program;
    sinter::rt::init_entries(model);
    legacy.program = &fake_program();
    sinter::rt::init_entries(legacy);
  }
  StateProgram sp;
  sinter_model model;  // two entries, state
  sinter_model legacy; // a program emitted before entry tables: one entry, "main"
};

TEST_F(EntryQueryTest, EntriesAreListed) {
  EXPECT_EQ(sinter_model_num_entries(&model), 2u);
  EXPECT_STREQ(sinter_model_entry_name(&model, 0), "write");
  EXPECT_STREQ(sinter_model_entry_name(&model, 1), "read");
  EXPECT_EQ(sinter_model_state_bytes(&model), 512u);
  ASSERT_EQ(model.entries.size(), 2u);
  EXPECT_EQ(model.entries[1].io.outputs.size(), 1u);
  EXPECT_EQ(model.entries[1].algo_chosen.size(), 2u); // one slot per launch of the entry
}

TEST_F(EntryQueryTest, LegacyProgramHasOneEntryCalledMain) {
  EXPECT_EQ(sinter_model_num_entries(&legacy), 1u);
  EXPECT_STREQ(sinter_model_entry_name(&legacy, 0), "main");
  uint32_t index = 7;
  ASSERT_EQ(sinter_model_find_entry(&legacy, "main", &index), SINTER_OK);
  EXPECT_EQ(index, 0u);
  EXPECT_EQ(sinter_model_entry_num_inputs(&legacy, 0), 2u);
  EXPECT_EQ(sinter_model_entry_num_outputs(&legacy, 0), 1u);
  EXPECT_EQ(sinter_model_entry_num_launches(&legacy, 0), 2u);
  EXPECT_EQ(sinter_model_state_bytes(&legacy), 0u);
}

TEST_F(EntryQueryTest, FindEntry) {
  uint32_t index = 7;
  ASSERT_EQ(sinter_model_find_entry(&model, "read", &index), SINTER_OK);
  EXPECT_EQ(index, 1u);
  ASSERT_EQ(sinter_model_find_entry(&model, "write", &index), SINTER_OK);
  EXPECT_EQ(index, 0u);
}

TEST_F(EntryQueryTest, FindEntryErrorsListTheEntries) {
  uint32_t index = 7;
  EXPECT_EQ(sinter_model_find_entry(&model, "decode", &index), SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(),
               "sinter_model_find_entry: no entry 'decode': the model's entries are 'write', "
               "'read'");
  EXPECT_EQ(index, 7u); // untouched on failure
  EXPECT_EQ(sinter_model_find_entry(&model, "", &index), SINTER_INVALID_ARGUMENT);
  EXPECT_EQ(sinter_model_find_entry(&model, "Read", &index), SINTER_INVALID_ARGUMENT); // exact
  EXPECT_EQ(sinter_model_find_entry(&model, nullptr, &index), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_find_entry: name is null");
  EXPECT_EQ(sinter_model_find_entry(&model, "read", nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_find_entry: out is null");
  EXPECT_EQ(sinter_model_find_entry(nullptr, "read", &index), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_find_entry: model is null");
}

TEST_F(EntryQueryTest, PerEntryIo) {
  EXPECT_EQ(sinter_model_entry_num_inputs(&model, 0), 1u);
  EXPECT_EQ(sinter_model_entry_num_outputs(&model, 0), 0u);
  EXPECT_EQ(sinter_model_entry_num_launches(&model, 0), 1u);
  EXPECT_EQ(sinter_model_entry_num_inputs(&model, 1), 0u);
  EXPECT_EQ(sinter_model_entry_num_outputs(&model, 1), 1u);
  EXPECT_EQ(sinter_model_entry_num_launches(&model, 1), 2u);
  sinter_tensor_desc d;
  std::memset(&d, 0xff, sizeof d);
  ASSERT_EQ(sinter_model_entry_input_info(&model, 0, 0, &d), SINTER_OK);
  EXPECT_STREQ(d.name, "x");
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.shape[1], 4);
  EXPECT_EQ(d.shape[2], 0);
  ASSERT_EQ(sinter_model_entry_output_info(&model, 1, 0, &d), SINTER_OK);
  EXPECT_STREQ(d.name, "y");
  EXPECT_EQ(d.dtype.code, kDLFloat);
  // Entry 0 is what the single-entry queries describe.
  EXPECT_EQ(sinter_model_num_inputs(&model), sinter_model_entry_num_inputs(&model, 0));
  EXPECT_EQ(sinter_model_num_launches(&model), sinter_model_entry_num_launches(&model, 0));
}

TEST_F(EntryQueryTest, PerEntryLaunchInfo) {
  sinter_launch_info info{};
  ASSERT_EQ(sinter_model_entry_launch_info(&model, 1, 1, &info), SINTER_OK);
  EXPECT_STREQ(info.kind, "gemm");
  EXPECT_STREQ(info.label, "gemm");
  ASSERT_EQ(sinter_model_entry_launch_info(&model, 1, 0, &info), SINTER_OK);
  EXPECT_STREQ(info.kind, "kernel");
  // Entry 0 is what sinter_model_launch_info describes.
  sinter_launch_info legacy{};
  ASSERT_EQ(sinter_model_entry_launch_info(&model, 0, 0, &info), SINTER_OK);
  ASSERT_EQ(sinter_model_launch_info(&model, 0, &legacy), SINTER_OK);
  EXPECT_STREQ(info.kind, legacy.kind);
  EXPECT_EQ(info.sources, legacy.sources);
  EXPECT_EQ(sinter_model_entry_launch_info(&model, 1, 2, &info), SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "launch index 2 out of range: entry 'read' has 2 launches");
  EXPECT_EQ(sinter_model_entry_launch_info(&model, 2, 0, &info), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_entry_launch_info: entry 2 out of range");
  EXPECT_EQ(sinter_model_entry_launch_info(&model, 0, 0, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_entry_launch_info: out is null");
}

TEST_F(EntryQueryTest, LaunchErrorsNameTheEntry) {
  // Several entries: the entry's name comes first; one entry: just the launch.
  EXPECT_EQ(sinter::rt::launch_name(sp.program, 1, 1, "gemm"), "entry 'read' launch 1 (gemm)");
  EXPECT_EQ(sinter::rt::launch_name(sp.program, 0, 0, "kernel"),
            "entry 'write' launch 0 (fake_kernel)");
  EXPECT_EQ(sinter::rt::launch_name(*legacy.program, 0, 1, "kernel"), "launch 1 (fake_kernel)");
}

TEST_F(EntryQueryTest, OutOfRange) {
  EXPECT_EQ(sinter_model_entry_name(&model, 2), nullptr);
  EXPECT_STREQ(sinter_last_error(), "sinter_model_entry_name: entry 2 out of range: the model "
                                    "has 2 entries ('write', 'read')");
  EXPECT_EQ(sinter_model_entry_num_inputs(&model, 2), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_entry_num_inputs: entry 2 out of range");
  EXPECT_EQ(sinter_model_entry_num_outputs(&model, 5), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_entry_num_outputs: entry 5 out of range");
  EXPECT_EQ(sinter_model_entry_num_launches(&model, 2), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_entry_num_launches: entry 2 out of range");
  sinter_tensor_desc d;
  EXPECT_EQ(sinter_model_entry_input_info(&model, 2, 0, &d), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_entry_input_info: entry 2 out of range");
  EXPECT_EQ(sinter_model_entry_input_info(&model, 1, 0, &d), SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "input index 0 out of range: entry 'read' has 0 inputs");
  EXPECT_EQ(sinter_model_entry_output_info(&model, 1, 1, &d), SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "output index 1 out of range: entry 'read' has 1 outputs");
  EXPECT_EQ(sinter_model_entry_output_info(&model, 1, 0, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_entry_output_info: out is null");
}

TEST_F(EntryQueryTest, StateRegions) {
  // ABI 1.3: the state table's regions, as tensor descriptions.
  ASSERT_EQ(sinter_model_num_states(&model), 2u);
  sinter_tensor_desc d;
  ASSERT_EQ(sinter_model_state_info(&model, 0, &d), SINTER_OK);
  EXPECT_STREQ(d.name, "acc");
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 32);
  ASSERT_EQ(d.ndim, 2);
  EXPECT_EQ(d.shape[0], 2);
  EXPECT_EQ(d.shape[1], 4);
  ASSERT_EQ(sinter_model_state_info(&model, 1, &d), SINTER_OK);
  EXPECT_STREQ(d.name, ".steps");
  EXPECT_EQ(d.dtype.code, kDLInt);
  EXPECT_EQ(sinter_model_state_info(&model, 2, &d), SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "state index 2 out of range: the model has 2");
  EXPECT_EQ(sinter_model_state_info(&model, 0, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_state_info: out is null");
  EXPECT_EQ(sinter_model_num_states(&legacy), 0u); // a program without state
}

TEST(NullHandles, EntryFunctions) {
  EXPECT_EQ(sinter_model_num_entries(nullptr), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_num_entries: model is null");
  EXPECT_EQ(sinter_model_entry_name(nullptr, 0), nullptr);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_entry_name: model is null");
  EXPECT_EQ(sinter_model_entry_num_inputs(nullptr, 0), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_entry_num_inputs: model is null");
  EXPECT_EQ(sinter_model_entry_num_outputs(nullptr, 0), 0u);
  EXPECT_EQ(sinter_model_entry_num_launches(nullptr, 0), 0u);
  EXPECT_EQ(sinter_model_num_states(nullptr), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_num_states: model is null");
  sinter_tensor_desc st;
  EXPECT_EQ(sinter_model_state_info(nullptr, 0, &st), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_state_info: model is null");
  EXPECT_EQ(sinter_model_state_bytes(nullptr), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_state_bytes: model is null");
  sinter_tensor_desc d;
  EXPECT_EQ(sinter_model_entry_input_info(nullptr, 0, 0, &d), SINTER_INVALID_ARGUMENT);
  EXPECT_EQ(sinter_model_entry_output_info(nullptr, 0, 0, &d), SINTER_INVALID_ARGUMENT);
  EXPECT_EQ(sinter_run_entry(nullptr, 0, nullptr, 0, nullptr, 0, nullptr),
            SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_run_entry: context is null");
  EXPECT_EQ(sinter_context_reset_state(nullptr, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_context_reset_state: context is null");
  float ms[2];
  EXPECT_EQ(sinter_context_profile_entry(nullptr, 0, nullptr, 0, nullptr, 0, nullptr, ms, 2),
            SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_context_profile_entry: context is null");
  sinter_launch_info info;
  EXPECT_EQ(sinter_model_entry_launch_info(nullptr, 0, 0, &info), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_entry_launch_info: model is null");
}

// A context built by hand over the two-entry program: enough for every check that comes before
// the first CUDA call.
class EntryContextTest : public ::testing::Test {
protected:
  void SetUp() override {
    model.program = &sp.program;
    sinter::rt::init_entries(model);
    ctx.model = &model;
    ctx.entries.resize(2);
    ctx.entries[0].checked_inputs.assign(1, nullptr);
    ctx.entries[1].checked_outputs.assign(1, nullptr);
    x = make_tensors(sp.entries[0].inputs, 1, false);
    y = make_tensors(sp.entries[1].outputs, 1, false);
  }
  StateProgram sp;
  sinter_model model;
  sinter_context ctx;
  TensorSet x, y;
};

TEST_F(EntryContextTest, EntryOutOfRangeListsTheEntries) {
  EXPECT_EQ(sinter_run_entry(&ctx, 2, nullptr, 0, y.tensors.data(), 1, nullptr),
            SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(),
               "sinter_run_entry: entry 2 out of range: the model has 2 entries ('write', 'read')");
  EXPECT_FALSE(ctx.busy.load());
}

TEST_F(EntryContextTest, ProfileEntryChecksTheEntry) {
  float ms[2];
  EXPECT_EQ(sinter_context_profile_entry(&ctx, 2, nullptr, 0, y.tensors.data(), 1, nullptr, ms, 2),
            SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "sinter_context_profile_entry: entry 2 out of range: the "
                                    "model has 2 entries ('write', 'read')");
  EXPECT_FALSE(ctx.busy.load());
}

TEST_F(EntryContextTest, EachEntryHasItsOwnIo) {
  // "read" takes no inputs and one output; "write" the other way round.
  EXPECT_EQ(sinter_run_entry(&ctx, 1, x.tensors.data(), 1, y.tensors.data(), 1, nullptr),
            SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "expected 0 inputs, got 1");
  EXPECT_EQ(sinter_run_entry(&ctx, 0, x.tensors.data(), 1, y.tensors.data(), 1, nullptr),
            SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "expected 0 outputs, got 1");
  // sinter_run is entry 0.
  EXPECT_EQ(sinter_run(&ctx, nullptr, 0, nullptr, 0, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "expected 1 inputs, got 0");
  y.tensors[0].dtype = {kDLInt, 32, 1};
  EXPECT_EQ(sinter_run_entry(&ctx, 1, nullptr, 0, y.tensors.data(), 1, nullptr),
            SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "output 'y': expected dtype float32, got int32");
}

TEST_F(EntryContextTest, WellFormedTensorsReachThePointerCheck) {
  // Right counts and descriptions for "read", but fake addresses: refused as not CUDA memory,
  // with or without a GPU, which shows validation used entry 1's expectations.
  EXPECT_EQ(sinter_run_entry(&ctx, 1, nullptr, 0, y.tensors.data(), 1, nullptr),
            SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("output 'y': ");
}

TEST_F(EntryContextTest, RunEntryWhileBusy) {
  ctx.busy = true;
  EXPECT_EQ(sinter_run_entry(&ctx, 1, nullptr, 0, y.tensors.data(), 1, nullptr), SINTER_BUSY);
  EXPECT_LAST_ERROR_CONTAINS("sinter_run_entry: the context is in use by another thread");
  EXPECT_TRUE(ctx.busy.load());
  ctx.busy = false;
}

TEST_F(EntryContextTest, ResetStateWhileBusy) {
  ctx.busy = true; // another thread is inside sinter_run
  EXPECT_EQ(sinter_context_reset_state(&ctx, nullptr), SINTER_BUSY);
  EXPECT_LAST_ERROR_CONTAINS("sinter_context_reset_state: the context is in use by another thread");
  EXPECT_TRUE(ctx.busy.load()); // the other thread's claim is untouched
  ctx.busy = false;
}

TEST(ResetState, NoStateIsANoOp) {
  // No state block: nothing to clear, no CUDA call (so it succeeds without a GPU too).
  sinter_model model;
  model.program = &fake_program();
  sinter::rt::init_entries(model);
  sinter_context ctx;
  ctx.model = &model;
  ctx.entries.resize(1);
  EXPECT_EQ(sinter_context_reset_state(&ctx, nullptr), SINTER_OK);
  EXPECT_FALSE(ctx.busy.load());
}

} // namespace
