// Nodes written against default-domain opsets 7 to 12, rewritten into opset 13's forms
// (LegacyForms.cpp says which ops differ and how).
#ifndef SINTER_COMPILER_IMPORT_LEGACYFORMS_H
#define SINTER_COMPILER_IMPORT_LEGACYFORMS_H

#include "onnx.pb.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LogicalResult.h"

#include <functional>
#include <string>
#include <vector>

namespace sinter::import {

/// The type of a value defined so far, or null.
using LegacyTypeOf = std::function<mlir::RankedTensorType(const std::string &)>;

/// `node` (named `name`, of default-domain opset `opset` < 13) as nodes of opset 13's forms:
/// itself unchanged when its op means the same, else Constant nodes for former attributes
/// followed by the rewritten node (or a few nodes for Softmax's older axis). Failure sets
/// `error` to a message about the node.
mlir::FailureOr<std::vector<onnx::NodeProto>>
rewriteLegacyNode(const onnx::NodeProto &node, int64_t opset, const std::string &name,
                  const LegacyTypeOf &typeOf, std::string &error);

} // namespace sinter::import

#endif
