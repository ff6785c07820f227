#ifndef SINTER_COMPILER_ONNXIMPORTER_H
#define SINTER_COMPILER_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace sinter {

struct ImportOptions {
  /// Static shapes for graph inputs with symbolic or unknown dimensions, by input name.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Values of symbolic dimensions, by the name the model gives them (`--dim seq=128`): every
  /// input without an entry in inputShapes takes them. A name no input uses is an error.
  std::map<std::string, int64_t> dimValues;
  /// Graph inputs fixed at compile time (`--input-value use_cache_branch=1`), by name: each
  /// becomes a constant of its declared type and shape (one value fills it, else one value per
  /// element) and leaves the entry's inputs. A name that is no graph input is an error.
  std::map<std::string, std::vector<double>> inputValues;
  /// A with-past export (caches in as `past` inputs, out as Concat(past, new) outputs) is
  /// imported as one entry of an in-place cache of `cacheLength` positions (--cache-length):
  /// the prompt entry binds the past dimension to 0, the decode step binds it to
  /// cacheLength - 1 and the sequence dimension to 1. The function carries
  /// `sinter.cache_length`; sinter-form-past-cache makes the caches context state.
  enum class CacheEntry { None, Prompt, DecodeStep };
  CacheEntry cacheEntry = CacheEntry::None;
  int64_t cacheLength = 0;
};

/// Imports an ONNX model file into a module holding `func.func @main` of Graph dialect ops,
/// one op per ONNX compute node, each located at its node name. On failure returns null and
/// sets `error` to a one-line message naming the file, node, op type, domain and opset.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &context,
                                                 const std::string &path,
                                                 const ImportOptions &options,
                                                 std::string &error);

/// Imports an ONNX model held in memory. External data is resolved inside `modelDir` (the
/// folder a model file would sit in; "" means the current folder); `name` stands for the file
/// in messages.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxBuffer(mlir::MLIRContext &context,
                                                   llvm::StringRef bytes,
                                                   const std::string &modelDir,
                                                   const ImportOptions &options,
                                                   std::string &error,
                                                   const std::string &name = "<buffer>");

} // namespace sinter

#endif
