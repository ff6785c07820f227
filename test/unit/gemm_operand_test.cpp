// The bytes a GEMM operand spans, which size the stand-ins for I/O operands while the context
// times cuBLASLt algorithms: every batch of a batched product (compute-sanitizer found the timing
// calls of batched products over I/O tensors writing past stand-ins sized for one matrix).
#include "gemm.h"

#include <gtest/gtest.h>

namespace {

sinter_gemm_desc batched(int64_t m, int64_t n, int64_t k, int64_t batch) {
  sinter_gemm_desc g{};
  g.dtype = SINTER_DTYPE_F32;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  return g;
}

TEST(GemmOperandBytes, OneProduct) {
  const sinter_gemm_desc g = batched(4, 6, 8, 1);
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'a'), 4u * 8 * 4);
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'b'), 8u * 6 * 4);
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'c'), 4u * 6 * 4);
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'r'), 4u * 6 * 4);
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'x'), 6u * 4);
}

TEST(GemmOperandBytes, EveryBatch) {
  // q @ k^T of ONNX's test_attention_4d: 2 x 3 heads of [4, 8] @ [8, 6].
  const sinter_gemm_desc g = batched(4, 6, 8, 6);
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'a'), 6u * 4 * 8 * 4);
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'b'), 6u * 8 * 6 * 4);
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'c'), 6u * 4 * 6 * 4);
}

TEST(GemmOperandBytes, BroadcastOperandIsOneMatrix) {
  sinter_gemm_desc g = batched(4, 6, 8, 6);
  g.dtype = SINTER_DTYPE_BF16;
  g.broadcast_b = 1;
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'a'), 6u * 4 * 8 * 2);
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'b'), 8u * 6 * 2);
  g.broadcast_b = 0;
  g.broadcast_a = 1;
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'a'), 4u * 8 * 2);
  EXPECT_EQ(sinter::rt::gemm_operand_bytes(g, 'b'), 6u * 8 * 6 * 2);
}

} // namespace
