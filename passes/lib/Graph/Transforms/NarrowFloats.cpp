#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>

namespace sinter {
#define GEN_PASS_DEF_SINTERNARROWFLOATS
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

bool isFloatConstant(Value v, int64_t minRank) {
  auto constant = v.getDefiningOp<ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return constant && type && isa<FloatType>(type.getElementType()) && type.getRank() >= minRank;
}

/// Where the model's data enters: float arguments are handled by the caller; these are the ops
/// whose results are data even when their operands are not.
bool startsDataPath(Operation *op) {
  if (auto gather = dyn_cast<GatherOp>(op))
    return isFloatConstant(gather.getInput(), 1);
  if (isa<MatMulOp, GemmOp, LinearOp>(op))
    return llvm::any_of(op->getOperands(), [](Value v) { return isFloatConstant(v, 2); });
  return false;
}

/// fp32 constant values in `narrow`, with finite values saturated at its largest finite value.
DenseElementsAttr narrowElements(DenseElementsAttr value, RankedTensorType narrowType) {
  const float largest = narrowType.getElementType().isBF16() ? 3.38953139e38f : 65504.0f;
  auto saturate = [&](float x) {
    return std::isfinite(x) ? std::fmax(-largest, std::fmin(largest, x)) : x;
  };
  if (value.isSplat()) {
    float x = saturate(value.getSplatValue<APFloat>().convertToFloat());
    DenseElementsAttr scalar =
        fromFloat32(RankedTensorType::get({}, narrowType.getElementType()), {x});
    return DenseElementsAttr::get(narrowType, scalar.getSplatValue<APFloat>());
  }
  std::vector<float> values = readFloat32(value);
  for (float &x : values)
    x = saturate(x);
  return fromFloat32(narrowType, values);
}

struct NarrowFloatsPass : sinter::impl::SinterNarrowFloatsBase<NarrowFloatsPass> {
  using Base::Base;

  void runOnOperation() override {
    Type narrow;
    if (to == "bf16")
      narrow = Builder(&getContext()).getBF16Type();
    else if (to == "f16")
      narrow = Builder(&getContext()).getF16Type();
    else {
      getOperation().emitError("sinter-narrow-floats: 'to' must be bf16 or f16, got '") << to << "'";
      return signalPassFailure();
    }
    bool narrowedAny = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      FailureOr<bool> narrowed = narrowFunction(func, narrow);
      if (failed(narrowed))
        return signalPassFailure();
      narrowedAny |= *narrowed;
    }
    if (narrowedAny)
      getOperation()->setAttr("sinter.narrowed_from_f32",
                              StringAttr::get(&getContext(), std::string(to)));
  }

  /// Fails (with a located error) on a function whose ops have regions: narrowing runs before
  /// fusion groups are formed and does not re-type their bodies.
  FailureOr<bool> narrowFunction(func::FuncOp func, Type narrow) {
    if (func.isExternal())
      return false;
    for (Operation &op : func.getBody().front())
      if (op.getNumRegions() > 0)
        return op.emitError("sinter-narrow-floats runs before fusion groups are formed");
    auto narrowed = [&](Type type) {
      return cast<RankedTensorType>(type).clone(narrow);
    };
    // The data path, in program order (the body is one block in SSA order).
    llvm::DenseSet<Value> data;
    for (BlockArgument arg : func.getArguments())
      if (isa<FloatType>(getElementTypeOrSelf(arg.getType())))
        data.insert(arg);
    SmallVector<Operation *> dataOps;
    // A bitcast reads the bits it was given: it stays off the data path (its result is not
    // narrowed) and reads fp32 data through a cast back.
    SmallVector<BitCastOp> bitCasts;
    for (Operation &op : func.getBody().front()) {
      if (isa<func::ReturnOp>(op))
        continue;
      if (auto bitCast = dyn_cast<BitCastOp>(op)) {
        bitCasts.push_back(bitCast);
        continue;
      }
      bool onPath = startsDataPath(&op) ||
                    llvm::any_of(op.getOperands(), [&](Value v) { return data.contains(v); });
      if (!onPath)
        continue;
      dataOps.push_back(&op);
      for (Value result : op.getResults())
        if (isa<FloatType>(getElementTypeOrSelf(result.getType())))
          data.insert(result);
    }

    bool changed = false;
    OpBuilder builder(func.getContext());
    llvm::DenseMap<Value, Value> narrowedConstants, castsOffPath;
    // An fp32 operand off the data path: a converted constant, or a cast where it is read.
    auto narrowOperand = [&](Value v) -> Value {
      if (auto constant = v.getDefiningOp<ConstantOp>()) {
        Value &slot = narrowedConstants[v];
        if (!slot) {
          if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
            builder.setInsertionPointAfter(constant);
            slot = ConstantOp::create(builder, constant.getLoc(),
                                      narrowElements(dense, narrowed(v.getType())));
          }
        }
        if (slot)
          return slot;
      }
      Value &slot = castsOffPath[v];
      if (!slot) {
        if (Operation *def = v.getDefiningOp())
          builder.setInsertionPointAfter(def);
        else
          builder.setInsertionPointToStart(&func.getBody().front());
        slot = CastOp::create(builder, v.getLoc(), narrowed(v.getType()), v);
      }
      return slot;
    };

    for (BlockArgument arg : func.getArguments())
      if (isF32Tensor(arg.getType())) {
        arg.setType(narrowed(arg.getType()));
        changed = true;
      }
    for (Operation *op : dataOps) {
      for (OpOperand &operand : op->getOpOperands()) {
        Value v = operand.get();
        if (isF32Tensor(v.getType()) && !data.contains(v))
          operand.set(narrowOperand(v));
      }
      for (Value result : op->getResults())
        if (isF32Tensor(result.getType())) {
          result.setType(narrowed(result.getType()));
          changed = true;
        }
    }
    for (BitCastOp bitCast : bitCasts) {
      auto inType = cast<RankedTensorType>(bitCast.getInput().getType());
      if (inType.getElementType() != narrow ||
          bitCast.getType().getElementType().getIntOrFloatBitWidth() != 32)
        continue;
      builder.setInsertionPoint(bitCast);
      bitCast.getInputMutable().assign(CastOp::create(
          builder, bitCast.getLoc(), inType.clone(builder.getF32Type()), bitCast.getInput()));
    }
    for (auto &[original, replacement] : narrowedConstants)
      if (original.use_empty())
        original.getDefiningOp()->erase();

    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    func.setType(FunctionType::get(func.getContext(), func.getBody().front().getArgumentTypes(),
                                   ret.getOperandTypes()));
    return changed;
  }
};

} // namespace
