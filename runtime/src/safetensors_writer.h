// Writes a safetensors file from (name, dtype, shape, bytes) tensors. Plain C++17 and POSIX, no
// CUDA and no other part of the runtime, so the compiler can link it for --weights=external:
//
//   #include "safetensors_writer.h"           // runtime/src; library target sinter_safetensors
//   std::vector<sinter::safetensors::TensorData> t;
//   t.push_back({"layer0.w", "F32", {64, 32}, bytes_ptr, 64 * 32 * 4});
//   std::string error;
//   if (!sinter::safetensors::write_file("model.safetensors", t, {{"format", "pt"}}, error)) ...
//
// Tensors are laid out in the order given, back to back (the format allows no gaps); the header
// is padded with spaces to a multiple of 8 bytes so the data section starts 8-byte aligned.
// The file is written to "<path>.tmp" and renamed over `path` only when complete.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sinter::safetensors {

struct TensorData {
  std::string name;           // unique, non-empty, not "__metadata__"
  std::string dtype;          // "F32", "F16", "BF16", "I64", "I32", "BOOL", ...
  std::vector<int64_t> shape; // every dimension >= 0
  const void *data = nullptr; // `bytes` bytes, little-endian, row-major
  uint64_t bytes = 0;         // must equal element size x product(shape)
};

// The safetensors dtype string for a sinter_dtype value (program.h), nullptr if none.
const char *dtype_for_sinter(int32_t sinter_dtype);


// The complete header (length prefix excluded, padding included) write_file would write.
bool header_json(const std::vector<TensorData> &tensors,
                 const std::map<std::string, std::string> &metadata, std::string &json,
                 std::string &error);

// Writes the file. False with `error` set (naming the tensor or the path) on failure.
bool write_file(const std::string &path, const std::vector<TensorData> &tensors,
                const std::map<std::string, std::string> &metadata, std::string &error);

} // namespace sinter::safetensors
