// Device helpers of the `generate` example (generate_kernels.cu), callable from plain C++.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

enum class LogitsType { f32, f16, bf16 };

// Enqueues one greedy step on `stream`: argmax over the `n` logits at `row` (ties: the lowest
// index; NaN wins, as torch.argmax), written to *ids (the decode entry's input_ids) and
// *token_out; then *pos = set_pos when set_pos >= 0, else *pos + 1 (the decode entry's
// cache_position). All pointers are device memory.
cudaError_t launch_argmax_step(const void *row, LogitsType type, int64_t n, int64_t *ids,
                               int64_t *token_out, int64_t *pos, int64_t set_pos,
                               cudaStream_t stream);
