#ifndef SINTER_DIALECT_LAUNCH_IR_LAUNCHOPS_H
#define SINTER_DIALECT_LAUNCH_IR_LAUNCHOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "sinter/Dialect/Launch/IR/LaunchDialect.h"

#define GET_OP_CLASSES
#include "sinter/Dialect/Launch/IR/LaunchOps.h.inc"

namespace sinter::launch {
/// Bytes a static memref occupies (element bytes rounded up to whole bytes).
int64_t bufferBytes(mlir::MemRefType type);
} // namespace sinter::launch

#endif
