// Nodes of default-domain opsets 7 to 12, rewritten into opset 13's forms before import:
// operands that were attributes become Constant nodes (Squeeze / Unsqueeze axes, Pad's pads
// and value, Slice's starts / ends / axes, Clip's bounds, TopK's k), Softmax / LogSoftmax /
// Hardmax get opset 13's axis (their older form flattened the dimensions from `axis` on),
// Upsample and Resize-10 become Resize-11 with the asymmetric coordinates they used, Scatter
// becomes ScatterElements, Scan-8 is marked as batched, and attributes that only mattered for
// training go. Every other op means the same at 7..12 as at 13, so the rewritten nodes import
// with opset 13's semantics.
#include "LegacyForms.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace sinter::import {
namespace {

const onnx::AttributeProto *findAttribute(const onnx::NodeProto &node, const std::string &name) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

void removeAttributes(onnx::NodeProto &node, std::initializer_list<const char *> names) {
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
  for (const onnx::AttributeProto &a : node.attribute()) {
    bool drop = false;
    for (const char *name : names)
      drop = drop || a.name() == name;
    if (!drop)
      *kept.Add() = a;
  }
  node.mutable_attribute()->Swap(&kept);
}

void setInput(onnx::NodeProto &node, int index, const std::string &value) {
  while (node.input_size() <= index)
    node.add_input("");
  node.set_input(index, value);
}

/// The ONNX type code of an MLIR element type (0 when none).
int onnxTypeOf(Type t) {
  if (t.isF32()) return onnx::TensorProto::FLOAT;
  if (t.isF16()) return onnx::TensorProto::FLOAT16;
  if (t.isBF16()) return onnx::TensorProto::BFLOAT16;
  if (t.isF64()) return onnx::TensorProto::DOUBLE;
  if (t.isInteger(1)) return onnx::TensorProto::BOOL;
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 8: return i.isUnsigned() ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
    case 16: return i.isUnsigned() ? onnx::TensorProto::UINT16 : onnx::TensorProto::INT16;
    case 32: return i.isUnsigned() ? onnx::TensorProto::UINT32 : onnx::TensorProto::INT32;
    case 64: return i.isUnsigned() ? onnx::TensorProto::UINT64 : onnx::TensorProto::INT64;
    }
  }
  return 0;
}

class Rewriter {
public:
  Rewriter(const onnx::NodeProto &node, const std::string &name, const LegacyTypeOf &typeOf)
      : node(node), name(name), typeOf(typeOf) {}

  /// A Constant node (emitted before the rewritten node) holding int64 `values` (shape
  /// [values.size()], or a scalar); returns its output's name.
  std::string ints(const std::string &what, llvm::ArrayRef<int64_t> values, bool scalar = false) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::INT64);
    if (!scalar)
      t.add_dims(int64_t(values.size()));
    for (int64_t v : values)
      t.add_int64_data(v);
    return constant(what, t);
  }

  /// A scalar of `value` in the element type of `like` (a Constant float, cast).
  std::string scalarLike(const std::string &what, float value, const std::string &like) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(value);
    std::string f = constant(what + "_f32", t);
    RankedTensorType type = typeOf(like);
    int code = type ? onnxTypeOf(type.getElementType()) : 0;
    if (code == 0 || code == onnx::TensorProto::FLOAT)
      return f;
    onnx::NodeProto cast;
    cast.set_op_type("Cast");
    cast.set_name(name + "/" + what);
    cast.add_input(f);
    cast.add_output(name + "/" + what);
    onnx::AttributeProto *to = cast.add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(code);
    out.push_back(cast);
    return cast.output(0);
  }

  std::string constant(const std::string &what, const onnx::TensorProto &value) {
    onnx::NodeProto c;
    c.set_op_type("Constant");
    c.set_name(name + "/" + what);
    c.add_output(name + "/" + what);
    onnx::AttributeProto *a = c.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = value;
    out.push_back(c);
    return c.output(0);
  }

  LogicalResult fail(const std::string &message) {
    error = message;
    return failure();
  }

  LogicalResult rewrite(int64_t opset);

  const onnx::NodeProto &node;
  const std::string &name;
  const LegacyTypeOf &typeOf;
  std::vector<onnx::NodeProto> out;
  std::string error;
};

LogicalResult Rewriter::rewrite(int64_t opset) {
  onnx::NodeProto n = node;
  const std::string &op = n.op_type();
  auto intsOf = [&](const char *attr) -> std::optional<std::vector<int64_t>> {
    const onnx::AttributeProto *a = findAttribute(n, attr);
    if (!a)
      return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  };
  if ((op == "Squeeze" || op == "Unsqueeze") && findAttribute(n, "axes")) {
    setInput(n, 1, ints("axes", *intsOf("axes")));
    removeAttributes(n, {"axes"});
  } else if (op == "Pad" && opset < 11) {
    auto pads = intsOf("pads");
    if (!pads)
      return fail("attribute 'pads' is required");
    setInput(n, 1, ints("pads", *pads));
    const onnx::AttributeProto *value = findAttribute(n, "value");
    if (value && value->f() != 0.0f)
      setInput(n, 2, scalarLike("value", value->f(), n.input(0)));
    removeAttributes(n, {"pads", "value"});
  } else if (op == "Slice" && opset < 10) {
    auto starts = intsOf("starts"), ends = intsOf("ends"), axes = intsOf("axes");
    if (!starts || !ends)
      return fail("attributes 'starts' and 'ends' are required");
    setInput(n, 1, ints("starts", *starts));
    setInput(n, 2, ints("ends", *ends));
    if (axes)
      setInput(n, 3, ints("axes", *axes));
    removeAttributes(n, {"starts", "ends", "axes"});
  } else if (op == "Clip" && opset < 11) {
    const onnx::AttributeProto *lo = findAttribute(n, "min"), *hi = findAttribute(n, "max");
    if (lo)
      setInput(n, 1, scalarLike("min", lo->f(), n.input(0)));
    if (hi)
      setInput(n, 2, scalarLike("max", hi->f(), n.input(0)));
    removeAttributes(n, {"min", "max"});
  } else if (op == "TopK" && opset < 10) {
    const onnx::AttributeProto *k = findAttribute(n, "k");
    if (!k)
      return fail("attribute 'k' is required");
    setInput(n, 1, ints("k", {k->i()}));
    removeAttributes(n, {"k"});
  } else if (op == "Dropout") {
    removeAttributes(n, {"ratio", "is_test"}); // inference: the identity
  } else if (op == "BatchNormalization") {
    const onnx::AttributeProto *spatial = findAttribute(n, "spatial");
    if (spatial && spatial->i() != 1)
      return fail("attribute 'spatial' = " + std::to_string(spatial->i()) +
                  " (per-element statistics) is not supported (only 1)");
    removeAttributes(n, {"spatial"});
  } else if (op == "Scan" && opset < 9) {
    // Opset 8's Scan runs its body over each batch element (axis 0 of every state and scan
    // input) and scans along axis 1, after an optional sequence_lens input; the importer's
    // Scan takes that form under this private attribute (ControlFlowImports.cpp).
    if (const onnx::AttributeProto *d = findAttribute(n, "directions")) {
      onnx::AttributeProto renamed = *d;
      renamed.set_name("scan_input_directions");
      removeAttributes(n, {"directions"});
      *n.add_attribute() = renamed;
    }
    onnx::AttributeProto *batched = n.add_attribute();
    batched->set_name("sinter.legacy_batch");
    batched->set_type(onnx::AttributeProto::INT);
    batched->set_i(1);
  } else if (op == "Scatter") {
    n.set_op_type("ScatterElements"); // Scatter (9, 10) is ScatterElements without reduction
  } else if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    RankedTensorType type = typeOf(n.input(0));
    if (!type)
      return fail("input '" + n.input(0) + "' is not defined before the node");
    const int64_t rank = type.getRank();
    int64_t axis = 1;
    if (const onnx::AttributeProto *a = findAttribute(n, "axis"))
      axis = a->i();
    if (axis < 0)
      axis += rank;
    if (rank == 0 || axis < 0 || axis >= rank)
      return fail("attribute 'axis' is out of range for a rank-" + std::to_string(rank) +
                  " input");
    removeAttributes(n, {"axis"});
    onnx::AttributeProto *last = n.add_attribute();
    last->set_name("axis");
    last->set_type(onnx::AttributeProto::INT);
    last->set_i(-1);
    if (axis != rank - 1) {
      // Before opset 13 the op ran over the dimensions from `axis` on, flattened into one.
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < rank; ++d)
        (d < axis ? outer : inner) *= type.getDimSize(d);
      onnx::NodeProto flat;
      flat.set_op_type("Reshape");
      flat.set_name(name + "/flatten");
      flat.add_input(n.input(0));
      flat.add_input(ints("flat_shape", {outer, inner}));
      flat.add_output(name + "/flat");
      out.push_back(flat);
      std::string result = n.output(0);
      n.set_input(0, flat.output(0));
      n.set_output(0, name + "/flat_out");
      out.push_back(n);
      onnx::NodeProto back;
      back.set_op_type("Reshape");
      back.set_name(name + "/unflatten");
      back.add_input(n.output(0));
      back.add_input(ints("unflat_shape", type.getShape()));
      back.add_output(result);
      out.push_back(back);
      return success();
    }
  } else if ((op == "Upsample" && opset < 10) || (op == "Resize" && opset == 10)) {
    // Both scale every axis, with asymmetric coordinates; nearest reads the floor when
    // enlarging and the ceiling when shrinking (as onnxruntime's opset-10 kernels do).
    std::string mode = "nearest";
    if (const onnx::AttributeProto *m = findAttribute(n, "mode"))
      mode = m->s();
    std::string scales;
    if (op == "Upsample" && opset < 9) {
      const onnx::AttributeProto *s = findAttribute(n, "scales");
      if (!s)
        return fail("attribute 'scales' is required");
      onnx::TensorProto t;
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_dims(s->floats_size());
      for (float v : s->floats())
        t.add_float_data(v);
      scales = constant("scales", t);
    } else {
      if (n.input_size() < 2 || n.input(1).empty())
        return fail("input 'scales' is required");
      scales = n.input(1);
    }
    onnx::NodeProto resize;
    resize.set_op_type("Resize");
    resize.set_name(n.name());
    resize.add_input(n.input(0));
    resize.add_input(""); // roi
    resize.add_input(scales);
    resize.add_output(n.output(0));
    auto text = [&](const char *key, const std::string &value) {
      onnx::AttributeProto *a = resize.add_attribute();
      a->set_name(key);
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(value);
    };
    text("mode", mode == "bilinear" ? "linear" : mode);
    text("coordinate_transformation_mode", "asymmetric");
    if (mode == "nearest")
      text("nearest_mode", "sinter.legacy");
    out.push_back(resize);
    return success();
  }
  out.push_back(n);
  return success();
}

} // namespace

FailureOr<std::vector<onnx::NodeProto>> rewriteLegacyNode(const onnx::NodeProto &node,
                                                         int64_t opset, const std::string &name,
                                                         const LegacyTypeOf &typeOf,
                                                         std::string &error) {
  Rewriter rewriter(node, name, typeOf);
  if (failed(rewriter.rewrite(opset))) {
    error = rewriter.error;
    return failure();
  }
  return std::move(rewriter.out);
}

} // namespace sinter::import
