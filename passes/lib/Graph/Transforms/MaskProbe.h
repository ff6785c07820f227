#ifndef SINTER_PASSES_LIB_MASKPROBE_H
#define SINTER_PASSES_LIB_MASKPROBE_H

// Recognizing attention masks by evaluating them: a mask computed from constants and one
// [B, S] function argument is run through the ops' folders on probe inputs, and the
// results are compared with the causal and key-padding patterns the fused kernel applies.

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace sinter::passes {

/// The backward slice of a value, evaluated with the ops' folders.
class SliceEvaluator {
public:
  /// Collects the ops `root` depends on. Fails unless every path ends in a constant-like op
  /// or a block argument, and every op in the slice has no regions.
  static std::optional<SliceEvaluator> build(mlir::Value root);

  /// The block arguments the slice reads, in first-use order.
  llvm::ArrayRef<mlir::Value> arguments() const { return args; }

  /// The slice's ops, each after the producers of its operands.
  llvm::ArrayRef<mlir::Operation *> operations() const { return ops; }

  /// `root` computed with `argValues[i]` bound to `arguments()[i]`; null where an op does not
  /// fold (folders give up above kMaxFoldElements elements).
  mlir::Attribute evaluate(llvm::ArrayRef<mlir::Attribute> argValues) const;

private:
  mlir::Value root;
  llvm::SmallVector<mlir::Operation *> ops; // topological order
  llvm::SmallVector<mlir::Value> args;
};

/// How a mask value says "attend": boolean masks select (true attends); additive masks are
/// 0 where attended and hugely negative (<= -1e4, or -inf) where masked.
enum class MaskKind { Boolean, Additive };

/// An i1 mask selects, any other is added to the scores.
inline MaskKind maskKindOf(mlir::Value mask) {
  return mlir::cast<mlir::ShapedType>(mask.getType()).getElementType().isInteger(1)
             ? MaskKind::Boolean
             : MaskKind::Additive;
}

/// What a mask computes, in the terms of sinter.fused_attention.
struct MaskMeaning {
  bool causal = false;
  /// The [B, S] function argument whose zero entries mask keys, or null.
  mlir::Value keyMask;
};

/// Probes `mask` (broadcasting to [batch, heads, seq, seq]; its kind is maskKindOf's) and
/// returns its meaning when it is exactly "causal or not, plus optionally key padding from one
/// [batch, seq] integer or boolean function argument". `alsoCausal` ANDs a causal mask into what the mask selects
/// (an Attention op's is_causal). nullopt when the mask is anything else.
std::optional<MaskMeaning> probeMask(mlir::Value mask, int64_t batch, int64_t heads,
                                     int64_t seq, bool alsoCausal);

/// The [batch, keys] integer function argument `mask` reads when the mask (broadcasting to
/// [batch, heads, 1, keys]: one query row per sequence, as in a decode step) attends exactly
/// the keys whose argument entry is not 0; null when it is anything else.
mlir::Value probeKeyMask(mlir::Value mask, int64_t batch, int64_t keys);

} // namespace sinter::passes

#endif
