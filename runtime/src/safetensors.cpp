// Strict safetensors header parser (see safetensors.h). A small recursive-descent JSON reader
// specialised to the header's schema; no dependency beyond the C++ standard library and POSIX.
#include "safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
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

std::string quoted(const std::string &s) {
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

class Parser {
public:
  Parser(const char *text, uint64_t size) : p_(text), end_(text + size), begin_(text) {}

  bool fail(const std::string &what) {
    if (error_.empty())
      error_ = "malformed header at byte " + std::to_string(p_ - begin_) + ": " + what;
    return false;
  }
  const std::string &error() const { return error_; }

  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r'))
      ++p_;
  }
  bool at_end() {
    skip_ws();
    return p_ == end_;
  }
  bool peek(char c) {
    skip_ws();
    return p_ < end_ && *p_ == c;
  }
  bool expect(char c, const char *context) {
    skip_ws();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    if (p_ == end_)
      return fail(std::string("unexpected end of header, expected '") + c + "' " + context);
    return fail(std::string("expected '") + c + "' " + context + ", found " +
                quoted(std::string(1, *p_)));
  }

  static void append_utf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xc0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += char(0xe0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    } else {
      out += char(0xf0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3f));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    }
  }

  bool hex4(uint32_t &v) {
    if (end_ - p_ < 4)
      return fail("truncated \\u escape");
    v = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      const char c = *p_;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= uint32_t(c - 'A' + 10);
      else return fail("bad hex digit in \\u escape");
    }
    return true;
  }

  // One well-formed UTF-8 sequence (no overlongs, no surrogates, <= U+10FFFF).
  bool utf8(std::string &out) {
    const unsigned char c = static_cast<unsigned char>(*p_);
    int len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (len == 0 || end_ - p_ < len)
      return fail("invalid UTF-8 in a string");
    uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
    for (int i = 1; i < len; ++i) {
      const unsigned char d = static_cast<unsigned char>(p_[i]);
      if ((d & 0xc0) != 0x80)
        return fail("invalid UTF-8 in a string");
      cp = (cp << 6) | (d & 0x3f);
    }
    const uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return fail("invalid UTF-8 in a string");
    out.append(p_, size_t(len));
    p_ += len;
    return true;
  }

  bool string(std::string &out, const char *context) {
    if (!expect('"', context))
      return false;
    out.clear();
    while (true) {
      if (p_ == end_)
        return fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20)
        return fail("control character in a string");
      if (c >= 0x80) {
        if (!utf8(out))
          return false;
        continue;
      }
      ++p_;
      if (c != '\\') {
        out += char(c);
        continue;
      }
      if (p_ == end_)
        return fail("unterminated escape");
      const char e = *p_++;
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(cp))
          return false;
        if (cp >= 0xdc00 && cp <= 0xdfff)
          return fail("unpaired surrogate in \\u escape");
        if (cp >= 0xd800 && cp <= 0xdbff) {
          uint32_t lo = 0;
          if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
            return fail("unpaired surrogate in \\u escape");
          p_ += 2;
          if (!hex4(lo))
            return false;
          if (lo < 0xdc00 || lo > 0xdfff)
            return fail("unpaired surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        if (cp == 0)
          return fail("NUL character in a string");
        append_utf8(out, cp);
        break;
      }
      default: return fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  // A non-negative JSON integer that fits in 63 bits (no sign, fraction or exponent).
  bool integer(uint64_t &v, const std::string &what) {
    skip_ws();
    if (p_ == end_ || *p_ < '0' || *p_ > '9')
      return fail(what + ": expected a non-negative integer");
    if (*p_ == '0' && end_ - p_ > 1 && p_[1] >= '0' && p_[1] <= '9')
      return fail(what + ": leading zero in an integer");
    v = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      const uint64_t d = uint64_t(*p_ - '0');
      if (v > (uint64_t(INT64_MAX) - d) / 10)
        return fail(what + ": integer too large");
      v = v * 10 + d;
      ++p_;
    }
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E'))
      return fail(what + ": expected an integer, found a fraction or exponent");
    return true;
  }

  bool integer_array(std::vector<uint64_t> &out, const std::string &what) {
    out.clear();
    if (!expect('[', ("to open " + what).c_str()))
      return false;
    if (peek(']')) {
      ++p_;
      return true;
    }
    while (true) {
      uint64_t v = 0;
      if (!integer(v, what))
        return false;
      out.push_back(v);
      if (out.size() > 1024)
        return fail(what + ": more than 1024 entries");
      skip_ws();
      if (peek(',')) {
        ++p_;
        continue;
      }
      return expect(']', ("to close " + what).c_str());
    }
  }

  bool metadata(std::map<std::string, std::string> &out) {
    if (!expect('{', "to open __metadata__"))
      return false;
    if (peek('}')) {
      ++p_;
      return true;
    }
    while (true) {
      std::string key, value;
      if (!string(key, "for a __metadata__ key") || !expect(':', "after a __metadata__ key"))
        return false;
      skip_ws();
      if (p_ < end_ && *p_ != '"')
        return fail("__metadata__ " + quoted(key) + ": values must be strings");
      if (!string(value, "for a __metadata__ value"))
        return false;
      if (!out.emplace(key, value).second)
        return fail("__metadata__ key " + quoted(key) + " appears twice");
      if (peek(',')) {
        ++p_;
        continue;
      }
      return expect('}', "to close __metadata__");
    }
  }

  bool tensor(TensorEntry &t) {
    const std::string who = "tensor " + quoted(t.name);
    if (!expect('{', ("to open " + who).c_str()))
      return false;
    bool has_dtype = false, has_shape = false, has_offsets = false;
    if (!peek('}')) {
      while (true) {
        std::string key;
        if (!string(key, ("for a key of " + who).c_str()) ||
            !expect(':', ("after a key of " + who).c_str()))
          return false;
        if (key == "dtype") {
          if (has_dtype) return fail(who + ": 'dtype' appears twice");
          has_dtype = true;
          if (!string(t.dtype, ("for the dtype of " + who).c_str()))
            return false;
          if (dtype_bytes(t.dtype) == 0)
            return fail(who + ": unknown dtype " + quoted(t.dtype));
        } else if (key == "shape") {
          if (has_shape) return fail(who + ": 'shape' appears twice");
          has_shape = true;
          std::vector<uint64_t> dims;
          if (!integer_array(dims, who + " shape"))
            return false;
          t.shape.assign(dims.begin(), dims.end());
        } else if (key == "data_offsets") {
          if (has_offsets) return fail(who + ": 'data_offsets' appears twice");
          has_offsets = true;
          std::vector<uint64_t> o;
          if (!integer_array(o, who + " data_offsets"))
            return false;
          if (o.size() != 2)
            return fail(who + ": data_offsets must be [begin, end], found " +
                        std::to_string(o.size()) + " numbers");
          t.begin = o[0];
          t.end = o[1];
        } else {
          return fail(who + ": unknown key " + quoted(key));
        }
        if (peek(',')) {
          ++p_;
          continue;
        }
        if (!expect('}', ("to close " + who).c_str()))
          return false;
        break;
      }
    } else {
      ++p_;
    }
    if (!has_dtype) return fail(who + ": no 'dtype'");
    if (!has_shape) return fail(who + ": no 'shape'");
    if (!has_offsets) return fail(who + ": no 'data_offsets'");
    return true;
  }

  bool header(Header &h) {
    if (!expect('{', "to open the header"))
      return false;
    bool has_metadata = false;
    if (peek('}')) {
      ++p_;
    } else {
      while (true) {
        std::string name;
        if (!string(name, "for a tensor name") || !expect(':', "after a tensor name"))
          return false;
        if (name == "__metadata__") {
          if (has_metadata) return fail("__metadata__ appears twice");
          has_metadata = true;
          if (!metadata(h.metadata))
            return false;
        } else {
          if (name.empty())
            return fail("a tensor has an empty name");
          if (h.index.count(name))
            return fail("tensor " + quoted(name) + " appears twice");
          TensorEntry t;
          t.name = name;
          if (!tensor(t))
            return false;
          h.index.emplace(name, h.tensors.size());
          h.tensors.push_back(std::move(t));
        }
        if (peek(',')) {
          ++p_;
          continue;
        }
        if (!expect('}', "to close the header"))
          return false;
        break;
      }
    }
    if (!at_end())
      return fail("unexpected text after the header object");
    return true;
  }

private:
  const char *p_, *end_, *begin_;
  std::string error_;
};

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
  Parser parser(json, size);
  if (!parser.header(out)) {
    error = parser.error();
    return false;
  }
  // Byte ranges: each consistent with dtype x shape and inside the data section.
  for (const TensorEntry &t : out.tensors) {
    uint64_t bytes = 0;
    if (!tensor_bytes(t, bytes)) {
      error = "tensor " + quoted(t.name) + ": dtype x shape overflows 64 bits";
      return false;
    }
    if (t.end < t.begin) {
      error = "tensor " + quoted(t.name) + ": data_offsets [" + std::to_string(t.begin) + ", " +
              std::to_string(t.end) + ") end before they begin";
      return false;
    }
    if (t.end > data_bytes) {
      error = "tensor " + quoted(t.name) + ": data_offsets [" + std::to_string(t.begin) + ", " +
              std::to_string(t.end) + ") run past the data section (" +
              std::to_string(data_bytes) + " bytes; file truncated?)";
      return false;
    }
    if (t.end - t.begin != bytes) {
      error = "tensor " + quoted(t.name) + ": data_offsets span " +
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
      error = "tensor " + quoted(t->name) + ": data_offsets [" + std::to_string(t->begin) + ", " +
              std::to_string(t->end) + ") overlap tensor " + quoted(prev->name) + " [" +
              std::to_string(prev->begin) + ", " + std::to_string(prev->end) + ")";
      return false;
    }
    if (t->begin > covered) {
      error = "tensor " + quoted(t->name) + ": data_offsets begin at " +
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
