// Import of ONNX RotaryEmbedding (opset 23) as the ops of its definition: the cos/sin rows
// of each position (gathered by position_ids, or given per token), the first
// rotary_embedding_dim entries of each head split in halves (or even/odd entries when
// interleaved) and rotated, the rest passed through.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// The last axis of `v` sliced [start, end) by `step`.
Value sliceLast(NodeImporter &n, Value v, int64_t start, int64_t end, int64_t step) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()), steps(type.getRank(), 1),
      shape(type.getShape());
  starts.back() = start;
  ends.back() = end;
  steps.back() = step;
  shape.back() = (end - start + step - 1) / step;
  return SliceOp::create(n.builder, n.loc, type.clone(shape), v,
                         n.builder.getDenseI64ArrayAttr(starts), n.builder.getDenseI64ArrayAttr(ends),
                         n.builder.getDenseI64ArrayAttr(steps));
}

Value concatLast(NodeImporter &n, ValueRange parts) {
  auto type = cast<RankedTensorType>(parts.front().getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = 0;
  for (Value p : parts)
    shape.back() += cast<RankedTensorType>(p.getType()).getShape().back();
  return ConcatOp::create(n.builder, n.loc, type.clone(shape), parts,
                          n.builder.getI64IntegerAttr(type.getRank() - 1));
}

LogicalResult importRotaryEmbedding(NodeImporter &n) {
  auto x = n.inputType(0), cosType = n.inputType(1), sinType = n.inputType(2);
  if (!x || !cosType || !sinType || failed(requireFloat(n, x, "input X")))
    return failure();
  if (cosType != sinType || cosType.getElementType() != x.getElementType())
    return n.fail("cos_cache and sin_cache must have one shape and X's element type");
  const bool interleaved = n.attrInt("interleaved", 0) != 0;
  const int64_t numHeads = n.attrInt("num_heads", 0);
  int64_t rotary = n.attrInt("rotary_embedding_dim", 0);
  // Work in X's own layout: [B, H, S, D] (4-D) or [B, S, H, D] (3-D X [B, S, H * D]).
  SmallVector<int64_t> shape4;
  int64_t batch = x.getDimSize(0), seq;
  if (x.getRank() == 4) {
    seq = x.getDimSize(2);
    shape4.assign(x.getShape().begin(), x.getShape().end());
  } else if (x.getRank() == 3) {
    seq = x.getDimSize(1);
    if (numHeads < 1 || x.getDimSize(2) % numHeads != 0)
      return n.fail("a 3-D X [" + shapeText(x.getShape()) +
                    "] needs attribute 'num_heads' dividing its hidden size");
    shape4 = {batch, seq, numHeads, x.getDimSize(2) / numHeads};
  } else {
    return n.fail("X must be [batch, heads, seq, head_size] or [batch, seq, hidden], got [" +
                  shapeText(x.getShape()) + "]");
  }
  const int64_t headSize = shape4[3];
  if (rotary == 0)
    rotary = headSize;
  if (rotary < 2 || rotary > headSize || rotary % 2 != 0)
    return n.fail("rotary_embedding_dim " + Twine(rotary) + " must be even and 2 to the head "
                  "size " + Twine(headSize));
  const int64_t half = rotary / 2;
  Type et = x.getElementType();
  // cos/sin [B, S, half] for every token.
  Value cos = *n.input(1), sin = *n.input(2);
  if (n.hasInput(3)) {
    auto positions = n.inputType(3);
    if (!positions)
      return failure();
    if (positions.getShape() != ArrayRef<int64_t>{batch, seq} ||
        !positions.getElementType().isInteger(64))
      return n.fail("position_ids must be int64 [" + Twine(batch) + ", " + Twine(seq) + "]");
    if (cosType.getRank() != 2 || cosType.getDimSize(1) != half)
      return n.fail("with position_ids, cos_cache must be [max_position, " + Twine(half) +
                    "], got [" + shapeText(cosType.getShape()) + "]");
    auto rowsType = n.tensorType({batch, seq, half}, et);
    auto gather = [&](Value table) -> Value {
      return GatherOp::create(n.builder, n.loc, rowsType, table, *n.input(3),
                              n.builder.getI64IntegerAttr(0));
    };
    cos = gather(cos);
    sin = gather(sin);
  } else if (cosType.getShape() != ArrayRef<int64_t>{batch, seq, half}) {
    return n.fail("without position_ids, cos_cache must be [" + Twine(batch) + ", " + Twine(seq) +
                  ", " + Twine(half) + "], got [" + shapeText(cosType.getShape()) + "]");
  }
  // [B, S, half] -> [B, 1, S, half] against [B, H, S, D]; [B, S, 1, half] against [B, S, H, D].
  SmallVector<int64_t> tableShape = x.getRank() == 4 ? SmallVector<int64_t>{batch, 1, seq, half}
                                                     : SmallVector<int64_t>{batch, seq, 1, half};
  cos = n.reshape(cos, tableShape);
  sin = n.reshape(sin, tableShape);

  Value x4 = x.getRank() == 4 ? *n.input(0) : n.reshape(*n.input(0), shape4);
  Value x1 = interleaved ? sliceLast(n, x4, 0, rotary, 2) : sliceLast(n, x4, 0, half, 1);
  Value x2 = interleaved ? sliceLast(n, x4, 1, rotary, 2) : sliceLast(n, x4, half, rotary, 1);
  auto partType = cast<RankedTensorType>(x1.getType());
  auto mul = [&](Value a, Value b) -> Value { return MulOp::create(n.builder, n.loc, partType, a, b); };
  Value real = SubOp::create(n.builder, n.loc, partType, mul(cos, x1), mul(sin, x2));
  Value imag = AddOp::create(n.builder, n.loc, partType, mul(sin, x1), mul(cos, x2));
  Value rotated;
  if (interleaved) {
    SmallVector<int64_t> pairShape(partType.getShape());
    pairShape.push_back(1);
    SmallVector<int64_t> pairsShape(partType.getShape());
    pairsShape.push_back(2);
    Value pairs = ConcatOp::create(n.builder, n.loc, partType.clone(pairsShape),
                                   ValueRange{n.reshape(real, pairShape), n.reshape(imag, pairShape)},
                                   n.builder.getI64IntegerAttr(pairsShape.size() - 1));
    SmallVector<int64_t> rotatedShape(shape4);
    rotatedShape.back() = rotary;
    rotated = n.reshape(pairs, rotatedShape);
  } else {
    rotated = concatLast(n, {real, imag});
  }
  Value y = rotary < headSize ? concatLast(n, {rotated, sliceLast(n, x4, rotary, headSize, 1)})
                              : rotated;
  return n.setOutput(0, x.getRank() == 4 ? y : n.reshape(y, x.getShape()));
}

} // namespace

void registerRotaryImports(OpImportRegistry &r) {
  r["RotaryEmbedding"] = {importRotaryEmbedding, 23};
}

} // namespace sinter::import
