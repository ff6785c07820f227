// A strict reader for safetensors files (https://github.com/huggingface/safetensors):
//
//   [8 bytes: N, little-endian u64][N bytes: JSON header][data section]
//
// The header is one JSON object mapping each tensor name to
// {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]} (offsets into the data
// section), plus an optional "__metadata__" object of string values. Parsing is strict, as the
// reference implementation is: no unknown keys, no duplicate names, integer shapes and offsets
// only, byte ranges matching dtype x shape, and the tensors tiling the data section exactly
// (sorted by offset they start at 0, touch without gaps or overlaps and end at its end).
// Every rejection is a message naming the tensor at fault. No CUDA here: the unit tests run it
// on any machine.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sinter::safetensors {

// The reference implementation's limit on the header length.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct TensorEntry {
  std::string name;
  std::string dtype; // as written in the file: "F32", "BF16", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0; // byte range in the data section
};

struct Header {
  uint64_t header_bytes = 0; // N
  uint64_t data_start = 0;   // 8 + N: file offset of the data section
  uint64_t data_bytes = 0;   // file size - data_start
  std::vector<TensorEntry> tensors; // in file (header) order
  std::map<std::string, std::string> metadata;
  const TensorEntry *find(const std::string &name) const;
  std::map<std::string, size_t> index; // name -> position in tensors
};

// Element size in bytes of a safetensors dtype string, 0 if unknown.
uint64_t dtype_bytes(const std::string &dtype);

// Parses the JSON header text `json` (N bytes, trailing spaces allowed) of a file whose data
// section holds `data_bytes` bytes. On failure returns false with `error` set (no prefix).
bool parse_header(const char *json, uint64_t size, uint64_t data_bytes, Header &out,
                  std::string &error);

// Reads and parses the header of the open file `fd` of `file_bytes` bytes (length prefix,
// limits, JSON). On failure returns false with `error` set (no prefix).
bool read_header(int fd, uint64_t file_bytes, Header &out, std::string &error);

// pread() until `size` bytes are read at `offset` (EINTR and short reads retried). False with
// `error` set on an I/O error or a premature end of file.
bool pread_full(int fd, void *buffer, uint64_t size, uint64_t offset, std::string &error);

} // namespace sinter::safetensors
