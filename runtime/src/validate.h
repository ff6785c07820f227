// Run-time I/O validation, kept free of CUDA calls so unit tests run it without a GPU.
#pragma once

#include "sinter/program.h"
#include "sinter/sinter.h"

#include <vector>

namespace sinter::rt {

// What one I/O tensor must look like, precomputed once per model so that the check in
// sinter_run is plain integer comparison.
struct TensorExpect {
  const char *role; // "input" or "output", for messages
  const char *name;
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[SINTER_MAX_RANK];
  int64_t strides[SINTER_MAX_RANK]; // compact row-major, in elements
  uint64_t bytes;
};

struct IoExpect {
  std::vector<TensorExpect> inputs;
  std::vector<TensorExpect> outputs;
};

// Pointers the kernels may load 16 bytes at a time from.
constexpr uintptr_t kIoAlignment = 16;

DLDataType to_dl_dtype(int32_t sinter_dtype);

// The public description of a program tensor: name borrowed from the program, unused shape
// entries zero.
void fill_tensor_desc(const sinter_tensor_info &t, sinter_tensor_desc *out);

// The public description of a launch; strings borrowed from the program.
void fill_launch_info(const sinter_launch_desc &l, sinter_launch_info *out);
// Element size in bytes, 0 for an unknown dtype.
uint64_t dtype_bytes(int32_t sinter_dtype);
// "float32", "bfloat16", ... or "code C bits B lanes L"; `buf` holds the latter.
const char *dtype_name(DLDataType t, char *buf, size_t size);

// What entry `entry`'s inputs and outputs must look like.
IoExpect make_io_expect(const sinter_entry &entry);
// The same for the legacy single-entry fields (entry 0).
IoExpect make_io_expect(const sinter_program &program);

// Checks counts, null pointers, device type/id (device_id < 0 accepts any), dtype, ndim, shape,
// strides and alignment. On failure returns INVALID_ARGUMENT with a message naming the tensor.
sinter_status validate_io(const IoExpect &expect, const DLTensor *inputs, uint32_t num_inputs,
                          const DLTensor *outputs, uint32_t num_outputs, int device_id);

// Convenience for tests and tools: builds the expectations from `program` first.
sinter_status validate_io(const sinter_program *program, const DLTensor *inputs,
                          uint32_t num_inputs, const DLTensor *outputs, uint32_t num_outputs,
                          int device_id);

// The address a tensor's data starts at.
inline char *tensor_address(const DLTensor &t) {
  return static_cast<char *>(t.data) + t.byte_offset;
}

} // namespace sinter::rt
