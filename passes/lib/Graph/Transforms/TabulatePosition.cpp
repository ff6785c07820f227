// sinter-tabulate-position: values that depend only on the cache position become row lookups
// in tables computed at compile time.
#include "MaskProbe.h"

#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>

namespace sinter {
#define GEN_PASS_DEF_SINTERTABULATEPOSITION
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;
using sinter::passes::SliceEvaluator;

namespace {

/// The position arguments of a function with the number of positions each ranges over: the
/// positions of a cache write ([1], below the cache length), and an int64 input named
/// `position_ids` (Hugging Face's, [batch, seq]: the positions of the tokens seen so far, so
/// below the longest token axis of the inputs, the attention mask's, or the cache length).
llvm::DenseMap<Value, int64_t> positionArguments(func::FuncOp func) {
  llvm::DenseMap<Value, int64_t> out;
  int64_t tokens = 0;
  func.walk([&](CacheWriteOp write) {
    int64_t length = write.getState().getType().getDimSize(write.getAxis());
    tokens = std::max(tokens, length);
    Value p = write.getPositions();
    auto type = cast<RankedTensorType>(p.getType());
    if (!isa<BlockArgument>(p) || type.getShape() != ArrayRef<int64_t>{1})
      return;
    auto [it, inserted] = out.try_emplace(p, length);
    if (!inserted)
      it->second = std::min(it->second, length);
  });
  Value positionIds;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.getElementType().isInteger(64) || type.getRank() != 2)
      continue;
    tokens = std::max(tokens, type.getDimSize(1));
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "sinter.name");
    if (name && name.getValue() == "position_ids")
      positionIds = arg;
  }
  if (positionIds && !out.count(positionIds))
    out[positionIds] = tokens;
  return out;
}

/// The bytes of `value`'s element `index` of `elem` bytes (a splat holds one).
const char *elementBytes(DenseElementsAttr value, int64_t index, size_t elem) {
  return value.getRawData().data() + (value.isSplat() ? 0 : index * elem);
}

/// `value` for every position in [0, length), row p of a [length, n] constant; null when
/// an op in its slice does not fold, or when `value` is not one row of n elements per
/// element of `position` that depends on that position alone. Each evaluation binds a
/// different position to every element of `position` (a [1] position: one a time); a last
/// evaluation with the positions reversed checks the rows against the table.
DenseElementsAttr tabulate(Value value, Value position, int64_t length) {
  std::optional<SliceEvaluator> eval = SliceEvaluator::build(value);
  if (!eval || eval->arguments().size() != 1 || eval->arguments()[0] != position)
    return {};
  auto type = cast<RankedTensorType>(value.getType());
  auto positionType = cast<RankedTensorType>(position.getType());
  int64_t perCall = positionType.getNumElements();
  if (perCall < 1 || type.getNumElements() % perCall != 0)
    return {};
  int64_t n = type.getNumElements() / perCall;
  size_t elem = (type.getElementTypeBitWidth() + 7) / 8;
  auto evaluateAt = [&](auto positionOf) -> DenseElementsAttr {
    HostValues at;
    for (int64_t k = 0; k < perCall; ++k)
      at.ints.push_back(positionOf(k));
    auto got = dyn_cast_or_null<DenseElementsAttr>(
        eval->evaluate({makeElements(positionType, at)}));
    return got && got.getType() == type ? got : DenseElementsAttr();
  };
  std::vector<char> table(length * n * elem);
  for (int64_t first = 0; first < length; first += perCall) {
    DenseElementsAttr rows = evaluateAt([&](int64_t k) { return (first + k) % length; });
    if (!rows)
      return {};
    for (int64_t k = 0; k < perCall && first + k < length; ++k)
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(&table[((first + k) * n + i) * elem], elementBytes(rows, k * n + i, elem), elem);
  }
  if (perCall > 1) {
    // Reversed: element k's row was tabulated at another element (k's first position was
    // k mod length), so a value that depends on where an element sits does not match.
    auto permuted = [&](int64_t k) { return length - 1 - k % length; };
    DenseElementsAttr rows = evaluateAt(permuted);
    if (!rows)
      return {};
    for (int64_t k = 0; k < perCall; ++k)
      for (int64_t i = 0; i < n; ++i)
        if (std::memcmp(&table[(permuted(k) * n + i) * elem], elementBytes(rows, k * n + i, elem),
                        elem) != 0)
          return {};
  }
  auto tableType = RankedTensorType::get({length, n}, type.getElementType());
  return DenseElementsAttr::getFromRawBuffer(tableType, table);
}

Value makeShape(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get({(int64_t)shape.size()}, b.getI64Type());
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, shape));
}

struct TabulatePositionPass : sinter::impl::SinterTabulatePositionBase<TabulatePositionPass> {
  using sinter::impl::SinterTabulatePositionBase<TabulatePositionPass>::SinterTabulatePositionBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      for (auto [position, length] : positionArguments(func))
        runOnPosition(func, position, length);
  }

  void runOnPosition(func::FuncOp func, Value position, int64_t length) {
    // Values computed from the position and constants alone, in program order.
    llvm::DenseSet<Value> onlyPosition{position};
    SmallVector<Value> candidates;
    for (Operation &op : func.getBody().front()) {
      if (isa<ConstantOp>(op) || op.getNumResults() == 0 || op.getNumRegions() != 0)
        continue;
      bool reads = false, pure = true;
      for (Value operand : op.getOperands()) {
        if (onlyPosition.contains(operand))
          reads = true;
        else if (!operand.getDefiningOp<ConstantOp>())
          pure = false;
      }
      if (!reads || !pure || isa<CacheWriteOp>(op))
        continue;
      for (Value result : op.getResults()) {
        onlyPosition.insert(result);
        candidates.push_back(result);
      }
    }
    // Tabulate where such a value meets run-time data: its readers outside the set.
    for (Value value : candidates) {
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        continue;
      bool frontier = llvm::any_of(value.getUsers(), [&](Operation *user) {
        return llvm::none_of(user->getResults(),
                             [&](Value r) { return onlyPosition.contains(r); });
      });
      int64_t perPosition =
          type.getNumElements() / std::max<int64_t>(1, cast<RankedTensorType>(position.getType()).getNumElements());
      if (!frontier || perPosition * length > maxTableElements)
        continue;
      DenseElementsAttr table = tabulate(value, position, length);
      if (!table)
        continue;
      // The lookup reads only the argument and a constant: at the top of the function, so
      // it comes before every launch that reads it.
      Operation *def = value.getDefiningOp();
      Block &body = func.getBody().front();
      OpBuilder b(&body, body.begin());
      Location loc = def->getLoc();
      Value tableValue = ConstantOp::create(b, loc, table);
      auto positionShape = cast<RankedTensorType>(position.getType()).getShape();
      SmallVector<int64_t> rowShape(positionShape);
      rowShape.push_back(table.getType().getDimSize(1));
      auto rowType = RankedTensorType::get(rowShape, type.getElementType());
      Value row = GatherOp::create(b, loc, rowType, tableValue, position, b.getI64IntegerAttr(0));
      Value lookup = ReshapeOp::create(b, loc, type, row, makeShape(b, loc, type.getShape()));
      value.replaceUsesWithIf(lookup, [&](OpOperand &use) {
        Operation *user = use.getOwner();
        return user != row.getDefiningOp() && user != lookup.getDefiningOp() &&
               llvm::none_of(user->getResults(), [&](Value r) { return onlyPosition.contains(r); });
      });
    }
    // The computations the tables replace are dead now.
    llvm::SetVector<Operation *> ops;
    for (Value value : candidates)
      ops.insert(value.getDefiningOp());
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
