#include "sinter/Passes/GenericPlan.h"

#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace sinter {

bool isRowOp(Operation *op) {
  return isa<graph::ReduceOp, graph::ReduceMeanOp, graph::ArgReduceOp, graph::SoftmaxOp,
             graph::LogSoftmaxOp, graph::LayerNormalizationOp, graph::RMSNormalizationOp,
             graph::CumSumOp>(op);
}

bool isElementwiseOp(Operation *op) {
  return isa<graph::AddOp, graph::SubOp, graph::MulOp, graph::DivOp, graph::PowOp, graph::AndOp,
             graph::EqualOp, graph::LessOrEqualOp, graph::MaxOp, graph::SqrtOp, graph::ReciprocalOp,
             graph::NegOp, graph::SigmoidOp, graph::CosOp, graph::SinOp, graph::IsNaNOp,
             graph::CastOp, graph::WhereOp, graph::UnaryFnOp, graph::BinaryFnOp, graph::SiluMulOp>(
      op);
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
  else if (auto c = dyn_cast<graph::CumSumOp>(op))
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
    int64_t width =
        std::min<int64_t>(8, 16 / std::max<int64_t>(1, outType.getIntOrFloatBitWidth() / 8));
    if (broadcastsOnly && !outShape.empty() && outShape.back() % width == 0 && width > 1) {
      plan.vectorWidth = width;
      plan.elementsPerThread = width;
    }
    plan.block = kGenericBlock;
    plan.grid =
        std::max<int64_t>(1, llvm::divideCeil(total, kGenericBlock * plan.elementsPerThread));
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
