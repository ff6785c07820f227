// Graph mode: each entry's launches as one CUDA graph, built at the entry's first run and
// updated in place when its I/O pointers change.
#include "context.h"

#include "error.h"

namespace sinter::rt {
namespace {

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
  const GemmEnqueueResult r =
      gemm_enqueue(ctx.lt, plan, ctx.workspace, kWorkspaceBytes, ctx.own_stream);
  err = cudaStreamEndCapture(ctx.own_stream, out);
  if (!r.ok()) {
    if (*out) cudaGraphDestroy(*out);
    *out = nullptr;
    return fail(SINTER_CUDA_ERROR, "launch %u: capturing %s: %s", step, r.what(), r.name());
  }
  if (err != cudaSuccess)
    return fail_cuda(err, "cudaStreamEndCapture");
  return SINTER_OK;
}

// Builds the graph node by node: kernels as kernel nodes (updatable in place), each GEMM as a
// child graph captured from cuBLASLt (replaced when its I/O pointers change).
sinter_status build_graph(sinter_context &ctx, EntryPlan &plan) {
  cudaError_t err = cudaGraphCreate(&plan.graph, 0);
  if (err != cudaSuccess)
    return fail_cuda(err, "cudaGraphCreate");
  cudaGraphNode_t prev = nullptr;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &s = plan.steps[i];
    cudaGraphNode_t node = nullptr;
    const size_t ndeps = prev ? 1 : 0;
    if (s.kind == StepKind::Kernel) {
      const KernelStep &k = plan.kernels[s.index];
      cudaKernelNodeParams p = kernel_params(k);
      if (k.pdl) {
        // The graph form of programmatic stream serialization: an edge from the previous
        // kernel's programmatic port, so this kernel may start once every block of that one
        // has run griddepcontrol.launch_dependents (it waits in griddepcontrol.wait).
        cudaGraphEdgeData edge{};
        edge.from_port = cudaGraphKernelNodePortProgrammatic;
        edge.type = cudaGraphDependencyTypeProgrammatic;
        err = cudaGraphAddKernelNode(&node, plan.graph, nullptr, 0, &p);
        if (err == cudaSuccess &&
            cudaGraphAddDependencies(plan.graph, &prev, &node, &edge, 1) != cudaSuccess) {
          (void)cudaGetLastError(); // a driver without programmatic edges: a full dependency
          err = cudaGraphAddDependencies(plan.graph, &prev, &node, nullptr, 1);
        }
      } else {
        err = cudaGraphAddKernelNode(&node, plan.graph, prev ? &prev : nullptr, ndeps, &p);
      }
    } else {
      cudaGraph_t child = nullptr;
      sinter_status st = capture_gemm(ctx, plan.gemms[s.index], uint32_t(i), &child);
      if (st != SINTER_OK)
        return st;
      err = cudaGraphAddChildGraphNode(&node, plan.graph, prev ? &prev : nullptr, ndeps, child);
      cudaGraphDestroy(child); // the node holds its own copy
    }
    if (err != cudaSuccess)
      return fail_cuda(err, "adding a graph node");
    plan.nodes[i] = node;
    plan.step_dirty[i] = 0;
    prev = node;
  }
  err = cudaGraphInstantiate(&plan.exec, plan.graph, 0);
  if (err != cudaSuccess)
    return fail_cuda(err, "cudaGraphInstantiate");
  return SINTER_OK;
}

// Pushes changed I/O pointers into the instantiated graph, touching only the dirty nodes.
sinter_status update_graph(sinter_context &ctx, EntryPlan &plan) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (!plan.step_dirty[i]) continue;
    const Step &s = plan.steps[i];
    cudaError_t err;
    if (s.kind == StepKind::Kernel) {
      cudaKernelNodeParams p = kernel_params(plan.kernels[s.index]);
      err = cudaGraphExecKernelNodeSetParams(plan.exec, plan.nodes[i], &p);
    } else {
      cudaGraph_t child = nullptr;
      sinter_status st = capture_gemm(ctx, plan.gemms[s.index], uint32_t(i), &child);
      if (st != SINTER_OK)
        return st;
      err = cudaGraphExecChildGraphNodeSetParams(plan.exec, plan.nodes[i], child);
      cudaGraphDestroy(child);
    }
    if (err != cudaSuccess)
      return fail_cuda(err, "updating a graph node");
    plan.step_dirty[i] = 0;
  }
  return SINTER_OK;
}

} // namespace

sinter_status run_graph(sinter_context &ctx, EntryPlan &plan, bool any_dirty,
                        cudaStream_t stream) {
  if (!plan.exec) {
    sinter_status s = build_graph(ctx, plan);
    if (s != SINTER_OK) {
      release_graph(plan);
      return s;
    }
  } else if (any_dirty && update_graph(ctx, plan) != SINTER_OK) {
    // An in-place update was refused (e.g. cuBLASLt captured a different topology): rebuild.
    release_graph(plan);
    sinter_status s = build_graph(ctx, plan);
    if (s != SINTER_OK) {
      release_graph(plan);
      return s;
    }
  }
  cudaError_t err = cudaGraphLaunch(plan.exec, stream);
  return err == cudaSuccess ? SINTER_OK : fail_cuda(err, "cudaGraphLaunch");
}

void release_graph(EntryPlan &plan) {
  if (plan.exec) cudaGraphExecDestroy(plan.exec);
  if (plan.graph) cudaGraphDestroy(plan.graph);
  plan.exec = nullptr;
  plan.graph = nullptr;
  for (auto &n : plan.nodes) n = nullptr;
  for (auto &d : plan.step_dirty) d = 1;
  (void)cudaGetLastError();
}

} // namespace sinter::rt
