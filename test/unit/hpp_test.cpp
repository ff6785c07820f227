// The C++ RAII wrapper: errors become sinter::Error with status and message.
#include "test_util.h"

#include "sinter/sinter.hpp"

namespace {

TEST(Hpp, CheckThrowsWithStatusAndMessage) {
  EXPECT_NO_THROW(sinter::check(SINTER_OK));
  (void)sinter_run(nullptr, nullptr, 0, nullptr, 0, nullptr);
  try {
    sinter::check(SINTER_INVALID_ARGUMENT);
    FAIL() << "no exception";
  } catch (const sinter::Error &e) {
    EXPECT_EQ(e.status(), SINTER_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), "SINTER_INVALID_ARGUMENT: sinter_run: context is null");
  }
}

TEST(Hpp, LoadWithoutGpuThrowsNoDevice) {
  SKIP_WITH_GPU("a CUDA device is present");
  try {
    sinter::Model model = sinter::Model::load();
    FAIL() << "no exception";
  } catch (const sinter::Error &e) {
    EXPECT_EQ(e.status(), SINTER_NO_DEVICE);
    EXPECT_CONTAINS(std::string(e.what()), "no CUDA device");
  }
}

TEST(Hpp, LoadAndQueryWithGpu) {
  SKIP_WITHOUT_GPU();
  sinter::Model model = sinter::Model::load(); // the unit tests' fake program
  EXPECT_EQ(model.num_inputs(), 2u);
  EXPECT_STREQ(model.input(1).name, "ids");
  EXPECT_THROW(model.output(5), sinter::Error);
  sinter::Model moved = std::move(model);
  EXPECT_EQ(model.get(), nullptr);
  EXPECT_NE(moved.get(), nullptr);
}

} // namespace
