// A fused QKV projection whose columns interleave q, k and v per head (GPT-NeoX's
// query_key_value: head h holds [q_h | k_h | v_h]) re-laid out to q | k | v blocks (see
// Passes.td), so that the head split the attention kernels read in place applies to it.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cstring>

namespace sinter {
#define GEN_PASS_DEF_SINTERDEINTERLEAVEQKV
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

DenseElementsAttr constantOf(Value v) {
  auto c = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
  return dense && dense.getElementType().getIntOrFloatBitWidth() % 8 == 0 ? dense
                                                                          : DenseElementsAttr();
}

/// `data` ([rows, N] row-major; a splat stays one) with column c of the result taken from
/// column sourceOf(c) of `data`.
DenseElementsAttr permuteColumns(DenseElementsAttr data, int64_t rows, int64_t n,
                                 function_ref<int64_t(int64_t)> sourceOf) {
  if (data.isSplat())
    return data;
  size_t elem = data.getElementType().getIntOrFloatBitWidth() / 8;
  ArrayRef<char> raw = data.getRawData();
  std::vector<char> out(raw.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c)
      std::memcpy(&out[(r * n + c) * elem], &raw[(r * n + sourceOf(c)) * elem], elem);
  return DenseElementsAttr::getFromRawBuffer(cast<ShapedType>(data.getType()), out);
}

/// The interleaved head split: linear [B, S, N] -> reshape [B, S, H, 3 D] -> transpose
/// [0, 2, 1, 3] -> three last-axis slices [0, D), [D, 2 D), [2 D, 3 D) (q, k, v).
struct InterleavedSplit {
  LinearOp linear;
  ReshapeOp reshape;
  TransposeOp transpose;
  SliceOp parts[3];
  int64_t heads = 0, headDim = 0;
};

std::optional<InterleavedSplit> matchInterleaved(LinearOp linear) {
  InterleavedSplit s;
  s.linear = linear;
  auto type = linear.getType();
  if (type.getRank() != 3 || !linear->hasOneUse() || linear.getResidual() ||
      linear.getGateUpColumns() || linear.getActivation() || !constantOf(linear.getWeight()) ||
      (linear.getBias() && !constantOf(linear.getBias())))
    return std::nullopt;
  s.reshape = dyn_cast<ReshapeOp>(*linear->getUsers().begin());
  if (!s.reshape || !s.reshape->hasOneUse())
    return std::nullopt;
  auto heads = s.reshape.getType();
  if (heads.getRank() != 4 || heads.getDimSize(0) != type.getDimSize(0) ||
      heads.getDimSize(1) != type.getDimSize(1) || heads.getDimSize(3) % 3 != 0)
    return std::nullopt;
  s.heads = heads.getDimSize(2);
  s.headDim = heads.getDimSize(3) / 3;
  s.transpose = dyn_cast<TransposeOp>(*s.reshape->getUsers().begin());
  if (!s.transpose || s.transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3})
    return std::nullopt;
  int found = 0;
  for (Operation *user : s.transpose->getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    auto cols = slice ? lastAxisColumns(slice) : std::nullopt;
    if (!cols || cols->second - cols->first != s.headDim || cols->first % s.headDim != 0)
      return std::nullopt;
    SliceOp &part = s.parts[cols->first / s.headDim];
    if (part)
      return std::nullopt;
    part = slice;
    ++found;
  }
  if (found != 3)
    return std::nullopt;
  return s;
}

void deinterleave(InterleavedSplit &s) {
  LinearOp linear = s.linear;
  int64_t heads = s.heads, d = s.headDim, n = 3 * heads * d;
  // Column c of the q | k | v layout: part c / (H D), head (c % (H D)) / D, element c % D of
  // the interleaved head h's [q | k | v].
  auto sourceOf = [=](int64_t c) {
    int64_t part = c / (heads * d), h = (c % (heads * d)) / d, e = c % d;
    return h * 3 * d + part * d + e;
  };
  OpBuilder builder(linear);
  auto replaceConstant = [&](Value operand, int64_t rows) {
    DenseElementsAttr data = constantOf(operand);
    DenseElementsAttr permuted = permuteColumns(data, rows, n, sourceOf);
    return ConstantOp::create(builder, operand.getLoc(), permuted).getResult();
  };
  auto weightType = cast<RankedTensorType>(linear.getWeight().getType());
  linear.getWeightMutable().assign(replaceConstant(linear.getWeight(), weightType.getDimSize(0)));
  if (linear.getBias())
    linear.getBiasMutable().assign(replaceConstant(linear.getBias(), 1));

  // Each part: slice [part H D, (part + 1) H D) -> [B, S, H, D] -> [B, H, S, D].
  auto type = linear.getType();
  int64_t batch = type.getDimSize(0), seq = type.getDimSize(1);
  Type et = type.getElementType();
  builder.setInsertionPoint(s.transpose);
  auto shapeType = RankedTensorType::get({4}, builder.getI64Type());
  SmallVector<int64_t> headShape = {batch, seq, heads, d};
  Value shape = ConstantOp::create(builder, s.reshape.getLoc(),
                                   DenseElementsAttr::get(shapeType, ArrayRef(headShape)));
  for (int part = 0; part < 3; ++part) {
    Location loc = s.parts[part].getLoc();
    SmallVector<int64_t> starts = {0, 0, part * heads * d};
    SmallVector<int64_t> ends = {batch, seq, (part + 1) * heads * d};
    Value columns = SliceOp::create(builder, loc, RankedTensorType::get({batch, seq, heads * d}, et),
                                    linear.getResult(), builder.getDenseI64ArrayAttr(starts),
                                    builder.getDenseI64ArrayAttr(ends),
                                    builder.getDenseI64ArrayAttr({1, 1, 1}));
    Value split = ReshapeOp::create(builder, loc, RankedTensorType::get(headShape, et), columns,
                                    shape);
    Value transposed = TransposeOp::create(builder, loc, s.parts[part].getType(), split,
                                           builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
    s.parts[part].getResult().replaceAllUsesWith(transposed);
    s.parts[part].erase();
  }
  s.transpose.erase();
  s.reshape.erase();
}

struct DeinterleaveQkvPass : sinter::impl::SinterDeinterleaveQkvBase<DeinterleaveQkvPass> {
  void runOnOperation() override {
    SmallVector<InterleavedSplit> splits;
    getOperation().walk([&](LinearOp linear) {
      if (std::optional<InterleavedSplit> s = matchInterleaved(linear))
        splits.push_back(*s);
    });
    for (InterleavedSplit &s : splits)
      deinterleave(s);
  }
};

} // namespace
