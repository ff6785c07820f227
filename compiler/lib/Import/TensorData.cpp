// TensorProto -> DenseElementsAttr, with external data confined to the model's folder.
#include "NodeImporter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <iterator>

using namespace mlir;

namespace sinter::import {

Type elementTypeFor(MLIRContext *context, int onnxType) {
  Builder b(context);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: return b.getF32Type();
  case onnx::TensorProto::FLOAT16: return b.getF16Type();
  case onnx::TensorProto::BFLOAT16: return b.getBF16Type();
  case onnx::TensorProto::DOUBLE: return b.getF64Type();
  case onnx::TensorProto::INT64: return b.getI64Type();
  case onnx::TensorProto::INT32: return b.getI32Type();
  case onnx::TensorProto::INT16: return b.getIntegerType(16);
  case onnx::TensorProto::INT8: return b.getIntegerType(8);
  case onnx::TensorProto::UINT64: return b.getIntegerType(64, /*isSigned=*/false);
  case onnx::TensorProto::UINT32: return b.getIntegerType(32, /*isSigned=*/false);
  case onnx::TensorProto::UINT16: return b.getIntegerType(16, /*isSigned=*/false);
  case onnx::TensorProto::UINT8: return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::BOOL: return b.getI1Type();
  default: return {};
  }
}

Type constantElementTypeFor(MLIRContext *context, int onnxType) {
  Builder b(context);
  switch (onnxType) {
  case kOnnxFloat8E4M3FN: return b.getType<Float8E4M3FNType>();
  // 4-bit integers widen to 8 bits, one value a byte.
  case kOnnxUint4: return b.getIntegerType(8, /*isSigned=*/false);
  case kOnnxInt4: return b.getIntegerType(8);
  default: return elementTypeFor(context, onnxType);
  }
}

std::string dataTypeText(int onnxType) {
  // Names of the codes newer than some onnx.proto this may be built against.
  static const char *const kNewer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                       "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1",
                                       "FLOAT8E8M0", "UINT2", "INT2"};
  std::string text = std::to_string(onnxType);
  if (onnxType >= 17 && onnxType < 17 + (int)std::size(kNewer))
    text += std::string(" (") + kNewer[onnxType - 17] + ")";
  else if (onnx::TensorProto_DataType_IsValid(onnxType) &&
           onnxType != onnx::TensorProto::UNDEFINED)
    text += " (" + onnx::TensorProto_DataType_Name(onnxType) + ")";
  return text + "; supported: FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT64, INT32, INT16, INT8, "
                "UINT64, UINT32, UINT16, UINT8, BOOL (and for constants FLOAT8E4M3FN, INT4, "
                "UINT4)";
}

std::string shapeText(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

std::string shapeProblem(ArrayRef<int64_t> shape) {
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return "a negative dimension " + std::to_string(shape[i]) + " (at position " +
             std::to_string(i) + " of shape " + shapeText(shape) + ")";
  int64_t count = 1;
  bool overflow = false, zero = false;
  for (int64_t d : shape) {
    if (d == 0)
      zero = true;
    else if (!overflow && count > INT64_MAX / d)
      overflow = true;
    else if (!overflow)
      count *= d;
  }
  if (zero)
    return "";
  if (overflow)
    return "shape " + shapeText(shape) + ", whose element count overflows int64";
  if (count > kMaxElements)
    return "shape " + shapeText(shape) + " with " + std::to_string(count) +
           " elements, more than the 2^48 a tensor may hold";
  return "";
}

static int64_t storageBytes(Type t) { return t.isInteger(1) ? 1 : t.getIntOrFloatBitWidth() / 8; }

/// Resolves `location` inside `modelDir`; rejects absolute paths, `..` and symlinks out.
static FailureOr<std::string> resolveExternalPath(const std::string &location,
                                                  const std::string &modelDir,
                                                  std::string &error) {
  if (location.empty() || llvm::sys::path::is_absolute(location)) {
    error = "external data location '" + location + "' must be a relative path inside the model folder";
    return failure();
  }
  for (auto it = llvm::sys::path::begin(location), e = llvm::sys::path::end(location); it != e; ++it)
    if (*it == "..") {
      error = "external data location '" + location + "' leaves the model folder ('..')";
      return failure();
    }
  SmallString<256> joined(modelDir);
  llvm::sys::path::append(joined, location);
  SmallString<256> realDir, realFile;
  if (llvm::sys::fs::real_path(modelDir, realDir) ||
      llvm::sys::fs::real_path(joined, realFile)) {
    error = "external data file '" + location + "' not found next to the model";
    return failure();
  }
  std::string prefix = std::string(realDir) + "/";
  if (std::string(realFile).rfind(prefix, 0) != 0) {
    error = "external data location '" + location + "' resolves outside the model folder";
    return failure();
  }
  return std::string(realFile);
}

static FailureOr<std::string> readExternal(const onnx::TensorProto &tensor,
                                           const std::string &modelDir, uint64_t expected,
                                           std::string &error) {
  std::string location;
  uint64_t offset = 0, length = expected;
  bool hasLength = false;
  for (const auto &kv : tensor.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset" || kv.key() == "length") {
      char *end = nullptr;
      unsigned long long v = std::strtoull(kv.value().c_str(), &end, 10);
      if (kv.value().empty() || *end != 0) {
        error = "external data " + kv.key() + " '" + kv.value() + "' is not a number";
        return failure();
      }
      if (kv.key() == "offset")
        offset = v;
      else {
        length = v;
        hasLength = true;
      }
    }
  }
  auto path = resolveExternalPath(location, modelDir, error);
  if (failed(path))
    return failure();
  if (hasLength && length != expected) {
    error = "external data length " + std::to_string(length) + " does not match " +
            std::to_string(expected) + " bytes for its shape";
    return failure();
  }
  uint64_t fileSize = 0;
  if (llvm::sys::fs::file_size(*path, fileSize) || offset > fileSize ||
      expected > fileSize - offset) {
    error = "external data file '" + location + "' is too short: needs " +
            std::to_string(offset + expected) + " bytes, has " + std::to_string(fileSize);
    return failure();
  }
  auto buffer = llvm::MemoryBuffer::getFileSlice(*path, expected, offset);
  if (!buffer) {
    error = "cannot read external data file '" + location + "'";
    return failure();
  }
  return std::string((*buffer)->getBuffer());
}

FailureOr<DenseElementsAttr> tensorFromProto(const onnx::TensorProto &tensor,
                                             MLIRContext *context, const std::string &modelDir,
                                             std::string &error) {
  std::string what = "tensor '" + tensor.name() + "'";
  Type et = constantElementTypeFor(context, tensor.data_type());
  if (!et) {
    error = what + " has unsupported data type " + dataTypeText(tensor.data_type());
    return failure();
  }
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (std::string problem = shapeProblem(shape); !problem.empty()) {
    error = what + " has " + problem;
    return failure();
  }
  // At most 2^48 elements of at most 8 bytes: neither product overflows.
  uint64_t count = 1;
  for (int64_t d : shape)
    count *= (uint64_t)d;
  auto type = RankedTensorType::get(shape, et);
  // INT4 / UINT4 are stored two values a byte (low nibble first), in raw data and in
  // int32_data alike; they are unpacked below.
  const bool packed4 = tensor.data_type() == kOnnxInt4 || tensor.data_type() == kOnnxUint4;
  uint64_t bytes = packed4 ? (count + 1) / 2 : count * storageBytes(et);

  std::string raw;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    auto data = readExternal(tensor, modelDir, bytes, error);
    if (failed(data)) {
      error = what + ": " + error;
      return failure();
    }
    raw = std::move(*data);
  } else if (tensor.has_raw_data()) {
    raw = tensor.raw_data();
  } else {
    // Typed fields: ONNX stores f16/bf16/bool/int8 in int32_data. The count is checked
    // before anything is allocated: a tiny file may declare a huge shape.
    auto fits = [&](int have) {
      if ((uint64_t)have == count)
        return true;
      error = what + " holds " + std::to_string(have) + " values, its shape " +
              shapeText(shape) + " needs " + std::to_string(count);
      return false;
    };
    // UINT32 and UINT64 live in uint64_data; the other integers narrower than 64 bits in
    // int32_data.
    const bool inUint64 = et.isUnsignedInteger(64) || et.isUnsignedInteger(32);
    int have = et.isF32()          ? tensor.float_data_size()
               : et.isF64()        ? tensor.double_data_size()
               : inUint64          ? tensor.uint64_data_size()
               : et.isInteger(64)  ? tensor.int64_data_size()
                                   : tensor.int32_data_size();
    if (packed4) {
      if ((uint64_t)have != bytes) {
        error = what + " holds " + std::to_string(have) + " packed 4-bit pairs, its shape " +
                shapeText(shape) + " needs " + std::to_string(bytes);
        return failure();
      }
    } else if (!fits(have)) {
      return failure();
    }
    raw.resize(bytes);
    if (count == 0) {
      // Nothing to copy (and an empty repeated field may hand out a null pointer).
    } else if (et.isF32()) {
      std::memcpy(raw.data(), tensor.float_data().data(), bytes);
    } else if (et.isF64()) {
      std::memcpy(raw.data(), tensor.double_data().data(), bytes);
    } else if (inUint64) {
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t v = tensor.uint64_data(i);
        std::memcpy(&raw[i * storageBytes(et)], &v, storageBytes(et)); // little-endian
      }
    } else if (et.isInteger(64)) {
      std::memcpy(raw.data(), tensor.int64_data().data(), bytes);
    } else if (packed4) {
      for (uint64_t i = 0; i < bytes; ++i)
        raw[i] = char(tensor.int32_data(i) & 0xFF);
    } else {
      int64_t width = storageBytes(et);
      for (uint64_t i = 0; i < count; ++i) {
        int32_t v = tensor.int32_data(i);
        std::memcpy(&raw[i * width], &v, width);
      }
    }
  }
  if (raw.size() != bytes) {
    error = what + " has " + std::to_string(raw.size()) + " bytes of data, its shape " +
            shapeText(shape) + " needs " + std::to_string(bytes);
    return failure();
  }
  if (packed4) {
    const bool isSigned = tensor.data_type() == kOnnxInt4;
    std::string wide(count, '\0');
    for (uint64_t i = 0; i < count; ++i) {
      int v = (uint8_t(raw[i / 2]) >> (i % 2 ? 4 : 0)) & 15;
      if (isSigned && v >= 8)
        v -= 16;
      wide[i] = char(v);
    }
    return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(wide.data(), wide.size()));
  }
  if (et.isInteger(1)) {
    // DenseElementsAttr packs i1 as bits; ONNX stores one byte per bool.
    SmallVector<bool> bits(count);
    for (uint64_t i = 0; i < count; ++i)
      bits[i] = raw[i] != 0;
    return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(raw.data(), raw.size()));
}

} // namespace sinter::import
