// sinter_context_reset_state: zeroes a context's state block (every KV cache) so the next run
// starts a new sequence, without recreating the context.
#include "context.h"

#include "error.h"

namespace sinter::rt {
namespace {

sinter_status reset_state(sinter_context *ctx, void *cuda_stream) {
  if (!ctx)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_context_reset_state: context is null");
  // A run of another thread may be enqueueing launches that read the state: same rule as run.
  BusyGuard busy(ctx->busy);
  if (!busy.acquired())
    return fail(SINTER_BUSY,
                "sinter_context_reset_state: the context is in use by another thread");
  const uint64_t bytes = ctx->model->program->state_bytes;
  if (bytes == 0)
    return SINTER_OK;
  DeviceGuard guard(ctx->model->device);
  if (guard.error() != cudaSuccess)
    return fail_cuda(guard.error(), "selecting the model's device");
  // Asynchronous on the caller's stream, so it is ordered after the runs queued there and
  // before the next ones; a graph-mode context's graphs keep pointing at the same block.
  cudaError_t err =
      cudaMemsetAsync(ctx->state, 0, bytes, static_cast<cudaStream_t>(cuda_stream));
  if (err != cudaSuccess)
    return fail_cuda(err, "sinter_context_reset_state");
  // The sampling parameters survive a reset; the run counter and the seen tokens do not.
  return upload_sampling(*ctx, static_cast<cudaStream_t>(cuda_stream));
}

} // namespace
} // namespace sinter::rt

extern "C" SINTER_API sinter_status sinter_context_reset_state(sinter_context *ctx,
                                                               void *cuda_stream) {
  SINTER_API_BEGIN
  return sinter::rt::reset_state(ctx, cuda_stream);
  SINTER_API_END
}
