#ifndef SINTER_DIALECT_GRAPH_IR_GRAPHDIALECT_H
#define SINTER_DIALECT_GRAPH_IR_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "sinter/Dialect/Graph/IR/GraphOpsDialect.h.inc"

#endif
