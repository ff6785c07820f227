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
  default: return nullptr;
  }
}

bool is_io(const sinter_buffer_ref &ref) {
  return ref.space == SINTER_BUFFER_INPUT || ref.space == SINTER_BUFFER_OUTPUT;
}

void destroy(sinter_context *ctx) {
  release_graph(*ctx);
  for (GemmPlan &g : ctx->gemms)
    gemm_plan_destroy(g);
  if (ctx->lt) cublasLtDestroy(ctx->lt);
  if (ctx->own_stream) {
    (void)cudaStreamSynchronize(ctx->own_stream);
    (void)cudaStreamDestroy(ctx->own_stream);
  }
  if (ctx->workspace) (void)cudaFree(ctx->workspace);
  if (ctx->arena) (void)cudaFree(ctx->arena);
  if (ctx->model) ctx->model->num_contexts.fetch_sub(1);
  delete ctx;
}

struct ContextDeleter {
  void operator()(sinter_context *ctx) const { destroy(ctx); }
};
using ContextPtr = std::unique_ptr<sinter_context, ContextDeleter>;

sinter_status build_kernels(sinter_context &ctx) {
  const sinter_program &p = *ctx.model->program;
  size_t num_args = 0;
  for (uint32_t i = 0; i < p.num_launches; ++i)
    if (p.launches[i].kind == SINTER_LAUNCH_KERNEL)
      num_args += p.launches[i].kernel.num_buffers;
  ctx.arg_values.assign(num_args, nullptr);
  ctx.arg_pointers.assign(num_args, nullptr);
  size_t next = 0;
  for (uint32_t i = 0; i < p.num_launches; ++i) {
    const sinter_launch_desc &l = p.launches[i];
    const uint32_t step = static_cast<uint32_t>(ctx.steps.size());
    if (l.kind == SINTER_LAUNCH_GEMM) {
      ctx.steps.push_back({StepKind::Gemm, static_cast<uint32_t>(ctx.gemms.size())});
      ctx.gemms.emplace_back();
      continue;
    }
    const sinter_kernel_desc &k = l.kernel;
    KernelStep ks;
    ks.function = k.function;
    ks.grid = dim3(k.grid[0], k.grid[1], k.grid[2]);
    ks.block = dim3(k.block[0], k.block[1], k.block[2]);
    ks.shared_bytes = k.shared_bytes;
    ks.args = ctx.arg_pointers.data() + next;
    for (uint32_t b = 0; b < k.num_buffers; ++b, ++next) {
      ctx.arg_pointers[next] = &ctx.arg_values[next];
      ctx.arg_values[next] = resolve(ctx, k.buffers[b]);
      if (is_io(k.buffers[b]))
        ctx.patches.push_back({&ctx.arg_values[next], k.buffers[b].space, k.buffers[b].index,
                               k.buffers[b].offset, step});
    }
    // Above 48 KiB of dynamic shared memory a kernel must opt in, once per function.
    if (k.shared_bytes > 48u * 1024u) {
      cudaError_t err = cudaFuncSetAttribute(k.function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(k.shared_bytes));
      if (err != cudaSuccess)
        return fail_cuda(err, l.label ? l.label : "cudaFuncSetAttribute");
    }
    ctx.steps.push_back({StepKind::Kernel, static_cast<uint32_t>(ctx.kernels.size())});
    ctx.kernels.push_back(ks);
  }
  return SINTER_OK;
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
  plan_pdl(ctx.steps, ctx.kernels, ctx.pdl);
  ctx.pdl_attribute = CUlaunchAttribute{};
  ctx.pdl_attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  ctx.pdl_attribute.value.programmaticStreamSerializationAllowed = 1;
  for (KernelStep &k : ctx.kernels) {
    CUlaunchConfig &c = k.config;
    c = CUlaunchConfig{};
    c.gridDimX = k.grid.x;
    c.gridDimY = k.grid.y;
    c.gridDimZ = k.grid.z;
    c.blockDimX = k.block.x;
    c.blockDimY = k.block.y;
    c.blockDimZ = k.block.z;
    c.sharedMemBytes = k.shared_bytes;
    c.attrs = &ctx.pdl_attribute;
    c.numAttrs = k.pdl ? 1 : 0;
  }
  const DriverApi &drv = driver_api();
  ctx.driver = false;
  if (!drv.ok() || drv.ctx_get_current(&ctx.cu_context) != CUDA_SUCCESS || !ctx.cu_context)
    return SINTER_OK;
  for (KernelStep &k : ctx.kernels) {
    cudaFunction_t f = nullptr;
    if (cudaGetFuncBySymbol(&f, k.function) != cudaSuccess || !f) {
      (void)cudaGetLastError();
      for (KernelStep &j : ctx.kernels) j.cu_function = nullptr;
      return SINTER_OK;
    }
    k.cu_function = reinterpret_cast<CUfunction>(f);
  }
  ctx.driver = true;
  return SINTER_OK;
}

// GEMM operands in the order build_gemms walks them, with operand_bytes' code for each.
constexpr int kGemmOperands = 5;
constexpr char kGemmOperandCodes[kGemmOperands + 1] = "abcxr";

// Bytes a GEMM operand spans, for the scratch stand-ins used while timing algorithms.
uint64_t operand_bytes(const sinter_gemm_desc &g, char which) {
  const uint64_t e = dtype_bytes(g.dtype);
  switch (which) {
  case 'a': return uint64_t(g.m) * uint64_t(g.k) * e;
  case 'b': return uint64_t(g.k) * uint64_t(g.n) * e;
  case 'c':
  case 'r': return uint64_t(g.m) * uint64_t(g.n) * e;
  default: return uint64_t(g.n) * e;
  }
}

// Builds every GEMM plan and picks its algorithm. I/O operands are not known yet, so they point
// at a zeroed scratch buffer while timing and are patched at the first run.
sinter_status build_gemms(sinter_context &ctx) {
  const sinter_program &p = *ctx.model->program;
  uint64_t scratch_bytes = 0;
  for (uint32_t i = 0; i < p.num_launches; ++i) {
    if (p.launches[i].kind != SINTER_LAUNCH_GEMM) continue;
    const sinter_gemm_desc &g = p.launches[i].gemm;
    uint64_t need = 0;
    const sinter_buffer_ref *refs[kGemmOperands] = {&g.a, &g.b, &g.c, &g.bias, &g.residual};
    for (int r = 0; r < kGemmOperands; ++r)
      if (is_io(*refs[r]))
        need += (operand_bytes(g, kGemmOperandCodes[r]) + 255) & ~uint64_t(255);
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
  uint32_t gemm = 0;
  for (uint32_t i = 0; i < p.num_launches && status == SINTER_OK; ++i) {
    if (p.launches[i].kind != SINTER_LAUNCH_GEMM) continue;
    const sinter_gemm_desc &g = p.launches[i].gemm;
    const uint32_t step = i; // steps and launches are 1:1
    GemmPlan &plan = ctx.gemms[gemm++];
    if ((status = gemm_plan_init(g, plan)) != SINTER_OK) break;
    const sinter_buffer_ref *refs[kGemmOperands] = {&g.a, &g.b, &g.c, &g.bias, &g.residual};
    void **slots[kGemmOperands] = {&plan.a, &plan.b, &plan.c, &plan.bias, &plan.residual};
    char *next_scratch = static_cast<char *>(scratch);
    for (int r = 0; r < kGemmOperands; ++r) {
      if (is_io(*refs[r])) {
        *slots[r] = next_scratch;
        next_scratch += (operand_bytes(g, kGemmOperandCodes[r]) + 255) & ~uint64_t(255);
      } else {
        *slots[r] = resolve(ctx, *refs[r]);
      }
    }
    {
      // One choice per model: every context then runs the same cuBLASLt kernels and gives
      // bit-identical results (timing noise under concurrent creation cannot split them).
      sinter_model &model = *ctx.model;
      std::lock_guard<std::mutex> lock(model.algo_mutex);
      if (model.algo_chosen[i]) {
        plan.algo = model.algos[i];
        if (plan.has_bias &&
            cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &plan.bias,
                                           sizeof plan.bias) != CUBLAS_STATUS_SUCCESS)
          status = fail(SINTER_CUDA_ERROR, "launch %u: setting the bias pointer", i);
      } else {
        status = gemm_select_algo(ctx.lt, plan, ctx.workspace, kWorkspaceBytes, ctx.own_stream, i);
        if (status == SINTER_OK) {
          model.algos[i] = plan.algo;
          model.algo_chosen[i] = 1;
        }
      }
    }
    for (int r = 0; r < kGemmOperands; ++r)
      if (is_io(*refs[r])) {
        *slots[r] = nullptr; // forces the first run to patch (and the graph to be built with it)
        ctx.patches.push_back({slots[r], refs[r]->space, refs[r]->index, refs[r]->offset, step});
      }
  }
  if (scratch) {
    (void)cudaStreamSynchronize(ctx.own_stream);
    (void)cudaFree(scratch);
  }
  return status;
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
    // Zeroed so state kept in the arena (KV cache) starts defined.
    if ((err = cudaMemsetAsync(ctx->arena, 0, p.arena_bytes, ctx->own_stream)) != cudaSuccess)
      return fail_cuda(err, "clearing the activation arena");
  }
  sinter_status s = build_kernels(*ctx);
  if (s != SINTER_OK)
    return s;
  if ((s = prepare_launches(*ctx)) != SINTER_OK)
    return s;
  if (!ctx->gemms.empty()) {
    if ((err = cudaMalloc(&ctx->workspace, kWorkspaceBytes)) != cudaSuccess)
      return fail_cuda(err, "allocating the cuBLASLt workspace");
    cublasStatus_t st = cublasLtCreate(&ctx->lt);
    if (st != CUBLAS_STATUS_SUCCESS)
      return fail(st == CUBLAS_STATUS_ALLOC_FAILED ? SINTER_OUT_OF_MEMORY : SINTER_CUDA_ERROR,
                  "cublasLtCreate: %s", cublasLtGetStatusName(st));
    if ((s = build_gemms(*ctx)) != SINTER_OK)
      return s;
  }
  ctx->checked_inputs.assign(p.num_inputs, nullptr);
  ctx->checked_outputs.assign(p.num_outputs, nullptr);
  ctx->step_dirty.assign(ctx->steps.size(), 1);
  ctx->nodes.assign(ctx->steps.size(), nullptr);
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
