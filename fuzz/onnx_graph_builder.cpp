#include "onnx_graph_builder.h"

#include <cmath>
#include <cstring>

namespace sinter::fuzz {
namespace {

uint16_t toBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7fff + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

/// Round-to-nearest fp16 for the normal range the generator uses; tiny values flush to zero.
uint16_t toFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffff;
  if (exponent <= 0)
    return sign;
  if (exponent >= 31)
    return sign | 0x7c00;
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  if ((mantissa & 0x1fff) > 0x1000 || ((mantissa & 0x1fff) == 0x1000 && (half & 1)))
    ++half; // a carry into the exponent is still the right rounding
  return sign | static_cast<uint16_t>(half);
}

int64_t elements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void setFloats(onnx::TensorProto &tensor, ElementType type, const std::vector<float> &values) {
  std::string raw;
  for (float v : values) {
    if (type == kFloat) {
      raw.append(reinterpret_cast<const char *>(&v), 4);
      continue;
    }
    uint16_t h = type == kBFloat16 ? toBFloat16(v) : toFloat16(v);
    raw.append(reinterpret_cast<const char *>(&h), 2);
  }
  tensor.set_raw_data(raw);
}

} // namespace

OnnxGraphBuilder::OnnxGraphBuilder(int64_t opset, uint64_t weightSeed)
    : opset_(opset), rng_(weightSeed * 0x9e3779b97f4a7c15ull + 1) {
  model_.set_ir_version(opset >= 23 ? 11 : 10);
  model_.set_producer_name("sinter-pipeline-fuzz");
  auto *import = model_.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  graph_ = model_.mutable_graph();
  graph_->set_name("fuzz_graph");
}

float OnnxGraphBuilder::noise() {
  // splitmix64: weights cost no fuzz bytes beyond the seed.
  uint64_t z = (rng_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) / static_cast<float>(1ull << 23) - 1.0f; // [-1, 1)
}

std::string OnnxGraphBuilder::fresh(const std::string &hint) {
  return hint + "_" + std::to_string(counter_++);
}

void OnnxGraphBuilder::input(const std::string &name, ElementType type, const Shape &shape,
                             const std::vector<std::string> &symbols) {
  auto *value = graph_->add_input();
  value->set_name(name);
  auto *tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type);
  size_t symbol = 0;
  for (int64_t d : shape) {
    auto *dim = tensor->mutable_shape()->add_dim();
    if (d >= 0)
      dim->set_dim_value(d);
    else
      dim->set_dim_param(symbol < symbols.size() ? symbols[symbol++] : "dim");
  }
}

void OnnxGraphBuilder::output(const std::string &value, const std::string &name,
                              ElementType type) {
  bool produced = false;
  for (const auto &n : graph_->node())
    for (const auto &o : n.output())
      produced |= o == value;
  bool isOutput = false;
  for (const auto &o : graph_->output())
    isOutput |= o.name() == value;
  if (!produced || isOutput) { // a graph input, a weight, or a value already named as an output
    std::string copy = node("Identity", {value});
    for (auto &n : *graph_->mutable_node())
      for (auto &o : *n.mutable_output())
        if (o == copy)
          o = name;
  } else { // the exporter's way: the producing node writes the output's name
    for (auto &n : *graph_->mutable_node()) {
      for (auto &o : *n.mutable_output())
        if (o == value)
          o = name;
      for (auto &i : *n.mutable_input())
        if (i == value)
          i = name;
    }
  }
  auto *out = graph_->add_output();
  out->set_name(name);
  out->mutable_type()->mutable_tensor_type()->set_elem_type(type);
}

std::string OnnxGraphBuilder::weight(const std::string &hint, ElementType type, const Shape &shape,
                                     float scale, bool splat) {
  return weightNear(hint, type, shape, splat ? scale * 0.5f : 0.0f, splat ? 0.0f : scale);
}

std::string OnnxGraphBuilder::weightNear(const std::string &hint, ElementType type,
                                         const Shape &shape, float offset, float scale) {
  auto *tensor = graph_->add_initializer();
  std::string name = fresh(hint);
  tensor->set_name(name);
  tensor->set_data_type(type);
  for (int64_t d : shape)
    tensor->add_dims(d);
  std::vector<float> values(static_cast<size_t>(elements(shape)));
  for (float &v : values)
    v = offset + scale * noise();
  setFloats(*tensor, type, values);
  return name;
}

std::string OnnxGraphBuilder::ints(const std::vector<int64_t> &values, bool scalar) {
  auto *tensor = graph_->add_initializer();
  std::string name = fresh("val");
  tensor->set_name(name);
  tensor->set_data_type(kInt64);
  if (!scalar)
    tensor->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values)
    tensor->add_int64_data(v);
  return name;
}

std::string OnnxGraphBuilder::scalar(ElementType type, float value) {
  auto *tensor = graph_->add_initializer();
  std::string name = fresh("val");
  tensor->set_name(name);
  tensor->set_data_type(type);
  setFloats(*tensor, type, {value});
  return name;
}

std::string OnnxGraphBuilder::boolTensor(const Shape &shape, const std::vector<bool> &values) {
  auto *tensor = graph_->add_initializer();
  std::string name = fresh("mask");
  tensor->set_name(name);
  tensor->set_data_type(kBool);
  for (int64_t d : shape)
    tensor->add_dims(d);
  std::string raw;
  for (bool v : values)
    raw.push_back(v ? 1 : 0);
  tensor->set_raw_data(raw);
  return name;
}

std::string OnnxGraphBuilder::node(const std::string &op, const std::vector<std::string> &inputs,
                                   const std::vector<Attribute> &attributes, int outputs) {
  auto *n = graph_->add_node();
  std::string name = fresh(op);
  n->set_name("node_" + name);
  n->set_op_type(op);
  for (const std::string &in : inputs)
    n->add_input(in);
  for (int i = 0; i < outputs; ++i)
    n->add_output(nodeOutput(name, i));
  for (const Attribute &a : attributes) {
    auto *attr = n->add_attribute();
    attr->set_name(a.name);
    switch (a.kind) {
    case Attribute::Kind::Int:
      attr->set_type(onnx::AttributeProto::INT);
      attr->set_i(a.i);
      break;
    case Attribute::Kind::Float:
      attr->set_type(onnx::AttributeProto::FLOAT);
      attr->set_f(a.f);
      break;
    case Attribute::Kind::String:
      attr->set_type(onnx::AttributeProto::STRING);
      attr->set_s(a.s);
      break;
    case Attribute::Kind::Ints:
      attr->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.ints)
        attr->add_ints(v);
      break;
    }
  }
  return name;
}

std::string OnnxGraphBuilder::nodeOutput(const std::string &first, int index) const {
  return index == 0 ? first : first + "_" + std::to_string(index);
}

std::string OnnxGraphBuilder::serialize() const { return model_.SerializeAsString(); }

} // namespace sinter::fuzz
