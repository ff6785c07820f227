// The loaded model: program description plus device copy of the weights.
#pragma once

#include "validate.h"

#include <atomic>

struct sinter_model {
  const sinter_program *program = nullptr;
  int device = 0;
  void *weights = nullptr; // device copy of program->weights, read-only
  sinter::rt::IoExpect io;
  std::atomic<uint32_t> num_contexts{0}; // destroy refuses while contexts use the model
};

namespace sinter::rt {

// FNV-1a 64 over `size` bytes (the checksum program.h specifies).
uint64_t fnv1a64(const void *data, uint64_t size);

// Structural checks of a program (versions aside): tensor infos, launch kinds, GEMM problems and
// that every buffer reference lies inside its arena / weights / I/O tensor. INTERNAL on failure.
sinter_status check_program(const sinter_program &program);

// Everything sinter_model_load does, for an explicit program (tests pass their own). Checks run
// in this order, all before the first CUDA call: out, ABI major, program version, structure,
// weight checksum; then device presence and the weight upload.
sinter_status load_model(const sinter_program *program, uint32_t expected_abi_major,
                         sinter_model **out);

} // namespace sinter::rt
