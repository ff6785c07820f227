#include "sinter/Compiler/Emitter.h"
#include "sinter/Compiler/GenericKernelEmitter.h"

#include "sinter/Dialect/Launch/IR/LaunchOps.h"
#include "sinter/Passes/CompileTarget.h"
#include "sinter/program.h" // SINTER_BUFFER_ALIGNMENT
#include "sinter/sinter.h" // SINTER_ABI_VERSION_MAJOR/MINOR: the ABI the emitted code implements

#include "checksum.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <set>

using namespace mlir;

namespace sinter {
namespace {


std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\%03o", (unsigned char)c);
      out += buf;
    } else
      out += c;
  }
  return out + "\"";
}

int32_t dtypeValue(Type t) {
  if (t.isF32()) return (2 << 8) | 32;
  if (t.isF16()) return (2 << 8) | 16;
  if (t.isBF16()) return (4 << 8) | 16;
  if (t.isF64()) return (2 << 8) | 64;
  if (t.isInteger(1)) return (6 << 8) | 8;
  if (isa<Float8E4M3FNType>(t)) return (10 << 8) | 8;
  if (auto integer = dyn_cast<IntegerType>(t))
    return (integer.isUnsigned() ? 1 << 8 : 0) | int32_t(integer.getWidth());
  return 0;
}

const char *dtypeEnum(Type t) {
  if (t.isF32()) return "SINTER_DTYPE_F32";
  if (t.isF16()) return "SINTER_DTYPE_F16";
  if (t.isBF16()) return "SINTER_DTYPE_BF16";
  if (t.isF64()) return "SINTER_DTYPE_F64";
  if (t.isInteger(1)) return "SINTER_DTYPE_BOOL";
  if (isa<Float8E4M3FNType>(t)) return "SINTER_DTYPE_F8_E4M3";
  if (t.isUnsignedInteger(64)) return "SINTER_DTYPE_U64";
  if (t.isUnsignedInteger(32)) return "SINTER_DTYPE_U32";
  if (t.isUnsignedInteger(16)) return "SINTER_DTYPE_U16";
  if (t.isUnsignedInteger(8)) return "SINTER_DTYPE_U8";
  if (t.isInteger(64)) return "SINTER_DTYPE_I64";
  if (t.isInteger(32)) return "SINTER_DTYPE_I32";
  if (t.isInteger(16)) return "SINTER_DTYPE_I16";
  if (t.isInteger(8)) return "SINTER_DTYPE_I8";
  return nullptr;
}

std::string dtypeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// ONNX node names a launch came from, in first-seen order.
void collectSources(Location loc, llvm::SetVector<StringRef> &names) {
  if (auto name = dyn_cast<NameLoc>(loc))
    names.insert(name.getName().getValue());
  else if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      collectSources(inner, names);
}

/// The checksums of every tensor's bytes and of the whole blob (runtime/src/checksum.h: the
/// runtime checks them at load), in one pass over the blob: collectWeights lays the tensors out
/// in increasing offset order without overlap, and each piece of a tensor goes into both
/// hashers while it is in the cache.
struct BlobChecksums {
  std::vector<uint64_t> tensors;
  uint64_t blob = 0;
};
BlobChecksums checksumBlob(StringRef blob, ArrayRef<EmittedProgram::Tensor> tensors) {
  constexpr uint64_t kPiece = 1 << 20;
  BlobChecksums sums;
  checksum::Hasher whole;
  uint64_t pos = 0;
  for (const auto &t : tensors) {
    assert(t.offset >= pos && t.offset + t.bytes <= blob.size() &&
           "weight tensors overlap, are out of order or outside the blob");
    whole.update(blob.data() + pos, t.offset - pos);
    checksum::Hasher tensor;
    for (uint64_t at = 0; at < t.bytes; at += kPiece) {
      const char *piece = blob.data() + t.offset + at;
      const uint64_t n = std::min(kPiece, t.bytes - at);
      tensor.update(piece, n);
      whole.update(piece, n);
    }
    sums.tensors.push_back(tensor.finish());
    pos = t.offset + t.bytes;
  }
  whole.update(blob.data() + pos, blob.size() - pos);
  sums.blob = whole.finish();
  return sums;
}

struct BufferRef {
  const char *space;
  unsigned index = 0;
  int64_t offset = 0;
};

/// One entry point: a function of the launch module.
struct Entry {
  func::FuncOp func;
  std::string name;
  std::vector<std::pair<std::string, MemRefType>> inputs, outputs;
  std::vector<Operation *> launches;
};

struct StateInfo {
  std::string name;
  MemRefType type;
  int64_t offset;
};

class ProgramEmitter {
public:
  ProgramEmitter(ModuleOp module, const Target &target, const std::string &modelName,
                 EmittedProgram &out)
      : module(module), target(target), modelName(modelName), out(out) {}

  LogicalResult run() {
    auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
    if (funcs.empty())
      return module.emitError("the launch module holds no function");
    for (func::FuncOp func : funcs) {
      Entry &entry = entries.emplace_back();
      entry.func = func;
      entry.name = func.getName().str();
      if (failed(collectIo(entry)) || failed(collectWeights(func)) || failed(collectStates(func)) ||
          failed(collectLaunches(entry)))
        return failure();
    }
    FailureOr<CompileTarget> chosenFor = compileTargetOf(module);
    if (failed(chosenFor))
      return failure();
    limits = *chosenFor;
    out.weights.resize(llvm::alignTo(out.weights.size(), SINTER_BUFFER_ALIGNMENT), 0);
    writeJson();
    writeSource();
    return success();
  }

private:
  LogicalResult collectIo(Entry &entry) {
    func::FuncOp func = entry.func;
    auto &inputs = entry.inputs, &outputs = entry.outputs;
    for (BlockArgument arg : func.getArguments()) {
      auto type = cast<MemRefType>(arg.getType());
      // fp8 is a weight type only.
      if (!dtypeEnum(type.getElementType()) || isa<Float8E4M3FNType>(type.getElementType()) ||
          type.getRank() > 8)
        return func.emitError("unsupported I/O type ") << type;
      auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "sinter.name");
      bool isOutput = func.getArgAttr(arg.getArgNumber(), "launch.output") != nullptr;
      auto &list = isOutput ? outputs : inputs;
      std::string n = name ? name.str() : (isOutput ? "output" : "input") + std::to_string(list.size());
      refs[arg] = {isOutput ? "SINTER_BUFFER_OUTPUT" : "SINTER_BUFFER_INPUT", (unsigned)list.size(), 0};
      list.push_back({n, type});
    }
    return success();
  }

  LogicalResult collectWeights(func::FuncOp func) {
    for (auto weight : func.getOps<launch::WeightOp>()) {
      auto dense = dyn_cast<DenseElementsAttr>(weight.getValue());
      if (!dense || !weight.getOffset())
        return weight.emitError("weight needs dense data and an offset");
      int64_t offset = (int64_t)*weight.getOffset();
      // Entry points share weights: the second function naming one reuses its bytes.
      if (auto it = weightOffsets.find(weight.getSymName()); it != weightOffsets.end()) {
        if (it->second != offset)
          return weight.emitError("weight '") << weight.getSymName() << "' has two offsets";
        refs[weight] = BufferRef{"SINTER_BUFFER_WEIGHTS", 0, offset};
        addSources(out.tensors[weightIndex.lookup(weight.getSymName())], weight.getLoc());
        continue;
      }
      weightOffsets[weight.getSymName()] = offset;
      weightIndex[weight.getSymName()] = out.tensors.size();
      int64_t bytes = launch::bufferBytes(weight.getBuffer().getType());
      std::string data;
      if (dense.getElementType().isInteger(1)) {
        for (bool b : dense.getValues<bool>())
          data.push_back(b ? 1 : 0);
      } else if (dense.isSplat()) {
        ArrayRef<char> one = dense.getRawData();
        for (int64_t i = 0; i < dense.getNumElements(); ++i)
          data.append(one.data(), one.size());
      } else {
        data.assign(dense.getRawData().data(), dense.getRawData().size());
      }
      if ((int64_t)data.size() != bytes)
        return weight.emitError("weight data size mismatch");
      if ((int64_t)out.weights.size() > offset)
        return weight.emitError("weights overlap in the blob");
      auto type = weight.getBuffer().getType();
      out.tensors.push_back({weight.getSymName().str(), dtypeValue(type.getElementType()),
                             std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
                             (uint64_t)offset, (uint64_t)data.size(), {}});
      addSources(out.tensors.back(), weight.getLoc());
      weightElementTypes.push_back(type.getElementType());
      out.weights.resize(offset, 0);
      out.weights += data;
      refs[weight] = BufferRef{"SINTER_BUFFER_WEIGHTS", 0, offset};
    }
    for (auto alloc : func.getOps<launch::AllocOp>()) {
      if (!alloc.getOffset())
        return alloc.emitError("buffer has no arena offset");
      refs[alloc] = {"SINTER_BUFFER_ARENA", 0, (int64_t)*alloc.getOffset()};
    }
    return success();
  }

  LogicalResult collectStates(func::FuncOp func) {
    for (auto state : func.getOps<launch::StateOp>()) {
      if (!state.getOffset())
        return state.emitError("state has no offset");
      int64_t offset = (int64_t)*state.getOffset();
      refs[state] = BufferRef{"SINTER_BUFFER_STATE", 0, offset};
      if (llvm::any_of(states, [&](const StateInfo &s) { return s.name == state.getSymName(); }))
        continue;
      states.push_back({state.getSymName().str(), state.getBuffer().getType(), offset});
    }
    return success();
  }

  LogicalResult collectLaunches(Entry &entry) {
    for (Operation &op : entry.func.getBody().front()) {
      if (isa<launch::WeightOp, launch::AllocOp, launch::StateOp, func::ReturnOp>(op))
        continue;
      if (!isa<launch::GemmOp, launch::KernelOp, launch::GenericOp>(op))
        return op.emitError("the emitter has no C++ form for '") << op.getName() << "'";
      if (auto kernel = dyn_cast<launch::KernelOp>(op))
        recordRowScales(kernel);
      if (auto generic = dyn_cast<launch::GenericOp>(op)) {
        std::string name = "sinter_generic_" + std::to_string(entries.size() - 1) + "_" +
                           std::to_string(entry.launches.size());
        auto source = emitGenericKernel(generic, name);
        if (failed(source))
          return failure();
        genericKernels += *source + "\n";
        genericNames[&op] = name;
      }
      entry.launches.push_back(&op);
    }
    return success();
  }

  /// linear_small_m's fp8 or int4 weight and its scales (arguments 1 and 11), with the int4
  /// group size (template parameter 14, W_GROUP), for inspect.
  void recordRowScales(launch::KernelOp kernel) {
    ArrayRef<int64_t> args = kernel.getArgs();
    if (kernel.getKernelTemplate() != "linear_small_m" || args.size() < 12 || args[11] < 0)
      return;
    auto weight = kernel.getBuffers()[args[1]].getDefiningOp<launch::WeightOp>();
    auto scale = kernel.getBuffers()[args[11]].getDefiningOp<launch::WeightOp>();
    if (!weight || !scale)
      return;
    rowScales[weight.getSymName()].insert(scale.getSymName());
    scaledWeights[scale.getSymName()].insert(weight.getSymName());
    ArrayAttr params = kernel.getParams();
    if (auto group = params.size() > 14 ? dyn_cast<IntegerAttr>(params[14]) : IntegerAttr();
        group && group.getInt() > 0) {
      groupSizes[weight.getSymName()] = group.getInt();
      groupSizes[scale.getSymName()] = group.getInt();
    }
  }

  std::string ref(Value v) {
    if (!v)
      return "{SINTER_BUFFER_NONE, 0, 0}";
    BufferRef r = refs.lookup(v);
    return std::string("{") + r.space + ", " + std::to_string(r.index) + ", " +
           std::to_string(r.offset) + "}";
  }

  /// `sinter::kernels::name<params...>`: the template instance a kernel launch calls.
  static std::string kernelSymbol(launch::KernelOp kernel) {
    std::string out = "sinter::kernels::" + kernel.getKernelTemplate().str() + "<";
    llvm::raw_string_ostream os(out);
    llvm::interleaveComma(kernel.getParams(), os, [&](Attribute p) {
      if (auto i = dyn_cast<IntegerAttr>(p))
        os << i.getInt();
      else
        os << cast<StringAttr>(p).getValue();
    });
    os << ">";
    return out;
  }

  std::string sourcesOf(Operation *op) {
    llvm::SetVector<StringRef> names;
    collectSources(op->getLoc(), names);
    return llvm::join(names, ",");
  }

  void writeTensorInfos(llvm::raw_ostream &os, StringRef var,
                        ArrayRef<std::pair<std::string, MemRefType>> list) {
    os << "static const sinter_tensor_info " << var << "[] = {\n";
    for (auto &[name, type] : list) {
      os << "  {" << cString(name) << ", " << dtypeEnum(type.getElementType()) << ", "
         << type.getRank() << ", {";
      llvm::interleaveComma(type.getShape(), os);
      os << "}},\n";
    }
    if (list.empty())
      os << "  {0, 0, 0, {0}},\n";
    os << "};\n";
  }

  void writeLaunches(llvm::raw_ostream &os, const Entry &entry, const std::string &suffix) {
    const auto &launches = entry.launches;
    // Kernel argument lists, one array per kernel launch.
    for (auto [i, op] : llvm::enumerate(launches)) {
      if (auto generic = dyn_cast<launch::GenericOp>(op)) {
        os << "static const sinter_buffer_ref kArgs" << suffix << "_" << i << "[] = {";
        llvm::interleaveComma(generic->getOperands(), os, [&](Value v) { os << ref(v); });
        os << "};\n";
        continue;
      }
      auto kernel = dyn_cast<launch::KernelOp>(op);
      if (!kernel)
        continue;
      os << "static const sinter_buffer_ref kArgs" << suffix << "_" << i << "[] = {";
      llvm::interleaveComma(kernel.getArgs(), os, [&](int64_t slot) {
        os << ref(slot < 0 ? Value() : kernel.getBuffers()[slot]);
      });
      os << "};\n";
    }
    os << "\nstatic const sinter_launch_desc kLaunches" << suffix << "[] = {\n";
    for (auto [i, op] : llvm::enumerate(launches)) {
      if (auto generic = dyn_cast<launch::GenericOp>(op)) {
        os << "  {SINTER_LAUNCH_KERNEL, \"generic\", " << cString(sourcesOf(generic))
           << ",\n   {},\n   {(const void *)&" << genericNames.lookup(op) << ",\n    {";
        llvm::interleaveComma(generic.getGrid(), os);
        os << "}, {";
        llvm::interleaveComma(generic.getBlock(), os);
        os << "}, " << generic.getSharedBytes() << ", " << generic->getNumOperands() << ", kArgs"
           << suffix << "_" << i << "}},\n";
        continue;
      }
      if (auto kernel = dyn_cast<launch::KernelOp>(op)) {
        os << "  {SINTER_LAUNCH_KERNEL, " << cString(kernel.getKernelTemplate()) << ", "
           << cString(sourcesOf(kernel)) << ",\n   {},\n   {(const void *)&"
           << kernelSymbol(kernel) << ",\n    {";
        llvm::interleaveComma(kernel.getGrid(), os);
        os << "}, {";
        llvm::interleaveComma(kernel.getBlock(), os);
        os << "}, " << kernel.getSharedBytes() << ", " << kernel.getArgs().size() << ", kArgs"
           << suffix << "_" << i << "}},\n";
        continue;
      }
      auto g = cast<launch::GemmOp>(op);
      Type et = g.getInput().getType().getElementType();
      StringRef p = g.getPrecision();
      const char *precision = p == "strict" ? "SINTER_PRECISION_STRICT"
                              : p == "tf32" ? "SINTER_PRECISION_TF32"
                                            : "SINTER_PRECISION_NATIVE";
      os << "  {SINTER_LAUNCH_GEMM, \"gemm\", " << cString(sourcesOf(g)) << ",\n"
         << "   {" << g.getM() << ", " << g.getN() << ", " << g.getK() << ", "
         << dtypeEnum(et) << ", " << precision << ",\n"
         << "    " << ref(g.getInput()) << ", " << ref(g.getWeight()) << ", "
         << ref(g.getBias()) << ", " << ref(g.getOutput()) << ",\n"
         << "    " << ref(g.getResidual()) << ", " << g.getBatch() << ", "
         << (g.getBroadcastInput() ? 1 : 0) << ", " << (g.getBroadcastWeight() ? 1 : 0) << "},\n"
         << "   {0, {0, 0, 0}, {0, 0, 0}, 0, 0, 0}},\n";
    }
    if (launches.empty())
      os << "  {0, 0, 0, {}, {}},\n";
    os << "};\n\n";
  }

  void writeSource() {
    llvm::raw_string_ostream os(out.source);
    // The model's file name is the user's: escaped, so a newline in it cannot end the comment.
    std::string quotedName = cString(modelName);
    os << "// Generated by sinter from " << quotedName << " for target '" << target.name
       << "'. Do not edit.\n";
    // The limits the launches were configured for (launch_params.h reads them), before any
    // kernel header: each kernel then derives the tiling the compiler chose.
    os << "#define SINTER_TARGET_SHARED_PER_BLOCK " << limits.sharedMemoryPerBlock << "u\n"
       << "#define SINTER_TARGET_SHARED_PER_SM " << limits.sharedMemoryPerSm << "u\n"
       << "#define SINTER_TARGET_L2_BYTES " << limits.l2Bytes << "ull\n";
    os << "#include \"sinter/program.h\"\n";
    std::set<std::string> templates;
    for (const Entry &entry : entries)
      for (Operation *op : entry.launches)
        if (auto kernel = dyn_cast<launch::KernelOp>(op))
          templates.insert(kernel.getKernelTemplate().str());
    for (const std::string &t : templates)
      os << "#include \"" << t << ".cuh\"\n";
    if (!genericKernels.empty())
      os << "#include \"generic.cuh\"\n\n// Generated kernels of the generic tier.\n" << genericKernels;
    os << "\n";
    if (!out.externalWeights) {
    // A large ("l") read-only section: the linker places it after .data/.bss, so a blob of
    // several GB never pushes the code's 32-bit PC-relative references out of range.
    os << "// The weight blob, embedded from " << kWeightsFileName << " beside this file.\n";
    os << "#ifndef __CUDA_ARCH__\n";
    os << "asm(\".section .lrodata.sinter_weights,\\\"al\\\",@progbits\\n\"\n"
       << "    \".balign " << SINTER_BUFFER_ALIGNMENT << "\\n\"\n"
          "    \".hidden sinter_weight_blob\\n\"\n"
          "    \"sinter_weight_blob:\\n\"\n"
          "    \".incbin \\\"" << kWeightsFileName << "\\\"\\n\"\n"
          "    \".byte 0\\n\"\n"
          "    \".previous\\n\");\n";
    os << "#endif\n";
    os << "extern \"C\" const unsigned char sinter_weight_blob[];\n\n";
    } else {
      os << "// Weights are external: loaded from a safetensors file matching kWeights.\n\n";
    }
    os << "// What `sinter inspect` reads, without loading this library.\n";
    os << "__attribute__((section(\"" << kMetaSectionName << "\"), used))\n"
       << "static const char kInspectJson[] = " << cString(out.inspectJson) << ";\n\n";
    for (auto [e, entry] : llvm::enumerate(entries)) {
      std::string suffix = std::to_string(e);
      writeTensorInfos(os, "kInputs" + suffix, entry.inputs);
      writeTensorInfos(os, "kOutputs" + suffix, entry.outputs);
      writeLaunches(os, entry, suffix);
    }
    os << "// Weight tensors in blob order: names, shapes and checksums let a checkpoint with\n"
          "// the same names and shapes replace them at load.\n";
    os << "static const sinter_weight_info kWeights[] = {\n";
    const BlobChecksums sums = checksumBlob(out.weights, out.tensors);
    for (auto [i, t] : llvm::enumerate(out.tensors)) {
      os << "  {" << cString(t.name) << ", " << t.dtype << ", " << t.shape.size() << ", {";
      llvm::interleaveComma(t.shape, os);
      if (t.shape.empty())
        os << "0";
      os << "}, " << t.offset << "ull, " << t.bytes << "ull, 0x"
         << llvm::format_hex_no_prefix(sums.tensors[i], 16) << "ull},\n";
    }
    if (out.tensors.empty())
      os << "  {\"\", 0, 0, {0}, 0ull, 0ull, 0ull},\n";
    os << "};\n\n";
    os << "static const sinter_state_info kStates[] = {\n";
    for (const StateInfo &st : states) {
      os << "  {" << cString(st.name) << ", " << dtypeEnum(st.type.getElementType()) << ", "
         << st.type.getRank() << ", {";
      llvm::interleaveComma(st.type.getShape(), os);
      os << "}, " << st.offset << "ull, " << launch::bufferBytes(st.type) << "ull},\n";
    }
    if (states.empty())
      os << "  {\"\", 0, 0, {0}, 0ull, 0ull},\n";
    os << "};\n\n";
    os << "static const sinter_entry kEntries[] = {\n";
    for (auto [e, entry] : llvm::enumerate(entries))
      os << "  {" << cString(entry.name) << ", " << entry.inputs.size() << ", "
         << entry.outputs.size() << ", kInputs" << e << ", kOutputs" << e << ", "
         << entry.launches.size() << ", kLaunches" << e << "},\n";
    os << "};\n\n";
    const Entry &main = entries.front();
    auto arena = module->getAttrOfType<IntegerAttr>("launch.arena_bytes");
    auto stateBytes = module->getAttrOfType<IntegerAttr>("launch.state_bytes");
    os << "static const sinter_program kProgram = {\n"
       << "  SINTER_PROGRAM_VERSION, " << cString(target.name) << ", "
       << cString("sinter " + target.arch) << ",\n"
       << "  " << main.inputs.size() << ", " << main.outputs.size() << ", kInputs0, kOutputs0,\n"
       << "  " << (arena ? arena.getInt() : 0) << "ull,\n"
       << "  " << (out.externalWeights ? "0" : "sinter_weight_blob") << ", "
       << out.weights.size() << "ull, 0x"
       << llvm::format_hex_no_prefix(sums.blob, 16) << "ull,\n"
       << "  " << main.launches.size() << ", kLaunches0,\n"
       << "  " << (out.externalWeights ? 1 : 0) << ", " << out.tensors.size() << ", kWeights,\n"
       << "  " << (stateBytes ? stateBytes.getInt() : 0) << "ull, " << states.size()
       << ", kStates, " << entries.size() << ", kEntries};\n\n"
       << "extern \"C\" const sinter_program *sinter_generated_program(void) { return &kProgram; }\n";
  }

  static void addSources(EmittedProgram::Tensor &tensor, Location loc) {
    llvm::SetVector<StringRef> names;
    collectSources(loc, names);
    for (StringRef name : names)
      if (!llvm::is_contained(tensor.sources, name))
        tensor.sources.push_back(name.str());
  }

  llvm::json::Array weightTensorsJson() const {
    auto names = [](const llvm::StringMap<llvm::SetVector<StringRef>> &map, StringRef key) {
      llvm::json::Array list;
      if (auto it = map.find(key); it != map.end())
        for (StringRef name : it->second)
          list.push_back(name.str());
      return list;
    };
    llvm::json::Array arr;
    for (auto [i, t] : llvm::enumerate(out.tensors)) {
      llvm::json::Object tensor{{"name", t.name},
                                {"dtype", dtypeName(weightElementTypes[i])},
                                {"shape", llvm::json::Array(t.shape)},
                                {"offset", (int64_t)t.offset},
                                {"bytes", (int64_t)t.bytes},
                                {"sources", llvm::json::Array(t.sources)}};
      // fp8 weights: w[n, k] ~= row_scales[n] * q[n, k], one fp32 scale per output row
      // (scale_layout "row"). int4 weights: w[n, k] ~= group_scales[n, k / group_size] *
      // (q[n, k] - 8), q packed two to a byte (scale_layout "row_group", values "int4").
      auto group = groupSizes.find(t.name);
      if (rowScales.count(t.name)) {
        if (group != groupSizes.end()) {
          tensor["values"] = "int4";
          tensor["group_scales"] = names(rowScales, t.name);
          tensor["scale_layout"] = "row_group";
          tensor["group_size"] = group->second;
        } else {
          tensor["row_scales"] = names(rowScales, t.name);
          tensor["scale_layout"] = "row";
        }
      }
      if (scaledWeights.count(t.name)) {
        tensor["scale_of"] = names(scaledWeights, t.name);
        tensor["scale_layout"] = group != groupSizes.end() ? "row_group" : "row";
        if (group != groupSizes.end())
          tensor["group_size"] = group->second;
      }
      arr.push_back(std::move(tensor));
    }
    return arr;
  }

  llvm::json::Value bufferJson(Value v) {
    if (!v)
      return nullptr;
    BufferRef r = refs.lookup(v);
    std::string space = StringRef(r.space).drop_front(strlen("SINTER_BUFFER_")).lower();
    return llvm::json::Object{{"space", space}, {"index", r.index}, {"offset", r.offset}};
  }

  static llvm::json::Array tensorsJson(ArrayRef<std::pair<std::string, MemRefType>> list) {
    llvm::json::Array arr;
    for (auto &[name, type] : list)
      arr.push_back(llvm::json::Object{{"name", name},
                                       {"dtype", dtypeName(type.getElementType())},
                                       {"shape", llvm::json::Array(type.getShape())}});
    return arr;
  }

  llvm::json::Array launchesJson(const Entry &entry) {
    llvm::json::Array launchJson;
    for (Operation *op : entry.launches) {
      llvm::SetVector<StringRef> names;
      collectSources(op->getLoc(), names);
      auto sources = llvm::json::Array(llvm::map_range(names, [](StringRef s) { return s.str(); }));
      if (auto generic = dyn_cast<launch::GenericOp>(op)) {
        llvm::json::Array args;
        for (Value v : generic->getOperands())
          args.push_back(bufferJson(v));
        launchJson.push_back(llvm::json::Object{
            {"kind", "kernel"},
            {"tier", "generic"},
            {"kernel", "generic"},
            {"function", genericNames.lookup(op)},
            {"grid", llvm::json::Array(generic.getGrid())},
            {"block", llvm::json::Array(generic.getBlock())},
            {"shared_bytes", generic.getSharedBytes()},
            {"args", std::move(args)},
            {"sources", std::move(sources)}});
        continue;
      }
      if (auto kernel = dyn_cast<launch::KernelOp>(op)) {
        llvm::json::Array args;
        for (int64_t slot : kernel.getArgs())
          args.push_back(slot < 0 ? llvm::json::Value(nullptr) : bufferJson(kernel.getBuffers()[slot]));
        launchJson.push_back(llvm::json::Object{
            {"kind", "kernel"},
            {"tier", "pattern"},
            {"kernel", kernelSymbol(kernel)},
            {"grid", llvm::json::Array(kernel.getGrid())},
            {"block", llvm::json::Array(kernel.getBlock())},
            {"shared_bytes", kernel.getSharedBytes()},
            {"args", std::move(args)},
            {"sources", std::move(sources)}});
        continue;
      }
      auto g = cast<launch::GemmOp>(op);
      launchJson.push_back(llvm::json::Object{
          {"kind", "gemm"},
          {"tier", "gemm"},
          {"library", "cublasLt"},
          {"batch", g.getBatch()},
          {"m", g.getM()}, {"n", g.getN()}, {"k", g.getK()},
          {"dtype", dtypeName(g.getInput().getType().getElementType())},
          {"precision", g.getPrecision().str()},
          {"epilogue", g.getResidual() ? (g.getBias() ? "bias+residual" : "residual")
                                       : (g.getBias() ? "bias" : "none")},
          {"input", bufferJson(g.getInput())}, {"weight", bufferJson(g.getWeight())},
          {"bias", bufferJson(g.getBias())}, {"residual", bufferJson(g.getResidual())},
          {"output", bufferJson(g.getOutput())},
          {"sources", std::move(sources)}});
    }
    return launchJson;
  }

  /// The description `sinter inspect` prints. The top-level inputs, outputs and launches
  /// are entry 0's, as for a single-entry model.
  void writeJson() {
    llvm::json::Array entryJson, stateJson;
    for (const Entry &entry : entries)
      entryJson.push_back(llvm::json::Object{{"name", entry.name},
                                             {"inputs", tensorsJson(entry.inputs)},
                                             {"outputs", tensorsJson(entry.outputs)},
                                             {"launches", launchesJson(entry)}});
    for (const StateInfo &st : states)
      stateJson.push_back(llvm::json::Object{{"name", st.name},
                                             {"dtype", dtypeName(st.type.getElementType())},
                                             {"shape", llvm::json::Array(st.type.getShape())},
                                             {"offset", st.offset},
                                             {"bytes", launch::bufferBytes(st.type)}});
    const Entry &main = entries.front();
    auto arena = module->getAttrOfType<IntegerAttr>("launch.arena_bytes");
    auto stateBytes = module->getAttrOfType<IntegerAttr>("launch.state_bytes");
    auto activations = module->getAttrOfType<StringAttr>("launch.activations");
    auto narrowedTo = module->getAttrOfType<StringAttr>("sinter.narrowed_from_f32");
    auto weightDtype = module->getAttrOfType<StringAttr>("launch.weight_dtype");
    llvm::json::Object root{{"format", "sinter"},
                            {"abi_version", std::to_string(SINTER_ABI_VERSION_MAJOR) + "." +
                                                std::to_string(SINTER_ABI_VERSION_MINOR)},
                            {"weights", out.externalWeights ? "external" : "embedded"},
                            {"activations", activations ? activations.getValue() : "model"},
                            {"weight_dtype", weightDtype ? weightDtype.getValue() : "model"},
                            {"program_version", 1},
                            {"dtype_conversion", narrowedTo ? "f32 -> " + narrowedTo.getValue().str()
                                                            : std::string("none")},
                            {"model", modelName},
                            {"target", target.name},
                            {"arch", target.arch},
                            {"inputs", tensorsJson(main.inputs)},
                            {"outputs", tensorsJson(main.outputs)},
                            {"launches", launchesJson(main)},
                            {"entries", std::move(entryJson)},
                            {"states", std::move(stateJson)},
                            {"state_bytes", stateBytes ? stateBytes.getInt() : 0},
                            {"arena_bytes", arena ? arena.getInt() : 0},
                            {"weight_bytes", (int64_t)out.weights.size()},
                            {"weight_tensors", weightTensorsJson()}};
    out.inspectJson = llvm::formatv("{0:2}", llvm::json::Value(std::move(root)));
  }

  ModuleOp module;
  const Target &target;
  /// The module's sinter.target: what every launch was configured for.
  CompileTarget limits;
  std::string modelName;
  EmittedProgram &out;
  llvm::DenseMap<Value, BufferRef> refs;
  llvm::StringMap<int64_t> weightOffsets;
  llvm::StringMap<size_t> weightIndex;        // out.tensors index by weight name
  std::vector<Type> weightElementTypes;       // parallel to out.tensors
  /// fp8 and int4 weights' scales by weight name, and the reverse (recordRowScales).
  llvm::StringMap<llvm::SetVector<StringRef>> rowScales, scaledWeights;
  /// int4 weights' and scales' group size by name.
  llvm::StringMap<int64_t> groupSizes;
  std::vector<Entry> entries;
  std::vector<StateInfo> states;
  /// The generated kernels' source and each generic launch's function name.
  std::string genericKernels;
  llvm::DenseMap<Operation *, std::string> genericNames;
};

} // namespace

LogicalResult emitProgram(ModuleOp module, const Target &target, const std::string &modelName,
                          bool externalWeights, EmittedProgram &out) {
  out.externalWeights = externalWeights;
  return ProgramEmitter(module, target, modelName, out).run();
}

std::string weightsPathFor(const std::string &soPath) {
  StringRef stem(soPath);
  stem.consume_back(".so");
  return (stem + ".safetensors").str();
}

} // namespace sinter
