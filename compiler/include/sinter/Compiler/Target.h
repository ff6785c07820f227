#ifndef SINTER_COMPILER_TARGET_H
#define SINTER_COMPILER_TARGET_H

#include <cstdint>
#include <string>

namespace sinter {

/// A GPU description from targets/<name>.yaml; launch specialization reads it.
struct Target {
  std::string name;
  std::string arch; // nvcc -arch value, e.g. sm_90
  int64_t smCount = 0;
  int64_t sharedMemoryPerBlock = 0;
  int64_t sharedMemoryPerSm = 0;
  int64_t l2Bytes = 0;
  double memoryBandwidthGBps = 0;
};

/// Loads `<targetsDir>/<name>.yaml`, or the file `name` when it ends in `.yaml`. Unknown or
/// missing keys are errors.
bool loadTarget(const std::string &targetsDir, const std::string &name, Target &target,
                std::string &error);

/// Parses one target description file.
bool parseTargetFile(const std::string &path, Target &target, std::string &error);

} // namespace sinter

#endif
