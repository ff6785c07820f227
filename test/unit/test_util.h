// Small assertion helpers shared by the runtime tests (no gmock dependency).
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>

namespace sinter::test {

inline ::testing::AssertionResult contains(const char *hay_expr, const char *needle_expr,
                                           const std::string &hay, const std::string &needle) {
  if (hay.find(needle) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << hay_expr << " (\"" << hay << "\") does not contain "
                                       << needle_expr << " (\"" << needle << "\")";
}

// Whether this machine has a usable CUDA device (tests needing one GTEST_SKIP otherwise).
inline bool has_gpu() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  return ok;
}

// A test model .so built by CMake; the variable `env` overrides the path (for running a copied
// build tree elsewhere, e.g. on a GPU machine).
inline std::string test_path(const char *env, const char *built) {
  const char *value = std::getenv(env);
  return value && *value ? value : built;
}
inline std::string test_model_so() {
  return test_path("SINTER_TEST_MODEL_SO", SINTER_TEST_MODEL_SO);
}

} // namespace sinter::test

#define EXPECT_CONTAINS(hay, needle) EXPECT_PRED_FORMAT2(::sinter::test::contains, hay, needle)
#define EXPECT_LAST_ERROR_CONTAINS(needle) EXPECT_CONTAINS(std::string(sinter_last_error()), needle)
#define SKIP_WITHOUT_GPU()                                                                        \
  do {                                                                                            \
    if (!::sinter::test::has_gpu())                                                               \
      GTEST_SKIP() << "needs a CUDA device (none found)";                                         \
  } while (0)
#define SKIP_WITH_GPU(why)                                                                        \
  do {                                                                                            \
    if (::sinter::test::has_gpu())                                                                \
      GTEST_SKIP() << why;                                                                        \
  } while (0)
