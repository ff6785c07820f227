#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <algorithm>

namespace sinter {
#define GEN_PASS_DEF_SINTERMERGEPARALLELLINEARS
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// The constant bias of `linear` (null without one).
DenseElementsAttr constantBias(LinearOp linear) {
  auto c = linear.getBias() ? linear.getBias().getDefiningOp<ConstantOp>() : ConstantOp();
  return c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
}

/// The weight of a linear the merge takes: a constant weight, a constant bias or none, no
/// residual or normalization.
DenseElementsAttr plainWeight(LinearOp linear) {
  DenseElementsAttr bias = constantBias(linear);
  if ((linear.getBias() && (!bias || bias.getElementType() != linear.getType().getElementType())) ||
      linear.getResidual() || linear.getNormWeight())
    return {};
  auto c = linear.getWeight().getDefiningOp<ConstantOp>();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
  return dense && dense.getElementType().getIntOrFloatBitWidth() % 8 == 0 ? dense
                                                                          : DenseElementsAttr();
}

/// Whether `linear` feeds an activation its own launch applies as an epilogue
/// (sinter-fuse-linear-activation): the MLP's first projection of a parallel block (Phi's and
/// GPT-J's fc_in beside q, k and v on one normalized input). Merged, its columns would share
/// the projection's one epilogue (the QKV's RoPE) and the activation would be a launch of its
/// own, and the head split the attention kernels read would not be the whole projection.
/// A GeGLU gate (the activation times a sibling's product, Gemma's) is merged with its up
/// projection instead: sinter-fuse-linear-swiglu takes the pair.
bool feedsEpilogueActivation(LinearOp linear) {
  auto act = dyn_cast_or_null<UnaryFnOp>(singleUser(linear.getResult()));
  if (!act || (act.getFn() != "gelu" && act.getFn() != "gelu_tanh"))
    return false;
  for (Operation *user : act->getUsers())
    if (auto mul = dyn_cast<MulOp>(user))
      for (Value operand : mul->getOperands())
        if (auto sibling = operand.getDefiningOp<LinearOp>();
            sibling && sibling != linear && sibling.getInput() == linear.getInput())
          return false;
  return true;
}

/// Concatenates [K, N_i] row-major matrices along N.
DenseElementsAttr concatColumns(ArrayRef<DenseElementsAttr> parts, RankedTensorType type) {
  int64_t k = type.getDimSize(0), total = type.getDimSize(1);
  size_t elem = type.getElementTypeBitWidth() / 8;
  std::vector<char> out(k * total * elem);
  int64_t col = 0;
  for (DenseElementsAttr part : parts) {
    int64_t n = cast<ShapedType>(part.getType()).getDimSize(1);
    ArrayRef<char> raw = part.getRawData();
    for (int64_t r = 0; r < k; ++r) {
      char *dst = &out[(r * total + col) * elem];
      if (part.isSplat()) // one stored element stands for all
        for (int64_t c = 0; c < n; ++c)
          std::memcpy(dst + c * elem, raw.data(), elem);
      else
        std::memcpy(dst, &raw[r * n * elem], n * elem);
    }
    col += n;
  }
  return DenseElementsAttr::getFromRawBuffer(type, out);
}

struct MergeParallelLinearsPass
    : sinter::impl::SinterMergeParallelLinearsBase<MergeParallelLinearsPass> {
  void runOnOperation() override {
    SmallVector<Value> inputs;
    getOperation().walk([&](LinearOp linear) {
      if (!llvm::is_contained(inputs, linear.getInput()))
        inputs.push_back(linear.getInput());
    });
    // Index-based: merging replaces the results of the merged siblings, and a LoRA down
    // projection merged with its base linear is itself the input of the up projection.
    for (size_t i = 0; i < inputs.size(); ++i)
      mergeSiblings(inputs[i], inputs);
  }

  /// Merges the plain linears reading `input`; entries of `pending` that were results of
  /// merged siblings are redirected to the slices that replace them.
  void mergeSiblings(Value input, SmallVectorImpl<Value> &pending) {
    SmallVector<LinearOp> group;
    for (Operation *user : input.getUsers())
      if (auto linear = dyn_cast<LinearOp>(user);
          linear && linear.getInput() == input && plainWeight(linear) &&
          !feedsEpilogueActivation(linear) &&
          linear.getType().getElementType() == cast<ShapedType>(input.getType()).getElementType())
        group.push_back(linear);
    if (group.size() < 2)
      return;
    // The merged op goes where the earliest sibling was, so every user stays dominated.
    llvm::sort(group, [](LinearOp a, LinearOp b) { return a->isBeforeInBlock(b); });
    for (LinearOp l : group)
      if (l->getBlock() != group.front()->getBlock())
        return;
    SmallVector<DenseElementsAttr> weights;
    SmallVector<Location> locs, weightLocs;
    int64_t total = 0;
    for (LinearOp l : group) {
      weights.push_back(plainWeight(l));
      total += l.getWeight().getType().getDimSize(1);
      locs.push_back(l.getLoc());
      weightLocs.push_back(l.getWeight().getLoc());
    }
    auto first = cast<RankedTensorType>(weights.front().getType());
    auto weightType = RankedTensorType::get({first.getDimSize(0), total}, first.getElementType());
    OpBuilder builder(group.front());
    Location loc = builder.getFusedLoc(locs);
    // The merged weight keeps where its parts came from (sinter inspect names them).
    Value weight = ConstantOp::create(builder, builder.getFusedLoc(weightLocs),
                                      concatColumns(weights, weightType));
    auto outType = group.front().getType();
    SmallVector<int64_t> shape(outType.getShape());
    shape.back() = total;
    // Biases (Qwen2's q, k and v) side by side like the weights; a sibling without one adds
    // zeros.
    Value bias;
    if (llvm::any_of(group, [](LinearOp l) { return bool(l.getBias()); })) {
      SmallVector<DenseElementsAttr> biases;
      SmallVector<Location> biasLocs;
      Type et = outType.getElementType();
      for (LinearOp l : group) {
        if (l.getBias())
          biasLocs.push_back(l.getBias().getLoc());
        int64_t n = l.getWeight().getType().getDimSize(1);
        DenseElementsAttr b = constantBias(l);
        auto rowType = RankedTensorType::get({1, n}, et);
        biases.push_back(b ? b.reshape(rowType)
                           : DenseElementsAttr::get(rowType, builder.getZeroAttr(et)));
      }
      DenseElementsAttr row = concatColumns(biases, RankedTensorType::get({1, total}, et));
      bias = ConstantOp::create(builder, builder.getFusedLoc(biasLocs),
                                row.reshape(RankedTensorType::get({total}, et)));
    }
    Value merged = LinearOp::create(builder, loc, RankedTensorType::get(shape, outType.getElementType()),
                                    input, weight, bias, Value());
    int64_t col = 0;
    for (LinearOp l : group) {
      int64_t n = l.getWeight().getType().getDimSize(1);
      int64_t rank = shape.size();
      SmallVector<int64_t> starts(rank, 0), ends(shape), steps(rank, 1);
      starts.back() = col;
      ends.back() = col + n;
      Value part = SliceOp::create(builder, l.getLoc(), l.getType(), merged,
                                   builder.getDenseI64ArrayAttr(starts),
                                   builder.getDenseI64ArrayAttr(ends),
                                   builder.getDenseI64ArrayAttr(steps));
      l.getResult().replaceAllUsesWith(part);
      std::replace(pending.begin(), pending.end(), Value(l.getResult()), part);
      col += n;
    }
    for (LinearOp l : group)
      l.erase();
  }
};

} // namespace
