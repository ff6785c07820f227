#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFORMLINEAR
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

bool isConstant(Value v) { return v.getDefiningOp<ConstantOp>() != nullptr; }

/// matmul(x, W) with W a constant [K, N] is a linear layer.
struct MatMulToLinear : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op, PatternRewriter &rewriter) const override {
    if (!isConstant(op.getRhs()) || op.getRhs().getType().getRank() != 2 ||
        op.getLhs().getType().getRank() < 1)
      return rewriter.notifyMatchFailure(op, "rhs is not a constant matrix");
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), op.getLhs(), op.getRhs(), Value(),
                                          Value());
    return success();
  }
};

/// linear(x, W) + b with b a constant broadcast along the last dimension only.
struct FuseBiasAdd : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto linear = op->getOperand(side).getDefiningOp<LinearOp>();
      auto bias = op->getOperand(1 - side).getDefiningOp<ConstantOp>();
      if (!linear || !bias || linear.getBias() || linear.getResidual() || !linear->hasOneUse() ||
          linear.getType() != op.getType())
        continue;
      auto biasType = cast<RankedTensorType>(bias.getType());
      int64_t n = linear.getType().getShape().back();
      if (biasType.getNumElements() != n || biasType.getRank() == 0 ||
          biasType.getShape().back() != n)
        continue;
      auto flat = RankedTensorType::get({n}, biasType.getElementType());
      auto dense = dyn_cast<DenseElementsAttr>(bias.getValue());
      if (!dense)
        continue;
      Value flatBias = ConstantOp::create(rewriter, bias.getLoc(), dense.reshape(flat));
      Location loc = rewriter.getFusedLoc({linear.getLoc(), op.getLoc()});
      Value fused = LinearOp::create(rewriter, loc, op.getType(), linear.getInput(),
                                     linear.getWeight(), flatBias, Value());
      rewriter.replaceOp(op, fused);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a linear plus a constant bias");
  }
};

/// A 2-D linear whose one user views its [rows, N] result as [..., N] (rows = the product of
/// the leading dimensions) is that linear over the [..., K] view of its input: a Gemm-based
/// export (GPT-2's Conv1D layers: flatten, addmm, unflatten) in the [batch, tokens, features]
/// form the later fusions and the QKV head split read.
struct UnflattenLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op, PatternRewriter &rewriter) const override {
    if (op.getType().getRank() != 2 || !op->hasOneUse())
      return rewriter.notifyMatchFailure(op, "not a 2-D linear with one user");
    auto unflatten = dyn_cast<ReshapeOp>(*op->getUsers().begin());
    ArrayRef<int64_t> viewed = unflatten ? unflatten.getType().getShape() : ArrayRef<int64_t>();
    int64_t rows = op.getType().getDimSize(0), n = op.getType().getDimSize(1);
    if (viewed.size() < 3 || viewed.back() != n ||
        llvm::product_of(viewed.drop_back()) != rows)
      return rewriter.notifyMatchFailure(op, "the result is not viewed as [..., N]");
    SmallVector<int64_t> inShape(viewed.drop_back());
    inShape.push_back(op.getInput().getType().getShape().back());
    auto inType = RankedTensorType::get(inShape, op.getInput().getType().getElementType());
    auto shapeType = RankedTensorType::get({(int64_t)inShape.size()}, rewriter.getI64Type());
    Location loc = op.getLoc();
    // The view of the flattened tensor's source, when it is a reshape (as it usually is).
    Value source = op.getInput();
    if (auto flatten = source.getDefiningOp<ReshapeOp>())
      source = flatten.getInput();
    Value input = ReshapeOp::create(
        rewriter, loc, inType, source,
        ConstantOp::create(rewriter, loc, DenseElementsAttr::get(shapeType, ArrayRef(inShape))));
    auto linear = LinearOp::create(rewriter, rewriter.getFusedLoc({loc, unflatten.getLoc()}),
                                   unflatten.getType(), input, op.getWeight(), op.getBias(),
                                   op.getResidual());
    linear->setAttrs(op->getAttrs());
    rewriter.replaceOp(unflatten, linear.getResult());
    rewriter.eraseOp(op);
    return success();
  }
};

struct FormLinearPass : sinter::impl::SinterFormLinearBase<FormLinearPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MatMulToLinear, FuseBiasAdd, UnflattenLinear>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
