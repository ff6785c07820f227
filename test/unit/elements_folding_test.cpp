// Half-precision conversions of constants (sinter-narrow-floats, f16 folding): the bit-level
// fast paths must give exactly what APFloat's round-to-nearest-even conversion gives.
#include "sinter/Dialect/Graph/IR/ElementsFolding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

using namespace mlir;

uint16_t apfloatHalf(float value) {
  llvm::APFloat f(value);
  bool lost;
  f.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return uint16_t(f.bitcastToAPInt().getZExtValue());
}

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Every boundary of the conversion, then random bit patterns of every exponent.
std::vector<float> probeValues() {
  std::vector<float> values = {0.f, -0.f, 1.f, -1.f, 65504.f, 65519.99f, 65520.f, -65520.f,
                               65536.f, 1e9f, INFINITY, -INFINITY, 6.1035156e-05f /* 2^-14 */,
                               5.9604645e-08f /* 2^-24 */, 2.9802322e-08f /* 2^-25 */,
                               2.9802326e-08f, 8.940697e-08f /* 1.5 * 2^-24 */, 1e-30f};
  for (uint32_t exponent = 0; exponent < 256; ++exponent)
    for (uint32_t mantissa : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x2000u, 0x3000u, 0x7fffffu})
      for (uint32_t sign : {0u, 0x80000000u})
        values.push_back(fromBits(sign | (exponent << 23) | mantissa));
  std::mt19937 rng(7);
  for (int i = 0; i < 1 << 20; ++i)
    values.push_back(fromBits(uint32_t(rng())));
  return values;
}

TEST(ElementsFolding, RoundToF16MatchesAPFloat) {
  for (float value : probeValues()) {
    const uint16_t fast = sinter::graph::roundToF16Bits(value), exact = apfloatHalf(value);
    if (std::isnan(value)) {
      EXPECT_EQ(fast & 0x7c00u, 0x7c00u);
      EXPECT_NE(fast & 0x3ffu, 0u);
      continue;
    }
    ASSERT_EQ(fast, exact) << "value " << value;
  }
}

TEST(ElementsFolding, WidenF16IsExact) {
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    llvm::APFloat half(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
    const float fast = sinter::graph::widenF16Bits(uint16_t(bits));
    if (half.isNaN()) {
      EXPECT_TRUE(std::isnan(fast)) << bits;
      continue;
    }
    ASSERT_EQ(fast, half.convertToFloat()) << "bits " << bits;
  }
}

// The constant round trip through an f16 DenseElementsAttr uses both fast paths.
TEST(ElementsFolding, F16ConstantsRoundTrip) {
  MLIRContext context;
  Builder b(&context);
  const std::vector<float> values = {0.1f, -2.5f, 65504.f, 1e-7f, 3.14159f, -0.f};
  auto type = RankedTensorType::get({int64_t(values.size())}, b.getF16Type());
  DenseElementsAttr attr = sinter::graph::fromFloat32(type, values);
  const std::vector<float> back = sinter::graph::readFloat32(attr);
  ASSERT_EQ(back.size(), values.size());
  int i = 0;
  for (const llvm::APFloat &v : attr.getValues<llvm::APFloat>()) {
    EXPECT_EQ(uint16_t(v.bitcastToAPInt().getZExtValue()), apfloatHalf(values[i]));
    EXPECT_EQ(back[i], v.convertToFloat());
    ++i;
  }
}

} // namespace
