// Which GEMMs may take the split-TF32 kernels (fp32 at strict precision, one product, n and k
// multiples of 4, one epilogue source) and which candidates context creation times; the
// kernels themselves are checked on the GPU (test/gpu/gemm_split_tf32_test.cu).
#include "gemm_split_tf32.h"

#include <gtest/gtest.h>

namespace {

using sinter::rt::split_tf32_applies;
using sinter::rt::split_tf32_candidates;
using sinter::rt::SplitTf32Choice;

sinter_gemm_desc strict_f32(int64_t m, int64_t n, int64_t k) {
  sinter_gemm_desc g{};
  g.dtype = SINTER_DTYPE_F32;
  g.precision = SINTER_PRECISION_STRICT;
  g.m = m;
  g.n = n;
  g.k = k;
  g.bias.space = SINTER_BUFFER_NONE;
  g.residual.space = SINTER_BUFFER_NONE;
  return g;
}

TEST(SplitTf32Applies, StrictFp32Product) {
  EXPECT_TRUE(split_tf32_applies(strict_f32(4096, 256, 3584)));
  EXPECT_TRUE(split_tf32_applies(strict_f32(4096, 256, 256)));
}

TEST(SplitTf32Applies, LargeProductsOnly) {
  // A tiny model's products stay on fp32 FMA: a split product's error would exceed fp32's
  // own there (families_check's GPT-NeoX f32 at k = 64: ratio 1.72 against PyTorch's).
  EXPECT_FALSE(split_tf32_applies(strict_f32(24, 192, 64)));
  EXPECT_FALSE(split_tf32_applies(strict_f32(4096, 4096, 128))); // k below 256
  EXPECT_FALSE(split_tf32_applies(strict_f32(16, 256, 256)));    // 2^20 multiply-adds
  EXPECT_TRUE(split_tf32_applies(strict_f32(1024, 256, 256)));   // 2^26
}

TEST(SplitTf32Applies, OtherPrecisionsAndTypes) {
  sinter_gemm_desc g = strict_f32(4096, 256, 256);
  g.precision = SINTER_PRECISION_TF32;
  EXPECT_FALSE(split_tf32_applies(g));
  for (int32_t dtype : {SINTER_DTYPE_BF16, SINTER_DTYPE_F16, SINTER_DTYPE_F64}) {
    g = strict_f32(4096, 256, 256);
    g.dtype = dtype;
    EXPECT_FALSE(split_tf32_applies(g)) << dtype;
  }
}

TEST(SplitTf32Applies, RowsOfSixteenBytes) {
  EXPECT_FALSE(split_tf32_applies(strict_f32(4096, 258, 256)));
  EXPECT_FALSE(split_tf32_applies(strict_f32(4096, 256, 1026)));
  EXPECT_TRUE(split_tf32_applies(strict_f32(4095, 256, 256))); // m is free
}

TEST(SplitTf32Applies, OneEpilogueSourceAndOneProduct) {
  sinter_gemm_desc g = strict_f32(4096, 256, 256);
  g.bias.space = SINTER_BUFFER_WEIGHTS;
  EXPECT_TRUE(split_tf32_applies(g));
  g.residual.space = SINTER_BUFFER_ARENA;
  EXPECT_FALSE(split_tf32_applies(g));
  g = strict_f32(4096, 256, 256);
  g.batch = 6;
  EXPECT_FALSE(split_tf32_applies(g));
  g.batch = 1;
  EXPECT_TRUE(split_tf32_applies(g));
}

TEST(SplitTf32Applies, DimensionsWithinInt) {
  EXPECT_FALSE(split_tf32_applies(strict_f32(int64_t(1) << 32, 256, 256)));
  EXPECT_FALSE(split_tf32_applies(strict_f32(0, 256, 256)));
}

TEST(SplitTf32Candidates, KSplitOnlyForDeepProducts) {
  SplitTf32Choice c[16];
  const int shallow = split_tf32_candidates(256, c, 16);
  ASSERT_GT(shallow, 0);
  for (int i = 0; i < shallow; ++i) EXPECT_EQ(c[i].split_k, 1);
  const int deep = split_tf32_candidates(3584, c, 16);
  EXPECT_EQ(deep, 3 * shallow);                    // splits 1, 2 and 4
  EXPECT_EQ(split_tf32_candidates(3584, c, 2), 2); // never past max
}

} // namespace
