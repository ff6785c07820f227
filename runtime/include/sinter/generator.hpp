// Token generation with a language model compiled with `sinter compile --sample` (header-only,
// C++17; needs the CUDA runtime: link cudart). A separate header from sinter.hpp so that
// programs that only run models need no CUDA headers.
//
//   sinter::Library lib("llama.so");                    // prefill + decode entries, --sample
//   sinter::Model model = sinter::Model::load(lib.api());
//   sinter::Generator gen(model);                       // graph mode by default
//   sinter::GenerateOptions opts;
//   opts.max_new_tokens = 64;
//   opts.sampling.temperature = 0.8f;  opts.sampling.top_p = 0.9f;  opts.sampling.seed = 7;
//   opts.stop_tokens = {128001};
//   std::vector<int64_t> out = gen.generate({128000, 791, 6864}, opts,
//                                           [](int64_t token) { print(token); return true; });
//
// A library compiled from a with-past export with `--cache-length` also takes attention_mask
// (prefill [1, S]: ones; decode [1, L]: ones at the slots written so far and at this one) and
// position_ids (prefill 0 .. S-1; decode the position): the generator feeds them too.
//
// Token ids in, token ids out: text goes through the checkpoint's tokenizer outside (the Python
// module `sinter` does that with `tokenizers`).
//
// How a generation runs (batch 1): the context's state is reset and the sampling parameters
// set; the prompt's first S tokens go through the "prefill" entry when it has S <= prompt
// tokens (S: its input_ids length), the rest through the "chunk" entry C tokens a run when the
// library has one (input_ids [1, C], cache_position [C]: export_llama.py --chunk), and what is
// left through "decode" one token a run (sinter::plan_prompt, prompt_plan.hpp).
// From then on every decode run reads its input_ids from the device buffer the previous run
// wrote its next_token to, and the positions come from a pinned table by asynchronous copies:
// the host only enqueues. Each new token is copied back asynchronously; the host reads it
// a few steps behind (kTokensInFlight), calls the callback and checks the stop tokens, so the
// GPU does not wait for the host between tokens.
#pragma once

#include "sinter/prompt_plan.hpp"
#include "sinter/sinter.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

namespace sinter {

struct GenerateOptions {
  int64_t max_new_tokens = 32;
  std::vector<int64_t> stop_tokens; // generation ends after the first of these (it is returned)
  sinter_sampling_params sampling = SINTER_SAMPLING_PARAMS_INIT; // greedy unless set
};

struct GenerateStats {
  int64_t prompt_tokens = 0;
  int64_t new_tokens = 0;
  double prompt_ms = 0; // GPU time from the reset to the first new token
  double decode_ms = 0; // GPU time from the first new token to the last
  int64_t prefill_tokens = 0; // prompt tokens through the prefill entry (0 or S)
  int64_t chunk_runs = 0;     // runs of the chunk entry for the prompt
  double tokens_per_second() const {
    return decode_ms > 0 && new_tokens > 1 ? (new_tokens - 1) * 1000.0 / decode_ms : 0.0;
  }
};

class Generator {
public:
  static constexpr int kTokensInFlight = 4;

  explicit Generator(Model &model, int mode = SINTER_MODE_GRAPH) : model_(&model) {
    if (!model.has_sampler())
      throw Error(SINTER_INVALID_ARGUMENT,
                  "generation needs a library compiled with --sample (this one has no "
                  "next_token output)");
    try {
      cuda(cudaGetDevice(&device_), "cudaGetDevice");
      cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
      token_ = device_buffer(sizeof(int64_t));
      position_ = device_buffer(sizeof(int64_t));
      for (uint32_t i = 0; i < model.num_states(); ++i) {
        const sinter_tensor_desc s = model.state(i);
        if (s.name[0] != '.' && s.ndim == 4) // a KV cache [batch, heads, length, head_dim]
          cache_length_ = std::min<int64_t>(cache_length_, s.shape[2]);
      }
      cuda(cudaMallocHost(reinterpret_cast<void **>(&host_tokens_),
                          kTokensInFlight * sizeof(int64_t)),
           "cudaMallocHost");
      decode_ = bind_entry("decode", Role::kDecode);
      if (has_entry("prefill"))
        prefill_ = bind_entry("prefill", Role::kPrefill);
      if (has_entry("chunk"))
        chunk_ = bind_entry("chunk", Role::kChunk);
      for (cudaEvent_t &e : token_events_) cuda(cudaEventCreate(&e), "cudaEventCreate");
      for (cudaEvent_t &e : timing_events_) cuda(cudaEventCreate(&e), "cudaEventCreate");
      context_ = Context(model, mode);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Generator() { release(); }
  Generator(const Generator &) = delete;
  Generator &operator=(const Generator &) = delete;

  // Positions the KV cache holds: a prompt plus new tokens may not pass it.
  int64_t cache_length() const { return cache_length_; }
  // The prompt length of the prefill entry (0 without one).
  int64_t prefill_length() const { return prefill_.ids_length; }
  // The tokens a run of the chunk entry takes (0 without one).
  int64_t chunk_length() const { return chunk_.ids_length; }
  const GenerateStats &last_stats() const { return stats_; }

  // The new tokens after `prompt`: up to options.max_new_tokens, fewer at a stop token, when
  // the cache is full, or when on_token returns false. on_token sees each token as it comes.
  std::vector<int64_t> generate(const std::vector<int64_t> &prompt, const GenerateOptions &options,
                                const std::function<bool(int64_t)> &on_token = {}) {
    const int64_t n = int64_t(prompt.size());
    if (n == 0) throw Error(SINTER_INVALID_ARGUMENT, "generate: the prompt is empty");
    if (n > cache_length_)
      throw Error(SINTER_INVALID_ARGUMENT, "generate: a prompt of " + std::to_string(n) +
                                               " tokens does not fit the cache of " +
                                               std::to_string(cache_length_) + " positions");
    if (options.max_new_tokens < 1)
      throw Error(SINTER_INVALID_ARGUMENT, "generate: max_new_tokens must be >= 1, got " +
                                               std::to_string(options.max_new_tokens));
    // Token k (k >= 1) comes from feeding token k - 1 at position n + k - 1.
    const int64_t limit = std::min<int64_t>(options.max_new_tokens, cache_length_ - n + 1);
    fill_host_table(prompt, limit);
    stats_ = GenerateStats{};
    stats_.prompt_tokens = n;

    cuda(cudaEventRecord(timing_events_[0], stream_), "cudaEventRecord");
    context_.reset_state(stream_);
    context_.set_sampling(options.sampling, stream_);
    if (mask_)
      cuda(cudaMemsetAsync(mask_, 0, size_t(cache_length_) * sizeof(int64_t), stream_),
           "cudaMemsetAsync");
    for (const PromptRun &run : plan_prompt(n, prefill_.ids_length, chunk_.ids_length)) {
      const size_t bytes = size_t(run.count) * sizeof(int64_t);
      if (run.entry == PromptRun::kPrefill) {
        copy_to_device(prefill_.ids, host_prompt(0), bytes);
        context_.run_entry(prefill_.entry, prefill_.inputs, prefill_.outputs, stream_);
        stats_.prefill_tokens = run.count;
      } else if (run.entry == PromptRun::kChunk) {
        copy_to_device(chunk_.ids, host_prompt(run.start), bytes);
        copy_to_device(chunk_.positions, &positions_[run.start], bytes);
        context_.run_entry(chunk_.entry, chunk_.inputs, chunk_.outputs, stream_);
        ++stats_.chunk_runs;
      } else {
        copy_to_device(token_, host_prompt(run.start), sizeof(int64_t));
        run_decode(run.start);
        continue; // run_decode sets the slot's mask entry
      }
      // The decode steps after it see the slots this run wrote.
      if (mask_) copy_to_device(static_cast<int64_t *>(mask_) + run.start, pinned_ones(), bytes);
    }
    cuda(cudaEventRecord(timing_events_[1], stream_), "cudaEventRecord");

    std::vector<int64_t> tokens;
    int64_t enqueued = 0; // new tokens whose copy to the host is enqueued
    bool stopped = false;
    while (!stopped && int64_t(tokens.size()) < limit) {
      while (enqueued < limit && enqueued - int64_t(tokens.size()) < kTokensInFlight) {
        if (enqueued > 0) run_decode(n + enqueued - 1); // feeds token enqueued - 1
        const int slot = int(enqueued % kTokensInFlight);
        cuda(cudaMemcpyAsync(&host_tokens_[slot], token_, sizeof(int64_t), cudaMemcpyDeviceToHost,
                             stream_),
             "cudaMemcpyAsync");
        cuda(cudaEventRecord(token_events_[slot], stream_), "cudaEventRecord");
        ++enqueued;
      }
      const int slot = int(tokens.size() % kTokensInFlight);
      cuda(cudaEventSynchronize(token_events_[slot]), "cudaEventSynchronize");
      const int64_t token = host_tokens_[slot];
      tokens.push_back(token);
      if (int64_t(tokens.size()) == limit)
        cuda(cudaEventRecord(timing_events_[2], stream_), "cudaEventRecord");
      stopped = std::find(options.stop_tokens.begin(), options.stop_tokens.end(), token) !=
                    options.stop_tokens.end() ||
                (on_token && !on_token(token));
    }
    if (stopped) cuda(cudaEventRecord(timing_events_[2], stream_), "cudaEventRecord");
    // Steps enqueued past a stop finish here: the context is idle when generate returns.
    cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    float ms = 0;
    cuda(cudaEventElapsedTime(&ms, timing_events_[0], timing_events_[1]), "cudaEventElapsedTime");
    stats_.prompt_ms = ms;
    cuda(cudaEventElapsedTime(&ms, timing_events_[1], timing_events_[2]), "cudaEventElapsedTime");
    stats_.decode_ms = ms;
    stats_.new_tokens = int64_t(tokens.size());
    return tokens;
  }

private:
  static constexpr uint32_t kNoEntry = ~0u;

  void release() noexcept {
    if (stream_) cudaStreamSynchronize(stream_);
    context_ = Context();
    for (cudaEvent_t &e : token_events_)
      if (e) cudaEventDestroy(e), e = nullptr;
    for (cudaEvent_t &e : timing_events_)
      if (e) cudaEventDestroy(e), e = nullptr;
    if (host_tokens_) cudaFreeHost(host_tokens_);
    if (host_table_) cudaFreeHost(host_table_);
    if (ones_) cudaFreeHost(ones_);
    host_tokens_ = host_table_ = ones_ = nullptr;
    for (void *p : device_buffers_) cudaFree(p);
    device_buffers_.clear();
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }

  enum class Role { kPrefill, kChunk, kDecode };

  struct BoundEntry {
    uint32_t entry = kNoEntry;
    std::vector<sinter_tensor_desc> input_descs, output_descs; // own the shapes DLTensors point to
    std::vector<DLTensor> inputs, outputs;
    void *ids = nullptr;
    void *positions = nullptr; // the chunk's cache_position [C]
    int64_t ids_length = 0;
  };

  static void cuda(cudaError_t err, const char *what) {
    if (err != cudaSuccess)
      throw Error(SINTER_CUDA_ERROR, std::string(what) + ": " + cudaGetErrorString(err));
  }
  static int64_t numel(const sinter_tensor_desc &d) {
    int64_t count = 1;
    for (int i = 0; i < d.ndim; ++i) count *= d.shape[i];
    return count;
  }
  static bool is_i64(const sinter_tensor_desc &d) {
    return d.dtype.code == kDLInt && d.dtype.bits == 64 && d.dtype.lanes == 1;
  }
  static std::string describe(const sinter_tensor_desc &d) {
    std::string s = std::string(d.name) + " [";
    for (int i = 0; i < d.ndim; ++i) s += (i ? ", " : "") + std::to_string(d.shape[i]);
    return s + "]";
  }

  bool has_entry(const char *name) const {
    for (uint32_t e = 0; e < model_->num_entries(); ++e)
      if (model_->entry_name(e) == name) return true;
    return false;
  }

  void *device_buffer(size_t bytes) {
    void *p = nullptr;
    cuda(cudaMalloc(&p, std::max<size_t>(bytes, 16)), "cudaMalloc");
    device_buffers_.push_back(p);
    return p;
  }

  DLTensor tensor(const sinter_tensor_desc &d, void *data) const {
    DLTensor t{};
    t.data = data;
    t.device = {kDLCUDA, device_};
    t.ndim = d.ndim;
    t.dtype = d.dtype;
    t.shape = const_cast<int64_t *>(d.shape);
    return t;
  }

  // Pinned ones (cache_length_ of them): the attention mask's and the table of prefill
  // positions' sources.
  const int64_t *pinned_ones() {
    if (!ones_) {
      cuda(cudaMallocHost(reinterpret_cast<void **>(&ones_),
                          size_t(cache_length_) * 2 * sizeof(int64_t)),
           "cudaMallocHost");
      for (int64_t i = 0; i < cache_length_; ++i) ones_[i] = 1, ones_[cache_length_ + i] = i;
    }
    return ones_;
  }

  // The entry's I/O bound to this generator's buffers: input_ids (and, for decode and chunk,
  // cache_position) in, next_token to the shared token buffer, any other output to a buffer of
  // its own. A --cache-length library's attention_mask and position_ids: constant buffers in
  // the prompt, the mask and the position the decode steps update.
  BoundEntry bind_entry(const char *name, Role role) {
    const bool prefill = role == Role::kPrefill, chunk = role == Role::kChunk;
    BoundEntry b;
    b.entry = model_->find_entry(name);
    const std::string where = std::string("generate: entry '") + name + "': ";
    for (uint32_t i = 0; i < model_->entry_num_inputs(b.entry); ++i)
      b.input_descs.push_back(model_->entry_input(b.entry, i));
    for (uint32_t i = 0; i < model_->entry_num_outputs(b.entry); ++i)
      b.output_descs.push_back(model_->entry_output(b.entry, i));
    int64_t chunk_tokens = -1; // a chunk's cache_position has input_ids' length, in any order
    for (const sinter_tensor_desc &d : b.input_descs)
      if (std::string(d.name) == "input_ids" && d.ndim == 2) chunk_tokens = d.shape[1];
    for (const sinter_tensor_desc &d : b.input_descs) {
      const std::string n = d.name;
      void *data = nullptr;
      if (n == "input_ids" && is_i64(d) && d.ndim == 2 && d.shape[0] == 1) {
        b.ids_length = d.shape[1];
        if (role == Role::kDecode && b.ids_length != 1)
          throw Error(SINTER_INVALID_ARGUMENT, where + "input_ids must be [1, 1], got " + describe(d));
        if (chunk && !(b.ids_length >= 2 && b.ids_length <= cache_length_))
          throw Error(SINTER_INVALID_ARGUMENT, where + "input_ids must be [1, C] with 2 <= C <= " +
                                                   "the cache length, got " + describe(d));
        data = role == Role::kDecode ? token_ : (b.ids = device_buffer(size_t(numel(d)) * 8));
      } else if (n == "cache_position" && chunk && is_i64(d) && d.ndim == 1 &&
                 d.shape[0] == chunk_tokens) {
        data = b.positions = device_buffer(size_t(d.shape[0]) * sizeof(int64_t));
      } else if (n == "cache_position" && role == Role::kDecode && is_i64(d) && numel(d) == 1) {
        data = position_;
      } else if (n == "position_ids" && role == Role::kDecode && is_i64(d) && numel(d) == 1) {
        data = step_position_ = device_buffer(sizeof(int64_t));
      } else if (n == "attention_mask" && role == Role::kDecode && is_i64(d) && d.ndim == 2 &&
                 d.shape[0] == 1 && d.shape[1] == cache_length_) {
        data = mask_ = device_buffer(size_t(cache_length_) * sizeof(int64_t));
      } else if ((n == "attention_mask" || n == "position_ids") && prefill && is_i64(d) &&
                 d.ndim == 2 && d.shape[0] == 1 && d.shape[1] <= cache_length_ &&
                 cache_length_ < std::numeric_limits<int64_t>::max()) {
        data = device_buffer(size_t(d.shape[1]) * sizeof(int64_t));
        const int64_t *source = pinned_ones() + (n == "attention_mask" ? 0 : cache_length_);
        cuda(cudaMemcpy(data, source, size_t(d.shape[1]) * sizeof(int64_t), cudaMemcpyHostToDevice),
             "cudaMemcpy");
      } else {
        throw Error(SINTER_INVALID_ARGUMENT,
                    where + "cannot feed input " + describe(d) +
                        " (generation takes batch 1: int64 input_ids [1, S]" +
                        (prefill ? std::string(", attention_mask and position_ids [1, S]")
                         : chunk ? std::string(" and cache_position [C]")
                                 : " and cache_position [1]; attention_mask [1, " +
                                       std::to_string(cache_length_) +
                                       "] and position_ids [1, 1]") +
                        ")");
      }
      b.inputs.push_back(tensor(d, data));
    }
    bool has_next = false;
    for (const sinter_tensor_desc &d : b.output_descs) {
      void *data;
      if (std::string(d.name) == "next_token" && is_i64(d) && numel(d) == 1) {
        data = token_;
        has_next = true;
      } else {
        data = device_buffer(size_t(numel(d)) * ((d.dtype.bits * d.dtype.lanes + 7) / 8));
      }
      b.outputs.push_back(tensor(d, data));
    }
    if (chunk && !b.positions)
      throw Error(SINTER_INVALID_ARGUMENT, where + "needs an int64 cache_position [C] input (the "
                                                   "C slots the chunk writes)");
    if (b.ids_length == 0 || !has_next)
      throw Error(SINTER_INVALID_ARGUMENT, where + "needs an int64 input_ids input and a "
                                                   "next_token [1, 1] output (batch 1, --sample)");
    return b;
  }

  // Pinned: the prompt, then every position 0 .. n + limit, as the copies' sources.
  void fill_host_table(const std::vector<int64_t> &prompt, int64_t limit) {
    const size_t need = prompt.size() * 2 + size_t(limit) + 1;
    if (need > host_table_capacity_) {
      if (host_table_) cuda(cudaFreeHost(host_table_), "cudaFreeHost");
      host_table_ = nullptr;
      cuda(cudaMallocHost(reinterpret_cast<void **>(&host_table_), need * sizeof(int64_t)),
           "cudaMallocHost");
      host_table_capacity_ = need;
    }
    std::memcpy(host_table_, prompt.data(), prompt.size() * sizeof(int64_t));
    positions_ = host_table_ + prompt.size();
    for (size_t p = 0; p < prompt.size() + size_t(limit) + 1; ++p) positions_[p] = int64_t(p);
  }
  const int64_t *host_prompt(int64_t index) const { return host_table_ + index; }

  void copy_to_device(void *dst, const int64_t *src, size_t bytes) {
    cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
  }

  void run_decode(int64_t position) {
    copy_to_device(position_, &positions_[position], sizeof(int64_t));
    if (step_position_) copy_to_device(step_position_, &positions_[position], sizeof(int64_t));
    if (mask_) copy_to_device(static_cast<int64_t *>(mask_) + position, pinned_ones(), sizeof(int64_t));
    context_.run_entry(decode_.entry, decode_.inputs, decode_.outputs, stream_);
  }

  Model *model_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  Context context_;
  BoundEntry prefill_, decode_, chunk_;
  void *token_ = nullptr, *position_ = nullptr;
  void *step_position_ = nullptr, *mask_ = nullptr; // decode's position_ids, attention_mask [1, L]
  std::vector<void *> device_buffers_;
  int64_t cache_length_ = std::numeric_limits<int64_t>::max();
  int64_t *host_tokens_ = nullptr;
  int64_t *host_table_ = nullptr;
  int64_t *ones_ = nullptr; // cache_length_ ones, then 0 .. cache_length_ - 1
  int64_t *positions_ = nullptr;
  size_t host_table_capacity_ = 0;
  cudaEvent_t token_events_[kTokensInFlight] = {};
  cudaEvent_t timing_events_[3] = {};
  GenerateStats stats_;
};

} // namespace sinter
