// Verifiers and folders of the ops declared in GraphGenericOps.td.
#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Dialect/Graph/IR/ScalarFunctions.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace sinter::graph;

namespace {

bool accepts(ScalarOperands kind, Type et) {
  switch (kind) {
  case ScalarOperands::Float:
    return isa<FloatType>(et);
  case ScalarOperands::Integer:
    return isa<IntegerType>(et) && !et.isInteger(1);
  case ScalarOperands::Bool:
    return et.isInteger(1);
  case ScalarOperands::Any:
    return !et.isInteger(1);
  }
  return false;
}

LogicalResult verifyFunctionTypes(Operation *op, const ScalarFunction *fn, StringRef name,
                                  unsigned arity) {
  if (!fn)
    return op->emitOpError("unknown ") << arity << "-operand scalar function '" << name << "'";
  Type et = getElementTypeOrSelf(op->getOperand(0).getType());
  if (!accepts(fn->operands, et))
    return op->emitOpError("'") << name << "' does not take " << et << " operands";
  Type result = getElementTypeOrSelf(op->getResult(0).getType());
  Type expected = fn->predicate ? IntegerType::get(op->getContext(), 1) : et;
  if (result != expected)
    return op->emitOpError("'") << name << "' gives " << expected << ", not " << result;
  return success();
}

LogicalResult verifyShape(Operation *op, ArrayRef<int64_t> expected) {
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  if (result.getShape() == expected)
    return success();
  auto diag = op->emitOpError("result shape [");
  llvm::interleave(result.getShape(), diag, "x");
  diag << "] does not match the inferred shape [";
  llvm::interleave(expected, diag, "x");
  return diag << "]";
}

LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ") << axis << " is out of range for a rank-" << rank << " input";
  return success();
}

} // namespace

SmallVector<int64_t> sinter::graph::reducedShape(ArrayRef<int64_t> in, ArrayRef<int64_t> axes,
                                                 bool keepdims) {
  SmallVector<int64_t> out;
  for (int64_t d = 0; d < (int64_t)in.size(); ++d)
    if (!llvm::is_contained(axes, d))
      out.push_back(in[d]);
    else if (keepdims)
      out.push_back(1);
  return out;
}

LogicalResult UnaryFnOp::verify() {
  if (failed(verifyFunctionTypes(*this, lookupScalarFunction(getFn(), 1), getFn(), 1)))
    return failure();
  return verifyShape(*this, getInput().getType().getShape());
}

OpFoldResult UnaryFnOp::fold(FoldAdaptor a) {
  const ScalarFunction *fn = lookupScalarFunction(getFn(), 1);
  if (!fn || !a.getInput())
    return {};
  // Integers and booleans fold exactly (through double, values past 2^53 would round and the
  // conversion back could overflow).
  if (isa<IntegerType>(getElementTypeOrSelf(getInput().getType()))) {
    auto values = readValues(a.getInput());
    if (!fn->evalInt || !values || values->isFloat)
      return {};
    HostValues out;
    for (int64_t v : values->ints)
      out.ints.push_back(fn->evalInt(v, 0));
    return makeElements(getType(), out);
  }
  float alpha = getAlpha().convertToFloat(), beta = getBeta().convertToFloat();
  return foldUnary(a.getInput(), getType(), [&](double x) { return fn->eval(x, 0, alpha, beta); });
}

LogicalResult BinaryFnOp::verify() {
  if (getElementTypeOrSelf(getLhs().getType()) != getElementTypeOrSelf(getRhs().getType()))
    return emitOpError("operand element types differ");
  if (failed(verifyFunctionTypes(*this, lookupScalarFunction(getFn(), 2), getFn(), 2)))
    return failure();
  auto shape = broadcastShapes(getLhs().getType().getShape(), getRhs().getType().getShape());
  if (failed(shape))
    return emitOpError("operand shapes are not broadcast-compatible");
  return verifyShape(*this, *shape);
}

OpFoldResult BinaryFnOp::fold(FoldAdaptor a) {
  const ScalarFunction *fn = lookupScalarFunction(getFn(), 2);
  if (!fn || !a.getLhs() || !a.getRhs())
    return {};
  bool integers = isa<IntegerType>(getElementTypeOrSelf(getRhs().getType()));
  if (integers && !fn->evalInt)
    return {};
  // Integer division by zero has no value to fold to.
  if (integers && (getFn() == "mod" || getFn() == "fmod")) {
    auto rhs = readValues(a.getRhs());
    if (!rhs || llvm::is_contained(rhs->ints, 0))
      return {};
  }
  return foldBinary(
      a.getLhs(), a.getRhs(), getType(), [fn](double x, double y) { return fn->eval(x, y, 0, 0); },
      [fn](int64_t x, int64_t y) { return fn->evalInt(x, y); });
}

static constexpr llvm::StringLiteral kReduceKinds[] = {
    "sum", "mean", "max", "min", "prod", "l1", "l2", "sum_square", "log_sum_exp"};

LogicalResult ReduceOp::verify() {
  if (!llvm::is_contained(kReduceKinds, getKind()))
    return emitOpError("unknown reduction kind '") << getKind() << "'";
  auto in = getInput().getType();
  Type et = in.getElementType();
  if (et.isInteger(1))
    return emitOpError("cannot reduce i1");
  if ((getKind() == "l2" || getKind() == "log_sum_exp" || getKind() == "mean") &&
      !isa<FloatType>(et))
    return emitOpError("'") << getKind() << "' needs floating point input";
  ArrayRef<int64_t> axes = getAxes();
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= in.getRank() || (i && axes[i] <= axes[i - 1]))
      return emitOpError("axes must be sorted, unique and within [0, ") << in.getRank() << ")";
  if (getType().getElementType() != et)
    return emitOpError("input and result element types differ");
  return verifyShape(*this, reducedShape(in.getShape(), axes, getKeepdims()));
}

LogicalResult ArgReduceOp::verify() {
  if (getKind() != "max" && getKind() != "min")
    return emitOpError("kind must be max or min, not '") << getKind() << "'";
  auto in = getInput().getType();
  if (in.getElementType().isInteger(1))
    return emitOpError("cannot reduce i1");
  if (failed(verifyAxis(*this, getAxis(), in.getRank())))
    return failure();
  return verifyShape(*this, reducedShape(in.getShape(), {(int64_t)getAxis()}, getKeepdims()));
}

LogicalResult CumulativeOp::verify() {
  auto in = getInput().getType();
  if (getKind() != "sum" && getKind() != "prod")
    return emitOpError("kind must be \"sum\" or \"prod\", not \"") << getKind() << "\"";
  if (in.getElementType().isInteger(1))
    return emitOpError("cannot accumulate i1");
  if (failed(verifyAxis(*this, getAxis(), in.getRank())))
    return failure();
  if (getType() != in)
    return emitOpError("result type must be the input's");
  return success();
}

LogicalResult LogSoftmaxOp::verify() {
  if (failed(verifyAxis(*this, getAxis(), getInput().getType().getRank())))
    return failure();
  if (getType() != getInput().getType())
    return emitOpError("result type must be the input's");
  return success();
}

LogicalResult LayerNormalizationOp::verify() {
  auto in = getInput().getType();
  if (failed(verifyAxis(*this, getAxis(), in.getRank())))
    return failure();
  if (getType() != in)
    return emitOpError("result type must be the input's");
  ArrayRef<int64_t> normalized = in.getShape().drop_front(getAxis());
  for (Value v : {getScale(), getBias()}) {
    if (!v)
      continue;
    auto t = cast<RankedTensorType>(v.getType());
    auto b = broadcastShapes(normalized, t.getShape());
    if (t.getElementType() != in.getElementType() || t.getRank() > (int64_t)normalized.size() ||
        failed(b) || ArrayRef<int64_t>(*b) != normalized)
      return emitOpError("scale and bias must be ")
             << in.getElementType() << " and broadcast to the normalized dimensions";
  }
  return success();
}

LogicalResult GatherElementsOp::verify() {
  auto in = getInput().getType(), indices = getIndices().getType();
  if (in.getRank() == 0 || indices.getRank() != in.getRank())
    return emitOpError("indices must have the input's rank (at least 1)");
  if (failed(verifyAxis(*this, getAxis(), in.getRank())))
    return failure();
  if (getType().getElementType() != in.getElementType())
    return emitOpError("input and result element types differ");
  return verifyShape(*this, indices.getShape());
}

LogicalResult PadOp::verify() {
  StringRef mode = getMode();
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return emitOpError("mode must be constant, reflect, edge or wrap, not '") << mode << "'";
  auto in = getInput().getType();
  if ((int64_t)getBefore().size() != in.getRank() || (int64_t)getAfter().size() != in.getRank())
    return emitOpError("needs one pad amount before and after each of the ")
           << in.getRank() << " dimensions";
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t extent = in.getDimSize(d) + getBefore()[d] + getAfter()[d];
    if (extent < 0)
      return emitOpError("dimension ") << d << " would be negative";
    // Reflection mirrors once: the amount added on a side must stay below the extent.
    if (mode == "reflect" &&
        (getBefore()[d] >= in.getDimSize(d) || getAfter()[d] >= in.getDimSize(d)))
      return emitOpError("reflect pads of dimension ") << d << " must be smaller than its extent";
    if (mode != "constant" && in.getDimSize(d) == 0 && extent > 0)
      return emitOpError("cannot pad an empty dimension in mode '") << mode << "'";
    shape.push_back(extent);
  }
  if (getType().getElementType() != in.getElementType())
    return emitOpError("input and result element types differ");
  return verifyShape(*this, shape);
}

LogicalResult FusionGroupOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("the body takes ")
           << body.getNumArguments() << " arguments for " << getInputs().size() << " inputs";
  for (auto [arg, in] : llvm::zip(body.getArguments(), getInputs()))
    if (arg.getType() != in.getType())
      return emitOpError("body argument type ")
             << arg.getType() << " differs from its input's " << in.getType();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getOutputs().getTypes())
    return emitOpError("yielded types differ from the results");
  Value x, weight, residual;
  float epsilon;
  if (getInConsumerPrologue() && !residualNormParts(x, weight, residual, epsilon))
    return emitOpError("marked in_consumer_prologue but not a post-norm and residual add");
  return success();
}

bool FusionGroupOp::residualNormParts(Value &x, Value &weight, Value &residual, float &epsilon) {
  Block &body = getBody().front();
  if (getOutputs().size() != 1 || !llvm::hasNItems(body.without_terminator(), 3))
    return false;
  auto add = cast<YieldOp>(body.getTerminator()).getValues()[0].getDefiningOp<AddOp>();
  if (!add)
    return false;
  auto castOf = [](Value v) { return v.getDefiningOp<CastOp>(); };
  CastOp rounded = castOf(add.getRhs()) ? castOf(add.getRhs()) : castOf(add.getLhs());
  if (!rounded)
    return false;
  Value sum = rounded.getResult() == add.getRhs() ? add.getLhs() : add.getRhs();
  auto norm = rounded.getInput().getDefiningOp<RMSNormalizationOp>();
  auto type = cast<RankedTensorType>(add.getType());
  auto argIndex = [&](Value v) -> int {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body ? int(arg.getArgNumber()) : -1;
  };
  if (!norm || argIndex(sum) < 0 || argIndex(norm.getInput()) < 0 ||
      argIndex(norm.getScale()) < 0 || sum.getType() != type ||
      norm.getInput().getType() != type || rounded.getType() != type ||
      !type.getElementType().isBF16() ||
      int64_t(norm.getAxis()) != type.getRank() - 1)
    return false;
  auto scale = cast<RankedTensorType>(norm.getScale().getType());
  if (!scale.getElementType().isF32() || scale.getRank() != 1 ||
      scale.getDimSize(0) != type.getShape().back())
    return false;
  x = getInputs()[argIndex(norm.getInput())];
  weight = getInputs()[argIndex(norm.getScale())];
  residual = getInputs()[argIndex(sum)];
  epsilon = norm.getEpsilon().convertToFloat();
  return true;
}
