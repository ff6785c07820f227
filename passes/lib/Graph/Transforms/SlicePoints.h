#ifndef SINTER_PASSES_LIB_SLICEPOINTS_H
#define SINTER_PASSES_LIB_SLICEPOINTS_H

// Evaluating a constant-and-argument slice at chosen elements. An attention mask of a long
// prompt is [S, S] (a gigabyte of booleans at 32768 tokens) but is built from [S] ranges
// and a [B, S] argument by broadcasting ops; its value at a few rows costs rows x S through
// per-op index rules, where folding it whole is beyond the folders' element limit.

#include "sinter/Dialect/Graph/IR/ElementsFolding.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>

namespace sinter::passes {

class SlicePointEvaluator {
public:
  /// Values up to this many elements are folded whole (and reused for every point asked
  /// of them); larger ones are evaluated at the points only.
  static constexpr int64_t kWholeElements = 1 << 18;

  /// The slice of `root` (as SliceEvaluator::build: constants and block arguments at every
  /// end, no regions, a bounded op count). Constants and generators (range,
  /// constant_of_shape, shape) are always read whole; other values when they have at most
  /// `wholeElements` elements.
  static std::optional<SlicePointEvaluator> build(mlir::Value root,
                                                  int64_t wholeElements = kWholeElements);

  /// The block arguments the slice reads, in first-use order.
  llvm::ArrayRef<mlir::Value> arguments() const { return args; }

  /// `root`'s elements at `points` (row-major flat indices into its shape), with
  /// `argValues[i]` bound to `arguments()[i]`. nullopt where an op on the way has no point
  /// rule or does not fold.
  std::optional<graph::HostValues> evaluate(llvm::ArrayRef<mlir::Attribute> argValues,
                                            llvm::ArrayRef<int64_t> points);

private:
  struct Evaluation;
  mlir::Attribute whole(mlir::Value v, Evaluation &state);
  std::optional<graph::HostValues> at(mlir::Value v, llvm::ArrayRef<int64_t> points,
                                      Evaluation &state);
  std::optional<graph::HostValues> elementwiseAt(mlir::Operation *op,
                                                 llvm::ArrayRef<int64_t> points,
                                                 Evaluation &state);
  std::optional<graph::HostValues> dataMovementAt(mlir::Operation *op,
                                                  llvm::ArrayRef<int64_t> points,
                                                  Evaluation &state);

  mlir::Value root;
  int64_t wholeElements = kWholeElements;
  llvm::SmallVector<mlir::Value> args;
  /// Values computed from constants only: folded once for every evaluation.
  llvm::DenseSet<mlir::Value> argumentFree;
  llvm::DenseMap<mlir::Value, mlir::Attribute> constantWhole;
  /// Holds the [N]-typed operands of the op copies elementwise folding runs on.
  std::unique_ptr<mlir::Block> scratch;
};

} // namespace sinter::passes

#endif
