// Import of If, Loop and Scan by inlining their subgraphs: an If whose condition is known when
// compiling imports the branch taken (otherwise both branches, and a Where picks per output
// when their outputs agree in type); Loop and Scan unroll over a trip count known when
// compiling, each iteration a renamed copy of the body (opset 8's batched Scan: one unrolled
// scan per batch element). Subgraph nodes import through the same path as the graph's
// (GraphState::importNode), so they read outer values by name.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <set>
#include <vector>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// The most iterations a Loop or Scan unrolls to.
constexpr int64_t kMaxIterations = 4096;

/// Every name `graph` defines (its inputs, initializers and node outputs), nested subgraphs
/// included.
void collectDefinitions(const onnx::GraphProto &graph, std::set<std::string> &names) {
  for (const auto &in : graph.input())
    names.insert(in.name());
  for (const auto &init : graph.initializer())
    names.insert(init.name());
  for (const auto &node : graph.node()) {
    for (const auto &out : node.output())
      if (!out.empty())
        names.insert(out);
    for (const auto &a : node.attribute()) {
      if (a.has_g())
        collectDefinitions(a.g(), names);
      for (const auto &g : a.graphs())
        collectDefinitions(g, names);
    }
  }
}

/// Prefixes every name of `graph` that is in `defined` (references to outer values keep
/// theirs), nested subgraphs included.
void renameDefinitions(onnx::GraphProto &graph, const std::set<std::string> &defined,
                       const std::string &prefix) {
  auto rename = [&](std::string *name) {
    if (!name->empty() && defined.count(*name))
      *name = prefix + *name;
  };
  for (auto &in : *graph.mutable_input())
    rename(in.mutable_name());
  for (auto &out : *graph.mutable_output())
    rename(out.mutable_name());
  for (auto &init : *graph.mutable_initializer())
    rename(init.mutable_name());
  for (auto &node : *graph.mutable_node()) {
    for (auto &in : *node.mutable_input())
      rename(&in);
    for (auto &out : *node.mutable_output())
      rename(&out);
    if (!node.name().empty())
      node.set_name(prefix + node.name());
    for (auto &a : *node.mutable_attribute()) {
      if (a.has_g())
        renameDefinitions(*a.mutable_g(), defined, prefix);
      for (auto &g : *a.mutable_graphs())
        renameDefinitions(g, defined, prefix);
    }
  }
}

/// Imports `graph` (already renamed where needed) with its inputs bound to `inputs`; returns
/// its outputs' values.
FailureOr<SmallVector<Value>> importSubgraph(NodeImporter &n, const onnx::GraphProto &graph,
                                             ArrayRef<Value> inputs, const std::string &what) {
  if ((size_t)graph.input_size() != inputs.size())
    return n.fail(what + " has " + Twine(graph.input_size()) + " inputs; " +
                  Twine(inputs.size()) + " are bound");
  for (int i = 0; i < graph.input_size(); ++i) {
    if (n.state.values.count(graph.input(i).name()))
      return n.fail(what + ": input '" + graph.input(i).name() + "' redefines a value");
    n.state.values[graph.input(i).name()] = inputs[i]; // constants stay known: keyed by value
  }
  for (const auto &init : graph.initializer()) {
    std::string error;
    auto value = tensorFromProto(init, n.builder.getContext(), n.state.modelDir, error);
    if (failed(value))
      return n.fail(what + ": initializer " + error);
    if (n.state.values.count(init.name()))
      return n.fail(what + ": initializer '" + init.name() + "' redefines a value");
    n.state.values[init.name()] = n.constant(*value);
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    std::string name = node.name().empty() ? what + "/" + node.op_type() + "_" + std::to_string(i)
                                           : node.name();
    for (const auto &out : node.output())
      if (!out.empty())
        n.state.producers[out] = name;
    if (failed(n.state.importNode(node, name)))
      return n.fail("in " + what + ": " + n.state.importError());
  }
  SmallVector<Value> outputs;
  for (const auto &out : graph.output()) {
    auto it = n.state.values.find(out.name());
    if (it == n.state.values.end())
      return n.fail(what + ": output '" + out.name() + "' is never produced");
    outputs.push_back(it->second);
  }
  return outputs;
}

/// `graph` with every name it defines prefixed by `prefix`: its own scope, apart from the
/// names of the graph around it and of other copies.
onnx::GraphProto scopedCopy(const onnx::GraphProto &graph, const std::string &prefix) {
  std::set<std::string> defined;
  collectDefinitions(graph, defined);
  onnx::GraphProto copy = graph;
  renameDefinitions(copy, defined, prefix);
  return copy;
}

/// `body` with every name it defines prefixed for iteration `index` of the node `name`.
onnx::GraphProto iterationCopy(const onnx::GraphProto &body, const std::string &name,
                               int64_t index) {
  return scopedCopy(body, name + "#" + std::to_string(index) + "/");
}

/// The node's name as the importer gave it (its own, or op type and index): unique in the
/// graph, so it prefixes the names of each inlined copy.
std::string nodeLabel(NodeImporter &n) {
  if (auto named = dyn_cast<NameLoc>(n.loc))
    return named.getName().str();
  return n.node.name().empty() ? n.node.op_type() : n.node.name();
}

FailureOr<bool> constantBool(NodeImporter &n, Value v) {
  auto it = n.state.constants.find(v);
  if (it == n.state.constants.end())
    return failure();
  auto dense = dyn_cast<DenseElementsAttr>(it->second);
  if (!dense || dense.getNumElements() != 1 || !dense.getElementType().isInteger(1))
    return failure();
  return *dense.getValues<bool>().begin();
}

LogicalResult importIf(NodeImporter &n) {
  const onnx::AttributeProto *thenBranch = n.attr("then_branch"), *elseBranch = n.attr("else_branch");
  if (!thenBranch || !elseBranch || !thenBranch->has_g() || !elseBranch->has_g())
    return n.fail("attributes then_branch and else_branch (graphs) are required");
  auto condType = n.inputType(0);
  if (!condType)
    return failure();
  if (!condType.getElementType().isInteger(1) || condType.getNumElements() != 1)
    return n.fail("cond must be one bool");
  const int outputs = n.node.output_size();
  if (thenBranch->g().output_size() != outputs || elseBranch->g().output_size() != outputs)
    return n.fail("each branch must have the node's " + Twine(outputs) + " outputs");
  // Each branch is its own scope: both may define a name (optimum's merged decoders do), so
  // each is imported as a copy whose definitions carry the branch's label.
  auto branch = [&](const onnx::GraphProto &graph, const std::string &label) {
    return importSubgraph(n, scopedCopy(graph, label + "/"), {}, label);
  };
  auto known = constantBool(n, *n.input(0));
  if (succeeded(known)) {
    auto values = branch(*known ? thenBranch->g() : elseBranch->g(),
                         nodeLabel(n) + (*known ? "/then" : "/else"));
    if (failed(values))
      return failure();
    for (int i = 0; i < outputs; ++i)
      if (failed(n.setOutput(i, (*values)[i])))
        return failure();
    return success();
  }
  // Known only at run time: both branches, then a select per output.
  auto thenValues = branch(thenBranch->g(), nodeLabel(n) + "/then");
  if (failed(thenValues))
    return failure();
  auto elseValues = branch(elseBranch->g(), nodeLabel(n) + "/else");
  if (failed(elseValues))
    return failure();
  Value cond = n.reshape(*n.input(0), {});
  for (int i = 0; i < outputs; ++i) {
    Value a = (*thenValues)[i], b = (*elseValues)[i];
    if (a.getType() != b.getType())
      return n.fail("the condition is known only at run time and output " + Twine(i) +
                    " differs between the branches (" + shapeText(cast<RankedTensorType>(a.getType()).getShape()) +
                    " and " + shapeText(cast<RankedTensorType>(b.getType()).getShape()) +
                    "): Sinter compiles both branches and selects, which needs one type");
    if (failed(n.setOutput(i, WhereOp::create(n.builder, n.loc, a.getType(), cond, a, b))))
      return failure();
  }
  return success();
}

/// `values` (each of one shape) stacked along a new axis at `axis`, in order.
Value stack(NodeImporter &n, ArrayRef<Value> values, int64_t axis) {
  auto type = cast<RankedTensorType>(values.front().getType());
  SmallVector<int64_t> one(type.getShape()), all(type.getShape());
  one.insert(one.begin() + axis, 1);
  all.insert(all.begin() + axis, int64_t(values.size()));
  SmallVector<Value> parts;
  for (Value v : values)
    parts.push_back(n.reshape(v, one));
  if (parts.size() == 1)
    return parts.front();
  return ConcatOp::create(n.builder, n.loc, type.clone(all), parts, n.builder.getI64IntegerAttr(axis));
}

LogicalResult importLoop(NodeImporter &n) {
  const onnx::AttributeProto *bodyAttr = n.attr("body");
  if (!bodyAttr || !bodyAttr->has_g())
    return n.fail("attribute 'body' (a graph) is required");
  const onnx::GraphProto &body = bodyAttr->g();
  const int carried = n.numInputs() - 2;
  if (carried < 0)
    return n.fail("Loop needs its M and cond inputs (either may be empty)");
  if (body.input_size() != carried + 2 || body.output_size() < carried + 1)
    return n.fail("the body must have " + Twine(carried + 2) + " inputs and at least " +
                  Twine(carried + 1) + " outputs");
  const int scans = body.output_size() - 1 - carried;
  if (n.node.output_size() > carried + scans)
    return n.fail("the node has more outputs than the body's carried values and scan outputs");
  if (!n.hasInput(0))
    return n.fail("a Loop without a trip count M: Sinter unrolls loops, so M must be known when "
                  "compiling");
  if (!n.constantInput(0))
    return n.fail("the trip count M is known only at run time: Sinter unrolls loops, so M must "
                  "be known when compiling");
  auto trips = n.constantInts(0);
  if (failed(trips))
    return failure();
  if (trips->size() != 1 || trips->front() < 0 || trips->front() > kMaxIterations)
    return n.fail("trip count M = " + Twine(trips->empty() ? -1 : trips->front()) +
                  ": Sinter unrolls at most " + Twine(kMaxIterations) + " iterations");
  Type i64 = n.builder.getI64Type(), i1 = n.builder.getI1Type();
  Value cond = n.constant(DenseElementsAttr::get(RankedTensorType::get({}, i1), true));
  if (n.hasInput(1)) {
    auto known = constantBool(n, *n.input(1));
    if (failed(known))
      return n.fail("the loop condition is known only at run time: Sinter unrolls loops, so it "
                    "must be known when compiling");
    if (!*known)
      trips->front() = 0;
    cond = n.reshape(*n.input(1), {});
  }
  SmallVector<Value> state;
  for (int i = 0; i < carried; ++i) {
    auto v = n.input(2 + i);
    if (failed(v))
      return failure();
    state.push_back(*v);
  }
  SmallVector<SmallVector<Value>> scanned(scans);
  for (int64_t k = 0; k < trips->front(); ++k) {
    onnx::GraphProto copy = iterationCopy(body, nodeLabel(n), k);
    SmallVector<Value> inputs = {n.integerScalar(i64, k), cond};
    inputs.append(state.begin(), state.end());
    auto outputs = importSubgraph(n, copy, inputs, nodeLabel(n) + " iteration " + std::to_string(k));
    if (failed(outputs))
      return failure();
    for (int i = 0; i < carried; ++i) {
      if ((*outputs)[1 + i].getType() != state[i].getType())
        return n.fail("loop-carried value " + Twine(i) + " changes type in iteration " + Twine(k));
      state[i] = (*outputs)[1 + i];
    }
    for (int j = 0; j < scans; ++j)
      scanned[j].push_back((*outputs)[1 + carried + j]);
    auto next = constantBool(n, (*outputs)[0]);
    if (failed(next))
      return n.fail("the body's condition output is known only at run time: Sinter unrolls "
                    "loops, so it must be known when compiling");
    cond = n.reshape((*outputs)[0], {});
    if (!*next)
      break;
  }
  for (int i = 0; i < n.node.output_size(); ++i) {
    if (n.node.output(i).empty())
      continue;
    if (i < carried) {
      if (failed(n.setOutput(i, state[i])))
        return failure();
    } else if (scanned[i - carried].empty()) {
      return n.fail("scan output " + Twine(i - carried) + " of a loop that runs no iteration has "
                    "no shape");
    } else if (failed(n.setOutput(i, stack(n, scanned[i - carried], 0)))) {
      return failure();
    }
  }
  return success();
}

/// The values an unrolled Scan leaves: the final states and each scan output's steps.
struct ScanSteps {
  SmallVector<Value> state;
  SmallVector<SmallVector<Value>> scanned;
};

/// `body` unrolled over `length` steps from `state`, step t reading element t (or, reversed,
/// length - 1 - t) of each sequence along its axis; `label` names the copies.
FailureOr<ScanSteps> unrollScan(NodeImporter &n, const onnx::GraphProto &body,
                                SmallVector<Value> state, ArrayRef<Value> sequences,
                                ArrayRef<int64_t> axes, ArrayRef<int64_t> directions,
                                int64_t length, int scanOutputs, const std::string &label) {
  ScanSteps steps;
  steps.scanned.resize(scanOutputs);
  for (int64_t t = 0; t < length; ++t) {
    SmallVector<Value> inputs(state);
    for (size_t j = 0; j < sequences.size(); ++j) {
      auto type = cast<RankedTensorType>(sequences[j].getType());
      const int64_t at = directions[j] ? length - 1 - t : t;
      SmallVector<int64_t> sliced(type.getShape());
      sliced.erase(sliced.begin() + axes[j]);
      Value index = n.integerScalar(n.builder.getI64Type(), at);
      inputs.push_back(GatherOp::create(n.builder, n.loc, type.clone(sliced), sequences[j], index,
                                        n.builder.getI64IntegerAttr(axes[j])));
    }
    onnx::GraphProto copy = iterationCopy(body, label, t);
    auto outputs = importSubgraph(n, copy, inputs, label + " step " + std::to_string(t));
    if (failed(outputs))
      return failure();
    for (size_t i = 0; i < state.size(); ++i)
      state[i] = (*outputs)[i];
    for (int j = 0; j < scanOutputs; ++j)
      steps.scanned[j].push_back((*outputs)[state.size() + j]);
  }
  steps.state = std::move(state);
  return steps;
}

/// Element `index` of `value` along axis 0, without that axis.
Value batchElement(NodeImporter &n, Value value, int64_t index) {
  auto type = cast<RankedTensorType>(value.getType());
  return GatherOp::create(n.builder, n.loc, type.clone(type.getShape().drop_front()), value,
                          n.integerScalar(n.builder.getI64Type(), index),
                          n.builder.getI64IntegerAttr(0));
}

LogicalResult importScan(NodeImporter &n) {
  const onnx::AttributeProto *bodyAttr = n.attr("body");
  if (!bodyAttr || !bodyAttr->has_g())
    return n.fail("attribute 'body' (a graph) is required");
  const onnx::GraphProto &body = bodyAttr->g();
  // Opset 8's form (LegacyForms.cpp): input 0 is sequence_lens, every other input has a batch
  // axis 0 the body does not see, and the scan runs along axis 1.
  const bool batched = n.attrInt("sinter.legacy_batch", 0) != 0;
  const int firstInput = batched ? 1 : 0;
  const int64_t scanInputs = n.attrInt("num_scan_inputs", 0);
  const int states = int(n.numInputs()) - firstInput - int(scanInputs);
  if (scanInputs < 1 || states < 0)
    return n.fail("attribute 'num_scan_inputs' = " + Twine(scanInputs) + " for " +
                  Twine(n.numInputs()) + " inputs");
  const int scanOutputs = body.output_size() - states;
  if (body.input_size() != states + scanInputs || scanOutputs < 0)
    return n.fail("the body's inputs and outputs do not match the node's states and scans");
  // Opset 8 has only the input directions (LegacyForms.cpp renames them); its axes are 1 and its
  // outputs forward, and the attributes it lacks stay unread, which refuses them.
  auto listOr = [&](StringRef name, int64_t count) -> SmallVector<int64_t> {
    if (!batched || name == "scan_input_directions")
      if (auto given = n.attrInts(name))
        return *given;
    return SmallVector<int64_t>(count, batched && name.ends_with("axes") ? 1 : 0);
  };
  SmallVector<int64_t> inAxes = listOr("scan_input_axes", scanInputs),
                       inDirections = listOr("scan_input_directions", scanInputs),
                       outAxes = listOr("scan_output_axes", scanOutputs),
                       outDirections = listOr("scan_output_directions", scanOutputs);
  if ((int64_t)inAxes.size() != scanInputs || (int64_t)inDirections.size() != scanInputs ||
      (int64_t)outAxes.size() != scanOutputs || (int64_t)outDirections.size() != scanOutputs)
    return n.fail("the scan axes and directions must have one entry per scan input / output");
  SmallVector<Value> state, sequences;
  for (int i = 0; i < states; ++i) {
    auto value = n.input(firstInput + i);
    if (failed(value))
      return failure();
    state.push_back(*value);
  }
  int64_t length = -1, batch = -1;
  for (int j = 0; j < scanInputs; ++j) {
    auto type = n.inputType(firstInput + states + j);
    if (!type)
      return failure();
    auto axis = normalizeAxis(n, inAxes[j], type.getRank(), "scan_input_axes entry");
    if (failed(axis))
      return failure();
    inAxes[j] = *axis;
    if (length >= 0 && type.getDimSize(*axis) != length)
      return n.fail("the scan inputs have different lengths");
    length = type.getDimSize(*axis);
    if (batched)
      batch = type.getDimSize(0);
    sequences.push_back(*n.input(firstInput + states + j));
  }
  if (length > kMaxIterations)
    return n.fail(Twine(length) + " scan steps: Sinter unrolls at most " + Twine(kMaxIterations));

  std::vector<ScanSteps> runs; // one per batch element; one when not batched
  if (!batched) {
    auto steps = unrollScan(n, body, state, sequences, inAxes, inDirections, length, scanOutputs,
                            nodeLabel(n));
    if (failed(steps))
      return failure();
    runs.push_back(std::move(*steps));
  } else {
    if (n.hasInput(0)) {
      if (!n.constantInput(0))
        return n.fail("sequence_lens is known only at run time: Sinter unrolls the scan, so its "
                      "lengths must be known when compiling");
      auto lengths = n.constantInts(0);
      if (failed(lengths))
        return failure();
      for (int64_t l : *lengths)
        if (l != length)
          return n.fail("sequence_lens entry " + Twine(l) + " differs from the scan inputs' " +
                        Twine(length) + " steps: only full-length sequences are supported");
    }
    for (Value s : state)
      if (cast<RankedTensorType>(s.getType()).getRank() < 1 ||
          cast<RankedTensorType>(s.getType()).getDimSize(0) != batch)
        return n.fail("every state must have the scan inputs' batch size " + Twine(batch) +
                      " along axis 0");
    for (int64_t axis : inAxes)
      if (axis == 0)
        return n.fail("the scan inputs' axis 0 is the batch axis");
    SmallVector<int64_t> elementAxes;
    for (int64_t axis : inAxes)
      elementAxes.push_back(axis - 1);
    for (int64_t b = 0; b < batch; ++b) {
      SmallVector<Value> elementState, elementSequences;
      for (Value s : state)
        elementState.push_back(batchElement(n, s, b));
      for (Value s : sequences)
        elementSequences.push_back(batchElement(n, s, b));
      auto steps = unrollScan(n, body, elementState, elementSequences, elementAxes, inDirections,
                              length, scanOutputs, nodeLabel(n) + "/batch" + std::to_string(b));
      if (failed(steps))
        return failure();
      runs.push_back(std::move(*steps));
    }
  }
  // Each output of one run, then the runs stacked along the batch axis when batched.
  auto assemble = [&](auto &&outputOf) -> FailureOr<Value> {
    SmallVector<Value> perRun;
    for (auto &run : runs) {
      FailureOr<Value> v = outputOf(run);
      if (failed(v))
        return failure();
      perRun.push_back(*v);
    }
    return batched ? stack(n, perRun, 0) : perRun.front();
  };
  for (int i = 0; i < n.node.output_size(); ++i) {
    if (n.node.output(i).empty())
      continue;
    FailureOr<Value> value;
    if (i < states) {
      value = assemble([&](ScanSteps &run) -> FailureOr<Value> { return run.state[i]; });
    } else {
      const int j = i - states;
      value = assemble([&](ScanSteps &run) -> FailureOr<Value> {
        if (run.scanned[j].empty())
          return n.fail("a scan of length 0 has no output shape");
        SmallVector<Value> ordered(run.scanned[j]);
        if (outDirections[j])
          std::reverse(ordered.begin(), ordered.end());
        const int64_t rank = cast<RankedTensorType>(ordered.front().getType()).getRank() + 1;
        auto axis =
            normalizeAxis(n, outAxes[j] - (batched ? 1 : 0), rank, "scan_output_axes entry");
        if (failed(axis))
          return failure();
        return stack(n, ordered, *axis);
      });
    }
    if (failed(value) || failed(n.setOutput(i, *value)))
      return failure();
  }
  return success();
}

} // namespace

void registerControlFlowImports(OpImportRegistry &r) {
  r["If"] = {importIf, 11};
  r["Loop"] = {importLoop, 11};
  r["Scan"] = {importScan, 9};
}

} // namespace sinter::import
