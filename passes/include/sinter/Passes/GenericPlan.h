// How a generic kernel covers its work: the one analysis of a fusion group's body that the
// launch lowering (grid, block) and the emitter (the generated loops) both read.
#ifndef SINTER_PASSES_GENERICPLAN_H
#define SINTER_PASSES_GENERICPLAN_H

#include "mlir/IR/Block.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <string>

namespace sinter {

struct GenericPlan {
  /// The row operation (reduction, softmax, normalization, running sum), or null for
  /// elementwise work.
  mlir::Operation *rowOp = nullptr;
  /// The row operation's input shape and the dimensions it reduces (sorted).
  llvm::SmallVector<int64_t> rowInputShape, reducedDims;
  /// True when the row operation's result has the reduced shape (Reduce*, ArgMax), false
  /// when it has its input's (softmax, normalizations, CumSum).
  bool reducesShape = false;
  int64_t rows = 0, rowLength = 0;
  /// Elementwise: the shape every output is computed over, one thread per element.
  llvm::SmallVector<int64_t> iterationShape;
  int64_t threadsPerRow = 0, rowsPerBlock = 1, elementsPerThread = 1;
  /// Elementwise bodies whose inputs are read only through numpy broadcasts: each thread
  /// computes this many consecutive elements of the innermost dimension with vector loads and
  /// stores (elementsPerThread equals it; 1 = no vectors).
  int64_t vectorWidth = 1;
  /// Elementwise bodies that read an input across the output's innermost dimension (a
  /// transpose of the two innermost dimensions, say): the output is covered in square tiles of
  /// `tileSide` elements of dimensions `tileDim` and the innermost, and each staged input —
  /// read with its innermost dimension along `tileDim` — goes through shared memory, so that
  /// its reads and the output's writes are both coalesced. -1: none.
  int64_t tileDim = -1;
  /// 32, or 64 when the staged inputs and the outputs are 16-bit or narrower: a tile row is
  /// then a whole 128-byte line (32-element rows of 2 bytes moved 58 % of the copy bandwidth).
  int64_t tileSide = 0;
  /// Consecutive tile elements a thread reads (staging) and writes (output) as one access: 2
  /// for 16-bit and narrower tiles (with 2-byte accesses a bf16 transpose moved 76 % of the
  /// copy bandwidth), else 1.
  int64_t tileVector = 1;
  struct StagedInput {
    unsigned argument;
    /// For each dimension of the input, the output dimension its index is (-1: extent 1).
    llvm::SmallVector<int64_t> outputDimOf;
  };
  llvm::SmallVector<StagedInput> stagedInputs;
  int64_t grid = 1, block = 1;
};

/// The side of a transposing kernel's square tile below which tiles do not pay.
constexpr int64_t kTransposeTile = 32;
/// At most this many inputs are staged (a padded tile of shared memory each: 32 x 33
/// elements, or 64 x 65 for 16-bit ones).
constexpr unsigned kMaxStagedInputs = 4;

/// Threads of an elementwise block.
constexpr int64_t kGenericBlock = 256;

/// The graph ops a generated kernel computes (the emitter's op set), in three kinds:
/// elementwise functions of operands read at the broadcast index,
bool isElementwiseOp(mlir::Operation *op);
/// data movement (operands read at another index: transpose, slice, reshape, broadcast,
/// concat, gathers, scatters, pad, RoPE's rotation; constants and generators),
bool isDataMovementOp(mlir::Operation *op);
/// and row operations (reductions, softmax, normalizations, running sums), at most one a
/// kernel.
bool isRowOp(mlir::Operation *op);
inline bool isGenericOp(mlir::Operation *op) {
  return isElementwiseOp(op) || isDataMovementOp(op) || isRowOp(op);
}

/// Bytes a generated kernel stores an element of `t` in (bool: one).
inline int64_t storageBytes(mlir::Type t) {
  return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
}

/// A constant a generated kernel holds as literals (splat, or at most 16 elements) instead of
/// reading it from the weight blob.
bool isInlinedConstant(mlir::Value v);

/// Plans the kernel of `body` (a fusion group's or a generic launch's); fails with `error`
/// when the body is not one the generic tier computes.
mlir::FailureOr<GenericPlan> planGenericKernel(mlir::Block &body, std::string &error);

} // namespace sinter

#endif
