// sinter_context: everything a run needs, resolved at creation so the run path only patches
// I/O pointers and issues launches.
#pragma once

#include "gemm.h"
#include "model.h"

#include <atomic>
#include <vector>

namespace sinter::rt {

struct KernelStep {
  const void *function = nullptr;
  dim3 grid, block;
  unsigned shared_bytes = 0;
  void **args = nullptr; // cudaLaunchKernel's argument array: args[i] == &values[i]
};

enum class StepKind : uint8_t { Kernel, Gemm };

struct Step {
  StepKind kind;
  uint32_t index; // into kernels or gemms
};

// One pointer slot (a kernel argument value or a GEMM operand) that refers to an I/O tensor.
struct IoPatch {
  void **slot;
  uint32_t space; // SINTER_BUFFER_INPUT or SINTER_BUFFER_OUTPUT
  uint32_t index;
  uint64_t offset;
  uint32_t step; // which step to mark dirty for the graph update
};

constexpr size_t kWorkspaceBytes = 32u << 20;

} // namespace sinter::rt

struct sinter_context {
  sinter_model *model = nullptr;
  int mode = SINTER_MODE_DIRECT;
  std::atomic<bool> busy{false};

  void *arena = nullptr;
  void *workspace = nullptr;
  cublasLtHandle_t lt = nullptr;
  cudaStream_t own_stream = nullptr; // algorithm timing and graph capture, never the caller's

  // Sized once at creation; their addresses are baked into args and patches, so never resized.
  std::vector<void *> arg_values;
  std::vector<void *> arg_pointers;
  std::vector<sinter::rt::KernelStep> kernels;
  std::vector<sinter::rt::GemmPlan> gemms;
  std::vector<sinter::rt::Step> steps;
  std::vector<sinter::rt::IoPatch> patches;

  // Last I/O addresses confirmed to be device memory (cudaPointerGetAttributes is asked only
  // when an address changes).
  std::vector<const void *> checked_inputs, checked_outputs;

  // Graph mode.
  std::vector<uint8_t> step_dirty;
  std::vector<cudaGraphNode_t> nodes; // one per step
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

namespace sinter::rt {
// Issues step `index` (== launch index) on `stream`.
sinter_status enqueue_step(sinter_context &ctx, uint32_t index, cudaStream_t stream);
void release_graph(sinter_context &ctx);
} // namespace sinter::rt
