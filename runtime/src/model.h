// The loaded model: program description plus device copy of the weights.
#pragma once

#include "gemm.h" // GemmChoice
#include "validate.h"

#include <cublasLt.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace sinter::rt {

// One entry point of a loaded model: its description, what its I/O must look like, and the
// cuBLASLt algorithm of each of its GEMM launches.
struct ModelEntry {
  sinter_entry desc{};
  IoExpect io;
  // Chosen (by timing) by the first context that needs it and reused by every later one, so
  // all contexts of a model compute bit-identical results. Guarded by sinter_model::algo_mutex.
  std::vector<uint8_t> algo_chosen;        // per launch of the entry
  std::vector<GemmChoice> algos;           // per launch of the entry
};

} // namespace sinter::rt

struct sinter_model {
  const sinter_program *program = nullptr;
  int device = 0;
  void *weights = nullptr; // device copy of the weight blob (embedded or from a file), read-only
  bool weights_from_file = false;
  std::vector<sinter::rt::ModelEntry> entries; // >= 1 (init_entries); entries[0] is sinter_run's
  std::atomic<uint32_t> num_contexts{0}; // destroy refuses while contexts use the model
  std::mutex algo_mutex;                 // guards every entry's algorithm choice
};

namespace sinter::rt {


// Structural checks of a program (versions aside): tensor infos, launch kinds, GEMM problems,
// that every buffer reference lies inside its arena / weights / state / I/O tensor (of its
// entry), the entry table, the state table and the weight table. INTERNAL on failure.
sinter_status check_program(const sinter_program &program);

// The state table (state_table.cpp): regions inside state_bytes, sized by their shape,
// 256-byte aligned, disjoint, uniquely named. INTERNAL on failure.
sinter_status check_state_table(const sinter_program &program);

// Derives model.entries from model.program (which check_program accepted): descriptions, I/O
// expectations, empty algorithm slots. No CUDA call.
void init_entries(sinter_model &model);

// What sinter_model_load_v2 takes, resolved.
struct LoadOptions {
  const char *weights_path = nullptr; // null: the embedded blob
  bool allow_new_values = false;
};

// Everything sinter_model_load[_v2] does, for an explicit program (tests pass their own). Checks
// run in this order, all before the first CUDA call: out, ABI major, program version, structure,
// then either the embedded blob's checksum, or the weights file's header against the table;
// then device presence and the weight upload (streamed from the file with per-tensor checksums).
sinter_status load_model(const sinter_program *program, uint32_t expected_abi_major,
                         sinter_model **out, const LoadOptions &options = LoadOptions());

} // namespace sinter::rt
