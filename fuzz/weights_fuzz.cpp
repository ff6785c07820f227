// libFuzzer target: raw bytes as an external weights file (safetensors) through the runtime's
// weights loader: header parse, match against the program's weight table, and streaming into
// the blob (with and without per-tensor checksums), all without CUDA.
//
// Any input must either load or fail with CORRUPT_WEIGHTS / INVALID_ARGUMENT and a message
// naming the file; the loader must never write outside the weight blob or read past the file
// (ASan), allocate what the file only declares (libFuzzer's -malloc_limit_mb), or hang.
//
// The table is a LoRA-MLP-like set: f32 [4,4] "w1", f32 [4] "b1", bf16 [2,3] "w2", an fp8
// weight as --weight-dtype fp8 writes it (e4m3 [2,64] "w3.fp8", f32 [2] "w3.fp8_scale"), and an
// int4 weight as --weight-dtype int4 writes it (u8 [2,64] "w4.int4": K = 128 packed two to a
// byte, f32 [2,1] "w4.int4_scale"). Seeds are safetensors files holding it
// (fuzz/corpus/weights, made by fuzz/make_weights_seeds.py).
// SINTER_FUZZ_PRINT_ERRORS=1 prints each outcome.
#include "error.h"
#include "checksum.h"
#include "model.h"
#include "safetensors.h"
#include "weights_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void bug(const char *what) {
  std::fprintf(stderr, "sinter-weights-fuzz: %s (last error: %s)\n", what, sinter_last_error());
  std::abort();
}

// Checksums are those of the seeds' values: byte j of each tensor is (j * 7 + 1) & 0xff.
sinter_weight_info kTable[] = {
    {"w1", SINTER_DTYPE_F32, 2, {4, 4}, 0, 64, 0},
    {"b1", SINTER_DTYPE_F32, 1, {4}, 64, 16, 0},
    {"w2", SINTER_DTYPE_BF16, 2, {2, 3}, 80, 12, 0},
    {"w3.fp8", SINTER_DTYPE_F8_E4M3, 2, {2, 64}, 96, 128, 0},
    {"w3.fp8_scale", SINTER_DTYPE_F32, 1, {2}, 224, 8, 0},
    {"w4.int4", SINTER_DTYPE_U8, 2, {2, 64}, 240, 128, 0},
    {"w4.int4_scale", SINTER_DTYPE_F32, 2, {2, 1}, 368, 8, 0},
};
constexpr uint64_t kBlobBytes = 376;

sinter_program makeProgram() {
  for (sinter_weight_info &w : kTable) {
    std::vector<unsigned char> values(w.bytes);
    for (size_t j = 0; j < values.size(); ++j)
      values[j] = static_cast<unsigned char>(j * 7 + 1);
    w.checksum = sinter::checksum::of(values.data(), values.size());
  }
  sinter_program p{};
  p.version = SINTER_PROGRAM_VERSION;
  p.weight_bytes = kBlobBytes;
  p.weights_external = 1;
  p.num_weight_tensors = sizeof kTable / sizeof kTable[0];
  p.weight_tensors = kTable;
  return p;
}

// Host staging ring of two small buffers; every submit must land inside the blob.
class CheckedSink final : public sinter::rt::WeightSink {
public:
  std::vector<unsigned char> blob = std::vector<unsigned char>(kBlobBytes);
  uint64_t chunk_bytes() const override { return 8; }
  sinter_status acquire(unsigned char **buffer) override {
    *buffer = staging_[next_ = (next_ + 1) % 2].data();
    return SINTER_OK;
  }
  sinter_status submit(unsigned char *buffer, uint64_t offset, uint64_t bytes) override {
    if (bytes > chunk_bytes() || offset > blob.size() || bytes > blob.size() - offset)
      bug("the loader wrote outside the weight blob");
    std::memcpy(blob.data() + offset, buffer, bytes);
    return SINTER_OK;
  }

private:
  std::vector<unsigned char> staging_[2] = {std::vector<unsigned char>(8),
                                            std::vector<unsigned char>(8)};
  int next_ = 0;
};

} // namespace

// The runtime archive expects the generated code's table; this binary has none of its own.
extern "C" const sinter_program *sinter_generated_program(void) { return nullptr; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("sinter-weights-fuzz", MFD_CLOEXEC);
  if (fd < 0)
    bug("memfd_create failed");
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0)
      bug("cannot write the memfd");
    done += size_t(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  static const sinter_program p = makeProgram();
  for (bool allowNewValues : {true, false}) {
    sinter::rt::WeightsFile file;
    sinter_status s = sinter::rt::open_weights_file(p, path.c_str(), file);
    if (s == SINTER_OK) {
      CheckedSink sink;
      s = sinter::rt::stream_weights(p, file, allowNewValues, sink);
    }
    static const bool print = std::getenv("SINTER_FUZZ_PRINT_ERRORS") != nullptr;
    if (print)
      std::fprintf(stderr, "%s\n", s == SINTER_OK ? "loaded" : sinter_last_error());
    if (s != SINTER_OK && s != SINTER_CORRUPT_WEIGHTS)
      bug("the loader failed with a status other than CORRUPT_WEIGHTS");
    if (s != SINTER_OK && !std::strstr(sinter_last_error(), path.c_str()))
      bug("the message does not name the weights file");
  }
  close(fd);
  return 0;
}
