// Conversions of constants (sinter-narrow-floats, f16 folding, the folders' host values): the
// bit-level fast paths must give exactly what APFloat's round-to-nearest-even conversion and
// APInt's truncation give.
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

// makeElements rounds host doubles to bf16 and f16 through a round-to-odd float; the result
// must be APFloat's direct rounding of the double, including doubles between two floats that
// sit exactly on or next to a 16-bit halfway point.
TEST(ElementsFolding, MakeElementsRoundsDoublesLikeAPFloat) {
  MLIRContext context;
  Builder b(&context);
  std::vector<double> values = {0.0, -0.0, 1.0, 65504.0, 65520.0, 3.3961e38, 3.4e38, 1e300,
                                -1e300, 1e-45, 1e-300, INFINITY, -INFINITY};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1 << 16; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, 8);
    if (std::isnan(d))
      continue;
    values.push_back(d);
    // bf16 and f16 halfway points (floats whose bits below the 16-bit result are exactly one
    // half) nudged by a fraction of a float ulp: rounding through a round-to-nearest float
    // would land on the halfway point and then round to even, the wrong way half the time.
    for (uint32_t halfway : {0x8000u, 0x1000u}) {
      uint32_t fbits = (uint32_t(bits >> 32) & ~(2 * halfway - 1)) | halfway;
      float f;
      std::memcpy(&f, &fbits, 4);
      if (std::isfinite(f) && f != 0.f) {
        values.push_back(double(f) * (1.0 + 0x1p-30));
        values.push_back(double(f) * (1.0 - 0x1p-30));
      }
    }
  }
  for (auto [type, semantics] :
       {std::pair<Type, const llvm::fltSemantics *>{b.getBF16Type(), &llvm::APFloat::BFloat()},
        {b.getF16Type(), &llvm::APFloat::IEEEhalf()},
        {b.getF32Type(), &llvm::APFloat::IEEEsingle()}}) {
    sinter::graph::HostValues host;
    host.isFloat = true;
    host.floats = values;
    auto tensor = RankedTensorType::get({int64_t(values.size())}, type);
    DenseElementsAttr attr = sinter::graph::makeElements(tensor, host);
    size_t i = 0;
    for (const llvm::APFloat &got : attr.getValues<llvm::APFloat>()) {
      llvm::APFloat want(values[i]);
      bool lost;
      want.convert(*semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
      ASSERT_EQ(got.bitcastToAPInt(), want.bitcastToAPInt()) << "value " << values[i];
      ++i;
    }
  }
}

// Integers and booleans round-trip through readValues and makeElements at every width
// (truncated to the width, read back sign-extended), splats included.
TEST(ElementsFolding, IntegerValuesRoundTrip) {
  MLIRContext context;
  Builder b(&context);
  sinter::graph::HostValues host;
  host.ints = {0, 1, -1, 127, 128, -129, 40000, -70000, (int64_t)1 << 40, INT64_MIN};
  for (unsigned width : {1u, 8u, 16u, 32u, 64u}) {
    auto tensor = RankedTensorType::get({int64_t(host.ints.size())}, b.getIntegerType(width));
    auto back = sinter::graph::readValues(sinter::graph::makeElements(tensor, host));
    ASSERT_TRUE(back.has_value());
    for (size_t i = 0; i < host.ints.size(); ++i) {
      int64_t want = width == 1 ? int64_t(host.ints[i] != 0)
                                : llvm::APInt(width, host.ints[i], true).getSExtValue();
      EXPECT_EQ(back->ints[i], want) << "width " << width << " value " << host.ints[i];
    }
  }
  sinter::graph::HostValues splat;
  splat.ints.assign(6, -3);
  auto tensor = RankedTensorType::get({2, 3}, b.getIntegerType(32));
  auto back = sinter::graph::readValues(sinter::graph::makeElements(tensor, splat));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->ints, splat.ints);
}

// BroadcastWalk visits the source indices broadcastSourceIndex computes, in output order.
TEST(ElementsFolding, BroadcastWalkMatchesBroadcastSourceIndex) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{2, 3, 4}, {3, 4}}, {{2, 3, 4}, {1, 4}}, {{2, 3, 4}, {3, 1}}, {{2, 3, 4}, {2, 1, 4}},
      {{5}, {}},           {{}, {}},            {{1, 7, 1, 3}, {7, 1, 1}}};
  for (const auto &[out, src] : cases) {
    int64_t count = 1;
    for (int64_t d : out)
      count *= d;
    sinter::graph::BroadcastWalk walk(out, src);
    for (int64_t i = 0; i < count; ++i, walk.next())
      ASSERT_EQ(walk.index(), sinter::graph::broadcastSourceIndex(i, out, src)) << i;
  }
}

} // namespace
