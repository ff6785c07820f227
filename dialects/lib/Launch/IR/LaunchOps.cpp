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
  if (in.getNumElements() != m * k)
    return emitOpError("input holds ") << in.getNumElements() << " elements, expected m*k = "
                                       << m * k;
  if (w.getRank() != 2 || w.getDimSize(0) != k || w.getDimSize(1) != n)
    return emitOpError("weight must be [") << k << "x" << n << "], got " << w;
  if (out.getNumElements() != m * n)
    return emitOpError("output holds ") << out.getNumElements()
                                        << " elements, expected m*n = " << m * n;
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
