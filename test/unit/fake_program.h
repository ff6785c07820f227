// A hand-written program standing in for generated code: the unit tests link it instead of a
// compiled model, so the runtime's host logic runs without nvcc or a GPU.
#pragma once

#include "sinter/program.h"
#include "sinter/sinter.h"

#include <cstdint>
#include <vector>

namespace sinter::test {

// inputs:  x f32[2,4], ids i64[2];  outputs: y f32[2,8]
// launch 0: gemm  arena[0:64) = x @ W(weights[0:128)) + bias(weights[128:160)), strict f32
// launch 1: kernel fake_kernel(arena, ids, y)  (a host function; never launched on the CPU)
// The program is mutable so that tests can break one field and restore it (FakeProgramTest).
sinter_program &fake_program();
// A fresh, valid copy of the fake program's launches, for tests that corrupt them.
std::vector<sinter_launch_desc> fake_launches();

// Test-local weight checksum (xxHash's one-shot XXH3-64 called directly, not the runtime's
// checksum.cpp) used to fill in the checksums.
uint64_t reference_checksum(const void *data, uint64_t size);

// Owns shapes/strides for DLTensors built to match a sinter_tensor_info.
struct TensorSet {
  std::vector<DLTensor> tensors;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<int64_t>> strides;
};

// Well-formed CUDA tensors (device 0, 256-aligned fake addresses, compact strides) for the infos.
TensorSet make_tensors(const sinter_tensor_info *infos, uint32_t count, bool with_strides);

} // namespace sinter::test

namespace sinter::test {

// A two-entry program with a state block, for the entry and state table checks (CPU only; its
// kernels are fake_kernel, never launched). Every table lives in the object, so a test corrupts
// one element of a copy-free instance and calls check_program(sp.program).
//   state (512 bytes): "acc" f32[2,4] at 0, ".steps" i32[1] at 256
//   entry 0 "write" (also the legacy fields): input x f32[2,4]
//       launch 0: kernel fake_kernel(x, state acc, state .steps)
//   entry 1 "read": output y f32[2,4]
//       launch 0: kernel fake_kernel(state acc, y)
//       launch 1: gemm y = acc @ W, W f32[4,4] = weights[0:64) (the fake program's blob)
struct StateProgram {
  StateProgram();
  StateProgram(const StateProgram &) = delete;
  StateProgram &operator=(const StateProgram &) = delete;

  std::vector<sinter_state_info> states;
  std::vector<sinter_buffer_ref> write_buffers, read_buffers;
  std::vector<sinter_launch_desc> write_launches, read_launches;
  std::vector<sinter_entry> entries;
  sinter_program program{};
};

} // namespace sinter::test
