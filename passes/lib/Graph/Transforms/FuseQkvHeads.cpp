// The head split of a fused QKV projection, as one sinter.split_qkv_heads (see Passes.td): the
// lowering reads the columns each attention operand lives in off that op instead of matching
// the slice / reshape / transpose / rope chains again.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"
#include "sinter/Passes/QkvHeadChains.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSEQKVHEADS
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

struct FuseQkvHeadsPass : sinter::impl::SinterFuseQkvHeadsBase<FuseQkvHeadsPass> {
  void runOnOperation() override {
    SmallVector<LinearOp> linears;
    getOperation().walk([&](LinearOp linear) { linears.push_back(linear); });
    for (LinearOp linear : linears) {
      std::optional<SmallVector<sinter::QkvHeadChain, 3>> chains = sinter::qkvHeadChains(linear);
      if (!chains)
        continue;
      SmallVector<Location> locs;
      for (sinter::QkvHeadChain &c : *chains)
        for (Operation *op : {c.slice.getOperation(), c.reshape.getOperation(),
                              c.transpose.getOperation(), c.rope.getOperation()})
          if (op)
            locs.push_back(op->getLoc());
      sinter::QkvHeadChain &first = (*chains)[0];
      Value cos = first.rope ? first.rope.getCos() : Value();
      Value sin = first.rope ? first.rope.getSin() : Value();
      // The split goes before the first reader of any head; the tables (a decode step's
      // lookup at the cache position may come after the projection) must be there by then.
      Operation *firstReader = nullptr;
      for (sinter::QkvHeadChain &c : *chains)
        for (Operation *user : c.head().getUsers())
          if (!firstReader || user->isBeforeInBlock(firstReader))
            firstReader = user;
      auto definedBefore = [&](Value v) {
        Operation *def = v ? v.getDefiningOp() : nullptr;
        return !def || def->isBeforeInBlock(firstReader);
      };
      if (!definedBefore(cos) || !definedBefore(sin))
        continue;
      OpBuilder builder(firstReader);
      auto split =
          SplitQkvHeadsOp::create(builder, builder.getFusedLoc(locs), (*chains)[0].head().getType(),
                                  (*chains)[1].head().getType(), (*chains)[2].head().getType(),
                                  linear.getResult(), cos, sin);
      for (auto [i, c] : llvm::enumerate(*chains)) {
        c.head().replaceAllUsesWith(split->getResult(i));
        for (Operation *op : {c.rope.getOperation(), c.transpose.getOperation(),
                              c.reshape.getOperation(), c.slice.getOperation()})
          if (op)
            op->erase();
      }
    }
  }
};

} // namespace
