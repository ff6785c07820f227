// The head split of a fused QKV projection, as one sinter.split_qkv_heads (see Passes.td): the
// lowering reads the columns each attention operand lives in off that op instead of matching
// the slice / reshape / transpose / rope chains again.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSEQKVHEADS
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

Operation *singleUser(Value v) { return v.hasOneUse() ? *v.getUsers().begin() : nullptr; }

/// One head-split operand of attention: slice -> reshape [B, S, H, D] -> transpose
/// [0, 2, 1, 3] (-> rope) -> operand `operand` (0 q, 1 k, 2 v) of `attention`, a
/// fused_attention, or a decode_attention reading it through the cache write of its step.
struct HeadChain {
  SliceOp slice;
  ReshapeOp reshape;
  TransposeOp transpose;
  RopeOp rope;
  Operation *attention = nullptr;
  unsigned operand = 0;
  int64_t begin = 0, end = 0;
  Value head() { return rope ? rope.getResult() : transpose.getResult(); }
};

std::optional<HeadChain> matchHeadChain(SliceOp slice) {
  HeadChain c;
  c.slice = slice;
  auto cols = lastAxisColumns(slice);
  if (!cols)
    return std::nullopt;
  std::tie(c.begin, c.end) = *cols;
  c.reshape = dyn_cast_or_null<ReshapeOp>(singleUser(slice.getResult()));
  if (!c.reshape || c.reshape.getType().getRank() != 4)
    return std::nullopt;
  c.transpose = dyn_cast_or_null<TransposeOp>(singleUser(c.reshape.getResult()));
  if (!c.transpose || c.transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3})
    return std::nullopt;
  if (auto rope = dyn_cast_or_null<RopeOp>(singleUser(c.transpose.getResult()))) {
    if (rope.getInput() != c.transpose.getResult())
      return std::nullopt;
    c.rope = rope;
  }
  auto setAttention = [&](Operation *op, unsigned operand) {
    if (c.attention && c.attention != op)
      return false;
    c.attention = op;
    c.operand = operand;
    return true;
  };
  bool cacheWritten = false;
  for (OpOperand &use : c.head().getUses()) {
    Operation *user = use.getOwner();
    unsigned n = use.getOperandNumber();
    if (isa<FusedAttentionOp>(user) && n <= 2) {
      if (!setAttention(user, n))
        return std::nullopt;
    } else if (isa<DecodeAttentionOp>(user) && n == 0) {
      if (!setAttention(user, 0))
        return std::nullopt;
    } else if (auto write = dyn_cast<CacheWriteOp>(user); write && n == 1 && !cacheWritten) {
      cacheWritten = true;
      for (OpOperand &read : write.getResult().getUses())
        if (isa<DecodeAttentionOp>(read.getOwner()) &&
            (read.getOperandNumber() == 1 || read.getOperandNumber() == 2) &&
            !setAttention(read.getOwner(), read.getOperandNumber()))
          return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (!c.attention)
    return std::nullopt;
  return c;
}

/// The three head chains of `linear` when its output is exactly q | k | v of one attention,
/// in that column order and covering every column, with q and k rotated by one pair of tables
/// and v not, or none rotated; sorted by column.
std::optional<SmallVector<HeadChain, 3>> qkvChains(LinearOp linear) {
  // The kernels write the rotated columns in the epilogue that a bias or residual would take,
  // and a SwiGLU result has no q | k | v columns.
  if (linear.getBias() || linear.getResidual() || linear.getSiluMulPairs() ||
      !linear.getType().getElementType().isBF16() ||
      !linear.getWeight().getDefiningOp<ConstantOp>() || linear.getType().getRank() != 3)
    return std::nullopt;
  SmallVector<HeadChain, 3> chains;
  for (Operation *user : linear->getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    std::optional<HeadChain> chain = slice ? matchHeadChain(slice) : std::nullopt;
    if (!chain || chains.size() == 3)
      return std::nullopt;
    chains.push_back(*chain);
  }
  if (chains.size() != 3)
    return std::nullopt;
  llvm::sort(chains, [](const HeadChain &x, const HeadChain &y) { return x.begin < y.begin; });
  int64_t n = linear.getType().getDimSize(2);
  int64_t headDim = chains[0].reshape.getType().getDimSize(3);
  for (auto [i, c] : llvm::enumerate(chains))
    if (c.attention != chains[0].attention || c.operand != i ||
        c.reshape.getType().getDimSize(3) != headDim || c.begin != (i == 0 ? 0 : chains[i - 1].end))
      return std::nullopt;
  if (chains[2].end != n || chains[1].reshape.getType() != chains[2].reshape.getType())
    return std::nullopt;
  bool rotated = chains[0].rope && chains[1].rope && !chains[2].rope &&
                 chains[0].rope.getCos() == chains[1].rope.getCos() &&
                 chains[0].rope.getSin() == chains[1].rope.getSin();
  bool plain = !chains[0].rope && !chains[1].rope && !chains[2].rope;
  if (!rotated && !plain)
    return std::nullopt;
  return chains;
}

struct FuseQkvHeadsPass : sinter::impl::SinterFuseQkvHeadsBase<FuseQkvHeadsPass> {
  void runOnOperation() override {
    SmallVector<LinearOp> linears;
    getOperation().walk([&](LinearOp linear) { linears.push_back(linear); });
    for (LinearOp linear : linears) {
      std::optional<SmallVector<HeadChain, 3>> chains = qkvChains(linear);
      if (!chains)
        continue;
      SmallVector<Location> locs;
      for (HeadChain &c : *chains)
        for (Operation *op : {c.slice.getOperation(), c.reshape.getOperation(),
                              c.transpose.getOperation(), c.rope.getOperation()})
          if (op)
            locs.push_back(op->getLoc());
      HeadChain &first = (*chains)[0];
      Value cos = first.rope ? first.rope.getCos() : Value();
      Value sin = first.rope ? first.rope.getSin() : Value();
      // The split goes before the first reader of any head; the tables (a decode step's
      // lookup at the cache position may come after the projection) must be there by then.
      Operation *firstReader = nullptr;
      for (HeadChain &c : *chains)
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
