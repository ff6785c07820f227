// How the scales (and zero points) of DequantizeLinear / QuantizeLinear map onto x: one for
// the whole tensor, one per index along an axis, or one per block of `blockSize` entries along
// an axis (opset 21).
#ifndef SINTER_COMPILER_IMPORT_QUANTIZATIONLAYOUT_H
#define SINTER_COMPILER_IMPORT_QUANTIZATIONLAYOUT_H

#include "NodeImporter.h"

namespace sinter::import {

struct QuantizationLayout {
  enum Kind { PerTensor, PerAxis, Blocked } kind = PerTensor;
  int64_t axis = 0;
  int64_t blockSize = 0;
};

/// Reads the node's `axis` and `block_size` against x's and the scale's shapes; fails naming
/// the layout when the scale's shape fits none.
mlir::FailureOr<QuantizationLayout> readQuantizationLayout(NodeImporter &n,
                                                           mlir::RankedTensorType x,
                                                           mlir::RankedTensorType scale);

/// `value` (a scale or zero point in `layout`), cast to f32 and laid out to broadcast
/// against x's shape: a scalar, [1.., C, ..1], or for blocks a gather of each entry's block.
mlir::Value alongX(NodeImporter &n, mlir::Value value, const QuantizationLayout &layout,
                   llvm::ArrayRef<int64_t> xShape);

/// DequantizeLinear whose x, scale or zero point is known only at run time:
/// (x - zero) * scale in f32, rounded once to the output type.
mlir::LogicalResult importDequantizeAtRunTime(NodeImporter &n, mlir::Type outType);

} // namespace sinter::import

#endif
