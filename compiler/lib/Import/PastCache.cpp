// The with-past form of a causal language model export (optimum's text-generation-with-past,
// torch.onnx with a DynamicCache): each layer's keys and values come in as a graph input
// `past` and leave as a graph output Concat(past, new) along the sequence axis.
#include "NodeImporter.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

namespace sinter::import {
namespace {

const onnx::ValueInfoProto *findValueInfo(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &infos,
                                          const std::string &name) {
  for (const auto &info : infos)
    if (info.name() == name)
      return &info;
  return nullptr;
}

/// The symbolic name of dimension `axis` of `info`, "" when it is static or unnamed.
std::string dimParam(const onnx::ValueInfoProto &info, int64_t axis) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape())
    return "";
  const auto &shape = info.type().tensor_type().shape();
  if (axis < 0 || axis >= shape.dim_size() || shape.dim(axis).has_dim_value())
    return "";
  return llvm::StringRef(shape.dim(axis).dim_param()).trim().str();
}

} // namespace

std::string findPastCacheDims(const onnx::GraphProto &graph,
                              const llvm::StringSet<> &initializerNames, PastCacheDims &dims) {
  llvm::StringSet<> outputs;
  for (const auto &out : graph.output())
    outputs.insert(out.name());
  for (const auto &node : graph.node()) {
    if (node.op_type() != "Concat" || node.input_size() != 2 || node.output_size() != 1 ||
        !outputs.contains(node.output(0)) || initializerNames.contains(node.input(0)))
      continue;
    const onnx::ValueInfoProto *past = findValueInfo(graph.input(), node.input(0));
    const onnx::ValueInfoProto *present = findValueInfo(graph.output(), node.output(0));
    if (!past || !present || !past->type().has_tensor_type())
      continue;
    int64_t rank = past->type().tensor_type().shape().dim_size();
    int64_t axis = 0;
    for (const auto &attr : node.attribute())
      if (attr.name() == "axis")
        axis = attr.i();
    if (axis < 0)
      axis += rank;
    std::string pastDim = dimParam(*past, axis);
    if (pastDim.empty())
      return "cache input '" + past->name() + "' (concatenated into output '" +
             present->name() + "' by node '" + node.name() +
             "') has no symbolic dimension along axis " + std::to_string(axis) +
             ", so its past length cannot be set";
    if (!dims.past.empty() && dims.past != pastDim)
      return "cache inputs use two past dimensions, '" + dims.past + "' and '" + pastDim + "'";
    dims.past = pastDim;
    dims.caches.push_back(past->name());
    // The exporters write the present length as "past + sequence".
    std::string presentDim = dimParam(*present, axis);
    llvm::SmallVector<llvm::StringRef> terms;
    llvm::StringRef(presentDim).split(terms, '+');
    if (terms.size() == 2) {
      llvm::StringRef a = terms[0].trim(), b = terms[1].trim();
      if (a == pastDim && dims.sequence.empty())
        dims.sequence = b.str();
      else if (b == pastDim && dims.sequence.empty())
        dims.sequence = a.str();
    }
  }
  if (dims.caches.empty())
    return "the model has no past/present cache pairs (a graph input that a Concat joins with "
           "the new keys or values into a graph output, as optimum's text-generation-with-past "
           "exports have)";
  if (dims.sequence.empty())
    if (const onnx::ValueInfoProto *ids = findValueInfo(graph.input(), "input_ids"))
      dims.sequence = dimParam(*ids, ids->type().tensor_type().shape().dim_size() - 1);
  if (dims.sequence.empty() || dims.sequence == dims.past)
    return "cannot tell the new tokens' dimension: no cache output is written as '" + dims.past +
           " + NAME' and 'input_ids' has no symbolic last dimension";
  return "";
}

} // namespace sinter::import
