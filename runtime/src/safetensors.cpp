// Strict safetensors header parser (see safetensors.h). The JSON syntax (strings, escapes,
// UTF-8, numbers, nesting) is nlohmann-json's SAX parser; the schema, the strictness it does not
// have (duplicate keys, NUL characters, integers only) and the messages are here. SAX, so no
// document is built: memory is the header text, the lexer's current token and the entries.
// nlohmann reports syntax errors through the handler, not by throwing; anything else it or the
// handler throws (std::bad_alloc) is caught in parse_header, so nothing leaves the C ABI.
#include "safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <new>
#include <unistd.h>

namespace sinter::safetensors {

const TensorEntry *Header::find(const std::string &name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &tensors[it->second];
}

uint64_t dtype_bytes(const std::string &d) {
  static const std::pair<const char *, uint64_t> kSizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2},
      {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},    {"U32", 4},     {"F32", 4},
      {"I64", 8},  {"U64", 8}, {"F64", 8}};
  for (const auto &[name, size] : kSizes)
    if (d == name)
      return size;
  return 0;
}

namespace {

std::string in_quotes(const std::string &s) {
  std::string out = "'";
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "'";
}

// A pointer into the header text that records in `*read` how far nlohmann's lexer has read,
// so that schema errors found in the SAX callbacks can name a byte offset as syntax errors do.
class Cursor {
public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char *;
  using reference = const char &;

  Cursor(const char *p, const char **read) : p_(p), read_(read) {}
  reference operator*() const { return *p_; }
  Cursor &operator++() {
    *read_ = ++p_;
    return *this;
  }
  Cursor operator++(int) {
    Cursor old = *this;
    ++*this;
    return old;
  }
  bool operator==(const Cursor &o) const { return p_ == o.p_; }
  bool operator!=(const Cursor &o) const { return p_ != o.p_; }

private:
  const char *p_;
  const char **read_;
};

using Json = nlohmann::json;

// The SAX handler (nlohmann's json_sax interface, by name: no virtual functions): checks the
// header schema as the events arrive and fills `out`. A callback returning false stops the
// parse with error() set.
class HeaderReader {
public:
  HeaderReader(const char *begin, uint64_t size, Header &out)
      : begin_(begin), read_(begin), size_(size), out_(out) {}

  const std::string &error() const { return error_; }
  const char **read_position() { return &read_; }
  bool done() const { return level_ == Level::Done; }

  bool fail_at(uint64_t byte, const std::string &what) {
    if (error_.empty())
      error_ = "malformed header at byte " + std::to_string(byte) + ": " + what;
    return false;
  }
  // At the furthest byte the lexer has read (just past the token at fault).
  bool fail(const std::string &what) { return fail_at(uint64_t(read_ - begin_), what); }

  // --- values ---------------------------------------------------------------------------------
  bool null() { return scalar("null"); }
  bool boolean(bool) { return scalar("a boolean"); }
  bool number_integer(Json::number_integer_t) { // only negative integers come here
    if (level_ == Level::Array)
      return fail(array_what_ + ": expected a non-negative integer");
    return scalar("a number");
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    if (level_ != Level::Array)
      return scalar("a number");
    if (v > uint64_t(INT64_MAX))
      return fail(array_what_ + ": integer too large");
    array_.push_back(v);
    if (array_.size() > kMaxArrayEntries)
      return fail(array_what_ + ": more than " + std::to_string(kMaxArrayEntries) + " entries");
    return true;
  }
  // `text` is the number as written (nlohmann also comes here for integers past 64 bits).
  bool number_float(Json::number_float_t, const std::string &text) { return non_integer(text); }
  bool string(std::string &s) {
    if (s.find('\0') != std::string::npos)
      return fail("NUL character in a string");
    switch (level_) {
    case Level::Metadata:
      out_.metadata.emplace(key_, s);
      return true;
    case Level::Tensor:
      if (slot_ == Slot::Dtype) {
        tensor_.dtype = s;
        if (dtype_bytes(s) == 0)
          return fail(tensor_who_ + ": unknown dtype " + in_quotes(s));
        return true;
      }
      break;
    default:
      break;
    }
    return scalar("a string");
  }
  bool binary(Json::binary_t &) { return scalar("binary data"); } // not in JSON text

  // --- containers -----------------------------------------------------------------------------
  bool start_object(std::size_t) {
    switch (level_) {
    case Level::Top:
      level_ = Level::Header;
      return true;
    case Level::Header:
      level_ = slot_ == Slot::Metadata ? Level::Metadata : Level::Tensor;
      return true;
    default:
      return scalar("an object");
    }
  }
  bool start_array(std::size_t) {
    if (level_ == Level::Tensor && (slot_ == Slot::Shape || slot_ == Slot::Offsets)) {
      level_ = Level::Array;
      array_.clear();
      return true;
    }
    return scalar("an array");
  }
  bool key(std::string &k) {
    if (k.find('\0') != std::string::npos)
      return fail("NUL character in a string");
    switch (level_) {
    case Level::Header:
      if (k == "__metadata__") {
        if (has_metadata_)
          return fail("__metadata__ appears twice");
        has_metadata_ = true;
        slot_ = Slot::Metadata;
        return true;
      }
      if (k.empty())
        return fail("a tensor has an empty name");
      if (out_.index.count(k))
        return fail("tensor " + in_quotes(k) + " appears twice");
      slot_ = Slot::Tensor;
      tensor_ = TensorEntry();
      tensor_.name = k;
      tensor_who_ = "tensor " + in_quotes(k);
      has_dtype_ = has_shape_ = has_offsets_ = false;
      return true;
    case Level::Metadata:
      if (out_.metadata.count(k))
        return fail("__metadata__ key " + in_quotes(k) + " appears twice");
      key_ = k;
      return true;
    case Level::Tensor:
      return tensor_key(k);
    default: // keys only come inside objects, and objects only where a level expects them
      return fail("unexpected key " + in_quotes(k));
    }
  }
  bool end_object() {
    switch (level_) {
    case Level::Header:
      level_ = Level::Done;
      return true;
    case Level::Metadata:
      level_ = Level::Header;
      return true;
    case Level::Tensor:
      if (!has_dtype_) return fail(tensor_who_ + ": no 'dtype'");
      if (!has_shape_) return fail(tensor_who_ + ": no 'shape'");
      if (!has_offsets_) return fail(tensor_who_ + ": no 'data_offsets'");
      out_.index.emplace(tensor_.name, out_.tensors.size());
      out_.tensors.push_back(std::move(tensor_));
      level_ = Level::Header;
      return true;
    default:
      return fail("unbalanced '}'"); // unreachable: nlohmann checks the nesting
    }
  }
  bool end_array() {
    if (level_ != Level::Array)
      return fail("unbalanced ']'"); // unreachable: nlohmann checks the nesting
    level_ = Level::Tensor;
    if (slot_ == Slot::Shape) {
      tensor_.shape.assign(array_.begin(), array_.end());
    } else {
      if (array_.size() != 2)
        return fail(tensor_who_ + ": data_offsets must be [begin, end], found " +
                    std::to_string(array_.size()) + " numbers");
      tensor_.begin = array_[0];
      tensor_.end = array_[1];
    }
    return true;
  }

  // --- syntax errors --------------------------------------------------------------------------
  // `position` is the number of bytes the lexer had read (end of input counts as one),
  // `token` the text of the token at fault.
  bool parse_error(std::size_t position, const std::string &token,
                   const nlohmann::detail::exception &e) {
    const uint64_t at = position > 0 ? uint64_t(position) - 1 : 0;
    if (level_ == Level::Done)
      return fail_at(at, "unexpected text after the header object");
    if (e.id == 406) // number overflow: an exponent (or digits) past double's range
      return non_integer(token);
    // "[01]": nlohmann reads the number 0, then stops at the 1.
    const uint64_t token_start = uint64_t(position) - std::min<uint64_t>(position, token.size());
    if (level_ == Level::Array && !token.empty() && token[0] >= '0' && token[0] <= '9' &&
        token_start > 0 && token_start <= size_ && begin_[token_start - 1] == '0')
      return fail_at(token_start, array_what_ + ": leading zero in an integer");
    return fail_at(at, describe(e, token));
  }

private:
  // The longest shape or data_offsets array read (SINTER_MAX_RANK is far less).
  static constexpr size_t kMaxArrayEntries = 1024;

  enum class Level { Top, Header, Metadata, Tensor, Array, Done };
  // What the value after the last key of the current object is.
  enum class Slot { None, Metadata, Tensor, Dtype, Shape, Offsets };

  bool tensor_key(const std::string &k) {
    if (k == "dtype") {
      if (has_dtype_) return fail(tensor_who_ + ": 'dtype' appears twice");
      has_dtype_ = true;
      slot_ = Slot::Dtype;
    } else if (k == "shape") {
      if (has_shape_) return fail(tensor_who_ + ": 'shape' appears twice");
      has_shape_ = true;
      slot_ = Slot::Shape;
      array_what_ = tensor_who_ + " shape";
    } else if (k == "data_offsets") {
      if (has_offsets_) return fail(tensor_who_ + ": 'data_offsets' appears twice");
      has_offsets_ = true;
      slot_ = Slot::Offsets;
      array_what_ = tensor_who_ + " data_offsets";
    } else {
      return fail(tensor_who_ + ": unknown key " + in_quotes(k));
    }
    return true;
  }

  // A number that is not a non-negative 64-bit integer, as written.
  bool non_integer(const std::string &text) {
    if (level_ != Level::Array)
      return scalar("a number");
    if (!text.empty() && text[0] == '-')
      return fail(array_what_ + ": expected a non-negative integer");
    if (std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return fail(array_what_ + ": integer too large");
    return fail(array_what_ + ": expected an integer, found a fraction or exponent");
  }

  // A value (`kind`: "a string", "an object", ...) where the schema has none of its kind.
  bool scalar(const char *kind) {
    const std::string found = std::string(", found ") + kind;
    switch (level_) {
    case Level::Top:
      return fail("expected '{' to open the header" + found);
    case Level::Header:
      if (slot_ == Slot::Metadata)
        return fail("expected '{' to open __metadata__" + found);
      return fail("expected '{' to open " + tensor_who_ + found);
    case Level::Metadata:
      return fail("__metadata__ " + in_quotes(key_) + ": values must be strings");
    case Level::Tensor:
      if (slot_ == Slot::Dtype)
        return fail("expected a string for the dtype of " + tensor_who_ + found);
      return fail("expected '[' to open " + array_what_ + found);
    case Level::Array:
      return fail(array_what_ + ": expected a non-negative integer" + found);
    case Level::Done:
      break;
    }
    return fail("unexpected value" + found);
  }

  // nlohmann's message without its "[json.exception...] parse error at line L, column C: "
  // prefix (the caller names the byte), the token it quotes cut to its last bytes and the bytes
  // past ASCII in it (invalid UTF-8, say) written as \xNN.
  static std::string describe(const nlohmann::detail::exception &e, const std::string &token) {
    std::string m = e.what();
    if (const size_t tag = m.find("] "); m.rfind("[json.exception.", 0) == 0 && tag != m.npos)
      m.erase(0, tag + 2);
    if (m.rfind("parse error", 0) == 0)
      if (const size_t colon = m.find(": "); colon != m.npos)
        m.erase(0, colon + 2);
    constexpr size_t kShown = 48;
    if (token.size() > kShown)
      if (const size_t at = m.find(token); at != m.npos)
        m.replace(at, token.size(), "..." + token.substr(token.size() - kShown));
    std::string out;
    for (const char c : m) {
      if (static_cast<unsigned char>(c) < 0x80) {
        out += c;
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
        out += buf;
      }
    }
    return out;
  }

  const char *begin_;
  const char *read_;
  uint64_t size_;
  Header &out_;
  std::string error_;
  Level level_ = Level::Top;
  Slot slot_ = Slot::None;
  bool has_metadata_ = false;
  std::string key_; // the current __metadata__ key
  TensorEntry tensor_; // the tensor being read
  std::string tensor_who_; // "tensor 'name'"
  bool has_dtype_ = false, has_shape_ = false, has_offsets_ = false;
  std::string array_what_; // "tensor 'name' shape"
  std::vector<uint64_t> array_;
};

// Parses the header text into `out`; false with `error` set on any syntax or schema error.
bool read_json(const char *json, uint64_t size, Header &out, std::string &error) {
  // Before nlohmann: it skips a UTF-8 byte order mark, which the format does not allow.
  const char *p = json, *end = json + size;
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    ++p;
  if (p == end) {
    error = "malformed header at byte " + std::to_string(size) +
            ": unexpected end of header, expected '{' to open the header";
    return false;
  }
  if (*p != '{') {
    error = "malformed header at byte " + std::to_string(p - json) +
            ": expected '{' to open the header, found " + in_quotes(std::string(1, *p));
    return false;
  }
  HeaderReader reader(json, size, out);
  bool ok = false;
  try {
    ok = Json::sax_parse(Cursor(json, reader.read_position()),
                         Cursor(json + size, reader.read_position()), &reader,
                         nlohmann::json::input_format_t::json, /*strict=*/true,
                         /*ignore_comments=*/false);
  } catch (const std::bad_alloc &) {
    error = "out of memory reading the header";
    return false;
  } catch (const std::exception &e) {
    error = std::string("malformed header: ") + e.what();
    return false;
  }
  if (!ok) {
    error = reader.error().empty() ? "malformed header" : reader.error();
    return false;
  }
  // nlohmann takes a NUL byte for the end of the input: anything after it was not read. (A NUL
  // anywhere else is an error it reports: inside a string, a control character.)
  if (const void *nul = std::memchr(json, 0, size_t(size))) {
    error = "malformed header at byte " +
            std::to_string(static_cast<const char *>(nul) - json) +
            ": unexpected text after the header object";
    return false;
  }
  if (!reader.done()) {
    error = "malformed header: the header object is not closed";
    return false;
  }
  return true;
}

// Product of the shape times the element size, false on overflow.
bool tensor_bytes(const TensorEntry &t, uint64_t &bytes) {
  unsigned __int128 n = dtype_bytes(t.dtype);
  for (int64_t d : t.shape) {
    n *= static_cast<uint64_t>(d);
    if (n > UINT64_MAX)
      return false;
  }
  bytes = static_cast<uint64_t>(n);
  return true;
}

} // namespace

bool parse_header(const char *json, uint64_t size, uint64_t data_bytes, Header &out,
                  std::string &error) {
  out.tensors.clear();
  out.index.clear();
  out.metadata.clear();
  out.data_bytes = data_bytes;
  if (!read_json(json, size, out, error))
    return false;
  // Byte ranges: each consistent with dtype x shape and inside the data section.
  for (const TensorEntry &t : out.tensors) {
    uint64_t bytes = 0;
    if (!tensor_bytes(t, bytes)) {
      error = "tensor " + in_quotes(t.name) + ": dtype x shape overflows 64 bits";
      return false;
    }
    if (t.end < t.begin) {
      error = "tensor " + in_quotes(t.name) + ": data_offsets [" + std::to_string(t.begin) + ", " +
              std::to_string(t.end) + ") end before they begin";
      return false;
    }
    if (t.end > data_bytes) {
      error = "tensor " + in_quotes(t.name) + ": data_offsets [" + std::to_string(t.begin) + ", " +
              std::to_string(t.end) + ") run past the data section (" +
              std::to_string(data_bytes) + " bytes; file truncated?)";
      return false;
    }
    if (t.end - t.begin != bytes) {
      error = "tensor " + in_quotes(t.name) + ": data_offsets span " +
              std::to_string(t.end - t.begin) + " bytes, but " + t.dtype + " x shape needs " +
              std::to_string(bytes);
      return false;
    }
  }
  // The tensors must tile the data section: no overlap, no gap, nothing after the last.
  std::vector<const TensorEntry *> order;
  order.reserve(out.tensors.size());
  for (const TensorEntry &t : out.tensors)
    order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const TensorEntry *a, const TensorEntry *b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const TensorEntry *prev = nullptr;
  for (const TensorEntry *t : order) {
    if (t->begin < covered) {
      error = "tensor " + in_quotes(t->name) + ": data_offsets [" + std::to_string(t->begin) + ", " +
              std::to_string(t->end) + ") overlap tensor " + in_quotes(prev->name) + " [" +
              std::to_string(prev->begin) + ", " + std::to_string(prev->end) + ")";
      return false;
    }
    if (t->begin > covered) {
      error = "tensor " + in_quotes(t->name) + ": data_offsets begin at " +
              std::to_string(t->begin) + ", leaving bytes [" + std::to_string(covered) + ", " +
              std::to_string(t->begin) + ") of the data section unused";
      return false;
    }
    covered = t->end;
    prev = t;
  }
  if (covered != data_bytes) {
    error = "the tensors end at byte " + std::to_string(covered) + " of a " +
            std::to_string(data_bytes) + "-byte data section (trailing bytes)";
    return false;
  }
  return true;
}

bool pread_full(int fd, void *buffer, uint64_t size, uint64_t offset, std::string &error) {
  char *p = static_cast<char *>(buffer);
  while (size > 0) {
    const size_t want = size > (uint64_t(1) << 30) ? size_t(1) << 30 : size_t(size);
    const ssize_t got = ::pread(fd, p, want, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      error = "read failed at byte " + std::to_string(offset) + ": " + std::strerror(errno);
      return false;
    }
    if (got == 0) {
      error = "unexpected end of file at byte " + std::to_string(offset);
      return false;
    }
    p += got;
    offset += uint64_t(got);
    size -= uint64_t(got);
  }
  return true;
}

bool read_header(int fd, uint64_t file_bytes, Header &out, std::string &error) {
  if (file_bytes < 8) {
    error = "truncated: " + std::to_string(file_bytes) +
            " bytes, too short for the 8-byte header length";
    return false;
  }
  unsigned char prefix[8];
  if (!pread_full(fd, prefix, 8, 0, error))
    return false;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | prefix[i];
  if (n < 2) {
    error = "header length " + std::to_string(n) + " is too small for a JSON object";
    return false;
  }
  if (n > kMaxHeaderBytes) {
    error = "header length " + std::to_string(n) + " exceeds the " +
            std::to_string(kMaxHeaderBytes) + "-byte limit (not a safetensors file?)";
    return false;
  }
  if (n > file_bytes - 8) {
    error = "truncated: header length " + std::to_string(n) + " but only " +
            std::to_string(file_bytes - 8) + " bytes follow it";
    return false;
  }
  std::string json(size_t(n), '\0');
  if (!pread_full(fd, json.data(), n, 8, error))
    return false;
  out.header_bytes = n;
  out.data_start = 8 + n;
  return parse_header(json.data(), n, file_bytes - 8 - n, out, error);
}

} // namespace sinter::safetensors
