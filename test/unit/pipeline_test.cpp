// The driver's pass runner and its one-line error reporting.
#include "sinter/Compiler/Diagnostics.h"
#include "sinter/Compiler/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"

#include <gtest/gtest.h>

namespace {

using namespace mlir;

/// Breaks the IR the way a buggy pass would: returns a value of the wrong type.
struct BreakReturnPass : PassWrapper<BreakReturnPass, OperationPass<ModuleOp>> {
  StringRef getArgument() const override { return "test-break-return"; }
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      auto func = cast<func::FuncOp>(ret->getParentOp());
      ret->setOperand(0, func.getArgument(1));
    });
  }
};

struct RecordRunPass : PassWrapper<RecordRunPass, OperationPass<ModuleOp>> {
  explicit RecordRunPass(bool &ran) : ran(ran) {}
  StringRef getArgument() const override { return "test-record-run"; }
  void runOnOperation() override { ran = true; }
  bool &ran;
};

constexpr const char *kModule = R"mlir(
func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
)mlir";

TEST(RunPasses, NamesThePassThatBrokeTheIrAndStops) {
  MLIRContext context;
  context.loadDialect<func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kModule, &context);
  ASSERT_TRUE(module);
  sinter::ErrorCollector errors(context);
  bool laterPassRan = false;
  SmallVector<std::unique_ptr<Pass>> passes;
  passes.push_back(std::make_unique<BreakReturnPass>());
  passes.push_back(std::make_unique<RecordRunPass>(laterPassRan));
  EXPECT_TRUE(failed(sinter::runPasses(*module, std::move(passes))));
  EXPECT_FALSE(laterPassRan) << "a pass ran on IR that does not verify";
  ASSERT_EQ(errors.errors().size(), 1u);
  const std::string &error = errors.errors().front();
  EXPECT_NE(error.find("internal error: the IR does not verify after pass 'test-break-return' ("),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("doesn't match function result type"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(RunPasses, RunsEveryPassOnValidIr) {
  MLIRContext context;
  context.loadDialect<func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kModule, &context);
  ASSERT_TRUE(module);
  bool first = false, second = false;
  SmallVector<std::unique_ptr<Pass>> passes;
  passes.push_back(std::make_unique<RecordRunPass>(first));
  passes.push_back(std::make_unique<RecordRunPass>(second));
  EXPECT_TRUE(succeeded(sinter::runPasses(*module, std::move(passes))));
  EXPECT_TRUE(first && second);
}

TEST(ErrorCollector, OneLineNamingTheNodes) {
  MLIRContext context;
  sinter::ErrorCollector errors(context);
  auto name = [&](const char *n) { return NameLoc::get(StringAttr::get(&context, n)); };
  emitError(FusedLoc::get(&context, {name("node_a"), name("node_b"), name("node_c")}))
      << "first problem";
  emitError(name("node_d")) << "second problem";
  emitError(UnknownLoc::get(&context)) << "third problem\nwith a second line";
  ASSERT_EQ(errors.errors().size(), 3u);
  EXPECT_EQ(errors.errors()[0], "node 'node_a' (and 2 fused nodes): first problem");
  EXPECT_EQ(errors.errors()[1], "node 'node_d': second problem");
  EXPECT_EQ(errors.errors()[2], "third problem\nwith a second line");
  EXPECT_EQ(errors.summary(), "node 'node_a' (and 2 fused nodes): first problem (and 2 more errors)");
  EXPECT_EQ(sinter::describeLocation(FusedLoc::get(&context, {name("x"), name("y")})),
            "node 'x' (and 1 fused node)");
  EXPECT_EQ(sinter::describeLocation(FileLineColLoc::get(&context, "m.mlir", 3, 7)), "m.mlir:3:7");
}

} // namespace
