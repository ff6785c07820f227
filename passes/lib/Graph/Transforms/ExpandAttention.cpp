// Attention that no pattern kernel took, written as the primitives the generic tier and the
// library GEMMs compute (see Passes.td).
#include "AttentionKernelFit.h"

#include "sinter/Dialect/Graph/IR/AttentionExpansion.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/CompileTarget.h"
#include "sinter/Passes/KernelCache.h"
#include "sinter/Passes/Passes.h"
#include "sinter/Passes/QkvHeadChains.h"
#include "sinter/Passes/RewriteOnly.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTEREXPANDATTENTION
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

/// key_mask [B, S] (integer or i1) as the [B, 1, 1, S] i1 `keep` of expandAttention: key j of
/// batch b is attended where the mask is non-zero.
Value keepFromKeyMask(PatternRewriter &rewriter, Location loc, Value m) {
  auto mt = cast<RankedTensorType>(m.getType());
  int64_t b = mt.getDimSize(0), s = mt.getDimSize(1);
  auto boolType = RankedTensorType::get({b, s}, rewriter.getI1Type());
  Value nonzero = m;
  if (!mt.getElementType().isInteger(1)) {
    Value zero = ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(RankedTensorType::get({}, mt.getElementType()),
                               rewriter.getIntegerAttr(mt.getElementType(), 0)));
    Value equal = EqualOp::create(rewriter, loc, boolType, m, zero);
    nonzero = UnaryFnOp::create(rewriter, loc, boolType, equal, rewriter.getStringAttr("not"),
                                rewriter.getF32FloatAttr(0), rewriter.getF32FloatAttr(0));
  }
  SmallVector<int64_t> shape = {b, 1, 1, s};
  auto shapeType = RankedTensorType::get({4}, rewriter.getI64Type());
  return ReshapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, rewriter.getI1Type()), nonzero,
      ConstantOp::create(rewriter, loc, DenseElementsAttr::get(shapeType, ArrayRef(shape))));
}

/// keep[j] = j <= position over a cache of `length` keys, as the [1, 1, 1, L] i1 `keep` of
/// expandAttention (scores [B, Hq, 1, L]).
Value keepUpToPosition(PatternRewriter &rewriter, Location loc, Value position, int64_t length) {
  Type indexType = cast<RankedTensorType>(position.getType()).getElementType();
  SmallVector<APInt> keys;
  for (int64_t j = 0; j < length; ++j)
    keys.push_back(APInt(indexType.getIntOrFloatBitWidth(), j, /*isSigned=*/true));
  Value keyIndex = ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(RankedTensorType::get({length}, indexType), keys));
  auto boolType = RankedTensorType::get({length}, rewriter.getI1Type());
  Value attended = LessOrEqualOp::create(rewriter, loc, boolType, keyIndex, position);
  SmallVector<int64_t> keepShape = {1, 1, 1, length};
  auto shapeType = RankedTensorType::get({4}, rewriter.getI64Type());
  return ReshapeOp::create(
      rewriter, loc, RankedTensorType::get(keepShape, rewriter.getI1Type()), attended,
      ConstantOp::create(rewriter, loc, DenseElementsAttr::get(shapeType, ArrayRef(keepShape))));
}

struct ExpandAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto qType = op.getQuery().getType();
    Type et = qType.getElementType();
    int64_t hq = op.getQNumHeads(), hkv = op.getKvNumHeads();
    auto shapeConst = [&](ArrayRef<int64_t> shape) -> Value {
      auto type = RankedTensorType::get({(int64_t)shape.size()}, rewriter.getI64Type());
      return ConstantOp::create(rewriter, loc, DenseElementsAttr::get(type, shape));
    };
    // 3-D [B, S, H * D] operands as 4-D [B, H, S, D].
    bool flat = qType.getRank() == 3;
    auto heads = [&](Value v, int64_t h) -> Value {
      if (!flat)
        return v;
      auto t = cast<RankedTensorType>(v.getType());
      int64_t b = t.getDimSize(0), s = t.getDimSize(1), d = t.getDimSize(2) / h;
      SmallVector<int64_t> split = {b, s, h, d};
      Value r =
          ReshapeOp::create(rewriter, loc, RankedTensorType::get(split, et), v, shapeConst(split));
      return TransposeOp::create(rewriter, loc, RankedTensorType::get({b, h, s, d}, et), r,
                                 rewriter.getDenseI64ArrayAttr({0, 2, 1, 3}));
    };
    Value mask = op.getMask();
    bool boolMask = mask && cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1);
    Value out = expandAttention(rewriter, loc, heads(op.getQuery(), hq), heads(op.getKey(), hkv),
                                heads(op.getValue(), hkv), hq, hkv, op.getScale().convertToFloat(),
                                op.getIsCausal(), boolMask ? mask : Value(),
                                boolMask ? Value() : mask, op.getSoftcap().convertToFloat())
                    .output;
    if (flat) {
      auto o = cast<RankedTensorType>(out.getType()).getShape();
      Value t =
          TransposeOp::create(rewriter, loc, RankedTensorType::get({o[0], o[2], o[1], o[3]}, et),
                              out, rewriter.getDenseI64ArrayAttr({0, 2, 1, 3}));
      SmallVector<int64_t> merged = {o[0], o[2], o[1] * o[3]};
      out = ReshapeOp::create(rewriter, loc, RankedTensorType::get(merged, et), t,
                              shapeConst(merged));
    }
    rewriter.replaceOp(op, out);
    return success();
  }
};

/// Whether `attention`'s operands are the q | k | v head split of one fused QKV projection, as
/// sinter-fuse-qkv-heads folds it (`q` the attention's q operand; qkvHeadChains has the rest).
bool readsQkvSplit(Operation *attention, Value q) {
  // Back from q through the ops a head chain holds (slice, norm and its rounding back, reshape,
  // transpose, rope: at most six) to the projection; qkvHeadChains then checks the whole split
  // going forward.
  for (int hop = 0; hop <= 6 && q; ++hop) {
    Operation *def = q.getDefiningOp();
    if (auto linear = dyn_cast_or_null<LinearOp>(def)) {
      auto chains = sinter::qkvHeadChains(linear);
      return chains && (*chains)[0].attention == attention;
    }
    if (!isa_and_nonnull<RopeOp, TransposeOp, RMSNormalizationOp, CastOp, ReshapeOp, SliceOp>(
            def))
      return false;
    q = def->getOperand(0);
  }
  return false;
}

/// A raised attention the pattern kernels cannot take (not bf16, operands that are not the head
/// split of one fused QKV projection, a non-i64 key mask, an output that is not merged back to
/// [B, S, heads * D], or a batch of sequences the tensor-core kernel does not tile) goes back
/// to primitives.
struct ExpandFusedAttention : OpRewritePattern<FusedAttentionOp> {
  ExpandFusedAttention(MLIRContext *context, bool f32Activations, int64_t sharedMemoryPerBlock)
      : OpRewritePattern(context), f32Activations(f32Activations),
        sharedMemoryPerBlock(sharedMemoryPerBlock) {}

  bool kernelTakes(FusedAttentionOp op) const {
    if (!readsQkvSplit(op, op.getQ()))
      return false;
    // The kernels take bf16 heads (the fused QKV projection's kernel absorbs the split).
    auto qType = op.getQ().getType();
    if (!qType.getElementType().isBF16())
      return false;
    // flash_attention reads 16-bit q/k/v; the fp32 projection --activations=f32 writes leaves
    // the short-prompt kernel, which is per sequence and holds a head's keys in shared memory.
    int64_t batch = qType.getDimSize(0), seq = qType.getDimSize(2), headDim = qType.getDimSize(3);
    if (f32Activations) {
      if (batch != 1 || !sinter::prefillKernelFits(seq, headDim, 4, sharedMemoryPerBlock))
        return false;
    } else if (batch != 1 && (batch > sinter::kernels::kMaxGridYZ || !sinter::flashKernelTiles(headDim, 2))) {
      return false;
    }
    if (Value m = op.getKeyMask();
        m && !cast<ShapedType>(m.getType()).getElementType().isInteger(64))
      return false;
    // Of the prompt kernels only flash_attention caps scores.
    if (!op.getSoftcap().isZero() &&
        (f32Activations || !sinter::flashKernelFits(seq, headDim, sharedMemoryPerBlock)))
      return false;
    Value out = op.getResult();
    if (!out.hasOneUse())
      return false;
    auto transpose = dyn_cast<TransposeOp>(*out.getUsers().begin());
    return transpose && transpose.getPerm() == ArrayRef<int64_t>{0, 2, 1, 3} &&
           transpose.getResult().hasOneUse() &&
           isa<ReshapeOp>(*transpose.getResult().getUsers().begin());
  }

  LogicalResult matchAndRewrite(FusedAttentionOp op, PatternRewriter &rewriter) const override {
    if (op.getMergedHeads() || kernelTakes(op)) // merged: already the kernels'
      return rewriter.notifyMatchFailure(op, "the attention kernel takes it");
    Location loc = op.getLoc();
    Value keep;
    if (Value m = op.getKeyMask())
      keep = keepFromKeyMask(rewriter, loc, m);
    int64_t hq = op.getQ().getType().getDimSize(1), hkv = op.getK().getType().getDimSize(1);
    Value out = expandAttention(rewriter, loc, op.getQ(), op.getK(), op.getV(), hq, hkv,
                                op.getScale().convertToFloat(), op.getCausal(), keep, Value(),
                                op.getSoftcap().convertToFloat())
                    .output;
    rewriter.replaceOp(op, out);
    return success();
  }

private:
  bool f32Activations;
  int64_t sharedMemoryPerBlock;
};

/// Decode attention of a kind the attention_decode kernel does not address (not bf16, a cache
/// that is not [batch, heads, length, head_dim] written along the length, a key mask that is
/// not i64, q and the new rows not the head split of one fused QKV projection, as with q/k
/// norms) goes to primitives: attention over the whole cache, the keys after the position (or
/// those the key mask masks) masked.
struct ExpandDecodeAttention : OpRewritePattern<DecodeAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The rows `cache` was written with in this step, when it is a cache the kernel addresses.
  static Value kernelCacheRows(Value cache) {
    auto write = cache.getDefiningOp<CacheWriteOp>();
    return write && sinter::isKernelCache(write) ? write.getRows() : Value();
  }

  static bool kernelTakes(DecodeAttentionOp op) {
    auto qType = op.getQ().getType();
    Value kRows = kernelCacheRows(op.getK()), vRows = kernelCacheRows(op.getV());
    if (!qType.getElementType().isBF16() || !kRows || !vRows)
      return false;
    if (Value mask = op.getKeyMask();
        mask && !cast<RankedTensorType>(mask.getType()).getElementType().isInteger(64))
      return false;
    // qkvHeadChains checks that k and v reach this attention through its cache writes.
    return readsQkvSplit(op, op.getQ());
  }

  LogicalResult matchAndRewrite(DecodeAttentionOp op, PatternRewriter &rewriter) const override {
    auto qType = op.getQ().getType();
    if (op.getMergedHeads() || kernelTakes(op))
      return rewriter.notifyMatchFailure(op, "the attention_decode kernel takes it");
    auto positionType = op.getPosition().getType();
    if (positionType.getNumElements() != 1)
      return rewriter.notifyMatchFailure(op, "one position per step");
    Location loc = op.getLoc();
    auto kType = op.getK().getType();
    Value keep = op.getKeyMask() ? keepFromKeyMask(rewriter, loc, op.getKeyMask())
                                 : keepUpToPosition(rewriter, loc, op.getPosition(),
                                                    kType.getDimSize(2));
    Value out = expandAttention(rewriter, loc, op.getQ(), op.getK(), op.getV(), qType.getDimSize(1),
                                kType.getDimSize(1), op.getScale().convertToFloat(),
                                /*causal=*/false, keep, Value(), op.getSoftcap().convertToFloat())
                    .output;
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct ExpandAttentionPass : sinter::impl::SinterExpandAttentionBase<ExpandAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (activations != "model" && activations != "f32") {
      getOperation().emitError("activations must be model or f32, got '") << activations << "'";
      return signalPassFailure();
    }
    FailureOr<sinter::CompileTarget> target = sinter::compileTargetOf(getOperation());
    if (failed(target))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandAttention, ExpandDecodeAttention>(&getContext());
    patterns.add<ExpandFusedAttention>(&getContext(), activations == "f32",
                                       target->sharedMemoryPerBlock);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     sinter::rewriteOnlyConfig())))
      signalPassFailure();
  }
};

} // namespace
