// What the prompt attention kernels take, asked by the raising (sinter-raise-attention) and by
// sinter-expand-attention, which must agree on it.
#ifndef SINTER_PASSES_GRAPH_TRANSFORMS_ATTENTIONKERNELFIT_H
#define SINTER_PASSES_GRAPH_TRANSFORMS_ATTENTIONKERNELFIT_H

#include "launch_params.h"

#include <cstdint>

namespace sinter {

/// Whether attention_prefill holds a head's `seq` keys and values of `headDim` elements of
/// `elementBytes` in a block's shared memory.
inline bool prefillKernelFits(int64_t seq, int64_t headDim, int elementBytes,
                              int64_t sharedMemoryPerBlock) {
  // The first bound keeps attention_prefill_shared_bytes' int arithmetic from overflowing.
  return 2 * seq * (headDim + 2) * elementBytes <= sharedMemoryPerBlock &&
         int64_t(kernels::attention_prefill_shared_bytes(int(seq), int(headDim), elementBytes)) <=
             sharedMemoryPerBlock;
}

/// Whether flash_attention tiles heads of `headDim` elements of `elementBytes`.
inline bool flashKernelTiles(int64_t headDim, int elementBytes) {
  return headDim <= 256 && kernels::flash_attention_tiles_head(int(headDim), elementBytes);
}

/// Whether flash_attention takes bf16 heads of `headDim` over `seq` keys in the target's shared
/// memory per block (its default tiling): soft-capped prompts have no other kernel.
inline bool flashKernelFits(int64_t seq, int64_t headDim, int64_t sharedMemoryPerBlock) {
  return flashKernelTiles(headDim, 2) && seq <= INT32_MAX &&
         int64_t(kernels::flash_attention_shared_bytes(
             kernels::flash_attention_default_tiling(int(seq), int(headDim)), int(headDim))) <=
             sharedMemoryPerBlock;
}

} // namespace sinter

#endif
