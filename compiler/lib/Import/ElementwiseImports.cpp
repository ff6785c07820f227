// Import of elementwise ONNX ops and Constant.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

std::string typeText(Type t) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << t;
  return text;
}

/// Fails unless inputs a and b have one element type (ONNX's "T" for both).
LogicalResult requireSameElementType(NodeImporter &n, unsigned a, unsigned b) {
  auto lhs = n.inputType(a), rhs = n.inputType(b);
  if (!lhs || !rhs)
    return failure();
  if (lhs.getElementType() != rhs.getElementType())
    return n.fail("inputs '" + n.node.input(a) + "' (" + typeText(lhs.getElementType()) +
                  ") and '" + n.node.input(b) + "' (" + typeText(rhs.getElementType()) +
                  ") have different element types");
  return success();
}

FailureOr<RankedTensorType> broadcastType(NodeImporter &n, unsigned a, unsigned b, Type et) {
  auto lhs = n.inputType(a), rhs = n.inputType(b);
  if (!lhs || !rhs)
    return failure();
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape)) {
    (void)n.fail("input shapes are not broadcast-compatible");
    return failure();
  }
  return n.tensorType(*shape, et ? et : lhs.getElementType());
}

template <typename OpT, bool boolResult = false, bool sameTypes = true>
LogicalResult importBinary(NodeImporter &n) {
  if (sameTypes && failed(requireSameElementType(n, 0, 1)))
    return failure();
  auto type = broadcastType(n, 0, 1, boolResult ? n.builder.getI1Type() : Type());
  if (failed(type))
    return failure();
  auto op = OpT::create(n.builder, n.loc, *type, *n.input(0), *n.input(1));
  return n.setResult(op);
}

template <typename OpT, bool boolResult = false>
LogicalResult importUnary(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  Type type = boolResult ? n.tensorType(in.getShape(), n.builder.getI1Type()) : Type(in);
  return n.setResult(OpT::create(n.builder, n.loc, type, *n.input(0)));
}

LogicalResult importCast(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  Type et = elementTypeFor(n.builder.getContext(), (int)n.attrInt("to", 0));
  // Both only change casts to 8-bit floats (saturate) and to float8e8m0 (round_mode), types
  // the type table refuses as cast targets.
  (void)n.attr("saturate");
  (void)n.attr("round_mode");
  if (!et)
    return n.fail("attribute 'to' has unsupported data type " +
                  dataTypeText((int)n.attrInt("to", 0)));
  return n.setResult(CastOp::create(n.builder, n.loc, n.tensorType(in.getShape(), et), *n.input(0)));
}

/// BitCast (opset 26): the bits of each element read as type `to`, of the same width.
LogicalResult importBitCast(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  const int to = (int)n.attrInt("to", 0);
  Type et = elementTypeFor(n.builder.getContext(), to);
  if (!et)
    return n.fail("attribute 'to' has unsupported data type " + dataTypeText(to));
  auto bits = &BitCastOp::storedBits;
  if (bits(et) != bits(in.getElementType())) {
    std::string types;
    llvm::raw_string_ostream os(types);
    os << "attribute 'to' is " << et << " (" << bits(et) << " bits) and the input "
       << in.getElementType() << " (" << bits(in.getElementType()) << " bits)";
    return n.fail(os.str() + ": BitCast keeps the width");
  }
  return n.setResult(
      BitCastOp::create(n.builder, n.loc, n.tensorType(in.getShape(), et), *n.input(0)));
}

/// SwiGLU(A, B) = A * sigmoid(alpha * A) * B, A and B of one shape (opset 28).
LogicalResult importSwiGLU(NodeImporter &n) {
  auto a = n.inputType(0), b = n.inputType(1);
  if (!a || !b || failed(requireFloat(n, a, "A")))
    return failure();
  if (a != b)
    return n.fail("A and B must have one shape and type");
  Value gate = UnaryFnOp::create(n.builder, n.loc, a, *n.input(0), n.builder.getStringAttr("swish"),
                                 n.builder.getF32FloatAttr(n.attrFloat("alpha", 1.0f)),
                                 n.builder.getF32FloatAttr(0));
  return n.setResult(MulOp::create(n.builder, n.loc, a, gate, *n.input(1)));
}

LogicalResult importWhere(NodeImporter &n) {
  auto c = n.inputType(0), x = n.inputType(1), y = n.inputType(2);
  if (!c || !x || !y || failed(requireSameElementType(n, 1, 2)))
    return failure();
  if (!c.getElementType().isInteger(1))
    return n.fail("condition '" + n.node.input(0) + "' must be bool, not " +
                  typeText(c.getElementType()));
  auto xy = broadcastShapes(x.getShape(), y.getShape());
  if (failed(xy))
    return n.fail("input shapes are not broadcast-compatible");
  auto all = broadcastShapes(c.getShape(), *xy);
  if (failed(all))
    return n.fail("input shapes are not broadcast-compatible");
  auto op = WhereOp::create(n.builder, n.loc, n.tensorType(*all, x.getElementType()),
                            *n.input(0), *n.input(1), *n.input(2));
  return n.setResult(op);
}

LogicalResult importConstant(NodeImporter &n) {
  MLIRContext *ctx = n.builder.getContext();
  DenseElementsAttr value;
  if (const auto *a = n.attr("value")) {
    std::string error;
    auto t = tensorFromProto(a->t(), ctx, n.state.modelDir, error);
    if (failed(t))
      return n.fail(error);
    value = *t;
  } else if (const auto *a = n.attr("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, n.builder.getF32Type()), a->f());
  } else if (const auto *a = n.attr("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, n.builder.getI64Type()),
                                   (int64_t)a->i());
  } else if (const auto *a = n.attr("value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    value = DenseElementsAttr::get(RankedTensorType::get({(int64_t)v.size()}, n.builder.getI64Type()),
                                   ArrayRef<int64_t>(v));
  } else if (const auto *a = n.attr("value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    value = DenseElementsAttr::get(RankedTensorType::get({(int64_t)v.size()}, n.builder.getF32Type()),
                                   ArrayRef<float>(v));
  } else {
    return n.fail("Constant without a supported value attribute");
  }
  auto op = ConstantOp::create(n.builder, n.loc, value);
  n.state.constants[op] = value;
  return n.setResult(op);
}

LogicalResult importIdentity(NodeImporter &n) {
  auto v = n.input(0);
  if (failed(v))
    return failure();
  return n.setOutput(0, *v);
}

} // namespace

void registerElementwiseImports(OpImportRegistry &r) {
  r["Add"] = {importBinary<AddOp>};
  r["Sub"] = {importBinary<SubOp>};
  r["Mul"] = {importBinary<MulOp>};
  r["Div"] = {importBinary<DivOp>};
  r["Pow"] = {importBinary<PowOp, false, /*sameTypes=*/false>};
  r["And"] = {importBinary<AndOp>};
  r["Equal"] = {importBinary<EqualOp, true>};
  r["LessOrEqual"] = {importBinary<LessOrEqualOp, true>, 12}; // 16 added bf16 only
  r["Cos"] = {importUnary<CosOp>};
  r["Sin"] = {importUnary<SinOp>};
  r["Sqrt"] = {importUnary<SqrtOp>};
  r["Reciprocal"] = {importUnary<ReciprocalOp>};
  r["Neg"] = {importUnary<NegOp>};
  r["Sigmoid"] = {importUnary<SigmoidOp>};
  r["IsNaN"] = {importUnary<IsNaNOp, true>};
  r["Cast"] = {importCast};
  r["BitCast"] = {importBitCast, 26};
  r["Where"] = {importWhere};
  r["SwiGLU"] = {importSwiGLU, 28};
  r["Constant"] = {importConstant};
  r["Identity"] = {importIdentity};
}

} // namespace sinter::import
