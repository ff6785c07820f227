// `sinter generate`: dlopens a --sample library and generates through sinter::Generator
// (sinter/generator.hpp), the same path a C++ application takes.
#include "GenerateCommand.h"

#include "sinter/generator.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace {

// Token ids separated by commas and/or white space; `what` names the source in errors.
std::string parseIds(const std::string &text, const std::string &what, std::vector<int64_t> &ids) {
  std::string normalized = text;
  for (char &c : normalized)
    if (c == ',') c = ' ';
  std::istringstream in(normalized);
  std::string item;
  while (in >> item) {
    char *end = nullptr;
    errno = 0;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (!end || *end || errno == ERANGE || v < 0)
      return what + ": '" + item + "' is not a token id (a non-negative integer)";
    ids.push_back(v);
  }
  return "";
}

} // namespace

std::string sinterGenerateCheck(const SinterGenerateOptions &o, std::vector<int64_t> &prompt,
                                std::vector<int64_t> &stop) {
  if (o.prompt_ids.empty() == o.prompt_file.empty())
    return "give the prompt with exactly one of --prompt-ids and --prompt-file";
  std::string error;
  if (!o.prompt_file.empty()) {
    std::ifstream in(o.prompt_file);
    if (!in)
      return "cannot read --prompt-file '" + o.prompt_file + "'";
    std::stringstream text;
    text << in.rdbuf();
    error = parseIds(text.str(), "--prompt-file '" + o.prompt_file + "'", prompt);
  } else {
    error = parseIds(o.prompt_ids, "--prompt-ids", prompt);
  }
  if (!error.empty())
    return error;
  if (prompt.empty())
    return "the prompt has no token ids";
  error = parseIds(o.stop, "--stop", stop);
  if (!error.empty())
    return error;
  if (o.max_new_tokens < 1)
    return "--max-new-tokens must be >= 1, got " + std::to_string(o.max_new_tokens);
  if (!std::isfinite(o.temperature) || o.temperature < 0.f)
    return "--temperature must be finite and >= 0 (0: greedy)";
  if (o.top_k < 0)
    return "--top-k must be >= 0 (0: off), got " + std::to_string(o.top_k);
  if (!(o.top_p > 0.f && o.top_p <= 1.f))
    return "--top-p must be in (0, 1] (1: off)";
  if (!std::isfinite(o.repetition_penalty) || o.repetition_penalty <= 0.f)
    return "--repetition-penalty must be finite and > 0 (1: off)";
  if (o.mode != "graph" && o.mode != "direct")
    return "--mode must be graph or direct, got '" + o.mode + "'";
  return "";
}

int sinterGenerateCommand(const std::string &soPath, const SinterGenerateOptions &o,
                          std::ostream &out, std::ostream &err) {
  std::vector<int64_t> prompt, stop;
  if (std::string error = sinterGenerateCheck(o, prompt, stop); !error.empty()) {
    err << "sinter: error: " << error << "\n";
    return 1;
  }
  try {
    sinter::Library lib(soPath);
    sinter::Model model = o.weights.empty()
                              ? sinter::Model::load(lib.api())
                              : sinter::Model::load(lib.api(), o.weights, o.allow_new_values);
    sinter::Generator generator(model, o.mode == "graph" ? SINTER_MODE_GRAPH : SINTER_MODE_DIRECT);
    sinter::GenerateOptions options;
    options.max_new_tokens = o.max_new_tokens;
    options.stop_tokens = stop;
    options.sampling.temperature = o.temperature;
    options.sampling.top_k = o.top_k;
    options.sampling.top_p = o.top_p;
    options.sampling.repetition_penalty = o.repetition_penalty;
    options.sampling.seed = o.seed;
    const std::vector<int64_t> tokens = generator.generate(prompt, options, [&](int64_t token) {
      out << token << ' ' << std::flush;
      return true;
    });
    out << "\ntokens:";
    for (size_t i = 0; i < tokens.size(); ++i)
      out << (i ? "," : " ") << tokens[i];
    const sinter::GenerateStats &s = generator.last_stats();
    out << "\n"
        << s.new_tokens << " new tokens after a prompt of " << s.prompt_tokens << " (";
    if (s.prefill_tokens) out << s.prefill_tokens << " through prefill, ";
    if (s.chunk_runs)
      out << s.chunk_runs << " chunk run" << (s.chunk_runs > 1 ? "s" : "") << " of "
          << generator.chunk_length() << ", ";
    out << std::fixed << std::setprecision(3) << s.prompt_ms << " ms); decode "
        << std::setprecision(1) << s.tokens_per_second() << " tokens/s\n";
    return 0;
  } catch (const sinter::Error &e) {
    err << "sinter: error: " << e.what() << "\n";
    return 1;
  }
}
