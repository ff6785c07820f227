#include "sinter/Dialect/Launch/IR/LaunchDialect.h"
#include "sinter/Dialect/Launch/IR/LaunchOps.h"

using namespace mlir;
using namespace sinter::launch;

#include "sinter/Dialect/Launch/IR/LaunchOpsDialect.cpp.inc"

void LaunchDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "sinter/Dialect/Launch/IR/LaunchOps.cpp.inc"
      >();
}
