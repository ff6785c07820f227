// Every argument error of sinter_run's I/O validation, run on the CPU through validate_io.
#include "fake_program.h"
#include "test_util.h"
#include "validate.h"

#include <gtest/gtest.h>

#include <string>

using sinter::rt::validate_io;
using sinter::test::fake_program;
using sinter::test::make_tensors;
using sinter::test::TensorSet;

namespace {

class ValidateTest : public ::testing::Test {
protected:
  void SetUp() override {
    in = make_tensors(fake_program().inputs, fake_program().num_inputs, true);
    out = make_tensors(fake_program().outputs, fake_program().num_outputs, true);
  }
  sinter_status validate(int device_id = 0) {
    return validate_io(&fake_program(), in.tensors.data(), uint32_t(in.tensors.size()),
                       out.tensors.data(), uint32_t(out.tensors.size()), device_id);
  }
  // Expects INVALID_ARGUMENT with `message` somewhere in sinter_last_error().
  void expect_invalid(const std::string &message, int device_id = 0) {
    EXPECT_EQ(validate(device_id), SINTER_INVALID_ARGUMENT);
    EXPECT_LAST_ERROR_CONTAINS(message);
  }
  DLTensor &x() { return in.tensors[0]; }
  DLTensor &ids() { return in.tensors[1]; }
  DLTensor &y() { return out.tensors[0]; }
  TensorSet in, out;
};

TEST_F(ValidateTest, AcceptsWellFormedTensors) { EXPECT_EQ(validate(), SINTER_OK); }

TEST_F(ValidateTest, AcceptsNullStridesAsCompact) {
  x().strides = nullptr;
  y().strides = nullptr;
  EXPECT_EQ(validate(), SINTER_OK);
}

TEST_F(ValidateTest, AnyDeviceIdWhenNoneIsRequired) {
  x().device.device_id = 3;
  EXPECT_EQ(validate(/*device_id=*/-1), SINTER_OK);
}

TEST_F(ValidateTest, NullProgram) {
  EXPECT_EQ(validate_io(nullptr, nullptr, 0, nullptr, 0, 0), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("program is null");
}

TEST_F(ValidateTest, NullInputArray) {
  EXPECT_EQ(validate_io(&fake_program(), nullptr, 2, out.tensors.data(), 1, 0),
            SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("inputs is null");
}

TEST_F(ValidateTest, NullOutputArray) {
  EXPECT_EQ(validate_io(&fake_program(), in.tensors.data(), 2, nullptr, 1, 0),
            SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("outputs is null");
}

TEST_F(ValidateTest, TooFewInputs) {
  EXPECT_EQ(validate_io(&fake_program(), in.tensors.data(), 1, out.tensors.data(), 1, 0),
            SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "expected 2 inputs, got 1");
}

TEST_F(ValidateTest, TooManyOutputs) {
  EXPECT_EQ(validate_io(&fake_program(), in.tensors.data(), 2, in.tensors.data(), 2, 0),
            SINTER_INVALID_ARGUMENT);
  EXPECT_STREQ(sinter_last_error(), "expected 1 outputs, got 2");
}

TEST_F(ValidateTest, WrongDtype) {
  x().dtype = {kDLInt, 64, 1};
  expect_invalid("input 'x': expected dtype float32, got int64");
}

TEST_F(ValidateTest, WrongDtypeOfIds) {
  ids().dtype = {kDLInt, 32, 1};
  expect_invalid("input 'ids': expected dtype int64, got int32");
}

TEST_F(ValidateTest, VectorLanesAreRejected) {
  x().dtype.lanes = 4;
  expect_invalid("input 'x': expected dtype float32, got (code 2, bits 32, lanes 4)");
}

TEST_F(ValidateTest, WrongOutputDtype) {
  y().dtype = {kDLBfloat, 16, 1};
  expect_invalid("output 'y': expected dtype float32, got bfloat16");
}

TEST_F(ValidateTest, WrongNdim) {
  x().ndim = 3;
  expect_invalid("input 'x': expected 2 dimensions, got 3");
}

TEST_F(ValidateTest, WrongShape) {
  in.shapes[0][1] = 5;
  expect_invalid("input 'x': expected shape [2, 4], got [2, 5]");
}

TEST_F(ValidateTest, WrongOutputShape) {
  out.shapes[0][0] = 1;
  expect_invalid("output 'y': expected shape [2, 8], got [1, 8]");
}

TEST_F(ValidateTest, NullShape) {
  x().shape = nullptr;
  expect_invalid("input 'x': shape is null");
}

TEST_F(ValidateTest, NonContiguousStrides) {
  in.strides[0] = {1, 2}; // column-major
  expect_invalid("input 'x': expected contiguous row-major strides [4, 1], got [1, 2]");
}

TEST_F(ValidateTest, PaddedRowStrides) {
  out.strides[0] = {16, 1};
  expect_invalid("output 'y': expected contiguous row-major strides [8, 1], got [16, 1]");
}

TEST_F(ValidateTest, StrideOfSizeOneDimensionIsIgnored) {
  static const sinter_tensor_info info[] = {{"v", SINTER_DTYPE_F32, 2, {1, 4}}};
  sinter_program p = fake_program();
  p.num_inputs = 1;
  p.inputs = info;
  TensorSet v = make_tensors(info, 1, true);
  v.strides[0][0] = 12345;
  EXPECT_EQ(validate_io(&p, v.tensors.data(), 1, out.tensors.data(), 1, 0), SINTER_OK);
}

TEST_F(ValidateTest, HostDeviceType) {
  x().device.device_type = kDLCPU;
  expect_invalid("input 'x': expected a CUDA device tensor (kDLCUDA = 2), got device type 1");
}

TEST_F(ValidateTest, PinnedHostDeviceType) {
  y().device.device_type = kDLCUDAHost;
  expect_invalid("output 'y': expected a CUDA device tensor");
}

TEST_F(ValidateTest, WrongDeviceId) {
  ids().device.device_id = 1;
  expect_invalid("input 'ids': expected CUDA device 0, got device 1");
}

TEST_F(ValidateTest, NullData) {
  y().data = nullptr;
  expect_invalid("output 'y': data pointer is null");
}

// A tensor with a dimension of 0 holds nothing: frameworks hand it over with a null pointer
// (torch.empty(0).data_ptr() is 0), and no launch reads or writes it.
TEST_F(ValidateTest, EmptyTensorMayHaveNullData) {
  sinter_program program = fake_program();
  sinter_tensor_info empty = program.outputs[0];
  empty.shape[0] = 0;
  program.outputs = &empty;
  program.num_outputs = 1;
  TensorSet none = make_tensors(&empty, 1, true);
  none.tensors[0].data = nullptr;
  EXPECT_EQ(validate_io(&program, in.tensors.data(), uint32_t(in.tensors.size()),
                        none.tensors.data(), 1, 0),
            SINTER_OK);
  // Its shape must still match.
  none.shapes[0][0] = 1;
  EXPECT_EQ(validate_io(&program, in.tensors.data(), uint32_t(in.tensors.size()),
                        none.tensors.data(), 1, 0),
            SINTER_INVALID_ARGUMENT);
}

TEST_F(ValidateTest, MisalignedData) {
  x().data = static_cast<char *>(x().data) + 4;
  expect_invalid("input 'x': expected 16-byte aligned data");
}

TEST_F(ValidateTest, MisalignedByteOffset) {
  ids().byte_offset = 8;
  expect_invalid("input 'ids': expected 16-byte aligned data");
}

TEST_F(ValidateTest, AlignedByteOffsetIsAccepted) {
  ids().byte_offset = 64;
  EXPECT_EQ(validate(), SINTER_OK);
}

TEST_F(ValidateTest, FirstBadTensorIsReported) {
  ids().dtype = {kDLFloat, 32, 1};
  y().ndim = 1;
  expect_invalid("input 'ids'");
}

TEST(DtypeName, NamesAndFallback) {
  char buf[64];
  EXPECT_STREQ(sinter::rt::dtype_name({kDLFloat, 16, 1}, buf, sizeof buf), "float16");
  EXPECT_STREQ(sinter::rt::dtype_name({kDLBfloat, 16, 1}, buf, sizeof buf), "bfloat16");
  EXPECT_STREQ(sinter::rt::dtype_name({6, 8, 1}, buf, sizeof buf), "bool");
  EXPECT_STREQ(sinter::rt::dtype_name({9, 8, 1}, buf, sizeof buf), "(code 9, bits 8, lanes 1)");
}

} // namespace
