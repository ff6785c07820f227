// The weight checksum of sinter_program and sinter_weight_info (program.h), shared by the
// compiler (which records it) and the runtime (which checks it at load).
//
// FNV-1a 64 over the little-endian 8-byte words of the data in 8 interleaved lanes: lane i
// takes word i of every 64-byte block, h = (h ^ word) * prime. The bytes after the last whole
// block go through byte-wise FNV-1a; the result is FNV-1a over the 8 lanes, that tail hash and
// the byte count. Byte-wise FNV-1a is one dependent multiply per byte (about 1.8 s per GiB on
// a 2.5 GHz core, 4 s at every load of a 2.5 GB model); 8 independent lanes over words take a
// multiply per 8 bytes per lane, and memory bandwidth bounds them.
#ifndef SINTER_RUNTIME_CHECKSUM_H
#define SINTER_RUNTIME_CHECKSUM_H

#include <cstdint>

namespace sinter::checksum {

constexpr uint64_t kBasis = 0xcbf29ce484222325ull;
constexpr uint64_t kPrime = 0x100000001b3ull;
constexpr int kLanes = 8;
constexpr int kBlockBytes = kLanes * 8;

// Incremental: update() with the data in any number of pieces gives the same finish() as one
// call with all of it.
class Hasher {
public:
  Hasher();
  void update(const void *data, uint64_t size);
  uint64_t finish() const;

private:
  uint64_t lanes_[kLanes];
  unsigned char pending_[kBlockBytes];
  unsigned pending_bytes_ = 0;
  uint64_t total_ = 0;
};

// The checksum of `size` bytes at `data`.
uint64_t of(const void *data, uint64_t size);

} // namespace sinter::checksum

#endif
