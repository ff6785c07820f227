#include "LaunchLowering.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

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
} // namespace

LogicalResult FunctionLowering::run() {
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
  for (unsigned i = 0; i < oldType.getNumResults(); ++i)
    if (!buffers.count(ret.getOperand(i)))
      return ret.emitError("output ") << i << " is not produced by any launch";
  func::ReturnOp::create(builder, ret.getLoc());
  func.erase();
  return success();
}

void FunctionLowering::copyArgAttrs(DictionaryAttr attrs, func::FuncOp lowered, unsigned index,
                                    bool isOutput) {
  if (attrs)
    for (NamedAttribute attr : attrs)
      lowered.setArgAttr(index, attr.getName(), attr.getValue());
  if (isOutput)
    lowered.setArgAttr(index, "launch.output", builder.getUnitAttr());
}

Value FunctionLowering::destinationFor(Value result) {
  if (auto it = outputSlots.find(result); it != outputSlots.end())
    return it->second;
  return launch::AllocOp::create(builder, result.getLoc(), bufferTypeOf(result.getType()),
                                 IntegerAttr());
}

Value FunctionLowering::makeWeight(Location loc, DenseElementsAttr data) {
  // Attributes are uniqued: equal data is one attribute, so a tied embedding and LM head
  // (re-laid out back to the table's layout) share one copy in the blob.
  if (Value existing = weightsByData.lookup(data))
    return existing;
  auto type = bufferTypeOf(data.getType());
  std::string name = "w" + std::to_string(weightIndex++);
  auto weight = launch::WeightOp::create(builder, loc, type, name, data,
                                         builder.getI64IntegerAttr(weightBytes));
  weightBytes += llvm::alignTo(launch::bufferBytes(type), kWeightAlignment);
  weightsByData[data] = weight;
  return weight;
}

FailureOr<Value> FunctionLowering::bufferOf(Value value) {
  if (Value known = buffers.lookup(value))
    return known;
  if (auto c = value.getDefiningOp<graph::ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (!dense)
      return c.emitError("constant has no dense data");
    Value weight = makeWeight(c.getLoc(), dense);
    buffers[value] = weight;
    return weight;
  }
  // A reshape of a materialized value is the same bytes.
  if (auto reshape = value.getDefiningOp<graph::ReshapeOp>()) {
    auto source = bufferOf(reshape.getInput());
    if (succeeded(source))
      buffers[value] = *source;
    return source;
  }
  if (Operation *def = value.getDefiningOp())
    return def->emitError("value of '") << def->getName() << "' has no buffer here";
  return failure();
}

LogicalResult FunctionLowering::lowerOp(Operation *op) {
  if (absorbed.contains(op) || isa<graph::ConstantOp>(op))
    return success();
  if (auto linear = dyn_cast<graph::LinearOp>(op))
    return wantsKernel(linear) ? lowerLinearKernel(linear) : lowerGemm(linear);
  if (auto gather = dyn_cast<graph::GatherOp>(op))
    return lowerGather(gather);
  if (auto attention = dyn_cast<graph::FusedAttentionOp>(op))
    return lowerAttention(attention);
  if (auto norm = dyn_cast<graph::RMSNormalizationOp>(op))
    return lowerRmsNorm(norm);
  if (auto reshape = dyn_cast<graph::ReshapeOp>(op)) {
    // Views cost nothing; outputs that are views would need a copy.
    if (outputSlots.count(reshape.getResult()))
      return reshape.emitError("a model output that is a reshape needs a copy; not supported");
    return success(succeeded(bufferOf(reshape.getResult())));
  }
  return op->emitError("no launch lowering for '") << op->getName() << "'";
}

LogicalResult FunctionLowering::lowerGemm(graph::LinearOp linear) {
  if (linear.getNormWeight())
    return linear.emitError("a linear with a normalization prologue needs a kernel, not a library GEMM");
  auto inType = linear.getInput().getType();
  Type et = inType.getElementType();
  StringRef mode = et.isF32() ? precision : StringRef("native");
  if (!et.isF32() && !et.isBF16() && !et.isF16())
    return linear.emitError("linear on ") << et << " is not supported";
  int64_t k = inType.getShape().back();
  int64_t m = inType.getNumElements() / k;
  int64_t n = linear.getWeight().getType().getDimSize(1);
  auto input = bufferOf(linear.getInput());
  auto weight = bufferOf(linear.getWeight());
  FailureOr<Value> bias = Value(), residual = Value();
  if (linear.getBias())
    bias = bufferOf(linear.getBias());
  if (linear.getResidual())
    residual = bufferOf(linear.getResidual());
  if (failed(input) || failed(weight) || failed(bias) || failed(residual))
    return failure();
  Value out = destinationFor(linear.getResult());
  launch::GemmOp::create(builder, linear.getLoc(), *input, *weight, *bias, *residual, out,
                         builder.getI64IntegerAttr(m), builder.getI64IntegerAttr(n),
                         builder.getI64IntegerAttr(k), builder.getStringAttr(mode));
  buffers[linear.getResult()] = out;
  return success();
}

namespace {
struct LowerToLaunchPass : sinter::impl::SinterLowerToLaunchBase<LowerToLaunchPass> {
  using sinter::impl::SinterLowerToLaunchBase<LowerToLaunchPass>::SinterLowerToLaunchBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (precision != "strict" && precision != "tf32") {
      module.emitError("precision must be strict or tf32, got '") << precision << "'";
      return signalPassFailure();
    }
    if (smCount <= 0) {
      module.emitError("sm-count must be positive");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    int64_t weightBytes = 0;
    for (func::FuncOp func : funcs) {
      FunctionLowering lowering(func, precision, smCount);
      if (failed(lowering.run()))
        return signalPassFailure();
      weightBytes += lowering.weightBytes;
    }
    module->setAttr("launch.weight_bytes",
                    IntegerAttr::get(IntegerType::get(&getContext(), 64), weightBytes));
  }
};
} // namespace
