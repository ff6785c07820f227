// One entry per kernel template in runtime/kernels: its compile-time parameters with their
// kinds and its pointer arguments with their roles. The launch.kernel verifier checks every
// launch against it (parameter count and kinds, argument count, that only output arguments
// are written), the lowering builds launches in its order, and the emitter includes the
// header it names.
#ifndef SINTER_DIALECT_LAUNCH_IR_KERNELREGISTRY_H
#define SINTER_DIALECT_LAUNCH_IR_KERNELREGISTRY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace sinter::launch {

enum class ParamKind {
  Int,       // an integer template argument
  Type,      // an element type: float, __half, __nv_bfloat16, __nv_fp8_e4m3 or
             // sinter::kernels::Int4x2 (two 4-bit weights a byte)
  Enum,      // an enumerator, spelled with `enumPrefix`
  FloatBits, // a float passed as its IEEE bits, spelled "<unsigned>u"
  Bool,      // true or false
};

enum class ArgRole {
  In,          // read
  Out,         // written
  InOut,       // read and written (a cache written in place)
  Optional,    // read when given, null otherwise
  OptionalOut, // written when given (scratch, handoff state), null otherwise
};

struct KernelParam {
  llvm::StringRef name;
  ParamKind kind;
  llvm::StringRef enumPrefix = {};
};

struct KernelArg {
  llvm::StringRef name;
  ArgRole role;
};

struct KernelTemplate {
  llvm::StringRef name; // sinter::kernels::<name>, declared in runtime/kernels/<name>.cuh
  llvm::ArrayRef<KernelParam> params;
  /// Parameters past this count are optional (trailing).
  unsigned requiredParams;
  llvm::ArrayRef<KernelArg> args;

  /// The position of the parameter or argument called `name`, or nullopt.
  std::optional<unsigned> paramIndex(llvm::StringRef name) const;
  std::optional<unsigned> argIndex(llvm::StringRef name) const;
};

/// The template named `name`, or null.
const KernelTemplate *lookupKernelTemplate(llvm::StringRef name);

/// Every registered template (for tests and documentation).
llvm::ArrayRef<KernelTemplate> kernelTemplates();

} // namespace sinter::launch

#endif
