// generate: greedy text generation with a language model compiled to one .so with a "prefill"
// and a "decode" entry and its KV cache held in the context (sinter ABI 1.2):
//
//   sinter compile prefill=llama_prefill.onnx decode=llama_decode.onnx -o llama.so
//   generate llama.so [--weights FILE [--allow-new-values]] [--prompt 1,2,3 | --prompt-len N]
//            [--tokens N] [--mode graph|direct] [--seed S]
//
// Everything goes through sinter.hpp (sinter::Library, Model::find_entry, Context::run_entry and
// Context::reset_state). Resets the context's state, runs "prefill" on the prompt, then decodes --tokens - 1 more tokens
// one at a time. After every run a small kernel (generate_kernels.cu) takes the argmax of the
// last logits row, writes it straight into the decode entry's input_ids device buffer and
// advances its cache_position buffer on the device: the host only enqueues, and the generated
// ids are copied back once at the end. The generation runs twice (the first warms up: graph mode
// captures one CUDA graph per entry) and the second is timed with CUDA events.
//
// Prefill has a fixed prompt length (the entry's input_ids shape); decode at cache_position p
// writes cache slot p, so prompt length + tokens - 1 must not exceed the cache length the model
// was exported with (export_llama.py --kv-cache): checked against the past_key_* state's shape.
#include "example_util.h"
#include "generate_kernels.h"

#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

namespace {

[[noreturn]] void usage(const char *argv0) {
  std::cerr << "usage: " << argv0
            << " model.so [--weights file.safetensors [--allow-new-values]]"
               " [--prompt 1,2,3 | --prompt-len N] [--tokens N] [--mode graph|direct] [--seed S]\n";
  std::exit(2);
}

struct Entry {
  uint32_t index = 0;
  std::vector<sinter_tensor_desc> inputs, outputs;
};

Entry describe_entry(const sinter::Model &model, const char *name) {
  Entry out;
  out.index = model.find_entry(name);  // throws, listing the entries, when there is none
  for (uint32_t i = 0; i < model.entry_num_inputs(out.index); ++i)
    out.inputs.push_back(model.entry_input(out.index, i));
  for (uint32_t i = 0; i < model.entry_num_outputs(out.index); ++i)
    out.outputs.push_back(model.entry_output(out.index, i));
  return out;
}

int find_io(const std::vector<sinter_tensor_desc> &io, const std::string &name) {
  for (size_t i = 0; i < io.size(); ++i)
    if (name == io[i].name) return int(i);
  return -1;
}

bool is_i64(const sinter_tensor_desc &d) { return d.dtype.code == kDLInt && d.dtype.bits == 64; }

int64_t numel(const sinter_tensor_desc &d) {
  int64_t n = 1;
  for (int i = 0; i < d.ndim; ++i) n *= d.shape[i];
  return n;
}

LogitsType logits_type(const sinter_tensor_desc &d) {
  if (d.dtype.code == kDLFloat && d.dtype.bits == 32) return LogitsType::f32;
  if (d.dtype.code == kDLFloat && d.dtype.bits == 16) return LogitsType::f16;
  if (d.dtype.code == kDLBfloat && d.dtype.bits == 16) return LogitsType::bf16;
  throw std::runtime_error("logits output " + example::describe(d) + ": need f32, f16 or bf16");
}

std::vector<int64_t> parse_ids(const std::string &s) {
  std::vector<int64_t> ids;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    char *end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (!end || *end) throw std::runtime_error("--prompt: '" + item + "' is not a token id");
    ids.push_back(v);
  }
  return ids;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) usage(argv[0]);
  std::string so = argv[1], weights, mode = "graph", prompt_arg;
  bool allow_new_values = false;
  long prompt_len = -1, tokens = 32;
  unsigned long long seed = 1;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--weights" && i + 1 < argc) weights = argv[++i];
    else if (a == "--allow-new-values") allow_new_values = true;
    else if (a == "--prompt" && i + 1 < argc) prompt_arg = argv[++i];
    else if (a == "--prompt-len" && i + 1 < argc) prompt_len = std::atol(argv[++i]);
    else if (a == "--tokens" && i + 1 < argc) tokens = std::atol(argv[++i]);
    else if (a == "--mode" && i + 1 < argc) mode = argv[++i];
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else usage(argv[0]);
  }
  if ((mode != "direct" && mode != "graph") || tokens < 1 || (!prompt_arg.empty() && prompt_len >= 0))
    usage(argv[0]);

  try {
    sinter::Library lib(so);
    const sinter::Api &api = lib.api();
    if (!api.run_entry || !api.context_reset_state)
      throw sinter::Error(SINTER_ABI_MISMATCH, "'" + so + "' has sinter ABI " +
                                                   std::to_string(lib.abi_version() >> 16) + "." +
                                                   std::to_string(lib.abi_version() & 0xffff) +
                                                   ": generate needs entry points and state (1.2)");
    sinter::Model model = weights.empty() ? sinter::Model::load(api)
                                          : sinter::Model::load(api, weights, allow_new_values);
    std::cout << "library: " << so << "\n  " << lib.build_info() << "\n  entries:";
    for (uint32_t i = 0; i < model.num_entries(); ++i) {
      std::cout << " " << model.entry_name(i);
      if (api.model_entry_num_launches)
        std::cout << " (" << api.model_entry_num_launches(model.get(), i) << " launches)";
    }
    std::cout << "\n  state: " << model.state_bytes() << " bytes per context\n";

    const Entry prefill = describe_entry(model, "prefill");
    const Entry decode = describe_entry(model, "decode");
    const int p_ids = find_io(prefill.inputs, "input_ids");
    const int d_ids = find_io(decode.inputs, "input_ids");
    const int d_pos = find_io(decode.inputs, "cache_position");
    if (prefill.inputs.size() != 1 || p_ids != 0 || !is_i64(prefill.inputs[0]) ||
        prefill.outputs.size() != 1)
      throw std::runtime_error("entry 'prefill' must take input_ids (int64) and give logits");
    if (decode.inputs.size() != 2 || d_ids < 0 || d_pos < 0 || !is_i64(decode.inputs[d_ids]) ||
        !is_i64(decode.inputs[d_pos]) || numel(decode.inputs[d_ids]) != 1 ||
        numel(decode.inputs[d_pos]) != 1 || decode.outputs.size() != 1)
      throw std::runtime_error("entry 'decode' must take input_ids [1, 1] and cache_position [1] "
                               "(int64) and give logits");
    for (const Entry *en : {&prefill, &decode}) {
      std::cout << "  " << (en == &prefill ? "prefill" : "decode ") << ":";
      for (const auto &d : en->inputs) std::cout << " " << example::describe(d);
      std::cout << " ->";
      for (const auto &d : en->outputs) std::cout << " " << example::describe(d);
      std::cout << "\n";
    }
    const sinter_tensor_desc &p_logits = prefill.outputs[0], &d_logits = decode.outputs[0];
    const int64_t vocab = d_logits.shape[d_logits.ndim - 1];
    const LogitsType p_type = logits_type(p_logits), d_type = logits_type(d_logits);
    if (p_logits.shape[p_logits.ndim - 1] != vocab)
      throw std::runtime_error("prefill and decode logits differ in vocabulary size");

    // The prompt: given, or deterministic pseudo-random ids; its length is the prefill shape.
    const int64_t seq = numel(prefill.inputs[0]);
    std::vector<int64_t> prompt = parse_ids(prompt_arg);
    if (prompt_arg.empty()) {
      if (prompt_len >= 0 && prompt_len != seq)
        throw std::runtime_error("--prompt-len " + std::to_string(prompt_len) +
                                 ": this model's prefill takes exactly " + std::to_string(seq) +
                                 " tokens");
      uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
      for (int64_t i = 0; i < seq; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        prompt.push_back(int64_t((x >> 33) % uint64_t(vocab)));
      }
    }
    if (int64_t(prompt.size()) != seq)
      throw std::runtime_error("--prompt has " + std::to_string(prompt.size()) +
                               " ids; this model's prefill takes exactly " + std::to_string(seq));
    for (int64_t t : prompt)
      if (t < 0 || t >= vocab)
        throw std::runtime_error("prompt id " + std::to_string(t) + " outside [0, " +
                                 std::to_string(vocab) + ")");
    // Prefill fills cache slots [0, seq); decode step j writes slot seq + j - 1: the cache must
    // hold seq + tokens - 1 slots. Its length is dim 2 of an exported Llama's "past_key_*"
    // state [batch, kv heads, length, head dim] (state queries: ABI 1.3).
    int64_t cache_len = -1;
    for (uint32_t i = 0; i < model.num_states() && cache_len < 0; ++i) {
      const sinter_tensor_desc st = model.state(i);
      if (std::string(st.name).rfind("past_key", 0) == 0 && st.ndim == 4) cache_len = st.shape[2];
    }
    if (cache_len < 0)
      std::cout << "  cache length unknown (no past_key_* state; library older than ABI 1.3?): "
                   "not checked\n";
    else if (seq + tokens - 1 > cache_len)
      throw std::runtime_error("--tokens " + std::to_string(tokens) + ": a " +
                               std::to_string(seq) + "-token prompt and " +
                               std::to_string(tokens - 1) + " decode steps need " +
                               std::to_string(seq + tokens - 1) + " cache slots; this model's "
                               "cache holds " + std::to_string(cache_len) +
                               " (export_llama.py --kv-cache)");

    const int device = example::current_device();
    example::DeviceTensor ids_in(prefill.inputs[0], device), pre_logits(p_logits, device);
    example::DeviceTensor dec_ids(decode.inputs[d_ids], device), dec_pos(decode.inputs[d_pos], device);
    example::DeviceTensor dec_logits(d_logits, device);
    std::vector<unsigned char> host(size_t(seq) * 8);
    std::memcpy(host.data(), prompt.data(), host.size());
    ids_in.upload(host);
    void *generated_mem = nullptr;
    example::cuda_check(cudaMalloc(&generated_mem, size_t(tokens) * sizeof(int64_t)), "cudaMalloc");
    std::unique_ptr<void, decltype(&cudaFree)> generated_owner(generated_mem, &cudaFree);
    auto *generated = static_cast<int64_t *>(generated_mem);

    std::vector<DLTensor> pre_in{ids_in.dl()}, pre_out{pre_logits.dl()};
    std::vector<DLTensor> dec_in(2), dec_out{dec_logits.dl()};
    dec_in[d_ids] = dec_ids.dl();
    dec_in[d_pos] = dec_pos.dl();
    const uint64_t p_row = uint64_t(numel(p_logits) / vocab - 1) * example::element_bytes(p_logits.dtype) * vocab;
    const void *pre_last = static_cast<const unsigned char *>(pre_logits.data()) + p_row;
    const uint64_t d_row = uint64_t(numel(d_logits) / vocab - 1) * example::element_bytes(d_logits.dtype) * vocab;
    const void *dec_last = static_cast<const unsigned char *>(dec_logits.data()) + d_row;
    auto *ids_dev = static_cast<int64_t *>(dec_ids.data());
    auto *pos_dev = static_cast<int64_t *>(dec_pos.data());

    sinter::Context ctx(model, mode == "graph" ? SINTER_MODE_GRAPH : SINTER_MODE_DIRECT);
    cudaStream_t stream = nullptr;
    example::cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaEvent_t start, after_prefill, stop;
    for (cudaEvent_t *ev : {&start, &after_prefill, &stop})
      example::cuda_check(cudaEventCreate(ev), "cudaEventCreate");

    // Enqueues one whole generation; nothing waits for the device.
    auto generate = [&] {
      example::cuda_check(cudaEventRecord(start, stream), "cudaEventRecord");
      ctx.reset_state(stream);
      ctx.run_entry(prefill.index, pre_in, pre_out, stream);
      example::cuda_check(launch_argmax_step(pre_last, p_type, vocab, ids_dev, generated, pos_dev,
                                             seq, stream), "argmax");
      example::cuda_check(cudaEventRecord(after_prefill, stream), "cudaEventRecord");
      for (long j = 1; j < tokens; ++j) {
        ctx.run_entry(decode.index, dec_in, dec_out, stream);
        example::cuda_check(launch_argmax_step(dec_last, d_type, vocab, ids_dev, generated + j,
                                               pos_dev, -1, stream), "argmax");
      }
      example::cuda_check(cudaEventRecord(stop, stream), "cudaEventRecord");
    };

    generate();  // warm-up: graph mode captures its graphs here
    example::cuda_check(cudaStreamSynchronize(stream), "generating (warm-up)");
    std::vector<int64_t> first(static_cast<size_t>(tokens)), out(static_cast<size_t>(tokens));
    example::cuda_check(cudaMemcpy(first.data(), generated, first.size() * 8, cudaMemcpyDeviceToHost),
                        "copying the tokens");
    generate();
    example::cuda_check(cudaStreamSynchronize(stream), "generating");
    example::cuda_check(cudaMemcpy(out.data(), generated, out.size() * 8, cudaMemcpyDeviceToHost),
                        "copying the tokens");
    float total_ms = 0, prefill_ms = 0;
    example::cuda_check(cudaEventElapsedTime(&total_ms, start, stop), "cudaEventElapsedTime");
    example::cuda_check(cudaEventElapsedTime(&prefill_ms, start, after_prefill), "cudaEventElapsedTime");

    std::cout << "mode " << mode << "\nprompt (" << seq << "):";
    for (int64_t t : prompt) std::cout << " " << t;
    std::cout << "\ngenerated (" << tokens << "):";
    for (int64_t t : out) std::cout << " " << t;
    std::cout << "\nrepeat run identical: " << (first == out ? "yes" : "NO") << "\n";
    char line[256];
    std::snprintf(line, sizeof line,
                  "time: %.3f ms for %ld tokens (%.1f tokens/s); prefill + first token %.3f ms; "
                  "decode %.4f ms/token (%.1f tokens/s)\n",
                  total_ms, tokens, tokens / (total_ms * 1e-3), prefill_ms,
                  tokens > 1 ? (total_ms - prefill_ms) / float(tokens - 1) : 0.f,
                  tokens > 1 ? (tokens - 1) / ((total_ms - prefill_ms) * 1e-3) : 0.f);
    std::cout << line;
    for (cudaEvent_t ev : {start, after_prefill, stop}) cudaEventDestroy(ev);
    cudaStreamDestroy(stream);
    return first == out ? 0 : 1;
  } catch (const std::exception &ex) {
    std::cerr << "error: " << ex.what() << "\n";
    return 1;
  }
}
