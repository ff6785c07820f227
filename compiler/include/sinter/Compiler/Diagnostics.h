#ifndef SINTER_COMPILER_DIAGNOSTICS_H
#define SINTER_COMPILER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

#include <string>
#include <vector>

namespace sinter {

/// Collects the error diagnostics the passes and the emitter report while it is alive, each as
/// one line naming where it happened (`node 'name'`, the ONNX node the op came from), and keeps
/// them off stderr: the driver prints one line per failure (see summary()).
class ErrorCollector {
public:
  explicit ErrorCollector(mlir::MLIRContext &context);

  /// The errors as reported (a message is meant to be one line; the pipeline fuzzer checks).
  const std::vector<std::string> &errors() const { return errors_; }
  /// The first error's first line, with a count of the others: what `sinter compile` prints.
  std::string summary() const;

private:
  std::vector<std::string> errors_;
  mlir::ScopedDiagnosticHandler handler_;
};

/// `node 'a'`, `node 'a' (and 2 fused nodes)`, `file:3:7`, or "" for an unknown location.
std::string describeLocation(mlir::Location loc);

} // namespace sinter

#endif
