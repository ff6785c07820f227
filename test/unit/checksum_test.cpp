// The weight checksum (runtime/src/checksum.h): XXH3-64 against xxHash's published test vectors,
// and the incremental Hasher against the one-call checksum for every way of cutting the data.
#include "checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

// xxHash's sanity-check buffer (cli/xsum_sanity_check.c, XSUM_fillTestBuffer).
std::vector<unsigned char> sanity_buffer(size_t n) {
  std::vector<unsigned char> b(n);
  uint64_t gen = 2654435761u; // PRIME32
  for (unsigned char &c : b) {
    c = static_cast<unsigned char>(gen >> 56);
    gen *= 11400714785074694797ull; // PRIME64
  }
  return b;
}

// Data whose bytes all differ from their neighbours' at every stride the hash works in.
std::vector<unsigned char> pattern(size_t n) {
  std::vector<unsigned char> b(n);
  for (size_t i = 0; i < n; ++i)
    b[i] = static_cast<unsigned char>((i * 131) ^ (i >> 8) ^ 7);
  return b;
}

uint64_t in_pieces(const std::vector<unsigned char> &data, uint64_t piece) {
  sinter::checksum::Hasher h;
  for (uint64_t at = 0; at < data.size(); at += piece)
    h.update(data.data() + at, std::min<uint64_t>(piece, data.size() - at));
  return h.finish();
}

// The recorded checksums in every compiled model depend on this exact function: XXH3_64bits,
// seed 0, default secret. Lengths cover each of XXH3's size classes.
TEST(WeightChecksum, IsXxh3With64BitsOnThePublishedVectors) {
  const struct {
    size_t len;
    uint64_t hash;
  } kVectors[] = {
      {0, 0x2D06800538D394C2ull},    {1, 0xC44BDFF4074EECDBull},    {6, 0x27B56A84CD2D7325ull},
      {12, 0xA713DAF0DFBB77E7ull},   {24, 0xA3FE70BF9D3510EBull},   {48, 0x397DA259ECBA1F11ull},
      {80, 0xBCDEFBBB2C47C90Aull},   {195, 0xCD94217EE362EC3Aull},  {403, 0xCDEB804D65C6DEA4ull},
      {512, 0x617E49599013CB6Bull},  {2048, 0xDD59E2C3A5F038E0ull}, {2240, 0x6E73A90539CF2948ull},
      {2367, 0xCB37AEB9E5D361EDull},
  };
  const std::vector<unsigned char> buffer = sanity_buffer(4096 + 64 + 1);
  for (const auto &v : kVectors) {
    EXPECT_EQ(sinter::checksum::of(v.len ? buffer.data() : nullptr, v.len), v.hash) << v.len;
    sinter::checksum::Hasher h;
    h.update(buffer.data(), v.len);
    EXPECT_EQ(h.finish(), v.hash) << v.len;
    EXPECT_EQ(in_pieces(std::vector<unsigned char>(buffer.begin(), buffer.begin() + long(v.len)), 1),
              v.hash)
        << v.len << " byte by byte";
  }
}

TEST(WeightChecksum, EmptyAndNull) {
  sinter::checksum::Hasher h;
  EXPECT_EQ(h.finish(), sinter::checksum::of(nullptr, 0));
  h.update(nullptr, 0); // an empty blob may come without a pointer
  EXPECT_EQ(h.finish(), 0x2D06800538D394C2ull);
}

// Sizes around XXH3's internal boundaries (16, 128, 240 bytes one-shot classes; 64-byte
// stripes; the 256-byte stream buffer; 1024-byte blocks), each cut into pieces of sizes that
// fall on, before and after those boundaries.
TEST(WeightChecksum, PiecesGiveTheWholeChecksum) {
  const std::vector<unsigned char> all = pattern(70000);
  for (size_t n : {0, 1, 3, 16, 17, 128, 129, 240, 241, 255, 256, 257, 511, 512, 1023, 1024,
                   1025, 4096, 4097, 65536, 70000}) {
    const std::vector<unsigned char> data(all.begin(), all.begin() + long(n));
    const uint64_t whole = sinter::checksum::of(data.data(), n);
    for (uint64_t piece : {1, 2, 7, 63, 64, 65, 240, 255, 256, 257, 1024, 1025, 4096, 1 << 20})
      EXPECT_EQ(in_pieces(data, piece), whole) << n << " bytes in pieces of " << piece;
  }
  // Irregular pieces, empty ones included.
  uint64_t state = 12345;
  for (int round = 0; round < 20; ++round) {
    sinter::checksum::Hasher h;
    for (size_t at = 0; at < all.size();) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const size_t piece = std::min<size_t>((state >> 33) % 3000, all.size() - at);
      h.update(all.data() + at, piece);
      at += piece;
    }
    EXPECT_EQ(h.finish(), sinter::checksum::of(all.data(), all.size())) << round;
  }
}

TEST(WeightChecksum, FinishDoesNotConsumeAndCopiesContinue) {
  const std::vector<unsigned char> data = pattern(3000);
  sinter::checksum::Hasher h;
  h.update(data.data(), 1000);
  EXPECT_EQ(h.finish(), sinter::checksum::of(data.data(), 1000));
  sinter::checksum::Hasher copy = h;
  h.update(data.data() + 1000, 2000);
  copy.update(data.data() + 1000, 2000);
  EXPECT_EQ(h.finish(), sinter::checksum::of(data.data(), 3000));
  EXPECT_EQ(copy.finish(), h.finish());
}

TEST(WeightChecksum, SeesOneFlippedBitAndSwappedBlocks) {
  const std::vector<unsigned char> data = pattern(4096);
  const uint64_t base = sinter::checksum::of(data.data(), data.size());
  for (size_t byte : {0, 9, 64, 255, 1024, 4095}) {
    std::vector<unsigned char> flipped = data;
    flipped[byte] ^= 0x80;
    EXPECT_NE(sinter::checksum::of(flipped.data(), flipped.size()), base) << byte;
  }
  std::vector<unsigned char> swapped = data;
  std::swap_ranges(swapped.begin(), swapped.begin() + 1024, swapped.begin() + 1024);
  EXPECT_NE(sinter::checksum::of(swapped.data(), swapped.size()), base);
  // A longer blob with the same prefix differs too (the length is hashed).
  std::vector<unsigned char> longer = data;
  longer.push_back(0);
  EXPECT_NE(sinter::checksum::of(longer.data(), longer.size()), base);
}

} // namespace
