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

/// The position arguments of a function with the cache length each indexes.
llvm::DenseMap<Value, int64_t> positionArguments(func::FuncOp func) {
  llvm::DenseMap<Value, int64_t> out;
  func.walk([&](CacheWriteOp write) {
    Value p = write.getPositions();
    auto type = cast<RankedTensorType>(p.getType());
    if (!isa<BlockArgument>(p) || type.getShape() != ArrayRef<int64_t>{1})
      return;
    int64_t length = write.getState().getType().getDimSize(write.getAxis());
    auto [it, inserted] = out.try_emplace(p, length);
    if (!inserted)
      it->second = std::min(it->second, length);
  });
  return out;
}

/// `value` for every position in [0, length), row p of a [length, n] constant; null when
/// an op in its slice does not fold.
DenseElementsAttr tabulate(Value value, Value position, int64_t length) {
  std::optional<SliceEvaluator> eval = SliceEvaluator::build(value);
  if (!eval || eval->arguments().size() != 1 || eval->arguments()[0] != position)
    return {};
  auto type = cast<RankedTensorType>(value.getType());
  auto positionType = cast<RankedTensorType>(position.getType());
  int64_t n = type.getNumElements();
  size_t elem = (type.getElementTypeBitWidth() + 7) / 8;
  std::vector<char> table(length * n * elem);
  for (int64_t p = 0; p < length; ++p) {
    HostValues at;
    at.ints = {p};
    auto row = dyn_cast_or_null<DenseElementsAttr>(eval->evaluate({makeElements(positionType, at)}));
    if (!row || row.getType() != type)
      return {};
    ArrayRef<char> raw = row.getRawData();
    char *dst = &table[p * n * elem];
    if (row.isSplat())
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(dst + i * elem, raw.data(), elem);
    else
      std::memcpy(dst, raw.data(), n * elem);
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
      if (!frontier || type.getNumElements() * length > maxTableElements)
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
      int64_t n = type.getNumElements();
      auto rowType = RankedTensorType::get({1, n}, type.getElementType());
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
