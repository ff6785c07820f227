// generate: text generation (token ids in, token ids out) with a language model compiled to one
// .so with "prefill" and "decode" entries, its KV cache in the context, and the sampler in the
// program (sinter ABI 1.4):
//
//   sinter compile --sample prefill=llama_prefill.onnx decode=llama_decode.onnx -o llama.so
//   generate llama.so [--weights FILE [--allow-new-values]] [--prompt 1,2,3] [--tokens N]
//            [--temperature T] [--top-k K] [--top-p P] [--repetition-penalty R] [--seed S]
//            [--stop 2,3] [--mode graph|direct]
//
// Everything goes through sinter::Generator (sinter/generator.hpp): each decode run reads the
// token the previous run's sampler wrote on the device, so the host only enqueues; tokens are
// printed as they arrive. The generation runs twice with the same seed (the first warms up:
// graph mode captures its graphs) and must give the same tokens.
#include "sinter/generator.hpp"

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace {

[[noreturn]] void usage(const char *argv0) {
  std::cerr << "usage: " << argv0
            << " model.so [--weights file.safetensors [--allow-new-values]] [--prompt 1,2,3]"
               " [--tokens N] [--temperature T] [--top-k K] [--top-p P]"
               " [--repetition-penalty R] [--seed S] [--stop 2,3] [--mode graph|direct]\n";
  std::exit(2);
}

std::vector<int64_t> parse_ids(const std::string &s, const char *what) {
  std::vector<int64_t> ids;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    char *end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (!end || *end || v < 0)
      throw std::runtime_error(std::string(what) + ": '" + item + "' is not a token id");
    ids.push_back(v);
  }
  return ids;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) usage(argv[0]);
  std::string so = argv[1], weights, mode = "graph", prompt_arg = "1,2,3,4,5,6", stop_arg;
  bool allow_new_values = false;
  sinter::GenerateOptions options;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--weights" && has_value) weights = argv[++i];
    else if (a == "--allow-new-values") allow_new_values = true;
    else if (a == "--prompt" && has_value) prompt_arg = argv[++i];
    else if (a == "--tokens" && has_value) options.max_new_tokens = std::atol(argv[++i]);
    else if (a == "--temperature" && has_value) options.sampling.temperature = std::strtof(argv[++i], nullptr);
    else if (a == "--top-k" && has_value) options.sampling.top_k = std::atoi(argv[++i]);
    else if (a == "--top-p" && has_value) options.sampling.top_p = std::strtof(argv[++i], nullptr);
    else if (a == "--repetition-penalty" && has_value) options.sampling.repetition_penalty = std::strtof(argv[++i], nullptr);
    else if (a == "--seed" && has_value) options.sampling.seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--stop" && has_value) stop_arg = argv[++i];
    else if (a == "--mode" && has_value) mode = argv[++i];
    else usage(argv[0]);
  }
  if (mode != "direct" && mode != "graph") usage(argv[0]);

  try {
    const std::vector<int64_t> prompt = parse_ids(prompt_arg, "--prompt");
    options.stop_tokens = parse_ids(stop_arg, "--stop");
    sinter::Library lib(so);
    sinter::Model model = weights.empty() ? sinter::Model::load(lib.api())
                                          : sinter::Model::load(lib.api(), weights, allow_new_values);
    sinter::Generator generator(model, mode == "graph" ? SINTER_MODE_GRAPH : SINTER_MODE_DIRECT);
    std::cout << "library: " << so << "\n  " << lib.build_info() << "\n  prefill length "
              << generator.prefill_length() << ", chunk length " << generator.chunk_length()
              << ", cache length " << generator.cache_length()
              << ", mode " << mode << "\n";
    const std::vector<int64_t> warm = generator.generate(prompt, options);
    std::cout << "tokens:";
    const std::vector<int64_t> tokens = generator.generate(prompt, options, [](int64_t token) {
      std::cout << " " << token << std::flush;
      return true;
    });
    const sinter::GenerateStats &s = generator.last_stats();
    std::cout << "\nrepeat run identical: " << (warm == tokens ? "yes" : "NO") << "\n"
              << s.new_tokens << " tokens after a " << s.prompt_tokens << "-token prompt ("
              << s.prompt_ms << " ms to the first); decode " << s.tokens_per_second()
              << " tokens/s\n";
    return warm == tokens ? 0 : 1;
  } catch (const std::exception &ex) {
    std::cerr << "error: " << ex.what() << "\n";
    return 1;
  }
}
