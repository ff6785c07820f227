#ifndef SINTER_DIALECT_GRAPH_IR_GRAPHOPS_H
#define SINTER_DIALECT_GRAPH_IR_GRAPHOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "sinter/Dialect/Graph/IR/GraphDialect.h"

#define GET_OP_CLASSES
#include "sinter/Dialect/Graph/IR/GraphOps.h.inc"

namespace sinter::graph {

/// numpy broadcast of two static shapes; failure when they are incompatible.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// `input` with the dimensions in `axes` removed (or kept as 1 with `keepdims`).
llvm::SmallVector<int64_t> reducedShape(llvm::ArrayRef<int64_t> input,
                                        llvm::ArrayRef<int64_t> axes, bool keepdims);

/// Shape of numpy matmul(lhs, rhs); failure when the operands do not fit.
mlir::FailureOr<llvm::SmallVector<int64_t>>
matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// The value of `v` when it is a one-element floating-point sinter.constant (a scale, an
/// epsilon, an exponent), else nullopt.
std::optional<double> scalarConstant(mlir::Value v);

/// Columns [start, end) of the last axis that `slice` takes (unit steps, every other axis
/// whole), or nullopt for any other slice.
std::optional<std::pair<int64_t, int64_t>> lastAxisColumns(SliceOp slice);

/// The one op reading `v`, or null when none or several do.
inline mlir::Operation *singleUser(mlir::Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

} // namespace sinter::graph

#endif
