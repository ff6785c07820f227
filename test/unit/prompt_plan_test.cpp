// sinter::plan_prompt: which entry writes which prompt slots (prefill, chunks, decode steps).
#include "sinter/prompt_plan.hpp"

#include <gtest/gtest.h>

#include <set>

using sinter::plan_prompt;
using sinter::PromptRun;

namespace {

std::vector<std::tuple<PromptRun::Entry, int64_t, int64_t>> runs_of(int64_t n, int64_t prefill,
                                                                    int64_t chunk) {
  std::vector<std::tuple<PromptRun::Entry, int64_t, int64_t>> out;
  for (const PromptRun &r : plan_prompt(n, prefill, chunk)) out.emplace_back(r.entry, r.start, r.count);
  return out;
}

constexpr auto kPrefill = PromptRun::kPrefill, kChunk = PromptRun::kChunk,
               kDecode = PromptRun::kDecode;

TEST(PromptPlan, PrefillThenDecodeWithoutChunks) {
  using V = decltype(runs_of(0, 0, 0));
  EXPECT_EQ(runs_of(5, 4, 0), (V{{kPrefill, 0, 4}, {kDecode, 4, 1}}));
  EXPECT_EQ(runs_of(2, 4, 0), (V{{kDecode, 0, 1}, {kDecode, 1, 1}}));
  EXPECT_EQ(runs_of(4, 4, 0), (V{{kPrefill, 0, 4}}));
}

TEST(PromptPlan, LastChunkEndsAtThePromptsEnd) {
  using V = decltype(runs_of(0, 0, 0));
  EXPECT_EQ(runs_of(11, 4, 3),
            (V{{kPrefill, 0, 4}, {kChunk, 4, 3}, {kChunk, 7, 3}, {kChunk, 8, 3}}));
  EXPECT_EQ(runs_of(10, 4, 3), (V{{kPrefill, 0, 4}, {kChunk, 4, 3}, {kChunk, 7, 3}}));
  EXPECT_EQ(runs_of(5, 4, 3), (V{{kPrefill, 0, 4}, {kChunk, 2, 3}}));
  EXPECT_EQ(runs_of(3, 4, 3), (V{{kChunk, 0, 3}}));
  EXPECT_EQ(runs_of(2, 4, 3), (V{{kDecode, 0, 1}, {kDecode, 1, 1}}));
}

// Every slot written, none before the slots under it were, the last run ending at the prompt's
// last token (its next_token is the first new token).
TEST(PromptPlan, CoversEveryPromptInOrder) {
  for (int64_t n = 1; n < 70; ++n)
    for (int64_t prefill : {0, 1, 4, 9, 64})
      for (int64_t chunk : {0, 2, 3, 8, 32}) {
        std::set<int64_t> written;
        const std::vector<PromptRun> runs = plan_prompt(n, prefill, chunk);
        ASSERT_FALSE(runs.empty());
        for (const PromptRun &r : runs) {
          EXPECT_LE(r.start, int64_t(written.size())) << n << " " << prefill << " " << chunk;
          EXPECT_LE(r.start + r.count, n);
          for (int64_t s = r.start; s < r.start + r.count; ++s) written.insert(s);
        }
        EXPECT_EQ(int64_t(written.size()), n);
        EXPECT_EQ(runs.back().start + runs.back().count, n);
        if (chunk > 0 && n >= chunk) // the last chunk takes any tail: no decode runs
          for (const PromptRun &r : runs) EXPECT_NE(r.entry, kDecode) << n;
      }
}

} // namespace
