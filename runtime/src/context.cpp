// sinter_context_create / destroy: arena, cuBLASLt handle and plans, prebuilt kernel arguments.
#include "context.h"

#include "error.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <strings.h>

namespace sinter::rt {

const DriverApi &driver_api() {
  static const DriverApi api = [] {
    DriverApi a;
    auto get = [](const char *name, void **fn) {
      cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
      // Legacy-stream flavour: a null stream means the legacy default stream, as it does for
      // this library's runtime-API calls (compiled without per-thread default streams).
      if (cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableLegacyStream, &found) !=
              cudaSuccess ||
          found != cudaDriverEntryPointSuccess)
        *fn = nullptr;
      (void)cudaGetLastError();
    };
    void *fn = nullptr;
    get("cuLaunchKernelEx", &fn);
    a.launch_kernel_ex = reinterpret_cast<PFN_cuLaunchKernelEx_v11060>(fn);
    get("cuCtxGetCurrent", &fn);
    a.ctx_get_current = reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(fn);
    return a;
  }();
  return api;
}

bool pdl_requested(const char *v) {
  if (!v) return true;
  return !(std::strcmp(v, "0") == 0 || strcasecmp(v, "off") == 0 ||
           strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0);
}

void plan_pdl(const std::vector<Step> &steps, std::vector<KernelStep> &kernels, bool enabled) {
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == StepKind::Kernel)
      kernels[steps[i].index].pdl =
          enabled && i > 0 && steps[i - 1].kind == StepKind::Kernel;
}

namespace {

// Static address of a non-I/O reference; I/O references are patched per run.
void *resolve(const sinter_context &ctx, const sinter_buffer_ref &ref) {
  switch (ref.space) {
  case SINTER_BUFFER_ARENA: return static_cast<char *>(ctx.arena) + ref.offset;
  case SINTER_BUFFER_WEIGHTS: return static_cast<char *>(ctx.model->weights) + ref.offset;
  case SINTER_BUFFER_STATE: return static_cast<char *>(ctx.state) + ref.offset;
  default: return nullptr;
  }
}

bool is_io(const sinter_buffer_ref &ref) {
  return ref.space == SINTER_BUFFER_INPUT || ref.space == SINTER_BUFFER_OUTPUT;
}

void destroy(sinter_context *ctx) {
  for (EntryPlan &e : ctx->entries) {
    release_graph(e);
    for (GemmPlan &g : e.gemms)
      gemm_plan_destroy(g);
  }
  if (ctx->lt) cublasLtDestroy(ctx->lt);
  if (ctx->own_stream) {
    (void)cudaStreamSynchronize(ctx->own_stream);
    (void)cudaStreamDestroy(ctx->own_stream);
  }
  if (ctx->workspace) (void)cudaFree(ctx->workspace);
  if (ctx->arena) (void)cudaFree(ctx->arena);
  if (ctx->state) (void)cudaFree(ctx->state);
  if (ctx->model) ctx->model->num_contexts.fetch_sub(1);
  delete ctx;
}

struct ContextDeleter {
  void operator()(sinter_context *ctx) const { destroy(ctx); }
};
using ContextPtr = std::unique_ptr<sinter_context, ContextDeleter>;

sinter_status build_kernels(sinter_context &ctx, uint32_t entry) {
  const sinter_entry &desc = ctx.model->entries[entry].desc;
  EntryPlan &plan = ctx.entries[entry];
  size_t num_args = 0;
  for (uint32_t i = 0; i < desc.num_launches; ++i)
    if (desc.launches[i].kind == SINTER_LAUNCH_KERNEL)
      num_args += desc.launches[i].kernel.num_buffers;
  plan.arg_values.assign(num_args, nullptr);
  plan.arg_pointers.assign(num_args, nullptr);
  size_t next = 0;
  for (uint32_t i = 0; i < desc.num_launches; ++i) {
    const sinter_launch_desc &l = desc.launches[i];
    const uint32_t step = static_cast<uint32_t>(plan.steps.size());
    if (l.kind == SINTER_LAUNCH_GEMM) {
      plan.steps.push_back({StepKind::Gemm, static_cast<uint32_t>(plan.gemms.size())});
      plan.gemms.emplace_back();
      continue;
    }
    const sinter_kernel_desc &k = l.kernel;
    KernelStep ks;
    ks.function = k.function;
    ks.grid = dim3(k.grid[0], k.grid[1], k.grid[2]);
    ks.block = dim3(k.block[0], k.block[1], k.block[2]);
    ks.shared_bytes = k.shared_bytes;
    ks.args = plan.arg_pointers.data() + next;
    for (uint32_t b = 0; b < k.num_buffers; ++b, ++next) {
      plan.arg_pointers[next] = &plan.arg_values[next];
      plan.arg_values[next] = resolve(ctx, k.buffers[b]);
      if (is_io(k.buffers[b]))
        plan.patches.push_back({&plan.arg_values[next], k.buffers[b].space, k.buffers[b].index,
                                k.buffers[b].offset, step});
    }
    // Above 48 KiB of dynamic shared memory a kernel must opt in, once per function.
    if (k.shared_bytes > 48u * 1024u) {
      cudaError_t err = cudaFuncSetAttribute(k.function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(k.shared_bytes));
      if (err != cudaSuccess)
        return fail_cuda(err, l.label ? l.label : "cudaFuncSetAttribute");
    }
    plan.steps.push_back({StepKind::Kernel, static_cast<uint32_t>(plan.kernels.size())});
    plan.kernels.push_back(ks);
  }
  plan.checked_inputs.assign(desc.num_inputs, nullptr);
  plan.checked_outputs.assign(desc.num_outputs, nullptr);
  plan.step_dirty.assign(plan.steps.size(), 1);
  plan.nodes.assign(plan.steps.size(), nullptr);
  return SINTER_OK;
}

// The driver-API launch configuration of a kernel step (hStream is set per launch).
void configure_driver_launch(KernelStep &k, CUlaunchAttribute *pdl_attribute) {
  CUlaunchConfig &c = k.config;
  c = CUlaunchConfig{};
  c.gridDimX = k.grid.x;
  c.gridDimY = k.grid.y;
  c.gridDimZ = k.grid.z;
  c.blockDimX = k.block.x;
  c.blockDimY = k.block.y;
  c.blockDimZ = k.block.z;
  c.sharedMemBytes = k.shared_bytes;
  c.attrs = pdl_attribute;
  c.numAttrs = k.pdl ? 1 : 0;
}

// Decides PDL (SINTER_PDL, compute capability >= 9.0) and prepares the driver-API launch of
// every kernel: its CUfunction (which also loads it now rather than at the first run under
// lazy module loading) and a launch configuration. Any failure leaves the runtime-API path.
sinter_status prepare_launches(sinter_context &ctx) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx.model->device) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    major = 0;
  }
  ctx.pdl = major >= 9 && pdl_requested(std::getenv(kPdlEnv));
  for (EntryPlan &e : ctx.entries)
    plan_pdl(e.steps, e.kernels, ctx.pdl);
  ctx.pdl_attribute = CUlaunchAttribute{};
  ctx.pdl_attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  ctx.pdl_attribute.value.programmaticStreamSerializationAllowed = 1;
  for (EntryPlan &e : ctx.entries)
    for (KernelStep &k : e.kernels)
      configure_driver_launch(k, &ctx.pdl_attribute);
  const DriverApi &drv = driver_api();
  ctx.driver = false;
  if (!drv.ok() || drv.ctx_get_current(&ctx.cu_context) != CUDA_SUCCESS || !ctx.cu_context)
    return SINTER_OK;
  for (EntryPlan &e : ctx.entries)
    for (KernelStep &k : e.kernels) {
      cudaFunction_t f = nullptr;
      if (cudaGetFuncBySymbol(&f, k.function) != cudaSuccess || !f) {
        (void)cudaGetLastError();
        for (EntryPlan &clear : ctx.entries)
          for (KernelStep &j : clear.kernels) j.cu_function = nullptr;
        return SINTER_OK;
      }
      k.cu_function = reinterpret_cast<CUfunction>(f);
    }
  ctx.driver = true;
  return SINTER_OK;
}

// GEMM operands in the order build_gemms walks them, with gemm_operand_bytes' code for each.
constexpr int kGemmOperands = 5;
constexpr char kGemmOperandCodes[kGemmOperands + 1] = "abcxr";

// Scratch bytes the I/O operands of entry `desc`'s largest GEMM need while timing.
uint64_t timing_scratch_bytes(const sinter_entry &desc) {
  uint64_t most = 0;
  for (uint32_t i = 0; i < desc.num_launches; ++i) {
    if (desc.launches[i].kind != SINTER_LAUNCH_GEMM) continue;
    const sinter_gemm_desc &g = desc.launches[i].gemm;
    uint64_t need = 0;
    const sinter_buffer_ref *refs[kGemmOperands] = {&g.a, &g.b, &g.c, &g.bias, &g.residual};
    for (int r = 0; r < kGemmOperands; ++r)
      if (is_io(*refs[r]))
        need += (gemm_operand_bytes(g, kGemmOperandCodes[r]) + 255) & ~uint64_t(255);
    most = need > most ? need : most;
  }
  return most;
}

// Builds the GEMM plans of one entry and picks their algorithms. I/O operands are not known
// yet, so they point at `scratch` (zeroed) while timing and are patched at the first run.
sinter_status build_entry_gemms(sinter_context &ctx, uint32_t entry, void *scratch) {
  ModelEntry &model_entry = ctx.model->entries[entry];
  const sinter_entry &desc = model_entry.desc;
  EntryPlan &entry_plan = ctx.entries[entry];
  uint32_t gemm = 0;
  for (uint32_t i = 0; i < desc.num_launches; ++i) {
    if (desc.launches[i].kind != SINTER_LAUNCH_GEMM) continue;
    const sinter_gemm_desc &g = desc.launches[i].gemm;
    const uint32_t step = i; // steps and launches are 1:1
    GemmPlan &plan = entry_plan.gemms[gemm++];
    sinter_status status = gemm_plan_init(g, plan);
    if (status != SINTER_OK)
      return status;
    const sinter_buffer_ref *refs[kGemmOperands] = {&g.a, &g.b, &g.c, &g.bias, &g.residual};
    void **slots[kGemmOperands] = {&plan.a, &plan.b, &plan.c, &plan.bias, &plan.residual};
    char *next_scratch = static_cast<char *>(scratch);
    for (int r = 0; r < kGemmOperands; ++r) {
      if (is_io(*refs[r])) {
        *slots[r] = next_scratch;
        next_scratch += (gemm_operand_bytes(g, kGemmOperandCodes[r]) + 255) & ~uint64_t(255);
      } else {
        *slots[r] = resolve(ctx, *refs[r]);
      }
    }
    {
      // One choice per model: every context then runs the same cuBLASLt kernels and gives
      // bit-identical results (timing noise under concurrent creation cannot split them).
      std::lock_guard<std::mutex> lock(ctx.model->algo_mutex);
      if (model_entry.algo_chosen[i]) {
        status = gemm_adopt_choice(plan, model_entry.algos[i], i);
        if (status != SINTER_OK)
          return status;
      } else {
        status = gemm_select_algo(ctx.lt, plan, ctx.workspace, kWorkspaceBytes, ctx.own_stream, i);
        if (status != SINTER_OK)
          return status;
        model_entry.algos[i] = gemm_choice(plan);
        model_entry.algo_chosen[i] = 1;
      }
    }
    for (int r = 0; r < kGemmOperands; ++r)
      if (is_io(*refs[r])) {
        *slots[r] = nullptr; // forces the first run to patch (and the graph to be built with it)
        entry_plan.patches.push_back(
            {slots[r], refs[r]->space, refs[r]->index, refs[r]->offset, step});
      }
  }
  return SINTER_OK;
}

// Builds every entry's GEMM plans over one timing scratch buffer.
sinter_status build_gemms(sinter_context &ctx) {
  uint64_t scratch_bytes = 0;
  for (const ModelEntry &e : ctx.model->entries) {
    const uint64_t need = timing_scratch_bytes(e.desc);
    scratch_bytes = need > scratch_bytes ? need : scratch_bytes;
  }
  void *scratch = nullptr;
  cudaError_t err;
  if (scratch_bytes > 0) {
    if ((err = cudaMalloc(&scratch, scratch_bytes)) != cudaSuccess)
      return fail_cuda(err, "allocating GEMM timing scratch");
    (void)cudaMemsetAsync(scratch, 0, scratch_bytes, ctx.own_stream);
  }
  sinter_status status = SINTER_OK;
  for (uint32_t e = 0; e < ctx.entries.size() && status == SINTER_OK; ++e)
    status = build_entry_gemms(ctx, e, scratch);
  if (scratch) {
    (void)cudaStreamSynchronize(ctx.own_stream);
    (void)cudaFree(scratch);
  }
  return status;
}

// Zeroes the state block on the context's stream.
sinter_status clear_state(sinter_context &ctx) {
  const uint64_t bytes = ctx.model->program->state_bytes;
  if (bytes == 0)
    return SINTER_OK;
  cudaError_t err = cudaMemsetAsync(ctx.state, 0, bytes, ctx.own_stream);
  return err == cudaSuccess ? SINTER_OK : fail_cuda(err, "clearing the state");
}

sinter_status create(sinter_model *model, const sinter_context_options *opts,
                     sinter_context **out) {
  if (!out)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_context_create: out is null");
  *out = nullptr;
  if (!model)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_context_create: model is null");
  int mode = SINTER_MODE_DIRECT;
  if (opts) {
    if (opts->struct_size < offsetof(sinter_context_options, mode) + sizeof opts->mode)
      return fail(SINTER_INVALID_ARGUMENT,
                  "sinter_context_create: options.struct_size %u is too small (expected %zu)",
                  opts->struct_size, sizeof(sinter_context_options));
    mode = opts->mode;
    if (mode != SINTER_MODE_DIRECT && mode != SINTER_MODE_GRAPH)
      return fail(SINTER_INVALID_ARGUMENT,
                  "sinter_context_create: mode %d is neither SINTER_MODE_DIRECT (0) nor "
                  "SINTER_MODE_GRAPH (1)",
                  mode);
  }
  DeviceGuard guard(model->device);
  if (guard.error() != cudaSuccess)
    return fail_cuda(guard.error(), "selecting the model's device");

  ContextPtr ctx(new sinter_context);
  ctx->model = model;
  model->num_contexts.fetch_add(1);
  ctx->mode = mode;
  const sinter_program &p = *model->program;
  cudaError_t err;
  if ((err = cudaStreamCreateWithFlags(&ctx->own_stream, cudaStreamNonBlocking)) != cudaSuccess)
    return fail_cuda(err, "creating the context stream");
  if (p.arena_bytes > 0) {
    if ((err = cudaMalloc(&ctx->arena, p.arena_bytes)) != cudaSuccess)
      return fail_cuda(err, "allocating the activation arena");
    // Zeroed so state kept in the arena (KV caches of programs without a state block) starts
    // defined.
    if ((err = cudaMemsetAsync(ctx->arena, 0, p.arena_bytes, ctx->own_stream)) != cudaSuccess)
      return fail_cuda(err, "clearing the activation arena");
  }
  if (p.state_bytes > 0) {
    if ((err = cudaMalloc(&ctx->state, p.state_bytes)) != cudaSuccess)
      return fail_cuda(err, "allocating the state");
  }
  sinter_status s;
  if ((s = clear_state(*ctx)) != SINTER_OK)
    return s;
  // Sized before anything points into it: plans hold addresses of their own vectors' elements.
  ctx->entries.resize(model->entries.size());
  bool any_gemm = false;
  for (uint32_t e = 0; e < ctx->entries.size(); ++e) {
    if ((s = build_kernels(*ctx, e)) != SINTER_OK)
      return s;
    any_gemm = any_gemm || !ctx->entries[e].gemms.empty();
  }
  if ((s = prepare_launches(*ctx)) != SINTER_OK)
    return s;
  if (any_gemm) {
    if ((err = cudaMalloc(&ctx->workspace, kWorkspaceBytes)) != cudaSuccess)
      return fail_cuda(err, "allocating the cuBLASLt workspace");
    cublasStatus_t st = cublasLtCreate(&ctx->lt);
    if (st != CUBLAS_STATUS_SUCCESS)
      return fail(st == CUBLAS_STATUS_ALLOC_FAILED ? SINTER_OUT_OF_MEMORY : SINTER_CUDA_ERROR,
                  "cublasLtCreate: %s", cublasLtGetStatusName(st));
    if ((s = build_gemms(*ctx)) != SINTER_OK)
      return s;
    // Timing ran GEMMs on their real non-I/O operands, so a GEMM writing into the state (a KV
    // cache projection) left values there: start from zero again.
    if ((s = clear_state(*ctx)) != SINTER_OK)
      return s;
  }
  if ((err = cudaStreamSynchronize(ctx->own_stream)) != cudaSuccess)
    return fail_cuda(err, "preparing the context");
  *out = ctx.release();
  return SINTER_OK;
}

} // namespace
} // namespace sinter::rt

extern "C" {

SINTER_API sinter_status sinter_context_create(sinter_model *model,
                                               const sinter_context_options *opts,
                                               sinter_context **out) {
  SINTER_API_BEGIN
  return sinter::rt::create(model, opts, out);
  SINTER_API_END
}

SINTER_API sinter_status sinter_context_destroy(sinter_context *ctx) {
  SINTER_API_BEGIN
  if (!ctx)
    return SINTER_OK;
  if (ctx->busy.exchange(true))
    return sinter::rt::fail(SINTER_BUSY, "sinter_context_destroy: the context is running");
  sinter::rt::DeviceGuard guard(ctx->model->device);
  sinter::rt::destroy(ctx);
  return SINTER_OK;
  SINTER_API_END
}

} // extern "C"
