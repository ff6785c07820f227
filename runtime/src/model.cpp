// sinter_model: load (checks, checksum, weight upload), queries, destroy.
#include "model.h"

#include "checksum.h"

#include "entries.h"
#include "error.h"
#include "weights_file.h"

#include <cstring>
#include <memory>
#include <new>

static_assert(SINTER_TENSOR_MAX_NDIM == SINTER_MAX_RANK, "public and program ranks differ");

namespace sinter::rt {
namespace {

// Pinned staging ring between pread() and cudaMemcpyAsync: while the copy engine drains one
// buffer the next is being read, so a large file moves at about disk (page cache) speed.
class DeviceSink final : public WeightSink {
public:
  static constexpr int kBuffers = 4;
  static constexpr uint64_t kChunk = 16u << 20;

  DeviceSink(void *blob, uint64_t total) : blob_(static_cast<char *>(blob)), total_(total) {
    chunk_ = total < kChunk ? (total > 0 ? total : 1) : kChunk;
  }
  ~DeviceSink() override {
    if (stream_) (void)cudaStreamSynchronize(stream_);
    for (int i = 0; i < kBuffers; ++i) {
      if (done_[i]) (void)cudaEventDestroy(done_[i]);
      if (pinned_[i]) (void)cudaFreeHost(pinned_[i]);
    }
    if (stream_) (void)cudaStreamDestroy(stream_);
  }
  sinter_status init() {
    cudaError_t err = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    if (err != cudaSuccess)
      return fail_cuda(err, "creating the weight upload stream");
    // Gaps between tensors (alignment padding) are zero, as in an embedded blob. Same stream as
    // the copies, so the clear is ordered before them.
    if ((err = cudaMemsetAsync(blob_, 0, total_, stream_)) != cudaSuccess)
      return fail_cuda(err, "clearing the weights");
    for (int i = 0; i < kBuffers; ++i) {
      if ((err = cudaHostAlloc(reinterpret_cast<void **>(&pinned_[i]), chunk_,
                               cudaHostAllocDefault)) != cudaSuccess)
        return fail_cuda(err, "allocating pinned staging memory for the weights");
      if ((err = cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming)) != cudaSuccess)
        return fail_cuda(err, "cudaEventCreate");
    }
    return SINTER_OK;
  }
  uint64_t chunk_bytes() const override { return chunk_; }
  sinter_status acquire(unsigned char **buffer) override {
    if (pending_[next_]) {
      cudaError_t err = cudaEventSynchronize(done_[next_]);
      if (err != cudaSuccess)
        return fail_cuda(err, "uploading the weights");
      pending_[next_] = false;
    }
    *buffer = pinned_[next_];
    return SINTER_OK;
  }
  sinter_status submit(unsigned char *buffer, uint64_t offset, uint64_t bytes) override {
    cudaError_t err =
        cudaMemcpyAsync(blob_ + offset, buffer, bytes, cudaMemcpyHostToDevice, stream_);
    if (err == cudaSuccess)
      err = cudaEventRecord(done_[next_], stream_);
    if (err != cudaSuccess)
      return fail_cuda(err, "uploading the weights");
    pending_[next_] = true;
    next_ = (next_ + 1) % kBuffers;
    return SINTER_OK;
  }
  sinter_status finish() {
    cudaError_t err = cudaStreamSynchronize(stream_);
    return err == cudaSuccess ? SINTER_OK : fail_cuda(err, "uploading the weights");
  }

private:
  char *blob_;
  uint64_t total_;
  uint64_t chunk_ = 0;
  cudaStream_t stream_ = nullptr;
  unsigned char *pinned_[kBuffers] = {};
  cudaEvent_t done_[kBuffers] = {};
  bool pending_[kBuffers] = {};
  int next_ = 0;
};

} // namespace

void init_entries(sinter_model &model) {
  const sinter_program &p = *model.program;
  model.entries.assign(entry_count(p), ModelEntry{});
  for (uint32_t i = 0; i < entry_count(p); ++i) {
    ModelEntry &e = model.entries[i];
    e.desc = entry_at(p, i);
    e.io = make_io_expect(e.desc);
    e.algo_chosen.assign(e.desc.num_launches, 0);
    e.algos.resize(e.desc.num_launches);
  }
}

sinter_status load_model(const sinter_program *p, uint32_t expected_abi_major,
                         sinter_model **out, const LoadOptions &options) {
  if (!out)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_load: out is null");
  *out = nullptr;
  if (expected_abi_major != SINTER_ABI_VERSION_MAJOR)
    return fail(SINTER_ABI_MISMATCH, "caller expects sinter ABI major %u, library has %u.%u",
                expected_abi_major, SINTER_ABI_VERSION_MAJOR, SINTER_ABI_VERSION_MINOR);
  if (!p)
    return fail(SINTER_INTERNAL, "library has no program");
  if (p->version != SINTER_PROGRAM_VERSION)
    return fail(SINTER_ABI_MISMATCH, "program version %u, runtime expects %u", p->version,
                SINTER_PROGRAM_VERSION);
  sinter_status s = check_program(*p);
  if (s != SINTER_OK)
    return s;
  // Before any CUDA call: a corrupt or mismatched file is reported as such on any machine.
  WeightsFile file;
  const bool from_file = options.weights_path != nullptr;
  if (from_file) {
    if ((s = open_weights_file(*p, options.weights_path, file)) != SINTER_OK)
      return s;
  } else if (p->weights_external) {
    return fail(SINTER_INVALID_ARGUMENT,
                "this library's weights are external (compiled with --weights=external): load "
                "it with sinter_model_load_from_file and the .safetensors file written beside it");
  } else {
    const uint64_t sum = checksum::of(p->weights, p->weight_bytes);
    if (sum != p->weights_checksum) {
      const char *bad = first_corrupt_tensor(*p, p->weights);
      return fail(SINTER_CORRUPT_WEIGHTS,
                  "weights checksum mismatch: expected 0x%016llx, computed 0x%016llx over %llu "
                  "bytes%s%s%s",
                  static_cast<unsigned long long>(p->weights_checksum),
                  static_cast<unsigned long long>(sum),
                  static_cast<unsigned long long>(p->weight_bytes),
                  bad ? " (first bad tensor '" : "", bad ? bad : "", bad ? "')" : "");
    }
  }

  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    return fail(SINTER_NO_DEVICE, "no CUDA device (cudaGetDeviceCount: %s)",
                err == cudaSuccess ? "0 devices" : cudaGetErrorName(err));
  }
  int device = 0;
  if ((err = cudaGetDevice(&device)) != cudaSuccess)
    return fail_cuda(err, "cudaGetDevice");

  auto model = std::make_unique<sinter_model>();
  model->program = p;
  model->device = device;
  init_entries(*model);
  model->weights_from_file = from_file;
  if (p->weight_bytes > 0) {
    if ((err = cudaMalloc(&model->weights, p->weight_bytes)) != cudaSuccess)
      return fail_cuda(err, "allocating device memory for the weights");
    if (from_file) {
      {
        DeviceSink sink(model->weights, p->weight_bytes);
        s = sink.init();
        if (s == SINTER_OK)
          s = stream_weights(*p, file, options.allow_new_values, sink);
        if (s == SINTER_OK)
          s = sink.finish();
      } // the sink waits for its copies before the blob may be freed
      if (s != SINTER_OK) {
        (void)cudaFree(model->weights);
        return s;
      }
    } else {
      err = cudaMemcpy(model->weights, p->weights, p->weight_bytes, cudaMemcpyHostToDevice);
      if (err != cudaSuccess) {
        (void)cudaFree(model->weights);
        return fail_cuda(err, "uploading the weights");
      }
    }
  }
  *out = model.release();
  return SINTER_OK;
}

} // namespace sinter::rt

namespace {

sinter_status fill_desc(const sinter_model *model, uint32_t index, sinter_tensor_desc *out,
                        bool input) {
  using sinter::rt::fail;
  const char *role = input ? "input" : "output";
  if (!model)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_%s_info: model is null", role);
  if (!out)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_%s_info: out is null", role);
  const sinter_program &p = *model->program;
  const uint32_t count = input ? p.num_inputs : p.num_outputs;
  if (index >= count)
    return fail(SINTER_INVALID_ARGUMENT, "%s index %u out of range: the model has %u %ss", role,
                index, count, role);
  const sinter_tensor_info &t = input ? p.inputs[index] : p.outputs[index];
  sinter::rt::fill_tensor_desc(t, out);
  return SINTER_OK;
}

template <typename T> T query(const sinter_model *model, const char *fn, T (*get)(const sinter_program &)) {
  if (!model) {
    sinter::rt::fail(SINTER_INVALID_ARGUMENT, "%s: model is null", fn);
    return 0;
  }
  return get(*model->program);
}

} // namespace

extern "C" {

SINTER_API sinter_status sinter_model_load(uint32_t expected_abi_major, sinter_model **out) {
  SINTER_API_BEGIN
  return sinter::rt::load_model(sinter_generated_program(), expected_abi_major, out);
  SINTER_API_END
}

SINTER_API sinter_status sinter_model_load_from_file(uint32_t expected_abi_major,
                                                     const char *weights_path,
                                                     sinter_model **out) {
  SINTER_API_BEGIN
  if (!weights_path) {
    if (out) *out = nullptr;
    return sinter::rt::fail(SINTER_INVALID_ARGUMENT, "sinter_model_load_from_file: weights_path is null");
  }
  sinter::rt::LoadOptions options;
  options.weights_path = weights_path;
  return sinter::rt::load_model(sinter_generated_program(), expected_abi_major, out, options);
  SINTER_API_END
}

SINTER_API sinter_status sinter_model_load_v2(uint32_t expected_abi_major,
                                              const sinter_model_load_options *opts,
                                              sinter_model **out) {
  SINTER_API_BEGIN
  sinter::rt::LoadOptions options;
  if (opts) {
    constexpr size_t kMin = offsetof(sinter_model_load_options, weights_path) + sizeof(const char *);
    if (opts->struct_size < kMin) {
      if (out) *out = nullptr;
      return sinter::rt::fail(SINTER_INVALID_ARGUMENT,
                              "sinter_model_load_v2: options.struct_size %u is too small "
                              "(expected %zu)",
                              opts->struct_size, sizeof(sinter_model_load_options));
    }
    options.weights_path = opts->weights_path;
    if (opts->struct_size >= offsetof(sinter_model_load_options, allow_new_values) + sizeof(int))
      options.allow_new_values = opts->allow_new_values != 0;
  }
  return sinter::rt::load_model(sinter_generated_program(), expected_abi_major, out, options);
  SINTER_API_END
}

SINTER_API int sinter_weights_external(void) {
  const sinter_program *p = sinter_generated_program();
  return p && p->version == SINTER_PROGRAM_VERSION && p->weights_external ? 1 : 0;
}

SINTER_API uint32_t sinter_model_num_weights(const sinter_model *model) {
  return query<uint32_t>(model, "sinter_model_num_weights",
                         [](const sinter_program &p) { return p.num_weight_tensors; });
}

SINTER_API sinter_status sinter_model_launch_info(const sinter_model *model, uint32_t index,
                                                  sinter_launch_info *out) {
  using sinter::rt::fail;
  if (!model)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_launch_info: model is null");
  if (!out)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_launch_info: out is null");
  const sinter_program &p = *model->program;
  if (index >= p.num_launches)
    return fail(SINTER_INVALID_ARGUMENT, "launch index %u out of range: the model has %u launches",
                index, p.num_launches);
  sinter::rt::fill_launch_info(p.launches[index], out);
  return SINTER_OK;
}

SINTER_API sinter_status sinter_model_destroy(sinter_model *model) {
  SINTER_API_BEGIN
  if (!model)
    return SINTER_OK;
  if (model->num_contexts.load() != 0)
    return sinter::rt::fail(SINTER_BUSY, "sinter_model_destroy: %u contexts still use the model",
                            model->num_contexts.load());
  if (model->weights) {
    sinter::rt::DeviceGuard guard(model->device);
    (void)cudaFree(model->weights);
  }
  delete model;
  return SINTER_OK;
  SINTER_API_END
}

SINTER_API uint32_t sinter_model_num_inputs(const sinter_model *model) {
  return query<uint32_t>(model, "sinter_model_num_inputs",
                         [](const sinter_program &p) { return p.num_inputs; });
}

SINTER_API uint32_t sinter_model_num_outputs(const sinter_model *model) {
  return query<uint32_t>(model, "sinter_model_num_outputs",
                         [](const sinter_program &p) { return p.num_outputs; });
}

SINTER_API uint64_t sinter_model_arena_bytes(const sinter_model *model) {
  return query<uint64_t>(model, "sinter_model_arena_bytes",
                         [](const sinter_program &p) { return p.arena_bytes; });
}

SINTER_API uint32_t sinter_model_num_launches(const sinter_model *model) {
  return query<uint32_t>(model, "sinter_model_num_launches",
                         [](const sinter_program &p) { return p.num_launches; });
}

SINTER_API sinter_status sinter_model_input_info(const sinter_model *model, uint32_t index,
                                                 sinter_tensor_desc *out) {
  return fill_desc(model, index, out, true);
}

SINTER_API sinter_status sinter_model_output_info(const sinter_model *model, uint32_t index,
                                                  sinter_tensor_desc *out) {
  return fill_desc(model, index, out, false);
}

} // extern "C"
