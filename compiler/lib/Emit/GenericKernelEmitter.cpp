// Writes a launch.generic's body as one CUDA kernel. Values are computed "at an index": a
// vector of C++ index expressions, one per dimension of the value's shape. Data movement
// (transpose, slice, reshape, broadcast, concat, gather) only rewrites the index its operand
// is read at; elementwise ops combine their operands read at the broadcast index; body
// arguments are loads. Every shape, stride and bound is a literal.
#include "sinter/Compiler/GenericKernelEmitter.h"

#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Dialect/Graph/IR/ScalarFunctions.h"
#include "sinter/Passes/GenericPlan.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <map>

using namespace mlir;

namespace sinter {
namespace {

using Index = SmallVector<std::string>;

Type elementOf(Value v) { return cast<ShapedType>(v.getType()).getElementType(); }
ArrayRef<int64_t> shapeOf(Value v) { return cast<ShapedType>(v.getType()).getShape(); }

/// The C++ type a tensor element is stored as.
std::string storageType(Type t) {
  if (t.isF32())
    return "float";
  if (t.isF16())
    return "sinter::generic::f16";
  if (t.isBF16())
    return "sinter::generic::bf16";
  if (t.isF64())
    return "double";
  if (t.isInteger(1))
    return "bool";
  if (t.isUnsignedInteger(64))
    return "unsigned long long";
  if (t.isUnsignedInteger(32))
    return "unsigned int";
  if (t.isUnsignedInteger(16))
    return "unsigned short";
  if (t.isUnsignedInteger(8))
    return "unsigned char";
  if (t.isInteger(64))
    return "long long";
  if (t.isInteger(32))
    return "int";
  if (t.isInteger(16))
    return "short";
  if (t.isInteger(8))
    return "signed char";
  return "";
}

/// The C++ type a value is computed in: float for every float type narrower than f64.
std::string computeType(Type t) {
  if (t.isF16() || t.isBF16())
    return "float";
  return storageType(t);
}

/// `expr` (in computeType(t)) rounded to t's precision.
std::string rounded(Type t, const std::string &expr) {
  if (t.isF16())
    return "sinter::generic::round_f16(" + expr + ")";
  if (t.isBF16())
    return "sinter::generic::round_bf16(" + expr + ")";
  return expr;
}

/// The bits of `expr` (in computeType(from)) read as `to`, in computeType(to). Floats pass
/// through CUDA's bit-reinterpreting intrinsics of their width (16-bit ones stored first,
/// which is exact for values that came from them); same-width integers convert, which keeps
/// the bits; bool is its byte, 0 or 1, and a nonzero byte reads as true.
std::string bitCastExpr(Type from, Type to, const std::string &expr) {
  std::string bits;
  if (from.isF32())
    bits = "__float_as_int(" + expr + ")";
  else if (from.isF64())
    bits = "__double_as_longlong(" + expr + ")";
  else if (from.isF16())
    bits = "__half_as_short(sinter::generic::narrow<sinter::generic::f16>(" + expr + "))";
  else if (from.isBF16())
    bits = "__bfloat16_as_short(sinter::generic::narrow<sinter::generic::bf16>(" + expr + "))";
  else
    bits = "(" + expr + ")";
  if (to.isF32())
    return "__int_as_float((int)" + bits + ")";
  if (to.isF64())
    return "__longlong_as_double((long long)" + bits + ")";
  if (to.isF16())
    return "sinter::generic::widen(__short_as_half((short)" + bits + "))";
  if (to.isBF16())
    return "sinter::generic::widen(__short_as_bfloat16((short)" + bits + "))";
  if (to.isInteger(1))
    return "(" + bits + " != 0)";
  return "(" + computeType(to) + ")" + bits;
}

std::string floatLiteral(double v, Type t) {
  if (t.isF64()) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return "__longlong_as_double(" + std::to_string((long long)bits) + "LL)";
  }
  float f = (float)v;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return "__int_as_float(" + std::to_string((int32_t)bits) + ")";
}

/// A literal of compute type for one element of `attr`.
std::string literal(DenseElementsAttr attr, int64_t i) {
  Type t = attr.getElementType();
  if (t.isInteger(1))
    return attr.getValues<bool>()[i] ? "true" : "false";
  if (isa<IntegerType>(t))
    return "(" + storageType(t) + ")" + std::to_string(attr.getValues<APInt>()[i].getSExtValue()) +
           "LL";
  return floatLiteral(attr.getValues<APFloat>()[i].convertToDouble(), t);
}

class KernelWriter {
public:
  KernelWriter(launch::GenericOp op, const GenericPlan &plan) : op(op), plan(plan) {}

  FailureOr<std::string> write(StringRef name);

private:
  // Statements go to `os` at the current indentation.
  void line(const Twine &text) { os << indent << text << "\n"; }
  /// `head {` (a for or if header) and one more level of indentation, and its end.
  void open(const Twine &head) {
    line(head + " {");
    indent += "  ";
  }
  void close() {
    indent.resize(indent.size() - 2);
    line("}");
  }
  /// `} head {`: the end of a block and the start of the next (`else`, `else if (...)`).
  void closeOpen(const Twine &head) {
    indent.resize(indent.size() - 2);
    line("} " + head + " {");
    indent += "  ";
  }
  std::string fresh(StringRef prefix) { return (prefix + Twine(counter++)).str(); }
  /// Binds `expr` to a new const variable of `type` and returns its name.
  std::string bind(StringRef type, const std::string &expr, StringRef prefix = "v") {
    std::string name = fresh(prefix);
    line("const " + type + " " + name + " = " + expr + ";");
    return name;
  }
  std::string indexType() const { return wideIndex ? "long long" : "int"; }

  /// The row-major offset of `idx` in `shape` (dimensions of extent 1 contribute nothing).
  std::string linear(ArrayRef<int64_t> shape, const Index &idx) {
    std::string out;
    int64_t stride = 1;
    for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
      if (shape[d] != 1) {
        std::string term =
            stride == 1 ? "(" + idx[d] + ")" : "(" + idx[d] + ") * " + std::to_string(stride);
        out = out.empty() ? term : term + " + " + out;
      }
      stride *= shape[d];
    }
    return out.empty() ? "0" : out;
  }
  /// `flat` (an expression) as a multi-index of `shape`.
  Index delinearize(const std::string &flat, ArrayRef<int64_t> shape) {
    Index idx(shape.size(), "0");
    std::string var = bind(indexType(), flat, "f");
    int64_t stride = 1;
    for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
      if (shape[d] != 1) {
        std::string q = stride == 1 ? var : "(" + var + " / " + std::to_string(stride) + ")";
        idx[d] = d == 0 ? q : "(" + q + " % " + std::to_string(shape[d]) + ")";
      }
      stride *= shape[d];
    }
    return idx;
  }
  /// The index an operand of shape `from` is read at for a broadcast to `idx` (numpy rules).
  static Index broadcastIndex(const Index &idx, ArrayRef<int64_t> from) {
    Index out(from.size(), "0");
    size_t offset = idx.size() - from.size();
    for (size_t d = 0; d < from.size(); ++d)
      if (from[d] != 1)
        out[d] = idx[d + offset];
    return out;
  }

  /// The index `q` (a value of the indices tensor) selects along an axis of extent `dim`:
  /// negative ones count from the end, out-of-range ones are clamped (never read outside).
  std::string gatherIndex(const std::string &q, int64_t dim) {
    std::string wrapped = bind("long long",
                               "(long long)" + q + " < 0 ? (long long)" + q + " + " +
                                   std::to_string(dim) + " : (long long)" + q,
                               "g");
    return "(" + indexType() + ")min(max(" + wrapped + ", 0LL), " + std::to_string(dim - 1) + "LL)";
  }

  /// The index `q` a scatter writes to along an axis of extent `dim`: negative ones count from
  /// the end; an out-of-range one matches no element, so its update is skipped (a run-time
  /// NonZero's padding, PaddedValues.h).
  std::string scatterIndex(const std::string &q, int64_t dim) {
    return bind("long long",
                "(long long)" + q + " < 0 ? (long long)" + q + " + " + std::to_string(dim) +
                    "LL : (long long)" + q,
                "s");
  }

  FailureOr<std::string> valueAt(Value v, const Index &idx);
  FailureOr<std::string> computeAt(Operation *def, Value v, const Index &idx);
  FailureOr<std::string> operandAt(Operation *def, unsigned i, const Index &resultIdx) {
    return valueAt(def->getOperand(i), broadcastIndex(resultIdx, shapeOf(def->getOperand(i))));
  }
  FailureOr<std::string> convert(Value from, Type to, const std::string &expr);

  /// Row kernels: the row operation's input at the element of the current loop.
  FailureOr<std::string> rowInputAt(const Index &idx) {
    if (!cachedRowInput.empty())
      return cachedRowInput;
    return valueAt(plan.rowOp->getOperand(0), idx);
  }
  /// The input index of row element `e` (an expression) of the current row.
  Index rowElementIndex(const std::string &e);
  /// Emits `body` for each element of the row this thread covers; `body` gets its index.
  LogicalResult forEachRowElement(function_ref<LogicalResult(const Index &)> body, bool useCache);
  LogicalResult writeElementwise();
  LogicalResult writeVectorized();
  LogicalResult writeTiled();
  /// A staged input's index for the output element at `outputIdx`.
  static Index stagedIndex(const GenericPlan::StagedInput &staged, const Index &outputIdx) {
    Index idx;
    for (int64_t d : staged.outputDimOf)
      idx.push_back(d < 0 ? "0" : outputIdx[d]);
    return idx;
  }
  LogicalResult writeRow();
  LogicalResult storeOutputs(const Index &idx);

  launch::GenericOp op;
  const GenericPlan &plan;
  std::string text;
  llvm::raw_string_ostream os{text};
  std::string indent = "  ";
  int counter = 0;
  bool wideIndex = false;
  /// Values already computed in the current scope, by value and index.
  std::map<std::pair<void *, std::string>, std::string> memo;
  /// Row kernels: the current row's non-reduced index entries and statistics.
  Index rowOuterIndex;
  std::string rowMax, rowSum, rowMean, rowScale, rowResult;
  /// CumSum / CumProd: this thread's running sums or products, one per row element it covers.
  std::string rowScan;
  /// The index of the current row element and, when rows are cached in registers, the
  /// variable holding the row input there.
  std::string currentElementKey, cachedRowInput;
  std::string cacheArray;
  /// Tiled kernels, while computing outputs: the shared-memory element of the current output
  /// element (`[row][column]`) and, per staged input, the index it is staged at.
  std::string stagedSlot;
  std::map<unsigned, std::string> stagedKeys;
};

FailureOr<std::string> KernelWriter::valueAt(Value v, const Index &idx) {
  std::string key = llvm::join(idx, ",");
  auto memoKey = std::make_pair(v.getAsOpaquePointer(), key);
  if (auto it = memo.find(memoKey); it != memo.end())
    return it->second;
  FailureOr<std::string> result = failure();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Type t = elementOf(v);
    std::string k = std::to_string(arg.getArgNumber());
    // A staged input read where it was staged comes from shared memory; anywhere else (the
    // same input read at another index too) from global memory.
    auto staged = stagedKeys.find(arg.getArgNumber());
    if (!stagedSlot.empty() && staged != stagedKeys.end() && staged->second == key)
      result = bind(computeType(t), "sinter::generic::widen(stage" + k + stagedSlot + ")");
    else
      result = bind(computeType(t),
                    "sinter::generic::widen(in" + k + "[" + linear(shapeOf(v), idx) + "])");
  } else {
    result = computeAt(v.getDefiningOp(), v, idx);
  }
  if (succeeded(result))
    memo[memoKey] = *result;
  return result;
}

FailureOr<std::string> KernelWriter::convert(Value from, Type to, const std::string &expr) {
  Type src = elementOf(from);
  std::string type = computeType(to);
  if (to.isInteger(1))
    return "(" + expr + " != 0)";
  if (isa<IntegerType>(to) && isa<FloatType>(src))
    return "sinter::generic::to_int<" + type + ">(" + expr + ")";
  return rounded(to, "(" + type + ")(" + expr + ")");
}

FailureOr<std::string> KernelWriter::computeAt(Operation *def, Value v, const Index &idx) {
  Type et = elementOf(v);
  std::string ct = computeType(et);
  auto at = [&](unsigned i) { return operandAt(def, i, idx); };
  auto binary = [&](auto combine) -> FailureOr<std::string> {
    auto a = at(0), b = at(1);
    if (failed(a) || failed(b))
      return failure();
    return bind(ct, rounded(et, combine(*a, *b)));
  };
  auto unary = [&](auto apply) -> FailureOr<std::string> {
    auto a = at(0);
    if (failed(a))
      return failure();
    return bind(ct, rounded(et, apply(*a)));
  };
  bool isInt = isa<IntegerType>(et);

  if (plan.rowOp == def) {
    if (plan.reducesShape)
      return rowResult;
    // Read in the row's last loop, where j is the element's slot.
    if (isa<graph::CumulativeOp>(def))
      return bind(ct, rounded(et, "(" + ct + ")" + rowScan + "[j]"));
    auto x = rowInputAt(idx);
    if (failed(x))
      return failure();
    std::string expr;
    if (isa<graph::SoftmaxOp>(def))
      expr = "sinter::generic::fn_exp((" + ct + ")(" + *x + " - " + rowMax + "), 0.f, 0.f) * " +
             rowScale;
    else if (isa<graph::LogSoftmaxOp>(def))
      expr = *x + " - " + rowMax + " - " + rowScale;
    else if (auto ln = dyn_cast<graph::LayerNormalizationOp>(def)) {
      auto scale = at(1);
      if (failed(scale))
        return failure();
      expr = "(" + *x + " - " + rowMean + ") * " + rowScale + " * " + *scale;
      if (ln.getBias()) {
        auto bias = at(2);
        if (failed(bias))
          return failure();
        expr = "(" + expr + ") + " + *bias;
      }
    } else { // rms_normalization: the scale's type is the result's
      auto scale = at(1);
      if (failed(scale))
        return failure();
      // The normalized row is rounded to the result's type before the scale multiplies it
      // (HF's LlamaRMSNorm casts it to the weight's dtype); an f32 result (Gemma's and OLMo 2's
      // fp32 weights on a 16-bit row) rounds once, at the end, as the rms_norm kernel does.
      expr = rounded(et, *x + " * " + rowScale) + " * " + *scale;
    }
    return bind(ct, rounded(et, expr));
  }

  return llvm::TypeSwitch<Operation *, FailureOr<std::string>>(def)
      .Case([&](graph::ConstantOp c) -> FailureOr<std::string> {
        auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
        if (!dense)
          return c.emitError("a generated kernel needs dense constants"), failure();
        if (dense.isSplat())
          return literal(dense, 0);
        // Small tables are read from an array literal in the kernel.
        std::string table = fresh("table");
        std::string values;
        llvm::raw_string_ostream vs(values);
        for (int64_t i = 0; i < dense.getNumElements(); ++i)
          vs << (i ? ", " : "") << literal(dense, i);
        line("const " + ct + " " + table + "[] = {" + values + "};");
        return bind(ct, table + "[" + linear(shapeOf(v), idx) + "]");
      })
      .Case([&](graph::AddOp) { return binary([](auto a, auto b) { return a + " + " + b; }); })
      .Case([&](graph::SubOp) { return binary([](auto a, auto b) { return a + " - " + b; }); })
      .Case([&](graph::MulOp) { return binary([](auto a, auto b) { return a + " * " + b; }); })
      .Case([&](graph::DivOp) {
        return binary([&](auto a, auto b) {
          // Integer division by zero is undefined in ONNX; the kernel gives 0 instead of trapping.
          return isInt ? "(" + b + " == 0 ? (" + ct + ")0 : (" + ct + ")(" + a + " / " + b + "))"
                       : a + " / " + b;
        });
      })
      .Case([&](graph::PowOp p) -> FailureOr<std::string> {
        auto a = at(0), b = at(1);
        if (failed(a) || failed(b))
          return failure();
        return bind(ct, rounded(et, "sinter::generic::pow_((" + ct + ")" + *a + ", (" + ct + ")" +
                                        *b + ")"));
      })
      .Case([&](graph::AndOp) { return binary([](auto a, auto b) { return a + " && " + b; }); })
      .Case([&](graph::EqualOp) { return binary([](auto a, auto b) { return a + " == " + b; }); })
      .Case([&](graph::LessOrEqualOp) {
        return binary([](auto a, auto b) { return a + " <= " + b; });
      })
      .Case([&](graph::MaxOp) {
        return binary([](auto a, auto b) { return "sinter::generic::max_(" + a + ", " + b + ")"; });
      })
      .Case([&](graph::SqrtOp) {
        return unary([&](auto a) { return "sqrt((" + ct + ")" + a + ")"; });
      })
      .Case([&](graph::ReciprocalOp) {
        return unary([&](auto a) { return "(" + ct + ")1 / " + a; });
      })
      .Case([&](graph::NegOp) { return unary([](auto a) { return "-" + a; }); })
      .Case([&](graph::SigmoidOp) {
        return unary([](auto a) { return "sinter::generic::sigmoid_(" + a + ")"; });
      })
      .Case(
          [&](graph::CosOp) { return unary([&](auto a) { return "cos((" + ct + ")" + a + ")"; }); })
      .Case(
          [&](graph::SinOp) { return unary([&](auto a) { return "sin((" + ct + ")" + a + ")"; }); })
      .Case(
          [&](graph::IsNaNOp) { return unary([](auto a) { return "(" + a + " != " + a + ")"; }); })
      .Case([&](graph::CastOp c) -> FailureOr<std::string> {
        auto a = at(0);
        if (failed(a))
          return failure();
        auto expr = convert(c.getInput(), et, *a);
        if (failed(expr))
          return failure();
        return bind(ct, *expr);
      })
      .Case([&](graph::BitCastOp c) -> FailureOr<std::string> {
        auto a = at(0);
        if (failed(a))
          return failure();
        return bind(ct, bitCastExpr(elementOf(c.getInput()), et, *a));
      })
      .Case([&](graph::WhereOp) -> FailureOr<std::string> {
        auto c = at(0), x = at(1), y = at(2);
        if (failed(c) || failed(x) || failed(y))
          return failure();
        return bind(ct, *c + " ? " + *x + " : " + *y);
      })
      .Case([&](graph::UnaryFnOp u) -> FailureOr<std::string> {
        auto a = at(0);
        if (failed(a))
          return failure();
        Type in = elementOf(u.getInput());
        std::string args =
            "(" + computeType(in) + ")" + *a + ", " +
            floatLiteral(u.getAlpha().convertToDouble(), Float32Type::get(u.getContext())) + ", " +
            floatLiteral(u.getBeta().convertToDouble(), Float32Type::get(u.getContext()));
        // A 16-bit result takes the function's cheaper variant where it has one.
        const graph::ScalarFunction *fn = graph::lookupScalarFunction(u.getFn(), 1);
        std::string helper = "fn_" + u.getFn().str();
        if (fn && fn->roundedVariant && (et.isF16() || et.isBF16()))
          helper += "_rounded<" + storageType(et) + ">";
        return bind(ct, rounded(et, "sinter::generic::" + helper + "(" + args + ")"));
      })
      .Case([&](graph::BinaryFnOp b) -> FailureOr<std::string> {
        auto x = at(0), y = at(1);
        if (failed(x) || failed(y))
          return failure();
        std::string in = computeType(elementOf(b.getLhs()));
        return bind(ct, rounded(et, "sinter::generic::fn_" + b.getFn().str() + "((" + in + ")" +
                                        *x + ", (" + in + ")" + *y + ")"));
      })
      .Case([&](graph::SiluMulOp s) -> FailureOr<std::string> {
        auto g = at(0), u = at(1);
        if (failed(g) || failed(u))
          return failure();
        std::string silu = rounded(et, *g + " * sinter::generic::sigmoid_(" + *g + ")");
        return bind(ct, rounded(et, "(" + silu + ") * " + *u));
      })
      .Case([&](graph::RopeOp r) -> FailureOr<std::string> {
        // x * cos + concat(-x2, x1) * sin over the first R columns of the last axis (R: the
        // tables' width); the columns past R pass through.
        int64_t d = idx.size() - 1, width = shapeOf(v).back(), rotary = r.rotaryDim();
        int64_t half = rotary / 2;
        auto x = valueAt(r.getInput(), idx);
        Index lo = idx, hi = idx;
        lo[d] = "(" + idx[d] + " >= " + std::to_string(half) + " ? " + idx[d] + " - " +
                std::to_string(half) + " : " + idx[d] + ")";
        hi[d] = "(" + idx[d] + " < " + std::to_string(half) + " ? " + idx[d] + " + " +
                std::to_string(half) + " : " + idx[d] + ")";
        // The tables are read at a column inside them for every element (the value of one
        // past R is not used).
        Index tableIdx = idx;
        if (rotary < width)
          tableIdx[d] = "(" + idx[d] + " < " + std::to_string(rotary) + " ? " + idx[d] + " : 0)";
        auto partnerLo = valueAt(r.getInput(), lo), partnerHi = valueAt(r.getInput(), hi);
        auto tableAt = [&](Value table) {
          return valueAt(table, broadcastIndex(tableIdx, shapeOf(table)));
        };
        auto c = tableAt(r.getCos()), s = tableAt(r.getSin());
        if (failed(x) || failed(partnerLo) || failed(partnerHi) || failed(c) || failed(s))
          return failure();
        std::string rotated = "(" + idx[d] + " < " + std::to_string(half) + " ? -" + *partnerHi +
                              " : " + *partnerLo + ")";
        // Tables of the input's type round each product and the sum (HF Llama's RoPE in
        // bf16); f32 tables on a 16-bit input rotate in f32 and round once (OLMo 2's).
        std::string out;
        if (getElementTypeOrSelf(r.getCos()).isF32() && !et.isF32())
          out = rounded(et, *x + " * " + *c + " + " + rotated + " * " + *s);
        else
          out = rounded(et, rounded(et, *x + " * " + *c) + " + " +
                                rounded(et, rotated + " * " + *s));
        if (rotary < width)
          out = "(" + idx[d] + " < " + std::to_string(rotary) + " ? " + out + " : " + *x + ")";
        return bind(ct, out);
      })
      .Case([&](graph::TransposeOp t) {
        Index in(idx.size());
        for (auto [i, p] : llvm::enumerate(t.getPerm()))
          in[p] = idx[i];
        return valueAt(t.getInput(), in);
      })
      .Case([&](graph::SliceOp s) {
        Index in(idx.size());
        for (size_t d = 0; d < idx.size(); ++d) {
          int64_t start = s.getStarts()[d], step = s.getSteps()[d];
          in[d] = step == 1 && start == 0 ? idx[d]
                                          : "(" + std::to_string(start) + " + (" + idx[d] + ") * " +
                                                std::to_string(step) + ")";
        }
        return valueAt(s.getInput(), in);
      })
      .Case([&](graph::ReshapeOp r) {
        return valueAt(r.getInput(), delinearize(linear(shapeOf(v), idx), shapeOf(r.getInput())));
      })
      .Case([&](graph::UnsqueezeOp u) {
        Index in;
        for (size_t d = 0; d < idx.size(); ++d)
          if (!llvm::is_contained(u.getAxes(), (int64_t)d))
            in.push_back(idx[d]);
        return valueAt(u.getInput(), in);
      })
      .Case([&](graph::SqueezeOp s) {
        Index in;
        size_t next = 0;
        for (int64_t d = 0; d < (int64_t)shapeOf(s.getInput()).size(); ++d)
          in.push_back(llvm::is_contained(s.getAxes(), d) ? "0" : idx[next++]);
        return valueAt(s.getInput(), in);
      })
      .Case([&](graph::ExpandOp e) { return operandAt(def, 0, idx); })
      .Case([&](graph::ConcatOp c) -> FailureOr<std::string> {
        int64_t axis = c.getAxis(), offset = 0;
        SmallVector<std::pair<std::string, std::string>> parts; // (bound, value)
        for (Value in : c.getInputs()) {
          int64_t n = shapeOf(in)[axis];
          if (n == 0)
            continue;
          Index at = idx;
          std::string ix = indexType();
          at[axis] = "min(max((" + ix + ")(" + idx[axis] + ") - (" + ix + ")" +
                     std::to_string(offset) + ", (" + ix + ")0), (" + ix + ")" +
                     std::to_string(n - 1) + ")";
          auto value = valueAt(in, at);
          if (failed(value))
            return failure();
          offset += n;
          parts.push_back({std::to_string(offset), *value});
        }
        if (parts.empty()) // an empty result launches nothing (LowerGeneric skips it)
          return c.emitError("a generated concat needs a non-empty input"), failure();
        std::string result = parts.back().second;
        for (int64_t i = (int64_t)parts.size() - 2; i >= 0; --i)
          result = "(" + idx[axis] + " < " + parts[i].first + " ? " + parts[i].second + " : " +
                   result + ")";
        return bind(ct, result);
      })
      .Case([&](graph::GatherOp g) -> FailureOr<std::string> {
        int64_t axis = g.getAxis(), indexRank = shapeOf(g.getIndices()).size();
        int64_t dim = shapeOf(g.getInput())[axis];
        if (dim == 0) // every index is out of range: nothing to read
          return g.emitError("a gather from an empty axis"), failure();
        Index at(idx.begin() + axis, idx.begin() + axis + indexRank);
        auto q = valueAt(g.getIndices(), at);
        if (failed(q))
          return failure();
        Index in(idx.begin(), idx.begin() + axis);
        in.push_back(gatherIndex(*q, dim));
        in.append(idx.begin() + axis + indexRank, idx.end());
        return valueAt(g.getInput(), in);
      })
      .Case([&](graph::GatherElementsOp g) -> FailureOr<std::string> {
        int64_t axis = g.getAxis(), dim = shapeOf(g.getInput())[axis];
        if (dim == 0)
          return g.emitError("a gather from an empty axis"), failure();
        auto q = valueAt(g.getIndices(), idx);
        if (failed(q))
          return failure();
        Index in = idx;
        in[axis] = gatherIndex(*q, dim);
        return valueAt(g.getInput(), in);
      })
      .Case([&](graph::PadOp p) -> FailureOr<std::string> {
        ArrayRef<int64_t> inShape = shapeOf(p.getInput());
        StringRef mode = p.getMode();
        std::string fill =
            isa<FloatType>(et) ? floatLiteral(p.getValue().convertToDouble(), et)
            : et.isInteger(1)
                ? (p.getValue().convertToDouble() != 0 ? "true" : "false")
                : "(" + ct + ")" + std::to_string((long long)p.getValue().convertToDouble()) + "LL";
        if (llvm::is_contained(inShape, 0))
          return fill; // nothing to read: every entry is new
        Index in(idx.size());
        std::string inside;
        for (size_t d = 0; d < idx.size(); ++d) {
          std::string dim = std::to_string(inShape[d]);
          std::string src =
              bind("long long",
                   "(long long)(" + idx[d] + ") - " + std::to_string(p.getBefore()[d]) + "LL", "p");
          std::string at;
          if (mode == "reflect")
            at = "(" + src + " < 0 ? -" + src + " : (" + src + " >= " + dim + " ? 2 * (" + dim +
                 " - 1) - " + src + " : " + src + "))";
          else if (mode == "wrap")
            at = "(((" + src + " % " + dim + ") + " + dim + ") % " + dim + ")";
          else
            at = src;
          if (mode == "constant")
            inside += (inside.empty() ? "" : " && ") +
                      ("(" + src + " >= 0 && " + src + " < " + dim + ")");
          // Every read stays inside the tensor (constant mode reads a clamped entry it discards).
          in[d] = "(" + indexType() + ")min(max(" + at + ", 0LL), " +
                  std::to_string(inShape[d] - 1) + "LL)";
        }
        auto x = valueAt(p.getInput(), in);
        if (failed(x))
          return failure();
        if (mode != "constant" || inside.empty())
          return x;
        return bind(ct, "(" + inside + ") ? " + *x + " : " + fill);
      })
      .Case([&](graph::GatherNDOp g) -> FailureOr<std::string> {
        auto data = shapeOf(g.getInput()), indices = shapeOf(g.getIndices());
        int64_t batch = g.getBatchDims(), k = indices.back(), outer = indices.size() - 1;
        Index in(idx.begin(), idx.begin() + batch);
        for (int64_t j = 0; j < k; ++j) {
          Index at(idx.begin(), idx.begin() + outer);
          at.push_back(std::to_string(j));
          auto q = valueAt(g.getIndices(), at);
          if (failed(q))
            return failure();
          int64_t dim = data[batch + j];
          if (dim == 0)
            return g.emitError("a gather from an empty axis"), failure();
          in.push_back(gatherIndex(*q, dim));
        }
        in.append(idx.begin() + outer, idx.end());
        return valueAt(g.getInput(), in);
      })
      .Case([&](graph::ScatterNDOp sc) -> FailureOr<std::string> {
        // The element's own value, then every update tuple that addresses it in order (the
        // indices may be computed at run time, and may repeat).
        auto data = shapeOf(sc.getInput()), indices = shapeOf(sc.getIndices());
        int64_t k = indices.back();
        SmallVector<int64_t> tupleShape(indices.begin(), indices.end() - 1);
        int64_t tuples = 1;
        for (int64_t d : tupleShape)
          tuples *= d;
        auto base = valueAt(sc.getInput(), idx);
        if (failed(base))
          return failure();
        std::string value = fresh("scattered"), tuple = fresh("tuple");
        line(ct + " " + value + " = " + *base + ";");
        open("for (" + indexType() + " " + tuple + " = 0; " + tuple + " < " +
             std::to_string(tuples) + "; ++" + tuple + ")");
        auto saved = memo;
        Index at = delinearize(tuple, tupleShape);
        std::string match;
        for (int64_t j = 0; j < k; ++j) {
          Index entry = at;
          entry.push_back(std::to_string(j));
          auto q = valueAt(sc.getIndices(), entry);
          if (failed(q))
            return failure();
          if (data[j] == 0)
            return sc.emitError("a scatter into an empty axis"), failure();
          match += (j ? " && " : "") + std::string("(") + scatterIndex(*q, data[j]) +
                   ") == (long long)(" + idx[j] + ")";
        }
        open("if (" + match + ")");
        Index updateAt = at;
        updateAt.append(idx.begin() + k, idx.end());
        auto update = valueAt(sc.getUpdates(), updateAt);
        if (failed(update))
          return failure();
        StringRef r = sc.getReduction();
        std::string combined =
            r == "add"   ? value + " + " + *update
            : r == "mul" ? value + " * " + *update
            : r == "max" ? "sinter::generic::max_(" + value + ", " + *update + ")"
            : r == "min" ? "sinter::generic::fn_min(" + value + ", " + *update + ")"
                         : *update;
        line(value + " = " + rounded(et, combined) + ";");
        close();
        memo = saved;
        close();
        return value;
      })
      .Case([&](graph::TriluOp t) -> FailureOr<std::string> {
        auto x = valueAt(t.getInput(), idx);
        if (failed(x))
          return failure();
        size_t r = idx.size();
        std::string diff = "((long long)(" + idx[r - 1] + ") - (long long)(" + idx[r - 2] + "))";
        std::string keep =
            diff + (t.getUpper() ? " >= " : " <= ") + std::to_string((int64_t)t.getK()) + "LL";
        return bind(ct, keep + " ? " + *x + " : (" + ct + ")0");
      })
      .Case([&](graph::RangeOp r) -> FailureOr<std::string> {
        auto start = valueAt(r.getStart(), {}), delta = valueAt(r.getDelta(), {});
        if (failed(start) || failed(delta))
          return failure();
        return bind(ct, rounded(et, *start + " + (" + ct + ")(" + idx[0] + ") * " + *delta));
      })
      .Case([&](graph::ConstantOfShapeOp c) -> FailureOr<std::string> {
        auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
        if (!dense || dense.getNumElements() != 1)
          return c.emitError("constant_of_shape needs a one-element value"), failure();
        return literal(dense, 0);
      })
      .Default([&](Operation *other) -> FailureOr<std::string> {
        return other->emitError("a generated kernel cannot compute '")
                   << other->getName() << "' here",
               failure();
      });
}

LogicalResult KernelWriter::storeOutputs(const Index &idx) {
  Operation *yield = op.getBody().front().getTerminator();
  for (auto [i, value] : llvm::enumerate(yield->getOperands())) {
    auto computed = valueAt(value, idx);
    if (failed(computed))
      return failure();
    Type t = elementOf(value);
    line("out" + std::to_string(i) + "[" + linear(shapeOf(value), idx) +
         "] = sinter::generic::narrow<" + storageType(t) + ">(" + *computed + ");");
  }
  return success();
}

LogicalResult KernelWriter::writeVectorized() {
  ArrayRef<int64_t> shape = plan.iterationShape;
  int64_t total = 1, width = plan.vectorWidth;
  for (int64_t d : shape)
    total *= d;
  Block &body = op.getBody().front();
  Operation *yield = body.getTerminator();
  // Which inputs vary along the innermost dimension (one vector load) and which are
  // broadcast along it (one scalar load).
  auto contiguous = [&](BlockArgument arg) {
    ArrayRef<int64_t> s = shapeOf(arg);
    return !s.empty() && s.back() == shape.back();
  };
  std::string check;
  auto requireAligned = [&](const std::string &pointer, Type t) {
    int64_t bytes = std::min<int64_t>(16, storageBytes(t) * width);
    check += (check.empty() ? "" : " | ") + std::string("((unsigned long long)") + pointer + " % " +
             std::to_string(bytes) + ")";
  };
  for (BlockArgument arg : body.getArguments())
    if (contiguous(arg) && !arg.use_empty())
      requireAligned("in" + std::to_string(arg.getArgNumber()), elementOf(arg));
  for (auto [o, v] : llvm::enumerate(yield->getOperands()))
    requireAligned("out" + std::to_string(o), elementOf(v));
  open("if ((" + check + ") == 0)");
  line("const " + indexType() + " first = ((" + indexType() + ")blockIdx.x * " +
       std::to_string(plan.block) + " + threadIdx.x) * " + std::to_string(width) + ";");
  open("if (first < " + std::to_string(total) + ")");
  Index first = delinearize("first", shape);
  std::string w = std::to_string(width);
  for (BlockArgument arg : body.getArguments()) {
    if (arg.use_empty())
      continue;
    std::string k = std::to_string(arg.getArgNumber());
    Type t = elementOf(arg);
    Index at = broadcastIndex(first, shapeOf(arg));
    if (contiguous(arg)) {
      line("const sinter::generic::Vec<" + storageType(t) + ", " + w + "> vin" + k +
           " = sinter::generic::load_vec<" + w + ">(in" + k + " + " + linear(shapeOf(arg), at) +
           ");");
      for (int64_t e = 0; e < width; ++e) {
        Index ie = at;
        ie.back() = "(" + at.back() + " + " + std::to_string(e) + ")";
        memo[{arg.getAsOpaquePointer(), llvm::join(ie, ",")}] =
            "sinter::generic::widen(vin" + k + ".v[" + std::to_string(e) + "])";
      }
    }
  }
  for (auto [o, v] : llvm::enumerate(yield->getOperands()))
    line("sinter::generic::Vec<" + storageType(elementOf(v)) + ", " + w + "> vout" +
         std::to_string(o) + ";");
  for (int64_t e = 0; e < width; ++e) {
    Index ie = first;
    ie.back() = "(" + first.back() + " + " + std::to_string(e) + ")";
    for (auto [o, v] : llvm::enumerate(yield->getOperands())) {
      auto computed = valueAt(v, ie);
      if (failed(computed))
        return failure();
      line("vout" + std::to_string(o) + ".v[" + std::to_string(e) + "] = sinter::generic::narrow<" +
           storageType(elementOf(v)) + ">(" + *computed + ");");
    }
  }
  for (auto [o, v] : llvm::enumerate(yield->getOperands()))
    line("sinter::generic::store_vec(out" + std::to_string(o) + " + first, vout" +
         std::to_string(o) + ");");
  close();
  line("return;");
  close();
  memo.clear();
  return success();
}

LogicalResult KernelWriter::writeElementwise() {
  ArrayRef<int64_t> shape = plan.iterationShape;
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  // Vectors where the pointers allow, else (and for the same elements) one element at a time.
  if (plan.vectorWidth > 1 && failed(writeVectorized()))
    return failure();
  int64_t perBlock = plan.block * plan.elementsPerThread;
  line("const " + indexType() + " first = (" + indexType() + ")blockIdx.x * " +
       std::to_string(perBlock) + " + threadIdx.x;");
  line("#pragma unroll");
  open("for (int e = 0; e < " + std::to_string(plan.elementsPerThread) + "; ++e)");
  line("const " + indexType() + " i = first + e * " + std::to_string(plan.block) + ";");
  open("if (i < " + std::to_string(total) + ")");
  memo.clear();
  if (failed(storeOutputs(delinearize("i", shape))))
    return failure();
  close();
  close();
  return success();
}

LogicalResult KernelWriter::writeTiled() {
  ArrayRef<int64_t> shape = plan.iterationShape;
  Block &body = op.getBody().front();
  const int64_t last = shape.size() - 1, across = plan.tileDim;
  const int64_t tilesAcross = llvm::divideCeil(shape[across], plan.tileSide);
  const int64_t tilesLast = llvm::divideCeil(shape[last], plan.tileSide);
  const int64_t vector = plan.tileVector, threadsAlong = plan.tileSide / vector;
  const std::string it = indexType(), side = std::to_string(plan.tileSide);
  const std::string passes = std::to_string(plan.elementsPerThread / vector);
  const std::string rowsPerPass = std::to_string(plan.block / threadsAlong);
  line("const " + it + " tile = blockIdx.x;");
  line("const " + it + " tileLast = (tile % " + std::to_string(tilesLast) + ") * " + side + ";");
  line("const " + it + " tileAcross = (tile / " + std::to_string(tilesLast) + " % " +
       std::to_string(tilesAcross) + ") * " + side + ";");
  // The other output dimensions, one position of them a tile.
  SmallVector<int64_t> restShape(shape);
  restShape[across] = restShape[last] = 1;
  Index outputIdx(shape.size(), "0");
  if (llvm::any_of(restShape, [](int64_t extent) { return extent != 1; }))
    outputIdx = delinearize("tile / " + std::to_string(tilesAcross * tilesLast), restShape);
  outputIdx[across] = "a";
  outputIdx[last] = "l";
  line("const int column = threadIdx.x % " + std::to_string(threadsAlong) +
       (vector > 1 ? " * " + std::to_string(vector) : std::string()) +
       ", row = threadIdx.x / " + std::to_string(threadsAlong) + ";");
  // Padding keeps the staging writes (a warp's lanes down a column, `vector` rows apart) and
  // the reads (along a row) free of bank conflicts: `vector` rows are an odd number of 4-byte
  // words (lanes writing two halves of one word do not conflict).
  for (const auto &staged : plan.stagedInputs) {
    Type t = elementOf(body.getArgument(staged.argument));
    int64_t padding = std::max<int64_t>(1, 4 / (storageBytes(t) * vector));
    line("__shared__ " + storageType(t) + " stage" + std::to_string(staged.argument) + "[" + side +
         "][" + side + " + " + std::to_string(padding) + "];");
  }
  const std::string inBounds =
      "a < " + std::to_string(shape[across]) + " && l < " + std::to_string(shape[last]);
  // Pairs are 4-byte (or 2-byte) accesses when the extent along them is even and the pointers
  // are aligned: then every pair is, and one test a kernel decides it. Per-pair tests would
  // put each load in a branch of its own and cost the loads' overlap (a bf16 transpose with
  // them moved 60 % of the copy bandwidth).
  auto alignedPointers = [&](ArrayRef<std::pair<std::string, Type>> pointers) {
    std::string check;
    for (const auto &[pointer, t] : pointers)
      check += (check.empty() ? "" : " | ") + std::string("((unsigned long long)") + pointer +
               " % " + std::to_string(2 * storageBytes(t)) + ")";
    return "(" + check + ") == 0";
  };
  const bool pairsAcross = vector > 1 && shape[across] % 2 == 0;
  const bool pairsAlong = vector > 1 && shape[last] % 2 == 0;
  // Stage: consecutive threads read consecutive elements (or pairs) along `across`, each
  // input's innermost dimension.
  const std::string stagedRow = "[row + pass * " + rowsPerPass + "]";
  auto stageLoop = [&](bool loadPairs) {
    line("#pragma unroll");
    open("for (int pass = 0; pass < " + passes + "; ++pass)");
    line("const " + it + " a = tileAcross + column, l = tileLast + row + pass * " + rowsPerPass +
         ";");
    open("if (" + inBounds + ")");
    for (const auto &staged : plan.stagedInputs) {
      std::string k = std::to_string(staged.argument);
      BlockArgument arg = body.getArgument(staged.argument);
      std::string element =
          "in" + k + "[" + linear(shapeOf(arg), stagedIndex(staged, outputIdx)) + "]";
      if (vector == 1) {
        line("stage" + k + "[column]" + stagedRow + " = " + element + ";");
        continue;
      }
      // The input's innermost dimension is `across`: the pair's second element is the next.
      Type t = elementOf(arg);
      line("const " + storageType(t) + " *source" + k + " = &" + element + ";");
      if (loadPairs) {
        line("const sinter::generic::Vec<" + storageType(t) + ", 2> pair" + k +
             " = sinter::generic::load_vec<2>(source" + k + ");");
        line("stage" + k + "[column]" + stagedRow + " = pair" + k + ".v[0];");
        line("stage" + k + "[column + 1]" + stagedRow + " = pair" + k + ".v[1];");
        continue;
      }
      line("stage" + k + "[column]" + stagedRow + " = source" + k + "[0];");
      std::string second = "stage" + k + "[column + 1]" + stagedRow + " = source" + k + "[1];";
      line(shape[across] % 2 == 0 ? second
                                  : "if (a + 1 < " + std::to_string(shape[across]) + ") " + second);
    }
    close();
    close();
  };
  if (pairsAcross) {
    SmallVector<std::pair<std::string, Type>> inputs;
    for (const auto &staged : plan.stagedInputs)
      inputs.push_back({"in" + std::to_string(staged.argument),
                        elementOf(body.getArgument(staged.argument))});
    open("if (" + alignedPointers(inputs) + ")");
    stageLoop(true);
    closeOpen("else");
    stageLoop(false);
    close();
  } else {
    stageLoop(false);
  }
  line("__syncthreads();");
  // Compute and store: consecutive threads write consecutive elements (or pairs) of the
  // output's innermost dimension.
  Operation *yield = body.getTerminator();
  if (pairsAlong) {
    SmallVector<std::pair<std::string, Type>> outputs;
    for (auto [o, v] : llvm::enumerate(yield->getOperands()))
      outputs.push_back({"out" + std::to_string(o), elementOf(v)});
    line("const bool alignedOutputs = " + alignedPointers(outputs) + ";");
  }
  line("#pragma unroll");
  open("for (int pass = 0; pass < " + passes + "; ++pass)");
  line("const " + it + " a = tileAcross + row + pass * " + rowsPerPass + ", l = tileLast + column;");
  open("if (" + inBounds + ")");
  // Staged reads of element e of the pair (at output index idx) come from shared memory.
  auto serveStaged = [&](const Index &idx, int64_t e) {
    stagedSlot = stagedRow + "[column" + (e ? " + " + std::to_string(e) : std::string()) + "]";
    stagedKeys.clear();
    for (const auto &staged : plan.stagedInputs)
      stagedKeys[staged.argument] = llvm::join(stagedIndex(staged, idx), ",");
  };
  memo.clear();
  LogicalResult stored = success();
  if (vector == 1) {
    serveStaged(outputIdx, 0);
    stored = storeOutputs(outputIdx);
  } else {
    Index secondIdx = outputIdx;
    secondIdx[last] = "(l + 1)";
    auto storePairs = [&]() -> LogicalResult {
      SmallVector<std::pair<std::string, std::string>> values;
      for (Value v : yield->getOperands()) {
        serveStaged(outputIdx, 0);
        auto first = valueAt(v, outputIdx);
        serveStaged(secondIdx, 1);
        auto second = valueAt(v, secondIdx);
        if (failed(first) || failed(second))
          return failure();
        values.push_back({*first, *second});
      }
      for (auto [o, v] : llvm::enumerate(yield->getOperands())) {
        std::string k = std::to_string(o), type = storageType(elementOf(v));
        line(type + " *target" + k + " = out" + k + " + " + linear(shapeOf(v), outputIdx) + ";");
        line("const " + type + " first" + k + " = sinter::generic::narrow<" + type + ">(" +
             values[o].first + "), second" + k + " = sinter::generic::narrow<" + type + ">(" +
             values[o].second + ");");
        if (pairsAlong) {
          open("if (alignedOutputs)");
          line("sinter::generic::Vec<" + type + ", 2> pair" + k + ";");
          line("pair" + k + ".v[0] = first" + k + ";");
          line("pair" + k + ".v[1] = second" + k + ";");
          line("sinter::generic::store_vec(target" + k + ", pair" + k + ");");
          closeOpen("else");
        }
        line("target" + k + "[0] = first" + k + ";");
        line("target" + k + "[1] = second" + k + ";");
        if (pairsAlong)
          close();
      }
      return success();
    };
    if (shape[last] % 2 == 0) {
      stored = storePairs();
    } else { // the tile's end can cut a pair
      open("if (l + 1 < " + std::to_string(shape[last]) + ")");
      stored = storePairs();
      closeOpen("else");
      memo.clear();
      serveStaged(outputIdx, 0);
      if (succeeded(stored))
        stored = storeOutputs(outputIdx);
      close();
    }
  }
  stagedSlot.clear();
  stagedKeys.clear();
  if (failed(stored))
    return failure();
  close();
  close();
  return success();
}

Index KernelWriter::rowElementIndex(const std::string &e) {
  SmallVector<int64_t> reducedExtents;
  for (int64_t d : plan.reducedDims)
    reducedExtents.push_back(plan.rowInputShape[d]);
  Index reduced = delinearize(e, reducedExtents);
  Index idx(plan.rowInputShape.size());
  size_t r = 0, o = 0;
  for (size_t d = 0; d < idx.size(); ++d)
    idx[d] = llvm::is_contained(plan.reducedDims, (int64_t)d) ? reduced[r++] : rowOuterIndex[o++];
  return idx;
}

LogicalResult KernelWriter::forEachRowElement(function_ref<LogicalResult(const Index &)> body,
                                              bool useCache) {
  int64_t perThread = llvm::divideCeil(plan.rowLength, plan.threadsPerRow);
  line("#pragma unroll");
  open("for (int j = 0; j < " + std::to_string(perThread) + "; ++j)");
  line("const int e = lane + j * " + std::to_string(plan.threadsPerRow) + ";");
  open("if (e < " + std::to_string(plan.rowLength) + ")");
  auto saved = memo;
  Index idx = rowElementIndex("e");
  cachedRowInput = useCache && !cacheArray.empty() ? cacheArray + "[j]" : "";
  LogicalResult result = body(idx);
  cachedRowInput.clear();
  memo = saved;
  close();
  close();
  return result;
}

LogicalResult KernelWriter::writeRow() {
  Operation *row = plan.rowOp;
  Value x = row->getOperand(0);
  Type xt = elementOf(x);
  // Integers accumulate in 64 bits (uint64 unsigned, so that its maximum and minimum see
  // values past INT64_MAX as large).
  std::string acc = xt.isF64()                  ? "double"
                    : isa<FloatType>(xt)        ? "float"
                    : xt.isUnsignedInteger(64) ? "unsigned long long"
                                                : "long long";
  int64_t tpr = plan.threadsPerRow;
  std::string tprText = std::to_string(tpr);
  line("const int lane = threadIdx.x % " + tprText + ";");
  line("const long long row_unclamped = (long long)blockIdx.x * " +
       std::to_string(plan.rowsPerBlock) + " + threadIdx.x / " + tprText + ";");
  // Rows past the end compute the last row again and store nothing: their lanes take part in
  // the shuffles of the rows beside them.
  line("const bool active = row_unclamped < " + std::to_string(plan.rows) + "LL;");
  line("const " + indexType() + " row = (" + indexType() +
       ")(active ? row_unclamped : " + std::to_string(plan.rows - 1) + "LL);");
  SmallVector<int64_t> outerExtents;
  for (size_t d = 0; d < plan.rowInputShape.size(); ++d)
    if (!llvm::is_contained(plan.reducedDims, (int64_t)d))
      outerExtents.push_back(plan.rowInputShape[d]);
  rowOuterIndex = delinearize("row", outerExtents);

  // The row's input, in registers when it is short enough.
  int64_t perThread = llvm::divideCeil(plan.rowLength, tpr);
  std::string xct = computeType(xt);
  if (perThread <= 16) {
    cacheArray = "row_input";
    line(xct + " " + cacheArray + "[" + std::to_string(perThread) + "];");
    if (failed(forEachRowElement(
            [&](const Index &idx) -> LogicalResult {
              auto value = valueAt(x, idx);
              if (failed(value))
                return failure();
              line(cacheArray + "[j] = " + *value + ";");
              return success();
            },
            /*useCache=*/false)))
      return failure();
  }
  auto reduceAll =
      [&](const std::string &var, const std::string &identity, const std::string &combine,
          function_ref<FailureOr<std::string>(const std::string &)> element) -> LogicalResult {
    line(acc + " " + var + " = " + identity + ";");
    if (failed(forEachRowElement(
            [&](const Index &idx) -> LogicalResult {
              auto xv = rowInputAt(idx);
              if (failed(xv))
                return failure();
              auto term = element(*xv);
              if (failed(term))
                return failure();
              line(var + " = " +
                   llvm::formatv(combine.c_str(), var, "(" + acc + ")(" + *term + ")").str() + ";");
              return success();
            },
            true)))
      return failure();
    line(var + " = sinter::generic::row_reduce<" + tprText + ">(" + var + ", (" + acc + ")(" +
         identity + "), [](" + acc + " a, " + acc + " b) { return " +
         llvm::formatv(combine.c_str(), "a", "b").str() + "; });");
    return success();
  };
  std::string inf = acc == "long long"            ? "9223372036854775807LL"
                    : acc == "unsigned long long" ? "18446744073709551615ULL"
                                                  : "(" + acc + ")CUDART_INF";
  std::string ninf = acc == "long long"            ? "(-9223372036854775807LL - 1)"
                     : acc == "unsigned long long" ? "0ULL"
                                                   : "-(" + acc + ")CUDART_INF";
  const char *sum = "{0} + {1}";
  const char *maxOf = "sinter::generic::max_({0}, {1})";
  const char *minOf = "sinter::generic::fn_min({0}, {1})";
  auto same = [](const std::string &v) -> FailureOr<std::string> { return v; };
  std::string len = "(" + acc + ")" + std::to_string(plan.rowLength);

  if (isa<graph::SoftmaxOp, graph::LogSoftmaxOp>(row)) {
    rowMax = fresh("row_max");
    if (failed(reduceAll(rowMax, ninf, maxOf, same)))
      return failure();
    std::string total = fresh("row_sum");
    if (failed(reduceAll(total, "0", sum, [&](const std::string &v) -> FailureOr<std::string> {
          return "sinter::generic::fn_exp((" + acc + ")(" + v + " - " + rowMax + "), 0.f, 0.f)";
        })))
      return failure();
    rowScale = isa<graph::SoftmaxOp>(row) ? bind(acc, "(" + acc + ")1 / " + total, "row_scale")
                                          : bind(acc, "log(" + total + ")", "row_scale");
  } else if (isa<graph::LayerNormalizationOp>(row)) {
    std::string total = fresh("row_sum");
    if (failed(reduceAll(total, "0", sum, same)))
      return failure();
    rowMean = bind(acc, total + " / " + len, "row_mean");
    std::string var = fresh("row_var");
    if (failed(reduceAll(var, "0", sum, [&](const std::string &v) -> FailureOr<std::string> {
          return "(" + v + " - " + rowMean + ") * (" + v + " - " + rowMean + ")";
        })))
      return failure();
    float eps = cast<graph::LayerNormalizationOp>(row).getEpsilon().convertToFloat();
    rowScale = bind(acc,
                    "(" + acc + ")1 / sqrt(" + var + " / " + len + " + " +
                        floatLiteral(eps, Float32Type::get(row->getContext())) + ")",
                    "row_rstd");
  } else if (auto rms = dyn_cast<graph::RMSNormalizationOp>(row)) {
    std::string total = fresh("row_sum");
    if (failed(reduceAll(total, "0", sum, [](const std::string &v) -> FailureOr<std::string> {
          return v + " * " + v;
        })))
      return failure();
    float eps = rms.getEpsilon().convertToFloat();
    rowScale = bind(acc,
                    "(" + acc + ")1 / sqrt(" + total + " / " + len + " + " +
                        floatLiteral(eps, Float32Type::get(row->getContext())) + ")",
                    "row_rstd");
  } else if (auto cumulative = dyn_cast<graph::CumulativeOp>(row)) {
    // Chunk by chunk of tpr elements (from the last with reverse), every lane of the row in
    // each step's scan; the chunks' totals carry on to the next.
    const bool product = cumulative.getKind() == "prod";
    const std::string identity = product ? "1" : "0", combine = product ? " * " : " + ";
    std::string slots = std::to_string(perThread);
    rowScan = fresh("row_scan");
    std::string carry = fresh("carry"), step = fresh("step");
    line(acc + " " + rowScan + "[" + slots + "];");
    line(acc + " " + carry + " = " + identity + ";");
    line("#pragma unroll");
    open("for (int " + step + " = 0; " + step + " < " + slots + "; ++" + step + ")");
    line("const int j = " + (cumulative.getReverse() ? slots + " - 1 - " + step : step) + ";");
    line("const int e = lane + j * " + tprText + ";");
    std::string v = fresh("element");
    line(acc + " " + v + " = " + identity + ";");
    open("if (e < " + std::to_string(plan.rowLength) + ")");
    auto saved = memo;
    cachedRowInput = cacheArray.empty() ? "" : cacheArray + "[j]";
    auto xv = rowInputAt(rowElementIndex("e"));
    cachedRowInput.clear();
    memo = saved;
    if (failed(xv))
      return failure();
    line(v + " = (" + acc + ")(" + *xv + ");");
    close();
    std::string before = fresh("before"), total = fresh("chunk_total");
    line(acc + " " + before + ", " + total + ";");
    std::string inclusive =
        bind(acc,
             "sinter::generic::row_scan<" + tprText + ", " +
                 (cumulative.getReverse() ? "true" : "false") + ", " +
                 (product ? "true" : "false") + ">(" + v + ", " + before + ", " + total + ")",
             "inclusive");
    line(rowScan + "[j] = " + carry + combine +
         (cumulative.getExclusive() ? before : inclusive) + ";");
    line(carry + " = " + carry + combine + total + ";");
    close();
  } else if (auto arg = dyn_cast<graph::ArgReduceOp>(row)) {
    bool isMax = arg.getKind() == "max";
    std::string best = fresh("best"), bestIndex = fresh("best_index");
    line(xct + " " + best + " = 0;");
    line("long long " + bestIndex + " = -1;");
    std::string flags = std::string(isMax ? "true" : "false") + ", " +
                        (arg.getSelectLastIndex() ? "true" : "false");
    if (failed(forEachRowElement(
            [&](const Index &idx) -> LogicalResult {
              auto xv = rowInputAt(idx);
              if (failed(xv))
                return failure();
              line("if (sinter::generic::arg_better<" + flags + ">(" + *xv + ", (long long)e, " +
                   best + ", " + bestIndex + ")) { " + best + " = " + *xv + "; " + bestIndex +
                   " = e; }");
              return success();
            },
            true)))
      return failure();
    rowResult = fresh("row_result");
    line("const long long " + rowResult + " = sinter::generic::row_arg_reduce<" + tprText + ", " +
         flags + ">(" + best + ", " + bestIndex + ");");
  } else {
    StringRef kind = isa<graph::ReduceMeanOp>(row) ? "mean" : cast<graph::ReduceOp>(row).getKind();
    std::string total = fresh("row_acc");
    auto square = [](const std::string &v) -> FailureOr<std::string> { return v + " * " + v; };
    auto absolute = [&](const std::string &v) -> FailureOr<std::string> {
      return "sinter::generic::fn_abs((" + acc + ")" + v + ", 0.f, 0.f)";
    };
    LogicalResult ok = success();
    std::string finalValue = total;
    if (kind == "sum" || kind == "mean")
      ok = reduceAll(total, "0", sum, same);
    else if (kind == "max")
      ok = reduceAll(total, ninf, maxOf, same);
    else if (kind == "min")
      ok = reduceAll(total, inf, minOf, same);
    else if (kind == "prod")
      ok = reduceAll(total, "1", "{0} * {1}", same);
    else if (kind == "l1")
      ok = reduceAll(total, "0", sum, absolute);
    else if (kind == "l2" || kind == "sum_square")
      ok = reduceAll(total, "0", sum, square);
    else if (kind == "log_sum_exp") {
      rowMax = fresh("row_max");
      ok = reduceAll(rowMax, ninf, maxOf, same);
      if (succeeded(ok))
        ok = reduceAll(total, "0", sum, [&](const std::string &v) -> FailureOr<std::string> {
          return "exp((" + acc + ")(" + v + " - " + rowMax + "))";
        });
      // An all -inf row has max -inf: log(0) + -inf stays -inf instead of NaN.
      finalValue =
          "(" + rowMax + " == " + ninf + " ? " + rowMax + " : " + rowMax + " + log(" + total + "))";
    }
    if (failed(ok))
      return failure();
    if (kind == "mean")
      finalValue = total + " / " + len;
    else if (kind == "l2")
      finalValue = "sqrt(" + total + ")";
    Type rt = elementOf(row->getResult(0));
    rowResult = bind(computeType(rt), rounded(rt, "(" + computeType(rt) + ")(" + finalValue + ")"),
                     "row_result");
  }

  // Outputs: at every element for row-shaped results, once per row (lane 0) for reductions.
  if (plan.reducesShape) {
    open("if (active && lane == 0)");
    Index out;
    size_t o = 0;
    auto keep = isa<graph::ArgReduceOp>(row)    ? cast<graph::ArgReduceOp>(row).getKeepdims()
                : isa<graph::ReduceMeanOp>(row) ? cast<graph::ReduceMeanOp>(row).getKeepdims()
                                                : cast<graph::ReduceOp>(row).getKeepdims();
    for (size_t d = 0; d < plan.rowInputShape.size(); ++d) {
      if (!llvm::is_contained(plan.reducedDims, (int64_t)d))
        out.push_back(rowOuterIndex[o++]);
      else if (keep)
        out.push_back("0");
    }
    if (failed(storeOutputs(out)))
      return failure();
    close();
    return success();
  }
  open("if (active)");
  LogicalResult stored =
      forEachRowElement([&](const Index &idx) { return storeOutputs(idx); }, true);
  close();
  return stored;
}

FailureOr<std::string> KernelWriter::write(StringRef name) {
  int64_t largest = 1;
  for (Value v : op->getOperands())
    largest = std::max(largest, cast<ShapedType>(v.getType()).getNumElements());
  // 32-bit index math unless an index (or a block's first index) could pass 2^31.
  wideIndex = largest >= ((int64_t)1 << 31) - ((int64_t)1 << 24);
  LogicalResult body = plan.rowOp              ? writeRow()
                       : plan.tileDim >= 0 ? writeTiled()
                                           : writeElementwise();
  if (failed(body))
    return failure();
  std::string out;
  llvm::raw_string_ostream head(out);
  head << "__global__ void __launch_bounds__(" << plan.block << ") " << name << "(";
  llvm::ListSeparator comma;
  for (auto [i, in] : llvm::enumerate(op.getInputs()))
    head << comma << "const " << storageType(elementOf(in)) << " *__restrict__ in" << i;
  for (auto [o, outBuffer] : llvm::enumerate(op.getOutputs()))
    head << comma << storageType(elementOf(outBuffer)) << " *__restrict__ out" << o;
  head << ") {\n  sinter::generic::pdl_start();\n" << text << "}\n";
  return out;
}

} // namespace

FailureOr<std::string> emitGenericKernel(launch::GenericOp op, StringRef name) {
  std::string error;
  auto plan = planGenericKernel(op.getBody().front(), error);
  if (failed(plan))
    return op.emitError(error), failure();
  for (Value v : op->getOperands())
    if (storageType(cast<ShapedType>(v.getType()).getElementType()).empty())
      return op.emitError("a generated kernel cannot hold ")
                 << cast<ShapedType>(v.getType()).getElementType(),
             failure();
  return KernelWriter(op, *plan).write(name);
}

} // namespace sinter
