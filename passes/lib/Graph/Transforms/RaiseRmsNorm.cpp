#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERRAISERMSNORM
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// The matched decomposition, innermost first: xf^2 (pow or mul), mean, + eps, sqrt,
/// reciprocal, xf * r.
struct RmsParts {
  Value x;  // the input before any cast to f32
  Value xf; // the f32 input the statistics are computed on
  double epsilon = 0;
  SmallVector<Operation *> ops;
};

/// xf * reciprocal(sqrt(reduce_mean(xf^2, last) + eps)) (either order of each commutative
/// op; the reciprocal also as 1 / sqrt(...)), or xf / sqrt(...), computed in f32.
std::optional<RmsParts> matchNormalized(Value n) {
  Operation *normOp = n.getDefiningOp();
  if (!normOp || !isa<MulOp, DivOp>(normOp))
    return std::nullopt;
  auto type = cast<RankedTensorType>(n.getType());
  if (!type.getElementType().isF32() || type.getRank() < 1)
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    if (isa<DivOp>(normOp) && side == 1)
      break;
    RmsParts parts;
    parts.xf = normOp->getOperand(side);
    Value r = normOp->getOperand(1 - side);
    if (parts.xf.getType() != type)
      continue;
    Value sqrtIn;
    SmallVector<Operation *> chain{normOp};
    if (isa<MulOp>(normOp)) {
      // The reciprocal as Reciprocal(s) or as 1 / s (the TorchScript exporter's, optimum's).
      Operation *recip = r.getDefiningOp<ReciprocalOp>();
      Value recipIn = recip ? recip->getOperand(0) : Value();
      if (auto div = r.getDefiningOp<DivOp>()) {
        std::optional<double> one = scalarConstant(div.getLhs());
        if (one && *one == 1.0)
          recip = div, recipIn = div.getRhs();
      }
      auto sqrt = recipIn ? recipIn.getDefiningOp<SqrtOp>() : SqrtOp();
      if (!sqrt)
        continue;
      chain.append({recip, sqrt});
      sqrtIn = sqrt.getInput();
    } else {
      auto sqrt = r.getDefiningOp<SqrtOp>();
      if (!sqrt)
        continue;
      chain.push_back(sqrt);
      sqrtIn = sqrt.getInput();
    }
    auto add = sqrtIn.getDefiningOp<AddOp>();
    if (!add)
      continue;
    for (int addSide = 0; addSide < 2; ++addSide) {
      auto mean = add->getOperand(addSide).getDefiningOp<ReduceMeanOp>();
      std::optional<double> eps = scalarConstant(add->getOperand(1 - addSide));
      if (!mean || !eps || !mean.getKeepdims() ||
          mean.getAxes() != ArrayRef<int64_t>{type.getRank() - 1} ||
          add.getType() != mean.getType())
        continue;
      Value sq = mean.getInput();
      Operation *square = sq.getDefiningOp();
      bool isSquare = false;
      if (auto pow = dyn_cast_or_null<PowOp>(square)) {
        std::optional<double> e = scalarConstant(pow.getRhs());
        isSquare = pow.getLhs() == parts.xf && e && *e == 2.0;
      } else if (auto mul = dyn_cast_or_null<MulOp>(square)) {
        isSquare = mul.getLhs() == parts.xf && mul.getRhs() == parts.xf;
      }
      if (!isSquare)
        continue;
      parts.epsilon = *eps;
      parts.ops = chain;
      parts.ops.append({add, mean, square});
      parts.x = parts.xf;
      if (auto cast = parts.xf.getDefiningOp<CastOp>()) {
        if (isa<FloatType>(cast.getInput().getType().getElementType())) {
          parts.x = cast.getInput();
          parts.ops.push_back(cast);
        }
      }
      return parts;
    }
  }
  return std::nullopt;
}

/// [Cast<T>](normalized(x)) * w with w a constant of D elements over the last axis ->
/// rms_normalization(x, w).
struct RaiseRmsNorm : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    auto type = op.getType();
    if (type.getRank() < 1)
      return rewriter.notifyMatchFailure(op, "rank 0");
    int64_t d = type.getShape().back();
    for (int side = 0; side < 2; ++side) {
      auto weight = op->getOperand(side).getDefiningOp<ConstantOp>();
      Value a = op->getOperand(1 - side);
      if (!weight)
        continue;
      auto weightType = cast<RankedTensorType>(weight.getType());
      if (weightType.getRank() < 1 || weightType.getShape().back() != d ||
          weightType.getNumElements() != d || weightType.getElementType() != type.getElementType())
        continue;
      SmallVector<Operation *> ops{op};
      Value n = a;
      if (auto cast = a.getDefiningOp<CastOp>()) {
        n = cast.getInput();
        ops.push_back(cast);
      }
      std::optional<RmsParts> parts = matchNormalized(n);
      if (!parts)
        continue;
      auto inType = cast<RankedTensorType>(parts->x.getType());
      if (inType.getShape() != type.getShape() || a.getType() != type)
        continue;
      ops.append(parts->ops);

      Value scale = weight;
      if (weightType.getRank() != 1) {
        auto dense = dyn_cast<DenseElementsAttr>(weight.getValue());
        if (!dense)
          continue;
        auto flat = RankedTensorType::get({d}, weightType.getElementType());
        scale = ConstantOp::create(rewriter, weight.getLoc(), dense.reshape(flat));
      }
      SmallVector<Location> locs;
      for (Operation *matched : ops)
        locs.push_back(matched->getLoc());
      Value norm = RMSNormalizationOp::create(
          rewriter, rewriter.getFusedLoc(locs), type, parts->x, scale,
          rewriter.getI64IntegerAttr(type.getRank() - 1),
          rewriter.getF32FloatAttr((float)parts->epsilon));
      rewriter.replaceOp(op, norm);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not an RMS normalization times a [D] weight");
  }
};

struct RaiseRmsNormPass : sinter::impl::SinterRaiseRmsNormBase<RaiseRmsNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseRmsNorm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
