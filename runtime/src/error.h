// Thread-local last-error message and the guard every exported function runs inside.
#pragma once

#include "sinter/sinter.h"

#include <cuda_runtime_api.h>

namespace sinter::rt {

// Records a printf-style message as this thread's last error and returns `status`. Only called
// on failure paths, so formatting cost never reaches a successful run.
sinter_status fail(sinter_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Maps a failed CUDA call to a status (NO_DEVICE / OUT_OF_MEMORY / CUDA_ERROR) with a message
// "<what>: <cudaGetErrorName>: <cudaGetErrorString>", and clears the non-sticky CUDA error.
sinter_status fail_cuda(cudaError_t err, const char *what);

// True when `err` means there is no usable device or driver.
bool is_no_device(cudaError_t err);

// Switches to `device` for a scope when another one is current, and back afterwards, so a
// caller's current device is never changed behind its back.
class DeviceGuard {
public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;
  cudaError_t error() const { return error_; }

private:
  int previous_ = -1;
  cudaError_t error_ = cudaSuccess;
};

} // namespace sinter::rt

// Wraps an exported function body: no exception crosses the C ABI.
#define SINTER_API_BEGIN try {
#define SINTER_API_END                                                                      \
  }                                                                                         \
  catch (const std::bad_alloc &) {                                                          \
    return ::sinter::rt::fail(SINTER_OUT_OF_MEMORY, "host allocation failed");              \
  }                                                                                         \
  catch (const std::exception &e) {                                                         \
    return ::sinter::rt::fail(SINTER_INTERNAL, "internal error: %s", e.what());             \
  }                                                                                         \
  catch (...) {                                                                             \
    return ::sinter::rt::fail(SINTER_INTERNAL, "internal error: unknown exception");        \
  }
