#ifndef SINTER_PASSES_ENTRYNAMES_H
#define SINTER_PASSES_ENTRYNAMES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace sinter {

/// The index of the entry's result called `name` (its sinter.name: the model's output name),
/// or -1.
inline int findNamedResult(mlir::func::FuncOp func, llvm::StringRef name) {
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (auto n = func.getResultAttrOfType<mlir::StringAttr>(i, "sinter.name");
        n && n.getValue() == name)
      return int(i);
  return -1;
}

/// The index of the entry's argument called `name` (the model's input name), or -1.
inline int findNamedArgument(mlir::func::FuncOp func, llvm::StringRef name) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto n = func.getArgAttrOfType<mlir::StringAttr>(i, "sinter.name");
        n && n.getValue() == name)
      return int(i);
  return -1;
}

} // namespace sinter

#endif
