#ifndef SINTER_COMPILER_GENERICKERNELEMITTER_H
#define SINTER_COMPILER_GENERICKERNELEMITTER_H

#include "sinter/Dialect/Launch/IR/LaunchOps.h"

#include <string>

namespace sinter {

/// The CUDA source of the `__global__` function `name` that computes `op`'s body, its
/// parameters one pointer per buffer (inputs, then outputs). Fails with a diagnostic on `op`.
mlir::FailureOr<std::string> emitGenericKernel(launch::GenericOp op, llvm::StringRef name);

} // namespace sinter

#endif
