// Helpers shared by the C++ examples: device tensors described as DLTensors, deterministic
// inputs, checksums. Plain CUDA runtime API; no Sinter internals.
#pragma once

#include "sinter/sinter.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace example {

inline void cuda_check(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + ": " +
                             cudaGetErrorString(e));
}

inline uint64_t element_bytes(DLDataType t) { return (uint64_t(t.bits) * t.lanes + 7) / 8; }

inline uint64_t tensor_bytes(const sinter_tensor_desc &d) {
  uint64_t n = element_bytes(d.dtype);
  for (int i = 0; i < d.ndim; ++i) n *= uint64_t(d.shape[i]);
  return n;
}

inline std::string dtype_name(DLDataType t) {
  if (t.code == kDLFloat) return "f" + std::to_string(t.bits);
  if (t.code == kDLBfloat) return "bf16";
  if (t.code == kDLInt) return "i" + std::to_string(t.bits);
  if (t.code == kDLUInt) return "u" + std::to_string(t.bits);
  return t.code == 6 ? "bool" : "code" + std::to_string(t.code);
}

inline std::string describe(const sinter_tensor_desc &d) {
  std::string s = std::string(d.name) + " " + dtype_name(d.dtype) + "[";
  for (int i = 0; i < d.ndim; ++i) s += (i ? "x" : "") + std::to_string(d.shape[i]);
  return s + "]";
}

inline uint16_t to_half_bits(float f, bool bf16) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (bf16) return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const int exp = int((u >> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return sign;
  if (exp >= 31) return uint16_t(sign | 0x7c00u);
  return uint16_t(sign | (exp << 10) | ((u & 0x7fffffu) >> 13));
}

// Deterministic host bytes for a tensor: floats sin(0.1 i + seed) in [-1, 1], integers
// (i * 7 + seed) % 100 (token ids), bool (i + seed) % 2.
inline std::vector<unsigned char> pattern(const sinter_tensor_desc &d, unsigned seed) {
  const uint64_t e = element_bytes(d.dtype), n = tensor_bytes(d) / e;
  std::vector<unsigned char> out(n * e);
  for (uint64_t i = 0; i < n; ++i) {
    unsigned char *p = out.data() + i * e;
    const float f = std::sin(0.1f * float(i) + float(seed));
    const int64_t k = int64_t((i * 7 + seed) % 100);
    if (d.dtype.code == kDLFloat && d.dtype.bits == 32) std::memcpy(p, &f, 4);
    else if (d.dtype.code == kDLFloat && d.dtype.bits == 16) { uint16_t h = to_half_bits(f, false); std::memcpy(p, &h, 2); }
    else if (d.dtype.code == kDLBfloat) { uint16_t h = to_half_bits(f, true); std::memcpy(p, &h, 2); }
    else if (d.dtype.code == kDLInt && d.dtype.bits == 64) std::memcpy(p, &k, 8);
    else if (d.dtype.code == kDLInt && d.dtype.bits == 32) { int32_t v = int32_t(k); std::memcpy(p, &v, 4); }
    else *p = static_cast<unsigned char>((i + seed) & 1);
  }
  return out;
}

inline uint64_t fnv1a64(const void *data, uint64_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Device memory for one tensor, with a DLTensor describing it.
class DeviceTensor {
public:
  DeviceTensor(const sinter_tensor_desc &d, int device) : desc_(d), bytes_(tensor_bytes(d)) {
    cuda_check(cudaMalloc(&data_, bytes_ ? bytes_ : 1), "cudaMalloc");
    std::memcpy(shape_, d.shape, sizeof shape_);
    std::memset(&t_, 0, sizeof t_);
    t_.data = data_;
    t_.device.device_type = kDLCUDA;
    t_.device.device_id = device;
    t_.ndim = d.ndim;
    t_.dtype = d.dtype;
    t_.shape = shape_;
  }
  DeviceTensor(const DeviceTensor &) = delete;
  DeviceTensor &operator=(const DeviceTensor &) = delete;
  ~DeviceTensor() { cudaFree(data_); }
  const DLTensor &dl() const { return t_; }
  void *data() const { return data_; }
  uint64_t bytes() const { return bytes_; }
  const sinter_tensor_desc &desc() const { return desc_; }
  void upload(const std::vector<unsigned char> &host) {
    cuda_check(cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice), "upload");
  }
  std::vector<unsigned char> download() const {
    std::vector<unsigned char> host(bytes_);
    cuda_check(cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost), "download");
    return host;
  }

private:
  sinter_tensor_desc desc_;
  uint64_t bytes_;
  void *data_ = nullptr;
  int64_t shape_[SINTER_TENSOR_MAX_NDIM];
  DLTensor t_;
};

inline int current_device() {
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

} // namespace example
