// Folders of the elementwise and data-movement primitives. They serve both the importer
// (which needs values of shape computations to type what follows) and the graph phase.
#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <cmath>

using namespace mlir;
using namespace sinter::graph;

std::optional<double> sinter::graph::scalarConstant(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c || cast<ShapedType>(c.getValue().getType()).getNumElements() != 1)
    return std::nullopt;
  std::optional<HostValues> values = readValues(c.getValue());
  if (!values || values->size() != 1 || !values->isFloat)
    return std::nullopt;
  return values->floats[0];
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult AddOp::fold(FoldAdaptor a) {
  return foldBinary(a.getLhs(), a.getRhs(), getType(), std::plus<double>(),
                    std::plus<int64_t>());
}
OpFoldResult SubOp::fold(FoldAdaptor a) {
  return foldBinary(a.getLhs(), a.getRhs(), getType(), std::minus<double>(),
                    std::minus<int64_t>());
}
OpFoldResult MulOp::fold(FoldAdaptor a) {
  return foldBinary(a.getLhs(), a.getRhs(), getType(), std::multiplies<double>(),
                    std::multiplies<int64_t>());
}
OpFoldResult DivOp::fold(FoldAdaptor a) {
  if (!a.getLhs() || !a.getRhs())
    return {};
  auto rhs = readValues(a.getRhs());
  if (rhs && !rhs->isFloat)
    for (int64_t v : rhs->ints)
      if (v == 0)
        return {};
  return foldBinary(a.getLhs(), a.getRhs(), getType(), std::divides<double>(),
                    [](int64_t x, int64_t y) { return x / y; });
}
OpFoldResult PowOp::fold(FoldAdaptor a) {
  return foldBinary(a.getLhs(), a.getRhs(), getType(),
                    [](double x, double y) { return std::pow(x, y); },
                    [](int64_t x, int64_t y) { return (int64_t)std::pow(x, y); });
}
OpFoldResult AndOp::fold(FoldAdaptor a) {
  return foldBinary(a.getLhs(), a.getRhs(), getType(),
                    [](double x, double y) { return double(x != 0 && y != 0); },
                    [](int64_t x, int64_t y) { return int64_t(x != 0 && y != 0); });
}
OpFoldResult EqualOp::fold(FoldAdaptor a) {
  return foldBinary(a.getLhs(), a.getRhs(), getType(),
                    [](double x, double y) { return double(x == y); },
                    [](int64_t x, int64_t y) { return int64_t(x == y); });
}

OpFoldResult LessOrEqualOp::fold(FoldAdaptor a) {
  return foldBinary(a.getLhs(), a.getRhs(), getType(),
                    [](double x, double y) { return double(x <= y); },
                    [](int64_t x, int64_t y) { return int64_t(x <= y); });
}
OpFoldResult MaxOp::fold(FoldAdaptor a) {
  return foldBinary(a.getLhs(), a.getRhs(), getType(),
                    [](double x, double y) { return std::max(x, y); },
                    [](int64_t x, int64_t y) { return std::max(x, y); });
}
// Computed in the operand's precision, as the exported model would (the tables of RoPE).
OpFoldResult CosOp::fold(FoldAdaptor a) {
  bool f32 = getType().getElementType().isF32();
  return foldUnary(a.getInput(), getType(), [f32](double x) {
    return f32 ? (double)std::cos((float)x) : std::cos(x);
  });
}
OpFoldResult SinOp::fold(FoldAdaptor a) {
  bool f32 = getType().getElementType().isF32();
  return foldUnary(a.getInput(), getType(), [f32](double x) {
    return f32 ? (double)std::sin((float)x) : std::sin(x);
  });
}

// Small products of constants (position x frequency tables of RoPE in dynamic-length
// exports); accumulated in double, rounded once to the result type.
OpFoldResult MatMulOp::fold(FoldAdaptor a) {
  // Both operands constant, or nothing to read: a weight next to a run-time input is not
  // worth converting element by element on every folding attempt.
  if (!a.getLhs() || !a.getRhs())
    return {};
  auto lhs = readValues(a.getLhs()), rhs = readValues(a.getRhs());
  if (!lhs || !rhs || getType().getNumElements() > kMaxFoldElements)
    return {};
  SmallVector<int64_t> ls(getLhs().getType().getShape()), rs(getRhs().getType().getShape());
  if (ls.size() < 2 || rs.size() < 2)
    return {};
  int64_t m = ls[ls.size() - 2], k = ls.back(), n = rs.back();
  if (k * getType().getNumElements() > kMaxFoldElements)
    return {};
  auto outShape = getType().getShape();
  SmallVector<int64_t> batch(outShape.drop_back(2));
  SmallVector<int64_t> lb(ArrayRef<int64_t>(ls).drop_back(2)), rb(ArrayRef<int64_t>(rs).drop_back(2));
  int64_t batches = 1;
  for (int64_t d : batch)
    batches *= d;
  HostValues out;
  out.isFloat = lhs->isFloat || rhs->isFloat;
  for (int64_t b = 0; b < batches; ++b) {
    int64_t lbase = (lb.empty() ? 0 : broadcastSourceIndex(b, batch, lb)) * m * k;
    int64_t rbase = (rb.empty() ? 0 : broadcastSourceIndex(b, batch, rb)) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += lhs->asDouble(lbase + i * k + p) * rhs->asDouble(rbase + p * n + j);
        if (out.isFloat)
          out.floats.push_back(acc);
        else
          out.ints.push_back((int64_t)acc);
      }
  }
  return makeElements(getType(), out);
}

OpFoldResult SqrtOp::fold(FoldAdaptor a) {
  return foldUnary(a.getInput(), getType(), [](double x) { return std::sqrt(x); });
}
OpFoldResult ReciprocalOp::fold(FoldAdaptor a) {
  return foldUnary(a.getInput(), getType(), [](double x) { return 1.0 / x; });
}
OpFoldResult NegOp::fold(FoldAdaptor a) {
  if (auto v = readValues(a.getInput()); v && !v->isFloat) {
    for (auto &x : v->ints)
      x = -x;
    return makeElements(getType(), *v);
  }
  return foldUnary(a.getInput(), getType(), [](double x) { return -x; });
}
OpFoldResult SigmoidOp::fold(FoldAdaptor a) {
  return foldUnary(a.getInput(), getType(), [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}
OpFoldResult IsNaNOp::fold(FoldAdaptor a) {
  return foldUnary(a.getInput(), getType(), [](double x) { return double(std::isnan(x)); });
}
OpFoldResult CastOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  auto v = readValues(a.getInput());
  if (!v)
    return {};
  Type to = getType().getElementType();
  if (to.isInteger(1)) {
    HostValues b;
    for (size_t i = 0; i < v->size(); ++i)
      b.ints.push_back(v->asDouble(i) != 0);
    return makeElements(getType(), b);
  }
  if (isa<FloatType>(to) && !v->isFloat) {
    HostValues f;
    f.isFloat = true;
    for (int64_t x : v->ints)
      f.floats.push_back((double)x);
    return makeElements(getType(), f);
  }
  return makeElements(getType(), *v);
}

OpFoldResult BitCastOp::fold(FoldAdaptor a) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(a.getInput());
  if (!dense)
    return {};
  Type in = dense.getElementType(), out = getType().getElementType();
  if (!in.isInteger(1) && !out.isInteger(1))
    return dense.bitcast(out);
  // A bool's byte is 0 or 1; a byte read as a bool is true when it is not 0.
  auto v = readValues(dense);
  if (!v || v->isFloat)
    return {};
  HostValues b;
  for (int64_t x : v->ints)
    b.ints.push_back(out.isInteger(1) ? x != 0 : x);
  return makeElements(getType(), b);
}

OpFoldResult WhereOp::fold(FoldAdaptor a) {
  if (!a.getCondition() || !a.getX() || !a.getY())
    return {};
  auto c = readValues(a.getCondition()), x = readValues(a.getX()), y = readValues(a.getY());
  if (!c || !x || !y || getType().getNumElements() > kMaxFoldElements)
    return {};
  auto shape = getType().getShape();
  auto cs = getCondition().getType().getShape(), xs = getX().getType().getShape(),
       ys = getY().getType().getShape();
  HostValues out;
  out.isFloat = x->isFloat;
  if (out.isFloat)
    out.floats.reserve(getType().getNumElements());
  else
    out.ints.reserve(getType().getNumElements());
  BroadcastWalk walkC(shape, cs), walkX(shape, xs), walkY(shape, ys);
  for (int64_t i = 0, e = getType().getNumElements(); i < e;
       ++i, walkC.next(), walkX.next(), walkY.next()) {
    bool pick = c->ints[walkC.index()] != 0;
    const HostValues &src = pick ? *x : *y;
    int64_t j = pick ? walkX.index() : walkY.index();
    if (out.isFloat)
      out.floats.push_back(src.floats[j]);
    else
      out.ints.push_back(src.ints[j]);
  }
  return makeElements(getType(), out);
}

OpFoldResult TransposeOp::fold(FoldAdaptor a) {
  if (llvm::equal(getPerm(), llvm::seq<int64_t>(0, getPerm().size())))
    return getInput();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(a.getInput());
  if (!dense)
    return {};
  return transposeElements(dense, getPerm(), getType());
}

OpFoldResult ReshapeOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(a.getInput()))
    return dense.reshape(getType());
  return {};
}
