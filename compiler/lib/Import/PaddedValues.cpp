#include "PaddedValues.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

using namespace mlir;

namespace sinter::import {
namespace {

using Kind = PaddedValues::Kind;

/// Ops that compute each output element from the elements at the same (broadcast) position.
// clang-format off
constexpr llvm::StringLiteral kElementwiseOps[] = {
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where", "Equal",
    "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor", "Not", "Neg", "Abs",
    "Exp", "Log", "Sqrt", "Reciprocal", "Sigmoid", "Tanh", "Relu", "LeakyRelu", "Elu", "Selu",
    "Celu", "Gelu", "Erf", "HardSigmoid", "HardSwish", "Softplus", "Softsign", "Mish", "Sin", "Cos",
    "Floor", "Ceil", "Round", "Sign", "Clip", "IsNaN", "IsInf", "PRelu", "ThresholdedRelu",
    "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "BitShift"};
// clang-format on

/// Ops that compute shapes from shapes (a padded value's shape stays a shape through them).
constexpr llvm::StringLiteral kShapeOps[] = {"Gather", "Concat", "Unsqueeze", "Squeeze",
                                             "Slice",  "Cast",   "Identity",  "Reshape",
                                             "Add",    "Sub",    "Mul",       "Div"};

bool isElementwise(llvm::StringRef op) { return llvm::is_contained(kElementwiseOps, op); }

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// Where axis `axis` of `in` lands in `out` when only the layout changes (Reshape, Squeeze,
/// Unsqueeze, Flatten): the axis of the same extent after the same number of elements.
std::optional<int64_t> reshapedAxis(ArrayRef<int64_t> in, int64_t axis, ArrayRef<int64_t> out) {
  const int64_t before = product(in.take_front(axis));
  for (int64_t j = 0; j < (int64_t)out.size(); ++j)
    if (product(out.take_front(j)) == before && out[j] == in[axis])
      return j;
  return std::nullopt;
}

int64_t normalized(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// The first value `graph` (or a graph nested in it) reads by a name `isPadded` accepts.
std::string paddedRead(const onnx::GraphProto &graph,
                       const std::function<bool(const std::string &)> &isPadded) {
  for (const auto &node : graph.node()) {
    for (const auto &in : node.input())
      if (!in.empty() && isPadded(in))
        return in;
    for (const auto &a : node.attribute()) {
      if (a.has_g())
        if (std::string read = paddedRead(a.g(), isPadded); !read.empty())
          return read;
      for (const auto &g : a.graphs())
        if (std::string read = paddedRead(g, isPadded); !read.empty())
          return read;
    }
  }
  return "";
}

int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name, int64_t fallback) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return a.i();
  return fallback;
}

} // namespace

std::string PaddedValues::describe(const Info &info) {
  return "the padded NonZero result '" + info.source +
         "' (a run-time input's count is known only on the device, so Sinter pads the result "
         "to the input's element count)";
}

std::string
PaddedValues::propagate(const onnx::NodeProto &node,
                        const std::function<RankedTensorType(const std::string &)> &typeOf) {
  const std::string &op = node.op_type();
  const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
  struct Input {
    int index;
    const Info *info;
  };
  SmallVector<Input> padded;
  for (int i = 0; i < node.input_size(); ++i)
    if (const Info *info = node.input(i).empty() ? nullptr : find(node.input(i)))
      padded.push_back({i, info});

  // A subgraph that reads a padded value passes the padding to the node's results, which
  // this check does not follow into the subgraph's scopes.
  auto isPadded = [&](const std::string &name) { return find(name) != nullptr; };
  for (const auto &a : node.attribute()) {
    std::string read = a.has_g() ? paddedRead(a.g(), isPadded) : "";
    for (const auto &g : a.graphs())
      if (read.empty())
        read = paddedRead(g, isPadded);
    if (!read.empty())
      return "subgraph '" + a.name() + "' reads '" + read + "', " + describe(*find(read)) +
             kWhereItMayGo + ", not into subgraphs";
  }
  if (padded.empty())
    return "";

  const Input &first = padded.front();
  auto refuse = [&](const Input &at, const llvm::Twine &why) {
    return ("input " + llvm::Twine(at.index) + " ('" + node.input(at.index) + "') holds " +
            describe(*at.info) + ", and " + why + kWhereItMayGo + " (mixture-of-experts routing)")
        .str();
  };
  auto set = [&](unsigned output, Kind kind, int64_t axis) {
    if (output < (unsigned)node.output_size() && !node.output(output).empty())
      values[node.output(output)] = {kind, axis, first.info->source};
  };
  if (!standard)
    return refuse(first, "this op's domain is not the standard one");

  SmallVector<RankedTensorType> in, out;
  for (int i = 0; i < node.input_size(); ++i)
    in.push_back(node.input(i).empty() ? RankedTensorType() : typeOf(node.input(i)));
  for (int i = 0; i < node.output_size(); ++i)
    out.push_back(node.output(i).empty() ? RankedTensorType() : typeOf(node.output(i)));
  for (const Input &p : padded)
    if (!in[p.index])
      return refuse(p, "its type is unknown");
  if (out.empty() || !out[0])
    return refuse(first, "the node's result type is unknown");

  // A shape of a padded value holds the padded length: only as another padded value's shape.
  auto isShapeOperand = [&](const Input &p) {
    return (op == "Reshape" || op == "Expand") && p.index == 1 && find(node.input(0)) &&
           find(node.input(0))->kind != Kind::Size;
  };
  SmallVector<Input> data;
  for (const Input &p : padded) {
    if (p.info->kind != Kind::Size)
      data.push_back(p);
    else if (!isShapeOperand(p) && !llvm::is_contained(kShapeOps, llvm::StringRef(op)))
      return refuse(p, "as a shape (it holds the padded length, not the count) it would "
                       "size or compute something other than a padded value's shape");
  }
  if (data.empty()) {
    if (op == "Gather" && find(node.input(1)))
      return refuse(padded.back(), "a shape indexed by it would be read at padded positions");
    set(0, Kind::Size, 0);
    return "";
  }
  if (op == "Shape" || op == "Size") {
    set(0, Kind::Size, 0);
    return "";
  }
  if (data.size() > 1 && op != "Concat" && !isElementwise(op) && op != "ScatterElements" &&
      op != "ScatterND")
    return refuse(data[1], "this op takes only one padded operand");

  const Input &x = data.front();
  ArrayRef<int64_t> inShape = in[x.index].getShape(), outShape = out[0].getShape();
  const int64_t axis = x.info->axis, inRank = inShape.size(), outRank = outShape.size();
  const Kind kind = x.info->kind;

  if (op == "Identity") {
    set(0, kind, axis);
    return "";
  }
  if (op == "Cast") {
    bool integer = out[0].getElementType().isInteger(64) || out[0].getElementType().isInteger(32);
    set(0, kind == Kind::Coordinates && integer ? Kind::Coordinates : Kind::Rows, axis);
    return "";
  }
  if (op == "Transpose") {
    SmallVector<int64_t> perm;
    for (const auto &a : node.attribute())
      if (a.name() == "perm")
        perm.assign(a.ints().begin(), a.ints().end());
    if (perm.empty())
      for (int64_t d = inRank - 1; d >= 0; --d)
        perm.push_back(d);
    auto it = llvm::find(perm, axis);
    if (it == perm.end())
      return refuse(x, "its permutation is invalid");
    set(0, kind, it - perm.begin());
    return "";
  }
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten") {
    if (x.index != 0)
      return refuse(x, "it would give the shape");
    auto to = reshapedAxis(inShape, axis, outShape);
    if (!to)
      return refuse(x, "the reshape merges or splits the padded axis");
    set(0, kind, *to);
    return "";
  }
  if (op == "Expand") {
    if (x.index != 0)
      return refuse(x, "it would give the shape");
    const int64_t to = axis + outRank - inRank;
    if (outShape[to] != inShape[axis])
      return refuse(x, "the expand broadcasts the padded axis");
    set(0, kind, to);
    return "";
  }
  if (op == "Slice" || op == "Split") {
    if (x.index != 0)
      return refuse(x, "it would bound the slices");
    for (int o = 0; o < node.output_size(); ++o) {
      if (!out[o])
        continue;
      if (out[o].getRank() != inRank || out[o].getDimSize(axis) != inShape[axis])
        return refuse(x, "it is cut along the padded axis");
      set(o, kind, axis);
    }
    return "";
  }
  if (op == "Concat") {
    const int64_t along = normalized(intAttr(node, "axis", 0), outRank);
    bool allCoordinates = true;
    for (int i = 0; i < node.input_size(); ++i) {
      const Info *info = find(node.input(i));
      if (!info || info->kind != Kind::Coordinates)
        allCoordinates = false;
    }
    for (const Input &p : data)
      if (p.info->axis != axis || in[p.index].getRank() != inRank)
        return refuse(p, "the concatenated padded values are padded along different axes");
    if (along == axis)
      return refuse(x, "it is concatenated along the padded axis");
    set(0, allCoordinates ? Kind::Coordinates : Kind::Rows, axis);
    return "";
  }
  if (isElementwise(op)) {
    const int64_t to = axis + outRank - inRank;
    for (const Input &p : data) {
      int64_t mapped = p.info->axis + outRank - in[p.index].getRank();
      if (mapped != to)
        return refuse(p, "the operands are padded along different axes");
    }
    if (to < 0 || to >= outRank || outShape[to] != inShape[axis])
      return refuse(x, "the padded axis is broadcast");
    set(0, Kind::Rows, to);
    return "";
  }
  if (op == "MatMul" || op == "Gemm") {
    if (x.index != 0)
      return refuse(x, "the padded axis would be summed over (only the left operand's rows "
                       "may be padded)");
    if (op == "Gemm" && intAttr(node, "transA", 0) != 0)
      return refuse(x, "the padded axis would be summed over (transA)");
    if (inRank < 2 || axis == inRank - 1)
      return refuse(x, "the padded axis would be summed over");
    set(0, Kind::Rows, axis + outRank - inRank);
    return "";
  }
  if (op == "Softmax" || op == "LogSoftmax" || op == "LayerNormalization" ||
      op == "RMSNormalization" || op == "SimplifiedLayerNormalization") {
    if (x.index != 0)
      return refuse(x, "it would scale or shift the normalized rows");
    const int64_t along = normalized(intAttr(node, "axis", -1), inRank);
    const bool normalizesPadded =
        op.find("Softmax") != std::string::npos ? along == axis : along <= axis;
    if (normalizesPadded)
      return refuse(x, "the padded axis is normalized over");
    set(0, Kind::Rows, axis);
    return "";
  }
  if (op == "Gather") {
    const int64_t along = normalized(intAttr(node, "axis", 0), inRank);
    if (x.index == 0) {
      if (along == axis)
        return refuse(x, "it is gathered along the padded axis");
      const int64_t indexRank = in[1] ? in[1].getRank() : 0;
      set(0, kind, axis < along ? axis : axis - 1 + indexRank);
      return "";
    }
    const int64_t dataAlong = normalized(intAttr(node, "axis", 0), in[0].getRank());
    set(0, Kind::Rows, dataAlong + axis);
    return "";
  }
  if (op == "GatherND") {
    if (x.index == 0 || axis == inRank - 1)
      return refuse(x, "it is gathered along the padded axis");
    set(0, Kind::Rows, axis);
    return "";
  }
  if (op == "ScatterElements" || op == "ScatterND") {
    if (x.index == 0)
      return refuse(x, "the scatter's data would keep padded rows");
    const Info *indices = find(node.input(1));
    if (!indices || indices->kind != Kind::Coordinates)
      return refuse(x, indices ? "the scatter's indices are computed from the coordinates, "
                                 "so a padded entry could address a real element"
                               : "the scatter's indices are not padded, so padded updates "
                                 "would be written");
    if (op == "ScatterND" && indices->axis == in[1].getRank() - 1)
      return refuse(padded.front(), "the indices are padded along the tuple axis");
    if (const Info *updates = find(node.input(2)); updates && updates->axis != indices->axis)
      return refuse(padded.back(), "the updates are padded along another axis than the indices");
    return "";
  }
  return refuse(x, "'" + op + "' is not one of the ops that keep the padding apart");
}

} // namespace sinter::import
