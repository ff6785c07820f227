// SlicePointEvaluator (the attention-mask probe of long prompts): every op's point rule must
// give what folding the slice whole gives. Evaluated with nothing but constants read whole,
// at every element in a shuffled order, for several argument values.
#include "MaskProbe.h"
#include "SlicePoints.h"

#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace {

using namespace mlir;
using sinter::graph::HostValues;

// A [2, 5] key-flag argument through every op a mask slice is built of: range, unsqueeze,
// comparisons, cast, gather_nd (batch tuples), and, transpose, strided slice, where, trilu,
// concat, gather with a negative index, expand, reshape, a named binary function.
constexpr const char *kSlices = R"mlir(
func.func @slices(%am: tensor<2x5xi64>) -> (tensor<2x1x5x5xi1>, tensor<2x1x4x3xi1>,
    tensor<2x1x5x5xf32>, tensor<2x1x10x3xf32>, tensor<6x25xi1>, tensor<2x1x5x5xi1>, tensor<5x5xf32>, tensor<2x1x5x5xf32>, tensor<2x1x5x5xf32>, tensor<2x1x10x5xf32>) {
  %c0 = sinter.constant dense<0> : tensor<i64>
  %c5 = sinter.constant dense<5> : tensor<i64>
  %c1 = sinter.constant dense<1> : tensor<i64>
  %r = sinter.range %c0, %c5, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>
  %ri = sinter.unsqueeze %r {axes = array<i64: 1>} : (tensor<5xi64>) -> tensor<5x1xi64>
  %rj = sinter.unsqueeze %r {axes = array<i64: 0>} : (tensor<5xi64>) -> tensor<1x5xi64>
  %causal = sinter.less_or_equal %rj, %ri : (tensor<1x5xi64>, tensor<5x1xi64>) -> tensor<5x5xi1>
  %b = sinter.cast %am : (tensor<2x5xi64>) -> tensor<2x5xi1>
  %idx = sinter.constant dense<[[[[[0, 0], [0, 1], [0, 2], [0, 3], [0, 4]]]], [[[[1, 0], [1, 1], [1, 2], [1, 3], [1, -1]]]]]> : tensor<2x1x1x5x2xi64>
  %g = sinter.gather_nd %b, %idx : (tensor<2x5xi1>, tensor<2x1x1x5x2xi64>) -> tensor<2x1x1x5xi1>
  %m = sinter.and %g, %causal : (tensor<2x1x1x5xi1>, tensor<5x5xi1>) -> tensor<2x1x5x5xi1>
  %t = sinter.transpose %m, [0, 1, 3, 2] : (tensor<2x1x5x5xi1>) -> tensor<2x1x5x5xi1>
  %s = sinter.slice %t {starts = array<i64: 0, 0, 1, 0>, ends = array<i64: 2, 1, 5, 5>, steps = array<i64: 1, 1, 1, 2>} : (tensor<2x1x5x5xi1>) -> tensor<2x1x4x3xi1>
  %zero = sinter.constant dense<0.0> : tensor<f32>
  %low = sinter.constant dense<-3.0e+38> : tensor<f32>
  %w = sinter.where %m, %zero, %low : (tensor<2x1x5x5xi1>, tensor<f32>, tensor<f32>) -> tensor<2x1x5x5xf32>
  %tf = sinter.cast %causal : (tensor<5x5xi1>) -> tensor<5x5xf32>
  %tw = sinter.add %w, %tf : (tensor<2x1x5x5xf32>, tensor<5x5xf32>) -> tensor<2x1x5x5xf32>
  %tr = sinter.trilu %tw {upper = false, k = 1 : i64} : (tensor<2x1x5x5xf32>) -> tensor<2x1x5x5xf32>
  %cc = sinter.concat %w, %tr {axis = 2 : i64} : (tensor<2x1x5x5xf32>, tensor<2x1x5x5xf32>) -> tensor<2x1x10x5xf32>
  %gi = sinter.constant dense<[4, -5, 2]> : tensor<3xi64>
  %ga = sinter.gather %cc, %gi {axis = 3 : i64} : (tensor<2x1x10x5xf32>, tensor<3xi64>) -> tensor<2x1x10x3xf32>
  %es = sinter.constant dense<[2, 3, 5, 5]> : tensor<4xi64>
  %e = sinter.expand %causal, %es : (tensor<5x5xi1>, tensor<4xi64>) -> tensor<2x3x5x5xi1>
  %rs = sinter.constant dense<[6, 25]> : tensor<2xi64>
  %flat = sinter.reshape %e, %rs : (tensor<2x3x5x5xi1>, tensor<2xi64>) -> tensor<6x25xi1>
  %x = sinter.binary "xor" %m, %t : (tensor<2x1x5x5xi1>, tensor<2x1x5x5xi1>) -> tensor<2x1x5x5xi1>
  return %m, %s, %w, %ga, %flat, %x, %tf, %tw, %tr, %cc : tensor<2x1x5x5xi1>, tensor<2x1x4x3xi1>, tensor<2x1x5x5xf32>, tensor<2x1x10x3xf32>, tensor<6x25xi1>, tensor<2x1x5x5xi1>, tensor<5x5xf32>, tensor<2x1x5x5xf32>, tensor<2x1x5x5xf32>, tensor<2x1x10x5xf32>
}
)mlir";

TEST(SlicePoints, EveryRuleAgreesWithWholeFolding) {
  MLIRContext context;
  context.loadDialect<func::FuncDialect, sinter::graph::GraphDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kSlices, &context);
  ASSERT_TRUE(module);
  auto fn = *module->getOps<func::FuncOp>().begin();
  Operation *ret = fn.getBody().front().getTerminator();
  BlockArgument am = fn.getArgument(0);
  auto amType = cast<RankedTensorType>(am.getType());
  std::mt19937 rng(7);
  for (OpOperand &returned : ret->getOpOperands()) {
    Value root = returned.get();
    unsigned position = returned.getOperandNumber();
    std::optional<sinter::passes::SliceEvaluator> whole = sinter::passes::SliceEvaluator::build(root);
    std::optional<sinter::passes::SlicePointEvaluator> points =
        sinter::passes::SlicePointEvaluator::build(root, /*wholeElements=*/0);
    ASSERT_TRUE(whole && points);
    ASSERT_EQ(points->arguments().size(), whole->arguments().size());
    int64_t elements = cast<ShapedType>(root.getType()).getNumElements();
    std::vector<int64_t> order(elements);
    std::iota(order.begin(), order.end(), 0);
    for (int trial = 0; trial < 4; ++trial) {
      HostValues flags;
      for (int n = 0; n < 10; ++n)
        flags.ints.push_back(trial == 0 ? 1 : int64_t(rng() % 3));
      SmallVector<Attribute> arg;
      if (!whole->arguments().empty())
        arg.push_back(sinter::graph::makeElements(amType, flags));
      std::optional<HostValues> expected = sinter::graph::readValues(whole->evaluate(arg));
      ASSERT_TRUE(expected) << "result #" << position;
      std::shuffle(order.begin(), order.end(), rng);
      std::optional<HostValues> got = points->evaluate(arg, order);
      ASSERT_TRUE(got) << "no point rule on the way to result #" << position;
      ASSERT_EQ(got->size(), order.size());
      for (size_t n = 0; n < order.size(); ++n)
        EXPECT_EQ(got->asDouble(n), expected->asDouble(order[n]))
            << "element " << order[n] << " of result #" << position;
    }
  }
}

TEST(SlicePoints, OpsWithoutAPointRuleGiveNothing) {
  MLIRContext context;
  context.loadDialect<func::FuncDialect, sinter::graph::GraphDialect>();
  // A reduction has no point rule: at wholeElements 0 its result cannot be evaluated.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
func.func @f(%a: tensor<4x4xf32>) -> tensor<4x1xf32> {
  %m = sinter.reduce_mean %a {axes = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4x1xf32>
  return %m : tensor<4x1xf32>
})mlir",
                                                                  &context);
  ASSERT_TRUE(module);
  auto fn = *module->getOps<func::FuncOp>().begin();
  Value root = fn.getBody().front().getTerminator()->getOperand(0);
  auto points = sinter::passes::SlicePointEvaluator::build(root, 0);
  ASSERT_TRUE(points);
  HostValues values;
  values.isFloat = true;
  values.floats.assign(16, 1.0);
  Attribute arg = sinter::graph::makeElements(cast<RankedTensorType>(fn.getArgument(0).getType()), values);
  EXPECT_FALSE(points->evaluate({arg}, {0, 1}));
  // Folded whole (the default threshold), it is.
  auto folded = sinter::passes::SlicePointEvaluator::build(root);
  std::optional<HostValues> got = folded->evaluate({arg}, {3, 0});
  ASSERT_TRUE(got);
  EXPECT_EQ(got->floats, (std::vector<double>{1.0, 1.0}));
}

} // namespace
