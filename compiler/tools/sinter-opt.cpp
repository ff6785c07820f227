#include "sinter/Dialect/Graph/IR/GraphDialect.h"
#include "sinter/Dialect/Launch/IR/LaunchDialect.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<sinter::graph::GraphDialect, sinter::launch::LaunchDialect,
                  mlir::func::FuncDialect, mlir::memref::MemRefDialect>();
  sinter::registerSinterPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Sinter optimizer driver\n", registry));
}
