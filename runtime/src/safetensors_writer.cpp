// safetensors writer (see safetensors_writer.h).
#include "safetensors_writer.h"

#include "safetensors.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <unistd.h>

namespace sinter::safetensors {

const char *dtype_for_sinter(int32_t d) {
  // Values of sinter_dtype (program.h): (DLPack code << 8) | bits.
  switch (d) {
  case (2 << 8) | 32: return "F32";
  case (2 << 8) | 16: return "F16";
  case (4 << 8) | 16: return "BF16";
  case (0 << 8) | 64: return "I64";
  case (0 << 8) | 32: return "I32";
  case (6 << 8) | 8: return "BOOL";
  case (10 << 8) | 8: return "F8_E4M3"; // e4m3fn, as safetensors names torch.float8_e4m3fn
  case (1 << 8) | 8: return "U8";       // uint8, and int4 weights two to a byte
  case (2 << 8) | 64: return "F64";
  case (0 << 8) | 16: return "I16";
  case (0 << 8) | 8: return "I8";
  case (1 << 8) | 16: return "U16";
  case (1 << 8) | 32: return "U32";
  case (1 << 8) | 64: return "U64";
  default: return nullptr;
  }
}

namespace {

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

bool write_all(int fd, const void *data, uint64_t size, std::string &error) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    const size_t chunk = size > (uint64_t(1) << 30) ? size_t(1) << 30 : size_t(size);
    const ssize_t n = ::write(fd, p, chunk);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error = std::strerror(errno);
      return false;
    }
    p += n;
    size -= uint64_t(n);
  }
  return true;
}

} // namespace

bool header_json(const std::vector<TensorData> &tensors,
                 const std::map<std::string, std::string> &metadata, std::string &json,
                 std::string &error) {
  std::set<std::string> names;
  json = "{";
  bool first = true;
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    bool f = true;
    for (const auto &[k, v] : metadata) {
      json += (f ? "" : ",") + json_string(k) + ":" + json_string(v);
      f = false;
    }
    json += "}";
    first = false;
  }
  uint64_t offset = 0;
  for (const TensorData &t : tensors) {
    const std::string who = "tensor '" + t.name + "'";
    if (t.name.empty() || t.name == "__metadata__") {
      error = "invalid tensor name '" + t.name + "'";
      return false;
    }
    if (!names.insert(t.name).second) {
      error = who + " appears twice";
      return false;
    }
    unsigned __int128 bytes = dtype_bytes(t.dtype);
    if (bytes == 0) {
      error = who + ": unknown dtype '" + t.dtype + "'";
      return false;
    }
    for (int64_t d : t.shape) {
      if (d < 0) {
        error = who + ": negative dimension";
        return false;
      }
      bytes *= uint64_t(d);
      if (bytes > UINT64_MAX) {
        error = who + ": size overflows 64 bits";
        return false;
      }
    }
    if (uint64_t(bytes) != t.bytes) {
      error = who + ": " + std::to_string(t.bytes) + " bytes given, " + t.dtype +
              " x shape needs " + std::to_string(uint64_t(bytes));
      return false;
    }
    if (t.bytes > 0 && !t.data) {
      error = who + ": no data";
      return false;
    }
    json += (first ? "" : ",") + json_string(t.name) + ":{\"dtype\":\"" + t.dtype +
            "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i)
      json += (i ? "," : "") + std::to_string(t.shape[i]);
    json += "],\"data_offsets\":[" + std::to_string(offset) + "," +
            std::to_string(offset + t.bytes) + "]}";
    offset += t.bytes;
    first = false;
  }
  json += "}";
  while (json.size() % 8 != 0)
    json += ' ';
  return true;
}

bool write_file(const std::string &path, const std::vector<TensorData> &tensors,
                const std::map<std::string, std::string> &metadata, std::string &error) {
  std::string json;
  if (!header_json(tensors, metadata, json, error)) {
    error = "writing '" + path + "': " + error;
    return false;
  }
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot create '" + tmp + "': " + std::strerror(errno);
    return false;
  }
  unsigned char prefix[8];
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i, n >>= 8)
    prefix[i] = static_cast<unsigned char>(n & 0xff);
  std::string why;
  bool ok = write_all(fd, prefix, 8, why) && write_all(fd, json.data(), json.size(), why);
  for (size_t i = 0; ok && i < tensors.size(); ++i)
    ok = write_all(fd, tensors[i].data, tensors[i].bytes, why);
  if (::close(fd) != 0 && ok) {
    ok = false;
    why = std::strerror(errno);
  }
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    why = "rename: " + std::string(std::strerror(errno));
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    error = "writing '" + path + "': " + why;
  }
  return ok;
}

} // namespace sinter::safetensors
