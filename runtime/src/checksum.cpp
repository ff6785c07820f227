#include "checksum.h"

#include <algorithm>
#include <cstring>

namespace sinter::checksum {

namespace {

// One 64-byte block into the lanes (words little-endian, as every supported host is).
inline void absorb_block(uint64_t (&lanes)[kLanes], const unsigned char *block) {
  uint64_t w[kLanes];
  std::memcpy(w, block, sizeof w);
  for (int i = 0; i < kLanes; ++i)
    lanes[i] = (lanes[i] ^ w[i]) * kPrime;
}

} // namespace

Hasher::Hasher() {
  for (uint64_t &lane : lanes_)
    lane = kBasis;
}

void Hasher::update(const void *data, uint64_t size) {
  if (size == 0) // data may be null then (an empty blob)
    return;
  const unsigned char *p = static_cast<const unsigned char *>(data);
  total_ += size;
  if (pending_bytes_ > 0) {
    const uint64_t take = std::min<uint64_t>(size, kBlockBytes - pending_bytes_);
    std::memcpy(pending_ + pending_bytes_, p, take);
    pending_bytes_ += unsigned(take);
    p += take;
    size -= take;
    if (pending_bytes_ < kBlockBytes)
      return;
    absorb_block(lanes_, pending_);
    pending_bytes_ = 0;
  }
  for (; size >= uint64_t(kBlockBytes); p += kBlockBytes, size -= kBlockBytes)
    absorb_block(lanes_, p);
  std::memcpy(pending_, p, size);
  pending_bytes_ = unsigned(size);
}

uint64_t Hasher::finish() const {
  uint64_t tail = kBasis;
  for (unsigned i = 0; i < pending_bytes_; ++i)
    tail = (tail ^ pending_[i]) * kPrime;
  uint64_t h = kBasis;
  for (uint64_t lane : lanes_)
    h = (h ^ lane) * kPrime;
  h = (h ^ tail) * kPrime;
  return (h ^ total_) * kPrime;
}

uint64_t of(const void *data, uint64_t size) {
  Hasher h;
  h.update(data, size);
  return h.finish();
}

} // namespace sinter::checksum
