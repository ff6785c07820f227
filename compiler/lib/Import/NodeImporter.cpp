#include "NodeImporter.h"

#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Operation.h"

using namespace mlir;

namespace sinter::import {

LogicalResult NodeImporter::fail(const llvm::Twine &message) {
  if (error.empty())
    error = message.str();
  return failure();
}

FailureOr<Value> NodeImporter::input(unsigned i) {
  if (!hasInput(i)) {
    (void)fail("input " + llvm::Twine(i) + " is missing");
    return failure();
  }
  auto it = state.values.find(node.input(i));
  if (it == state.values.end()) {
    auto later = state.producers.find(node.input(i));
    if (later != state.producers.end())
      (void)fail("input '" + node.input(i) + "' is computed by node '" + later->second +
                 "', which comes later: nodes must be in topological order");
    else
      (void)fail("input '" + node.input(i) +
                 "' is not a graph input, an initializer or an output of any node");
    return failure();
  }
  return it->second;
}

RankedTensorType NodeImporter::inputType(unsigned i) {
  auto v = input(i);
  return failed(v) ? RankedTensorType() : cast<RankedTensorType>(v->getType());
}

DenseElementsAttr NodeImporter::constantInput(unsigned i) {
  auto v = input(i);
  if (failed(v))
    return {};
  return dyn_cast_or_null<DenseElementsAttr>(state.constants.lookup(*v));
}

FailureOr<SmallVector<int64_t>> NodeImporter::constantInts(unsigned i) {
  DenseElementsAttr c = constantInput(i);
  if (!c || !isa<IntegerType>(c.getElementType())) {
    (void)fail("input " + llvm::Twine(i) + " ('" + (hasInput(i) ? node.input(i) : "") +
               "') must be a compile-time integer constant");
    return failure();
  }
  SmallVector<int64_t> out;
  for (const APInt &v : c.getValues<APInt>())
    out.push_back(v.getSExtValue());
  return out;
}

const onnx::AttributeProto *NodeImporter::attr(StringRef name) const {
  readAttributes.insert(name);
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

SmallVector<std::string> NodeImporter::unreadAttributes() const {
  SmallVector<std::string> unread;
  for (const auto &a : node.attribute())
    if (!readAttributes.contains(a.name()))
      unread.push_back(a.name());
  return unread;
}

namespace {
const char *attributeTypeName(int type) {
  switch (type) {
  case onnx::AttributeProto::FLOAT: return "FLOAT";
  case onnx::AttributeProto::INT: return "INT";
  case onnx::AttributeProto::STRING: return "STRING";
  case onnx::AttributeProto::TENSOR: return "TENSOR";
  case onnx::AttributeProto::GRAPH: return "GRAPH";
  case onnx::AttributeProto::FLOATS: return "FLOATS";
  case onnx::AttributeProto::INTS: return "INTS";
  case onnx::AttributeProto::STRINGS: return "STRINGS";
  default: return "another type";
  }
}
} // namespace

// An attribute of the expected type, or null. A file that leaves the type UNDEFINED (older
// writers) is taken at its word; one that declares another type is an error.
static const onnx::AttributeProto *typedAttr(const NodeImporter &n, StringRef name,
                                             onnx::AttributeProto::AttributeType type) {
  const auto *a = n.attr(name);
  if (!a || a->type() == onnx::AttributeProto::UNDEFINED || a->type() == type)
    return a;
  if (n.attrError.empty())
    n.attrError = ("attribute '" + name + "' must be " + attributeTypeName(type) + ", got " +
                   attributeTypeName(a->type()))
                      .str();
  return nullptr;
}

int64_t NodeImporter::attrInt(StringRef name, int64_t defaultValue) const {
  const auto *a = typedAttr(*this, name, onnx::AttributeProto::INT);
  return a ? a->i() : defaultValue;
}

float NodeImporter::attrFloat(StringRef name, float defaultValue) const {
  const auto *a = typedAttr(*this, name, onnx::AttributeProto::FLOAT);
  return a ? a->f() : defaultValue;
}

std::optional<SmallVector<int64_t>> NodeImporter::attrInts(StringRef name) const {
  const auto *a = typedAttr(*this, name, onnx::AttributeProto::INTS);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

Value NodeImporter::constant(DenseElementsAttr value) {
  auto op = graph::ConstantOp::create(builder, loc, value);
  state.constants[op] = value;
  return op;
}

Value NodeImporter::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  auto shapeType = RankedTensorType::get({(int64_t)shape.size()}, builder.getI64Type());
  return graph::ReshapeOp::create(builder, loc, RankedTensorType::get(shape, type.getElementType()),
                                  value, constant(DenseElementsAttr::get(shapeType, shape)));
}

Value NodeImporter::scalar(Type type, double value) {
  return constant(
      DenseElementsAttr::get(RankedTensorType::get({}, type), builder.getFloatAttr(type, value)));
}

Value NodeImporter::integerScalar(Type type, int64_t value) {
  return constant(DenseElementsAttr::get(RankedTensorType::get({}, type),
                                         builder.getIntegerAttr(type, value)));
}

Value NodeImporter::iota(int64_t size, int64_t axis, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1), values(size);
  shape[axis] = size;
  for (int64_t i = 0; i < size; ++i)
    values[i] = i;
  return constant(DenseElementsAttr::get(tensorType(shape, builder.getI64Type()), ArrayRef(values)));
}

std::string NodeImporter::attrString(StringRef name, StringRef defaultValue) const {
  const auto *a = typedAttr(*this, name, onnx::AttributeProto::STRING);
  return a ? a->s() : defaultValue.str();
}

FailureOr<int64_t> normalizeAxis(NodeImporter &n, int64_t axis, int64_t rank,
                                 const llvm::Twine &what) {
  if (axis < -rank || axis >= rank) {
    (void)n.fail(what + " " + llvm::Twine(axis) + " is out of range for rank " +
                 llvm::Twine(rank));
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>> normalizeAxes(NodeImporter &n, ArrayRef<int64_t> axes,
                                              int64_t rank, const llvm::Twine &what) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    auto axis = normalizeAxis(n, a, rank, what);
    if (failed(axis))
      return failure();
    out.push_back(*axis);
  }
  llvm::sort(out);
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    (void)n.fail(what + " holds a duplicate axis");
    return failure();
  }
  return out;
}

FailureOr<int64_t> normalizationAxis(NodeImporter &n, RankedTensorType input) {
  if (int64_t stash = n.attrInt("stash_type", 1); stash != 1) {
    (void)n.fail("attribute 'stash_type' = " + llvm::Twine(stash) +
                 " is not supported (only 1, float32)");
    return failure();
  }
  if (input.getRank() == 0) {
    (void)n.fail("input X must have rank >= 1");
    return failure();
  }
  return normalizeAxis(n, n.attrInt("axis", -1), input.getRank(), "attribute 'axis'");
}

LogicalResult requireFloat(NodeImporter &n, RankedTensorType type, const llvm::Twine &what) {
  if (!type) // the input accessor has recorded why
    return failure();
  if (!isa<FloatType>(type.getElementType()))
    return n.fail(what + " must be floating point");
  return success();
}

LogicalResult NodeImporter::setOutput(unsigned i, Value value) {
  if (i >= (unsigned)node.output_size())
    return fail("declares " + llvm::Twine(node.output_size()) + " outputs; output " +
                llvm::Twine(i) + " is required");
  if (node.output(i).empty())
    return success();
  // Before anything (folding included) computes the result's element count.
  if (auto type = dyn_cast<RankedTensorType>(value.getType())) {
    if (std::string problem = shapeProblem(type.getShape()); !problem.empty())
      return fail("output '" + node.output(i) + "' would have " + problem);
  }
  state.values[node.output(i)] = value;
  // Fold on the side: the op stays in the IR (one op per node), but later nodes whose
  // types depend on this value (Reshape targets, Slice bounds, ...) need it now.
  Operation *op = value.getDefiningOp();
  if (!op || op->getNumResults() != 1)
    return success();
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands())
    operands.push_back(state.constants.lookup(operand));
  SmallVector<OpFoldResult> results;
  if (succeeded(op->fold(operands, results)) && results.size() == 1) {
    if (auto attr = dyn_cast<Attribute>(results[0]))
      state.constants[value] = attr;
    else if (auto same = dyn_cast<Value>(results[0]); same && state.constants.count(same))
      state.constants[value] = state.constants.lookup(same);
  }
  return success();
}

} // namespace sinter::import
