// External weights: matching a safetensors file against the program's weight table and
// streaming its tensors into the weight blob. No CUDA here (the device sink lives in model.cpp),
// so the unit tests exercise every check with a host sink on any machine.
#pragma once

#include "safetensors.h"

#include "sinter/program.h"
#include "sinter/sinter.h"

#include <string>
#include <vector>

namespace sinter::rt {

// Structural checks of the weight table (names, dtypes, shapes, byte ranges inside the blob and
// not overlapping). INTERNAL on failure ("malformed program: ...").
sinter_status check_weight_table(const sinter_program &program);

// An open weights file whose header was parsed and matched against the table.
struct WeightsFile {
  std::string path;
  int fd = -1;
  uint64_t file_bytes = 0;
  safetensors::Header header;
  // For table entry i: file offset of its data.
  std::vector<uint64_t> file_offset;
  WeightsFile() = default;
  WeightsFile(const WeightsFile &) = delete;
  WeightsFile &operator=(const WeightsFile &) = delete;
  ~WeightsFile();
};

// Opens `path`, parses its header and checks that every tensor of the program's table is in it
// with the same dtype and shape (extra tensors in the file are ignored). INVALID_ARGUMENT when
// the file cannot be opened, CORRUPT_WEIGHTS (message naming the file and the tensor) for a
// malformed header or a mismatch. Reads no tensor data.
sinter_status open_weights_file(const sinter_program &program, const char *path,
                                WeightsFile &out);

// Where streamed bytes go: a ring of host staging buffers of chunk_bytes() each.
class WeightSink {
public:
  virtual ~WeightSink() = default;
  virtual uint64_t chunk_bytes() const = 0;
  // A staging buffer free to be filled (may wait for an earlier copy out of it to finish).
  virtual sinter_status acquire(unsigned char **buffer) = 0;
  // Copies the first `bytes` bytes of `buffer` (from acquire) to blob[blob_offset, +bytes).
  virtual sinter_status submit(unsigned char *buffer, uint64_t blob_offset, uint64_t bytes) = 0;
};

// Reads every table tensor from the file (in file order, chunk by chunk, with pread at 64-bit
// offsets) into the sink, checking each tensor's checksum (checksum.h) against the table unless
// `allow_new_values`. CORRUPT_WEIGHTS naming the tensor on a mismatch or read error.
sinter_status stream_weights(const sinter_program &program, const WeightsFile &file,
                             bool allow_new_values, WeightSink &sink);

// Name of the first table tensor whose bytes in `blob` fail their checksum, or nullptr.
const char *first_corrupt_tensor(const sinter_program &program, const unsigned char *blob);

} // namespace sinter::rt
