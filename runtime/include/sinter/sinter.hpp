// C++ RAII wrapper over the sinter C ABI (header-only, C++17).
//
// Error style: every failing call throws sinter::Error, which carries the sinter_status and the
// sinter_last_error() message. Destructors never throw. Destroy contexts before their model
// (declare the Model first); a model destroyed while contexts live is leaked, not freed.
//
//   sinter::Model model = sinter::Model::load();
//   sinter::Context ctx(model, SINTER_MODE_GRAPH);
//   ctx.run(inputs, outputs, stream);   // arrays of DLTensor
#pragma once

#include "sinter/sinter.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sinter {

class Error : public std::runtime_error {
public:
  Error(sinter_status status, const std::string &message)
      : std::runtime_error(std::string(sinter_status_string(status)) + ": " + message),
        status_(status) {}
  sinter_status status() const noexcept { return status_; }

private:
  sinter_status status_;
};

inline void check(sinter_status status) {
  if (status != SINTER_OK)
    throw Error(status, sinter_last_error());
}

class Model {
public:
  // Loads the model compiled into the library this code is linked with.
  static Model load() {
    sinter_model *m = nullptr;
    check(sinter_model_load(SINTER_ABI_VERSION_MAJOR, &m));
    return Model(m);
  }
  Model(Model &&o) noexcept : model_(std::exchange(o.model_, nullptr)) {}
  Model &operator=(Model &&o) noexcept {
    if (this != &o) {
      reset();
      model_ = std::exchange(o.model_, nullptr);
    }
    return *this;
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { reset(); }

  sinter_model *get() const noexcept { return model_; }
  uint32_t num_inputs() const { return sinter_model_num_inputs(model_); }
  uint32_t num_outputs() const { return sinter_model_num_outputs(model_); }
  uint64_t arena_bytes() const { return sinter_model_arena_bytes(model_); }
  uint32_t num_launches() const { return sinter_model_num_launches(model_); }
  sinter_tensor_desc input(uint32_t index) const {
    sinter_tensor_desc d;
    check(sinter_model_input_info(model_, index, &d));
    return d;
  }
  sinter_tensor_desc output(uint32_t index) const {
    sinter_tensor_desc d;
    check(sinter_model_output_info(model_, index, &d));
    return d;
  }

private:
  explicit Model(sinter_model *m) : model_(m) {}
  void reset() noexcept {
    if (model_) (void)sinter_model_destroy(model_);
    model_ = nullptr;
  }
  sinter_model *model_ = nullptr;
};

class Context {
public:
  explicit Context(Model &model, int mode = SINTER_MODE_DIRECT) {
    sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
    opts.mode = mode;
    check(sinter_context_create(model.get(), &opts, &ctx_));
  }
  Context(Context &&o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}
  Context &operator=(Context &&o) noexcept {
    if (this != &o) {
      reset();
      ctx_ = std::exchange(o.ctx_, nullptr);
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
    check(sinter_run(ctx_, inputs, num_inputs, outputs, num_outputs, stream));
  }
  void run(const std::vector<DLTensor> &inputs, const std::vector<DLTensor> &outputs,
           void *stream = nullptr) {
    run(inputs.data(), static_cast<uint32_t>(inputs.size()), outputs.data(),
        static_cast<uint32_t>(outputs.size()), stream);
  }

private:
  void reset() noexcept {
    if (ctx_) (void)sinter_context_destroy(ctx_);
    ctx_ = nullptr;
  }
  sinter_context *ctx_ = nullptr;
};

} // namespace sinter
