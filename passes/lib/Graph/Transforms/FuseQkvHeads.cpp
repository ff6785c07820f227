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

/// A RoPE table computed at run time (a decode step's lookup at the one cache position) that a
/// batch of sequences shares: the projection kernels read one table row per token, so it is
/// broadcast to [B, 1, S, D] first. Constant tables, and tables with a row per token already,
/// stay as they are (the lowering repeats constants itself). The broadcast goes right after the
/// table, once for every projection of that shape (`made`).
Value perTokenTable(Value table, RankedTensorType qkvType, int64_t tableWidth,
                    llvm::DenseMap<std::pair<Value, Type>, Value> &made) {
  auto type = cast<RankedTensorType>(table.getType());
  int64_t batch = qkvType.getDimSize(0), seq = qkvType.getDimSize(1);
  if (table.getDefiningOp<ConstantOp>() || type.getNumElements() == batch * seq * tableWidth ||
      type.getRank() > 4)
    return table;
  SmallVector<int64_t> shape(4 - type.getRank(), 1);
  llvm::append_range(shape, type.getShape());
  if ((shape[0] != 1 && shape[0] != batch) || shape[1] != 1 ||
      (shape[2] != 1 && shape[2] != seq) || shape[3] != tableWidth)
    return table;
  SmallVector<int64_t> full = {batch, 1, seq, tableWidth};
  auto fullType = RankedTensorType::get(full, type.getElementType());
  Value &expanded = made[{table, fullType}];
  if (expanded)
    return expanded;
  OpBuilder builder(table.getContext());
  builder.setInsertionPointAfterValue(table);
  auto shapeType = RankedTensorType::get({4}, builder.getI64Type());
  Value target = ConstantOp::create(builder, table.getLoc(),
                                    DenseElementsAttr::get(shapeType, ArrayRef(full)));
  expanded = ExpandOp::create(builder, table.getLoc(), fullType, table, target);
  return expanded;
}

struct FuseQkvHeadsPass : sinter::impl::SinterFuseQkvHeadsBase<FuseQkvHeadsPass> {
  void runOnOperation() override {
    SmallVector<LinearOp> linears;
    getOperation().walk([&](LinearOp linear) { linears.push_back(linear); });
    llvm::DenseMap<std::pair<Value, Type>, Value> broadcastTables;
    for (LinearOp linear : linears) {
      std::optional<SmallVector<sinter::QkvHeadChain, 3>> chains = sinter::qkvHeadChains(linear);
      if (!chains)
        continue;
      SmallVector<Location> locs;
      for (sinter::QkvHeadChain &c : *chains)
        for (Operation *op : c.ops())
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
      if (cos) {
        auto qkvType = cast<RankedTensorType>(linear.getType());
        int64_t tableWidth = first.rope.rotaryDim(); // the head size, or fewer (partial rotary)
        cos = perTokenTable(cos, qkvType, tableWidth, broadcastTables);
        sin = perTokenTable(sin, qkvType, tableWidth, broadcastTables);
      }
      sinter::QkvHeadChain &second = (*chains)[1];
      RMSNormalizationOp qNorm = first.norm, kNorm = second.norm;
      if ((qNorm && !definedBefore(qNorm.getScale())) ||
          (kNorm && !definedBefore(kNorm.getScale())))
        continue;
      auto split = SplitQkvHeadsOp::create(
          builder, builder.getFusedLoc(locs), first.head().getType(), second.head().getType(),
          (*chains)[2].head().getType(), linear.getResult(), cos, sin,
          qNorm ? qNorm.getScale() : Value(), kNorm ? kNorm.getScale() : Value(),
          qNorm ? qNorm.getEpsilonAttr() : FloatAttr());
      for (auto [i, c] : llvm::enumerate(*chains)) {
        c.head().replaceAllUsesWith(split->getResult(i));
        SmallVector<Operation *, 6> ops = c.ops(); // (reverse() of a temporary would dangle)
        for (Operation *op : llvm::reverse(ops)) // each after its one user
          op->erase();
      }
    }
  }
};

} // namespace
