// Values with no elements fold away (see Passes.td): nothing downstream has to launch, index or
// allocate a zero-sized tensor.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"
#include "sinter/Passes/RewriteOnly.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace sinter {
#define GEN_PASS_DEF_SINTERFOLDEMPTYTENSORS
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

bool isEmpty(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getNumElements() == 0;
}

/// An op whose every result holds no elements: each result becomes an empty constant.
struct EmptyResultsToConstants : RewritePattern {
  explicit EmptyResultsToConstants(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (isa<ConstantOp>(op) || op->getNumResults() == 0 ||
        !isa<GraphDialect>(op->getDialect()) || !isMemoryEffectFree(op) ||
        !llvm::all_of(op->getResults(), isEmpty))
      return rewriter.notifyMatchFailure(op, "not a pure graph op with only empty results");
    SmallVector<Value> constants;
    for (Value result : op->getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      constants.push_back(ConstantOp::create(rewriter, op->getLoc(),
                                             DenseElementsAttr::get(type, ArrayRef<Attribute>())));
    }
    rewriter.replaceOp(op, constants);
    return success();
  }
};

/// The value a reduction of kind `kind` gives over no elements of type `type`: the identity
/// of its combining step (0 for sum, l1, l2 and sum_square, 1 for prod, the lowest value for
/// max, the highest for min, -inf for log_sum_exp, NaN for mean), or nullopt.
std::optional<Attribute> emptyReduction(StringRef kind, RankedTensorType type) {
  Type et = type.getElementType();
  if (auto ft = dyn_cast<FloatType>(et)) {
    const double inf = std::numeric_limits<double>::infinity();
    double value;
    if (kind == "sum" || kind == "l1" || kind == "l2" || kind == "sum_square")
      value = 0.0;
    else if (kind == "prod")
      value = 1.0;
    else if (kind == "max" || kind == "log_sum_exp")
      value = -inf;
    else if (kind == "min")
      value = inf;
    else if (kind == "mean")
      value = std::nan("");
    else
      return std::nullopt;
    return DenseElementsAttr::get(type, FloatAttr::get(ft, value));
  }
  auto it = dyn_cast<IntegerType>(et);
  if (!it)
    return std::nullopt;
  const unsigned width = it.getWidth();
  APInt value;
  if (kind == "sum" || kind == "l1" || kind == "sum_square")
    value = APInt(width, 0);
  else if (kind == "prod")
    value = APInt(width, 1);
  else if (kind == "max") // bool and unsigned: 0
    value = width == 1 || it.isUnsigned() ? APInt(width, 0) : APInt::getSignedMinValue(width);
  else if (kind == "min") // bool: true
    value = width == 1            ? APInt(1, 1)
            : it.isUnsigned()     ? APInt::getMaxValue(width)
                                  : APInt::getSignedMaxValue(width);
  else
    return std::nullopt;
  return DenseElementsAttr::get(type, IntegerAttr::get(it, value));
}

/// A reduction of an empty input to a non-empty result: the splat of its identity.
template <typename Reduce>
struct EmptyReductionToConstant : OpRewritePattern<Reduce> {
  using OpRewritePattern<Reduce>::OpRewritePattern;
  static StringRef kindOf(Reduce op) {
    if constexpr (std::is_same_v<Reduce, ReduceMeanOp>)
      return "mean";
    else
      return op.getKind();
  }
  LogicalResult matchAndRewrite(Reduce op, PatternRewriter &rewriter) const override {
    if (!isEmpty(op.getInput()) || isEmpty(op.getResult()))
      return rewriter.notifyMatchFailure(op, "not a reduction over no elements");
    std::optional<Attribute> value =
        emptyReduction(kindOf(op), cast<RankedTensorType>(op.getType()));
    if (!value)
      return rewriter.notifyMatchFailure(op, "no identity for this kind and type");
    rewriter.replaceOpWithNewOp<ConstantOp>(op, cast<ElementsAttr>(*value));
    return success();
  }
};

/// A concatenation drops its empty operands.
struct ConcatWithoutEmpty : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    SmallVector<Value> kept;
    for (Value input : op.getInputs())
      if (!isEmpty(input))
        kept.push_back(input);
    if (kept.size() == op.getInputs().size() || kept.empty())
      return rewriter.notifyMatchFailure(op, "no empty operand, or nothing else");
    if (kept.size() == 1 && kept[0].getType() == op.getType()) {
      rewriter.replaceOp(op, kept[0]);
      return success();
    }
    rewriter.replaceOpWithNewOp<ConcatOp>(op, op.getType(), kept, op.getAxisAttr());
    return success();
  }
};

/// A matrix product over K = 0: zeros.
struct EmptyMatMulToZeros : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op, PatternRewriter &rewriter) const override {
    if (!(isEmpty(op.getLhs()) || isEmpty(op.getRhs())) || isEmpty(op.getResult()))
      return rewriter.notifyMatchFailure(op, "not a product over K = 0");
    std::optional<Attribute> zero = emptyReduction("sum", op.getType());
    if (!zero)
      return rewriter.notifyMatchFailure(op, "no zero of this type");
    rewriter.replaceOpWithNewOp<ConstantOp>(op, cast<ElementsAttr>(*zero));
    return success();
  }
};

struct FoldEmptyTensorsPass : sinter::impl::SinterFoldEmptyTensorsBase<FoldEmptyTensorsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<EmptyResultsToConstants, EmptyReductionToConstant<ReduceOp>,
                 EmptyReductionToConstant<ReduceMeanOp>, ConcatWithoutEmpty, EmptyMatMulToZeros>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     sinter::rewriteOnlyConfig())))
      signalPassFailure();
  }
};

} // namespace
