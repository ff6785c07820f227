// sinter_model_has_sampler and sinter_context_set_sampling (ABI 1.4): the sampling parameters
// of a library compiled with --sample live in its ".sampling" state region (one
// sinter::kernels::SamplingState, launch_params.h), which the sample_tokens kernel reads at
// every run, so CUDA graph replays see new values without a rebuild.
#include "context.h"

#include "error.h"

#include <cmath>
#include <cstddef>
#include <cstring>

namespace sinter::rt {

const sinter_state_info *sampling_region(const sinter_program &p) {
  for (uint32_t i = 0; i < p.num_states; ++i)
    if (p.states[i].name && std::strcmp(p.states[i].name, sinter::kernels::kSamplingStateRegion) == 0 &&
        p.states[i].bytes == sizeof(sinter::kernels::SamplingState))
      return &p.states[i];
  return nullptr;
}

sinter_status upload_sampling(sinter_context &ctx, cudaStream_t stream) {
  const sinter_state_info *region = sampling_region(*ctx.model->program);
  if (!region || !ctx.sampling_set)
    return SINTER_OK;
  // Pageable source: the call returns once the bytes are staged, so ctx.sampling may change
  // right after; the copy still runs in stream order.
  cudaError_t err = cudaMemcpyAsync(static_cast<char *>(ctx.state) + region->offset,
                                    &ctx.sampling, sizeof ctx.sampling, cudaMemcpyHostToDevice,
                                    stream);
  return err == cudaSuccess ? SINTER_OK : fail_cuda(err, "writing the sampling parameters");
}

sinter_status check_sampling_params(const sinter_sampling_params *params) {
  if (!params)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_context_set_sampling: params is null");
  constexpr size_t kNeeded = offsetof(sinter_sampling_params, seed) + sizeof(params->seed);
  if (params->struct_size < kNeeded)
    return fail(SINTER_INVALID_ARGUMENT,
                "sinter_context_set_sampling: struct_size %u is smaller than the %zu bytes of "
                "ABI 1.4's sinter_sampling_params",
                params->struct_size, kNeeded);
  if (!std::isfinite(params->temperature) || params->temperature < 0.f)
    return fail(SINTER_INVALID_ARGUMENT,
                "sinter_context_set_sampling: temperature must be finite and >= 0 (0: greedy), "
                "got %g", double(params->temperature));
  if (params->top_k < 0)
    return fail(SINTER_INVALID_ARGUMENT,
                "sinter_context_set_sampling: top_k must be >= 0 (0: off), got %d", params->top_k);
  if (!(params->top_p > 0.f && params->top_p <= 1.f))
    return fail(SINTER_INVALID_ARGUMENT,
                "sinter_context_set_sampling: top_p must be in (0, 1] (1: off), got %g",
                double(params->top_p));
  if (!std::isfinite(params->repetition_penalty) || params->repetition_penalty <= 0.f)
    return fail(SINTER_INVALID_ARGUMENT,
                "sinter_context_set_sampling: repetition_penalty must be finite and > 0 (1: "
                "off), got %g", double(params->repetition_penalty));
  return SINTER_OK;
}

namespace {

sinter_status set_sampling(sinter_context *ctx, const sinter_sampling_params *params,
                           void *cuda_stream) {
  if (!ctx)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_context_set_sampling: context is null");
  if (sinter_status status = check_sampling_params(params); status != SINTER_OK)
    return status;
  if (!sampling_region(*ctx->model->program))
    return fail(SINTER_INVALID_ARGUMENT,
                "sinter_context_set_sampling: the library was compiled without --sample (it has "
                "no next_token output)");
  BusyGuard busy(ctx->busy);
  if (!busy.acquired())
    return fail(SINTER_BUSY, "sinter_context_set_sampling: the context is in use by another "
                             "thread");
  DeviceGuard guard(ctx->model->device);
  if (guard.error() != cudaSuccess)
    return fail_cuda(guard.error(), "selecting the model's device");
  sinter::kernels::SamplingState s{};
  s.temperature = params->temperature;
  s.top_k = params->top_k;
  s.top_p = params->top_p;
  s.repetition_penalty = params->repetition_penalty;
  s.seed = params->seed;
  ctx->sampling = s;
  ctx->sampling_set = true;
  return upload_sampling(*ctx, static_cast<cudaStream_t>(cuda_stream));
}

} // namespace
} // namespace sinter::rt

extern "C" {

SINTER_API int sinter_model_has_sampler(const sinter_model *model) {
  if (!model) {
    sinter::rt::fail(SINTER_INVALID_ARGUMENT, "sinter_model_has_sampler: model is null");
    return 0;
  }
  return sinter::rt::sampling_region(*model->program) != nullptr;
}

SINTER_API sinter_status sinter_context_set_sampling(sinter_context *ctx,
                                                     const sinter_sampling_params *params,
                                                     void *cuda_stream) {
  SINTER_API_BEGIN
  return sinter::rt::set_sampling(ctx, params, cuda_stream);
  SINTER_API_END
}

} // extern "C"
