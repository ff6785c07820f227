// External weights: the strict safetensors parser, the writer, matching a file against the
// program's weight table, chunked streaming with per-tensor checksums (host sink, so no GPU is
// needed), files larger than 4 GB (sparse), and the load entry points' error paths.
#include "fake_program.h"
#include "model.h"
#include "safetensors.h"
#include "safetensors_writer.h"
#include "test_util.h"
#include "weights_file.h"

#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace st = sinter::safetensors;
using sinter::rt::load_model;
using sinter::rt::LoadOptions;
using sinter::test::fake_program;

namespace {

// Every file a test names here is removed when the test binary exits (the "huge" one is a
// sparse 4 GB file): repeated runs would otherwise fill the temp directory.
struct TempFiles {
  std::vector<std::string> paths;
  ~TempFiles() {
    for (const std::string &p : paths) ::unlink(p.c_str());
  }
};

std::string temp_path(const std::string &name) {
  static TempFiles files;
  std::string path = ::testing::TempDir() + "sinter_wf_" + std::to_string(::getpid()) + "_" + name;
  files.paths.push_back(path);
  return path;
}

// The fake program's 160-byte blob described by a two-tensor table: w f32[4,8] at 0, b f32[8]
// at 128.
struct TableProgram {
  sinter_program p;
  sinter_weight_info table[2];
  explicit TableProgram(bool external) {
    p = fake_program();
    table[0] = {"w", SINTER_DTYPE_F32, 2, {4, 8}, 0, 128, 0};
    table[1] = {"b", SINTER_DTYPE_F32, 1, {8}, 128, 32, 0};
    for (auto &t : table)
      t.checksum = sinter::test::reference_checksum(p.weights + t.offset, t.bytes);
    p.num_weight_tensors = 2;
    p.weight_tensors = table;
    if (external) {
      p.weights_external = 1;
      p.weights = nullptr;
    }
  }
  const unsigned char *blob() const { return fake_program().weights; }
};

// Writes the blob's tensors (optionally changed) to a safetensors file with the writer.
std::string write_checkpoint(const std::string &name, float scale = 1.0f,
                             bool b_first = true) {
  const unsigned char *blob = fake_program().weights;
  static std::vector<float> w(32), b(8);
  std::memcpy(w.data(), blob, 128);
  std::memcpy(b.data(), blob + 128, 32);
  for (float &v : w) v *= scale;
  for (float &v : b) v *= scale;
  std::vector<st::TensorData> t;
  st::TensorData tw{"w", "F32", {4, 8}, w.data(), 128};
  st::TensorData tb{"b", "F32", {8}, b.data(), 32};
  st::TensorData extra{"unused", "I64", {2}, w.data(), 16}; // extra tensors are ignored
  if (b_first) t = {tb, extra, tw};
  else t = {tw, tb, extra};
  std::string error, path = temp_path(name);
  EXPECT_TRUE(st::write_file(path, t, {{"format", "pt"}}, error)) << error;
  return path;
}

// Raw file from a header string and data bytes.
std::string write_raw(const std::string &name, const std::string &json, const std::string &data,
                      int64_t length_override = -1) {
  const std::string path = temp_path(name);
  std::ofstream f(path, std::ios::binary);
  uint64_t n = length_override >= 0 ? uint64_t(length_override) : json.size();
  for (int i = 0; i < 8; ++i, n >>= 8) f.put(char(n & 0xff));
  f << json << data;
  return path;
}

// Host stand-in for the device: a blob in memory, tiny chunks so that tensors span several.
class HostSink final : public sinter::rt::WeightSink {
public:
  explicit HostSink(uint64_t bytes, uint64_t chunk = 24) : blob(bytes, 0xee), chunk_(chunk) {
    staging.resize(chunk);
  }
  uint64_t chunk_bytes() const override { return chunk_; }
  sinter_status acquire(unsigned char **buffer) override {
    *buffer = staging.data();
    return SINTER_OK;
  }
  sinter_status submit(unsigned char *buffer, uint64_t offset, uint64_t bytes) override {
    EXPECT_LE(offset + bytes, blob.size());
    std::memcpy(blob.data() + offset, buffer, bytes);
    ++submits;
    return SINTER_OK;
  }
  std::vector<unsigned char> blob, staging;
  uint64_t chunk_;
  int submits = 0;
};

// --- the parser -------------------------------------------------------------------------------

TEST(Safetensors, WriterRoundTrip) {
  const std::string path = write_checkpoint("roundtrip");
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  struct stat s {};
  ASSERT_EQ(::fstat(fd, &s), 0);
  st::Header h;
  std::string error;
  ASSERT_TRUE(st::read_header(fd, uint64_t(s.st_size), h, error)) << error;
  ::close(fd);
  EXPECT_EQ(h.data_start % 8, 0u); // header padded to 8 bytes
  ASSERT_EQ(h.tensors.size(), 3u);
  EXPECT_EQ(h.metadata.at("format"), "pt");
  const st::TensorEntry *w = h.find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, "F32");
  EXPECT_EQ(w->shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(w->end - w->begin, 128u);
  EXPECT_EQ(h.data_bytes, 128u + 32u + 16u);
}

TEST(Safetensors, AcceptsEscapesEmptyShapesAndWhitespace) {
  const std::string json =
      " { \"__metadata__\" : { \"k\\u00e9\" : \"v\\n\" } ,\n"
      "   \"a\\/b\\ud83d\\ude00\" : {\"shape\":[],\"data_offsets\":[0,4],\"dtype\":\"I32\"},"
      "   \"z\": {\"dtype\":\"BF16\",\"shape\":[0,3],\"data_offsets\":[4,4]} }   ";
  st::Header h;
  std::string error;
  ASSERT_TRUE(st::parse_header(json.data(), json.size(), 4, h, error)) << error;
  EXPECT_NE(h.find("a/b\xf0\x9f\x98\x80"), nullptr);
  EXPECT_EQ(h.metadata.at("k\xc3\xa9"), "v\n");
  EXPECT_EQ(h.find("z")->shape, (std::vector<int64_t>{0, 3}));
}

struct BadHeader {
  const char *what, *json;
  uint64_t data_bytes;
  const char *message;
};

const BadHeader kBadHeaders[] = {
    {"not an object", "[]", 0, "expected '{' to open the header"},
    {"truncated json", "{\"w\":{\"dtype\":\"F32\",", 0,
     "malformed header at byte 20: syntax error while parsing object key - unexpected end of input"},
    {"trailing comma", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},}", 4,
     "unexpected '}'; expected string literal"},
    {"text after", "{} x", 0, "unexpected text after the header object"},
    {"unknown key", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4,
     "malformed header at byte 56: tensor 'w': unknown key 'x'"},
    {"no dtype", "{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "tensor 'w': no 'dtype'"},
    {"no shape", "{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "tensor 'w': no 'shape'"},
    {"no offsets", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "tensor 'w': no 'data_offsets'"},
    {"twice", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
              "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
     "tensor 'w' appears twice"},
    {"dtype twice", "{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
     4, "tensor 'w': 'dtype' appears twice"},
    {"unknown dtype", "{\"w\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w': unknown dtype 'F33'"},
    {"negative dim", "{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w' shape: expected a non-negative integer"},
    {"float dim", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w' shape: expected an integer, found a fraction"},
    {"leading zero", "{\"w\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w' shape: leading zero in an integer"},
    {"huge dim", "{\"w\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]}}",
     4, "tensor 'w' shape: integer too large"},
    {"three offsets", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 4,
     "tensor 'w': data_offsets must be [begin, end], found 3 numbers"},
    {"string dim", "{\"w\":{\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]}}", 4,
     "expected a non-negative integer"},
    {"bad escape", "{\"w\\q\":{}}", 0,
     "forbidden character after backslash; last read: '\"w\\q'"},
    {"control char", "{\"w\n\":{}}", 0, "control character U+000A (LF) must be escaped"},
    {"bad utf8", "{\"w\xff\":{}}", 0, "ill-formed UTF-8 byte; last read: '\"w\\xff'"},
    {"overlong utf8", "{\"w\xc0\xaf\":{}}", 0, "ill-formed UTF-8 byte"},
    {"utf8 surrogate", "{\"w\xed\xa0\x80\":{}}", 0, "ill-formed UTF-8 byte"},
    {"lone surrogate", "{\"w\\ud800\":{}}", 0,
     "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF"},
    {"lone low surrogate", "{\"w\\udc00\":{}}", 0,
     "surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF"},
    {"nul escape", "{\"w\\u0000\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
     "NUL character in a string"},
    {"nul escape in metadata", "{\"__metadata__\":{\"a\":\"\\u0000\"}}", 0,
     "NUL character in a string"},
    {"byte order mark", "\xef\xbb\xbf{}", 0, "expected '{' to open the header"},
    {"only whitespace", "  \n ", 0, "unexpected end of header, expected '{' to open the header"},
    {"a string", "\"{}\"", 0, "expected '{' to open the header"},
    {"two objects", "{} {}", 0, "unexpected text after the header object"},
    {"comment", "{/* x */}", 0, "invalid literal"},
    {"unclosed", "{", 0, "unexpected end of input"},
    {"metadata twice", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, "__metadata__ appears twice"},
    {"metadata key twice", "{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", 0,
     "__metadata__ key 'a' appears twice"},
    {"metadata not an object", "{\"__metadata__\":[]}", 0,
     "expected '{' to open __metadata__, found an array"},
    {"metadata nested", "{\"__metadata__\":{\"a\":{}}}", 0, "__metadata__ 'a': values must be strings"},
    {"metadata null", "{\"__metadata__\":{\"a\":null}}", 0, "__metadata__ 'a': values must be strings"},
    {"tensor not an object", "{\"w\":[1]}", 0, "expected '{' to open tensor 'w', found an array"},
    {"dtype not a string", "{\"w\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
     "expected a string for the dtype of tensor 'w', found a number"},
    {"lowercase dtype", "{\"w\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w': unknown dtype 'f32'"},
    {"shape not an array", "{\"w\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4,
     "expected '[' to open tensor 'w' shape, found a number"},
    {"shape twice", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"shape\":[1],\"data_offsets\":[0,4]}}",
     4, "tensor 'w': 'shape' appears twice"},
    {"offsets twice",
     "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w': 'data_offsets' appears twice"},
    {"nested dim", "{\"w\":{\"dtype\":\"F32\",\"shape\":[[1]],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w' shape: expected a non-negative integer, found an array"},
    {"boolean dim", "{\"w\":{\"dtype\":\"F32\",\"shape\":[true],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w' shape: expected a non-negative integer, found a boolean"},
    {"negative zero", "{\"w\":{\"dtype\":\"F32\",\"shape\":[-0],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w' shape: expected a non-negative integer"},
    {"exponent dim", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1e0],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w' shape: expected an integer, found a fraction or exponent"},
    {"overflowing exponent", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1e400],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w' shape: expected an integer, found a fraction or exponent"},
    {"past int64", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,9223372036854775808]}}",
     4, "tensor 'w' data_offsets: integer too large"},
    {"past uint64", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,18446744073709551616]}}",
     4, "tensor 'w' data_offsets: integer too large"},
    {"leading zero offset", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[00,4]}}", 4,
     "tensor 'w' data_offsets: leading zero in an integer"},
    {"two offsets", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4]}}", 4,
     "tensor 'w': data_offsets must be [begin, end], found 1 numbers"},
    {"metadata value", "{\"__metadata__\":{\"a\":1}}", 0, "__metadata__ 'a': values must be strings"},
    {"empty name", "{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
     "a tensor has an empty name"},
    {"overlap", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
     "tensor 'b': data_offsets [4, 12) overlap tensor 'a' [0, 8)"},
    {"gap", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
            "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12,
     "tensor 'b': data_offsets begin at 8, leaving bytes [4, 8)"},
    {"out of range", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 12,
     "tensor 'a': data_offsets [0, 16) run past the data section (12 bytes"},
    {"reversed", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4,
     "tensor 'a': data_offsets [4, 0) end before they begin"},
    {"size vs shape", "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8,
     "tensor 'a': data_offsets span 8 bytes, but F32 x shape needs 12"},
    {"trailing bytes", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 6,
     "the tensors end at byte 4 of a 6-byte data section"},
    {"shape overflow",
     "{\"a\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 8,
     "tensor 'a': dtype x shape overflows 64 bits"},
};

void PrintTo(const BadHeader &b, std::ostream *os) { *os << b.what; }

class BadHeaderTest : public ::testing::TestWithParam<BadHeader> {};

TEST_P(BadHeaderTest, IsRejectedWithAMessage) {
  const BadHeader &b = GetParam();
  st::Header h;
  std::string error;
  EXPECT_FALSE(st::parse_header(b.json, std::strlen(b.json), b.data_bytes, h, error));
  EXPECT_CONTAINS(error, b.message);
}

INSTANTIATE_TEST_SUITE_P(All, BadHeaderTest, ::testing::ValuesIn(kBadHeaders),
                         [](const ::testing::TestParamInfo<BadHeader> &info) {
                           std::string name = info.param.what;
                           for (char &c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// Rejections the table above cannot spell: NUL bytes (nlohmann takes one for the end of its
// input), inputs built at run time, and messages that must stay short.
std::string reject(const std::string &json, uint64_t data_bytes = 4) {
  st::Header h;
  std::string error;
  EXPECT_FALSE(st::parse_header(json.data(), json.size(), data_bytes, h, error)) << json.substr(0, 80);
  return error;
}

TEST(Safetensors, NulBytesAreRejected) {
  const std::string w = "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
  EXPECT_CONTAINS(reject(w + std::string("\0", 1)),
                  "at byte " + std::to_string(w.size()) + ": unexpected text after the header object");
  EXPECT_CONTAINS(reject(w + std::string("\0{}  ", 5)), "unexpected text after the header object");
  EXPECT_CONTAINS(reject(w + std::string("  \0", 3)), "unexpected text after the header object");
  EXPECT_CONTAINS(reject(std::string("\0", 1) + w), "expected '{' to open the header, found '\\x00'");
  EXPECT_CONTAINS(reject(std::string("{\"w\0\":{}}", 9)), "control character U+0000 (NUL)");
  EXPECT_CONTAINS(reject(std::string("{\0}", 3)), "malformed header at byte 1:");
  EXPECT_CONTAINS(reject(std::string("{\"w\":\0", 6)), "unexpected end of input");
}

TEST(Safetensors, NumbersPastEveryRange) {
  const auto with_dim = [](const std::string &dim) {
    return "{\"w\":{\"dtype\":\"U8\",\"shape\":[" + dim + "],\"data_offsets\":[0,4]}}";
  };
  EXPECT_CONTAINS(reject(with_dim(std::string(400, '9'))), "tensor 'w' shape: integer too large");
  EXPECT_CONTAINS(reject(with_dim("9223372036854775807")),
                  "data_offsets span 4 bytes, but U8 x shape needs 9223372036854775807");
  EXPECT_CONTAINS(reject(with_dim("1" + std::string(400, '0') + ".5")),
                  "expected an integer, found a fraction or exponent");
  EXPECT_CONTAINS(reject(with_dim("-" + std::string(400, '9'))), "expected a non-negative integer");
  EXPECT_CONTAINS(reject(with_dim("1.")), "malformed header at byte"); // nlohmann: invalid number
  EXPECT_CONTAINS(reject(with_dim("+1")), "invalid literal");
}

TEST(Safetensors, ArraysHoldAtMost1024Entries) {
  std::string dims = "1";
  for (int i = 1; i < 1024; ++i) dims += ",1";
  const std::string json = "{\"w\":{\"dtype\":\"U8\",\"shape\":[" + dims + "],\"data_offsets\":[0,1]}}";
  st::Header h;
  std::string error;
  EXPECT_TRUE(st::parse_header(json.data(), json.size(), 1, h, error)) << error;
  const std::string more = "{\"w\":{\"dtype\":\"U8\",\"shape\":[" + dims + ",1],\"data_offsets\":[0,1]}}";
  EXPECT_CONTAINS(reject(more, 1), "tensor 'w' shape: more than 1024 entries");
}

TEST(Safetensors, DeepNestingStopsAtTheFirstLevelTooMany) {
  EXPECT_CONTAINS(reject(std::string(1000000, '[')), "expected '{' to open the header, found '['");
  EXPECT_CONTAINS(reject("{\"__metadata__\":{\"a\":" + std::string(1000000, '[')),
                  "__metadata__ 'a': values must be strings");
  EXPECT_CONTAINS(reject("{\"w\":{\"shape\":" + std::string(1000000, '[')),
                  "tensor 'w' shape: expected a non-negative integer, found an array");
}

TEST(Safetensors, SyntaxErrorsInLongTokensKeepTheMessageShort) {
  const std::string name(1 << 20, 'n');
  const std::string error = reject("{\"" + name + "\\q\":{}}");
  EXPECT_CONTAINS(error, "forbidden character after backslash; last read: '..." + name.substr(0, 46) + "\\q'");
  EXPECT_LT(error.size(), 300u);
  EXPECT_LT(reject("{\"" + name + "\xff\":{}}").size(), 300u);
}

sinter_status load_file(const sinter_program &p, const std::string &path, bool allow = false) {
  sinter_model *m = nullptr;
  LoadOptions o;
  o.weights_path = path.c_str();
  o.allow_new_values = allow;
  sinter_status s = load_model(&p, SINTER_ABI_VERSION_MAJOR, &m, o);
  if (m) (void)sinter_model_destroy(m);
  return s;
}

TEST(WeightsFile, TooShortForTheLength) {
  TableProgram t(true);
  const std::string path = temp_path("short");
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_EQ(load_file(t.p, path), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("weights file '" + path + "': truncated: 3 bytes");
}

TEST(WeightsFile, TruncatedHeader) {
  TableProgram t(true);
  const std::string path = write_raw("trunc", "{\"w\":", "", 200);
  EXPECT_EQ(load_file(t.p, path), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("truncated: header length 200 but only 5 bytes follow it");
}

TEST(WeightsFile, HugeHeaderLength) {
  TableProgram t(true);
  const std::string path = write_raw("huge", "{}", "", int64_t(1) << 40);
  EXPECT_EQ(load_file(t.p, path), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("header length 1099511627776 exceeds the 100000000-byte limit");
}

TEST(WeightsFile, MalformedHeaderNamesTheTensor) {
  TableProgram t(true);
  const std::string path = write_raw(
      "overlap",
      "{\"w\":{\"dtype\":\"F32\",\"shape\":[4,8],\"data_offsets\":[0,128]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[100,132]}}",
      std::string(132, '\0'));
  EXPECT_EQ(load_file(t.p, path), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("tensor 'b': data_offsets [100, 132) overlap tensor 'w' [0, 128)");
}

TEST(WeightsFile, MissingFileIsInvalidArgument) {
  TableProgram t(true);
  EXPECT_EQ(load_file(t.p, "/nonexistent/w.safetensors"), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("weights file '/nonexistent/w.safetensors': cannot open");
}

TEST(WeightsFile, MissingTensor) {
  TableProgram t(true);
  std::vector<float> w(32);
  std::string error, path = temp_path("missing");
  ASSERT_TRUE(st::write_file(path, {{"w", "F32", {4, 8}, w.data(), 128}}, {}, error));
  EXPECT_EQ(load_file(t.p, path), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("tensor 'b' is missing");
}

TEST(WeightsFile, WrongDtype) {
  TableProgram t(true);
  std::vector<float> w(32);
  std::vector<uint16_t> b(8);
  std::string error, path = temp_path("dtype");
  ASSERT_TRUE(st::write_file(path, {{"w", "F32", {4, 8}, w.data(), 128},
                                    {"b", "BF16", {8}, b.data(), 16}}, {}, error));
  EXPECT_EQ(load_file(t.p, path), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("tensor 'b' is BF16 in the file, the model was compiled for F32");
}

TEST(WeightsFile, WrongShape) {
  TableProgram t(true);
  std::vector<float> w(32), b(8);
  std::string error, path = temp_path("shape");
  ASSERT_TRUE(st::write_file(path, {{"w", "F32", {8, 4}, w.data(), 128},
                                    {"b", "F32", {8}, b.data(), 32}}, {}, error));
  EXPECT_EQ(load_file(t.p, path), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("tensor 'w' has shape [8, 4] in the file, the model was compiled for [4, 8]");
}

TEST(WeightsFile, NoTableIsInvalidArgument) {
  const std::string path = write_checkpoint("notable");
  EXPECT_EQ(load_file(fake_program(), path), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("this library has no weight table");
}

TEST(WeightsFile, ExternalWithoutPathIsInvalidArgument) {
  TableProgram t(true);
  sinter_model *m = nullptr;
  EXPECT_EQ(load_model(&t.p, SINTER_ABI_VERSION_MAJOR, &m), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("weights are external");
}

TEST(WeightsFile, GoodFileWithoutGpuIsNoDevice) {
  SKIP_WITH_GPU("a CUDA device is present");
  TableProgram t(true);
  EXPECT_EQ(load_file(t.p, write_checkpoint("nogpu")), SINTER_NO_DEVICE);
}

TEST(WeightsFile, GoodFileLoadsOntoTheDevice) {
  SKIP_WITHOUT_GPU();
  TableProgram t(true);
  const std::string path = write_checkpoint("gpu");
  sinter_model *m = nullptr;
  LoadOptions o;
  o.weights_path = path.c_str();
  ASSERT_EQ(load_model(&t.p, SINTER_ABI_VERSION_MAJOR, &m, o), SINTER_OK) << sinter_last_error();
  std::vector<unsigned char> back(160);
  ASSERT_EQ(cudaMemcpy(back.data(), m->weights, 160, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::memcmp(back.data(), t.blob(), 160), 0);
  EXPECT_EQ(sinter_model_destroy(m), SINTER_OK);
  // A different checkpoint: refused with the checksum, accepted with allow_new_values.
  const std::string tuned = write_checkpoint("gpu_tuned", 2.0f);
  EXPECT_EQ(load_file(t.p, tuned), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("fails its checksum");
  EXPECT_EQ(load_file(t.p, tuned, true), SINTER_OK) << sinter_last_error();
}

// Streams a file through the host sink; returns the status and leaves the blob in `sink`.
sinter_status stream(const sinter_program &p, const std::string &path, bool allow,
                     HostSink &sink) {
  sinter::rt::WeightsFile file;
  sinter_status s = sinter::rt::open_weights_file(p, path.c_str(), file);
  if (s != SINTER_OK) return s;
  return sinter::rt::stream_weights(p, file, allow, sink);
}

TEST(WeightsFile, StreamsEachTensorToItsBlobOffset) {
  TableProgram t(true);
  HostSink sink(160);
  ASSERT_EQ(stream(t.p, write_checkpoint("good"), false, sink), SINTER_OK) << sinter_last_error();
  EXPECT_EQ(std::memcmp(sink.blob.data(), t.blob(), 160), 0);
  EXPECT_EQ(sink.submits, 6 + 2); // 128 bytes in 24-byte chunks, then 32
}

// The table's tensors over the fake blob as the writer takes them, after giving each entry the
// checksum of its bytes.
std::vector<st::TensorData> checksummed_tensors(TableProgram &t) {
  for (auto &w : t.table)
    w.checksum = sinter::test::reference_checksum(t.blob() + w.offset, w.bytes);
  std::vector<st::TensorData> tensors;
  for (const auto &w : t.table)
    tensors.push_back({w.name, st::dtype_for_sinter(w.dtype),
                       std::vector<int64_t>(w.shape, w.shape + w.rank), t.blob() + w.offset,
                       w.bytes});
  return tensors;
}

// fp8 weights (--weight-dtype fp8): the fake blob's first 128 bytes as an F8_E4M3 [2, 64]
// tensor and the next 8 as its two F32 row scales, written with the safetensors dtype the writer
// gives SINTER_DTYPE_F8_E4M3 and streamed back byte for byte, each checksum checked.
TEST(WeightsFile, Fp8TensorsRoundTrip) {
  ASSERT_STREQ(st::dtype_for_sinter(SINTER_DTYPE_F8_E4M3), "F8_E4M3");
  TableProgram t(true);
  t.table[0] = {"w0.fp8", SINTER_DTYPE_F8_E4M3, 2, {2, 64}, 0, 128, 0};
  t.table[1] = {"w0.fp8_scale", SINTER_DTYPE_F32, 1, {2}, 128, 8, 0};
  std::vector<st::TensorData> tensors = checksummed_tensors(t);
  ASSERT_EQ(sinter::rt::check_weight_table(t.p), SINTER_OK) << sinter_last_error();
  std::string error, path = temp_path("fp8");
  ASSERT_TRUE(st::write_file(path, tensors, {{"format", "sinter"}}, error)) << error;
  HostSink sink(160);
  ASSERT_EQ(stream(t.p, path, false, sink), SINTER_OK) << sinter_last_error();
  EXPECT_EQ(std::memcmp(sink.blob.data(), t.blob(), 136), 0);
  // Any other dtype in the file is refused naming the fp8 one.
  tensors[0].dtype = "I8";
  const std::string other = temp_path("fp8_as_i8");
  ASSERT_TRUE(st::write_file(other, tensors, {}, error)) << error;
  EXPECT_EQ(stream(t.p, other, false, sink), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("tensor 'w0.fp8' is I8 in the file, the model was compiled for F8_E4M3");
  // Scales that do not match the quantized tensor's rows (3 for 2 rows) are refused naming them.
  tensors[0].dtype = "F8_E4M3";
  const float three[3] = {1.f, 2.f, 3.f};
  tensors[1].shape = {3};
  tensors[1].data = three;
  tensors[1].bytes = sizeof three;
  const std::string short_rows = temp_path("fp8_scale_rows");
  ASSERT_TRUE(st::write_file(short_rows, tensors, {}, error)) << error;
  EXPECT_EQ(stream(t.p, short_rows, false, sink), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("tensor 'w0.fp8_scale' has shape [3] in the file");
}

// int4 weights (--weight-dtype int4): the fake blob's first 128 bytes as a U8 [2, 64] tensor
// (two rows of K = 128, two 4-bit values a byte) and the next 8 as its F32 [2, 1] group scales
// (one group of 128 a row), written with the safetensors dtype the writer gives
// SINTER_DTYPE_U8 and streamed back byte for byte, each checksum checked.
TEST(WeightsFile, Int4TensorsRoundTrip) {
  ASSERT_STREQ(st::dtype_for_sinter(SINTER_DTYPE_U8), "U8");
  TableProgram t(true);
  t.table[0] = {"w0.int4", SINTER_DTYPE_U8, 2, {2, 64}, 0, 128, 0};
  t.table[1] = {"w0.int4_scale", SINTER_DTYPE_F32, 2, {2, 1}, 128, 8, 0};
  std::vector<st::TensorData> tensors = checksummed_tensors(t);
  ASSERT_EQ(sinter::rt::check_weight_table(t.p), SINTER_OK) << sinter_last_error();
  std::string error, path = temp_path("int4");
  ASSERT_TRUE(st::write_file(path, tensors, {{"format", "sinter"}}, error)) << error;
  HostSink sink(160);
  ASSERT_EQ(stream(t.p, path, false, sink), SINTER_OK) << sinter_last_error();
  EXPECT_EQ(std::memcmp(sink.blob.data(), t.blob(), 136), 0);
  // Any other dtype in the file is refused naming the int4 one.
  tensors[0].dtype = "I8";
  const std::string other = temp_path("int4_as_i8");
  ASSERT_TRUE(st::write_file(other, tensors, {}, error)) << error;
  EXPECT_EQ(stream(t.p, other, false, sink), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("tensor 'w0.int4' is I8 in the file, the model was compiled for U8");
  // Scales that do not match the quantized tensor's groups (2 a row for K = 128) are refused
  // naming them.
  tensors[0].dtype = "U8";
  const float four[4] = {1.f, 2.f, 3.f, 4.f};
  tensors[1].shape = {2, 2};
  tensors[1].data = four;
  tensors[1].bytes = sizeof four;
  const std::string groups = temp_path("int4_scale_groups");
  ASSERT_TRUE(st::write_file(groups, tensors, {}, error)) << error;
  EXPECT_EQ(stream(t.p, groups, false, sink), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS(
      "tensor 'w0.int4_scale' has shape [2, 2] in the file, the model was compiled for [2, 1]");
}

TEST(WeightsFile, ChecksumMismatchNamesTheTensor) {
  TableProgram t(true);
  HostSink sink(160);
  const std::string path = write_checkpoint("finetuned", 0.5f, false);
  EXPECT_EQ(stream(t.p, path, false, sink), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("tensor 'w' fails its checksum");
  EXPECT_LAST_ERROR_CONTAINS("allow_new_values");
}

TEST(WeightsFile, AllowNewValuesLoadsAFineTunedCheckpoint) {
  TableProgram t(true);
  HostSink sink(160);
  ASSERT_EQ(stream(t.p, write_checkpoint("finetuned2", 0.5f), true, sink), SINTER_OK)
      << sinter_last_error();
  float w0 = 0, orig = 0;
  std::memcpy(&w0, sink.blob.data() + 4, 4);
  std::memcpy(&orig, t.blob() + 4, 4);
  EXPECT_EQ(w0, orig * 0.5f);
}

TEST(WeightsFile, EmbeddedCorruptionNamesTheTensor) {
  TableProgram t(false);
  std::vector<unsigned char> weights(t.p.weights, t.p.weights + t.p.weight_bytes);
  weights[130] ^= 1; // inside 'b'
  t.p.weights = weights.data();
  sinter_model *m = nullptr;
  EXPECT_EQ(load_model(&t.p, SINTER_ABI_VERSION_MAJOR, &m), SINTER_CORRUPT_WEIGHTS);
  EXPECT_LAST_ERROR_CONTAINS("(first bad tensor 'b')");
}

// A file over 4 GB: a sparse 5 GiB tensor first, so the model's tensors sit past 2^32.
TEST(WeightsFile, OffsetsPastFourGigabytes) {
  TableProgram t(true);
  const uint64_t pad = uint64_t(5) << 30;
  const std::string json_body =
      "{\"pad\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(pad) + "],\"data_offsets\":[0," +
      std::to_string(pad) + "]},\"w\":{\"dtype\":\"F32\",\"shape\":[4,8],\"data_offsets\":[" +
      std::to_string(pad) + "," + std::to_string(pad + 128) +
      "]},\"b\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[" + std::to_string(pad + 128) +
      "," + std::to_string(pad + 160) + "]}}";
  const std::string path = write_raw("big", json_body, "");
  const uint64_t data_start = 8 + json_body.size();
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  if (::ftruncate(fd, off_t(data_start + pad + 160)) != 0) {
    ::close(fd);
    ::unlink(path.c_str());
    GTEST_SKIP() << "the filesystem cannot hold a 5 GiB sparse file";
  }
  ASSERT_EQ(::pwrite(fd, t.blob(), 160, off_t(data_start + pad)), 160);
  struct stat s {};
  ASSERT_EQ(::fstat(fd, &s), 0);
  ::close(fd);
  if (uint64_t(s.st_blocks) * 512 > (uint64_t(64) << 20)) {
    ::unlink(path.c_str());
    GTEST_SKIP() << "the filesystem does not keep the file sparse";
  }
  ASSERT_GT(uint64_t(s.st_size), uint64_t(1) << 32);
  HostSink sink(160);
  EXPECT_EQ(stream(t.p, path, false, sink), SINTER_OK) << sinter_last_error();
  EXPECT_EQ(std::memcmp(sink.blob.data(), t.blob(), 160), 0);
  ::unlink(path.c_str());
}

// --- weight table checks ---------------------------------------------------------------------

TEST(WeightTable, MalformedTablesAreRejected) {
  struct Case {
    void (*corrupt)(TableProgram &);
    const char *message;
  } cases[] = {
      {[](TableProgram &t) { t.table[1].name = "w"; }, "weight tensor 'w' appears twice"},
      {[](TableProgram &t) { t.table[1].offset = 120; }, "weight tensors 'w' and 'b' overlap"},
      {[](TableProgram &t) { t.table[1].offset = 136; }, "spans bytes [136, 168) of a 160-byte"},
      {[](TableProgram &t) { t.table[0].bytes = 120; }, "'w' has 120 bytes, its dtype and shape need 128"},
      {[](TableProgram &t) { t.table[0].dtype = 7; }, "'w' has unknown dtype 7"},
      {[](TableProgram &t) { t.table[0].name = nullptr; }, "weight tensor 0 has no name"},
      {[](TableProgram &t) { t.p.num_weight_tensors = 0; }, "external weights (160 bytes) but no weight table"},
  };
  for (const Case &c : cases) {
    TableProgram t(true);
    ASSERT_EQ(sinter::rt::check_program(t.p), SINTER_OK) << sinter_last_error();
    c.corrupt(t);
    EXPECT_EQ(sinter::rt::check_program(t.p), SINTER_INTERNAL);
    EXPECT_LAST_ERROR_CONTAINS(c.message);
  }
}

// --- C entry points ----------------------------------------------------------------------------

TEST(LoadEntryPoints, ArgumentChecks) {
  sinter_model *m = reinterpret_cast<sinter_model *>(0x1);
  EXPECT_EQ(sinter_model_load_from_file(SINTER_ABI_VERSION_MAJOR, nullptr, &m),
            SINTER_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  EXPECT_LAST_ERROR_CONTAINS("weights_path is null");
  sinter_model_load_options o = SINTER_MODEL_LOAD_OPTIONS_INIT;
  o.struct_size = 4;
  EXPECT_EQ(sinter_model_load_v2(SINTER_ABI_VERSION_MAJOR, &o, &m), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("options.struct_size 4 is too small");
  o = SINTER_MODEL_LOAD_OPTIONS_INIT;
  o.weights_path = "/nonexistent.safetensors";
  EXPECT_EQ(sinter_model_load_v2(SINTER_ABI_VERSION_MAJOR + 1, &o, &m), SINTER_ABI_MISMATCH);
  // The unit tests' linked program has no table.
  EXPECT_EQ(sinter_model_load_v2(SINTER_ABI_VERSION_MAJOR, &o, &m), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("no weight table");
  EXPECT_EQ(sinter_weights_external(), 0);
}

TEST(LoadEntryPoints, LaunchInfo) {
  sinter_model model;
  model.program = &fake_program();
  sinter_launch_info info{};
  ASSERT_EQ(sinter_model_launch_info(&model, 0, &info), SINTER_OK);
  EXPECT_STREQ(info.kind, "gemm");
  EXPECT_STREQ(info.sources, "MatMul_0,Add_0");
  ASSERT_EQ(sinter_model_launch_info(&model, 1, &info), SINTER_OK);
  EXPECT_STREQ(info.kind, "kernel");
  EXPECT_STREQ(info.label, "fake_kernel");
  EXPECT_EQ(sinter_model_launch_info(&model, 2, &info), SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("launch index 2 out of range: the model has 2 launches");
  EXPECT_EQ(sinter_model_launch_info(nullptr, 0, &info), SINTER_INVALID_ARGUMENT);
  EXPECT_EQ(sinter_model_num_weights(&model), 0u);
}

TEST(Profile, ArgumentChecksWithoutAContext) {
  float ms[2];
  EXPECT_EQ(sinter_context_profile(nullptr, nullptr, 0, nullptr, 0, nullptr, ms, 2),
            SINTER_INVALID_ARGUMENT);
  EXPECT_LAST_ERROR_CONTAINS("sinter_context_profile: context is null");
}

} // namespace
