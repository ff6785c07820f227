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

// Test-local FNV-1a 64 (independent of the runtime's) used to fill in the checksum.
uint64_t reference_fnv1a64(const void *data, uint64_t size);

// Owns shapes/strides for DLTensors built to match a sinter_tensor_info.
struct TensorSet {
  std::vector<DLTensor> tensors;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<int64_t>> strides;
};

// Well-formed CUDA tensors (device 0, 256-aligned fake addresses, compact strides) for the infos.
TensorSet make_tensors(const sinter_tensor_info *infos, uint32_t count, bool with_strides);

} // namespace sinter::test
