// Helpers of the tests that lower a small graph module to launches and read the launches and
// their compile-time weights back (fp8_lowering_test, int4_lowering_test,
// kernel_weights_test).
#ifndef SINTER_TEST_UNIT_LOWERING_TEST_UTIL_H
#define SINTER_TEST_UNIT_LOWERING_TEST_UTIL_H

#include "sinter/Dialect/Graph/IR/GraphDialect.h"
#include "sinter/Dialect/Launch/IR/LaunchDialect.h"
#include "sinter/Dialect/Launch/IR/LaunchOps.h"
#include "sinter/Passes/CompileTarget.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace sinter::testing {

/// The multiprocessors the tests' target has (the kernels' tilings depend on them).
constexpr int kTestSms = 132;

/// "tensor<AxBx...xTYPE>".
inline std::string tensorType(std::initializer_list<int> shape, const char *type = "bf16") {
  std::string t = "tensor<";
  for (int d : shape)
    t += std::to_string(d) + "x";
  return t + type + ">";
}

/// Random finite bf16 bits: magnitudes 2^minExponent .. 2^maxExponent with random signs, and
/// with `withZeros` one value in 16 zero.
inline std::vector<uint16_t> randomBf16(size_t count, unsigned seed, int minExponent = -10,
                                        int maxExponent = 4, bool withZeros = true) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> exponent(127 + minExponent, 127 + maxExponent),
      mantissa(0, 127), coin(0, 15);
  std::vector<uint16_t> bits(count);
  for (uint16_t &b : bits)
    b = withZeros && coin(rng) == 0
            ? 0
            : uint16_t((coin(rng) % 2) << 15 | exponent(rng) << 7 | mantissa(rng));
  return bits;
}

/// The little-endian hex literal of 16-bit values (`dense<"0x...">`).
inline std::string hexOf(const std::vector<uint16_t> &bits) {
  static const char *digits = "0123456789ABCDEF";
  std::string hex = "\"0x";
  for (uint16_t b : bits)
    for (int byte = 0; byte < 2; ++byte) {
      const int v = (b >> (8 * byte)) & 0xFF;
      hex += digits[v >> 4];
      hex += digits[v & 15];
    }
  return hex + "\"";
}

struct Lowered {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// Parses `text` and lowers it for a kTestSms target as the compiler's pipeline does around
/// the lowering: the SwiGLU pairs decided in the graph phase, the handoffs planned after.
inline void lowerToLaunch(Lowered &l, const std::string &text,
                          const std::string &weightDtype = "model") {
  l.context.loadDialect<graph::GraphDialect, launch::LaunchDialect, mlir::func::FuncDialect,
                        mlir::memref::MemRefDialect>();
  l.module = mlir::parseSourceString<mlir::ModuleOp>(text, &l.context);
  ASSERT_TRUE(l.module);
  mlir::PassManager pm(&l.context);
  SinterLowerToLaunchOptions options;
  options.weightDtype = weightDtype;
  CompileTarget target;
  target.smCount = kTestSms;
  setCompileTarget(*l.module, target);
  pm.addPass(createSinterFuseLinearSwiGLU());
  pm.addPass(createSinterLowerToLaunch(options));
  pm.addPass(createLaunchPlanHandoffs());
  ASSERT_TRUE(mlir::succeeded(pm.run(*l.module)));
}

/// Template parameter i of a kernel launch, as the generated code spells it.
inline std::string param(launch::KernelOp kernel, unsigned i) {
  mlir::Attribute p = kernel.getParams()[i];
  if (auto s = mlir::dyn_cast<mlir::StringAttr>(p))
    return s.str();
  return std::to_string(mlir::cast<mlir::IntegerAttr>(p).getInt());
}

/// The buffer a launch passes as kernel argument i (null for an absent one).
inline mlir::Value argument(launch::KernelOp kernel, unsigned i) {
  int64_t slot = kernel.getArgs()[i];
  return slot < 0 ? mlir::Value() : kernel.getBuffers()[slot];
}

/// The weight a buffer is, or null.
inline launch::WeightOp weightOf(mlir::Value buffer) {
  return buffer ? buffer.getDefiningOp<launch::WeightOp>() : launch::WeightOp();
}

} // namespace sinter::testing

#endif
