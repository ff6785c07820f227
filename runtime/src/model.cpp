// sinter_model: load (checks, checksum, weight upload), queries, destroy.
#include "model.h"

#include "error.h"

#include <cstring>
#include <memory>
#include <new>

static_assert(SINTER_TENSOR_MAX_NDIM == SINTER_MAX_RANK, "public and program ranks differ");

namespace sinter::rt {

sinter_status load_model(const sinter_program *p, uint32_t expected_abi_major,
                         sinter_model **out) {
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
  // Before any CUDA call: a corrupt file is reported as such on any machine.
  const uint64_t sum = fnv1a64(p->weights, p->weight_bytes);
  if (sum != p->weights_checksum)
    return fail(SINTER_CORRUPT_WEIGHTS,
                "weights checksum mismatch: expected 0x%016llx, computed 0x%016llx over %llu "
                "bytes",
                static_cast<unsigned long long>(p->weights_checksum),
                static_cast<unsigned long long>(sum),
                static_cast<unsigned long long>(p->weight_bytes));

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
  model->io = make_io_expect(*p);
  if (p->weight_bytes > 0) {
    if ((err = cudaMalloc(&model->weights, p->weight_bytes)) != cudaSuccess)
      return fail_cuda(err, "allocating device memory for the weights");
    err = cudaMemcpy(model->weights, p->weights, p->weight_bytes, cudaMemcpyHostToDevice);
    if (err != cudaSuccess) {
      (void)cudaFree(model->weights);
      return fail_cuda(err, "uploading the weights");
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
  std::memset(out, 0, sizeof *out);
  out->name = t.name;
  out->dtype = sinter::rt::to_dl_dtype(t.dtype);
  out->ndim = t.rank;
  for (int i = 0; i < t.rank; ++i)
    out->shape[i] = t.shape[i];
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
