// sinter-form-past-cache: a with-past export's caches (Concat(past, new) returned as
// `present`) become in-place context state of the length --cache-length gives.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFORMPASTCACHE
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

constexpr int64_t kLengthAxis = 2; // [batch, heads, length, head_dim], what the cache kernels take
constexpr llvm::StringLiteral kCachePosition = "cache_position";

std::string argName(func::FuncOp func, unsigned index) {
  auto name = func.getArgAttrOfType<StringAttr>(index, "sinter.name");
  return name ? name.getValue().str() : "argument " + std::to_string(index);
}

/// The decode step's write position: the function's i64 [1] `cache_position` argument,
/// appended when the model has none.
FailureOr<Value> cachePosition(func::FuncOp func) {
  OpBuilder b(func.getContext());
  auto type = RankedTensorType::get({1}, b.getI64Type());
  for (BlockArgument arg : func.getArguments())
    if (argName(func, arg.getArgNumber()) == kCachePosition) {
      if (arg.getType() != type)
        return func.emitError("the model's input 'cache_position' is not i64 [1]; the decode "
                              "step of --cache-length takes its write position there");
      return Value(arg);
    }
  unsigned index = func.getNumArguments();
  auto attrs = b.getDictionaryAttr(b.getNamedAttr("sinter.name", b.getStringAttr(kCachePosition)));
  if (failed(func.insertArgument(index, type, attrs, func.getLoc())))
    return failure();
  return Value(func.getArgument(index));
}

/// Readers of `arg` that only read its shape see the exported shape as a constant, so that
/// the argument can become the whole cache.
void foldShapeReaders(BlockArgument arg) {
  for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
    auto shape = dyn_cast<ShapeOp>(user);
    if (!shape)
      continue;
    SmallVector<OpFoldResult> folded;
    if (failed(user->fold({Attribute()}, folded)) || folded.size() != 1)
      continue;
    auto value = dyn_cast_if_present<DenseElementsAttr>(dyn_cast<Attribute>(folded[0]));
    if (!value)
      continue;
    OpBuilder b(user);
    shape.replaceAllUsesWith(ConstantOp::create(b, shape.getLoc(), value).getResult());
    shape.erase();
  }
}

struct FormPastCachePass : sinter::impl::SinterFormPastCacheBase<FormPastCachePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(runOnFunction(func)))
        return signalPassFailure();
  }

  LogicalResult runOnFunction(func::FuncOp func) {
    auto lengthAttr = func->getAttrOfType<IntegerAttr>("sinter.cache_length");
    if (!lengthAttr)
      return success();
    int64_t cacheLength = lengthAttr.getInt();
    if (!func.getBody().hasOneBlock())
      return func.emitError("a --cache-length entry must be one block");
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    Value position; // the decode step's, made once
    SmallVector<BlockArgument> caches;
    for (OpOperand &out : ret->getOpOperands()) {
      auto concat = out.get().getDefiningOp<ConcatOp>();
      if (!concat || concat.getInputs().size() != 2)
        continue;
      auto past = dyn_cast<BlockArgument>(concat.getInputs()[0]);
      if (!past || past.getOwner() != &func.getBody().front())
        continue;
      Value fresh = concat.getInputs()[1];
      auto pastType = cast<RankedTensorType>(past.getType());
      auto freshType = cast<RankedTensorType>(fresh.getType());
      std::string name = argName(func, past.getArgNumber());
      if (pastType.getRank() != 4 || concat.getAxis() != kLengthAxis)
        return concat.emitError("the cache '")
               << name << "' is concatenated along axis " << concat.getAxis() << " of a rank-"
               << pastType.getRank()
               << " tensor; in-place caches are [batch, heads, length, head_dim] along axis 2";
      int64_t pastLength = pastType.getDimSize(kLengthAxis);
      int64_t freshLength = freshType.getDimSize(kLengthAxis);
      bool prompt = pastLength == 0;
      if (!prompt && (pastLength + freshLength != cacheLength || freshLength != 1))
        return concat.emitError("the cache '")
               << name << "' has " << pastLength << " past and " << freshLength
               << " new positions: neither a prompt (no past) nor a decode step (one new "
                  "position filling the "
               << cacheLength << " of --cache-length)";
      OpBuilder b(concat);
      Value positions;
      if (prompt) {
        SmallVector<int64_t> slots(freshLength);
        for (int64_t i = 0; i < freshLength; ++i)
          slots[i] = i;
        auto type = RankedTensorType::get({freshLength}, b.getI64Type());
        positions = ConstantOp::create(b, concat.getLoc(),
                                       DenseElementsAttr::get(type, ArrayRef<int64_t>(slots)));
      } else {
        if (!position) {
          FailureOr<Value> made = cachePosition(func);
          if (failed(made))
            return failure();
          position = *made;
        }
        positions = position;
      }
      foldShapeReaders(past);
      SmallVector<int64_t> shape(pastType.getShape());
      shape[kLengthAxis] = cacheLength;
      auto stateType = RankedTensorType::get(shape, pastType.getElementType());
      past.setType(stateType);
      auto write = CacheWriteOp::create(b, concat.getLoc(), stateType, past, fresh, positions,
                                        b.getI64IntegerAttr(kLengthAxis));
      // The prompt attends over its own keys and values, as the export's Concat with an
      // empty past gave; the decode step over the whole written cache.
      out.set(write);
      concat.getResult().replaceAllUsesWith(prompt ? fresh : write.getResult());
      concat.erase();
      StringAttr stateName = b.getStringAttr(name);
      func.setArgAttr(past.getArgNumber(), "sinter.state", stateName);
      func.setResultAttr(out.getOperandNumber(), "sinter.state", stateName);
      caches.push_back(past);
    }
    if (caches.empty())
      return func.emitError("no result of this --cache-length entry is a cache: a with-past "
                            "export returns concat(past input, new keys or values) along "
                            "axis 2");
    for (BlockArgument cache : caches)
      for (Operation *user : cache.getUsers())
        if (!isa<CacheWriteOp>(user))
          return user->emitError("the cache '")
                 << argName(func, cache.getArgNumber())
                 << "' is read besides its concatenation; an in-place cache needs every "
                    "reader to read the updated cache";
    func.setType(FunctionType::get(func.getContext(), func.getBody().front().getArgumentTypes(),
                                   ret.getOperandTypes()));
    return success();
  }
};

} // namespace
