#include "LaunchLowering.h"
#include "sinter/Passes/GenericPlan.h"
#include "sinter/Passes/Passes.h"
#include "sinter/Passes/PatternKernels.h"
#include "sinter/Passes/StatePlacement.h"
#include "sinter/program.h" // SINTER_BUFFER_ALIGNMENT

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERLOWERTOLAUNCH
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter;

namespace {

MemRefType bufferTypeOf(Type t) {
  auto tensor = cast<RankedTensorType>(t);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}
} // namespace

LogicalResult FunctionLowering::run() {
  if (!func.getBody().hasOneBlock())
    return func.emitError("graph functions must have a single block");
  auto oldType = func.getFunctionType();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  auto stateName = [](DictionaryAttr attrs) {
    return attrs ? attrs.getAs<StringAttr>("sinter.state") : StringAttr();
  };
  // State arguments and results (KV caches) live in the context, not in the I/O.
  SmallVector<Type> argTypes;
  SmallVector<unsigned> inputArgs, outputResults;
  for (unsigned i = 0; i < oldType.getNumInputs(); ++i)
    if (!stateName(func.getArgAttrDict(i))) {
      inputArgs.push_back(i);
      argTypes.push_back(bufferTypeOf(oldType.getInput(i)));
    }
  for (unsigned i = 0; i < oldType.getNumResults(); ++i)
    if (!stateName(func.getResultAttrDict(i))) {
      outputResults.push_back(i);
      argTypes.push_back(bufferTypeFor(oldType.getResult(i)));
    }

  builder.setInsertionPoint(func);
  auto lowered = func::FuncOp::create(builder, func.getLoc(), func.getName(),
                                      builder.getFunctionType(argTypes, {}));
  Block *entry = lowered.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  for (auto [slot, i] : llvm::enumerate(inputArgs)) {
    copyArgAttrs(func.getArgAttrDict(i), lowered, slot, /*isOutput=*/false);
    buffers[func.getArgument(i)] = entry->getArgument(slot);
  }
  for (unsigned i = 0; i < oldType.getNumInputs(); ++i)
    if (StringAttr name = stateName(func.getArgAttrDict(i)))
      buffers[func.getArgument(i)] =
          stateBuffer(func.getArgument(i).getLoc(), name, bufferTypeOf(oldType.getInput(i)));
  for (auto [slot, i] : llvm::enumerate(outputResults)) {
    unsigned argIndex = inputArgs.size() + slot;
    copyArgAttrs(func.getResultAttrDict(i), lowered, argIndex, /*isOutput=*/true);
    Value produced = ret.getOperand(i);
    // An input, a constant or a value already given to another output is copied.
    if (isa<BlockArgument>(produced) || produced.getDefiningOp<graph::ConstantOp>() ||
        outputSlots.count(produced))
      outputCopies.push_back({produced, entry->getArgument(argIndex)});
    else
      outputSlots[produced] = entry->getArgument(argIndex);
  }
  for (unsigned i = 0; i < oldType.getNumResults(); ++i) {
    StringAttr name = stateName(func.getResultAttrDict(i));
    if (!name)
      continue;
    auto write = ret.getOperand(i).getDefiningOp<graph::CacheWriteOp>();
    auto state = write ? dyn_cast<BlockArgument>(write.getState()) : BlockArgument();
    if (!state || stateName(func.getArgAttrDict(state.getArgNumber())) != name)
      return ret.emitError("state result ") << i << " ('" << name.getValue()
                                            << "') is not the update of its own cache";
  }

  for (Operation &op : func.getBody().front().without_terminator())
    if (failed(lowerOp(&op)))
      return failure();
  for (auto [value, slot] : outputCopies)
    if (failed(emitCopy(value, slot)))
      return failure();
  for (unsigned i : outputResults)
    if (!buffers.count(ret.getOperand(i)))
      return ret.emitError("output ") << i << " is not produced by any launch";
  func::ReturnOp::create(builder, ret.getLoc());
  func.erase();
  return success();
}

Value FunctionLowering::stateBuffer(Location loc, StringRef name, MemRefType type) {
  if (Value existing = states.lookup(name))
    return existing;
  // At the top of the function, in the order first named (arguments first).
  OpBuilder::InsertionGuard guard(builder);
  Block *entry = builder.getInsertionBlock();
  if (lastState)
    builder.setInsertionPointAfter(lastState);
  else
    builder.setInsertionPointToStart(entry);
  auto state = launch::StateOp::create(builder, loc, type, name, IntegerAttr());
  lastState = state;
  states[name] = state;
  return state;
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
  return launch::AllocOp::create(builder, result.getLoc(), bufferTypeFor(result.getType()),
                                 IntegerAttr());
}

MemRefType FunctionLowering::bufferTypeFor(Type t) const {
  MemRefType type = bufferTypeOf(t);
  if (f32Activations && type.getElementType().isBF16())
    return MemRefType::get(type.getShape(), Float32Type::get(t.getContext()));
  return type;
}

LogicalResult FunctionLowering::requireModelActivations(Operation *op, StringRef what) {
  if (!f32Activations)
    return success();
  return op->emitError(what) << " is not supported with --activations=f32 (it supports "
                                "embedding, linears of up to 16 rows and prompt attention); "
                                "compile with --activations=model";
}

Value FunctionLowering::makeWeight(Location loc, DenseElementsAttr data, StringRef name) {
  // Attributes are uniqued: equal data is one attribute, so a tied embedding and LM head
  // (re-laid out back to the table's layout) share one copy in the blob, and so do the
  // entry points of one model.
  if (Value existing = weightsByData.lookup(data))
    return existing;
  auto type = bufferTypeOf(data.getType());
  auto [it, added] = weights.byData.try_emplace(data);
  if (added) {
    it->second = {name.empty() ? "w" + std::to_string(weights.count++) : name.str(),
                  weights.bytes};
    weights.bytes += llvm::alignTo(launch::bufferBytes(type), SINTER_BUFFER_ALIGNMENT);
  }
  auto weight = launch::WeightOp::create(builder, loc, type, it->second.name, data,
                                         builder.getI64IntegerAttr(it->second.offset));
  weightsByData[data] = weight;
  return weight;
}

std::string FunctionLowering::newWeightName(DenseElementsAttr data, StringRef suffix) {
  if (weights.byData.count(data))
    return "";
  return "w" + std::to_string(weights.count++) + suffix.str();
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
  // A group marked for its consumer's prologue whose consumer took another path: its own
  // launch, here, before the first launch that reads it.
  if (auto group = value.getDefiningOp<graph::FusionGroupOp>();
      group && group.getInConsumerPrologue()) {
    if (failed(lowerGeneric(group)))
      return failure();
    return buffers.lookup(value);
  }
  if (Operation *def = value.getDefiningOp())
    return def->emitError("value of '") << def->getName() << "' has no buffer here";
  return failure();
}

LogicalResult FunctionLowering::lowerOp(Operation *op) {
  if (isa<graph::ConstantOp>(op))
    return success();
  // sinter-fold-empty-tensors leaves empty values only where an op makes something of them.
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (type && type.getNumElements() == 0)
      return op->emitError("'") << op->getName() << "' of an empty tensor " << type
                                << " is not supported";
  }
  if (auto linear = dyn_cast<graph::LinearOp>(op))
    return wantsKernel(linear) ? lowerLinearKernel(linear) : lowerGemm(linear);
  if (auto gather = dyn_cast<graph::GatherOp>(op))
    return gatherHasKernel(gather) ? lowerGather(gather) : lowerGeneric(op);
  if (auto matmul = dyn_cast<graph::MatMulOp>(op))
    return lowerMatMul(matmul);
  if (auto attention = dyn_cast<graph::FusedAttentionOp>(op))
    return lowerAttention(attention);
  if (auto split = dyn_cast<graph::SplitQkvHeadsOp>(op))
    return lowerSplitQkvHeads(split);
  if (auto norm = dyn_cast<graph::RMSNormalizationOp>(op); norm && rmsNormHasKernel(norm))
    return failure(failed(requireModelActivations(op, "a standalone RMS normalization")) ||
                   failed(lowerRmsNorm(norm)));
  if (auto write = dyn_cast<graph::CacheWriteOp>(op))
    return failure(failed(requireModelActivations(op, "a KV cache")) ||
                   failed(lowerCacheWrite(write)));
  if (auto attention = dyn_cast<graph::DecodeAttentionOp>(op))
    return failure(failed(requireModelActivations(op, "decode attention")) ||
                   failed(lowerDecodeAttention(attention)));
  if (auto sample = dyn_cast<graph::SampleTokensOp>(op))
    return lowerSampleTokens(sample);
  if (auto reshape = dyn_cast<graph::ReshapeOp>(op)) {
    // Views cost nothing; an output that is a view is a copy.
    if (outputSlots.count(reshape.getResult()))
      return lowerGeneric(reshape);
    return success(succeeded(bufferOf(reshape.getResult())));
  }
  // Lowered with the linear that reads it (its prologue), or where it is first read.
  if (auto group = dyn_cast<graph::FusionGroupOp>(op); group && group.getInConsumerPrologue())
    return success();
  if (isa<graph::FusionGroupOp>(op) || isGenericOp(op))
    return lowerGeneric(op);
  return op->emitError("no launch lowering for '") << op->getName() << "'";
}

LogicalResult FunctionLowering::lowerGemm(graph::LinearOp linear) {
  auto inType = linear.getInput().getType();
  Type et = inType.getElementType();
  StringRef mode = et.isF32() ? precision : et.isF64() ? StringRef("strict") : StringRef("native");
  if (!et.isF32() && !et.isBF16() && !et.isF16() && !et.isF64())
    return linear.emitError("linear on ") << et << " is not supported";
  // sinter-fuse-linear-swiglu and -activation fuse only what the bf16 lowering takes.
  if (linear.getGateUpColumns() || linear.getActivation())
    return linear.emitError("internal: a gated or activated linear outside the bf16 kernel "
                            "lowering");
  auto [m, k] = linearRows(linear);
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
  // A normalization prologue the library cannot fuse: a generated row kernel first.
  if (linear.getNormWeight()) {
    float eps = linear.getNormEpsilon()->convertToFloat();
    input = linear.normCentered()
                ? emitGenericLayerNorm(linear.getLoc(), *input, linear.getNormWeight(),
                                       linear.getNormBias(), m, k, eps)
                : emitGenericRmsNorm(linear.getLoc(), *input, linear.getNormWeight(), m, k, eps);
    if (failed(input))
      return failure();
  }
  if (et.isBF16() && failed(requireModelActivations(linear, "a library GEMM on " +
                                                            std::to_string(m) + " rows")))
    return failure();
  Value out = destinationFor(linear.getResult());
  // f64: the product (and residual) first, the bias after it in a generated kernel.
  Value product = out, gemmBias = *bias;
  if (et.isF64() && gemmBias) {
    product = launch::AllocOp::create(builder, linear.getLoc(), MemRefType::get({m, n}, et),
                                      IntegerAttr());
    gemmBias = Value();
  }
  launch::GemmOp::create(builder, linear.getLoc(), *input, *weight, gemmBias, *residual, product,
                         builder.getI64IntegerAttr(m), builder.getI64IntegerAttr(n),
                         builder.getI64IntegerAttr(k), builder.getStringAttr(mode));
  if (product != out && failed(emitGenericBias(linear.getLoc(), product, *bias, out, m, n)))
    return failure();
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
    if (activations != "model" && activations != "f32") {
      module.emitError("activations must be model or f32, got '") << activations << "'";
      return signalPassFailure();
    }
    if (weightDtype != "model" && weightDtype != "bf16" && weightDtype != "fp8" &&
        weightDtype != "int4") {
      module.emitError("weight-dtype must be model, bf16, fp8 or int4, got '")
          << weightDtype << "'";
      return signalPassFailure();
    }
    if ((weightDtype == "fp8" || weightDtype == "int4") && activations == "f32") {
      module.emitError("--weight-dtype ")
          << weightDtype
          << " needs bf16 activations, and --activations=f32 keeps them in fp32; compile with "
             "--activations=model";
      return signalPassFailure();
    }
    if (weightDtype != "model" && failed(checkBF16Linears(module)))
      return signalPassFailure();
    FailureOr<CompileTarget> target = compileTargetOf(module);
    if (failed(target))
      return signalPassFailure();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    WeightTable weights;
    bool widened = false;
    for (func::FuncOp func : funcs) {
      // --activations=f32 widens bf16 activations; a function without bf16 values (an fp32 or
      // fp16 export) compiles as it is under either setting.
      bool f32Activations = activations == "f32" && hasBF16Values(func);
      widened |= f32Activations;
      const kernels::LinearWeights format = weightDtype == "fp8"    ? kernels::LinearWeights::FP8_E4M3
                                            : weightDtype == "int4" ? kernels::LinearWeights::INT4
                                                                    : kernels::LinearWeights::BF16;
      FunctionLowering lowering(func, precision, *target, f32Activations, format, weights);
      if (failed(lowering.run()))
        return signalPassFailure();
    }
    auto i64 = IntegerType::get(&getContext(), 64);
    module->setAttr("launch.weight_bytes", IntegerAttr::get(i64, weights.bytes));
    if (widened) // recorded for `sinter inspect`; absent means the model's types
      module->setAttr("launch.activations", StringAttr::get(&getContext(), activations));
    if (weightDtype != "model")
      module->setAttr("launch.weight_dtype", StringAttr::get(&getContext(), weightDtype));
    if (failed(sinter::placeStates(module)))
      return signalPassFailure();
  }

  /// A weight dtype other than the model's is that of the bf16 linears' constant weights:
  /// every linear with a constant weight must be one.
  LogicalResult checkBF16Linears(ModuleOp module) {
    WalkResult result = module.walk([&](graph::LinearOp linear) {
      if (!linear.getWeight().getDefiningOp<graph::ConstantOp>())
        return WalkResult::advance();
      Type in = linear.getInput().getType().getElementType();
      Type w = linear.getWeight().getType().getElementType();
      if (in.isBF16() && w.isBF16())
        return WalkResult::advance();
      auto diag = linear.emitError("--weight-dtype ")
                  << weightDtype << " needs bf16 activations and weights, and this linear "
                  << "computes in " << (in.isBF16() ? w : in);
      if (in.isF32())
        diag << "; compile with --dtype bf16";
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }

  static bool hasBF16Values(func::FuncOp func) {
    auto isBF16 = [](Type t) {
      auto shaped = dyn_cast<ShapedType>(t);
      return shaped && shaped.getElementType().isBF16();
    };
    if (llvm::any_of(func.getArgumentTypes(), isBF16))
      return true;
    return func
        .walk([&](Operation *op) {
          return llvm::any_of(op->getResultTypes(), isBF16) ? WalkResult::interrupt()
                                                             : WalkResult::advance();
        })
        .wasInterrupted();
  }
};
} // namespace
