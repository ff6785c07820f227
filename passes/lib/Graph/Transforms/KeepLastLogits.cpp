// sinter-keep-last-logits: `sinter compile --last-logits` computes a prompt's logits at its
// last position only, which is all that generation reads: the LM head of a 512-token prompt
// otherwise multiplies 512 rows by the whole vocabulary for one row's worth of use.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/EntryNames.h"
#include "sinter/Passes/GenericPlan.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERKEEPLASTLOGITS
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

constexpr StringLiteral kLogits = "logits";

/// [batch, 1, ...rest] for a [batch, seq, ...rest] type.
RankedTensorType lastPositionType(RankedTensorType type) {
  SmallVector<int64_t> shape(type.getShape());
  shape[1] = 1;
  return RankedTensorType::get(shape, type.getElementType());
}

/// Whether a constant operand of an elementwise op still broadcasts to `shape` once the
/// sequence axis (axis 1 of `shape`) is 1: it has no entry there or a 1.
bool broadcastsToLastPosition(Value operand, ArrayRef<int64_t> shape) {
  auto type = dyn_cast<RankedTensorType>(operand.getType());
  if (!type || !operand.getDefiningOp<ConstantOp>())
    return false;
  const int64_t axis = type.getRank() - (int64_t(shape.size()) - 1);
  return axis < 0 || type.getDimSize(axis) == 1;
}

struct KeepLastLogitsPass : sinter::impl::SinterKeepLastLogitsBase<KeepLastLogitsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int entries = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      const int index = sinter::findNamedResult(func, kLogits);
      if (index < 0 || !func.getBody().hasOneBlock())
        continue;
      ++entries;
      if (failed(keepLast(func, index)))
        return signalPassFailure();
    }
    if (entries == 0) {
      module.emitError("--last-logits needs an entry with a 'logits' output [batch, seq, vocab]");
      return signalPassFailure();
    }
  }

  /// The logits of `func` (result `index`) at the last position: the final linear reads its
  /// input's last row of each sequence, and the elementwise ops between it and the output
  /// (a soft-cap) shrink with it. An entry whose logits have one position already is left.
  LogicalResult keepLast(func::FuncOp func, int index) {
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    Value logits = ret.getOperand(index);
    auto type = dyn_cast<RankedTensorType>(logits.getType());
    if (!type || type.getRank() != 3 || !isa<FloatType>(type.getElementType()))
      return func.emitError("--last-logits: entry '")
             << func.getName() << "' has logits " << logits.getType()
             << ", not float [batch, seq, vocab]";
    if (type.getDimSize(1) == 1)
      return success();
    // The chain from the final linear to the output, output first.
    SmallVector<Operation *> chain;
    Value v = logits;
    LinearOp linear;
    while (!(linear = v.getDefiningOp<LinearOp>())) {
      Operation *op = v.getDefiningOp();
      if (!op || !sinter::isElementwiseOp(op) || op->getNumResults() != 1 || !v.hasOneUse())
        return notFromLinear(func);
      Value fromChain;
      for (Value operand : op->getOperands()) {
        if (operand.getType() == type && !fromChain)
          fromChain = operand;
        else if (!broadcastsToLastPosition(operand, type.getShape()))
          return notFromLinear(func);
      }
      if (!fromChain)
        return notFromLinear(func);
      chain.push_back(op);
      v = fromChain;
    }
    auto inputType = cast<RankedTensorType>(linear.getInput().getType());
    if (!v.hasOneUse() || inputType.getRank() != 3 || v.getType() != type)
      return notFromLinear(func);

    OpBuilder b(linear);
    auto lastRow = [&](Value full) -> Value {
      auto fullType = cast<RankedTensorType>(full.getType());
      SmallVector<int64_t> starts(fullType.getRank(), 0), steps(fullType.getRank(), 1);
      SmallVector<int64_t> ends(fullType.getShape());
      starts[1] = fullType.getDimSize(1) - 1;
      return SliceOp::create(b, linear.getLoc(), lastPositionType(fullType), full, starts, ends,
                             steps);
    };
    linear.getInputMutable().assign(lastRow(linear.getInput()));
    if (Value residual = linear.getResidual())
      linear.getResidualMutable().assign(lastRow(residual));
    linear.getOutput().setType(lastPositionType(type));
    for (Operation *op : llvm::reverse(chain))
      op->getResult(0).setType(
          lastPositionType(cast<RankedTensorType>(op->getResult(0).getType())));
    func.setType(b.getFunctionType(func.getArgumentTypes(), ret.getOperandTypes()));
    return success();
  }

  LogicalResult notFromLinear(func::FuncOp func) {
    return func.emitError("--last-logits: entry '")
           << func.getName()
           << "' does not compute its logits with a final linear over [batch, seq, hidden] "
              "(and elementwise ops after it)";
  }
};

} // namespace
