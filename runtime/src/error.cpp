// Last-error storage, status names, ABI version and build info.
#include "error.h"

#include "sinter/program.h"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace sinter::rt {
namespace {
// Fixed-size so that recording an error never allocates (it may run after an allocation failed).
thread_local char g_last_error[1024];
} // namespace

sinter_status fail(sinter_status status, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(g_last_error, sizeof g_last_error, fmt, args);
  va_end(args);
  return status;
}

bool is_no_device(cudaError_t err) {
  return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
         err == cudaErrorInitializationError || err == cudaErrorDevicesUnavailable ||
         err == cudaErrorSystemDriverMismatch || err == cudaErrorCompatNotSupportedOnDevice;
}

sinter_status fail_cuda(cudaError_t err, const char *what) {
  (void)cudaGetLastError(); // clear a non-sticky error so the next call starts clean
  sinter_status status = SINTER_CUDA_ERROR;
  if (err == cudaErrorMemoryAllocation)
    status = SINTER_OUT_OF_MEMORY;
  else if (is_no_device(err))
    status = SINTER_NO_DEVICE;
  return fail(status, "%s: %s: %s", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

DeviceGuard::DeviceGuard(int device) {
  int current = -1;
  error_ = cudaGetDevice(&current);
  if (error_ == cudaSuccess && current != device) {
    error_ = cudaSetDevice(device);
    if (error_ == cudaSuccess)
      previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0)
    (void)cudaSetDevice(previous_);
}

} // namespace sinter::rt

extern "C" {

SINTER_API uint32_t sinter_abi_version(void) { return SINTER_ABI_VERSION; }

SINTER_API const char *sinter_last_error(void) { return sinter::rt::g_last_error; }

SINTER_API const char *sinter_status_string(sinter_status status) {
  switch (status) {
  case SINTER_OK: return "SINTER_OK";
  case SINTER_INVALID_ARGUMENT: return "SINTER_INVALID_ARGUMENT";
  case SINTER_NO_DEVICE: return "SINTER_NO_DEVICE";
  case SINTER_CUDA_ERROR: return "SINTER_CUDA_ERROR";
  case SINTER_OUT_OF_MEMORY: return "SINTER_OUT_OF_MEMORY";
  case SINTER_ABI_MISMATCH: return "SINTER_ABI_MISMATCH";
  case SINTER_CORRUPT_WEIGHTS: return "SINTER_CORRUPT_WEIGHTS";
  case SINTER_BUSY: return "SINTER_BUSY";
  case SINTER_INTERNAL: return "SINTER_INTERNAL";
  }
  return "SINTER_UNKNOWN_STATUS";
}

SINTER_API const char *sinter_build_info(void) try {
  // Built once; a function-local static is thread-safe and the string lives for the process.
  static const std::string info = [] {
    std::string s = "sinter runtime " + std::to_string(SINTER_ABI_VERSION_MAJOR) + "." +
                    std::to_string(SINTER_ABI_VERSION_MINOR) + " (CUDA runtime " +
                    std::to_string(CUDART_VERSION) + ")";
    const sinter_program *p = sinter_generated_program();
    if (p) {
      s += "; target ";
      s += p->target ? p->target : "?";
      s += "; ";
      s += p->build_info ? p->build_info : "";
    }
    return s;
  }();
  return info.c_str();
} catch (...) {
  return "sinter runtime";
}

} // extern "C"
