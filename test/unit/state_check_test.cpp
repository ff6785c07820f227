// Load-time checks of the ABI 1.2 tables (CPU only): the state table, STATE buffer refs, and the
// entry table. Each case breaks one thing in a fresh two-entry program (fake_program.h's
// StateProgram); check_program must name it, and the load must refuse before any CUDA call.
#include "fake_program.h"
#include "model.h"
#include "test_util.h"

#include <cctype>
#include <string>

using sinter::rt::check_program;
using sinter::rt::load_model;
using sinter::test::StateProgram;

namespace {

TEST(StateProgramCheck, TheIntactProgramPasses) {
  StateProgram sp;
  EXPECT_EQ(check_program(sp.program), SINTER_OK) << sinter_last_error();
}

TEST(StateProgramCheck, StateRefsAreFreeWithoutAStateTable) {
  // The table describes the block; launches may address it without one.
  StateProgram sp;
  sp.program.num_states = 0;
  sp.program.states = nullptr;
  EXPECT_EQ(check_program(sp.program), SINTER_OK) << sinter_last_error();
}

struct BadTable {
  const char *what;
  void (*corrupt)(StateProgram &sp);
  const char *message;
};

const sinter_tensor_info kBadDtype[] = {{"y", 12345, 1, {2}}};

const BadTable kBadTables[] = {
    // STATE buffer refs, bounded by state_bytes like arena refs by arena_bytes.
    {"kernel state ref past the block", [](StateProgram &sp) { sp.write_buffers[2].offset = 520; },
     "launch 0 buffer spans bytes [520, 520) of a 512-byte state block"},
    {"state block too small", [](StateProgram &sp) { sp.program.state_bytes = 16; },
     "state 'acc' spans bytes [0, 32) of a 16-byte state block"},
    {"gemm state operand past the block",
     [](StateProgram &sp) { sp.read_launches[1].gemm.a.offset = 496; },
     "entry 'read' launch 1 a spans bytes [496, 528) of a 512-byte state block"},
    // The state table.
    {"overlapping states",
     [](StateProgram &sp) { sp.states[1] = {"b", SINTER_DTYPE_F32, 1, {64}, 0, 256}; },
     "states 'acc' [0, 32) and 'b' [0, 256) overlap"},
    {"overlap past the first", [](StateProgram &sp) {
       sp.states[0] = {"acc", SINTER_DTYPE_F32, 1, {96}, 0, 384};
     },
     "states 'acc' [0, 384) and '.steps' [256, 260) overlap"},
    {"bytes differ from shape", [](StateProgram &sp) { sp.states[0].bytes = 36; },
     "state 'acc' has 36 bytes, its dtype and shape make 32"},
    {"misaligned state", [](StateProgram &sp) { sp.states[1].offset = 260; },
     "state '.steps' starts at byte 260, not 256-byte aligned"},
    {"state past the block", [](StateProgram &sp) { sp.states[1].offset = 512; },
     "state '.steps' spans bytes [512, 516) of a 512-byte state block"},
    {"state offset wraps", [](StateProgram &sp) { sp.states[1].offset = ~uint64_t(255); },
     "state '.steps' spans bytes"},
    {"duplicate state names",
     [](StateProgram &sp) {
       sp.states[1].name = "acc";
       sp.states[1].dtype = SINTER_DTYPE_F32;
     },
     "states 0 and 1 are both named 'acc'"},
    {"unnamed state", [](StateProgram &sp) { sp.states[0].name = ""; }, "state 0 has no name"},
    {"state dtype", [](StateProgram &sp) { sp.states[0].dtype = 77; },
     "state 'acc' has unknown dtype 77"},
    {"state dimension", [](StateProgram &sp) { sp.states[0].shape[1] = 0; },
     "state 'acc' has dimension 1 of size 0"},
    {"null state table", [](StateProgram &sp) { sp.program.states = nullptr; },
     "2 states but the state table is null"},
    // The entry table.
    {"entry input index",
     [](StateProgram &sp) {
       sp.read_buffers[0] = {SINTER_BUFFER_INPUT, 0, 0}; // "read" has no inputs
     },
     "entry 'read' launch 0 buffer names input 0 of 0"},
    {"entry output index", [](StateProgram &sp) { sp.read_launches[1].gemm.c.index = 1; },
     "entry 'read' launch 1 c names output 1 of 1"},
    {"entry output too small", [](StateProgram &sp) { sp.read_launches[1].gemm.n = 8; },
     "entry 'read' launch 1 c spans bytes [0, 64) of a 32-byte buffer"},
    {"entry launch kind", [](StateProgram &sp) { sp.read_launches[0].kind = 9; },
     "entry 'read' launch 0 has kind 9"},
    {"entry kernel function",
     [](StateProgram &sp) { sp.read_launches[0].kernel.function = nullptr; },
     "entry 'read' launch 0 kernel has no function"},
    {"entry tensor", [](StateProgram &sp) { sp.entries[1].outputs = kBadDtype; },
     "entry 'read' output 'y' has unknown dtype 12345"},
    {"entry launches null", [](StateProgram &sp) { sp.entries[1].launches = nullptr; },
     "entry 'read' launches are null"},
    {"entry 0 differs from the legacy fields",
     [](StateProgram &sp) { sp.entries[0].launches = sp.read_launches.data(); },
     "entry 0 ('write') differs from the program's single-entry fields"},
    {"legacy launch count differs", [](StateProgram &sp) { sp.program.num_launches = 0; },
     "entry 0 ('write') differs from the program's single-entry fields"},
    {"duplicate entry names", [](StateProgram &sp) { sp.entries[1].name = "write"; },
     "entries 0 and 1 are both named 'write'"},
    {"unnamed entry", [](StateProgram &sp) { sp.entries[1].name = nullptr; },
     "entry 1 has no name"},
    {"empty entry name", [](StateProgram &sp) { sp.entries[0].name = ""; },
     "entry 0 has no name"},
    {"null entry table", [](StateProgram &sp) { sp.program.entries = nullptr; },
     "2 entries but the entry table is null"},
};

void PrintTo(const BadTable &b, std::ostream *os) { *os << b.what; }

class BadTableTest : public ::testing::TestWithParam<BadTable> {};

TEST_P(BadTableTest, IsRejectedBeforeTheDevice) {
  StateProgram sp;
  ASSERT_EQ(check_program(sp.program), SINTER_OK) << sinter_last_error();
  GetParam().corrupt(sp);
  EXPECT_EQ(check_program(sp.program), SINTER_INTERNAL);
  EXPECT_LAST_ERROR_CONTAINS(std::string("malformed program: ") + GetParam().message);
  sinter_model *m = nullptr;
  EXPECT_EQ(load_model(&sp.program, SINTER_ABI_VERSION_MAJOR, &m), SINTER_INTERNAL);
  EXPECT_EQ(m, nullptr);
}

INSTANTIATE_TEST_SUITE_P(All, BadTableTest, ::testing::ValuesIn(kBadTables),
                         [](const ::testing::TestParamInfo<BadTable> &info) {
                           std::string name = info.param.what;
                           for (char &c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

} // namespace
