// The tanh approximation of GeLU, as exporters decompose it, raised to one
// `sinter.unary "gelu_tanh"`, and its exact (erf) form to one `sinter.unary "gelu"`: the
// generated kernels then evaluate it in f32 from the exact constants (PyTorch's gelu does),
// and sinter-fuse-linear-swiglu / -activation can take it into a linear's epilogue.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace sinter {
#define GEN_PASS_DEF_SINTERRAISEGELUTANH
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kCubeCoefficient = 0.044715;

/// A constant of a 16-bit export is rounded to its type: accept 2^-7 relative.
bool near(double value, double expected) {
  return std::fabs(value - expected) <= std::fabs(expected) * 0x1p-7;
}

/// v as a product: the constant factor and the other factors (a tree of Muls of v's type,
/// either operand order), and the Muls in `ops` when given.
struct Product {
  double constant = 1;
  SmallVector<Value> factors;
  // Past kMaxTerms terms the walk stops (a Mul DAG such as x_i+1 = x_i * x_i would take
  // exponential time), and the product matches nothing.
  static constexpr int kMaxTerms = 16;
  int terms = 0;
  bool truncated() const { return terms > kMaxTerms; }
};
void collectProduct(Value v, Type type, Product &p, SmallVector<Operation *> *ops = nullptr) {
  if (++p.terms > Product::kMaxTerms)
    return;
  if (auto mul = v.getDefiningOp<MulOp>(); mul && mul.getType() == type) {
    if (ops)
      ops->push_back(mul);
    collectProduct(mul.getLhs(), type, p, ops);
    collectProduct(mul.getRhs(), type, p, ops);
    return;
  }
  if (std::optional<double> c = scalarConstant(v)) {
    p.constant *= *c;
    return;
  }
  p.factors.push_back(v);
}

/// Whether `v` is Pow(x, 3) (x * x * x is flattened into the surrounding product instead).
bool isCubePow(Value v, Value x) {
  auto pow = v.getDefiningOp<PowOp>();
  std::optional<double> e = pow ? scalarConstant(pow.getRhs()) : std::nullopt;
  return pow && pow.getLhs() == x && e && *e == 3.0;
}

/// Whether `v` is sqrt(2/pi) * (x + 0.044715 * x^3), returning x.
Value matchTanhArgument(Value v, Type type) {
  Product p;
  collectProduct(v, type, p);
  if (p.truncated() || !near(p.constant, kSqrt2OverPi) || p.factors.size() != 1)
    return {};
  auto sum = p.factors[0].getDefiningOp<AddOp>();
  if (!sum || sum.getType() != type)
    return {};
  for (int side = 0; side < 2; ++side) {
    Value x = sum->getOperand(side);
    Product cubic;
    collectProduct(sum->getOperand(1 - side), type, cubic);
    if (cubic.truncated() || !near(cubic.constant, kCubeCoefficient))
      continue;
    if (cubic.factors.size() == 1 && isCubePow(cubic.factors[0], x))
      return x;
    if (cubic.factors.size() == 3 && llvm::all_of(cubic.factors, [&](Value f) { return f == x; }))
      return x;
  }
  return {};
}

/// Whether `v` is 1 + fn(a) (either order) with fn the unary `fn` and a an argument
/// `matchArgument` takes, returning its x.
Value matchOnePlus(Value v, Type type, StringRef fn, Value (*matchArgument)(Value, Type)) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add || add.getType() != type)
    return {};
  for (int side = 0; side < 2; ++side) {
    std::optional<double> one = scalarConstant(add->getOperand(1 - side));
    auto inner = add->getOperand(side).getDefiningOp<UnaryFnOp>();
    if (one && *one == 1.0 && inner && inner.getFn() == fn && inner.getType() == type)
      if (Value x = matchArgument(inner.getInput(), type))
        return x;
  }
  return {};
}

constexpr double kSqrtHalf = 0.70710678118654752440;

/// Whether `v` is x / sqrt(2) or x * (1 / sqrt(2)) (either order), returning x.
Value matchErfArgument(Value v, Type type) {
  if (auto div = v.getDefiningOp<DivOp>(); div && div.getType() == type) {
    std::optional<double> c = scalarConstant(div.getRhs());
    return c && near(*c, 1.0 / kSqrtHalf) ? div.getLhs() : Value();
  }
  Product p;
  collectProduct(v, type, p);
  return !p.truncated() && p.factors.size() == 1 && near(p.constant, kSqrtHalf) ? p.factors[0]
                                                                                : Value();
}

/// 0.5 * x * (1 + inner(x)), any association and order of the products -> unary gelu(x):
/// with inner tanh(sqrt(2/pi) * (x + 0.044715 * x^3)) (x^3 as a Pow or a product) the
/// approximation, "gelu_tanh"; with erf(x / sqrt(2)) the exact form, "gelu" (GPT-NeoX's and
/// BERT's).
struct RaiseGelu : OpRewritePattern<MulOp> {
  RaiseGelu(MLIRContext *context, StringRef inner, Value (*matchArgument)(Value, Type),
            StringRef gelu)
      : OpRewritePattern(context), inner(inner), matchArgument(matchArgument), gelu(gelu) {}
  StringRef inner;
  Value (*matchArgument)(Value, Type);
  StringRef gelu;

  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isa<FloatType>(cast<ShapedType>(type).getElementType()))
      return rewriter.notifyMatchFailure(op, "not a float product");
    Product p;
    SmallVector<Operation *> ops;
    collectProduct(op.getResult(), type, p, &ops);
    if (p.truncated() || p.factors.size() != 2 || !near(p.constant, 0.5))
      return rewriter.notifyMatchFailure(op, "not 0.5 times two factors");
    for (int side = 0; side < 2; ++side) {
      Value x = p.factors[side];
      if (x.getType() != type || matchOnePlus(p.factors[1 - side], type, inner, matchArgument) != x)
        continue;
      SmallVector<Location> locs;
      for (Operation *matched : ops)
        locs.push_back(matched->getLoc());
      Value result = UnaryFnOp::create(rewriter, rewriter.getFusedLoc(locs), type, x,
                                       rewriter.getStringAttr(gelu), rewriter.getF32FloatAttr(0),
                                       rewriter.getF32FloatAttr(0));
      rewriter.replaceOp(op, result);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not x times 1 + " + inner + " of a GeLU argument");
  }
};

struct RaiseGeluTanhPass : sinter::impl::SinterRaiseGeluTanhBase<RaiseGeluTanhPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseGelu>(&getContext(), "tanh", matchTanhArgument, "gelu_tanh");
    patterns.add<RaiseGelu>(&getContext(), "erf", matchErfArgument, "gelu");
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
