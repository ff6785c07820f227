// launch_params.h's configuration functions under target limits other than the H200's: every
// choice stays within the limits it is given, and the sm_90 defaults are what the H200's target
// description says (compiler/targets/h200.yaml), so kernels built without the generated
// source's definitions (the GPU tests) agree with the compiler.
#include "sinter/Compiler/Target.h"

#include "launch_params.h"

#include <gtest/gtest.h>

#include <string>

namespace kn = sinter::kernels;

namespace {

constexpr kn::SharedMemoryLimits kSmall{49152, 65536};

TEST(TargetLimits, DefaultsAreTheH200Description) {
  sinter::Target h200;
  std::string error;
  ASSERT_TRUE(sinter::loadTarget(SINTER_TARGETS_DIR, "h200", h200, error)) << error;
  EXPECT_EQ(int64_t(kn::kTargetSharedMemory.per_block), h200.sharedMemoryPerBlock);
  EXPECT_EQ(int64_t(kn::kTargetSharedMemory.per_sm), h200.sharedMemoryPerSm);
}

TEST(TargetLimits, LinearTilingStaysWithinTheLimits) {
  for (int m : {1, 6, 16})
    for (int k : {64, 512, 1024, 2048, 4096, 8192})
      for (kn::LinearPrologue pro : {kn::LinearPrologue::NONE, kn::LinearPrologue::RMS_NORM})
        for (kn::SharedMemoryLimits limits : {kn::kTargetSharedMemory, kSmall}) {
          SCOPED_TRACE("m " + std::to_string(m) + " k " + std::to_string(k) + " per block " +
                       std::to_string(limits.per_block));
          if (!kn::linear_small_m_supported(m, 2048, k, pro, kn::LinearEpilogue::NONE, 0, 0, 2,
                                            132, kn::LinearWeights::BF16, 0, limits))
            continue;
          const kn::LinearTiling t = kn::linear_small_m_tiling(
              m, 2048, k, pro, 132, 2, kn::LinearWeights::BF16, limits);
          EXPECT_LE(t.shared_bytes, limits.per_block);
          EXPECT_LE(uint64_t(t.blocks_per_sm) * (t.shared_bytes + kn::kReservedSharedPerBlock),
                    uint64_t(limits.per_sm));
        }
  // 16 rows of 2048 bf16 (66 KiB of x) stream on the H200, not within 48 KiB a block.
  EXPECT_TRUE(kn::linear_small_m_supported(16, 2048, 2048, kn::LinearPrologue::NONE,
                                           kn::LinearEpilogue::NONE, 0, 0, 2, 132));
  EXPECT_FALSE(kn::linear_small_m_supported(16, 2048, 2048, kn::LinearPrologue::NONE,
                                            kn::LinearEpilogue::NONE, 0, 0, 2, 132,
                                            kn::LinearWeights::BF16, 0, kSmall));
}

TEST(TargetLimits, AttentionKernelsFollowTheLimits) {
  // An fp32 head of 256 keys: the short-prompt kernel on the H200, none within 48 KiB.
  EXPECT_TRUE(kn::attention_prefill_supported(256, 8, 8, 64, 0, 512, 1024, 1536, 4));
  EXPECT_FALSE(kn::attention_prefill_supported(256, 8, 8, 64, 0, 512, 1024, 1536, 4, kSmall));
  // flash_attention at head size 256 needs more than 48 KiB of tiles.
  EXPECT_TRUE(kn::flash_attention_supported(8192, 8, 8, 256, 0, 2048, 4096, 6144));
  EXPECT_FALSE(kn::flash_attention_supported(8192, 8, 8, 256, 0, 2048, 4096, 6144, 2, 1, kSmall));
}

TEST(TargetLimits, DecodePrefetchFitsHalfTheL2) {
  constexpr uint64_t kL2 = 62914560; // the H200's
  // Llama 3.2 1B (8 kv heads of 64) at a 128-slot cache: every row of the one split.
  EXPECT_EQ(kn::attention_decode_prefetch_rows(8, 64, 128, 128, 1, kL2), 128);
  for (int maxLen : {1024, 8192, 32768, 131072}) {
    const int split = kn::attention_decode_split(maxLen, 32, 8, 64, 132);
    const int rows = kn::attention_decode_prefetch_rows(8, 64, maxLen, split, 1, kL2);
    const uint64_t hinted = uint64_t(rows) * 8 * kn::attention_decode_num_splits(maxLen, split) *
                            2 * 64 * 2;
    SCOPED_TRACE("max_len " + std::to_string(maxLen));
    EXPECT_LE(rows, split);
    EXPECT_LE(hinted, kL2 / 2);
    // A cache that fits is hinted whole; one that does not, up to half the L2.
    if (uint64_t(maxLen) * 8 * 2 * 64 * 2 <= kL2 / 2)
      EXPECT_EQ(rows, split);
    else
      EXPECT_GT(hinted, kL2 / 4);
  }
}

TEST(TargetLimits, DecodeSplitsCoverOneRoundTrip) {
  // The tensor-core path covers 128 keys a round: Llama 3.2 1B keeps 128-key splits.
  EXPECT_EQ(kn::attention_decode_split(1024, 32, 8, 64, 132), 128);
  EXPECT_EQ(kn::attention_decode_split(128, 32, 8, 64, 132), 128);
  // The scalar path at D 256 (Gemma 2: 4 kv heads, 2 query heads each) covers 32 keys a round
  // trip: 32-key splits, 128 blocks at 1024 slots instead of 32 blocks of four round trips.
  EXPECT_FALSE(kn::attention_decode_tensor_cores(256, 2));
  EXPECT_EQ(kn::attention_decode_round_keys(256, 2), 32);
  EXPECT_EQ(kn::attention_decode_split(1024, 8, 4, 256, 132), 32);
  // A short cache stays one split; a long one stays within the split limit.
  EXPECT_EQ(kn::attention_decode_split(16, 8, 4, 256, 132), 16);
  EXPECT_LE(kn::attention_decode_num_splits(131072, kn::attention_decode_split(131072, 8, 4, 256, 132)),
            kn::kAttentionDecodeMaxSplits);
}

TEST(TargetLimits, DecodeSplitsMergeInAClusterWithinOneWave) {
  // One split: no merge at all; 2..8 splits fit a cluster; the compiler takes it while the
  // grid (kv heads x splits x batch) fits in one wave of the SMs.
  EXPECT_FALSE(kn::attention_decode_cluster_fits(128, 128));
  EXPECT_TRUE(kn::attention_decode_cluster_fits(256, 128));
  EXPECT_TRUE(kn::attention_decode_cluster_fits(1024, 128));
  EXPECT_FALSE(kn::attention_decode_cluster_fits(1025, 128));
  EXPECT_TRUE(kn::attention_decode_cluster_merge(8, 1024, 128, 1, 132));   // Llama 3.2 1B
  EXPECT_TRUE(kn::attention_decode_cluster_merge(16, 1024, 128, 1, 132));  // OLMo 2: 128 blocks
  EXPECT_FALSE(kn::attention_decode_cluster_merge(8, 1024, 128, 8, 132));  // batch 8: 512
  EXPECT_FALSE(kn::attention_decode_cluster_merge(32, 1024, 256, 2, 132)); // Phi-2 batch 2
  EXPECT_FALSE(kn::attention_decode_cluster_merge(4, 1024, 32, 1, 132));   // Gemma 2: 32 splits
  EXPECT_EQ(kn::attention_decode_partials_floats(8, 4, 256, 1024, 32, 2), 2 * 4 * 32 * 2 * 258);
  EXPECT_EQ(kn::attention_decode_counter_words(4, 1024, 32, 2), 8);
  EXPECT_EQ(kn::attention_decode_partials_floats(8, 4, 256, 32, 32, 2), 0);
}

TEST(TargetLimits, DecodeQkNormStagingKeepsTensorCoresWhereItFits) {
  // The staged q heads and key (QK_NORM) count against the 48 KiB of static shared memory:
  // Qwen3 (D 128, 2 q heads per kv head) keeps the tensor-core path and its 128-key splits;
  // D 128 with 6 q heads per kv head (Qwen2.5's grouping) would not fit beside them.
  EXPECT_TRUE(kn::attention_decode_tensor_cores(128, 2, true));
  EXPECT_EQ(kn::attention_decode_split(1024, 16, 8, 128, 132, true), 128);
  EXPECT_TRUE(kn::attention_decode_tensor_cores(128, 6));
  EXPECT_FALSE(kn::attention_decode_tensor_cores(128, 6, true));
  EXPECT_EQ(kn::attention_decode_round_keys(128, 6, true), 128 / 16 * 2);
}

} // namespace
