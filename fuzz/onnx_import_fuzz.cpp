// libFuzzer target: raw bytes as an ONNX model through the importer.
//
// Every input must either import into IR that verifies or fail with a one-line message; a
// crash, a sanitizer report, a leak, a timeout, an allocation over libFuzzer's malloc limit, an
// empty message or an "internal error" (the importer built IR that does not verify) is a bug.
//
// External data resolves inside a private temporary folder holding `weights.bin` (the four
// floats 0, 1, 2, 3 that test/lit/Import/Inputs/weights.bin holds), so the external-data seeds
// reach the file-reading code. An input holding a Concat is also imported as the decode step
// of --cache-length 8 (the with-past path). SINTER_FUZZ_PRINT_ERRORS=1 prints each input's
// message.
#include "sinter/Compiler/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::string modelDir;

void removeModelDir() {
  if (modelDir.empty())
    return;
  llvm::SmallString<256> weights(modelDir);
  llvm::sys::path::append(weights, "weights.bin");
  (void)llvm::sys::fs::remove(weights);
  (void)llvm::sys::fs::remove(modelDir);
}

[[noreturn]] void bug(const char *what, const std::string &detail) {
  std::fprintf(stderr, "sinter-onnx-import-fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  llvm::SmallString<256> dir;
  if (llvm::sys::fs::createUniqueDirectory("sinter-onnx-fuzz", dir))
    bug("setup", "cannot create a temporary folder");
  modelDir = std::string(dir);
  llvm::SmallString<256> weights(dir);
  llvm::sys::path::append(weights, "weights.bin");
  std::error_code ec;
  llvm::raw_fd_ostream os(weights, ec);
  if (ec)
    bug("setup", "cannot write " + std::string(weights));
  const float values[4] = {0, 1, 2, 3};
  os.write(reinterpret_cast<const char *>(values), sizeof values);
  std::atexit(removeModelDir);
  return 0;
}

namespace {

/// One import of the input under `options`: IR that verifies or a one-line message.
void importOnce(const uint8_t *data, size_t size, const sinter::ImportOptions &options) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics become the importer's error message; keep them off stderr.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
  std::string error;
  auto module = sinter::importOnnxBuffer(
      context, llvm::StringRef(reinterpret_cast<const char *>(data), size), modelDir, options,
      error, "fuzz.onnx");
  if (!module) {
    static const bool print = std::getenv("SINTER_FUZZ_PRINT_ERRORS") != nullptr;
    if (print)
      std::fprintf(stderr, "error: %s\n", error.c_str());
    if (error.empty())
      bug("import failed without a message", "");
    if (error.find('\n') != std::string::npos)
      bug("multi-line error message", error);
    if (llvm::StringRef(error).starts_with("internal error"))
      bug("importer bug", error);
    return;
  }
  if (mlir::failed(mlir::verify(*module)))
    bug("imported IR does not verify", "");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  importOnce(data, size, {});
  // A model with a Concat may be a with-past export: also import it as --cache-length's
  // decode step (which binds its own past and sequence dimensions).
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  if (bytes.contains("Concat")) {
    sinter::ImportOptions step;
    step.cacheEntry = sinter::ImportOptions::CacheEntry::DecodeStep;
    step.cacheLength = 8;
    importOnce(data, size, step);
  }
  return 0;
}
