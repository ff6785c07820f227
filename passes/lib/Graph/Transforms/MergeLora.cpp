#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERMERGELORA
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

DenseElementsAttr constantOf(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  return c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
}

/// The adapter branch `s * ((x @ A) @ B)`: the two bias-free linears and the scale.
struct LoraBranch {
  LinearOp down, up;
  float scale = 1.0f;
  SmallVector<Operation *> ops;
};

std::optional<LoraBranch> matchBranch(Value v) {
  LoraBranch branch;
  if (auto mul = v.getDefiningOp<MulOp>()) {
    for (int side = 0; side < 2; ++side) {
      auto scale = constantOf(mul->getOperand(side));
      if (!scale || scale.getNumElements() != 1 || !isa<FloatType>(scale.getElementType()) ||
          !mul->getResult(0).hasOneUse())
        continue;
      branch.scale = readFloat32(scale)[0];
      branch.ops.push_back(mul);
      v = mul->getOperand(1 - side);
      break;
    }
    if (branch.ops.empty())
      return std::nullopt;
  }
  branch.up = v.getDefiningOp<LinearOp>();
  if (!branch.up || branch.up.getBias() || branch.up.getResidual() || !branch.up->hasOneUse())
    return std::nullopt;
  branch.down = branch.up.getInput().getDefiningOp<LinearOp>();
  if (!branch.down || branch.down.getBias() || branch.down.getResidual() ||
      !branch.down->hasOneUse())
    return std::nullopt;
  return branch;
}

struct MergeLoraBranch : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto base = op->getOperand(side).getDefiningOp<LinearOp>();
      auto branch = matchBranch(op->getOperand(1 - side));
      if (!base || base.getResidual() || !branch ||
          branch->down.getInput() != base.getInput() ||
          base.getType() != op.getType())
        continue;
      auto w = constantOf(base.getWeight()), a = constantOf(branch->down.getWeight()),
           b = constantOf(branch->up.getWeight());
      if (!w || !a || !b || !isa<FloatType>(w.getElementType()) ||
          !isa<FloatType>(a.getElementType()) || !isa<FloatType>(b.getElementType()))
        continue;
      auto wType = cast<RankedTensorType>(w.getType());
      int64_t k = wType.getDimSize(0), n = wType.getDimSize(1);
      int64_t r = cast<ShapedType>(a.getType()).getDimSize(1);
      // W' = W + s * (A @ B), accumulated in fp32 whatever the storage type.
      std::vector<float> merged = readFloat32(w), av = readFloat32(a), bv = readFloat32(b);
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < r; ++j) {
          float aij = branch->scale * av[i * r + j];
          const float *brow = &bv[j * n];
          float *out = &merged[i * n];
          for (int64_t c = 0; c < n; ++c)
            out[c] += aij * brow[c];
        }
      SmallVector<Location> locs = {base.getLoc(), branch->down.getLoc(), branch->up.getLoc(),
                                    op.getLoc()};
      for (Operation *extra : branch->ops)
        locs.push_back(extra->getLoc());
      Location loc = rewriter.getFusedLoc(locs);
      Value weight = ConstantOp::create(
          rewriter,
          rewriter.getFusedLoc({base.getWeight().getLoc(), branch->down.getWeight().getLoc(),
                                branch->up.getWeight().getLoc()}),
          fromFloat32(wType, merged));
      Value fused = LinearOp::create(rewriter, loc, op.getType(), base.getInput(), weight,
                                     base.getBias(), Value());
      rewriter.replaceOp(op, fused);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a linear plus a LoRA branch");
  }
};

struct MergeLoraPass : sinter::impl::SinterMergeLoraBase<MergeLoraPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MergeLoraBranch>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
