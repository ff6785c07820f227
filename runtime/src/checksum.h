// The weight checksum of sinter_program and sinter_weight_info (program.h), shared by the
// compiler (which records it) and the runtime (which checks it at load).
//
// XXH3-64 (xxHash, default secret, seed 0) of the bytes. It guards against a corrupt or
// mismatched blob or weights file, not against an attacker, so a fast non-cryptographic hash
// is enough; it is checked at every load, over the whole blob (gigabytes for an LLM), so its
// speed is load time. XXH3 runs near memory bandwidth on one core with plain SSE2 (about 1.2x
// the former 8-lane FNV-1a over a 2.5 GB buffer, 2x in cache) and is a published, stable
// format with test vectors. xxhash.h is used header-only (XXH_INLINE_ALL in checksum.cpp):
// nothing is linked dynamically and no symbol is added to a model .so's exports.
#ifndef SINTER_RUNTIME_CHECKSUM_H
#define SINTER_RUNTIME_CHECKSUM_H

#include <cstdint>

namespace sinter::checksum {

// Incremental: update() with the data in any number of pieces gives the same finish() as one
// call with all of it, and the same value as of().
class Hasher {
public:
  Hasher();
  void update(const void *data, uint64_t size);
  uint64_t finish() const;

  // Storage for xxHash's XXH3_state_t (576 bytes, 64-byte aligned in xxHash 0.8; checked by a
  // static_assert in checksum.cpp), kept opaque so that this header needs no xxhash.h.
  static constexpr unsigned kStateBytes = 576;

private:
  alignas(64) unsigned char state_[kStateBytes];
};

// The checksum of `size` bytes at `data` (data may be null when size is 0).
uint64_t of(const void *data, uint64_t size);

} // namespace sinter::checksum

#endif
