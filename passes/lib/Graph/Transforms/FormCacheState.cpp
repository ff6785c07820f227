// sinter-form-cache-state: KV-cache updates exported as ScatterND become in-place writes into
// context state.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFORMCACHESTATE
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// The permutation applying `first` then `second` (output dim i = input dim result[i]).
SmallVector<int64_t> compose(ArrayRef<int64_t> first, ArrayRef<int64_t> second) {
  SmallVector<int64_t> out;
  for (int64_t d : second)
    out.push_back(first[d]);
  return out;
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, d] : llvm::enumerate(perm))
    if ((int64_t)i != d)
      return false;
  return true;
}

Value transposed(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  if (isIdentity(perm))
    return v;
  // A transpose of a transpose is one transpose of the source.
  if (auto inner = v.getDefiningOp<TransposeOp>())
    return transposed(b, loc, inner.getInput(), compose(inner.getPerm(), perm));
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  return TransposeOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), v,
                             b.getDenseI64ArrayAttr(perm));
}

/// The cache update one returned value performs, when it is
///   transpose(scatter_nd(transpose(state, P), indices [N, 1], updates), inverse(P))
/// (the form torch.onnx gives `state.index_copy(axis, positions, rows)` and
/// `state[..., positions, ...] = rows`), or the scatter_nd alone when the scattered axis is
/// the first, into a [batch, heads, length, head_dim] cache along the length (the layout the
/// cache kernels take). Builds the cache_write; null when the value is anything else, which
/// stays a scatter_nd of the generic tier.
Value formCacheWrite(OpBuilder &b, Value result, BlockArgument state) {
  SmallVector<int64_t> outer;
  Value scattered = result;
  if (auto back = result.getDefiningOp<TransposeOp>()) {
    outer.assign(back.getPerm().begin(), back.getPerm().end());
    scattered = back.getInput();
  }
  auto scatter = scattered.getDefiningOp<ScatterNDOp>();
  if (!scatter || scatter.getReduction() != "none")
    return {};
  auto stateType = cast<RankedTensorType>(state.getType());
  int64_t rank = stateType.getRank();
  SmallVector<int64_t> inner;
  for (int64_t d = 0; d < rank; ++d)
    inner.push_back(d);
  if (scatter.getInput() != state) {
    auto front = scatter.getInput().getDefiningOp<TransposeOp>();
    if (!front || front.getInput() != state)
      return {};
    inner.assign(front.getPerm().begin(), front.getPerm().end());
  }
  if (outer.empty())
    for (int64_t d = 0; d < rank; ++d)
      outer.push_back(d);
  if (!isIdentity(compose(inner, outer)))
    return {};
  auto indices = cast<RankedTensorType>(scatter.getIndices().getType());
  if (indices.getRank() != 2 || indices.getDimSize(1) != 1 || rank != 4 || inner[0] != 2)
    return {};
  // Built where the exported update was, so the readers it replaces still follow it.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(result.getDefiningOp());
  int64_t axis = inner[0];
  Location loc = scatter.getLoc();
  // The positions as a 1-D tensor: the input of the trailing unsqueeze, or a reshape.
  Value positions;
  if (auto unsqueeze = scatter.getIndices().getDefiningOp<UnsqueezeOp>();
      unsqueeze && cast<RankedTensorType>(unsqueeze.getInput().getType()).getRank() == 1)
    positions = unsqueeze.getInput();
  if (!positions) {
    auto type = RankedTensorType::get({indices.getDimSize(0)}, indices.getElementType());
    auto shapeType = RankedTensorType::get({1}, b.getI64Type());
    Value shape = ConstantOp::create(
        b, loc, DenseElementsAttr::get(shapeType, ArrayRef<int64_t>{indices.getDimSize(0)}));
    positions = ReshapeOp::create(b, loc, type, scatter.getIndices(), shape);
  }
  // updates are [N, rest of the transposed state]; in the state's layout that is the
  // transpose by `outer`, with N along `axis`.
  Value rows = transposed(b, loc, scatter.getUpdates(), outer);
  return CacheWriteOp::create(b, b.getFusedLoc({scatter.getLoc(), result.getLoc()}), stateType,
                              state, rows, positions, b.getI64IntegerAttr(axis));
}

struct FormCacheStatePass : sinter::impl::SinterFormCacheStateBase<FormCacheStatePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(runOnFunction(func)))
        return signalPassFailure();
  }

  LogicalResult runOnFunction(func::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return success();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder b(ret);
    bool changed = false;
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type)
        continue;
      for (OpOperand &out : ret->getOpOperands()) {
        if (out.get().getType() != type)
          continue;
        Value write = formCacheWrite(b, out.get(), arg);
        if (!write)
          continue;
        auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "sinter.name");
        StringAttr stateName = name ? name : b.getStringAttr("state" + std::to_string(arg.getArgNumber()));
        // Every reader of the updated cache reads the write, which the lowering performs in
        // place: nothing may still read the old contents.
        Value old = out.get();
        old.replaceAllUsesWith(write);
        func.setArgAttr(arg.getArgNumber(), "sinter.state", stateName);
        func.setResultAttr(out.getOperandNumber(), "sinter.state", stateName);
        changed = true;
        break;
      }
    }
    if (!changed)
      return success();
    // Drop the replaced scatter chains (and anything else left dead) so the state argument
    // is read only by its cache write.
    bool erased = true;
    while (erased) {
      erased = false;
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(func.getBody().front()))) {
        if (&op == ret.getOperation() || !op.use_empty() || isa<CacheWriteOp>(op) ||
            op.getNumRegions() != 0)
          continue;
        op.erase();
        erased = true;
      }
    }
    for (BlockArgument arg : func.getArguments()) {
      if (!func.getArgAttr(arg.getArgNumber(), "sinter.state"))
        continue;
      for (Operation *user : arg.getUsers())
        if (!isa<CacheWriteOp>(user))
          return user->emitError("the cache '")
                 << func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "sinter.state").getValue()
                 << "' is read besides its update; an in-place cache needs every reader to "
                    "read the updated cache";
    }
    return success();
  }
};

} // namespace
