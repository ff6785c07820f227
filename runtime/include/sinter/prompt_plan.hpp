// Which entry runs which prompt tokens when a generation fills the KV cache (header-only,
// C++17, no CUDA): the plan sinter::Generator and the Python module's Generator both follow.
#pragma once

#include <cstdint>
#include <vector>

namespace sinter {

struct PromptRun {
  enum Entry { kPrefill, kChunk, kDecode };
  Entry entry;
  int64_t start; // the first cache slot it writes: it takes prompt[start, start + count)
  int64_t count;
};

// The runs that put a prompt of `prompt_length` tokens into the cache, in order:
//  - the prefill entry (its `prefill_length` tokens at slots 0 .. S-1) when the prompt has at
//    least S tokens;
//  - chunk runs of `chunk_length` tokens for the rest; when the rest is not a multiple of C, the
//    last chunk ends at the prompt's end and so starts inside the run before it: it writes
//    those slots again from the same tokens at the same positions (the same keys and values),
//    which costs less than one decode run a token for the tail and gives the last position's
//    next_token;
//  - decode runs, one token each, for a prompt shorter than C after the prefill's tokens (all of
//    it without a chunk entry).
// A length of 0 means the library has no such entry.
inline std::vector<PromptRun> plan_prompt(int64_t prompt_length, int64_t prefill_length,
                                          int64_t chunk_length) {
  std::vector<PromptRun> runs;
  int64_t fed = 0;
  if (prefill_length > 0 && prompt_length >= prefill_length) {
    runs.push_back({PromptRun::kPrefill, 0, prefill_length});
    fed = prefill_length;
  }
  if (chunk_length > 0 && prompt_length >= chunk_length) {
    for (; prompt_length - fed >= chunk_length; fed += chunk_length)
      runs.push_back({PromptRun::kChunk, fed, chunk_length});
    if (fed < prompt_length) {
      runs.push_back({PromptRun::kChunk, prompt_length - chunk_length, chunk_length});
      fed = prompt_length;
    }
  }
  for (; fed < prompt_length; ++fed) runs.push_back({PromptRun::kDecode, fed, 1});
  return runs;
}

} // namespace sinter
