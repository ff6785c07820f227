// The generic tier's launches: fusion groups and lone ops as generated kernels
// (launch.generic), matrix products of activations as library GEMMs, output copies.
#include "LaunchLowering.h"
#include "sinter/Passes/GenericPlan.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace sinter;

namespace {

RankedTensorType tensorTypeOf(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return RankedTensorType::get(type.getShape(), type.getElementType());
}

/// `value` as `type` inside a generic body: the same bytes, viewed in the value's shape.
Value viewAs(OpBuilder &b, Location loc, Value value, RankedTensorType type) {
  if (value.getType() == type)
    return value;
  auto shapeType = RankedTensorType::get({type.getRank()}, b.getI64Type());
  Value shape =
      graph::ConstantOp::create(b, loc, DenseElementsAttr::get(shapeType, type.getShape()));
  return graph::ReshapeOp::create(b, loc, type, value, shape);
}

} // namespace

LogicalResult
FunctionLowering::emitGeneric(Location loc, ArrayRef<Value> inputs, ArrayRef<Value> outputs,
                              function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> fill) {
  SmallVector<int64_t> zeros(3, 1);
  auto generic = launch::GenericOp::create(
      builder, loc, inputs, outputs, builder.getDenseI64ArrayAttr(zeros),
      builder.getDenseI64ArrayAttr(zeros), builder.getI64IntegerAttr(0),
      builder.getI64IntegerAttr(0), builder.getI64IntegerAttr(1), builder.getI64IntegerAttr(1));
  Block *body = new Block();
  generic.getBody().push_back(body);
  for (Value in : inputs)
    body->addArgument(tensorTypeOf(in), in.getLoc());
  OpBuilder inner = OpBuilder::atBlockBegin(body);
  SmallVector<Value> results = fill(inner, body->getArguments());
  graph::YieldOp::create(inner, loc, results);
  std::string error;
  auto plan = planGenericKernel(*body, error);
  if (failed(plan))
    return generic.emitError(error);
  generic.setGridAttr(builder.getDenseI64ArrayAttr({plan->grid, 1, 1}));
  generic.setBlockAttr(builder.getDenseI64ArrayAttr({plan->block, 1, 1}));
  generic.setThreadsPerRowAttr(builder.getI64IntegerAttr(plan->threadsPerRow));
  generic.setRowsPerBlockAttr(builder.getI64IntegerAttr(plan->rowsPerBlock));
  generic.setElementsPerThreadAttr(builder.getI64IntegerAttr(plan->elementsPerThread));
  return success();
}

LogicalResult FunctionLowering::lowerGeneric(Operation *op) {
  if (failed(requireModelActivations(op, "a generated kernel")))
    return failure();
  // The values the kernel reads: a group's inputs, or a lone op's operands.
  auto group = dyn_cast<graph::FusionGroupOp>(op);
  SmallVector<Value> reads =
      group ? SmallVector<Value>(group.getInputs()) : SmallVector<Value>(op->getOperands());
  SmallVector<Value> inputs, readValues;
  for (Value v : reads) {
    if (!group && isInlinedConstant(v))
      continue;
    auto buffer = bufferOf(v);
    if (failed(buffer))
      return failure();
    inputs.push_back(*buffer);
    readValues.push_back(v);
  }
  SmallVector<Value> outputs;
  for (Value result : op->getResults()) {
    Value out = destinationFor(result);
    buffers[result] = out;
    outputs.push_back(out);
  }
  // A launch with nothing to compute (an empty tensor) is left out.
  if (llvm::all_of(op->getResults(),
                   [](Value r) { return cast<ShapedType>(r.getType()).getNumElements() == 0; }))
    return success();
  return emitGeneric(op->getLoc(), inputs, outputs, [&](OpBuilder &b, ValueRange args) {
    IRMapping map;
    for (auto [value, arg] : llvm::zip(readValues, args))
      map.map(value, viewAs(b, op->getLoc(), arg, cast<RankedTensorType>(value.getType())));
    if (group) {
      Block &source = group.getBody().front();
      for (auto [i, arg] : llvm::enumerate(source.getArguments()))
        map.map(arg, map.lookup(group.getInputs()[i]));
      for (Operation &inner : source.without_terminator())
        b.clone(inner, map);
      return llvm::map_to_vector(source.getTerminator()->getOperands(),
                                 [&](Value v) { return map.lookup(v); });
    }
    for (Value v : op->getOperands())
      if (!map.contains(v))
        map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    Operation *copy = b.clone(*op, map);
    return SmallVector<Value>(copy->getResults());
  });
}

LogicalResult FunctionLowering::emitCopy(Value source, Value slot) {
  if (cast<RankedTensorType>(source.getType()).getNumElements() == 0) {
    buffers[source] = slot; // nothing to copy
    return success();
  }
  auto buffer = bufferOf(source);
  if (failed(buffer))
    return failure();
  // Under --activations=f32 the source or the output slot may be widened and the other not:
  // the copy converts.
  ArrayRef<int64_t> shape = cast<RankedTensorType>(source.getType()).getShape();
  auto read = RankedTensorType::get(shape, cast<MemRefType>(buffer->getType()).getElementType());
  auto written = RankedTensorType::get(shape, cast<MemRefType>(slot.getType()).getElementType());
  return emitGeneric(source.getLoc(), {*buffer}, {slot}, [&](OpBuilder &b, ValueRange args) {
    Value value = viewAs(b, source.getLoc(), args[0], read);
    if (read != written)
      value = graph::CastOp::create(b, source.getLoc(), written, value);
    return SmallVector<Value>{value};
  });
}

FailureOr<Value> FunctionLowering::emitGenericRmsNorm(Location loc, Value x, Value weight,
                                                      int64_t m, int64_t k, float epsilon) {
  auto w = bufferOf(weight);
  if (failed(w))
    return failure();
  Type et = cast<MemRefType>(x.getType()).getElementType();
  Value out = launch::AllocOp::create(builder, loc, MemRefType::get({m, k}, et), IntegerAttr());
  auto rows = RankedTensorType::get({m, k}, et);
  // A weight of another type (f32 for a 16-bit x) scales in it, then one cast back.
  Type weightType = cast<ShapedType>(weight.getType()).getElementType();
  auto normRows = RankedTensorType::get({m, k}, weightType);
  if (failed(emitGeneric(loc, {x, *w}, {out}, [&](OpBuilder &b, ValueRange args) {
        Value norm = graph::RMSNormalizationOp::create(
            b, loc, normRows, viewAs(b, loc, args[0], rows), args[1], b.getI64IntegerAttr(1),
            b.getF32FloatAttr(epsilon));
        if (weightType != et)
          norm = graph::CastOp::create(b, loc, rows, norm);
        return SmallVector<Value>{norm};
      })))
    return failure();
  return out;
}

LogicalResult FunctionLowering::emitGenericUnary(Location loc, Value x, Value out, int64_t m,
                                                 int64_t n, StringRef fn) {
  Type et = cast<MemRefType>(x.getType()).getElementType();
  auto rows = RankedTensorType::get({m, n}, et);
  return emitGeneric(loc, {x}, {out}, [&](OpBuilder &b, ValueRange args) {
    Value act = graph::UnaryFnOp::create(b, loc, rows, viewAs(b, loc, args[0], rows),
                                         b.getStringAttr(fn), b.getF32FloatAttr(0),
                                         b.getF32FloatAttr(0));
    return SmallVector<Value>{act};
  });
}

LogicalResult FunctionLowering::emitGenericBias(Location loc, Value x, Value bias, Value out,
                                                int64_t m, int64_t n) {
  Type et = cast<MemRefType>(x.getType()).getElementType();
  auto rows = RankedTensorType::get({m, n}, et);
  auto row = RankedTensorType::get({n}, et);
  return emitGeneric(loc, {x, bias}, {out}, [&](OpBuilder &b, ValueRange args) {
    Value sum = graph::AddOp::create(b, loc, rows, viewAs(b, loc, args[0], rows),
                                     viewAs(b, loc, args[1], row));
    return SmallVector<Value>{sum};
  });
}

FailureOr<Value> FunctionLowering::emitGenericLayerNorm(Location loc, Value x, Value scale,
                                                        Value shift, int64_t m, int64_t k,
                                                        float epsilon) {
  auto w = bufferOf(scale), b = bufferOf(shift);
  if (failed(w) || failed(b))
    return failure();
  Type et = cast<MemRefType>(x.getType()).getElementType();
  Value out = launch::AllocOp::create(builder, loc, MemRefType::get({m, k}, et), IntegerAttr());
  auto rows = RankedTensorType::get({m, k}, et);
  if (failed(emitGeneric(loc, {x, *w, *b}, {out}, [&](OpBuilder &bld, ValueRange args) {
        Value norm = graph::LayerNormalizationOp::create(
            bld, loc, rows, viewAs(bld, loc, args[0], rows), args[1], args[2],
            bld.getI64IntegerAttr(1), bld.getF32FloatAttr(epsilon));
        return SmallVector<Value>{norm};
      })))
    return failure();
  return out;
}

LogicalResult FunctionLowering::lowerMatMul(graph::MatMulOp matmul) {
  Type et = matmul.getType().getElementType();
  if (!et.isF32() && !et.isF16() && !et.isBF16() && !et.isF64())
    return matmul.emitError("matrix products on ")
           << et << " are not supported (f32, f16, bf16, f64)";
  if (failed(requireModelActivations(matmul, "a matrix product of activations")))
    return failure();
  // numpy matmul: a vector operand is a one-row (left) or one-column (right) matrix.
  SmallVector<int64_t> a(matmul.getLhs().getType().getShape()),
      b(matmul.getRhs().getType().getShape());
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  if (m == 0 || n == 0 || k == 0)
    return matmul.emitError("matrix products with an empty dimension are not supported");
  auto batchShape = graph::broadcastShapes(ArrayRef(a).drop_back(2), ArrayRef(b).drop_back(2));
  if (failed(batchShape))
    return matmul.emitError("batch dimensions do not broadcast");
  int64_t batch = 1;
  for (int64_t d : *batchShape)
    batch *= d;
  // An operand holds every batch's matrix, or one matrix for all; any other broadcast is
  // first materialized by a generated copy.
  auto operandBuffer = [&](Value v, ArrayRef<int64_t> matrix, bool &broadcast) -> FailureOr<Value> {
    int64_t count = 1;
    for (int64_t d : matrix.drop_back(2))
      count *= d;
    auto buffer = bufferOf(v);
    if (failed(buffer))
      return failure();
    broadcast = count == 1 && batch > 1;
    if (count == batch || count == 1)
      return *buffer;
    SmallVector<int64_t> full(*batchShape);
    full.append({matrix[matrix.size() - 2], matrix.back()});
    auto fullType = RankedTensorType::get(full, et);
    Value out =
        launch::AllocOp::create(builder, v.getLoc(), MemRefType::get(full, et), IntegerAttr());
    auto matrixType = RankedTensorType::get(matrix, et);
    if (failed(emitGeneric(v.getLoc(), {*buffer}, {out}, [&](OpBuilder &ib, ValueRange args) {
          Value viewed = viewAs(ib, v.getLoc(), args[0], matrixType);
          auto shapeType = RankedTensorType::get({(int64_t)full.size()}, ib.getI64Type());
          Value shape = graph::ConstantOp::create(
              ib, v.getLoc(), DenseElementsAttr::get(shapeType, ArrayRef(full)));
          return SmallVector<Value>{
              graph::ExpandOp::create(ib, v.getLoc(), fullType, viewed, shape)};
        })))
      return failure();
    return out;
  };
  bool broadcastA = false, broadcastB = false;
  auto input = operandBuffer(matmul.getLhs(), a, broadcastA);
  auto weight = operandBuffer(matmul.getRhs(), b, broadcastB);
  if (failed(input) || failed(weight))
    return failure();
  Value out = destinationFor(matmul.getResult());
  buffers[matmul.getResult()] = out;
  // f64 products are plain f64 FMA (strict); --precision picks the f32 mode.
  StringRef mode = et.isF32() ? precision : et.isF64() ? StringRef("strict") : StringRef("native");
  launch::GemmOp::create(builder, matmul.getLoc(), *input, *weight, Value(), Value(), out,
                         builder.getI64IntegerAttr(m), builder.getI64IntegerAttr(n),
                         builder.getI64IntegerAttr(k), builder.getStringAttr(mode),
                         builder.getI64IntegerAttr(batch), builder.getBoolAttr(broadcastA),
                         builder.getBoolAttr(broadcastB));
  return success();
}
