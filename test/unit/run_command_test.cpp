// `sinter run` error handling (missing/invalid .so, bad mode) and its behaviour on test_model.so.
#include "RunCommand.h"
#include "test_util.h"

#include <fstream>
#include <iostream>
#include <sstream>

namespace {

struct Result {
  int code;
  std::string out, err;
};

Result run(const std::string &so, const std::string &mode = "direct", int iterations = 3) {
  std::ostringstream out, err;
  const int code = sinterRunCommand(so, iterations, 1, mode, false, out, err);
  return {code, out.str(), err.str()};
}

TEST(RunCommand, MissingFile) {
  Result r = run("/nonexistent/model.so");
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "cannot read '/nonexistent/model.so'");
}

TEST(RunCommand, NotASharedObject) {
  const std::string path = ::testing::TempDir() + "not_a_model.so";
  std::ofstream(path) << "hello";
  Result r = run(path);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "cannot load '" + path + "'");
}

TEST(RunCommand, SharedObjectWithoutTheAbi) {
  // libcublasLt is a valid .so but no sinter model.
  Result r = run(SINTER_TEST_CUBLASLT);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "is not a sinter model library (no sinter_abi_version)");
}

TEST(RunCommand, BadArguments) {
  Result r = run(sinter::test::test_model_so(), "eager");
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "unknown mode 'eager'");
  r = run(sinter::test::test_model_so(), "direct", 0);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "iterations must be >= 1");
}

TEST(RunCommand, WithoutGpuSaysNoDevice) {
  SKIP_WITH_GPU("a CUDA device is present");
  Result r = run(sinter::test::test_model_so());
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "no CUDA device");
}

TEST(RunCommand, TimesTheModel) {
  SKIP_WITHOUT_GPU();
  for (const char *mode : {"direct", "graph"}) {
    Result r = run(sinter::test::test_model_so(), mode, 20);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_CONTAINS(r.out, std::string("mode ") + mode + ": median ");
    EXPECT_CONTAINS(r.out, "launches: 3");
    EXPECT_CONTAINS(r.out, "input  x f32[4x8]");
    std::cout << r.out; // the timing, for whoever reads the log on a GPU machine
  }
}

Result run_with(const std::string &so, const SinterRunOptions &o) {
  std::ostringstream out, err;
  const int code = sinterRunCommand(so, o, out, err);
  return {code, out.str(), err.str()};
}

std::string ext_so() {
  return sinter::test::test_path("SINTER_TEST_MODEL_EXT_SO", SINTER_TEST_MODEL_EXT_SO);
}

TEST(RunCommand, ExternalWeightsNeedTheFile) {
  SinterRunOptions o;
  o.iterations = 2;
  Result r = run_with(ext_so(), o);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "weights are external");
  o.weights = "/nonexistent.safetensors";
  r = run_with(ext_so(), o);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "weights file '/nonexistent.safetensors': cannot open");
}

TEST(RunCommand, BadPdlSetting) {
  SinterRunOptions o;
  o.pdl = "maybe";
  Result r = run_with(sinter::test::test_model_so(), o);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "unknown pdl setting 'maybe' (expected 'on' or 'off')");
}

TEST(RunCommand, PdlOnAndOff) {
  SKIP_WITHOUT_GPU();
  for (const char *pdl : {"on", "off"})
    for (const char *mode : {"direct", "graph"}) {
      SinterRunOptions o;
      o.iterations = 10;
      o.mode = mode;
      o.pdl = pdl;
      Result r = run_with(sinter::test::test_model_so(), o);
      EXPECT_EQ(r.code, 0) << r.err;
      EXPECT_CONTAINS(r.out, std::string("mode ") + mode + " (SINTER_PDL=" +
                                 (pdl[1] == 'n' ? "1" : "0") + "): median ");
    }
  unsetenv("SINTER_PDL"); // the command sets it for its context; leave later tests the default
}

TEST(RunCommand, ProfilePrintsOneRowPerLaunch) {
  SKIP_WITHOUT_GPU();
  for (const char *mode : {"direct", "graph"}) {
    SinterRunOptions o;
    o.iterations = 10;
    o.mode = mode;
    o.profile = true;
    Result r = run_with(sinter::test::test_model_so(), o);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_CONTAINS(r.out, "profile: GPU time per launch");
    EXPECT_CONTAINS(r.out, "gemm    gemm");
    EXPECT_CONTAINS(r.out, "kernel  relu_scale");
    EXPECT_CONTAINS(r.out, "Relu_0,Mul_0");
    EXPECT_CONTAINS(r.out, "  total ");
    std::cout << r.out;
  }
}

// --entry (ABI 1.2): the state model's two entries, by name.
std::string state_so() {
  return sinter::test::test_path("SINTER_TEST_STATE_MODEL_SO", SINTER_TEST_STATE_MODEL_SO);
}

TEST(RunCommand, EntryWithoutGpuSaysNoDevice) {
  SKIP_WITH_GPU("a CUDA device is present");
  SinterRunOptions o;
  o.entry = "read";
  Result r = run_with(state_so(), o);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "no CUDA device");
}

TEST(RunCommand, RunsTheNamedEntry) {
  SKIP_WITHOUT_GPU();
  for (const char *mode : {"direct", "graph"}) {
    SinterRunOptions o;
    o.iterations = 10;
    o.mode = mode;
    o.entry = "read";
    Result r = run_with(state_so(), o);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_CONTAINS(r.out, "entries: 2 (write, read); running 'read'");
    EXPECT_CONTAINS(r.out, "state: 512 bytes");
    EXPECT_CONTAINS(r.out, "output calls i32[1]");
    EXPECT_CONTAINS(r.out, "output y f32[4x16]");
    EXPECT_CONTAINS(r.out, "launches: 2");
    std::cout << r.out;
  }
}

TEST(RunCommand, DefaultEntryIsTheFirst) {
  SKIP_WITHOUT_GPU();
  SinterRunOptions o;
  o.iterations = 10;
  Result r = run_with(state_so(), o);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "running 'write'");
  EXPECT_CONTAINS(r.out, "input  x f32[4x8]");
  EXPECT_CONTAINS(r.out, "launches: 1");
}

TEST(RunCommand, SingleEntryModelIsMain) {
  SKIP_WITHOUT_GPU();
  SinterRunOptions o;
  o.iterations = 10;
  o.entry = "main";
  Result r = run_with(sinter::test::test_model_so(), o);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "entries: 1 (main); running 'main'");
  EXPECT_CONTAINS(r.out, "state: 0 bytes");
  EXPECT_CONTAINS(r.out, "launches: 3");
}

TEST(RunCommand, UnknownEntryListsTheEntries) {
  SKIP_WITHOUT_GPU();
  SinterRunOptions o;
  o.entry = "decode";
  Result r = run_with(state_so(), o);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "no entry 'decode': the model's entries are 'write', 'read'");
}

TEST(RunCommand, ProfileCoversTheChosenEntry) {
  SKIP_WITHOUT_GPU();
  SinterRunOptions o;
  o.iterations = 2;
  o.profile = true;
  o.entry = "read";
  Result r = run_with(state_so(), o);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "kernel  copy_state");
  EXPECT_CONTAINS(r.out, "MatMul_acc");
  EXPECT_EQ(r.out.find("accumulate"), std::string::npos);
  o.entry = "write";
  r = run_with(state_so(), o);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "kernel  accumulate");
}

} // namespace
