#include "sinter/Passes/GenericPlan.h"

#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace sinter {

bool isRowOp(Operation *op) {
  return isa<graph::ReduceOp, graph::ReduceMeanOp, graph::ArgReduceOp, graph::SoftmaxOp,
             graph::LogSoftmaxOp, graph::LayerNormalizationOp, graph::RMSNormalizationOp,
             graph::CumulativeOp>(op);
}

bool isElementwiseOp(Operation *op) {
  return isa<graph::AddOp, graph::SubOp, graph::MulOp, graph::DivOp, graph::PowOp, graph::AndOp,
             graph::EqualOp, graph::LessOrEqualOp, graph::MaxOp, graph::SqrtOp, graph::ReciprocalOp,
             graph::NegOp, graph::SigmoidOp, graph::CosOp, graph::SinOp, graph::IsNaNOp,
             graph::CastOp, graph::BitCastOp, graph::WhereOp, graph::UnaryFnOp, graph::BinaryFnOp,
             graph::SiluMulOp>(op);
}

bool isDataMovementOp(Operation *op) {
  return isa<graph::ConstantOp, graph::TransposeOp, graph::ReshapeOp, graph::SliceOp,
             graph::ConcatOp, graph::UnsqueezeOp, graph::SqueezeOp, graph::ExpandOp,
             graph::GatherOp, graph::GatherNDOp, graph::GatherElementsOp, graph::PadOp,
             graph::TriluOp, graph::RangeOp, graph::ConstantOfShapeOp, graph::RopeOp,
             graph::ScatterNDOp>(op);
}

bool isInlinedConstant(Value v) {
  auto c = v.getDefiningOp<graph::ConstantOp>();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
  return dense && (dense.isSplat() || dense.getNumElements() <= 16);
}

namespace {

SmallVector<int64_t> shapeOf(Value v) {
  return SmallVector<int64_t>(cast<ShapedType>(v.getType()).getShape());
}

SmallVector<int64_t> reducedDimsOf(Operation *op, int64_t rank) {
  SmallVector<int64_t> dims;
  if (auto r = dyn_cast<graph::ReduceOp>(op))
    dims.assign(r.getAxes().begin(), r.getAxes().end());
  else if (auto r = dyn_cast<graph::ReduceMeanOp>(op))
    dims.assign(r.getAxes().begin(), r.getAxes().end());
  else if (auto r = dyn_cast<graph::ArgReduceOp>(op))
    dims.push_back(r.getAxis());
  else if (auto s = dyn_cast<graph::SoftmaxOp>(op))
    dims.push_back(s.getAxis());
  else if (auto s = dyn_cast<graph::LogSoftmaxOp>(op))
    dims.push_back(s.getAxis());
  else if (auto c = dyn_cast<graph::CumulativeOp>(op))
    dims.push_back(c.getAxis());
  else {
    int64_t axis = isa<graph::LayerNormalizationOp>(op)
                       ? cast<graph::LayerNormalizationOp>(op).getAxis()
                       : cast<graph::RMSNormalizationOp>(op).getAxis();
    for (int64_t d = axis; d < rank; ++d)
      dims.push_back(d);
  }
  return dims;
}

/// For each value of `body` that is only read at an index made of the output index's entries,
/// the output dimension each of its dimensions is indexed by (-1: an extent-1 dimension). The
/// emitter's index rewriting, followed backwards from the yield: elementwise operands and
/// expands broadcast (numpy rules), a transpose permutes. Values read any other way (through a
/// reshape, slice or gather) or at two different indices are absent.
DenseMap<Value, SmallVector<int64_t>> outputDimMaps(Block &body, int64_t outputRank) {
  DenseMap<Value, SmallVector<int64_t>> maps;
  DenseSet<Value> unknown;
  auto forget = [&](Value v) {
    maps.erase(v);
    unknown.insert(v);
  };
  auto assign = [&](Value v, const SmallVector<int64_t> &map) {
    if (unknown.contains(v))
      return;
    auto [it, inserted] = maps.try_emplace(v, map);
    if (!inserted && it->second != map)
      forget(v);
  };
  SmallVector<int64_t> identity = llvm::to_vector(llvm::seq<int64_t>(0, outputRank));
  for (Value v : body.getTerminator()->getOperands())
    assign(v, identity);
  // Users come after their operands, so a result's map is final when its op is reached.
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    auto result = op.getNumResults() == 1 ? maps.find(op.getResult(0)) : maps.end();
    if (result == maps.end()) {
      for (Value operand : op.getOperands())
        forget(operand);
      continue;
    }
    SmallVector<int64_t> resultMap = result->second;
    if (isElementwiseOp(&op) || isa<graph::ExpandOp>(op)) {
      for (Value operand : op.getOperands()) {
        SmallVector<int64_t> shape = shapeOf(operand);
        if (shape.size() > resultMap.size()) {
          forget(operand);
          continue;
        }
        size_t offset = resultMap.size() - shape.size();
        SmallVector<int64_t> map;
        for (auto [d, extent] : llvm::enumerate(shape))
          map.push_back(extent == 1 ? -1 : resultMap[d + offset]);
        assign(operand, map);
      }
    } else if (auto transpose = dyn_cast<graph::TransposeOp>(op)) {
      SmallVector<int64_t> map(resultMap.size(), -1);
      for (auto [i, p] : llvm::enumerate(transpose.getPerm()))
        map[p] = resultMap[i];
      assign(transpose.getInput(), map);
    } else {
      for (Value operand : op.getOperands())
        forget(operand);
    }
  }
  return maps;
}

/// Tiles `plan` (an elementwise plan over `outShape`) when inputs are read across the output's
/// innermost dimension: the output dimension most input bytes are contiguous along, if both it
/// and the innermost are long enough for tiles to pay.
void planTransposeTiles(Block &body, ArrayRef<int64_t> outShape, GenericPlan &plan) {
  int64_t rank = outShape.size(), last = rank - 1;
  if (rank < 2 || outShape[last] < kTransposeTile / 2)
    return;
  auto maps = outputDimMaps(body, rank);
  SmallVector<int64_t> bytesAlong(rank, 0);
  for (BlockArgument arg : body.getArguments()) {
    auto it = maps.find(arg);
    if (arg.use_empty() || it == maps.end() || it->second.empty())
      continue;
    int64_t along = it->second.back();
    auto type = cast<ShapedType>(arg.getType());
    if (along >= 0 && along != last)
      bytesAlong[along] += type.getNumElements() * storageBytes(type.getElementType());
  }
  int64_t tileDim = std::max_element(bytesAlong.begin(), bytesAlong.end()) - bytesAlong.begin();
  if (bytesAlong[tileDim] == 0 || outShape[tileDim] < kTransposeTile / 2)
    return;
  plan.tileDim = tileDim;
  for (BlockArgument arg : body.getArguments()) {
    auto it = maps.find(arg);
    if (plan.stagedInputs.size() < kMaxStagedInputs && !arg.use_empty() && it != maps.end() &&
        !it->second.empty() && it->second.back() == tileDim)
      plan.stagedInputs.push_back({arg.getArgNumber(), it->second});
  }
  auto byteWidth = [](Value v) {
    return storageBytes(cast<ShapedType>(v.getType()).getElementType());
  };
  int64_t widest = 1;
  for (const GenericPlan::StagedInput &staged : plan.stagedInputs)
    widest = std::max(widest, byteWidth(body.getArgument(staged.argument)));
  for (Value v : body.getTerminator()->getOperands())
    widest = std::max(widest, byteWidth(v));
  plan.tileSide = widest <= 2 ? 2 * kTransposeTile : kTransposeTile;
  plan.tileVector = widest <= 2 ? 2 : 1;
  int64_t tiles = llvm::divideCeil(outShape[tileDim], plan.tileSide) *
                  llvm::divideCeil(outShape[last], plan.tileSide);
  for (auto [d, extent] : llvm::enumerate(outShape))
    if ((int64_t)d != tileDim && (int64_t)d != last)
      tiles *= extent;
  // A block's threads cover kGenericBlock * tileVector / tileSide rows of the tile per pass.
  plan.block = kGenericBlock;
  plan.elementsPerThread = plan.tileSide * plan.tileSide / kGenericBlock;
  plan.grid = std::max<int64_t>(1, tiles);
}

} // namespace

FailureOr<GenericPlan> planGenericKernel(Block &body, std::string &error) {
  GenericPlan plan;
  for (Operation &op : body.without_terminator()) {
    if (!isGenericOp(&op)) {
      error = "a generated kernel cannot compute '" + op.getName().getStringRef().str() + "'";
      return failure();
    }
    if (!isRowOp(&op))
      continue;
    if (plan.rowOp) {
      error = "a generated kernel holds at most one row operation";
      return failure();
    }
    plan.rowOp = &op;
  }
  Operation *terminator = body.getTerminator();
  if (!terminator || terminator->getNumOperands() == 0) {
    error = "a generated kernel must yield a value";
    return failure();
  }
  // Every output is computed at the same indices: the first output's shape.
  SmallVector<int64_t> outShape = shapeOf(terminator->getOperand(0));
  for (Value v : terminator->getOperands())
    if (shapeOf(v) != outShape) {
      error = "the outputs of a generated kernel must have one shape";
      return failure();
    }
  if (!plan.rowOp) {
    plan.iterationShape = outShape;
    int64_t total = 1;
    for (int64_t d : outShape)
      total *= d;
    // Four elements a thread once there are enough to fill the device several times over.
    plan.elementsPerThread = total >= (int64_t)1 << 22 ? 4 : 1;
    // 16-byte vectors of the output type along the innermost dimension, when every input is
    // read through broadcasts only (the emitter checks the pointers' alignment at run time).
    bool broadcastsOnly = llvm::all_of(body.without_terminator(), [](Operation &op) {
      return isElementwiseOp(&op) || isa<graph::ConstantOp, graph::ExpandOp>(op);
    });
    Type outType = cast<ShapedType>(terminator->getOperand(0).getType()).getElementType();
    int64_t width = std::min<int64_t>(8, 16 / storageBytes(outType));
    if (broadcastsOnly && !outShape.empty() && outShape.back() % width == 0 && width > 1) {
      plan.vectorWidth = width;
      plan.elementsPerThread = width;
    }
    plan.block = kGenericBlock;
    plan.grid =
        std::max<int64_t>(1, llvm::divideCeil(total, kGenericBlock * plan.elementsPerThread));
    if (plan.vectorWidth == 1 && total > 0)
      planTransposeTiles(body, outShape, plan);
    return plan;
  }
  Operation *row = plan.rowOp;
  plan.rowInputShape = shapeOf(row->getOperand(0));
  plan.reducedDims = reducedDimsOf(row, plan.rowInputShape.size());
  plan.reducesShape = isa<graph::ReduceOp, graph::ReduceMeanOp, graph::ArgReduceOp>(row);
  if (shapeOf(row->getResult(0)) != outShape) {
    error = "the outputs of a generated row kernel must have the row operation's shape";
    return failure();
  }
  plan.rowLength = 1;
  plan.rows = 1;
  for (auto [d, extent] : llvm::enumerate(plan.rowInputShape))
    (llvm::is_contained(plan.reducedDims, (int64_t)d) ? plan.rowLength : plan.rows) *= extent;
  if (plan.rows == 0 || plan.rowLength == 0) {
    error = "a generated row kernel needs non-empty rows";
    return failure();
  }
  // About eight elements a thread (kept in registers), 32 to 1024 threads a row; short rows
  // share a block.
  int64_t wanted = llvm::divideCeil(plan.rowLength, 8);
  plan.threadsPerRow = std::clamp<int64_t>(llvm::PowerOf2Ceil(wanted), 32, 1024);
  plan.rowsPerBlock = plan.threadsPerRow < kGenericBlock ? kGenericBlock / plan.threadsPerRow : 1;
  plan.block = plan.threadsPerRow * plan.rowsPerBlock;
  plan.grid = llvm::divideCeil(plan.rows, plan.rowsPerBlock);
  return plan;
}

} // namespace sinter
