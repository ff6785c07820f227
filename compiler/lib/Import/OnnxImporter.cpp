#include "sinter/Compiler/OnnxImporter.h"

#include "LegacyForms.h"
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

using namespace mlir;
using namespace sinter::import;

namespace sinter {
namespace {

constexpr int64_t kMinIrVersion = 3, kMaxIrVersion = 14;
// Opsets 24-28 add element types (which the type table refuses by name), Attention's
// nonpad_kv_seqlen and sliding windows, new ops, and attributes for the new types (Cast's
// round_mode) or for 16-bit accumulation (Range's stash_type); IR versions 13 and 14 add
// element types only. An attribute no import reads is an error (importNode).
// Opsets 7 to 12 import through LegacyForms.cpp's rewrite into opset 13's forms.
constexpr int64_t kMinOpset = 7, kMaxOpset = 28;
constexpr int64_t kFirstModernOpset = 13;

const OpImportRegistry &registry() {
  static const OpImportRegistry instance = [] {
    OpImportRegistry r;
    registerElementwiseImports(r);
    registerMatrixImports(r);
    registerShapeImports(r);
    registerTensorImports(r);
    registerGenericImports(r);
    registerQuantizedImports(r);
    registerQuantizeImports(r);
    registerRecurrentImports(r);
    registerIndexingImports(r);
    registerGeneratorImports(r);
    registerLossImports(r);
    registerControlFlowImports(r);
    registerConvImports(r);
    registerPoolImports(r);
    registerChannelNormImports(r);
    registerRotaryImports(r);
    registerResizeImports(r);
    registerLayoutImports(r);
    registerEinsumImports(r);
    registerTopKImports(r);
    registerIntegerMatrixImports(r);
    registerSpectralImports(r);
    registerGridSampleImports(r);
    registerUnpoolImports(r);
    registerLinearRecurrenceImports(r);
    return r;
  }();
  return instance;
}

const OpImportRegistry &microsoftRegistry() {
  static const OpImportRegistry instance = [] {
    OpImportRegistry r;
    registerMicrosoftImports(r);
    return r;
  }();
  return instance;
}

class ModelImporter {
public:
  ModelImporter(MLIRContext &context, const ImportOptions &options, std::string &error)
      : context(context), options(options), dimValues(options.dimValues), error(error),
        builder(&context) {
    // A subgraph's nodes are written against the model's opset: inside a rewritten opset
    // 7..12 node, they go through the rewrite themselves.
    state.importNode = [this](const onnx::NodeProto &node, const std::string &name) {
      const int64_t opset = state.opset, legacy = legacyOpset;
      if (legacy)
        state.opset = legacy, legacyOpset = 0;
      LogicalResult result = importNode(node, name);
      state.opset = opset, legacyOpset = legacy;
      return result;
    };
    state.importError = [this] { return this->error; };
  }

  OwningOpRef<ModuleOp> run(StringRef bytes, const std::string &name, const std::string &modelDir) {
    onnx::ModelProto model;
    if (failed(parse(bytes, name, model)) || failed(checkVersions(model)))
      return nullptr;
    state.modelDir = modelDir.empty() ? "." : modelDir;
    for (const onnx::FunctionProto &function : model.functions()) {
      std::string domain = function.domain().empty() ? "ai.onnx" : function.domain();
      if (!functions.try_emplace({domain, function.name()}, &function).second) {
        (void)fail("the model defines function '" + function.name() + "' of domain '" + domain +
                   "' twice");
        return nullptr;
      }
    }

    OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
    builder.setInsertionPointToEnd(module->getBody());
    if (failed(importGraph(model.graph())))
      return nullptr;
    if (failed(verify(*module))) {
      error = "internal error: the imported IR does not verify";
      return nullptr;
    }
    return module;
  }

private:
  LogicalResult fail(const Twine &message) {
    error = message.str();
    return failure();
  }

  LogicalResult parse(StringRef bytes, const std::string &path, onnx::ModelProto &model) {
    if (bytes.size() > (size_t)INT32_MAX)
      return fail("'" + path + "' is larger than 2 GiB; protobuf cannot parse it: store the "
                  "weights as external data");
    google::protobuf::io::CodedInputStream stream(
        reinterpret_cast<const uint8_t *>(bytes.data()), (int)bytes.size());
    stream.SetTotalBytesLimit(INT32_MAX);
    if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
      return fail("'" + path + "' is not a valid ONNX model (protobuf parse failed; truncated or not ONNX)");
    if (!model.has_graph() || model.ir_version() == 0)
      return fail("'" + path + "' is not an ONNX model (no graph or IR version)");
    return success();
  }

  LogicalResult checkVersions(const onnx::ModelProto &model) {
    if (model.ir_version() < kMinIrVersion || model.ir_version() > kMaxIrVersion)
      return fail("unsupported ONNX IR version " + Twine(model.ir_version()) + " (supported " +
                  Twine(kMinIrVersion) + "-" + Twine(kMaxIrVersion) + ")");
    for (const auto &opset : model.opset_import()) {
      const std::string &domain = opset.domain();
      if (domain.empty() || domain == "ai.onnx") {
        if (opset.version() < kMinOpset || opset.version() > kMaxOpset)
          return fail("unsupported opset " + Twine(opset.version()) + " for domain 'ai.onnx' (supported " +
                      Twine(kMinOpset) + "-" + Twine(kMaxOpset) + ")");
        state.opset = opset.version();
      }
    }
    if (state.opset == 0)
      return fail("the model imports no opset of the default domain 'ai.onnx'");
    return success();
  }

  Location nameLoc(const std::string &name) {
    return NameLoc::get(StringAttr::get(&context, name));
  }

  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &info) {
    if (!info.type().has_tensor_type())
      return fail("graph input '" + info.name() + "' is not a tensor");
    const auto &tt = info.type().tensor_type();
    Type et = elementTypeFor(&context, tt.elem_type());
    if (!et)
      return fail("graph input '" + info.name() + "' has unsupported element type " +
                  dataTypeText(tt.elem_type()));
    SmallVector<int64_t> shape;
    auto given = options.inputShapes.find(info.name());
    if (given != options.inputShapes.end()) {
      if (tt.has_shape() && given->second.size() != (size_t)tt.shape().dim_size())
        return fail("--shape for input '" + info.name() + "' has rank " +
                    Twine(given->second.size()) + ", the model says " + Twine(tt.shape().dim_size()));
      shape.assign(given->second.begin(), given->second.end());
    } else {
      if (!tt.has_shape())
        return fail("graph input '" + info.name() + "' has no shape; give a static shape with --shape " +
                    info.name() + "=AxB...");
      for (const auto &dim : tt.shape().dim()) {
        if (dim.has_dim_value() && dim.dim_value() < 0)
          return fail("graph input '" + info.name() + "' has a negative dimension " +
                      Twine(dim.dim_value()) + " (at position " + Twine(shape.size()) + ")");
        if (!dim.has_dim_value()) {
          auto value = dimValues.find(dim.dim_param());
          if (!dim.dim_param().empty() && value != dimValues.end()) {
            shape.push_back(value->second);
            continue;
          }
          // torch's exporter writes derived dimensions as sums ("past_sequence_length +
          // sequence_length"): their value follows from the --dim of each name.
          SmallVector<StringRef> terms = sumTerms(dim.dim_param());
          if (terms.size() > 1) {
            int64_t sum = 0;
            std::string unbound;
            for (StringRef term : terms) {
              int64_t number = 0;
              if (!term.getAsInteger(10, number)) {
                sum += number;
              } else if (auto bound = dimValues.find(term.str()); bound != dimValues.end()) {
                sum += bound->second;
              } else {
                unbound += " --dim " + term.str() + "=N";
              }
            }
            if (!unbound.empty())
              return fail("graph input '" + info.name() + "' has a dynamic dimension '" +
                          dim.dim_param() + "'; give its terms values with" + unbound +
                          " or a static shape with --shape " + info.name() + "=AxB...");
            shape.push_back(sum);
            continue;
          }
          return fail("graph input '" + info.name() + "' has a dynamic dimension '" +
                      dim.dim_param() + "'; give it a value with --dim " +
                      (dim.dim_param().empty() ? std::string("NAME") : dim.dim_param()) +
                      "=N or a static shape with --shape " + info.name() + "=AxB...");
        }
        shape.push_back(dim.dim_value());
      }
    }
    if (std::string problem = shapeProblem(shape); !problem.empty())
      return fail("graph input '" + info.name() + "' has " + problem);
    return RankedTensorType::get(shape, et);
  }

  /// The terms of a dimension written as a sum ("a + b + 1"), trimmed; one term otherwise.
  static SmallVector<StringRef> sumTerms(StringRef param) {
    SmallVector<StringRef> terms;
    param.split(terms, '+');
    for (StringRef &term : terms)
      term = term.trim();
    return terms;
  }

  /// Every --dim must name a symbolic dimension of some graph input (or a term of one
  /// written as a sum).
  LogicalResult checkDimNames(const onnx::GraphProto &graph,
                              const llvm::StringSet<> &initializerNames) {
    llvm::SetVector<StringRef> symbols;
    for (const auto &in : graph.input())
      if (!initializerNames.contains(in.name()) && in.type().has_tensor_type())
        for (const auto &dim : in.type().tensor_type().shape().dim())
          if (!dim.has_dim_value() && !dim.dim_param().empty())
            for (StringRef term : sumTerms(dim.dim_param()))
              if (!term.empty() && !std::isdigit((unsigned char)term.front()))
                symbols.insert(term);
    for (const auto &[name, value] : options.dimValues) {
      if (symbols.contains(name))
        continue;
      std::string known;
      for (StringRef symbol : symbols)
        known += (known.empty() ? "" : ", ") + symbol.str();
      return fail("--dim '" + name + "' names no dimension of the model (" +
                  (known.empty() ? std::string("it has no symbolic dimensions")
                                 : "its symbolic dimensions: " + known) +
                  ")");
    }
    return success();
  }

  /// --cache-length: the past and sequence dimensions of a with-past export take the values
  /// of the entry being imported (the prompt: no past; the decode step: one new token after
  /// cacheLength - 1 past ones, so that the concatenated caches span the whole cache).
  LogicalResult bindCacheDims(const onnx::GraphProto &graph,
                              const llvm::StringSet<> &initializerNames) {
    if (options.cacheEntry == ImportOptions::CacheEntry::None)
      return success();
    PastCacheDims cache;
    if (std::string problem = findPastCacheDims(graph, initializerNames, cache); !problem.empty())
      return fail("--cache-length: " + problem);
    if (options.dimValues.count(cache.past))
      return fail("--dim " + cache.past + " is the caches' past length, which --cache-length "
                  "sets for each entry (0 for the prompt, " + Twine(options.cacheLength - 1) +
                  " for the decode step); drop the --dim");
    if (options.cacheEntry == ImportOptions::CacheEntry::Prompt) {
      dimValues[cache.past] = 0;
      auto prompt = dimValues.find(cache.sequence);
      if (prompt == dimValues.end())
        return fail("--cache-length: give the prompt length with --dim " + cache.sequence + "=N");
      if (prompt->second > options.cacheLength)
        return fail("the prompt length " + Twine(prompt->second) + " (--dim " + cache.sequence +
                    ") is longer than the cache (--cache-length " + Twine(options.cacheLength) +
                    ")");
      return success();
    }
    dimValues[cache.past] = options.cacheLength - 1;
    dimValues[cache.sequence] = 1;
    return success();
  }

  static std::string nodeName(const onnx::NodeProto &node, int index) {
    return node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
  }

  /// Fails naming the nodes of a cycle when the graph has one. Values that nothing defines
  /// are left to the node that reads them.
  LogicalResult checkAcyclic(const onnx::GraphProto &graph) {
    int n = graph.node_size();
    llvm::StringMap<int> producer; // first node writing each name
    for (int i = 0; i < n; ++i)
      for (const auto &out : graph.node(i).output())
        if (!out.empty())
          producer.try_emplace(out, i);
    // Kahn's algorithm over node -> node edges.
    std::vector<std::vector<int>> readers(n);
    std::vector<int> pending(n, 0);
    for (int i = 0; i < n; ++i)
      for (const auto &in : graph.node(i).input()) {
        auto it = producer.find(in);
        if (in.empty() || it == producer.end())
          continue;
        readers[it->second].push_back(i);
        ++pending[i];
      }
    std::vector<int> ready;
    for (int i = 0; i < n; ++i)
      if (pending[i] == 0)
        ready.push_back(i);
    int done = 0;
    while (!ready.empty()) {
      int i = ready.back();
      ready.pop_back();
      ++done;
      for (int r : readers[i])
        if (--pending[r] == 0)
          ready.push_back(r);
    }
    if (done == n)
      return success();
    // Every node left waits on another node left: walk back through producers until one
    // repeats; the walk from its first visit is a cycle.
    int start = 0;
    while (pending[start] == 0)
      ++start;
    std::vector<int> path, seenAt(n, -1);
    int cur = start;
    while (seenAt[cur] < 0) {
      seenAt[cur] = (int)path.size();
      path.push_back(cur);
      int next = -1;
      for (const auto &in : graph.node(cur).input()) {
        auto it = producer.find(in);
        if (!in.empty() && it != producer.end() && pending[it->second] > 0) {
          next = it->second;
          break;
        }
      }
      cur = next;
    }
    // path[k] reads an output of path[k + 1], and path.back() one of cur's: in data-flow
    // order the cycle is cur -> path.back() -> ... -> path[seenAt[cur] + 1] -> cur.
    std::string first = "'" + nodeName(graph.node(cur), cur) + "'", names = first;
    for (size_t k = path.size() - 1; k > (size_t)seenAt[cur]; --k)
      names += " -> '" + nodeName(graph.node(path[k]), path[k]) + "'";
    names += " -> " + first;
    return fail("the graph has a cycle: node " + names + " (each feeds the next)");
  }

  /// The constant `--input-value` gives graph input `name` of type `type`.
  FailureOr<DenseElementsAttr> fixedInputValue(const std::string &name, RankedTensorType type,
                                               const std::vector<double> &values) {
    const int64_t count = type.getNumElements();
    if ((int64_t)values.size() != 1 && (int64_t)values.size() != count)
      return fail("--input-value " + name + ": " + std::to_string(values.size()) +
                  " values for an input of shape " + shapeText(type.getShape()) + " (" +
                  std::to_string(count) + (count == 1 ? " element" : " elements") +
                  "): give one value or one per element");
    Type et = type.getElementType();
    SmallVector<Attribute> elements;
    for (int64_t i = 0; i < count; ++i) {
      double v = values[values.size() == 1 ? 0 : i];
      if (isa<FloatType>(et)) {
        elements.push_back(FloatAttr::get(et, v));
        continue;
      }
      auto it = cast<IntegerType>(et);
      const unsigned width = it.getWidth();
      const bool fits = it.isUnsigned() || width == 1
                            ? v >= 0 && (width >= 64 || v <= std::ldexp(1.0, width) - 1)
                            : width >= 64 || std::abs(v) <= std::ldexp(1.0, width - 1);
      if (v != std::floor(v) || !fits) {
        char text[32];
        std::snprintf(text, sizeof text, "%g", v);
        return fail("--input-value " + name + ": " + text + " is not a value of the input's " +
                    "element type");
      }
      elements.push_back(IntegerAttr::get(et, APInt(width, (uint64_t)(int64_t)v,
                                                    /*isSigned=*/!it.isUnsigned())));
    }
    return DenseElementsAttr::get(type, elements);
  }

  LogicalResult importGraph(const onnx::GraphProto &graph) {
    if (failed(checkAcyclic(graph)))
      return failure();
    for (int i = graph.node_size(); i-- > 0;)
      for (const auto &out : graph.node(i).output())
        if (!out.empty())
          state.producers[out] = nodeName(graph.node(i), i);
    llvm::StringSet<> initializerNames;
    for (const auto &init : graph.initializer())
      initializerNames.insert(init.name());
    if (failed(checkDimNames(graph, initializerNames)) ||
        failed(bindCacheDims(graph, initializerNames)))
      return failure();
    SmallVector<Type> argTypes;
    SmallVector<std::string> argNames;
    llvm::StringSet<> inputNames;
    SmallVector<std::pair<std::string, DenseElementsAttr>> fixedInputs;
    for (const auto &in : graph.input()) {
      if (!inputNames.insert(in.name()).second)
        return fail("graph input '" + in.name() + "' is listed twice (duplicate value name)");
      if (initializerNames.contains(in.name()))
        continue;
      auto type = inputType(in);
      if (failed(type))
        return failure();
      if (auto fixed = options.inputValues.find(in.name()); fixed != options.inputValues.end()) {
        auto value = fixedInputValue(in.name(), *type, fixed->second);
        if (failed(value))
          return failure();
        fixedInputs.emplace_back(in.name(), *value);
        continue;
      }
      argTypes.push_back(*type);
      argNames.push_back(in.name());
    }
    for (const auto &[name, values] : options.inputValues)
      if (!inputNames.contains(name) || initializerNames.contains(name)) {
        std::string inputs;
        for (const auto &in : graph.input())
          if (!initializerNames.contains(in.name()))
            inputs += (inputs.empty() ? "'" : ", '") + in.name() + "'";
        return fail("--input-value names '" + name + "', which is no graph input (inputs: " +
                    (inputs.empty() ? std::string("none") : inputs) + ")");
      }
    auto func = func::FuncOp::create(builder, UnknownLoc::get(&context), "main",
                                     builder.getFunctionType(argTypes, {}));
    if (options.cacheEntry != ImportOptions::CacheEntry::None)
      func->setAttr("sinter.cache_length", builder.getI64IntegerAttr(options.cacheLength));
    Block *entry = func.addEntryBlock();
    for (unsigned i = 0; i < argNames.size(); ++i) {
      func.setArgAttr(i, "sinter.name", builder.getStringAttr(argNames[i]));
      state.values[argNames[i]] = entry->getArgument(i);
    }
    builder.setInsertionPointToStart(entry);
    for (const auto &[name, value] : fixedInputs) {
      auto constant = graph::ConstantOp::create(builder, nameLoc(name), value);
      state.values[name] = constant;
      state.constants[constant] = value;
    }

    for (const auto &init : graph.initializer()) {
      if (state.values.count(init.name()))
        return fail("initializer '" + init.name() + "' duplicates another value name");
      std::string tensorError;
      auto value = tensorFromProto(init, &context, state.modelDir, tensorError);
      if (failed(value))
        return fail("initializer " + tensorError);
      auto constant = graph::ConstantOp::create(builder, nameLoc(init.name()), *value);
      state.values[init.name()] = constant;
      state.constants[constant] = *value;
    }

    int index = 0;
    for (const auto &node : graph.node())
      if (failed(importNode(node, index++)))
        return failure();

    SmallVector<Value> results;
    SmallVector<Type> resultTypes;
    llvm::StringSet<> outputNames;
    for (const auto &out : graph.output()) {
      if (!outputNames.insert(out.name()).second)
        return fail("graph output '" + out.name() + "' is listed twice (duplicate value name)");
      auto it = state.values.find(out.name());
      if (it == state.values.end())
        return fail("graph output '" + out.name() + "' is never produced");
      if (const PaddedValues::Info *padded = state.padded.find(out.name()))
        return fail("graph output '" + out.name() + "' holds " +
                    (padded->kind == PaddedValues::Kind::Size ? "a shape of " : "") +
                    PaddedValues::describe(*padded) + PaddedValues::kWhereItMayGo);
      results.push_back(it->second);
      resultTypes.push_back(it->second.getType());
    }
    func::ReturnOp::create(builder, UnknownLoc::get(&context), results);
    func.setType(builder.getFunctionType(argTypes, resultTypes));
    for (int i = 0; i < graph.output_size(); ++i)
      func.setResultAttr(i, "sinter.name", builder.getStringAttr(graph.output(i).name()));
    return dropQuantizedConstants(func);
  }

  /// fp8 constants (the type constantElementTypeFor adds) are quantized weights:
  /// DequantizeLinear and MatMulNBits read their values at import, and the graph dialect has no
  /// tensors of that type, so they are dropped; one that any other op reads is an error. The
  /// uint8 weights those ops read are dropped too (uint8 tensors are otherwise ordinary).
  LogicalResult dropQuantizedConstants(func::FuncOp func) {
    SmallVector<graph::ConstantOp> dropped;
    WalkResult walk = func.walk([&](graph::ConstantOp c) {
      Type et = cast<ShapedType>(c.getType()).getElementType();
      if (et.isUnsignedInteger(8) && c->use_empty())
        dropped.push_back(c);
      if (!isa<Float8E4M3FNType>(et))
        return WalkResult::advance();
      if (!c->use_empty()) {
        Operation *user = *c->getUsers().begin();
        std::string name = "a constant";
        if (auto loc = dyn_cast<NameLoc>(c.getLoc()))
          name = "initializer '" + loc.getName().str() + "'";
        std::string reader = isa<func::ReturnOp>(user) ? std::string("a graph output") : "node '";
        if (auto loc = dyn_cast<NameLoc>(user->getLoc()); loc && !isa<func::ReturnOp>(user))
          reader += loc.getName().str() + "'";
        else if (!isa<func::ReturnOp>(user))
          reader = "an op";
        (void)fail(name + " of type float8e4m3fn is read by " + reader +
                   ": constants of this type are supported only as quantized weights "
                   "(DequantizeLinear, com.microsoft MatMulNBits)");
        return WalkResult::interrupt();
      }
      dropped.push_back(c);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    for (graph::ConstantOp c : dropped) {
      state.constants.erase(c);
      c.erase();
    }
    return success();
  }

  LogicalResult importNode(const onnx::NodeProto &node, int index) {
    return importNode(node, nodeName(node, index));
  }

  LogicalResult importNode(const onnx::NodeProto &node, const std::string &name) {
    std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
    auto describe = [&] {
      return "node '" + name + "' (" + node.op_type() + ", domain '" + domain + "', opset " +
             std::to_string(legacyOpset ? legacyOpset : state.opset) + ")";
    };
    // A model-local function of a custom domain is called by its name; one that shares a
    // standard op's name and domain is that op's definition, used where Sinter lacks the op.
    if (const onnx::FunctionProto *function = calledFunction(node))
      return inlineFunction(node, name, *function, describe());
    if (domain == "ai.onnx" && state.opset < kFirstModernOpset)
      return importLegacyNode(node, name, describe());
    if (domain != "ai.onnx" && domain != "com.microsoft")
      return fail(describe() + ": unsupported domain '" + domain + "'");
    const OpImportRegistry &ops = domain == "ai.onnx" ? registry() : microsoftRegistry();
    auto entry = ops.find(node.op_type());
    if (entry == ops.end())
      return fail(describe() + ": unsupported op type '" + node.op_type() + "'" +
                  (domain == "ai.onnx" ? "" : " in domain '" + domain + "'"));
    if (state.opset < entry->second.minOpset)
      return fail(describe() + ": supported from opset " + std::to_string(entry->second.minOpset));
    for (const auto &out : node.output())
      if (!out.empty() && state.values.count(out))
        return fail(describe() + ": output '" + out + "' is already defined (duplicate value name)");

    NodeImporter importer(node, state, builder, nameLoc(name));
    // Every named input is defined before the import function runs, so that the functions
    // may read inputs they have type-checked or that are optional without a lookup failing
    // (fuzzers found several reading an undefined value's type).
    for (int i = 0; i < node.input_size(); ++i)
      if (!node.input(i).empty() && failed(importer.input(i)))
        return fail(describe() + ": " + importer.error);
    // Verification diagnostics of ops an import function builds become the node's error.
    std::string diagnostic;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (diagnostic.empty())
        diagnostic = diag.str();
      return success();
    });
    const bool imported = succeeded(entry->second.fn(importer));
    // A mistyped attribute is the cause of whatever its default value led to.
    if (!importer.attrError.empty())
      return fail(describe() + ": " + importer.attrError);
    if (!imported)
      return fail(describe() + ": " + (importer.error.empty() ? diagnostic : importer.error));
    if (SmallVector<std::string> unread = importer.unreadAttributes(); !unread.empty())
      return fail(describe() + ": attribute '" + unread.front() +
                  "' is not supported (Sinter does not implement what it changes)");
    for (const auto &out : node.output()) {
      if (out.empty())
        continue;
      auto it = state.values.find(out);
      if (it == state.values.end())
        return fail(describe() + ": output '" + out + "' was not produced");
      if (Operation *op = it->second.getDefiningOp(); op && failed(mlir::verify(op)))
        return fail(describe() + ": " + diagnostic);
    }
    auto typeOf = [&](const std::string &value) -> RankedTensorType {
      auto it = state.values.find(value);
      return it == state.values.end() ? RankedTensorType()
                                      : dyn_cast<RankedTensorType>(it->second.getType());
    };
    if (std::string leak = state.padded.propagate(node, typeOf); !leak.empty())
      return fail(describe() + ": " + leak);
    return success();
  }

  /// A node of opset 7..12: rewritten into opset 13's forms, each resulting node imported
  /// with opset 13's semantics (messages still name the model's opset).
  LogicalResult importLegacyNode(const onnx::NodeProto &node, const std::string &name,
                                 const std::string &describe) {
    std::string rewriteError;
    auto typeOf = [&](const std::string &value) -> RankedTensorType {
      auto it = state.values.find(value);
      return it == state.values.end() ? RankedTensorType()
                                      : dyn_cast<RankedTensorType>(it->second.getType());
    };
    auto nodes = rewriteLegacyNode(node, state.opset, name, typeOf, rewriteError);
    if (failed(nodes))
      return fail(describe + ": " + rewriteError);
    const int64_t sourceOpset = state.opset, outerLegacy = legacyOpset;
    legacyOpset = sourceOpset;
    state.opset = kFirstModernOpset;
    LogicalResult result = success();
    for (const onnx::NodeProto &rewritten : *nodes) {
      // The node itself keeps its name; the rewrite's helper nodes are named after it.
      const std::string &rewrittenName = rewritten.name().empty() ? name : rewritten.name();
      for (const auto &out : rewritten.output())
        if (!out.empty() && !state.producers.count(out))
          state.producers[out] = rewrittenName;
      if (failed(result = importNode(rewritten, rewrittenName)))
        break;
    }
    state.opset = sourceOpset;
    legacyOpset = outerLegacy;
    return result;
  }

  static constexpr int64_t kMaxInlinedNodes = int64_t(1) << 20;

  /// The local function a node calls, or null.
  const onnx::FunctionProto *calledFunction(const onnx::NodeProto &node) {
    std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
    auto it = functions.find({domain, node.op_type()});
    if (it == functions.end() || (domain == "ai.onnx" && registry().count(node.op_type())))
      return nullptr;
    return it->second;
  }

  /// How many nodes `function` becomes once every call in it is inlined, saturating past
  /// kMaxInlinedNodes; -1 when it calls itself, directly or through other functions.
  int64_t expandedSize(const onnx::FunctionProto &function) {
    auto known = expandedSizes.find(&function);
    if (known != expandedSizes.end())
      return known->second;
    expandedSizes[&function] = -1; // while counting: reaching it again is a cycle
    int64_t total = 0;
    for (const onnx::NodeProto &node : function.node()) {
      const onnx::FunctionProto *callee = calledFunction(node);
      const int64_t size = callee ? expandedSize(*callee) : 1;
      if (size < 0)
        return -1; // stays marked: every caller of a cycle is itself unbounded
      total = std::min(total + size, kMaxInlinedNodes + 1);
    }
    return expandedSizes[&function] = total;
  }

  /// FunctionProto.attribute_proto (field 11, IR 9): the function's attributes with default
  /// values. This onnx.proto predates the field, so it is read from the kept unknown fields.
  static std::vector<onnx::AttributeProto>
  functionAttributeDefaults(const onnx::FunctionProto &function) {
    constexpr uint32_t kAttributeProtoField = 11;
    std::vector<onnx::AttributeProto> defaults;
    const std::string &unknown = function.unknown_fields();
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(unknown.data()),
                                              int(unknown.size()));
    while (uint32_t tag = in.ReadTag()) {
      using google::protobuf::internal::WireFormatLite;
      if (WireFormatLite::GetTagFieldNumber(tag) == kAttributeProtoField &&
          WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        std::string bytes;
        uint32_t length = 0;
        if (!in.ReadVarint32(&length) || !in.ReadString(&bytes, int(length)))
          break;
        onnx::AttributeProto attribute;
        if (attribute.ParseFromString(bytes))
          defaults.push_back(std::move(attribute));
      } else if (!WireFormatLite::SkipField(&in, tag)) {
        break;
      }
    }
    return defaults;
  }

  /// Imports a call of a model-local function as its body: the function's inputs and
  /// outputs are the call's, its other values get names no other value has, and attributes
  /// that refer to the call's (ref_attr_name) take its values. The body's ops read the
  /// function's own default-domain opset.
  LogicalResult inlineFunction(const onnx::NodeProto &call, const std::string &name,
                               const onnx::FunctionProto &function, const std::string &describe) {
    constexpr int kMaxDepth = 256; // recursion is refused before this (expandedSize)
    if (inlineDepth == 0)
      outermostCall = describe;
    if (inlineDepth >= kMaxDepth)
      return fail(outermostCall + ": function calls nest deeper than " + Twine(kMaxDepth));
    if (call.input_size() > function.input_size() || call.output_size() > function.output_size())
      return fail(describe + ": the call has " + Twine(call.input_size()) + " inputs and " +
                  Twine(call.output_size()) + " outputs, function '" + function.name() +
                  "' declares " + Twine(function.input_size()) + " and " +
                  Twine(function.output_size()));
    std::map<std::string, std::string> renamed;
    for (int i = 0; i < function.input_size(); ++i)
      renamed[function.input(i)] = i < call.input_size() ? call.input(i) : "";
    for (int i = 0; i < function.output_size(); ++i)
      renamed[function.output(i)] = i < call.output_size() ? call.output(i) : "";
    const std::string prefix = name + "#" + std::to_string(inlineCount++) + "/";
    auto rename = [&](const std::string &value) {
      if (value.empty())
        return value;
      auto it = renamed.find(value);
      return it != renamed.end() ? it->second : prefix + value;
    };
    // The call's attributes, over the function's defaults (FunctionProto.attribute_proto,
    // field 11 since IR 9: newer than this onnx.proto, so read from the unknown fields).
    std::map<std::string, onnx::AttributeProto> callAttributes;
    for (onnx::AttributeProto &fallback : functionAttributeDefaults(function))
      callAttributes[fallback.name()] = std::move(fallback);
    for (const onnx::AttributeProto &a : call.attribute())
      callAttributes[a.name()] = a;
    int64_t bodyOpset = state.opset;
    for (const auto &opset : function.opset_import())
      if (opset.domain().empty() || opset.domain() == "ai.onnx")
        bodyOpset = opset.version();
    if (bodyOpset < kMinOpset || bodyOpset > kMaxOpset)
      return fail(describe + ": function '" + function.name() + "' imports opset " +
                  Twine(bodyOpset) + " (supported " + Twine(kMinOpset) + "-" + Twine(kMaxOpset) +
                  ")");
    const int64_t callerOpset = state.opset;
    state.opset = bodyOpset;
    ++inlineDepth;
    LogicalResult result = success();
    // Calls nested a few levels deep can multiply into more nodes than any model has: the
    // count is known before anything is imported.
    const int64_t size = expandedSize(function);
    if (size < 0 || inlinedNodes + size > kMaxInlinedNodes) {
      state.opset = callerOpset;
      --inlineDepth;
      return fail(outermostCall + (size < 0 ? ": function '" + function.name() +
                                                   "' calls itself (directly or through "
                                                   "other functions)"
                                             : ": function calls expand to more than " +
                                                   std::to_string(kMaxInlinedNodes) + " nodes"));
    }
    for (int i = 0; i < function.node_size() && succeeded(result); ++i) {
      if (++inlinedNodes > kMaxInlinedNodes) {
        result = fail(outermostCall + ": function calls expand to more than " +
                      Twine(kMaxInlinedNodes) + " nodes");
        break;
      }
      onnx::NodeProto body = function.node(i);
      for (std::string &in : *body.mutable_input())
        in = rename(in);
      for (std::string &out : *body.mutable_output())
        out = rename(out);
      google::protobuf::RepeatedPtrField<onnx::AttributeProto> attributes;
      for (const onnx::AttributeProto &a : body.attribute()) {
        if (a.ref_attr_name().empty()) {
          *attributes.Add() = a;
          continue;
        }
        auto it = callAttributes.find(a.ref_attr_name());
        if (it == callAttributes.end())
          continue; // not given by the call: the op's default
        onnx::AttributeProto *bound = attributes.Add();
        *bound = it->second;
        bound->set_name(a.name());
      }
      body.mutable_attribute()->Swap(&attributes);
      std::string bodyName = name + "/" + nodeName(body, i);
      for (const auto &out : body.output())
        if (!out.empty())
          state.producers[out] = bodyName;
      result = importNode(body, bodyName);
    }
    --inlineDepth;
    state.opset = callerOpset;
    return result;
  }

  MLIRContext &context;
  const ImportOptions &options;
  /// The model's local functions by (domain, name).
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto *> functions;
  int inlineDepth = 0;
  int inlineCount = 0;
  int64_t inlinedNodes = 0;
  std::map<const onnx::FunctionProto *, int64_t> expandedSizes;
  int64_t legacyOpset = 0; // while importing a rewritten opset 7..12 node: that opset
  std::string outermostCall; // for the message when calls nest too deep
  /// options.dimValues and, for a --cache-length entry, its past and sequence lengths.
  std::map<std::string, int64_t> dimValues;
  std::string &error;
  OpBuilder builder;
  GraphState state;
};

/// Names in messages come from the file: a newline or terminal escape in a node, tensor or
/// op name must not split the one-line message or reach the user's terminal raw.
std::string escapeControlCharacters(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\n')
      out += "\\n";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += (char)c;
    }
  }
  return out;
}

} // namespace

OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &context, const std::string &path,
                                     const ImportOptions &options, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = escapeControlCharacters("cannot read '" + path + "': " + buffer.getError().message());
    return nullptr;
  }
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  return importOnnxBuffer(context, (*buffer)->getBuffer(), std::string(dir), options, error,
                          path);
}

OwningOpRef<ModuleOp> importOnnxBuffer(MLIRContext &context, llvm::StringRef bytes,
                                       const std::string &modelDir, const ImportOptions &options,
                                       std::string &error, const std::string &name) {
  context.loadDialect<graph::GraphDialect, func::FuncDialect>();
  ModelImporter importer(context, options, error);
  OwningOpRef<ModuleOp> module = importer.run(bytes, name, modelDir);
  if (!module)
    error = escapeControlCharacters(error);
  return module;
}

} // namespace sinter
