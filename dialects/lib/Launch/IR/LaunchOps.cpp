#include "sinter/Dialect/Launch/IR/LaunchOps.h"
#include "sinter/Dialect/Launch/IR/KernelRegistry.h"

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
  Type et = in.getElementType();
  if (p == "tf32" && !et.isF32())
    return emitOpError("precision 'tf32' needs f32 operands");
  if (p == "strict" && !et.isF32() && !et.isF64())
    return emitOpError("precision 'strict' needs f32 or f64 operands");
  return success();
}

/// Grid and block of a kernel launch: three positive entries each, at most 1024 threads.
static LogicalResult verifyLaunchShape(Operation *op, ArrayRef<int64_t> grid,
                                       ArrayRef<int64_t> block) {
  if (grid.size() != 3 || block.size() != 3)
    return op->emitOpError("grid and block must have 3 entries");
  int64_t threads = 1;
  for (int64_t g : grid)
    if (g <= 0)
      return op->emitOpError("grid dimensions must be positive");
  for (int64_t b : block) {
    if (b <= 0)
      return op->emitOpError("block dimensions must be positive");
    threads *= b;
  }
  if (threads > 1024)
    return op->emitOpError("block has ") << threads << " threads, more than 1024";
  return success();
}

LogicalResult KernelOp::verify() {
  if (failed(verifyLaunchShape(*this, getGrid(), getBlock())))
    return failure();
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
  return verifyAgainstRegistry();
}

LogicalResult GenericOp::verify() {
  if (failed(verifyLaunchShape(*this, getGrid(), getBlock())))
    return failure();
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

static bool isFloatBits(StringRef s) {
  return s.size() >= 2 && s.back() == 'u' &&
         llvm::all_of(s.drop_back(), [](char c) { return c >= '0' && c <= '9'; });
}

Attribute KernelOp::getParam(StringRef name) {
  const KernelTemplate *t = lookupKernelTemplate(getKernelTemplate());
  std::optional<unsigned> i = t ? t->paramIndex(name) : std::nullopt;
  return i && *i < getParams().size() ? getParams()[*i] : Attribute();
}

Value KernelOp::getArgument(StringRef name) {
  const KernelTemplate *t = lookupKernelTemplate(getKernelTemplate());
  std::optional<unsigned> i = t ? t->argIndex(name) : std::nullopt;
  return i ? getArgumentValues()[*i] : Value();
}

SmallVector<Value> KernelOp::getArgumentValues() {
  SmallVector<Value> values;
  for (int64_t slot : getArgs())
    values.push_back(slot < 0 ? Value() : getBuffers()[slot]);
  return values;
}

SmallVector<unsigned> KernelOp::getWrittenArguments() {
  const KernelTemplate *t = lookupKernelTemplate(getKernelTemplate());
  SmallVector<unsigned> written;
  ArrayRef<int64_t> args = getArgs();
  for (unsigned i = 0; i < args.size(); ++i) {
    ArgRole role = t && i < t->args.size() ? t->args[i].role : ArgRole::Out;
    bool writable = role == ArgRole::Out || role == ArgRole::InOut || role == ArgRole::OptionalOut;
    if (args[i] >= 0 && writable && llvm::is_contained(getWrites(), args[i]))
      written.push_back(i);
  }
  return written;
}

KernelOp KernelOp::createWithArguments(OpBuilder &builder, Location loc, StringRef kernelTemplate,
                                       ArrayAttr params, ArrayRef<Value> arguments,
                                       ArrayRef<int64_t> grid, ArrayRef<int64_t> block,
                                       int64_t sharedBytes, ArrayRef<unsigned> writtenArguments) {
  SmallVector<Value> buffers;
  SmallVector<int64_t> slots, writes;
  for (Value arg : arguments) {
    if (!arg) {
      slots.push_back(-1);
      continue;
    }
    auto *it = llvm::find(buffers, arg);
    slots.push_back(it - buffers.begin());
    if (it == buffers.end())
      buffers.push_back(arg);
  }
  for (unsigned a : writtenArguments)
    writes.push_back(slots[a]);
  return KernelOp::create(builder, loc, buffers, builder.getStringAttr(kernelTemplate), params,
                          builder.getDenseI64ArrayAttr(slots), builder.getDenseI64ArrayAttr(grid),
                          builder.getDenseI64ArrayAttr(block),
                          builder.getI64IntegerAttr(sharedBytes),
                          builder.getDenseI64ArrayAttr(writes));
}

LogicalResult KernelOp::verifyAgainstRegistry() {
  const KernelTemplate *t = lookupKernelTemplate(getKernelTemplate());
  if (!t)
    return emitOpError("unknown kernel template '") << getKernelTemplate() << "'";
  ArrayAttr params = getParams();
  if (params.size() < t->requiredParams || params.size() > t->params.size())
    return emitOpError("'") << t->name << "' takes " << t->requiredParams << " to "
                            << t->params.size() << " parameters, got " << params.size();
  for (auto [i, p] : llvm::enumerate(params)) {
    const KernelParam &want = t->params[i];
    auto text = dyn_cast<StringAttr>(p);
    bool ok = false;
    switch (want.kind) {
    case ParamKind::Int: ok = isa<IntegerAttr>(p); break;
    case ParamKind::Type:
      ok = text && llvm::is_contained({StringRef("float"), StringRef("__half"),
                                       StringRef("__nv_bfloat16"), StringRef("__nv_fp8_e4m3"),
                                       StringRef("sinter::kernels::Int4x2")},
                                      text.getValue());
      break;
    case ParamKind::Enum: ok = text && text.getValue().starts_with(want.enumPrefix); break;
    case ParamKind::FloatBits: ok = text && isFloatBits(text.getValue()); break;
    case ParamKind::Bool: ok = text && (text.getValue() == "true" || text.getValue() == "false"); break;
    }
    if (!ok)
      return emitOpError("parameter ") << i << " ('" << want.name << "') of '" << t->name
                                       << "' is not a valid value: " << p;
  }
  ArrayRef<int64_t> args = getArgs();
  if (args.size() != t->args.size())
    return emitOpError("'") << t->name << "' takes " << t->args.size() << " arguments, got "
                            << args.size();
  for (auto [i, slot] : llvm::enumerate(args)) {
    ArgRole role = t->args[i].role;
    if (slot < 0 && role != ArgRole::Optional && role != ArgRole::OptionalOut)
      return emitOpError("argument '") << t->args[i].name << "' of '" << t->name
                                       << "' is required";
  }
  // A buffer written must be passed to an argument that writes.
  for (int64_t w : getWrites()) {
    bool writer = false;
    for (auto [i, slot] : llvm::enumerate(args)) {
      ArgRole role = t->args[i].role;
      if (slot == w && (role == ArgRole::Out || role == ArgRole::InOut || role == ArgRole::OptionalOut))
        writer = true;
    }
    if (!writer)
      return emitOpError("buffer ") << w << " is listed as written but no output argument of '"
                                    << t->name << "' receives it";
  }
  return success();
}
