#include "sinter/Compiler/OnnxImporter.h"

#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>

using namespace mlir;
using namespace sinter::import;

namespace sinter {
namespace {

constexpr int64_t kMinIrVersion = 3, kMaxIrVersion = 12;
constexpr int64_t kMinOpset = 13, kMaxOpset = 23;

const OpImportRegistry &registry() {
  static const OpImportRegistry instance = [] {
    OpImportRegistry r;
    registerElementwiseImports(r);
    registerMatrixImports(r);
    registerShapeImports(r);
    registerTensorImports(r);
    return r;
  }();
  return instance;
}

class ModelImporter {
public:
  ModelImporter(MLIRContext &context, const ImportOptions &options, std::string &error)
      : context(context), options(options), error(error), builder(&context) {}

  OwningOpRef<ModuleOp> run(const std::string &path) {
    onnx::ModelProto model;
    if (failed(parse(path, model)) || failed(checkVersions(model)))
      return nullptr;
    SmallString<256> dir(path);
    llvm::sys::path::remove_filename(dir);
    state.modelDir = dir.empty() ? "." : std::string(dir);

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

  LogicalResult parse(const std::string &path, onnx::ModelProto &model) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return fail("cannot read '" + path + "': " + buffer.getError().message());
    StringRef bytes = (*buffer)->getBuffer();
    google::protobuf::io::CodedInputStream stream(
        reinterpret_cast<const uint8_t *>(bytes.data()), (int)std::min<size_t>(bytes.size(), INT32_MAX));
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
                  Twine(tt.elem_type()));
    SmallVector<int64_t> shape;
    auto given = options.inputShapes.find(info.name());
    if (given != options.inputShapes.end()) {
      if (tt.has_shape() && given->second.size() != (size_t)tt.shape().dim_size())
        return fail("--shape for input '" + info.name() + "' has rank " +
                    Twine(given->second.size()) + ", the model says " + Twine(tt.shape().dim_size()));
      shape.assign(given->second.begin(), given->second.end());
    } else {
      for (const auto &dim : tt.shape().dim()) {
        if (!dim.has_dim_value() || dim.dim_value() < 0)
          return fail("graph input '" + info.name() + "' has a dynamic dimension '" +
                      dim.dim_param() + "'; give a static shape with --shape " + info.name() + "=AxB...");
        shape.push_back(dim.dim_value());
      }
    }
    for (int64_t d : shape)
      if (d <= 0)
        return fail("graph input '" + info.name() + "' needs positive dimensions");
    return RankedTensorType::get(shape, et);
  }

  LogicalResult importGraph(const onnx::GraphProto &graph) {
    llvm::StringSet<> initializerNames;
    for (const auto &init : graph.initializer())
      initializerNames.insert(init.name());
    SmallVector<Type> argTypes;
    SmallVector<std::string> argNames;
    for (const auto &in : graph.input()) {
      if (initializerNames.contains(in.name()))
        continue;
      auto type = inputType(in);
      if (failed(type))
        return failure();
      argTypes.push_back(*type);
      argNames.push_back(in.name());
    }
    auto func = func::FuncOp::create(builder, UnknownLoc::get(&context), "main",
                                     builder.getFunctionType(argTypes, {}));
    Block *entry = func.addEntryBlock();
    for (unsigned i = 0; i < argNames.size(); ++i) {
      func.setArgAttr(i, "sinter.name", builder.getStringAttr(argNames[i]));
      state.values[argNames[i]] = entry->getArgument(i);
    }
    builder.setInsertionPointToStart(entry);

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
    for (const auto &out : graph.output()) {
      auto it = state.values.find(out.name());
      if (it == state.values.end())
        return fail("graph output '" + out.name() + "' is never produced");
      results.push_back(it->second);
      resultTypes.push_back(it->second.getType());
    }
    func::ReturnOp::create(builder, UnknownLoc::get(&context), results);
    func.setType(builder.getFunctionType(argTypes, resultTypes));
    for (int i = 0; i < graph.output_size(); ++i)
      func.setResultAttr(i, "sinter.name", builder.getStringAttr(graph.output(i).name()));
    return success();
  }

  LogicalResult importNode(const onnx::NodeProto &node, int index) {
    std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
    std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
    auto describe = [&] {
      return "node '" + name + "' (" + node.op_type() + ", domain '" + domain + "', opset " +
             std::to_string(state.opset) + ")";
    };
    if (domain != "ai.onnx")
      return fail(describe() + ": unsupported domain '" + domain + "'");
    auto entry = registry().find(node.op_type());
    if (entry == registry().end())
      return fail(describe() + ": unsupported op type '" + node.op_type() + "'");
    if (state.opset < entry->second.minOpset)
      return fail(describe() + ": supported from opset " + std::to_string(entry->second.minOpset));
    for (const auto &out : node.output())
      if (!out.empty() && state.values.count(out))
        return fail(describe() + ": output '" + out + "' is already defined (duplicate value name)");

    NodeImporter importer(node, state, builder, nameLoc(name));
    // Verification diagnostics of ops an import function builds become the node's error.
    std::string diagnostic;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (diagnostic.empty())
        diagnostic = diag.str();
      return success();
    });
    if (failed(entry->second.fn(importer)))
      return fail(describe() + ": " + (importer.error.empty() ? diagnostic : importer.error));
    for (const auto &out : node.output()) {
      if (out.empty())
        continue;
      auto it = state.values.find(out);
      if (it == state.values.end())
        return fail(describe() + ": output '" + out + "' was not produced");
      if (Operation *op = it->second.getDefiningOp(); op && failed(mlir::verify(op)))
        return fail(describe() + ": " + diagnostic);
    }
    return success();
  }

  MLIRContext &context;
  const ImportOptions &options;
  std::string &error;
  OpBuilder builder;
  GraphState state;
};

} // namespace

OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &context, const std::string &path,
                                     const ImportOptions &options, std::string &error) {
  context.loadDialect<graph::GraphDialect, func::FuncDialect>();
  ModelImporter importer(context, options, error);
  return importer.run(path);
}

} // namespace sinter
