// I/O validation against precomputed expectations. Messages are formatted only on failure.
#include "validate.h"

#include <cstring>

#include "entries.h"
#include "error.h"

#include <cstdio>

namespace sinter::rt {

DLDataType to_dl_dtype(int32_t d) {
  DLDataType t;
  t.code = static_cast<uint8_t>((d >> 8) & 0xff);
  t.bits = static_cast<uint8_t>(d & 0xff);
  t.lanes = 1;
  return t;
}

void fill_tensor_desc(const sinter_tensor_info &t, sinter_tensor_desc *out) {
  std::memset(out, 0, sizeof *out);
  out->name = t.name;
  out->dtype = to_dl_dtype(t.dtype);
  out->ndim = t.rank;
  for (int i = 0; i < t.rank; ++i)
    out->shape[i] = t.shape[i];
}

void fill_launch_info(const sinter_launch_desc &l, sinter_launch_info *out) {
  out->kind = l.kind == SINTER_LAUNCH_GEMM ? "gemm" : "kernel";
  out->label = l.label ? l.label : (l.kind == SINTER_LAUNCH_GEMM ? "gemm" : "kernel");
  out->sources = l.sources ? l.sources : "";
}

uint64_t dtype_bytes(int32_t d) {
  switch (d) {
  case SINTER_DTYPE_F32: case SINTER_DTYPE_I32: case SINTER_DTYPE_U32: return 4;
  case SINTER_DTYPE_F16: case SINTER_DTYPE_BF16: case SINTER_DTYPE_I16: case SINTER_DTYPE_U16:
    return 2;
  case SINTER_DTYPE_I64: case SINTER_DTYPE_U64: case SINTER_DTYPE_F64: return 8;
  case SINTER_DTYPE_BOOL: case SINTER_DTYPE_F8_E4M3: case SINTER_DTYPE_U8: case SINTER_DTYPE_I8:
    return 1;
  default: return 0;
  }
}

const char *dtype_name(DLDataType t, char *buf, size_t size) {
  // Codes as DLPack numbers them (kDLBool = 6 is newer than some dlpack.h headers).
  struct Named {
    uint8_t code, bits;
    const char *name;
  };
  static const Named kNames[] = {{0, 64, "int64"},   {0, 32, "int32"},    {0, 16, "int16"},
                                 {0, 8, "int8"},     {1, 8, "uint8"},     {1, 16, "uint16"},
                                 {1, 32, "uint32"},  {1, 64, "uint64"},     {2, 32, "float32"},
                                 {2, 16, "float16"}, {2, 64, "float64"},  {4, 16, "bfloat16"},
                                 {6, 8, "bool"},     {10, 8, "float8_e4m3fn"}};
  if (t.lanes == 1)
    for (const Named &n : kNames)
      if (n.code == t.code && n.bits == t.bits)
        return n.name;
  std::snprintf(buf, size, "(code %u, bits %u, lanes %u)", unsigned(t.code), unsigned(t.bits),
                unsigned(t.lanes));
  return buf;
}

IoExpect make_io_expect(const sinter_entry &p) {
  auto one = [](const char *role, const sinter_tensor_info &info) {
    TensorExpect e{};
    e.role = role;
    e.name = info.name ? info.name : "";
    e.dtype = to_dl_dtype(info.dtype);
    e.ndim = info.rank;
    uint64_t count = 1;
    for (int i = info.rank - 1; i >= 0; --i) {
      e.shape[i] = info.shape[i];
      e.strides[i] = static_cast<int64_t>(count);
      count *= static_cast<uint64_t>(info.shape[i]);
    }
    e.bytes = count * dtype_bytes(info.dtype);
    return e;
  };
  IoExpect io;
  io.inputs.reserve(p.num_inputs);
  io.outputs.reserve(p.num_outputs);
  for (uint32_t i = 0; i < p.num_inputs; ++i)
    io.inputs.push_back(one("input", p.inputs[i]));
  for (uint32_t i = 0; i < p.num_outputs; ++i)
    io.outputs.push_back(one("output", p.outputs[i]));
  return io;
}

IoExpect make_io_expect(const sinter_program &p) { return make_io_expect(legacy_entry(p)); }

namespace {

// Formats "[2, 3]" into buf.
const char *shape_text(const int64_t *shape, int ndim, char *buf, size_t size) {
  size_t n = static_cast<size_t>(std::snprintf(buf, size, "["));
  for (int i = 0; i < ndim && n < size; ++i)
    n += static_cast<size_t>(
        std::snprintf(buf + n, size - n, i ? ", %lld" : "%lld", static_cast<long long>(shape[i])));
  if (n < size)
    std::snprintf(buf + n, size - n, "]");
  return buf;
}

sinter_status check_tensor(const TensorExpect &e, const DLTensor &t, int device_id) {
  if (t.device.device_type != kDLCUDA)
    return fail(SINTER_INVALID_ARGUMENT,
                "%s '%s': expected a CUDA device tensor (kDLCUDA = %d), got device type %d",
                e.role, e.name, int(kDLCUDA), int(t.device.device_type));
  if (device_id >= 0 && t.device.device_id != device_id)
    return fail(SINTER_INVALID_ARGUMENT, "%s '%s': expected CUDA device %d, got device %d",
                e.role, e.name, device_id, t.device.device_id);
  if (t.dtype.code != e.dtype.code || t.dtype.bits != e.dtype.bits ||
      t.dtype.lanes != e.dtype.lanes) {
    char a[48], b[48];
    return fail(SINTER_INVALID_ARGUMENT, "%s '%s': expected dtype %s, got %s", e.role, e.name,
                dtype_name(e.dtype, a, sizeof a), dtype_name(t.dtype, b, sizeof b));
  }
  if (t.ndim != e.ndim)
    return fail(SINTER_INVALID_ARGUMENT, "%s '%s': expected %d dimensions, got %d", e.role,
                e.name, e.ndim, t.ndim);
  if (e.ndim > 0 && !t.shape)
    return fail(SINTER_INVALID_ARGUMENT, "%s '%s': shape is null", e.role, e.name);
  for (int i = 0; i < e.ndim; ++i) {
    if (t.shape[i] != e.shape[i]) {
      char a[256], b[256];
      return fail(SINTER_INVALID_ARGUMENT, "%s '%s': expected shape %s, got %s", e.role, e.name,
                  shape_text(e.shape, e.ndim, a, sizeof a), shape_text(t.shape, t.ndim, b, sizeof b));
    }
  }
  if (t.strides) {
    for (int i = 0; i < e.ndim; ++i) {
      // A dimension of size 1 is never stepped over, so its stride does not matter.
      if (e.shape[i] != 1 && t.strides[i] != e.strides[i]) {
        char a[256], b[256];
        return fail(SINTER_INVALID_ARGUMENT,
                    "%s '%s': expected contiguous row-major strides %s, got %s", e.role, e.name,
                    shape_text(e.strides, e.ndim, a, sizeof a),
                    shape_text(t.strides, t.ndim, b, sizeof b));
      }
    }
  }
  // A tensor with no elements is never read or written: frameworks give it a null pointer.
  if (e.bytes == 0)
    return SINTER_OK;
  if (!t.data)
    return fail(SINTER_INVALID_ARGUMENT, "%s '%s': data pointer is null", e.role, e.name);
  const uintptr_t address = reinterpret_cast<uintptr_t>(tensor_address(t));
  if (address % kIoAlignment != 0)
    return fail(SINTER_INVALID_ARGUMENT, "%s '%s': expected %u-byte aligned data, got address %p",
                e.role, e.name, unsigned(kIoAlignment), static_cast<void *>(tensor_address(t)));
  return SINTER_OK;
}

sinter_status check_list(const std::vector<TensorExpect> &expect, const DLTensor *tensors,
                         uint32_t count, const char *what, int device_id) {
  if (count != expect.size())
    return fail(SINTER_INVALID_ARGUMENT, "expected %zu %s, got %u", expect.size(), what, count);
  if (count > 0 && !tensors)
    return fail(SINTER_INVALID_ARGUMENT, "%s is null but %u tensors are expected", what, count);
  for (uint32_t i = 0; i < count; ++i) {
    sinter_status s = check_tensor(expect[i], tensors[i], device_id);
    if (s != SINTER_OK)
      return s;
  }
  return SINTER_OK;
}

} // namespace

sinter_status validate_io(const IoExpect &expect, const DLTensor *inputs, uint32_t num_inputs,
                          const DLTensor *outputs, uint32_t num_outputs, int device_id) {
  sinter_status s = check_list(expect.inputs, inputs, num_inputs, "inputs", device_id);
  if (s != SINTER_OK)
    return s;
  return check_list(expect.outputs, outputs, num_outputs, "outputs", device_id);
}

sinter_status validate_io(const sinter_program *program, const DLTensor *inputs,
                          uint32_t num_inputs, const DLTensor *outputs, uint32_t num_outputs,
                          int device_id) {
  if (!program)
    return fail(SINTER_INVALID_ARGUMENT, "program is null");
  return validate_io(make_io_expect(*program), inputs, num_inputs, outputs, num_outputs,
                     device_id);
}

} // namespace sinter::rt
