#ifndef SINTER_PASSES_PASSES_H
#define SINTER_PASSES_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace sinter {

#define GEN_PASS_DECL
#include "sinter/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sinter/Passes/Passes.h.inc"

} // namespace sinter

#endif
