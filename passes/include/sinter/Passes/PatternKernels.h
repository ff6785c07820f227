// Which graph ops the pattern tier's kernels take as they are: the graph phase leaves these
// out of fusion groups, and the launch lowering gives the others to the generic tier, so the
// two always agree.
#ifndef SINTER_PASSES_PATTERNKERNELS_H
#define SINTER_PASSES_PATTERNKERNELS_H

#include "sinter/Dialect/Graph/IR/GraphOps.h"

namespace sinter {

/// An RMS normalization the rms_norm kernel computes: bf16 [M, D] over the last axis.
bool rmsNormHasKernel(graph::RMSNormalizationOp norm);
/// An embedding lookup the embedding_gather kernel computes: rows of a constant 2-D table at
/// i64 ids.
bool gatherHasKernel(graph::GatherOp gather);

} // namespace sinter

#endif
