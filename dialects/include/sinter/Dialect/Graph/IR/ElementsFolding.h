#ifndef SINTER_DIALECT_GRAPH_IR_ELEMENTSFOLDING_H
#define SINTER_DIALECT_GRAPH_IR_ELEMENTSFOLDING_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <functional>
#include <vector>

namespace sinter::graph {

/// Tensors above this many elements are not folded elementwise: folding is for shape math,
/// masks and tables, and must not make compile time depend on weight sizes.
constexpr int64_t kMaxFoldElements = 1 << 22;

/// A constant tensor's values widened to a host type: integers and booleans as int64,
/// floating point as double.
struct HostValues {
  bool isFloat = false;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  size_t size() const { return isFloat ? floats.size() : ints.size(); }
  double asDouble(size_t i) const { return isFloat ? floats[i] : (double)ints[i]; }
  int64_t asInt(size_t i) const { return isFloat ? (int64_t)floats[i] : ints[i]; }
};

/// Reads the values of a dense constant, or nullopt for other attributes.
std::optional<HostValues> readValues(mlir::Attribute attr);

/// Builds a dense constant of `type` from host values (rounded to the element type).
mlir::DenseElementsAttr makeElements(mlir::RankedTensorType type, const HostValues &values);

/// A possibly negative ONNX index (counting from the end) resolved against `dim`; -1 when it
/// is out of range.
inline int64_t resolveIndex(int64_t index, int64_t dim) {
  if (index < 0)
    index += dim;
  return index >= 0 && index < dim ? index : -1;
}

/// A possibly negative ONNX index resolved against `dim` (> 0) and clamped into range, as the
/// generated gather kernels read an index out of range (a run-time NonZero's padding).
inline int64_t clampedIndex(int64_t index, int64_t dim) {
  if (index < 0)
    index += dim;
  return index < 0 ? 0 : index >= dim ? dim - 1 : index;
}

/// Index of the source element feeding output index `flat` under numpy broadcasting.
int64_t broadcastSourceIndex(int64_t flat, llvm::ArrayRef<int64_t> outShape,
                             llvm::ArrayRef<int64_t> srcShape);

/// The source indices of consecutive output elements under numpy broadcasting, one step at a
/// time: broadcastSourceIndex for each element divides by every extent, which dominated
/// folding a long prompt's [S, S] attention mask.
class BroadcastWalk {
public:
  BroadcastWalk(llvm::ArrayRef<int64_t> outShape, llvm::ArrayRef<int64_t> srcShape);
  /// The source index of the current output element (the first, until next()).
  int64_t index() const { return source; }
  /// Moves to the next output element (row-major).
  void next() {
    for (size_t d = extents.size(); d-- > 0;) {
      source += strides[d];
      if (++coords[d] < extents[d])
        return;
      source -= strides[d] * extents[d];
      coords[d] = 0;
    }
  }

private:
  llvm::SmallVector<int64_t> extents, strides, coords;
  int64_t source = 0;
};

using BinaryFn = std::function<double(double, double)>;
using BinaryIntFn = std::function<int64_t(int64_t, int64_t)>;

/// Folds a broadcasting binary op; the int function is used when both operands are
/// integers and the result is not floating point.
mlir::Attribute foldBinary(mlir::Attribute lhs, mlir::Attribute rhs,
                           mlir::RankedTensorType resultType, const BinaryFn &floatFn,
                           const BinaryIntFn &intFn);

/// Folds an elementwise unary op computed in double.
mlir::Attribute foldUnary(mlir::Attribute input, mlir::RankedTensorType resultType,
                          const std::function<double(double)> &fn);

/// Permutes a dense constant's elements without converting them (any element type).
mlir::DenseElementsAttr transposeElements(mlir::DenseElementsAttr input,
                                          llvm::ArrayRef<int64_t> perm,
                                          mlir::RankedTensorType resultType);

/// IEEE half from float bits, rounded to nearest even (overflow to infinity, NaN stays a quiet
/// NaN): what APFloat's conversion gives, at a few operations per value, so that narrowing a
/// multi-gigabyte fp32 model to f16 takes seconds.
uint16_t roundToF16Bits(float value);
/// The float equal to an IEEE half (exact).
float widenF16Bits(uint16_t bits);

/// A floating-point constant's values as float (fast paths for f32, bf16 and f16 raw data).
std::vector<float> readFloat32(mlir::DenseElementsAttr input);

/// A constant of floating-point `type` from float values, rounded to nearest even.
mlir::DenseElementsAttr fromFloat32(mlir::RankedTensorType type, llvm::ArrayRef<float> values);

} // namespace sinter::graph

#endif
