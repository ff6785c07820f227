#ifndef SINTER_PASSES_KERNELCACHE_H
#define SINTER_PASSES_KERNELCACHE_H

#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "launch_params.h"

namespace sinter {

/// Whether `write` updates a cache the fused KV kernels (kv_cache_write, attention_decode)
/// address: bf16 [batch, heads, length, head_dim] written along the length (every sequence of
/// the batch at the same positions, as the one `positions` operand says). The graph phase
/// (sinter-expand-attention) and the launch lowering decide with this one test.
inline bool isKernelCache(graph::CacheWriteOp write) {
  auto type = write.getState().getType();
  return write.getAxis() == 2 && type.getRank() == 4 && type.getDimSize(0) >= 1 &&
         type.getDimSize(0) <= kernels::kMaxGridYZ && type.getElementType().isBF16();
}

} // namespace sinter

#endif
