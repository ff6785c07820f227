// Load-time checks of the state table (program.h: sinter_state_info). The table names the
// regions of the state block for tools and users; launches address the block by offset, and
// check_program bounds those refs by state_bytes.
#include "model.h"

#include "error.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace sinter::rt {
namespace {


// Element size * product(shape) of a region, or false when the shape is malformed or the
// product does not fit in 63 bits (the message is set).
bool region_bytes(const sinter_state_info &s, uint64_t *out) {
  uint64_t bytes = dtype_bytes(s.dtype);
  if (bytes == 0) {
    fail(SINTER_INTERNAL, "malformed program: state '%s' has unknown dtype %d", s.name, s.dtype);
    return false;
  }
  if (s.rank < 0 || s.rank > SINTER_MAX_RANK) {
    fail(SINTER_INTERNAL, "malformed program: state '%s' has rank %d", s.name, s.rank);
    return false;
  }
  for (int d = 0; d < s.rank; ++d) {
    if (s.shape[d] <= 0) {
      fail(SINTER_INTERNAL, "malformed program: state '%s' has dimension %d of size %lld", s.name,
           d, static_cast<long long>(s.shape[d]));
      return false;
    }
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(s.shape[d]), &bytes) ||
        bytes > INT64_MAX) {
      fail(SINTER_INTERNAL, "malformed program: state '%s' has a byte size past 2^63", s.name);
      return false;
    }
  }
  *out = bytes;
  return true;
}

} // namespace

sinter_status check_state_table(const sinter_program &p) {
  if (p.num_states == 0)
    return SINTER_OK;
  if (!p.states)
    return fail(SINTER_INTERNAL, "malformed program: %u states but the state table is null",
                p.num_states);
  std::vector<uint32_t> by_offset(p.num_states);
  for (uint32_t i = 0; i < p.num_states; ++i) {
    const sinter_state_info &s = p.states[i];
    by_offset[i] = i;
    if (!s.name || !*s.name)
      return fail(SINTER_INTERNAL, "malformed program: state %u has no name", i);
    uint64_t bytes = 0;
    if (!region_bytes(s, &bytes))
      return SINTER_INTERNAL;
    if (s.bytes != bytes)
      return fail(SINTER_INTERNAL,
                  "malformed program: state '%s' has %llu bytes, its dtype and shape make %llu",
                  s.name, static_cast<unsigned long long>(s.bytes),
                  static_cast<unsigned long long>(bytes));
    if (s.offset % SINTER_BUFFER_ALIGNMENT != 0)
      return fail(SINTER_INTERNAL,
                  "malformed program: state '%s' starts at byte %llu, not %llu-byte aligned",
                  s.name, static_cast<unsigned long long>(s.offset),
                  static_cast<unsigned long long>(SINTER_BUFFER_ALIGNMENT));
    if (s.offset > p.state_bytes || s.bytes > p.state_bytes - s.offset)
      return fail(SINTER_INTERNAL,
                  "malformed program: state '%s' spans bytes [%llu, %llu) of a %llu-byte state "
                  "block",
                  s.name, static_cast<unsigned long long>(s.offset),
                  static_cast<unsigned long long>(s.offset + s.bytes),
                  static_cast<unsigned long long>(p.state_bytes));
    for (uint32_t j = 0; j < i; ++j)
      if (std::strcmp(p.states[j].name, s.name) == 0)
        return fail(SINTER_INTERNAL, "malformed program: states %u and %u are both named '%s'", j,
                    i, s.name);
  }
  // Disjoint: sorted by offset (stably, so messages name them in table order), each region
  // ends at or before the next one starts.
  std::stable_sort(by_offset.begin(), by_offset.end(), [&](uint32_t a, uint32_t b) {
    return p.states[a].offset < p.states[b].offset;
  });
  for (uint32_t k = 1; k < p.num_states; ++k) {
    const sinter_state_info &a = p.states[by_offset[k - 1]], &b = p.states[by_offset[k]];
    if (a.offset + a.bytes > b.offset)
      return fail(SINTER_INTERNAL,
                  "malformed program: states '%s' [%llu, %llu) and '%s' [%llu, %llu) overlap",
                  a.name, static_cast<unsigned long long>(a.offset),
                  static_cast<unsigned long long>(a.offset + a.bytes), b.name,
                  static_cast<unsigned long long>(b.offset),
                  static_cast<unsigned long long>(b.offset + b.bytes));
  }
  return SINTER_OK;
}

} // namespace sinter::rt
