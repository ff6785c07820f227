#include "sinter/Dialect/Launch/IR/LaunchOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace sinter::launch;

#define GET_OP_CLASSES
#include "sinter/Dialect/Launch/IR/LaunchOps.cpp.inc"

int64_t sinter::launch::bufferBytes(MemRefType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

static LogicalResult verifyIdentityLayout(Operation *op, MemRefType type) {
  if (!type.getLayout().isIdentity())
    return op->emitOpError("buffers must be dense row-major (identity layout)");
  return success();
}

LogicalResult WeightOp::verify() {
  auto type = getBuffer().getType();
  auto valueType = cast<ShapedType>(getValue().getType());
  if (valueType.getShape() != type.getShape() ||
      valueType.getElementType() != type.getElementType())
    return emitOpError("value type ") << valueType << " does not match the buffer " << type;
  if (getOffsetAttr() && getOffsetAttr().getInt() < 0)
    return emitOpError("offset must be non-negative");
  return verifyIdentityLayout(*this, type);
}

LogicalResult StateOp::verify() {
  if (getSymName().empty())
    return emitOpError("state needs a name");
  if (getOffsetAttr() && getOffsetAttr().getInt() < 0)
    return emitOpError("offset must be non-negative");
  return verifyIdentityLayout(*this, getBuffer().getType());
}

LogicalResult AllocOp::verify() {
  if (getOffsetAttr() && getOffsetAttr().getInt() < 0)
    return emitOpError("offset must be non-negative");
  return verifyIdentityLayout(*this, getBuffer().getType());
}

LogicalResult GemmOp::verify() {
  int64_t m = getM(), n = getN(), k = getK();
  if (m <= 0 || n <= 0 || k <= 0)
    return emitOpError("m, n and k must be positive");
  auto in = getInput().getType(), w = getWeight().getType(), out = getOutput().getType();
  int64_t batch = getBatch();
  if (batch <= 0)
    return emitOpError("batch must be positive");
  if (batch > 1 && (getBias() || getResidual()))
    return emitOpError("a batched product has no bias or residual");
  int64_t inBatch = getBroadcastInput() ? 1 : batch, wBatch = getBroadcastWeight() ? 1 : batch;
  StringRef per = batch > 1 ? "batch*" : "";
  if (in.getNumElements() != inBatch * m * k)
    return emitOpError("input holds ") << in.getNumElements() << " elements, expected "
                                       << (inBatch > 1 ? per : "") << "m*k = " << inBatch * m * k;
  if (batch == 1 && w.getRank() == 2 && (w.getDimSize(0) != k || w.getDimSize(1) != n))
    return emitOpError("weight must be [") << k << "x" << n << "], got " << w;
  if (w.getNumElements() != wBatch * k * n)
    return emitOpError("weight holds ") << w.getNumElements() << " elements, expected "
                                        << (wBatch > 1 ? per : "") << "k*n = " << wBatch * k * n;
  if (out.getNumElements() != batch * m * n)
    return emitOpError("output holds ") << out.getNumElements() << " elements, expected " << per
                                        << "m*n = " << batch * m * n;
  if (in.getElementType() != w.getElementType() || in.getElementType() != out.getElementType())
    return emitOpError("operands and output must have one element type");
  if (getBias() && getBias().getType().getNumElements() != n)
    return emitOpError("bias must hold n = ") << n << " elements";
  if (getResidual() && getResidual().getType().getNumElements() != m * n)
    return emitOpError("residual must hold m*n = ") << m * n << " elements";
  StringRef p = getPrecision();
  if (p != "strict" && p != "tf32" && p != "native")
    return emitOpError("precision must be strict, tf32 or native, got '") << p << "'";
  if (p != "native" && !in.getElementType().isF32())
    return emitOpError("precision '") << p << "' needs f32 operands";
  return success();
}

LogicalResult KernelOp::verify() {
  if (getGrid().size() != 3 || getBlock().size() != 3)
    return emitOpError("grid and block must have 3 entries");
  int64_t threads = 1;
  for (int64_t g : getGrid())
    if (g <= 0)
      return emitOpError("grid dimensions must be positive");
  for (int64_t b : getBlock()) {
    if (b <= 0)
      return emitOpError("block dimensions must be positive");
    threads *= b;
  }
  if (threads > 1024)
    return emitOpError("block has ") << threads << " threads, more than 1024";
  if (getSharedBytes() < 0)
    return emitOpError("shared_bytes must be non-negative");
  for (int64_t w : getWrites())
    if (w < 0 || w >= (int64_t)getBuffers().size())
      return emitOpError("writes index ") << w << " is out of range";
  for (int64_t a : getArgs())
    if (a < -1 || a >= (int64_t)getBuffers().size())
      return emitOpError("args index ") << a << " is out of range";
  for (Attribute p : getParams())
    if (!isa<IntegerAttr, StringAttr>(p))
      return emitOpError("params must be integers or strings");
  return success();
}

LogicalResult GenericOp::verify() {
  if (getGrid().size() != 3 || getBlock().size() != 3)
    return emitOpError("grid and block must have 3 entries");
  int64_t threads = 1;
  for (int64_t g : getGrid())
    if (g <= 0)
      return emitOpError("grid dimensions must be positive");
  for (int64_t b : getBlock()) {
    if (b <= 0)
      return emitOpError("block dimensions must be positive");
    threads *= b;
  }
  if (threads > 1024)
    return emitOpError("block has ") << threads << " threads, more than 1024";
  if (getSharedBytes() < 0 || getThreadsPerRow() < 0 || getRowsPerBlock() <= 0 ||
      getElementsPerThread() <= 0)
    return emitOpError("launch parameters must be positive");
  if (getOutputs().empty())
    return emitOpError("writes no output");
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("the body takes ") << body.getNumArguments() << " arguments for "
                                          << getInputs().size() << " inputs";
  for (auto [arg, buffer] : llvm::zip(body.getArguments(), getInputs())) {
    auto tensor = dyn_cast<RankedTensorType>(arg.getType());
    auto memref = cast<MemRefType>(buffer.getType());
    if (!tensor || tensor.getShape() != memref.getShape() ||
        tensor.getElementType() != memref.getElementType())
      return emitOpError("body argument ") << arg.getType() << " does not match its buffer "
                                           << memref;
  }
  Operation *terminator = body.empty() ? nullptr : &body.back();
  if (!terminator || terminator->getNumOperands() != getOutputs().size())
    return emitOpError("the body must yield one value per output");
  for (auto [value, buffer] : llvm::zip(terminator->getOperands(), getOutputs())) {
    auto tensor = cast<RankedTensorType>(value.getType());
    auto memref = cast<MemRefType>(buffer.getType());
    if (tensor.getNumElements() != memref.getNumElements() ||
        tensor.getElementType() != memref.getElementType())
      return emitOpError("yielded ") << tensor << " does not fit its output buffer " << memref;
  }
  return success();
}
