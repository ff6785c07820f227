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
};

/// Imports an ONNX model file into a module holding `func.func @main` of Graph dialect ops,
/// one op per ONNX compute node, each located at its node name. On failure returns null and
/// sets `error` to a one-line message naming the file, node, op type, domain and opset.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &context,
                                                 const std::string &path,
                                                 const ImportOptions &options,
                                                 std::string &error);

} // namespace sinter

#endif
