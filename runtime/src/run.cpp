// sinter_run[_entry]: validate, patch I/O pointers, issue launches (direct) or replay the
// entry's CUDA graph (graph.cpp).
// Nothing here allocates or formats on the success path.
#include "context.h"

#include "entries.h"
#include "error.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace sinter::rt {
namespace {

// Rejects host (or other-device) memory. Asked only when an address changes since the last
// run, so steady-state runs with the same buffers skip the driver call.
sinter_status check_device_memory(const TensorExpect &e, const DLTensor &t, int device,
                                  const void *&checked) {
  const void *address = tensor_address(t);
  if (address == checked)
    return SINTER_OK;
  cudaPointerAttributes attr{};
  cudaError_t err = cudaPointerGetAttributes(&attr, address);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(SINTER_INVALID_ARGUMENT, "%s '%s': %p is not CUDA memory (%s)", e.role, e.name,
                address, cudaGetErrorName(err));
  }
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    return fail(SINTER_INVALID_ARGUMENT,
                "%s '%s': expected device memory, got %s memory at %p", e.role, e.name,
                attr.type == cudaMemoryTypeHost ? "pinned host" : "host", address);
  if (attr.device != device)
    return fail(SINTER_INVALID_ARGUMENT, "%s '%s': expected memory of CUDA device %d, got device %d",
                e.role, e.name, device, attr.device);
  checked = address;
  return SINTER_OK;
}

// Whether this call may launch kernels through the driver: their CUfunctions belong to the
// CUDA context that was current at creation, so it must be the current one now (it is after
// DeviceGuard unless the caller made another context current, or this thread has not used
// the runtime API yet: the runtime-API path then binds the context as it always did).
bool driver_ready(const sinter_context &ctx) {
  if (!ctx.driver)
    return false;
  CUcontext current = nullptr;
  return driver_api().ctx_get_current(&current) == CUDA_SUCCESS && current == ctx.cu_context;
}

// Validates the tensors against entry `entry`'s I/O and points every I/O slot of its plan at
// them, marking the steps whose pointers changed. Nothing here allocates or formats on the
// success path.
sinter_status bind_io(sinter_context &ctx, uint32_t entry, const DLTensor *inputs,
                      uint32_t num_inputs, const DLTensor *outputs, uint32_t num_outputs,
                      bool &any_dirty) {
  const sinter_model &model = *ctx.model;
  const IoExpect &io = model.entries[entry].io;
  EntryPlan &plan = ctx.entries[entry];
  sinter_status s = validate_io(io, inputs, num_inputs, outputs, num_outputs, model.device);
  if (s != SINTER_OK)
    return s;
  for (uint32_t i = 0; i < num_inputs; ++i)
    if ((s = check_device_memory(io.inputs[i], inputs[i], model.device,
                                 plan.checked_inputs[i])) != SINTER_OK)
      return s;
  for (uint32_t i = 0; i < num_outputs; ++i)
    if ((s = check_device_memory(io.outputs[i], outputs[i], model.device,
                                 plan.checked_outputs[i])) != SINTER_OK)
      return s;
  any_dirty = false;
  for (const IoPatch &p : plan.patches) {
    const DLTensor &t = p.space == SINTER_BUFFER_INPUT ? inputs[p.index] : outputs[p.index];
    void *address = tensor_address(t) + p.offset;
    if (*p.slot != address) {
      *p.slot = address;
      plan.step_dirty[p.step] = 1;
      any_dirty = true;
    }
  }
  return SINTER_OK;
}

// The context and entry of a run or profile call (`fn` names the caller in messages).
sinter_status check_entry(const char *fn, const sinter_context *ctx, uint32_t entry) {
  if (!ctx)
    return fail(SINTER_INVALID_ARGUMENT, "%s: context is null", fn);
  if (entry >= ctx->entries.size()) {
    char names[kEntryNamesBytes];
    return fail(SINTER_INVALID_ARGUMENT,
                "%s: entry %u out of range: the model has %zu entries (%s)", fn, entry,
                ctx->entries.size(), entry_names(*ctx->model->program, names, sizeof names));
  }
  return SINTER_OK;
}

// What every run and profile call does before it issues anything: holds the context for the
// call, binds the I/O, and makes the model's device current until the scope ends.
class CallScope {
public:
  CallScope(const char *fn, sinter_context &ctx, uint32_t entry, const DLTensor *inputs,
            uint32_t num_inputs, const DLTensor *outputs, uint32_t num_outputs)
      : busy_(ctx.busy) {
    if (!busy_.acquired()) {
      status_ = fail(SINTER_BUSY, "%s: the context is in use by another thread", fn);
      return;
    }
    status_ = bind_io(ctx, entry, inputs, num_inputs, outputs, num_outputs, any_dirty_);
    if (status_ != SINTER_OK)
      return;
    device_.emplace(ctx.model->device);
    if (device_->error() != cudaSuccess)
      status_ = fail_cuda(device_->error(), "selecting the model's device");
  }
  sinter_status status() const { return status_; }
  // Whether an I/O address changed since the last call (graph nodes to update).
  bool any_dirty() const { return any_dirty_; }

private:
  BusyGuard busy_;
  std::optional<DeviceGuard> device_;
  sinter_status status_ = SINTER_OK;
  bool any_dirty_ = false;
};

// sinter_run / sinter_run_entry.
sinter_status run(const char *fn, sinter_context *ctx, uint32_t entry, const DLTensor *inputs,
                  uint32_t num_inputs, const DLTensor *outputs, uint32_t num_outputs,
                  void *cuda_stream) {
  sinter_status s = check_entry(fn, ctx, entry);
  if (s != SINTER_OK)
    return s;
  CallScope scope(fn, *ctx, entry, inputs, num_inputs, outputs, num_outputs);
  if (scope.status() != SINTER_OK)
    return scope.status();
  cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream);
  EntryPlan &plan = ctx->entries[entry];
  if (ctx->mode == SINTER_MODE_GRAPH)
    return run_graph(*ctx, plan, scope.any_dirty(), stream);
  const bool driver = driver_ready(*ctx);
  const uint32_t n = static_cast<uint32_t>(plan.steps.size());
  for (uint32_t i = 0; i < n; ++i)
    if ((s = enqueue_step(*ctx, entry, i, stream, driver, true)) != SINTER_OK)
      return s;
  return SINTER_OK;
}

// Holds a stream at a host function until released (or a time limit passes, so that a full
// launch queue can never deadlock the caller), so the launches queued behind it run back to
// back and the events between them measure GPU time, not host issue time.
struct StreamGate {
  std::atomic<int> open{0};
  static void CUDART_CB wait(void *self) {
    auto *gate = static_cast<StreamGate *>(self);
    const auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (!gate->open.load(std::memory_order_acquire) &&
           std::chrono::steady_clock::now() < limit)
      std::this_thread::yield();
  }
};

// sinter_context_profile / _entry (`fn` names the caller in messages).
sinter_status profile(const char *fn, sinter_context *ctx, uint32_t entry, const DLTensor *inputs,
                      uint32_t num_inputs, const DLTensor *outputs, uint32_t num_outputs,
                      void *cuda_stream, float *ms, uint32_t capacity) {
  sinter_status s = check_entry(fn, ctx, entry);
  if (s != SINTER_OK)
    return s;
  const uint32_t n = static_cast<uint32_t>(ctx->entries[entry].steps.size());
  if (!ms && n > 0)
    return fail(SINTER_INVALID_ARGUMENT, "%s: ms_per_launch is null", fn);
  if (capacity < n)
    return fail(SINTER_INVALID_ARGUMENT, "%s: capacity %u is less than the %u launches", fn,
                capacity, n);
  CallScope scope(fn, *ctx, entry, inputs, num_inputs, outputs, num_outputs);
  if (scope.status() != SINTER_OK)
    return scope.status();
  cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream);
  std::vector<cudaEvent_t> events(n + 1, nullptr);
  auto destroy_events = [&] {
    for (cudaEvent_t e : events)
      if (e) (void)cudaEventDestroy(e);
  };
  cudaError_t err = cudaSuccess;
  for (uint32_t i = 0; i <= n && err == cudaSuccess; ++i)
    err = cudaEventCreate(&events[i]);
  if (err != cudaSuccess) {
    destroy_events();
    return fail_cuda(err, "cudaEventCreate");
  }
  StreamGate gate;
  err = cudaLaunchHostFunc(stream, &StreamGate::wait, &gate);
  if (err != cudaSuccess) {
    destroy_events();
    return fail_cuda(err, "cudaLaunchHostFunc");
  }
  const bool driver = driver_ready(*ctx);
  for (uint32_t i = 0; i < n && s == SINTER_OK; ++i) {
    if ((err = cudaEventRecord(events[i], stream)) != cudaSuccess)
      s = fail_cuda(err, "cudaEventRecord");
    else
      s = enqueue_step(*ctx, entry, i, stream, driver, false); // no PDL: events between launches
  }
  if (s == SINTER_OK && (err = cudaEventRecord(events[n], stream)) != cudaSuccess)
    s = fail_cuda(err, "cudaEventRecord");
  gate.open.store(1, std::memory_order_release);
  // Always wait: the gate lives on this stack frame.
  err = cudaStreamSynchronize(stream);
  if (s == SINTER_OK && err != cudaSuccess)
    s = fail_cuda(err, "running the profiled launches");
  for (uint32_t i = 0; i < n && s == SINTER_OK; ++i) {
    float t = 0;
    if ((err = cudaEventElapsedTime(&t, events[i], events[i + 1])) != cudaSuccess)
      s = fail_cuda(err, "cudaEventElapsedTime");
    ms[i] = t;
  }
  destroy_events();
  return s;
}

// The runtime-API launch: the path when the driver one is unavailable, and the one that
// reports a failed driver launch (re-issued here for cudart's error code and message; a failed
// launch enqueues nothing).
sinter_status launch_runtime(KernelStep &k, const std::string &name, cudaStream_t stream,
                             bool pdl) {
  cudaError_t err;
  if (pdl) {
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = k.grid;
    config.blockDim = k.block;
    config.dynamicSmemBytes = k.shared_bytes;
    config.stream = stream;
    config.attrs = &attr;
    config.numAttrs = 1;
    err = cudaLaunchKernelExC(&config, k.function, k.args);
  } else {
    err = cudaLaunchKernel(k.function, k.grid, k.block, k.args, k.shared_bytes, stream);
  }
  if (err == cudaSuccess)
    return SINTER_OK;
  (void)cudaGetLastError();
  return fail(err == cudaErrorMemoryAllocation ? SINTER_OUT_OF_MEMORY : SINTER_CUDA_ERROR,
              "%s: %s: %s: %s", name.c_str(),
              pdl ? "cudaLaunchKernelEx" : "cudaLaunchKernel", cudaGetErrorName(err),
              cudaGetErrorString(err));
}

} // namespace

sinter_status enqueue_step(sinter_context &ctx, uint32_t entry, uint32_t index,
                           cudaStream_t stream, bool driver, bool pdl) {
  EntryPlan &plan = ctx.entries[entry];
  const Step &step = plan.steps[index];
  if (step.kind == StepKind::Kernel) {
    KernelStep &k = plan.kernels[step.index];
    const bool with_pdl = pdl && k.pdl;
    if (driver) {
      k.config.hStream = reinterpret_cast<CUstream>(stream);
      k.config.numAttrs = with_pdl ? 1 : 0;
      if (driver_api().launch_kernel_ex(&k.config, k.cu_function, k.args, nullptr) ==
          CUDA_SUCCESS)
        return SINTER_OK;
    }
    return launch_runtime(k, launch_name(*ctx.model->program, entry, index, "kernel"), stream,
                          with_pdl);
  }
  const GemmEnqueueResult r =
      gemm_enqueue(ctx.lt, plan.gemms[step.index], ctx.workspace, kWorkspaceBytes, stream);
  if (r.ok())
    return SINTER_OK;
  return fail(SINTER_CUDA_ERROR, "%s: %s: %s",
              launch_name(*ctx.model->program, entry, index, "gemm").c_str(), r.what(), r.name());
}

} // namespace sinter::rt

extern "C" SINTER_API sinter_status sinter_run(sinter_context *ctx, const DLTensor *inputs,
                                               uint32_t num_inputs, const DLTensor *outputs,
                                               uint32_t num_outputs, void *cuda_stream) {
  SINTER_API_BEGIN
  return sinter::rt::run("sinter_run", ctx, 0, inputs, num_inputs, outputs, num_outputs,
                         cuda_stream);
  SINTER_API_END
}

extern "C" SINTER_API sinter_status sinter_run_entry(sinter_context *ctx, uint32_t entry,
                                                     const DLTensor *inputs, uint32_t num_inputs,
                                                     const DLTensor *outputs,
                                                     uint32_t num_outputs, void *cuda_stream) {
  SINTER_API_BEGIN
  return sinter::rt::run("sinter_run_entry", ctx, entry, inputs, num_inputs, outputs,
                         num_outputs, cuda_stream);
  SINTER_API_END
}

extern "C" SINTER_API sinter_status sinter_context_profile(sinter_context *ctx,
                                                           const DLTensor *inputs,
                                                           uint32_t num_inputs,
                                                           const DLTensor *outputs,
                                                           uint32_t num_outputs, void *cuda_stream,
                                                           float *ms_per_launch,
                                                           uint32_t capacity) {
  SINTER_API_BEGIN
  return sinter::rt::profile("sinter_context_profile", ctx, 0, inputs, num_inputs, outputs,
                             num_outputs, cuda_stream, ms_per_launch, capacity);
  SINTER_API_END
}

extern "C" SINTER_API sinter_status sinter_context_profile_entry(
    sinter_context *ctx, uint32_t entry, const DLTensor *inputs, uint32_t num_inputs,
    const DLTensor *outputs, uint32_t num_outputs, void *cuda_stream, float *ms_per_launch,
    uint32_t capacity) {
  SINTER_API_BEGIN
  return sinter::rt::profile("sinter_context_profile_entry", ctx, entry, inputs, num_inputs,
                             outputs, num_outputs, cuda_stream, ms_per_launch, capacity);
  SINTER_API_END
}
