#ifndef SINTER_PASSES_REWRITEONLY_H
#define SINTER_PASSES_REWRITEONLY_H

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {

/// The greedy driver applying a pass's patterns and nothing else: folding and constant CSE
/// stay with sinter-fold-constants and CSE, so a rewriting pass does only what it says.
inline mlir::GreedyRewriteConfig rewriteOnlyConfig() {
  mlir::GreedyRewriteConfig config;
  config.enableFolding(false).enableConstantCSE(false).setRegionSimplificationLevel(
      mlir::GreedySimplifyRegionLevel::Disabled);
  return config;
}

} // namespace sinter

#endif
