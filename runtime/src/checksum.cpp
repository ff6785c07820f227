#include "checksum.h"

// Header-only xxHash: every function static inline in this file, nothing exported or linked.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sinter::checksum {

static_assert(sizeof(XXH3_state_t) <= Hasher::kStateBytes &&
                  Hasher::kStateBytes % alignof(XXH3_state_t) == 0 && alignof(XXH3_state_t) <= 64,
              "Hasher::kStateBytes no longer holds xxHash's XXH3_state_t");

namespace {
XXH3_state_t *state(unsigned char *storage) { return reinterpret_cast<XXH3_state_t *>(storage); }
const XXH3_state_t *state(const unsigned char *storage) {
  return reinterpret_cast<const XXH3_state_t *>(storage);
}
} // namespace

Hasher::Hasher() : state_{} {
  // The state is plain data (a Hasher may be copied); the reset sets every field the default
  // secret and seed use.
  XXH3_64bits_reset(state(state_));
}

void Hasher::update(const void *data, uint64_t size) {
  if (size == 0) // data may be null then (an empty blob)
    return;
  // size_t is 64 bits on every supported host.
  XXH3_64bits_update(state(state_), data, size_t(size));
}

uint64_t Hasher::finish() const { return XXH3_64bits_digest(state(state_)); }

uint64_t of(const void *data, uint64_t size) {
  return size == 0 ? XXH3_64bits(nullptr, 0) : XXH3_64bits(data, size_t(size));
}

} // namespace sinter::checksum
