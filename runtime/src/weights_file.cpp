// Weight table checks, safetensors matching and chunked streaming (see weights_file.h).
#include "weights_file.h"

#include "error.h"
#include "model.h"
#include "checksum.h"
#include "safetensors_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace sinter::rt {

sinter_status check_weight_table(const sinter_program &p) {
  if (p.num_weight_tensors == 0)
    return SINTER_OK;
  if (!p.weight_tensors)
    return fail(SINTER_INTERNAL, "malformed program: %u weight tensors but no table",
                p.num_weight_tensors);
  std::set<std::string_view> names;
  std::vector<const sinter_weight_info *> order;
  order.reserve(p.num_weight_tensors);
  for (uint32_t i = 0; i < p.num_weight_tensors; ++i) {
    const sinter_weight_info &w = p.weight_tensors[i];
    if (!w.name || !*w.name)
      return fail(SINTER_INTERNAL, "malformed program: weight tensor %u has no name", i);
    if (!names.insert(w.name).second)
      return fail(SINTER_INTERNAL, "malformed program: weight tensor '%s' appears twice", w.name);
    if (dtype_bytes(w.dtype) == 0)
      return fail(SINTER_INTERNAL, "malformed program: weight tensor '%s' has unknown dtype %d",
                  w.name, w.dtype);
    if (w.rank < 0 || w.rank > SINTER_MAX_RANK)
      return fail(SINTER_INTERNAL, "malformed program: weight tensor '%s' has rank %d", w.name,
                  w.rank);
    unsigned __int128 bytes = dtype_bytes(w.dtype);
    for (int d = 0; d < w.rank; ++d) {
      if (w.shape[d] < 0)
        return fail(SINTER_INTERNAL, "malformed program: weight tensor '%s' has dimension %d of "
                    "size %lld", w.name, d, static_cast<long long>(w.shape[d]));
      bytes *= static_cast<uint64_t>(w.shape[d]);
      if (bytes > UINT64_MAX)
        return fail(SINTER_INTERNAL, "malformed program: weight tensor '%s' is too large", w.name);
    }
    if (uint64_t(bytes) != w.bytes)
      return fail(SINTER_INTERNAL, "malformed program: weight tensor '%s' has %llu bytes, its "
                  "dtype and shape need %llu", w.name, static_cast<unsigned long long>(w.bytes),
                  static_cast<unsigned long long>(uint64_t(bytes)));
    if (w.offset > p.weight_bytes || w.bytes > p.weight_bytes - w.offset)
      return fail(SINTER_INTERNAL, "malformed program: weight tensor '%s' spans bytes [%llu, "
                  "%llu) of a %llu-byte weight blob", w.name,
                  static_cast<unsigned long long>(w.offset),
                  static_cast<unsigned long long>(w.offset + w.bytes),
                  static_cast<unsigned long long>(p.weight_bytes));
    order.push_back(&w);
  }
  std::sort(order.begin(), order.end(), [](const sinter_weight_info *a, const sinter_weight_info *b) {
    return a->offset < b->offset;
  });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->offset < order[i - 1]->offset + order[i - 1]->bytes)
      return fail(SINTER_INTERNAL, "malformed program: weight tensors '%s' and '%s' overlap in "
                  "the blob", order[i - 1]->name, order[i]->name);
  return SINTER_OK;
}

WeightsFile::~WeightsFile() {
  if (fd >= 0)
    ::close(fd);
}

namespace {

std::string shape_text(const int64_t *shape, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace

sinter_status open_weights_file(const sinter_program &p, const char *path, WeightsFile &out) {
  if (!path || !*path)
    return fail(SINTER_INVALID_ARGUMENT, "weights file path is null or empty");
  if (p.num_weight_tensors == 0)
    return fail(SINTER_INVALID_ARGUMENT,
                "weights file '%s': this library has no weight table (compiled before external "
                "weights existed, or with no weights); only its embedded weights can be loaded",
                path);
  out.path = path;
  out.fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (out.fd < 0)
    return fail(SINTER_INVALID_ARGUMENT, "weights file '%s': cannot open: %s", path,
                std::strerror(errno));
  struct stat st {};
  if (::fstat(out.fd, &st) != 0)
    return fail(SINTER_INVALID_ARGUMENT, "weights file '%s': cannot stat: %s", path,
                std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(SINTER_INVALID_ARGUMENT, "weights file '%s': not a regular file", path);
  out.file_bytes = static_cast<uint64_t>(st.st_size);
  std::string error;
  if (!safetensors::read_header(out.fd, out.file_bytes, out.header, error))
    return fail(SINTER_CORRUPT_WEIGHTS, "weights file '%s': %s", path, error.c_str());
  out.file_offset.assign(p.num_weight_tensors, 0);
  for (uint32_t i = 0; i < p.num_weight_tensors; ++i) {
    const sinter_weight_info &w = p.weight_tensors[i];
    const safetensors::TensorEntry *t = out.header.find(w.name);
    if (!t)
      return fail(SINTER_CORRUPT_WEIGHTS, "weights file '%s': tensor '%s' is missing", path,
                  w.name);
    const char *want = safetensors::dtype_for_sinter(w.dtype);
    if (!want || t->dtype != want)
      return fail(SINTER_CORRUPT_WEIGHTS,
                  "weights file '%s': tensor '%s' is %s in the file, the model was compiled for %s",
                  path, w.name, t->dtype.c_str(), want ? want : "?");
    if (t->shape.size() != size_t(w.rank) ||
        !std::equal(t->shape.begin(), t->shape.end(), w.shape))
      return fail(SINTER_CORRUPT_WEIGHTS,
                  "weights file '%s': tensor '%s' has shape %s in the file, the model was compiled "
                  "for %s",
                  path, w.name, shape_text(t->shape.data(), t->shape.size()).c_str(),
                  shape_text(w.shape, size_t(w.rank)).c_str());
    out.file_offset[i] = out.header.data_start + t->begin;
  }
  return SINTER_OK;
}

sinter_status stream_weights(const sinter_program &p, const WeightsFile &file,
                             bool allow_new_values, WeightSink &sink) {
  std::vector<uint32_t> order(p.num_weight_tensors);
  for (uint32_t i = 0; i < p.num_weight_tensors; ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return file.file_offset[a] < file.file_offset[b]; });
  const uint64_t chunk = sink.chunk_bytes();
  std::string error;
  for (uint32_t i : order) {
    const sinter_weight_info &w = p.weight_tensors[i];
    checksum::Hasher hasher;
    for (uint64_t done = 0; done < w.bytes;) {
      const uint64_t n = std::min(chunk, w.bytes - done);
      unsigned char *buffer = nullptr;
      sinter_status s = sink.acquire(&buffer);
      if (s != SINTER_OK)
        return s;
      if (!safetensors::pread_full(file.fd, buffer, n, file.file_offset[i] + done, error))
        return fail(SINTER_CORRUPT_WEIGHTS, "weights file '%s': tensor '%s': %s",
                    file.path.c_str(), w.name, error.c_str());
      if (!allow_new_values)
        hasher.update(buffer, n);
      if ((s = sink.submit(buffer, w.offset + done, n)) != SINTER_OK)
        return s;
      done += n;
    }
    if (allow_new_values)
      continue;
    if (const uint64_t h = hasher.finish(); h != w.checksum)
      return fail(SINTER_CORRUPT_WEIGHTS,
                  "weights file '%s': tensor '%s' fails its checksum (expected 0x%016llx, "
                  "computed 0x%016llx): the file holds other values than the model was compiled "
                  "with; load it with allow_new_values = 1 if it is a new checkpoint on purpose",
                  file.path.c_str(), w.name, static_cast<unsigned long long>(w.checksum),
                  static_cast<unsigned long long>(h));
  }
  return SINTER_OK;
}

const char *first_corrupt_tensor(const sinter_program &p, const unsigned char *blob) {
  for (uint32_t i = 0; i < p.num_weight_tensors; ++i) {
    const sinter_weight_info &w = p.weight_tensors[i];
    if (checksum::of(blob + w.offset, w.bytes) != w.checksum)
      return w.name;
  }
  return nullptr;
}

} // namespace sinter::rt
