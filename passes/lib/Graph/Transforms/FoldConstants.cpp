#include "sinter/Passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFOLDCONSTANTS
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;

namespace {
struct FoldConstantsPass : sinter::impl::SinterFoldConstantsBase<FoldConstantsPass> {
  void runOnOperation() override {
    // The greedy driver with no patterns folds every op through its folder, materializes
    // results as sinter.constant, and erases what is left dead.
    RewritePatternSet patterns(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
