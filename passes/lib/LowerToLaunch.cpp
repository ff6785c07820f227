#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Dialect/Launch/IR/LaunchOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERLOWERTOLAUNCH
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter;

namespace {

constexpr int64_t kWeightAlignment = 256;

MemRefType bufferTypeOf(Type t) {
  auto tensor = cast<RankedTensorType>(t);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// Rewrites one graph function into a launch program in a new function.
class FunctionLowering {
public:
  FunctionLowering(func::FuncOp func, StringRef precision)
      : func(func), precision(precision), builder(func.getContext()) {}

  LogicalResult run() {
    if (!func.getBody().hasOneBlock())
      return func.emitError("graph functions must have a single block");
    auto oldType = func.getFunctionType();
    SmallVector<Type> argTypes;
    for (Type t : oldType.getInputs())
      argTypes.push_back(bufferTypeOf(t));
    for (Type t : oldType.getResults())
      argTypes.push_back(bufferTypeOf(t));

    builder.setInsertionPoint(func);
    auto lowered = func::FuncOp::create(builder, func.getLoc(), func.getName(),
                                        builder.getFunctionType(argTypes, {}));
    Block *entry = lowered.addEntryBlock();
    unsigned numInputs = oldType.getNumInputs();
    for (unsigned i = 0; i < numInputs; ++i) {
      copyArgAttrs(func.getArgAttrDict(i), lowered, i, /*isOutput=*/false);
      buffers[func.getArgument(i)] = entry->getArgument(i);
    }
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (unsigned i = 0; i < oldType.getNumResults(); ++i) {
      copyArgAttrs(func.getResultAttrDict(i), lowered, numInputs + i, /*isOutput=*/true);
      Value produced = ret.getOperand(i);
      if (isa<BlockArgument>(produced) || produced.getDefiningOp<graph::ConstantOp>())
        return ret.emitError("output ") << i << " is an input or a constant; copies are not supported";
      if (outputSlots.count(produced))
        return ret.emitError("output ") << i << " repeats another output";
      outputSlots[produced] = entry->getArgument(numInputs + i);
    }

    builder.setInsertionPointToStart(entry);
    for (Operation &op : func.getBody().front().without_terminator())
      if (failed(lowerOp(&op)))
        return failure();
    func::ReturnOp::create(builder, ret.getLoc());
    func.erase();
    return success();
  }

private:
  void copyArgAttrs(DictionaryAttr attrs, func::FuncOp lowered, unsigned index, bool isOutput) {
    if (attrs)
      for (NamedAttribute attr : attrs)
        lowered.setArgAttr(index, attr.getName(), attr.getValue());
    if (isOutput)
      lowered.setArgAttr(index, "launch.output", builder.getUnitAttr());
  }

  /// The buffer an op result is written to: the output slot it is returned through, or
  /// a fresh arena allocation.
  Value destinationFor(Value result) {
    if (auto it = outputSlots.find(result); it != outputSlots.end())
      return it->second;
    return launch::AllocOp::create(builder, result.getLoc(), bufferTypeOf(result.getType()),
                                   IntegerAttr());
  }

  LogicalResult lowerOp(Operation *op) {
    if (auto c = dyn_cast<graph::ConstantOp>(op)) {
      if (c->use_empty())
        return success();
      auto type = bufferTypeOf(c.getType());
      std::string name = "w" + std::to_string(weightIndex++);
      auto weight = launch::WeightOp::create(builder, c.getLoc(), type, name, c.getValue(),
                                             builder.getI64IntegerAttr(weightBytes));
      weightBytes += llvm::alignTo(launch::bufferBytes(type), kWeightAlignment);
      buffers[c.getResult()] = weight;
      return success();
    }
    if (auto linear = dyn_cast<graph::LinearOp>(op))
      return lowerLinear(linear);
    return op->emitError("no launch lowering for '") << op->getName() << "'";
  }

  LogicalResult lowerLinear(graph::LinearOp linear) {
    auto inType = linear.getInput().getType();
    Type et = inType.getElementType();
    StringRef mode = et.isF32() ? precision : StringRef("native");
    if (!et.isF32() && !et.isBF16() && !et.isF16())
      return linear.emitError("linear on ") << et << " is not supported";
    int64_t k = inType.getShape().back();
    int64_t m = inType.getNumElements() / k;
    int64_t n = linear.getWeight().getType().getDimSize(1);
    Value out = destinationFor(linear.getResult());
    launch::GemmOp::create(builder, linear.getLoc(), buffers.lookup(linear.getInput()),
                           buffers.lookup(linear.getWeight()),
                           linear.getBias() ? buffers.lookup(linear.getBias()) : Value(),
                           linear.getResidual() ? buffers.lookup(linear.getResidual()) : Value(), out,
                           builder.getI64IntegerAttr(m), builder.getI64IntegerAttr(n),
                           builder.getI64IntegerAttr(k), builder.getStringAttr(mode));
    buffers[linear.getResult()] = out;
    return success();
  }

  func::FuncOp func;
  StringRef precision;
  OpBuilder builder;
  llvm::DenseMap<Value, Value> buffers;
  llvm::DenseMap<Value, Value> outputSlots;
  int64_t weightIndex = 0;

public:
  int64_t weightBytes = 0;
};

struct LowerToLaunchPass : sinter::impl::SinterLowerToLaunchBase<LowerToLaunchPass> {
  using sinter::impl::SinterLowerToLaunchBase<LowerToLaunchPass>::SinterLowerToLaunchBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (precision != "strict" && precision != "tf32") {
      module.emitError("precision must be strict or tf32, got '") << precision << "'";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    int64_t weightBytes = 0;
    for (func::FuncOp func : funcs) {
      FunctionLowering lowering(func, precision);
      if (failed(lowering.run()))
        return signalPassFailure();
      weightBytes += lowering.weightBytes;
    }
    module->setAttr("launch.weight_bytes", IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                                            weightBytes));
  }
};

} // namespace
