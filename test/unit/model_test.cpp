// Model loading (ABI check, program checks, checksum, no device), queries, null handles.
#include "checksum.h"
#include "fake_program.h"
#include "model.h"
#include "test_util.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

using sinter::rt::check_program;
using sinter::rt::load_model;
using sinter::test::fake_launches;
using sinter::test::fake_program;
using sinter::test::reference_checksum;

namespace {

TEST(Checksum, MatchesTheReferenceAtEverySize) {
  // Sizes around XXH3's stripe and block boundaries, with bytes that differ everywhere.
  std::vector<unsigned char> data(1000);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<unsigned char>(i * 131 + 7);
  for (uint64_t n : {0, 1, 7, 8, 63, 64, 65, 127, 128, 129, 999, 1000})
    EXPECT_EQ(sinter::checksum::of(data.data(), n), reference_checksum(data.data(), n)) << n;
  // An empty blob may come without a pointer (fuzz/regressions/program/empty-blob-checksum).
  EXPECT_EQ(sinter::checksum::of(nullptr, 0), reference_checksum(data.data(), 0));
  const sinter_program &p = fake_program();
  EXPECT_EQ(sinter::checksum::of(p.weights, p.weight_bytes), p.weights_checksum);
}

TEST(Checksum, PiecesGiveTheWholeChecksum) {
  std::vector<unsigned char> data(777);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<unsigned char>(i ^ (i >> 3));
  const uint64_t whole = sinter::checksum::of(data.data(), data.size());
  for (uint64_t piece : {1, 3, 63, 64, 65, 200}) {
    sinter::checksum::Hasher h;
    for (uint64_t at = 0; at < data.size(); at += piece)
      h.update(data.data() + at, std::min<uint64_t>(piece, data.size() - at));
    EXPECT_EQ(h.finish(), whole) << piece;
  }
}

TEST(Checksum, SeesOneFlippedBitAndSwappedBlocks) {
  std::vector<unsigned char> data(256, 0x5a);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<unsigned char>(i);
  const uint64_t base = sinter::checksum::of(data.data(), data.size());
  for (size_t byte : {0, 9, 64, 255}) {
    std::vector<unsigned char> flipped = data;
    flipped[byte] ^= 0x80;
    EXPECT_NE(sinter::checksum::of(flipped.data(), flipped.size()), base) << byte;
  }
  std::vector<unsigned char> swapped = data;
  std::swap_ranges(swapped.begin(), swapped.begin() + 64, swapped.begin() + 64);
  EXPECT_NE(sinter::checksum::of(swapped.data(), swapped.size()), base);
}

TEST(ModelLoad, NullOut) {
  EXPECT_EQ(sinter_model_load(SINTER_ABI_VERSION_MAJOR, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("out is null");
}

TEST(ModelLoad, AbiMajorMismatch) {
  sinter_model *m = reinterpret_cast<sinter_model *>(0x1);
  EXPECT_EQ(sinter_model_load(SINTER_ABI_VERSION_MAJOR + 1, &m), SINTER_ABI_MISMATCH);
  EXPECT_EQ(m, nullptr);
  EXPECT_LAST_ERROR_CONTAINS("caller expects sinter ABI major 2, library has 1.4");
}

TEST(ModelLoad, NoProgram) {
  sinter_model *m = nullptr;
  EXPECT_EQ(load_model(nullptr, SINTER_ABI_VERSION_MAJOR, &m), SINTER_INTERNAL);
  EXPECT_LAST_ERROR_CONTAINS("no program");
}

TEST(ModelLoad, ProgramVersionMismatch) {
  sinter_program p = fake_program();
  p.version = SINTER_PROGRAM_VERSION + 1;
  sinter_model *m = nullptr;
  EXPECT_EQ(load_model(&p, SINTER_ABI_VERSION_MAJOR, &m), SINTER_ABI_MISMATCH);
  EXPECT_LAST_ERROR_CONTAINS("program version 2, runtime expects 1");
}

// Runs everywhere: the checksum is verified before any CUDA call, so a GPU does not change it.
TEST(ModelLoad, ChecksumMismatchIsCorruptWeights) {
  sinter_program p = fake_program();
  std::vector<unsigned char> weights(p.weights, p.weights + p.weight_bytes);
  weights[17] ^= 0x40; // one flipped bit
  p.weights = weights.data();
  sinter_model *m = nullptr;
  EXPECT_EQ(load_model(&p, SINTER_ABI_VERSION_MAJOR, &m), SINTER_CORRUPT_WEIGHTS);
  EXPECT_EQ(m, nullptr);
  EXPECT_LAST_ERROR_CONTAINS("weights checksum mismatch");
  EXPECT_LAST_ERROR_CONTAINS("over 160 bytes");
}

TEST(ModelLoad, ChecksumFieldMismatchIsCorruptWeights) {
  sinter_program p = fake_program();
  p.weights_checksum ^= 1;
  sinter_model *m = nullptr;
  EXPECT_EQ(load_model(&p, SINTER_ABI_VERSION_MAJOR, &m), SINTER_CORRUPT_WEIGHTS);
}

TEST(ModelLoad, WithoutGpuIsNoDevice) {
  SKIP_WITH_GPU("a CUDA device is present; NO_DEVICE cannot be observed");
  sinter_model *m = nullptr;
  EXPECT_EQ(sinter_model_load(SINTER_ABI_VERSION_MAJOR, &m), SINTER_NO_DEVICE);
  EXPECT_EQ(m, nullptr);
  EXPECT_LAST_ERROR_CONTAINS("no CUDA device");
}

TEST(ModelLoad, WithGpuSucceeds) {
  SKIP_WITHOUT_GPU();
  sinter_model *m = nullptr;
  ASSERT_EQ(sinter_model_load(SINTER_ABI_VERSION_MAJOR, &m), SINTER_OK) << sinter_last_error();
  EXPECT_EQ(sinter_model_num_inputs(m), 2u);
  EXPECT_EQ(sinter_model_destroy(m), SINTER_OK);
}

// Each case breaks one thing in a copy of the fake program; check_program must name it.
struct BadProgram {
  const char *what;
  void (*corrupt)(sinter_program &p, std::vector<sinter_launch_desc> &l);
  const char *message;
};

const sinter_tensor_info kBadRank[] = {{"x", SINTER_DTYPE_F32, 9, {1}}};
const sinter_tensor_info kBadDim[] = {{"x", SINTER_DTYPE_F32, 2, {2, -1}}};
const sinter_tensor_info kBadDtype[] = {{"x", 12345, 1, {2}}};
const sinter_tensor_info kNoName[] = {{nullptr, SINTER_DTYPE_F32, 1, {2}}};
// 2^32 x 2^32 f32: 2^66 bytes, which wraps to 0 in 64 bits.
const sinter_tensor_info kHugeBytes[] = {
    {"x", SINTER_DTYPE_F32, 2, {int64_t(1) << 32, int64_t(1) << 32}}};

const BadProgram kBadPrograms[] = {
    {"rank", [](sinter_program &p, auto &) { p.num_inputs = 1; p.inputs = kBadRank; },
     "input 'x' has rank 9"},
    {"dim", [](sinter_program &p, auto &) { p.num_inputs = 1; p.inputs = kBadDim; },
     "input 'x' has dimension 1 of size -1"},
    {"dtype", [](sinter_program &p, auto &) { p.num_inputs = 1; p.inputs = kBadDtype; },
     "input 'x' has unknown dtype 12345"},
    {"name", [](sinter_program &p, auto &) { p.num_outputs = 1; p.outputs = kNoName; },
     "output 0 has no name"},
    {"null weights", [](sinter_program &p, auto &) { p.weights = nullptr; },
     "160 weight bytes but no weights"},
    {"null launches", [](sinter_program &p, auto &) { p.launches = nullptr; },
     "launches are null"},
    {"kind", [](sinter_program &, auto &l) { l[1].kind = 7; }, "launch 1 has kind 7"},
    {"gemm dims", [](sinter_program &, auto &l) { l[0].gemm.k = 0; }, "launch 0 gemm has m=2 n=8 k=0"},
    {"gemm dtype", [](sinter_program &, auto &l) { l[0].gemm.dtype = SINTER_DTYPE_I64; },
     "launch 0 gemm has dtype 64"},
    {"precision", [](sinter_program &, auto &l) { l[0].gemm.precision = 3; },
     "launch 0 gemm has precision 3"},
    {"tf32 bf16",
     [](sinter_program &, auto &l) {
       l[0].gemm.dtype = SINTER_DTYPE_BF16;
       l[0].gemm.precision = SINTER_PRECISION_TF32;
     },
     "launch 0 gemm asks tf32 for a dtype other than f32"},
    {"c in weights", [](sinter_program &, auto &l) { l[0].gemm.c = {SINTER_BUFFER_WEIGHTS, 0, 0}; },
     "launch 0 writes c into the weights"},
    {"arena overflow", [](sinter_program &p, auto &) { p.arena_bytes = 63; },
     "launch 0 c spans bytes [0, 64) of a 63-byte buffer"},
    {"weights overflow", [](sinter_program &, auto &l) { l[0].gemm.bias.offset = 132; },
     "launch 0 bias spans bytes [132, 164) of a 160-byte buffer"},
    {"input index", [](sinter_program &, auto &l) { l[0].gemm.a.index = 2; },
     "launch 0 a names input 2 of 2"},
    {"input too small", [](sinter_program &, auto &l) { l[0].gemm.m = 3; },
     "launch 0 a spans bytes [0, 48) of a 32-byte buffer"},
    {"space", [](sinter_program &, auto &l) { l[0].gemm.b.space = 9; },
     "launch 0 b has buffer space 9"},
    {"no function", [](sinter_program &, auto &l) { l[1].kernel.function = nullptr; },
     "launch 1 kernel has no function"},
    {"empty grid", [](sinter_program &, auto &l) { l[1].kernel.grid[2] = 0; },
     "launch 1 kernel has an empty grid/block"},
    {"null buffers", [](sinter_program &, auto &l) { l[1].kernel.buffers = nullptr; },
     "launch 1 kernel buffers are null"},
    {"output index",
     [](sinter_program &p, auto &) { p.num_outputs = 0; },
     "launch 1 buffer names output 0 of 0"},
    // Found by sinter-program-fuzz: k*n*4 = 2^66 bytes wrapped to 0 and b passed its bounds
    // check, so cuBLASLt would have read far past the weights.
    {"gemm size wraps", [](sinter_program &, auto &l) { l[0].gemm.n = int64_t(1) << 62; },
     "launch 0 gemm m=2 n=4611686018427387904 k=4 overflows 64-bit sizes"},
    {"tensor size wraps", [](sinter_program &p, auto &) { p.num_inputs = 1; p.inputs = kHugeBytes; },
     "input 'x' has a byte size past 2^63"},
};

void PrintTo(const BadProgram &b, std::ostream *os) { *os << b.what; }

class BadProgramTest : public ::testing::TestWithParam<BadProgram> {};

TEST_P(BadProgramTest, IsRejectedBeforeTheDevice) {
  sinter_program p = fake_program();
  std::vector<sinter_launch_desc> launches = fake_launches();
  p.launches = launches.data();
  ASSERT_EQ(check_program(p), SINTER_OK) << sinter_last_error();
  GetParam().corrupt(p, launches);
  EXPECT_EQ(check_program(p), SINTER_INTERNAL);
  EXPECT_LAST_ERROR_CONTAINS(std::string("malformed program: ") + GetParam().message);
  sinter_model *m = nullptr;
  EXPECT_EQ(load_model(&p, SINTER_ABI_VERSION_MAJOR, &m), SINTER_INTERNAL);
  EXPECT_EQ(m, nullptr);
}

INSTANTIATE_TEST_SUITE_P(All, BadProgramTest, ::testing::ValuesIn(kBadPrograms),
                         [](const ::testing::TestParamInfo<BadProgram> &info) {
                           std::string name = info.param.what;
                           for (char &c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// A model built by hand (no device memory) exercises the queries without a GPU.
class ModelQueryTest : public ::testing::Test {
protected:
  void SetUp() override {
    model.program = &fake_program();
    sinter::rt::init_entries(model);
  }
  sinter_model model;
};

TEST_F(ModelQueryTest, Counts) {
  EXPECT_EQ(sinter_model_num_inputs(&model), 2u);
  EXPECT_EQ(sinter_model_num_outputs(&model), 1u);
  EXPECT_EQ(sinter_model_arena_bytes(&model), 64u);
  EXPECT_EQ(sinter_model_num_launches(&model), 2u);
}

TEST_F(ModelQueryTest, InputAndOutputInfo) {
  sinter_tensor_desc d;
  std::memset(&d, 0xff, sizeof d);
  ASSERT_EQ(sinter_model_input_info(&model, 1, &d), SINTER_OK);
  EXPECT_STREQ(d.name, "ids");
  EXPECT_EQ(d.dtype.code, kDLInt);
  EXPECT_EQ(d.dtype.bits, 64);
  EXPECT_EQ(d.dtype.lanes, 1);
  EXPECT_EQ(d.ndim, 1);
  EXPECT_EQ(d.shape[0], 2);
  EXPECT_EQ(d.shape[1], 0); // unused entries are zeroed
  ASSERT_EQ(sinter_model_output_info(&model, 0, &d), SINTER_OK);
  EXPECT_STREQ(d.name, "y");
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 32);
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.shape[0], 2);
  EXPECT_EQ(d.shape[1], 8);
}

TEST_F(ModelQueryTest, IndexOutOfRange) {
  sinter_tensor_desc d;
  EXPECT_EQ(sinter_model_input_info(&model, 2, &d), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("input index 2 out of range: the model has 2 inputs");
  EXPECT_EQ(sinter_model_output_info(&model, 1, &d), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("output index 1 out of range: the model has 1 outputs");
}

TEST_F(ModelQueryTest, NullOut) {
  EXPECT_EQ(sinter_model_input_info(&model, 0, nullptr), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_input_info: out is null");
}

TEST_F(ModelQueryTest, DestroyRefusedWhileContextsExist) {
  auto *m = new sinter_model;
  m->program = &fake_program();
  m->num_contexts = 1;
  EXPECT_EQ(sinter_model_destroy(m), SINTER_BUSY);
  EXPECT_LAST_ERROR_CONTAINS("1 contexts still use the model");
  m->num_contexts = 0;
  EXPECT_EQ(sinter_model_destroy(m), SINTER_OK); // no weights: no CUDA call
}

TEST(NullHandles, ModelFunctions) {
  EXPECT_EQ(sinter_model_destroy(nullptr), SINTER_OK);
  EXPECT_EQ(sinter_model_num_inputs(nullptr), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_num_inputs: model is null");
  EXPECT_EQ(sinter_model_num_outputs(nullptr), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_num_outputs: model is null");
  EXPECT_EQ(sinter_model_arena_bytes(nullptr), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_arena_bytes: model is null");
  EXPECT_EQ(sinter_model_num_launches(nullptr), 0u);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_num_launches: model is null");
  sinter_tensor_desc d;
  EXPECT_EQ(sinter_model_input_info(nullptr, 0, &d), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_input_info: model is null");
  EXPECT_EQ(sinter_model_output_info(nullptr, 0, &d), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_model_output_info: model is null");
}

} // namespace
