// sinter_run: validate, patch I/O pointers, issue launches (direct) or replay a CUDA graph.
// Nothing here allocates or formats on the success path.
#include "context.h"

#include "error.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace sinter::rt {
namespace {

// Clears the busy flag on every return path.
class BusyGuard {
public:
  explicit BusyGuard(std::atomic<bool> &flag) : flag_(flag) {
    acquired_ = !flag_.exchange(true, std::memory_order_acquire);
  }
  ~BusyGuard() {
    if (acquired_) flag_.store(false, std::memory_order_release);
  }
  bool acquired() const { return acquired_; }

private:
  std::atomic<bool> &flag_;
  bool acquired_;
};

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

cudaKernelNodeParams kernel_params(const KernelStep &k) {
  cudaKernelNodeParams p{};
  p.func = const_cast<void *>(k.function);
  p.gridDim = k.grid;
  p.blockDim = k.block;
  p.sharedMemBytes = k.shared_bytes;
  p.kernelParams = k.args;
  p.extra = nullptr;
  return p;
}

// Captures one GEMM (cuBLASLt's own kernels) on the context's stream into a graph.
sinter_status capture_gemm(sinter_context &ctx, GemmPlan &plan, uint32_t step,
                           cudaGraph_t *out) {
  cudaError_t err = cudaStreamBeginCapture(ctx.own_stream, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess)
    return fail_cuda(err, "cudaStreamBeginCapture");
  cublasStatus_t st = gemm_enqueue(ctx.lt, plan, ctx.workspace, kWorkspaceBytes, ctx.own_stream);
  err = cudaStreamEndCapture(ctx.own_stream, out);
  if (st != CUBLAS_STATUS_SUCCESS) {
    if (*out) cudaGraphDestroy(*out);
    *out = nullptr;
    return fail(SINTER_CUDA_ERROR, "launch %u: capturing cublasLtMatmul: %s", step,
                cublasLtGetStatusName(st));
  }
  if (err != cudaSuccess)
    return fail_cuda(err, "cudaStreamEndCapture");
  return SINTER_OK;
}

// Builds the graph node by node: kernels as kernel nodes (updatable in place), each GEMM as a
// child graph captured from cuBLASLt (replaced when its I/O pointers change).
sinter_status build_graph(sinter_context &ctx) {
  cudaError_t err = cudaGraphCreate(&ctx.graph, 0);
  if (err != cudaSuccess)
    return fail_cuda(err, "cudaGraphCreate");
  cudaGraphNode_t prev = nullptr;
  for (size_t i = 0; i < ctx.steps.size(); ++i) {
    const Step &s = ctx.steps[i];
    cudaGraphNode_t node = nullptr;
    const size_t ndeps = prev ? 1 : 0;
    if (s.kind == StepKind::Kernel) {
      const KernelStep &k = ctx.kernels[s.index];
      cudaKernelNodeParams p = kernel_params(k);
      if (k.pdl) {
        // The graph form of programmatic stream serialization: an edge from the previous
        // kernel's programmatic port, so this kernel may start once every block of that one
        // has run griddepcontrol.launch_dependents (it waits in griddepcontrol.wait).
        cudaGraphEdgeData edge{};
        edge.from_port = cudaGraphKernelNodePortProgrammatic;
        edge.type = cudaGraphDependencyTypeProgrammatic;
        err = cudaGraphAddKernelNode(&node, ctx.graph, nullptr, 0, &p);
        if (err == cudaSuccess &&
            cudaGraphAddDependencies(ctx.graph, &prev, &node, &edge, 1) != cudaSuccess) {
          (void)cudaGetLastError(); // a driver without programmatic edges: a full dependency
          err = cudaGraphAddDependencies(ctx.graph, &prev, &node, nullptr, 1);
        }
      } else {
        err = cudaGraphAddKernelNode(&node, ctx.graph, prev ? &prev : nullptr, ndeps, &p);
      }
    } else {
      cudaGraph_t child = nullptr;
      sinter_status st = capture_gemm(ctx, ctx.gemms[s.index], uint32_t(i), &child);
      if (st != SINTER_OK)
        return st;
      err = cudaGraphAddChildGraphNode(&node, ctx.graph, prev ? &prev : nullptr, ndeps, child);
      cudaGraphDestroy(child); // the node holds its own copy
    }
    if (err != cudaSuccess)
      return fail_cuda(err, "adding a graph node");
    ctx.nodes[i] = node;
    ctx.step_dirty[i] = 0;
    prev = node;
  }
  err = cudaGraphInstantiate(&ctx.exec, ctx.graph, 0);
  if (err != cudaSuccess)
    return fail_cuda(err, "cudaGraphInstantiate");
  return SINTER_OK;
}

// Pushes changed I/O pointers into the instantiated graph, touching only the dirty nodes.
sinter_status update_graph(sinter_context &ctx) {
  for (size_t i = 0; i < ctx.steps.size(); ++i) {
    if (!ctx.step_dirty[i]) continue;
    const Step &s = ctx.steps[i];
    cudaError_t err;
    if (s.kind == StepKind::Kernel) {
      cudaKernelNodeParams p = kernel_params(ctx.kernels[s.index]);
      err = cudaGraphExecKernelNodeSetParams(ctx.exec, ctx.nodes[i], &p);
    } else {
      cudaGraph_t child = nullptr;
      sinter_status st = capture_gemm(ctx, ctx.gemms[s.index], uint32_t(i), &child);
      if (st != SINTER_OK)
        return st;
      err = cudaGraphExecChildGraphNodeSetParams(ctx.exec, ctx.nodes[i], child);
      cudaGraphDestroy(child);
    }
    if (err != cudaSuccess)
      return fail_cuda(err, "updating a graph node");
    ctx.step_dirty[i] = 0;
  }
  return SINTER_OK;
}

sinter_status run_graph(sinter_context &ctx, bool any_dirty, cudaStream_t stream) {
  if (!ctx.exec) {
    sinter_status s = build_graph(ctx);
    if (s != SINTER_OK) {
      release_graph(ctx);
      return s;
    }
  } else if (any_dirty && update_graph(ctx) != SINTER_OK) {
    // An in-place update was refused (e.g. cuBLASLt captured a different topology): rebuild.
    release_graph(ctx);
    sinter_status s = build_graph(ctx);
    if (s != SINTER_OK) {
      release_graph(ctx);
      return s;
    }
  }
  cudaError_t err = cudaGraphLaunch(ctx.exec, stream);
  return err == cudaSuccess ? SINTER_OK : fail_cuda(err, "cudaGraphLaunch");
}

// Validates the tensors and points every I/O slot at them, marking the steps whose pointers
// changed. Nothing here allocates or formats on the success path.
sinter_status bind_io(sinter_context &ctx, const DLTensor *inputs, uint32_t num_inputs,
                      const DLTensor *outputs, uint32_t num_outputs, bool &any_dirty) {
  const sinter_model &model = *ctx.model;
  sinter_status s = validate_io(model.io, inputs, num_inputs, outputs, num_outputs, model.device);
  if (s != SINTER_OK)
    return s;
  for (uint32_t i = 0; i < num_inputs; ++i)
    if ((s = check_device_memory(model.io.inputs[i], inputs[i], model.device,
                                 ctx.checked_inputs[i])) != SINTER_OK)
      return s;
  for (uint32_t i = 0; i < num_outputs; ++i)
    if ((s = check_device_memory(model.io.outputs[i], outputs[i], model.device,
                                 ctx.checked_outputs[i])) != SINTER_OK)
      return s;
  any_dirty = false;
  for (const IoPatch &p : ctx.patches) {
    const DLTensor &t = p.space == SINTER_BUFFER_INPUT ? inputs[p.index] : outputs[p.index];
    void *address = tensor_address(t) + p.offset;
    if (*p.slot != address) {
      *p.slot = address;
      ctx.step_dirty[p.step] = 1;
      any_dirty = true;
    }
  }
  return SINTER_OK;
}

sinter_status run(sinter_context *ctx, const DLTensor *inputs, uint32_t num_inputs,
                  const DLTensor *outputs, uint32_t num_outputs, void *cuda_stream) {
  if (!ctx)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_run: context is null");
  BusyGuard busy(ctx->busy);
  if (!busy.acquired())
    return fail(SINTER_BUSY, "sinter_run: the context is in use by another thread");
  bool any_dirty = false;
  sinter_status s = bind_io(*ctx, inputs, num_inputs, outputs, num_outputs, any_dirty);
  if (s != SINTER_OK)
    return s;
  DeviceGuard guard(ctx->model->device);
  if (guard.error() != cudaSuccess)
    return fail_cuda(guard.error(), "selecting the model's device");
  cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream);
  if (ctx->mode == SINTER_MODE_GRAPH)
    return run_graph(*ctx, any_dirty, stream);
  const bool driver = driver_ready(*ctx);
  const uint32_t n = static_cast<uint32_t>(ctx->steps.size());
  for (uint32_t i = 0; i < n; ++i)
    if ((s = enqueue_step(*ctx, i, stream, driver, true)) != SINTER_OK)
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

sinter_status profile(sinter_context *ctx, const DLTensor *inputs, uint32_t num_inputs,
                      const DLTensor *outputs, uint32_t num_outputs, void *cuda_stream,
                      float *ms, uint32_t capacity) {
  if (!ctx)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_context_profile: context is null");
  const uint32_t n = static_cast<uint32_t>(ctx->steps.size());
  if (!ms && n > 0)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_context_profile: ms_per_launch is null");
  if (capacity < n)
    return fail(SINTER_INVALID_ARGUMENT,
                "sinter_context_profile: capacity %u is less than the %u launches", capacity, n);
  BusyGuard busy(ctx->busy);
  if (!busy.acquired())
    return fail(SINTER_BUSY, "sinter_context_profile: the context is in use by another thread");
  bool any_dirty = false;
  sinter_status s = bind_io(*ctx, inputs, num_inputs, outputs, num_outputs, any_dirty);
  if (s != SINTER_OK)
    return s;
  DeviceGuard guard(ctx->model->device);
  if (guard.error() != cudaSuccess)
    return fail_cuda(guard.error(), "selecting the model's device");
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
      s = enqueue_step(*ctx, i, stream, driver, false); // no PDL: events separate the launches
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
sinter_status launch_runtime(KernelStep &k, uint32_t index, const char *label, cudaStream_t stream,
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
              "launch %u (%s): %s: %s: %s", index, label ? label : "kernel",
              pdl ? "cudaLaunchKernelEx" : "cudaLaunchKernel", cudaGetErrorName(err),
              cudaGetErrorString(err));
}

} // namespace

sinter_status enqueue_step(sinter_context &ctx, uint32_t index, cudaStream_t stream, bool driver,
                           bool pdl) {
  const Step &step = ctx.steps[index];
  if (step.kind == StepKind::Kernel) {
    KernelStep &k = ctx.kernels[step.index];
    const bool with_pdl = pdl && k.pdl;
    if (driver) {
      k.config.hStream = reinterpret_cast<CUstream>(stream);
      k.config.numAttrs = with_pdl ? 1 : 0;
      if (driver_api().launch_kernel_ex(&k.config, k.cu_function, k.args, nullptr) ==
          CUDA_SUCCESS)
        return SINTER_OK;
    }
    return launch_runtime(k, index, ctx.model->program->launches[index].label, stream, with_pdl);
  }
  cublasStatus_t st =
      gemm_enqueue(ctx.lt, ctx.gemms[step.index], ctx.workspace, kWorkspaceBytes, stream);
  if (st == CUBLAS_STATUS_SUCCESS)
    return SINTER_OK;
  const char *label = ctx.model->program->launches[index].label;
  return fail(SINTER_CUDA_ERROR, "launch %u (%s): cublasLtMatmul: %s", index,
              label ? label : "gemm", cublasLtGetStatusName(st));
}

void release_graph(sinter_context &ctx) {
  if (ctx.exec) cudaGraphExecDestroy(ctx.exec);
  if (ctx.graph) cudaGraphDestroy(ctx.graph);
  ctx.exec = nullptr;
  ctx.graph = nullptr;
  for (auto &n : ctx.nodes) n = nullptr;
  for (auto &d : ctx.step_dirty) d = 1;
  (void)cudaGetLastError();
}

} // namespace sinter::rt

extern "C" SINTER_API sinter_status sinter_run(sinter_context *ctx, const DLTensor *inputs,
                                               uint32_t num_inputs, const DLTensor *outputs,
                                               uint32_t num_outputs, void *cuda_stream) {
  SINTER_API_BEGIN
  return sinter::rt::run(ctx, inputs, num_inputs, outputs, num_outputs, cuda_stream);
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
  return sinter::rt::profile(ctx, inputs, num_inputs, outputs, num_outputs, cuda_stream,
                             ms_per_launch, capacity);
  SINTER_API_END
}
