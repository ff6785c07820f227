// C++ RAII wrapper over the sinter C ABI (header-only, C++17).
//
// Error style: every failing call throws sinter::Error, which carries the sinter_status and the
// sinter_last_error() message. Destructors never throw. Destroy contexts before their model
// (declare the Model first); a model destroyed while contexts live is leaked, not freed.
//
// Two ways to reach a model's functions:
//   - linked: the program links the model .so (or the runtime) and calls the ABI directly:
//       sinter::Model model = sinter::Model::load();
//   - dlopened: sinter::Library opens a model .so at run time and resolves the ABI with dlsym
//     (several models can live in one process this way, each with its own runtime):
//       sinter::Library lib("model.so");
//       sinter::Model model = sinter::Model::load(lib.api());            // embedded weights
//       sinter::Model model = sinter::Model::load(lib.api(), "model.safetensors");
//   then, either way:
//       sinter::Context ctx(model, SINTER_MODE_GRAPH);
//       ctx.run(inputs, outputs, stream);   // arrays of DLTensor
//   and, for a library with several entry points and state (ABI 1.2; e.g. an LLM):
//       const uint32_t decode = model.find_entry("decode");
//       ctx.run_entry(decode, inputs, outputs, stream);  // the entry's own I/O
//       ctx.reset_state(stream);                         // KV caches back to zero
//   and token generation with a library compiled with --sample: sinter/generator.hpp.
// The Library (or, linked, the process) must outlive its models.
#pragma once

#include "sinter/sinter.h"

#include <dlfcn.h>

#include <stdexcept>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

namespace sinter {

// The ABI as function pointers. ABI 1.1 entries are null for a library built with ABI 1.0, and
// ABI 1.2 entries for one built with 1.0 or 1.1.
struct Api {
  decltype(&::sinter_abi_version) abi_version = nullptr;
  decltype(&::sinter_last_error) last_error = nullptr;
  decltype(&::sinter_status_string) status_string = nullptr;
  decltype(&::sinter_build_info) build_info = nullptr;
  decltype(&::sinter_model_load) model_load = nullptr;
  decltype(&::sinter_model_destroy) model_destroy = nullptr;
  decltype(&::sinter_model_num_inputs) model_num_inputs = nullptr;
  decltype(&::sinter_model_num_outputs) model_num_outputs = nullptr;
  decltype(&::sinter_model_arena_bytes) model_arena_bytes = nullptr;
  decltype(&::sinter_model_num_launches) model_num_launches = nullptr;
  decltype(&::sinter_model_input_info) model_input_info = nullptr;
  decltype(&::sinter_model_output_info) model_output_info = nullptr;
  decltype(&::sinter_context_create) context_create = nullptr;
  decltype(&::sinter_context_destroy) context_destroy = nullptr;
  decltype(&::sinter_run) run = nullptr;
  // ABI 1.1
  decltype(&::sinter_model_load_from_file) model_load_from_file = nullptr;
  decltype(&::sinter_model_load_v2) model_load_v2 = nullptr;
  decltype(&::sinter_weights_external) weights_external = nullptr;
  decltype(&::sinter_model_num_weights) model_num_weights = nullptr;
  decltype(&::sinter_model_launch_info) model_launch_info = nullptr;
  decltype(&::sinter_context_profile) context_profile = nullptr;
  // ABI 1.2
  decltype(&::sinter_model_num_entries) model_num_entries = nullptr;
  decltype(&::sinter_model_entry_name) model_entry_name = nullptr;
  decltype(&::sinter_model_find_entry) model_find_entry = nullptr;
  decltype(&::sinter_model_entry_num_inputs) model_entry_num_inputs = nullptr;
  decltype(&::sinter_model_entry_num_outputs) model_entry_num_outputs = nullptr;
  decltype(&::sinter_model_entry_input_info) model_entry_input_info = nullptr;
  decltype(&::sinter_model_entry_output_info) model_entry_output_info = nullptr;
  decltype(&::sinter_model_entry_num_launches) model_entry_num_launches = nullptr;
  decltype(&::sinter_model_state_bytes) model_state_bytes = nullptr;
  decltype(&::sinter_run_entry) run_entry = nullptr;
  decltype(&::sinter_context_reset_state) context_reset_state = nullptr;
  // ABI 1.3
  decltype(&::sinter_model_num_states) model_num_states = nullptr;
  decltype(&::sinter_model_state_info) model_state_info = nullptr;
  // ABI 1.4
  decltype(&::sinter_model_has_sampler) model_has_sampler = nullptr;
  decltype(&::sinter_context_set_sampling) context_set_sampling = nullptr;
};

// The functions this program is linked against. Only instantiated when called, so a program
// that only dlopens models does not need them at link time.
inline const Api &linked_api() {
  static const Api api = [] {
    Api a;
    a.abi_version = &::sinter_abi_version;
    a.last_error = &::sinter_last_error;
    a.status_string = &::sinter_status_string;
    a.build_info = &::sinter_build_info;
    a.model_load = &::sinter_model_load;
    a.model_destroy = &::sinter_model_destroy;
    a.model_num_inputs = &::sinter_model_num_inputs;
    a.model_num_outputs = &::sinter_model_num_outputs;
    a.model_arena_bytes = &::sinter_model_arena_bytes;
    a.model_num_launches = &::sinter_model_num_launches;
    a.model_input_info = &::sinter_model_input_info;
    a.model_output_info = &::sinter_model_output_info;
    a.context_create = &::sinter_context_create;
    a.context_destroy = &::sinter_context_destroy;
    a.run = &::sinter_run;
    a.model_load_from_file = &::sinter_model_load_from_file;
    a.model_load_v2 = &::sinter_model_load_v2;
    a.weights_external = &::sinter_weights_external;
    a.model_num_weights = &::sinter_model_num_weights;
    a.model_launch_info = &::sinter_model_launch_info;
    a.context_profile = &::sinter_context_profile;
    a.model_num_entries = &::sinter_model_num_entries;
    a.model_entry_name = &::sinter_model_entry_name;
    a.model_find_entry = &::sinter_model_find_entry;
    a.model_entry_num_inputs = &::sinter_model_entry_num_inputs;
    a.model_entry_num_outputs = &::sinter_model_entry_num_outputs;
    a.model_entry_input_info = &::sinter_model_entry_input_info;
    a.model_entry_output_info = &::sinter_model_entry_output_info;
    a.model_entry_num_launches = &::sinter_model_entry_num_launches;
    a.model_state_bytes = &::sinter_model_state_bytes;
    a.run_entry = &::sinter_run_entry;
    a.context_reset_state = &::sinter_context_reset_state;
    a.model_num_states = &::sinter_model_num_states;
    a.model_state_info = &::sinter_model_state_info;
    a.model_has_sampler = &::sinter_model_has_sampler;
    a.context_set_sampling = &::sinter_context_set_sampling;
    return a;
  }();
  return api;
}

class Error : public std::runtime_error {
public:
  Error(sinter_status status, const std::string &message)
      : std::runtime_error(std::string(status_name(status)) + ": " + message), status_(status) {}
  sinter_status status() const noexcept { return status_; }

private:
  // Local copy of sinter_status_string, so that Error needs no linked library.
  static const char *status_name(sinter_status s) {
    static const char *const kNames[] = {
        "SINTER_OK",           "SINTER_INVALID_ARGUMENT", "SINTER_NO_DEVICE",
        "SINTER_CUDA_ERROR",   "SINTER_OUT_OF_MEMORY",    "SINTER_ABI_MISMATCH",
        "SINTER_CORRUPT_WEIGHTS", "SINTER_BUSY",          "SINTER_INTERNAL"};
    return unsigned(s) < sizeof kNames / sizeof *kNames ? kNames[s] : "SINTER_UNKNOWN_STATUS";
  }
  sinter_status status_;
};

inline void check(const Api &api, sinter_status status) {
  if (status != SINTER_OK)
    throw Error(status, api.last_error());
}
// Against the linked library.
inline void check(sinter_status status) { check(linked_api(), status); }

namespace detail {
// Throws ABI_MISMATCH when `fn` (an optional Api entry) is missing from the library.
inline void need(const void *fn, const char *what, const char *version = "1.1") {
  if (!fn)
    throw Error(SINTER_ABI_MISMATCH,
                std::string(what) + " needs a library with ABI " + version + " or later");
}
// The name of the single entry of a library older than ABI 1.2.
constexpr const char *kSingleEntryName = "main";
} // namespace detail

// A model .so opened with dlopen. Never dlclosed: the .so carries its own static CUDA runtime,
// whose teardown at unload races with process exit.
class Library {
public:
  explicit Library(const std::string &path) {
    // A bare file name would make dlopen search the library path instead of the directory.
    const std::string p = path.find('/') == std::string::npos ? "./" + path : path;
    handle_ = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char *why = dlerror();
      throw Error(SINTER_INVALID_ARGUMENT,
                  "cannot load '" + path + "': " + (why ? why : "unknown error"));
    }
    bool complete = true;
    auto bind = [&](auto &fn, const char *name, bool required) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle_, name));
      if (!fn && required) {
        if (complete)
          missing_ = name;
        complete = false;
      }
    };
    bind(api_.abi_version, "sinter_abi_version", true);
    bind(api_.last_error, "sinter_last_error", true);
    bind(api_.status_string, "sinter_status_string", true);
    bind(api_.build_info, "sinter_build_info", true);
    bind(api_.model_load, "sinter_model_load", true);
    bind(api_.model_destroy, "sinter_model_destroy", true);
    bind(api_.model_num_inputs, "sinter_model_num_inputs", true);
    bind(api_.model_num_outputs, "sinter_model_num_outputs", true);
    bind(api_.model_arena_bytes, "sinter_model_arena_bytes", true);
    bind(api_.model_num_launches, "sinter_model_num_launches", true);
    bind(api_.model_input_info, "sinter_model_input_info", true);
    bind(api_.model_output_info, "sinter_model_output_info", true);
    bind(api_.context_create, "sinter_context_create", true);
    bind(api_.context_destroy, "sinter_context_destroy", true);
    bind(api_.run, "sinter_run", true);
    bind(api_.model_load_from_file, "sinter_model_load_from_file", false);
    bind(api_.model_load_v2, "sinter_model_load_v2", false);
    bind(api_.weights_external, "sinter_weights_external", false);
    bind(api_.model_num_weights, "sinter_model_num_weights", false);
    bind(api_.model_launch_info, "sinter_model_launch_info", false);
    bind(api_.context_profile, "sinter_context_profile", false);
    bind(api_.model_num_entries, "sinter_model_num_entries", false);
    bind(api_.model_entry_name, "sinter_model_entry_name", false);
    bind(api_.model_find_entry, "sinter_model_find_entry", false);
    bind(api_.model_entry_num_inputs, "sinter_model_entry_num_inputs", false);
    bind(api_.model_entry_num_outputs, "sinter_model_entry_num_outputs", false);
    bind(api_.model_entry_input_info, "sinter_model_entry_input_info", false);
    bind(api_.model_entry_output_info, "sinter_model_entry_output_info", false);
    bind(api_.model_entry_num_launches, "sinter_model_entry_num_launches", false);
    bind(api_.model_state_bytes, "sinter_model_state_bytes", false);
    bind(api_.run_entry, "sinter_run_entry", false);
    bind(api_.context_reset_state, "sinter_context_reset_state", false);
    bind(api_.model_num_states, "sinter_model_num_states", false);
    bind(api_.model_state_info, "sinter_model_state_info", false);
    bind(api_.model_has_sampler, "sinter_model_has_sampler", false);
    bind(api_.context_set_sampling, "sinter_context_set_sampling", false);
    if (!complete)
      throw Error(SINTER_ABI_MISMATCH,
                  "'" + path + "' is not a sinter model library (no " + missing_ + ")");
    const uint32_t abi = api_.abi_version();
    if ((abi >> 16) != SINTER_ABI_VERSION_MAJOR)
      throw Error(SINTER_ABI_MISMATCH, "'" + path + "' has sinter ABI " +
                                           std::to_string(abi >> 16) + "." +
                                           std::to_string(abi & 0xffff) + ", this program needs " +
                                           std::to_string(SINTER_ABI_VERSION_MAJOR) + ".x");
  }
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;

  const Api &api() const noexcept { return api_; }
  uint32_t abi_version() const { return api_.abi_version(); }
  std::string build_info() const { return api_.build_info(); }
  // Whether the library needs a weights file (compiled with --weights=external).
  bool weights_external() const { return api_.weights_external && api_.weights_external(); }

private:
  void *handle_ = nullptr;
  Api api_;
  std::string missing_;
};

class Model {
public:
  // Loads the model compiled into the library this code is linked with.
  static Model load() { return load(linked_api()); }
  // Loads through `api` (e.g. Library::api()) with the embedded weights.
  static Model load(const Api &api) {
    sinter_model *m = nullptr;
    check(api, api.model_load(SINTER_ABI_VERSION_MAJOR, &m));
    return Model(api, m);
  }
  // Loads with the weights from a safetensors file. allow_new_values: accept a checkpoint whose
  // values differ from those compiled (same names, dtypes and shapes).
  static Model load(const Api &api, const std::string &weights_path,
                    bool allow_new_values = false) {
    detail::need(reinterpret_cast<const void *>(api.model_load_v2), "loading a weights file");
    sinter_model_load_options opts = SINTER_MODEL_LOAD_OPTIONS_INIT;
    opts.weights_path = weights_path.c_str();
    opts.allow_new_values = allow_new_values ? 1 : 0;
    sinter_model *m = nullptr;
    check(api, api.model_load_v2(SINTER_ABI_VERSION_MAJOR, &opts, &m));
    return Model(api, m);
  }
  Model(Model &&o) noexcept : api_(o.api_), model_(std::exchange(o.model_, nullptr)) {}
  Model &operator=(Model &&o) noexcept {
    if (this != &o) {
      reset();
      api_ = o.api_;
      model_ = std::exchange(o.model_, nullptr);
    }
    return *this;
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { reset(); }

  sinter_model *get() const noexcept { return model_; }
  const Api &api() const noexcept { return *api_; }
  uint32_t num_inputs() const { return api_->model_num_inputs(model_); }
  uint32_t num_outputs() const { return api_->model_num_outputs(model_); }
  uint64_t arena_bytes() const { return api_->model_arena_bytes(model_); }
  uint32_t num_launches() const { return api_->model_num_launches(model_); }
  sinter_tensor_desc input(uint32_t index) const {
    sinter_tensor_desc d;
    check(*api_, api_->model_input_info(model_, index, &d));
    return d;
  }
  sinter_tensor_desc output(uint32_t index) const {
    sinter_tensor_desc d;
    check(*api_, api_->model_output_info(model_, index, &d));
    return d;
  }
  sinter_launch_info launch(uint32_t index) const {
    detail::need(reinterpret_cast<const void *>(api_->model_launch_info), "launch info");
    sinter_launch_info l;
    check(*api_, api_->model_launch_info(model_, index, &l));
    return l;
  }

  // Entry points (ABI 1.2). A library older than 1.2 has one, "main": entry 0, what run() runs.
  uint32_t num_entries() const {
    return api_->model_num_entries ? api_->model_num_entries(model_) : 1;
  }
  std::string entry_name(uint32_t entry) const {
    if (!api_->model_entry_name) {
      if (entry != 0)
        throw Error(SINTER_INVALID_ARGUMENT, "entry " + std::to_string(entry) +
                                                 " out of range: the model has 1 entries ('" +
                                                 detail::kSingleEntryName + "')");
      return detail::kSingleEntryName;
    }
    const char *name = api_->model_entry_name(model_, entry);
    if (!name)
      throw Error(SINTER_INVALID_ARGUMENT, api_->last_error());
    return name;
  }
  // Index of the entry called `name`; throws INVALID_ARGUMENT (listing the entries) otherwise.
  uint32_t find_entry(const std::string &name) const {
    if (!api_->model_find_entry) {
      if (name != detail::kSingleEntryName)
        throw Error(SINTER_INVALID_ARGUMENT, "no entry '" + name +
                                                 "': the model's entries are '" +
                                                 detail::kSingleEntryName + "'");
      return 0;
    }
    uint32_t index = 0;
    check(*api_, api_->model_find_entry(model_, name.c_str(), &index));
    return index;
  }
  uint32_t entry_num_inputs(uint32_t entry) const {
    if (!api_->model_entry_num_inputs) return entry == 0 ? num_inputs() : 0;
    return api_->model_entry_num_inputs(model_, entry);
  }
  uint32_t entry_num_outputs(uint32_t entry) const {
    if (!api_->model_entry_num_outputs) return entry == 0 ? num_outputs() : 0;
    return api_->model_entry_num_outputs(model_, entry);
  }
  sinter_tensor_desc entry_input(uint32_t entry, uint32_t index) const {
    if (!api_->model_entry_input_info && entry == 0) return input(index);
    detail::need(reinterpret_cast<const void *>(api_->model_entry_input_info), "entry points",
                 "1.2");
    sinter_tensor_desc d;
    check(*api_, api_->model_entry_input_info(model_, entry, index, &d));
    return d;
  }
  sinter_tensor_desc entry_output(uint32_t entry, uint32_t index) const {
    if (!api_->model_entry_output_info && entry == 0) return output(index);
    detail::need(reinterpret_cast<const void *>(api_->model_entry_output_info), "entry points",
                 "1.2");
    sinter_tensor_desc d;
    check(*api_, api_->model_entry_output_info(model_, entry, index, &d));
    return d;
  }
  // Bytes of state (KV caches) each context holds; 0 for a library older than 1.2.
  uint64_t state_bytes() const {
    return api_->model_state_bytes ? api_->model_state_bytes(model_) : 0;
  }
  // The state regions (KV caches, scratch), ABI 1.3; a library older than 1.3 lists none.
  uint32_t num_states() const {
    return api_->model_num_states ? api_->model_num_states(model_) : 0;
  }
  sinter_tensor_desc state(uint32_t index) const {
    detail::need(reinterpret_cast<const void *>(api_->model_state_info), "state queries", "1.3");
    sinter_tensor_desc d;
    check(*api_, api_->model_state_info(model_, index, &d));
    return d;
  }

  // Whether the library was compiled with --sample (ABI 1.4): its entries with logits also
  // output next_token, picked under Context::set_sampling's parameters.
  bool has_sampler() const {
    return api_->model_has_sampler && api_->model_has_sampler(model_) != 0;
  }

private:
  Model(const Api &api, sinter_model *m) : api_(&api), model_(m) {}
  void reset() noexcept {
    if (model_) (void)api_->model_destroy(model_);
    model_ = nullptr;
  }
  const Api *api_ = nullptr;
  sinter_model *model_ = nullptr;
};

class Context {
public:
  // An empty context (no library calls); assign a real one to use it.
  Context() noexcept = default;
  explicit Context(Model &model, int mode = SINTER_MODE_DIRECT) : api_(&model.api()) {
    sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
    opts.mode = mode;
    check(*api_, api_->context_create(model.get(), &opts, &ctx_));
    num_launches_ = model.num_launches();
  }
  Context(Context &&o) noexcept
      : api_(o.api_), ctx_(std::exchange(o.ctx_, nullptr)), num_launches_(o.num_launches_) {}
  Context &operator=(Context &&o) noexcept {
    if (this != &o) {
      reset();
      api_ = o.api_;
      ctx_ = std::exchange(o.ctx_, nullptr);
      num_launches_ = o.num_launches_;
    }
    return *this;
  }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;
  ~Context() { reset(); }

  sinter_context *get() const noexcept { return ctx_; }

  // Enqueues one run on `stream` (cudaStream_t); see sinter_run for the tensor rules.
  void run(const DLTensor *inputs, uint32_t num_inputs, const DLTensor *outputs,
           uint32_t num_outputs, void *stream = nullptr) {
    check(*api_, api_->run(ctx_, inputs, num_inputs, outputs, num_outputs, stream));
  }
  void run(const std::vector<DLTensor> &inputs, const std::vector<DLTensor> &outputs,
           void *stream = nullptr) {
    run(inputs.data(), static_cast<uint32_t>(inputs.size()), outputs.data(),
        static_cast<uint32_t>(outputs.size()), stream);
  }
  // Enqueues one run of entry `entry` (Model::find_entry) on `stream`; entry 0 is run().
  void run_entry(uint32_t entry, const DLTensor *inputs, uint32_t num_inputs,
                 const DLTensor *outputs, uint32_t num_outputs, void *stream = nullptr) {
    if (!api_->run_entry && entry == 0)
      return run(inputs, num_inputs, outputs, num_outputs, stream);
    detail::need(reinterpret_cast<const void *>(api_->run_entry), "entry points", "1.2");
    check(*api_, api_->run_entry(ctx_, entry, inputs, num_inputs, outputs, num_outputs, stream));
  }
  void run_entry(uint32_t entry, const std::vector<DLTensor> &inputs,
                 const std::vector<DLTensor> &outputs, void *stream = nullptr) {
    run_entry(entry, inputs.data(), static_cast<uint32_t>(inputs.size()), outputs.data(),
              static_cast<uint32_t>(outputs.size()), stream);
  }
  // Zeroes the context's state (every KV cache) on `stream`, ordered with the runs queued
  // there. A library older than 1.2 has no state: nothing to do.
  void reset_state(void *stream = nullptr) {
    if (api_->context_reset_state)
      check(*api_, api_->context_reset_state(ctx_, stream));
  }

  // Sets the sampler's parameters (ABI 1.4, a library compiled with --sample) on `stream`;
  // throws INVALID_ARGUMENT naming a parameter out of range.
  void set_sampling(const sinter_sampling_params &params, void *stream = nullptr) {
    detail::need(reinterpret_cast<const void *>(api_->context_set_sampling), "sampling", "1.4");
    check(*api_, api_->context_set_sampling(ctx_, &params, stream));
  }

  // One synchronous profiled run: GPU milliseconds per launch (sinter_context_profile).
  std::vector<float> profile(const std::vector<DLTensor> &inputs,
                             const std::vector<DLTensor> &outputs, void *stream = nullptr) {
    detail::need(reinterpret_cast<const void *>(api_->context_profile), "profiling");
    std::vector<float> ms(num_launches_ > 0 ? num_launches_ : 1);
    check(*api_, api_->context_profile(ctx_, inputs.data(), static_cast<uint32_t>(inputs.size()),
                                       outputs.data(), static_cast<uint32_t>(outputs.size()),
                                       stream, ms.data(), num_launches_));
    ms.resize(num_launches_);
    return ms;
  }

private:
  void reset() noexcept {
    if (ctx_) (void)api_->context_destroy(ctx_);
    ctx_ = nullptr;
  }
  const Api *api_ = nullptr;
  sinter_context *ctx_ = nullptr;
  uint32_t num_launches_ = 0;
};

} // namespace sinter
