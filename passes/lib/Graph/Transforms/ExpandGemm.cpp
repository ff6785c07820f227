#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"
#include "sinter/Passes/RewriteOnly.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTEREXPANDGEMM
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

struct ExpandGemm : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp gemm, PatternRewriter &rewriter) const override {
    Location loc = gemm.getLoc();
    auto type = gemm.getType();
    Type et = type.getElementType();
    if (!isa<FloatType>(et))
      return rewriter.notifyMatchFailure(gemm, "integer Gemm");
    auto transposed = [&](Value v, bool transpose) -> Value {
      if (!transpose)
        return v;
      auto t = cast<RankedTensorType>(v.getType());
      auto swapped = RankedTensorType::get({t.getDimSize(1), t.getDimSize(0)}, t.getElementType());
      return TransposeOp::create(rewriter, loc, swapped, v, rewriter.getDenseI64ArrayAttr({1, 0}));
    };
    auto scalar = [&](float value) -> Value {
      auto scalarType = RankedTensorType::get({}, et);
      return ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(scalarType, rewriter.getFloatAttr(et, value)));
    };
    Value a = transposed(gemm.getA(), gemm.getTransA());
    Value b = transposed(gemm.getB(), gemm.getTransB());
    Value y = MatMulOp::create(rewriter, loc, type, a, b);
    float alpha = gemm.getAlpha().convertToFloat(), beta = gemm.getBeta().convertToFloat();
    if (alpha != 1.0f)
      y = MulOp::create(rewriter, loc, type, y, scalar(alpha));
    if (Value c = gemm.getC(); c && beta != 0.0f) {
      if (beta != 1.0f)
        c = MulOp::create(rewriter, loc, c.getType(), c, scalar(beta));
      y = AddOp::create(rewriter, loc, type, y, c);
    }
    rewriter.replaceOp(gemm, y);
    return success();
  }
};

struct ExpandGemmPass : sinter::impl::SinterExpandGemmBase<ExpandGemmPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandGemm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     sinter::rewriteOnlyConfig())))
      signalPassFailure();
  }
};

} // namespace
