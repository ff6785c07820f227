// The kernel registry's name lookups and the launch.kernel accessors built on them, which the
// launch passes (launch-plan-handoffs) use to read and rewrite launches by parameter and
// argument name instead of position.
#include "sinter/Dialect/Launch/IR/KernelRegistry.h"
#include "sinter/Dialect/Launch/IR/LaunchDialect.h"
#include "sinter/Dialect/Launch/IR/LaunchOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

namespace {

using namespace mlir;
using namespace sinter::launch;

TEST(KernelRegistry, EveryNameMapsToItsPosition) {
  for (const KernelTemplate &t : kernelTemplates()) {
    for (auto [i, p] : llvm::enumerate(t.params))
      EXPECT_EQ(t.paramIndex(p.name), std::optional<unsigned>(i))
          << t.name.str() << " " << p.name.str();
    for (auto [i, a] : llvm::enumerate(t.args))
      EXPECT_EQ(t.argIndex(a.name), std::optional<unsigned>(i))
          << t.name.str() << " " << a.name.str();
    EXPECT_FALSE(t.paramIndex("no_such_parameter")) << t.name.str();
    EXPECT_FALSE(t.argIndex("no_such_argument")) << t.name.str();
  }
}

TEST(KernelRegistry, LaunchAccessorsReadAndBuildByName) {
  MLIRContext context;
  context.loadDialect<LaunchDialect, func::FuncDialect>();
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module.getBody());
  auto type = MemRefType::get({4, 8}, builder.getF32Type());
  Value x = AllocOp::create(builder, loc, type, IntegerAttr());
  Value table = AllocOp::create(builder, loc, type, IntegerAttr());
  // rms_norm<M, D, EPS_BITS>(x, weight, out) with x also passed as out: one buffer, two roles.
  const KernelTemplate *t = lookupKernelTemplate("rms_norm");
  ASSERT_NE(t, nullptr);
  ArrayAttr params = builder.getArrayAttr(
      {builder.getI64IntegerAttr(4), builder.getI64IntegerAttr(8), builder.getStringAttr("0u")});
  KernelOp op = KernelOp::createWithArguments(builder, loc, "rms_norm", params, {x, table, x},
                                              {1, 1, 1}, {32, 1, 1}, 0, {2});
  EXPECT_EQ(op.getBuffers().size(), 2u);
  EXPECT_EQ(op.getArgs(), ArrayRef<int64_t>({0, 1, 0}));
  EXPECT_EQ(op.getArgument("weight"), table);
  EXPECT_EQ(op.getArgument("out"), x);
  EXPECT_EQ(op.getArgument("nothing"), Value());
  EXPECT_EQ(cast<IntegerAttr>(op.getParam("D")).getInt(), 8);
  EXPECT_EQ(op.getParam("nothing"), Attribute());
  // Only arguments whose role writes count as written, though x is the same buffer.
  EXPECT_EQ(op.getWrittenArguments(), SmallVector<unsigned>({2}));
  EXPECT_TRUE(succeeded(op.verify()));
  module->erase();
}

} // namespace
