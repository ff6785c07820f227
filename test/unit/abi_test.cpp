// ABI version, status names, thread-local last error, build info, C compatibility.
#include "fake_program.h"
#include "test_util.h"

#include <string>
#include <thread>

extern "C" int sinter_test_c_header_check(void);

namespace {

TEST(Abi, VersionIsOnePointFour) {
  EXPECT_EQ(sinter_abi_version(), (1u << 16) | 4u);
  EXPECT_EQ(sinter_abi_version() >> 16, SINTER_ABI_VERSION_MAJOR);
  EXPECT_EQ(SINTER_ABI_VERSION_MINOR, 4u);
}

TEST(Abi, HeaderCompilesAsC) { EXPECT_EQ(sinter_test_c_header_check(), 1); }

TEST(Abi, StatusStrings) {
  EXPECT_STREQ(sinter_status_string(SINTER_OK), "SINTER_OK");
  EXPECT_STREQ(sinter_status_string(SINTER_INVALID_ARGUMENT), "SINTER_INVALID_ARGUMENT");
  EXPECT_STREQ(sinter_status_string(SINTER_NO_DEVICE), "SINTER_NO_DEVICE");
  EXPECT_STREQ(sinter_status_string(SINTER_CUDA_ERROR), "SINTER_CUDA_ERROR");
  EXPECT_STREQ(sinter_status_string(SINTER_OUT_OF_MEMORY), "SINTER_OUT_OF_MEMORY");
  EXPECT_STREQ(sinter_status_string(SINTER_ABI_MISMATCH), "SINTER_ABI_MISMATCH");
  EXPECT_STREQ(sinter_status_string(SINTER_CORRUPT_WEIGHTS), "SINTER_CORRUPT_WEIGHTS");
  EXPECT_STREQ(sinter_status_string(SINTER_BUSY), "SINTER_BUSY");
  EXPECT_STREQ(sinter_status_string(SINTER_INTERNAL), "SINTER_INTERNAL");
  EXPECT_STREQ(sinter_status_string(static_cast<sinter_status>(99)), "SINTER_UNKNOWN_STATUS");
}

TEST(Abi, StatusValuesAreStable) {
  // Part of the ABI: bindings (ctypes) hard-code these numbers.
  EXPECT_EQ(SINTER_OK, 0);
  EXPECT_EQ(SINTER_INVALID_ARGUMENT, 1);
  EXPECT_EQ(SINTER_NO_DEVICE, 2);
  EXPECT_EQ(SINTER_CUDA_ERROR, 3);
  EXPECT_EQ(SINTER_OUT_OF_MEMORY, 4);
  EXPECT_EQ(SINTER_ABI_MISMATCH, 5);
  EXPECT_EQ(SINTER_CORRUPT_WEIGHTS, 6);
  EXPECT_EQ(SINTER_BUSY, 7);
  EXPECT_EQ(SINTER_INTERNAL, 8);
}

TEST(LastError, SetByFailureKeptBySuccess) {
  EXPECT_EQ(sinter_model_load(SINTER_ABI_VERSION_MAJOR, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "sinter_model_load: out is null");
  EXPECT_EQ(sinter_model_destroy(nullptr), SINTER_OK);
  EXPECT_STREQ(sinter_last_error(), "sinter_model_load: out is null");
}

TEST(LastError, IsThreadLocal) {
  EXPECT_EQ(sinter_context_destroy(nullptr), SINTER_OK);
  EXPECT_EQ(sinter_run(nullptr, nullptr, 0, nullptr, 0, nullptr), SINTER_INVALID_ARGUMENT);
  const std::string mine = sinter_last_error();
  std::string theirs_before, theirs_after;
  std::thread t([&] {
    theirs_before = sinter_last_error();
    (void)sinter_model_load(SINTER_ABI_VERSION_MAJOR + 1, nullptr);
    theirs_after = sinter_last_error();
  });
  t.join();
  EXPECT_EQ(theirs_before, "");
  EXPECT_EQ(theirs_after, "sinter_model_load: out is null");
  EXPECT_EQ(std::string(sinter_last_error()), mine);
  EXPECT_EQ(mine, "sinter_run: context is null");
}

TEST(BuildInfo, NamesRuntimeAndProgram) {
  const std::string info = sinter_build_info();
  EXPECT_CONTAINS(info, "sinter runtime 1.4");
  EXPECT_CONTAINS(info, "target fake_sm");
  EXPECT_CONTAINS(info, "unit-test program");
}

} // namespace
