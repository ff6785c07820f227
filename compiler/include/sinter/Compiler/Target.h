#ifndef SINTER_COMPILER_TARGET_H
#define SINTER_COMPILER_TARGET_H

#include "sinter/Passes/CompileTarget.h"

#include <string>

namespace sinter {

/// A GPU description from targets/<name>.yaml: the limits the passes read off the module
/// (CompileTarget, which the driver records there) and what only the driver reads.
struct Target : CompileTarget {
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
