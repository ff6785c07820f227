// sinter_context: everything a run needs, resolved at creation so the run path only patches
// I/O pointers and issues launches.
#pragma once

#include "gemm.h"
#include "launch_params.h"
#include "model.h"

#include <cuda.h> // driver API types only: the functions come from cudaGetDriverEntryPoint*
#include <cudaTypedefs.h>

#include <atomic>
#include <vector>

namespace sinter::rt {

struct KernelStep {
  const void *function = nullptr;
  dim3 grid, block;
  unsigned shared_bytes = 0;
  void **args = nullptr; // cudaLaunchKernel's argument array: args[i] == &values[i]
  // Programmatic dependent launch: set when PDL is enabled for the context and the previous
  // launch is a kernel (never after a cuBLASLt GEMM, never for the first launch of a run).
  bool pdl = false;
  // Driver-API launch, prepared at context creation: the kernel's CUfunction (null when the
  // driver path is unavailable) and its launch configuration (hStream is set per launch;
  // attrs points at the context's PDL attribute, numAttrs = pdl).
  CUfunction cu_function = nullptr;
  CUlaunchConfig config{};
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

// Driver entry points, resolved once per process through cudaGetDriverEntryPointByVersion (the
// .so never links libcuda; the CUDA runtime has loaded it). Null when unavailable: every launch
// then goes through the runtime API as before.
struct DriverApi {
  PFN_cuLaunchKernelEx_v11060 launch_kernel_ex = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
  bool ok() const { return launch_kernel_ex && ctx_get_current; }
};
const DriverApi &driver_api();

// Programmatic dependent launch switch: the environment variable SINTER_PDL, read at context
// creation. "0", "off", "false" or "no" turn it off; unset or anything else leaves it on where
// the device supports it (compute capability 9.0 or newer).
constexpr const char *kPdlEnv = "SINTER_PDL";
bool pdl_requested(const char *env_value);

// Marks which kernel steps are launched with programmatic stream serialization: those whose
// previous step is a kernel, when `enabled`; none otherwise.
void plan_pdl(const std::vector<Step> &steps, std::vector<KernelStep> &kernels, bool enabled);

// Everything one entry point needs at run time, resolved at context creation so the run path
// only patches I/O pointers and issues launches. Steps and launches of the entry are 1:1.
struct EntryPlan {
  // Sized once at creation; their addresses are baked into args and patches, so never resized.
  std::vector<void *> arg_values;
  std::vector<void *> arg_pointers;
  std::vector<KernelStep> kernels;
  std::vector<GemmPlan> gemms;
  std::vector<Step> steps;
  std::vector<IoPatch> patches;

  // Last I/O addresses confirmed to be device memory (cudaPointerGetAttributes is asked only
  // when an address changes).
  std::vector<const void *> checked_inputs, checked_outputs;

  // Graph mode: the entry's own graph, built at its first run.
  std::vector<uint8_t> step_dirty;
  std::vector<cudaGraphNode_t> nodes; // one per step
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

// Holds a context's busy flag for a scope (every return path clears it): the run path's
// "one thread at a time" rule, answered with SINTER_BUSY instead of a race.
class BusyGuard {
public:
  explicit BusyGuard(std::atomic<bool> &flag) : flag_(flag) {
    acquired_ = !flag_.exchange(true, std::memory_order_acquire);
  }
  ~BusyGuard() {
    if (acquired_) flag_.store(false, std::memory_order_release);
  }
  BusyGuard(const BusyGuard &) = delete;
  BusyGuard &operator=(const BusyGuard &) = delete;
  bool acquired() const { return acquired_; }

private:
  std::atomic<bool> &flag_;
  bool acquired_;
};

} // namespace sinter::rt

struct sinter_context {
  sinter_model *model = nullptr;
  int mode = SINTER_MODE_DIRECT;
  std::atomic<bool> busy{false};

  void *arena = nullptr;     // shared by every entry (they never run concurrently)
  void *state = nullptr;     // program.state_bytes, zeroed at creation and by reset_state
  void *workspace = nullptr; // cuBLASLt's, shared by every entry's GEMMs
  cublasLtHandle_t lt = nullptr;
  cudaStream_t own_stream = nullptr; // algorithm timing and graph capture, never the caller's

  // One per model entry (same order), sized once at creation.
  std::vector<sinter::rt::EntryPlan> entries;

  // Launch path, fixed at creation. pdl: some kernel steps carry the PDL attribute (direct
  // mode) / programmatic edges (graph mode). driver: every kernel of every entry has a
  // CUfunction, launched with cuLaunchKernelEx while cu_context (the context current at
  // creation) is current.
  bool pdl = false;
  bool driver = false;
  CUcontext cu_context = nullptr;
  CUlaunchAttribute pdl_attribute{}; // programmaticStreamSerializationAllowed = 1
  // --sample libraries: the parameters last set (sampling.cpp), written again into the state
  // after every reset_state.
  bool sampling_set = false;
  sinter::kernels::SamplingState sampling{};
};

namespace sinter::rt {

// Sampling (sampling.cpp). The state region holding the sampler's parameters
// (sinter::kernels::kSamplingStateRegion); null when the program has none.
const sinter_state_info *sampling_region(const sinter_program &program);
// INVALID_ARGUMENT naming the first parameter out of range (or a null or too small struct).
sinter_status check_sampling_params(const sinter_sampling_params *params);
// Writes ctx.sampling into the state block on `stream` when parameters were set.
sinter_status upload_sampling(sinter_context &ctx, cudaStream_t stream);

// Issues step `index` (== launch index) of entry `entry` on `stream`. driver: launch kernels
// with cuLaunchKernelEx (the caller checked that ctx.cu_context is current); pdl: honour the
// steps' PDL flags (false while profiling: events sit between the launches).
sinter_status enqueue_step(sinter_context &ctx, uint32_t entry, uint32_t index,
                           cudaStream_t stream, bool driver, bool pdl);
// Graph mode (graph.cpp): builds the entry's graph at its first run, pushes changed I/O
// pointers (any_dirty) into it, and launches it on `stream`.
sinter_status run_graph(sinter_context &ctx, EntryPlan &plan, bool any_dirty,
                        cudaStream_t stream);
void release_graph(EntryPlan &plan);
} // namespace sinter::rt
