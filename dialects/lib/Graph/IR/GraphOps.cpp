#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace sinter::graph;

#define GET_OP_CLASSES
#include "sinter/Dialect/Graph/IR/GraphOps.cpp.inc"

namespace sinter::graph {

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return failure();
    out[i] = l == 1 ? r : l;
  }
  return out;
}

FailureOr<SmallVector<int64_t>> matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  if (lhs.empty() || rhs.empty())
    return failure();
  SmallVector<int64_t> a(lhs), b(rhs);
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return failure();
  auto batch = broadcastShapes(ArrayRef(a).drop_back(2), ArrayRef(b).drop_back(2));
  if (failed(batch))
    return failure();
  SmallVector<int64_t> out = *batch;
  if (!lhsVector)
    out.push_back(a[a.size() - 2]);
  if (!rhsVector)
    out.push_back(b.back());
  return out;
}

} // namespace sinter::graph

static LogicalResult verifyShape(Operation *op, Type resultType, ArrayRef<int64_t> expected) {
  auto result = cast<RankedTensorType>(resultType);
  if (result.getShape() != expected) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "result shape [";
    llvm::interleave(result.getShape(), os, "x");
    os << "] does not match the inferred shape [";
    llvm::interleave(expected, os, "x");
    os << "]";
    return op->emitOpError(text);
  }
  return success();
}

static LogicalResult verifySameElementType(Operation *op, Type a, Type b, StringRef what) {
  if (getElementTypeOrSelf(a) != getElementTypeOrSelf(b))
    return op->emitOpError() << what << " element types differ: " << getElementTypeOrSelf(a)
                             << " vs " << getElementTypeOrSelf(b);
  return success();
}

static LogicalResult verifyBroadcastBinary(Operation *op, bool sameResultElementType) {
  auto lhs = cast<RankedTensorType>(op->getOperand(0).getType());
  auto rhs = cast<RankedTensorType>(op->getOperand(1).getType());
  if (failed(verifySameElementType(op, lhs, rhs, "operand")))
    return failure();
  if (sameResultElementType &&
      failed(verifySameElementType(op, lhs, op->getResult(0).getType(), "operand and result")))
    return failure();
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return op->emitOpError("operand shapes are not broadcast-compatible");
  return verifyShape(op, op->getResult(0).getType(), *shape);
}

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                           ValueRange, DictionaryAttr attributes,
                                           OpaqueProperties properties, RegionRange,
                                           SmallVectorImpl<Type> &types) {
  auto *props = properties.as<Properties *>();
  Attribute value = props ? props->value : attributes.get("value");
  auto elements = dyn_cast_or_null<ElementsAttr>(value);
  if (!elements)
    return failure();
  types.push_back(elements.getType());
  return success();
}

LogicalResult ConstantOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getValue().getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("value must be a statically shaped tensor");
  return success();
}

LogicalResult AddOp::verify() { return verifyBroadcastBinary(*this, true); }
LogicalResult SubOp::verify() { return verifyBroadcastBinary(*this, true); }
LogicalResult MulOp::verify() { return verifyBroadcastBinary(*this, true); }
LogicalResult DivOp::verify() { return verifyBroadcastBinary(*this, true); }
LogicalResult AndOp::verify() { return verifyBroadcastBinary(*this, true); }
LogicalResult EqualOp::verify() { return verifyBroadcastBinary(*this, false); }
LogicalResult LessOrEqualOp::verify() { return verifyBroadcastBinary(*this, false); }
LogicalResult MaxOp::verify() { return verifyBroadcastBinary(*this, true); }

LogicalResult PowOp::verify() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  if (failed(verifySameElementType(*this, lhs, getType(), "base and result")))
    return failure();
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return emitOpError("operand shapes are not broadcast-compatible");
  return verifyShape(*this, getType(), *shape);
}

static LogicalResult verifyUnary(Operation *op, bool sameElementType) {
  Type in = op->getOperand(0).getType(), out = op->getResult(0).getType();
  if (sameElementType && failed(verifySameElementType(op, in, out, "operand and result")))
    return failure();
  return verifyShape(op, out, cast<RankedTensorType>(in).getShape());
}

LogicalResult SqrtOp::verify() { return verifyUnary(*this, true); }
LogicalResult ReciprocalOp::verify() { return verifyUnary(*this, true); }
LogicalResult NegOp::verify() { return verifyUnary(*this, true); }
LogicalResult SigmoidOp::verify() { return verifyUnary(*this, true); }
LogicalResult CosOp::verify() { return verifyUnary(*this, true); }
LogicalResult SinOp::verify() { return verifyUnary(*this, true); }
LogicalResult IsNaNOp::verify() { return verifyUnary(*this, false); }
LogicalResult CastOp::verify() { return verifyUnary(*this, false); }

LogicalResult BitCastOp::verify() {
  Type in = getInput().getType().getElementType(), out = getType().getElementType();
  if (!in.isIntOrFloat() || !out.isIntOrFloat() || storedBits(in) != storedBits(out))
    return emitOpError("operand ")
           << in << " and result " << out << " must have the same width in bits";
  return verifyUnary(*this, false);
}

LogicalResult WhereOp::verify() {
  if (failed(verifySameElementType(*this, getX().getType(), getY().getType(), "x and y")) ||
      failed(verifySameElementType(*this, getX().getType(), getType(), "x and result")))
    return failure();
  auto xy = broadcastShapes(getX().getType().getShape(), getY().getType().getShape());
  if (failed(xy))
    return emitOpError("operand shapes are not broadcast-compatible");
  auto all = broadcastShapes(getCondition().getType().getShape(), *xy);
  if (failed(all))
    return emitOpError("operand shapes are not broadcast-compatible");
  return verifyShape(*this, getType(), *all);
}

LogicalResult MatMulOp::verify() {
  if (failed(verifySameElementType(*this, getLhs().getType(), getRhs().getType(), "operand")) ||
      failed(verifySameElementType(*this, getLhs().getType(), getType(), "operand and result")))
    return failure();
  auto shape = matmulShape(getLhs().getType().getShape(), getRhs().getType().getShape());
  if (failed(shape))
    return emitOpError("contraction dimensions do not match");
  return verifyShape(*this, getType(), *shape);
}

LogicalResult GemmOp::verify() {
  auto a = getA().getType(), b = getB().getType();
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOpError("A and B must be 2-D");
  int64_t m = getTransA() ? a.getDimSize(1) : a.getDimSize(0);
  int64_t ka = getTransA() ? a.getDimSize(0) : a.getDimSize(1);
  int64_t kb = getTransB() ? b.getDimSize(1) : b.getDimSize(0);
  int64_t n = getTransB() ? b.getDimSize(0) : b.getDimSize(1);
  if (ka != kb)
    return emitOpError("contraction dimensions do not match: ") << ka << " vs " << kb;
  if (getC() && failed(broadcastShapes({m, n}, getC().getType().getShape())))
    return emitOpError("C is not broadcastable to [") << m << "x" << n << "]";
  return verifyShape(*this, getType(), {m, n});
}

LogicalResult TransposeOp::verify() {
  auto in = getInput().getType();
  ArrayRef<int64_t> perm = getPerm();
  if ((int64_t)perm.size() != in.getRank())
    return emitOpError("perm has ") << perm.size() << " entries for a rank-" << in.getRank()
                                    << " input";
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError("perm is not a permutation");
    seen[p] = true;
    shape.push_back(in.getDimSize(p));
  }
  return verifyShape(*this, getType(), shape);
}

LogicalResult ReshapeOp::verify() {
  if (getInput().getType().getNumElements() != getType().getNumElements())
    return emitOpError("element count changes from ")
           << getInput().getType().getNumElements() << " to " << getType().getNumElements();
  return verifySameElementType(*this, getInput().getType(), getType(), "operand and result");
}

bool LinearOp::normScalesInF32() {
  if (!getNormWeight())
    return false;
  Type in = getInput().getType().getElementType();
  return (in.isBF16() || in.isF16()) &&
         cast<RankedTensorType>(getNormWeight().getType()).getElementType().isF32();
}

LogicalResult LinearOp::verify() {
  auto in = getInput().getType(), w = getWeight().getType();
  if (in.getRank() < 1 || w.getRank() != 2)
    return emitOpError("weight must be 2-D [K, N] and the input at least 1-D");
  if (in.getShape().back() != w.getDimSize(0))
    return emitOpError("input has K = ") << in.getShape().back() << " but the weight has "
                                         << w.getDimSize(0) << " rows";
  if (getBias() && (getBias().getType().getRank() != 1 ||
                    getBias().getType().getDimSize(0) != w.getDimSize(1)))
    return emitOpError("bias must be [") << w.getDimSize(1) << "]";
  if (getNormWeight()) {
    auto nw = cast<RankedTensorType>(getNormWeight().getType());
    if (nw.getRank() != 1 || nw.getDimSize(0) != in.getShape().back())
      return emitOpError("norm_weight must be [") << in.getShape().back() << "]";
    if (!getNormEpsilon())
      return emitOpError("norm_weight needs norm_epsilon");
    if (nw.getElementType() != in.getElementType() && !normScalesInF32())
      return emitOpError("norm_weight must be of the input's type or f32 for a 16-bit input, "
                         "got ")
             << nw.getElementType() << " for " << in.getElementType();
    if (Value shift = getNormBias(); shift && shift.getType() != nw)
      return emitOpError("norm_bias must have norm_weight's type ") << nw << ", got "
                                                                   << shift.getType();
  } else if (getNormEpsilon() || getNormBias()) {
    return emitOpError("norm_epsilon or norm_bias without norm_weight");
  }
  if (getResidual() && getResidual().getType() != getType())
    return emitOpError("residual type ") << getResidual().getType()
                                         << " differs from the result type " << getType();
  SmallVector<int64_t> shape(in.getShape());
  shape.back() = w.getDimSize(1);
  if (std::optional<ArrayRef<int64_t>> pairs = getGateUpColumns()) {
    const int64_t n = w.getDimSize(1), half = n / 2;
    if (pairs->size() != 2 || n % 2 != 0)
      return emitOpError("gate_up_columns must be [gate start, up start] of an even N, got N = ")
             << n;
    for (int64_t start : *pairs)
      if (start < 0 || start + half > n)
        return emitOpError("gate_up_columns column ") << start << " + N/2 = " << start + half
                                                      << " is past N = " << n;
    if (getBias() || getResidual())
      return emitOpError("gate_up_columns takes no bias or residual");
    shape.back() = half;
  }
  if (getGateActivation()) {
    if (!getGateUpColumns())
      return emitOpError("gate_activation without gate_up_columns");
    if (*getGateActivation() != "silu" && *getGateActivation() != "gelu_tanh")
      return emitOpError("gate_activation must be silu or gelu_tanh, got '")
             << *getGateActivation() << "'";
  }
  if (getActivation()) {
    if (*getActivation() != "gelu_tanh" && *getActivation() != "gelu")
      return emitOpError("activation must be gelu_tanh or gelu, got '") << *getActivation()
                                                                         << "'";
    if (getGateUpColumns() || getResidual())
      return emitOpError("activation takes no gate_up_columns or residual");
  }
  return verifyShape(*this, getType(), shape);
}

LogicalResult RopeOp::verify() {
  auto in = getInput().getType();
  if (in.getRank() != 4 || in.getDimSize(3) % 2 != 0)
    return emitOpError("input must be [B, H, S, D] with an even D");
  auto cosType = cast<RankedTensorType>(getCos().getType());
  int64_t rotary = cosType.getRank() ? cosType.getShape().back() : 0;
  if (rotary < 2 || rotary % 2 != 0 || rotary > in.getDimSize(3))
    return emitOpError("cos/sin must rotate an even number of columns up to D, got ")
           << cosType;
  SmallVector<int64_t> rotated(in.getShape());
  rotated.back() = rotary;
  for (Value table : {getCos(), getSin()}) {
    auto t = cast<RankedTensorType>(table.getType());
    auto shape = broadcastShapes(rotated, t.getShape());
    if (failed(shape) || ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(rotated))
      return emitOpError("cos/sin ") << t << " do not broadcast to the input " << in
                                     << " (its first " << rotary << " columns)";
  }
  if (getType() != in)
    return emitOpError("result type must equal the input type");
  return success();
}

int64_t SplitQkvHeadsOp::columnOffset(unsigned index) {
  int64_t q = getQ().getType().getDimSize(1) * getQ().getType().getDimSize(3);
  int64_t kv = getK().getType().getDimSize(1) * getK().getType().getDimSize(3);
  return index == 0 ? 0 : index == 1 ? q : q + kv;
}

LogicalResult SplitQkvHeadsOp::verify() {
  auto qkv = getQkv().getType();
  auto q = getQ().getType(), k = getK().getType(), v = getV().getType();
  if (qkv.getRank() != 3)
    return emitOpError("qkv must be [B, S, columns]");
  if (q.getRank() != 4 || k != v || k.getRank() != 4)
    return emitOpError("q must be [B, Hq, S, D] and k, v one [B, Hkv, S, D] type");
  for (RankedTensorType head : {q, k})
    if (head.getDimSize(0) != qkv.getDimSize(0) || head.getDimSize(2) != qkv.getDimSize(1) ||
        head.getDimSize(3) != q.getDimSize(3) || head.getElementType() != qkv.getElementType())
      return emitOpError("heads ") << head << " do not split " << qkv;
  int64_t columns = (q.getDimSize(1) + 2 * k.getDimSize(1)) * q.getDimSize(3);
  if (qkv.getDimSize(2) != columns)
    return emitOpError("qkv has ") << qkv.getDimSize(2) << " columns; q, k and v take " << columns;
  if (!getCos() != !getSin())
    return emitOpError("takes both rope tables or neither");
  if (!getQNorm() != !getKNorm() || !getQNorm() != !getNormEpsilon())
    return emitOpError("takes both norm weights and an epsilon, or none");
  if (getNormInAttention() && (!getQNorm() || !getCos()))
    return emitOpError("norm_in_attention needs q/k norms and rope tables");
  if (getQNorm()) {
    for (auto [weight, head] : {std::pair(getQNorm(), q), std::pair(getKNorm(), k)}) {
      auto w = cast<RankedTensorType>(weight.getType());
      int64_t d = head.getDimSize(3);
      if (w.getRank() != 1 ||
          (w.getElementType() != qkv.getElementType() && !w.getElementType().isF32()) ||
          (w.getDimSize(0) != d && w.getDimSize(0) != head.getDimSize(1) * d))
        return emitOpError("norm weight ")
               << w << " must have D or heads * D elements of the heads' type or f32 for "
               << head;
    }
    if (getElementTypeOrSelf(getQNorm()) != getElementTypeOrSelf(getKNorm()))
      return emitOpError("q and k norm weights must have one element type");
  }
  if (!getCos())
    return success();
  if (q.getDimSize(3) % 2 != 0)
    return emitOpError("rotated heads need an even head size");
  // Tables of R < D columns rotate the first R of each head (partial rotary).
  int64_t rotary = cast<RankedTensorType>(getCos().getType()).getShape().back();
  if (rotary < 2 || rotary % 2 != 0 || rotary > q.getDimSize(3))
    return emitOpError("cos/sin must rotate an even number of columns up to the head size");
  for (Value table : {getCos(), getSin()}) {
    auto t = cast<RankedTensorType>(table.getType());
    for (RankedTensorType head : {q, k}) {
      SmallVector<int64_t> rotated(head.getShape());
      rotated.back() = rotary;
      auto shape = broadcastShapes(rotated, t.getShape());
      if (failed(shape) || ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(rotated))
        return emitOpError("cos/sin ") << t << " do not broadcast to " << head;
    }
  }
  return success();
}

LogicalResult SiluMulOp::verify() {
  if (getGate().getType() != getUp().getType() || getType() != getGate().getType())
    return emitOpError("gate, up and result must have one type");
  return success();
}

LogicalResult CacheWriteOp::verify() {
  auto state = cast<RankedTensorType>(getState().getType());
  auto rows = cast<RankedTensorType>(getRows().getType());
  auto positions = cast<RankedTensorType>(getPositions().getType());
  int64_t axis = getAxis();
  if (axis < 0 || axis >= state.getRank())
    return emitOpError("axis ") << axis << " is outside the state's rank " << state.getRank();
  if (positions.getRank() != 1)
    return emitOpError("positions must be 1-D");
  if (rows.getRank() != state.getRank() || rows.getElementType() != state.getElementType())
    return emitOpError("rows must have the state's rank and element type");
  for (int64_t d = 0; d < state.getRank(); ++d) {
    int64_t expect = d == axis ? positions.getDimSize(0) : state.getDimSize(d);
    if (rows.getDimSize(d) != expect)
      return emitOpError("rows dimension ") << d << " is " << rows.getDimSize(d) << ", expected "
                                            << expect;
  }
  if (getType() != state)
    return emitOpError("result must have the state's type");
  return success();
}

LogicalResult SampleTokensOp::verify() {
  auto logits = cast<RankedTensorType>(getLogits().getType());
  auto ids = cast<RankedTensorType>(getInputIds().getType());
  auto next = cast<RankedTensorType>(getNextToken().getType());
  if (logits.getRank() != 3 || ids.getRank() != 2)
    return emitOpError("logits must be [batch, seq, vocab] and input_ids [batch, n]");
  if (!ids.getElementType().isInteger(64) || !next.getElementType().isInteger(64))
    return emitOpError("input_ids and the result must be i64");
  int64_t batch = logits.getDimSize(0);
  if (ids.getDimSize(0) != batch)
    return emitOpError("input_ids has batch ") << ids.getDimSize(0) << ", logits " << batch;
  if (next.getRank() != 2 || next.getDimSize(0) != batch || next.getDimSize(1) != 1)
    return emitOpError("the result must be [") << batch << ", 1]";
  return success();
}

/// An attention result of `heads` [B, H, S, D] shape, or with merged_heads any shape holding
/// the same elements (its [B, S, H, D] transpose, reshaped).
static LogicalResult verifyAttentionResult(Operation *op, bool mergedHeads, Type resultType,
                                           ArrayRef<int64_t> heads) {
  if (!mergedHeads)
    return verifyShape(op, resultType, heads);
  auto result = cast<RankedTensorType>(resultType);
  int64_t count = 1;
  for (int64_t d : heads)
    count *= d;
  if (result.getNumElements() != count)
    return op->emitOpError("merged_heads result ")
           << result << " does not hold the " << count << " elements of the heads";
  return success();
}

/// The fused attentions' soft-cap: 0 (none) or a positive, finite cap.
static LogicalResult verifySoftcap(Operation *op, APFloat softcap) {
  float cap = softcap.convertToFloat();
  if (cap >= 0.0f && !std::isinf(cap))
    return success();
  return op->emitOpError("softcap must be finite and non-negative (0: none), got ") << cap;
}

LogicalResult DecodeAttentionOp::verify() {
  auto q = getQ().getType(), k = getK().getType(), v = getV().getType();
  if (q.getRank() != 4 || k.getRank() != 4 || k != v)
    return emitOpError("q must be [B, Hq, 1, D] and k, v one [B, Hkv, L, D] type");
  if (q.getDimSize(2) != 1)
    return emitOpError("one query per head is supported, got ") << q.getDimSize(2);
  if (q.getDimSize(0) != k.getDimSize(0) || q.getDimSize(3) != k.getDimSize(3) ||
      q.getElementType() != k.getElementType())
    return emitOpError("q and k/v differ in batch, head size or element type");
  if (k.getDimSize(1) == 0 || q.getDimSize(1) % k.getDimSize(1) != 0)
    return emitOpError("query heads must be a multiple of kv heads");
  auto position = cast<RankedTensorType>(getPosition().getType());
  if (position.getShape() != ArrayRef<int64_t>{1})
    return emitOpError("position must be a [1] tensor");
  if (auto mask = getKeyMask()) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (!isa<IntegerType>(m.getElementType()) || m.getRank() != 2 ||
        m.getDimSize(0) != q.getDimSize(0) || m.getDimSize(1) != k.getDimSize(2))
      return emitOpError("key_mask must be an integer [B, L] tensor");
  }
  if (failed(verifySoftcap(*this, getSoftcap())))
    return failure();
  return verifyAttentionResult(*this, getMergedHeads(), getType(), q.getShape());
}

LogicalResult FusedAttentionOp::verify() {
  auto q = getQ().getType(), k = getK().getType(), v = getV().getType();
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return emitOpError("q, k and v must be [B, heads, S, D]");
  if (k != v)
    return emitOpError("k and v must have one type");
  if (q.getDimSize(0) != k.getDimSize(0) || q.getDimSize(3) != k.getDimSize(3) ||
      q.getElementType() != k.getElementType())
    return emitOpError("q and k/v differ in batch, head size or element type");
  if (k.getDimSize(1) == 0 || q.getDimSize(1) % k.getDimSize(1) != 0)
    return emitOpError("query heads (") << q.getDimSize(1)
                                        << ") must be a multiple of kv heads (" << k.getDimSize(1) << ")";
  if (auto mask = getKeyMask()) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (m.getRank() != 2 || m.getDimSize(0) != q.getDimSize(0) || m.getDimSize(1) != k.getDimSize(2))
      return emitOpError("key_mask must be [B, S_kv]");
  }
  if (failed(verifySoftcap(*this, getSoftcap())))
    return failure();
  SmallVector<int64_t> shape(q.getShape());
  shape[3] = v.getDimSize(3);
  return verifyAttentionResult(*this, getMergedHeads(), getType(), shape);
}

std::optional<std::pair<int64_t, int64_t>> sinter::graph::lastAxisColumns(SliceOp slice) {
  auto in = cast<RankedTensorType>(slice.getInput().getType());
  int64_t rank = in.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    if (slice.getSteps()[d] != 1)
      return std::nullopt;
    if (d < rank - 1 && (slice.getStarts()[d] != 0 || slice.getEnds()[d] != in.getDimSize(d)))
      return std::nullopt;
  }
  return std::make_pair(slice.getStarts()[rank - 1], slice.getEnds()[rank - 1]);
}
