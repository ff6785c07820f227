#ifndef SINTER_DIALECT_LAUNCH_IR_LAUNCHDIALECT_H
#define SINTER_DIALECT_LAUNCH_IR_LAUNCHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "sinter/Dialect/Launch/IR/LaunchOpsDialect.h.inc"

#endif
