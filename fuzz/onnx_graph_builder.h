// Builds an ONNX model in memory, node by node, the way torch.onnx's exporter writes one:
// weights as initializers, shapes and axes as int64 initializers, names made unique.
#ifndef SINTER_FUZZ_ONNX_GRAPH_BUILDER_H
#define SINTER_FUZZ_ONNX_GRAPH_BUILDER_H

#include "onnx.pb.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace sinter::fuzz {

/// ONNX TensorProto element types the generator uses.
enum ElementType : int32_t {
  kFloat = onnx::TensorProto::FLOAT,
  kFloat16 = onnx::TensorProto::FLOAT16,
  kBFloat16 = onnx::TensorProto::BFLOAT16,
  kInt64 = onnx::TensorProto::INT64,
  kBool = onnx::TensorProto::BOOL,
};

using Shape = std::vector<int64_t>;

/// One attribute of a node: an int, a float, a string or a list of ints.
struct Attribute {
  enum class Kind { Int, Float, String, Ints } kind;
  std::string name;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;

  static Attribute integer(std::string name, int64_t v) { return {Kind::Int, std::move(name), v}; }
  static Attribute real(std::string name, float v) { return {Kind::Float, std::move(name), 0, v}; }
  static Attribute text(std::string name, std::string v) {
    return {Kind::String, std::move(name), 0, 0, std::move(v)};
  }
  static Attribute list(std::string name, std::vector<int64_t> v) {
    return {Kind::Ints, std::move(name), 0, 0, {}, std::move(v)};
  }
};

class OnnxGraphBuilder {
public:
  OnnxGraphBuilder(int64_t opset, uint64_t weightSeed);

  int64_t opset() const { return opset_; }

  /// A graph input; a negative dimension is symbolic, named by `symbols` in order.
  void input(const std::string &name, ElementType type, const Shape &shape,
             const std::vector<std::string> &symbols = {});
  /// A graph output (element type only: the importer infers the shape).
  void output(const std::string &value, const std::string &name, ElementType type);

  /// A weight of pseudo-random values in [-scale, scale]; `splat` stores one repeated value.
  std::string weight(const std::string &hint, ElementType type, const Shape &shape, float scale,
                     bool splat = false);
  /// A weight whose values are `offset + scale * noise`, e.g. a norm scale near 1.
  std::string weightNear(const std::string &hint, ElementType type, const Shape &shape,
                         float offset, float scale);
  std::string ints(const std::vector<int64_t> &values, bool scalar = false);
  std::string scalar(ElementType type, float value);
  std::string boolTensor(const Shape &shape, const std::vector<bool> &values);

  /// Appends a node; returns its first output's name (others are `name + "_" + index`).
  std::string node(const std::string &op, const std::vector<std::string> &inputs,
                   const std::vector<Attribute> &attributes = {}, int outputs = 1);
  std::string nodeOutput(const std::string &first, int index) const;

  /// The model, serialized.
  std::string serialize() const;

private:
  std::string fresh(const std::string &hint);
  float noise();

  onnx::ModelProto model_;
  onnx::GraphProto *graph_;
  int64_t opset_;
  uint64_t rng_;
  int counter_ = 0;
};

} // namespace sinter::fuzz

#endif
