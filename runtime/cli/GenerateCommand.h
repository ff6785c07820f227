// `sinter generate`: token generation with a library compiled with --sample.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

struct SinterGenerateOptions {
  std::string prompt_ids;  // "1,2,3"
  std::string prompt_file; // token ids separated by commas or white space
  int64_t max_new_tokens = 32;
  float temperature = 0.f; // 0: greedy
  int top_k = 0;           // 0: off
  float top_p = 1.f;       // 1: off
  float repetition_penalty = 1.f;
  uint64_t seed = 0;
  std::string stop; // "2,3": stop token ids
  std::string mode = "graph";
  std::string weights;
  bool allow_new_values = false;
};

// Checks the options that need no model or GPU: the prompt (exactly one of prompt_ids and
// prompt_file, parsed into `prompt`), the stop ids, and the sampling values (the ranges
// sinter_context_set_sampling accepts). Empty on success, else the message.
std::string sinterGenerateCheck(const SinterGenerateOptions &options, std::vector<int64_t> &prompt,
                                std::vector<int64_t> &stop);

// Prints each new token id as it comes, then `tokens: a,b,c` and the timing line, on `out`.
// Returns the process exit code (0, or 1 with the message on `err`).
int sinterGenerateCommand(const std::string &soPath, const SinterGenerateOptions &options,
                          std::ostream &out, std::ostream &err);
