#include "sinter/Compiler/Emitter.h"

#include "safetensors_writer.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace sinter {

static bool writeFile(const std::string &path, llvm::StringRef data, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write '" + path + "': " + ec.message();
    return false;
  }
  os << data;
  return true;
}

/// The blob's tensors as a safetensors file, the form --weights=external ships them in.
static bool writeWeightsFile(const EmittedProgram &program, const std::string &path,
                             std::string &error) {
  std::vector<safetensors::TensorData> tensors;
  // Where each tensor came from, as a JSON array of ONNX initializer and node names (the
  // tensor names are the compiler's: a tensor may be several initializers merged).
  std::map<std::string, std::string> metadata = {{"format", "sinter"}};
  for (const auto &t : program.tensors) {
    metadata["sinter.sources." + t.name] =
        llvm::formatv("{0}", llvm::json::Value(llvm::json::Array(t.sources))).str();
    const char *dtype = safetensors::dtype_for_sinter(t.dtype);
    if (!dtype) {
      error = "weight '" + t.name + "' has a dtype safetensors cannot store";
      return false;
    }
    tensors.push_back({t.name, dtype, t.shape, program.weights.data() + t.offset, t.bytes});
  }
  if (!safetensors::write_file(path, tensors, metadata, error)) {
    error = "cannot write the weights file '" + path + "': " + error;
    return false;
  }
  return true;
}

bool buildSharedObject(const EmittedProgram &program, const Toolchain &toolchain,
                       const Target &target, const std::string &outPath, std::string &error) {
  llvm::SmallString<128> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("sinter-build", dir)) {
    error = "cannot create a temporary folder: " + ec.message();
    return false;
  }
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dir); });
  std::string source = (dir + "/program.cu").str();
  std::string weights = (dir + "/" + kWeightsFileName).str();
  std::string log = (dir + "/nvcc.log").str();
  if (!writeFile(source, program.source, error) ||
      (!program.externalWeights && !writeFile(weights, program.weights, error)))
    return false;
  if (program.externalWeights && !writeWeightsFile(program, weightsPathFor(outPath), error))
    return false;

  llvm::SmallString<256> absoluteOut(outPath);
  llvm::sys::fs::make_absolute(absoluteOut);
  // The source's `.incbin` names the blob relative to the assembler's working folder, so
  // that the same model gives the same source; nvcc inherits ours.
  llvm::SmallString<256> previousDir;
  llvm::sys::fs::current_path(previousDir);
  if (auto ec = llvm::sys::fs::set_current_path(dir)) {
    error = "cannot enter the build folder: " + ec.message();
    return false;
  }
  llvm::scope_exit restoreDir([&] { llvm::sys::fs::set_current_path(previousDir); });
  std::vector<std::string> args = {
      toolchain.nvcc, "-O3", "-std=c++17", "-arch=" + target.arch, "-shared",
      "-cudart", "static", "-Xcompiler", "-fPIC,-fvisibility=hidden",
      "-I" + toolchain.includeDir, "-I" + toolchain.kernelsDir, source, "-o", std::string(absoluteOut), 
      // Nothing in the generated code calls the ABI; take the whole runtime regardless
      // (one -Xlinker so nvcc keeps the three in order).
      "-Xlinker", "--whole-archive," + toolchain.libDir + "/libsinter_runtime.a,--no-whole-archive",
      "-L" + toolchain.cudaLibDir, "-lcublasLt", "-Xlinker", "-rpath," + toolchain.cudaLibDir,
      "-Xlinker", "--version-script=" + toolchain.exportMap};
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(toolchain.nvcc, argRefs, std::nullopt, redirects, 0, 0,
                                     &execError);
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    error = "nvcc failed" + (execError.empty() ? "" : ": " + execError) +
            (text ? "\n" + (*text)->getBuffer().str() : "");
    return false;
  }
  return true;
}

} // namespace sinter
