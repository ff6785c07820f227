#include "AttentionKernelFit.h"
#include "MaskProbe.h"

#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/CompileTarget.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERRAISEATTENTION
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;
using sinter::passes::MaskMeaning;
using sinter::passes::probeMask;
using sinter::graph::HostValues;

namespace {

using OpList = SmallVectorImpl<Operation *>;

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Strips products with constant scalars, multiplying them into `scale`.
Value stripScale(Value v, double &scale, OpList &ops) {
  while (auto mul = v.getDefiningOp<MulOp>()) {
    bool stripped = false;
    for (int side = 0; side < 2 && !stripped; ++side) {
      std::optional<double> s = scalarConstant(mul->getOperand(1 - side));
      if (s && mul->getOperand(side).getType() == mul.getType()) {
        scale *= *s;
        ops.push_back(mul);
        v = mul->getOperand(side);
        stripped = true;
      }
    }
    if (!stripped)
      break;
  }
  return v;
}

/// Strips products with and quotients by constant scalars, multiplying their factors into
/// `scale` (an exporter's soft-cap divides the scores by the cap).
Value stripScaleOrDivisor(Value v, double &scale, OpList &ops) {
  for (;;) {
    v = stripScale(v, scale, ops);
    auto div = v.getDefiningOp<DivOp>();
    std::optional<double> divisor = div ? scalarConstant(div.getRhs()) : std::nullopt;
    if (!divisor || *divisor == 0.0 || div.getLhs().getType() != div.getType())
      return v;
    scale /= *divisor;
    ops.push_back(div);
    v = div.getLhs();
  }
}

/// The scores' form around q k^T: the product of the constant factors (q's, k's and the
/// scores') and, for Gemma 2's soft-capped scores cap * tanh(scale * q k^T / cap), the cap.
struct ScoreForm {
  double scale = 1.0;
  double softcap = 0.0;
};

/// The product q k^T under products with constant scalars (an exporter that scales the scores
/// instead of q or k), their factors multiplied into `form.scale`; with `allowSoftcap`, also
/// under cap * tanh(x / cap) (the cap in `form.softcap`). Null when it is not one.
MatMulOp scaledScores(Value v, ScoreForm &form, bool allowSoftcap, OpList &ops) {
  SmallVector<Operation *> local;
  double factor = 1.0;
  Value product = stripScale(v, factor, local);
  double softcap = 0.0;
  auto tanh = product.getDefiningOp<UnaryFnOp>();
  if (allowSoftcap && tanh && tanh.getFn() == "tanh" && tanh.getType() == product.getType() &&
      factor > 0.0 && std::isfinite(factor)) {
    // cap * tanh(inner * s) is cap * tanh((inner * cap) * s / cap): scale inner * cap.
    softcap = factor;
    local.push_back(tanh);
    product = stripScaleOrDivisor(tanh.getInput(), factor, local);
  }
  auto scores = product.getDefiningOp<MatMulOp>();
  if (!scores)
    return {};
  form.scale *= factor;
  form.softcap = softcap;
  ops.append(local);
  return scores;
}

/// A masked score at or below this (-inf, or a dtype's lowest) is a key not attended, as in the
/// additive masks isPositionBoundMask reads.
constexpr double kMaskedScore = -1e4;

/// The [B, Hkv, S, D] tensor whose grouped-query expansion to [B, heads, S, D] (head h reads
/// kv head h / (heads / Hkv)) `v` holds in row-major order, under any reshapes:
/// expand(unsqueeze(base, 2), [B, Hkv, heads / Hkv, S, D]), or with no expansion a value of
/// the reshape chain that is [B, heads, S, D] itself. Null when it is neither.
Value matchExpandedKv(Value v, int64_t batch, int64_t heads, int64_t seq, int64_t dim,
                      OpList &ops) {
  SmallVector<Value> chain{v};
  SmallVector<Operation *> reshapes;
  while (auto reshape = chain.back().getDefiningOp<ReshapeOp>()) {
    reshapes.push_back(reshape);
    chain.push_back(reshape.getInput());
  }
  if (auto expand = chain.back().getDefiningOp<ExpandOp>()) {
    auto unsqueeze = expand.getInput().getDefiningOp<UnsqueezeOp>();
    if (unsqueeze && unsqueeze.getAxes() == ArrayRef<int64_t>{2}) {
      Value base = unsqueeze.getInput();
      auto baseShape = tensorType(base).getShape();
      auto expanded = tensorType(expand).getShape();
      if (baseShape.size() == 4 && baseShape[0] == batch && baseShape[2] == seq &&
          baseShape[3] == dim && baseShape[1] > 0 && heads % baseShape[1] == 0 &&
          expanded == ArrayRef<int64_t>{batch, baseShape[1], heads / baseShape[1], seq, dim}) {
        ops.append(reshapes);
        ops.append({expand, unsqueeze});
        return base;
      }
    }
  }
  for (auto [i, value] : llvm::enumerate(chain)) {
    if (tensorType(value).getShape() == ArrayRef<int64_t>{batch, heads, seq, dim}) {
      ops.append(reshapes.begin(), reshapes.begin() + i);
      return value;
    }
  }
  return {};
}

/// The [B, Hkv, S, D] key whose expansion `kT` holds transposed to [B, heads, D, S]: a
/// transpose of the last two dimensions of the expansion, under reshapes on both sides.
Value matchTransposedKey(Value kT, int64_t batch, int64_t heads, int64_t seq, int64_t dim,
                         OpList &ops) {
  if (tensorType(kT).getShape() != ArrayRef<int64_t>{batch, heads, dim, seq})
    return {};
  SmallVector<Operation *> local;
  Value s = kT;
  while (auto reshape = s.getDefiningOp<ReshapeOp>()) {
    local.push_back(reshape);
    s = reshape.getInput();
  }
  auto transpose = s.getDefiningOp<TransposeOp>();
  if (!transpose)
    return {};
  ArrayRef<int64_t> perm = transpose.getPerm();
  int64_t rank = perm.size();
  if (rank < 2 || perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return {};
  for (int64_t d = 0; d < rank - 2; ++d)
    if (perm[d] != d)
      return {};
  auto inShape = tensorType(transpose.getInput()).getShape();
  int64_t leading = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    leading *= inShape[d];
  if (inShape[rank - 2] != seq || inShape[rank - 1] != dim || leading != batch * heads)
    return {};
  local.push_back(transpose);
  Value k = matchExpandedKv(transpose.getInput(), batch, heads, seq, dim, local);
  if (k)
    ops.append(local);
  return k;
}

/// Probe results per mask, so the layers of a model that share one mask evaluate it once.
/// Entries of erased ops are dropped, so a recycled address never hits a stale entry.
struct MaskCache : RewriterBase::Listener {
  using Key = std::tuple<Value, int64_t, int64_t, int64_t, int64_t>;
  llvm::DenseMap<Key, std::optional<MaskMeaning>> entries;

  std::optional<MaskMeaning> probe(Value mask, int64_t batch, int64_t heads, int64_t seq,
                                   bool alsoCausal) {
    Key key{mask, alsoCausal ? 1 : 0, batch, heads, seq};
    auto it = entries.find(key);
    if (it != entries.end())
      return it->second;
    std::optional<MaskMeaning> meaning =
        probeMask(mask, batch, heads, seq, alsoCausal);
    entries[key] = meaning;
    return meaning;
  }
  void notifyOperationErased(Operation *op) override {
    SmallVector<Key> stale;
    for (auto &entry : entries)
      if (std::get<0>(entry.first).getDefiningOp() == op)
        stale.push_back(entry.first);
    for (const Key &key : stale)
      entries.erase(key);
  }
};

/// Whether `mask` ([.., 1, L] after broadcasting) attends exactly keys [0, p] when the
/// position argument holds p, for every p in [0, L) (all of them up to 256 keys, else the
/// ends and a spread between).
bool isPositionBoundMask(Value mask, Value position, int64_t length) {
  auto maskType = dyn_cast<RankedTensorType>(mask.getType());
  if (!maskType || maskType.getRank() < 1 || maskType.getShape().back() != length ||
      maskType.getNumElements() != length)
    return false;
  bool boolean = maskType.getElementType().isInteger(1);
  if (!boolean && !isa<FloatType>(maskType.getElementType()))
    return false;
  std::optional<sinter::passes::SliceEvaluator> eval = sinter::passes::SliceEvaluator::build(mask);
  if (!eval || eval->arguments().size() != 1 || eval->arguments()[0] != position)
    return false;
  auto positionType = cast<RankedTensorType>(position.getType());
  for (int64_t p = 0; p < length; ++p) {
    bool sampled = length <= 256 || p < 4 || p >= length - 4 || p % (length / 16) == 7;
    if (!sampled)
      continue;
    HostValues at;
    at.ints = {p};
    std::optional<HostValues> got =
        readValues(eval->evaluate({makeElements(positionType, at)}));
    if (!got || (int64_t)got->size() != length)
      return false;
    for (int64_t j = 0; j < length; ++j) {
      bool attend;
      if (boolean) {
        attend = got->ints[j] != 0;
      } else {
        double v = got->floats[j];
        if (v == 0.0)
          attend = true;
        else if (v <= kMaskedScore)
          attend = false;
        else
          return false;
      }
      if (attend != (j <= p))
        return false;
    }
  }
  return true;
}

/// One new query per head over caches the same step wrote: decode_attention, when the mask
/// attends exactly the keys up to the written position, or exactly the keys a [B, L]
/// argument keeps (a with-past export's attention_mask: its key_mask).
LogicalResult replaceWithDecode(Operation *root, Value q, Value k, Value v, Value mask,
                                bool alsoCausal, ScoreForm form, ArrayRef<Operation *> ops,
                                PatternRewriter &rewriter) {
  auto kWrite = k.getDefiningOp<CacheWriteOp>(), vWrite = v.getDefiningOp<CacheWriteOp>();
  auto qType = tensorType(q);
  if (!kWrite || !vWrite || kWrite.getPositions() != vWrite.getPositions() ||
      qType.getDimSize(2) != 1 || alsoCausal || !mask)
    return rewriter.notifyMatchFailure(root, "keys differ in length from queries, and are not "
                                             "caches written at the query's position");
  Value position = kWrite.getPositions();
  int64_t length = tensorType(k).getDimSize(2);
  if (tensorType(position).getShape() != ArrayRef<int64_t>{1} || kWrite.getAxis() != 2 ||
      vWrite.getAxis() != 2)
    return rewriter.notifyMatchFailure(root, "not one position written along the cache length");
  Value keyMask;
  if (!isPositionBoundMask(mask, position, length)) {
    keyMask = sinter::passes::probeKeyMask(mask, qType.getDimSize(0), length);
    if (!keyMask)
      return rewriter.notifyMatchFailure(
          root, "mask is neither 'keys up to the cache position' nor a [B, L] key mask");
  }
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  Value decoded = DecodeAttentionOp::create(
      rewriter, rewriter.getFusedLoc(locs), qType, q, k, v, position, keyMask,
      rewriter.getF32FloatAttr((float)form.scale), /*merged_heads=*/UnitAttr(),
      rewriter.getF32FloatAttr((float)form.softcap));
  rewriter.replaceOp(root, decoded);
  return success();
}

struct RaiseOptions {
  int64_t sharedMemoryPerBlock; // the target's, for the prompt kernels' fit
  bool raiseSoftcap;            // the pass option raise-softcap
};

/// Builds the fused op once q, k, v, scale and the mask are known; fails (leaving the graph
/// unchanged) when the operands do not fit it or the mask means something else.
LogicalResult replaceWithFused(Operation *root, Value q, Value k, Value v, Value mask,
                               bool alsoCausal, ScoreForm form, ArrayRef<Operation *> ops,
                               MaskCache &cache, int64_t sharedMemoryPerBlock,
                               PatternRewriter &rewriter) {
  auto qType = tensorType(q), kType = tensorType(k);
  if (qType.getRank() == 4 && kType.getRank() == 4 && kType.getDimSize(2) != qType.getDimSize(2))
    return replaceWithDecode(root, q, k, v, mask, alsoCausal, form, ops, rewriter);
  if (kType != tensorType(v) || qType.getRank() != 4 ||
      qType.getElementType() != kType.getElementType() ||
      kType.getDimSize(2) != qType.getDimSize(2) || root->getResult(0).getType() != qType)
    return rewriter.notifyMatchFailure(root, "q, k and v do not fit fused_attention");
  int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1), seq = qType.getDimSize(2);
  // Only what an attention kernel takes: flash_attention (16-bit, head size a multiple of 16
  // up to 256, any length) or attention_prefill (a head's keys in the target's shared memory).
  // Anything else stays as primitives for the generic tier and the library GEMMs.
  int64_t headDim = qType.getDimSize(3);
  int elementBytes = int(qType.getElementTypeBitWidth() / 8);
  // Of the prompt kernels only flash_attention caps scores.
  if (form.softcap != 0.0 && (!qType.getElementType().isBF16() ||
                              !sinter::flashKernelFits(seq, headDim, sharedMemoryPerBlock)))
    return rewriter.notifyMatchFailure(root, "soft-capped scores flash_attention does not take");
  if (!sinter::flashKernelTiles(headDim, elementBytes) &&
      !sinter::prefillKernelFits(seq, headDim, elementBytes, sharedMemoryPerBlock))
    return rewriter.notifyMatchFailure(root, "no attention kernel takes this length and head size");
  MaskMeaning meaning{alsoCausal, Value()};
  if (mask) {
    std::optional<MaskMeaning> probed = cache.probe(mask, batch, heads, seq, alsoCausal);
    if (!probed)
      return rewriter.notifyMatchFailure(root, "mask is not causal/key padding");
    meaning = *probed;
  }
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  Value fused = FusedAttentionOp::create(
      rewriter, rewriter.getFusedLoc(locs), qType, q, k, v, meaning.keyMask,
      rewriter.getF32FloatAttr((float)form.scale), rewriter.getBoolAttr(meaning.causal),
      /*merged_heads=*/UnitAttr(), rewriter.getF32FloatAttr((float)form.softcap));
  rewriter.replaceOp(root, fused);
  return success();
}

/// Opset 18: matmul([where(isnan(p), 0, p) of] p = softmax(s' [+ mask]), vE) (the softmax
/// possibly in fp32 between casts, as eager exports take it), or with
/// softmax(where(mask, s', -inf)) (a boolean mask, as GPT-2's exports), where s' = (q' kT') * s0,
/// q' = q * s1, kT' = kT * s2 and GQA-expanded kT, vE.
struct RaiseDecomposedAttention : OpRewritePattern<MatMulOp> {
  RaiseDecomposedAttention(MLIRContext *context, MaskCache &cache, RaiseOptions options)
      : OpRewritePattern(context), cache(cache), options(options) {}
  MaskCache &cache;
  RaiseOptions options;
  LogicalResult matchAndRewrite(MatMulOp op, PatternRewriter &rewriter) const override {
    SmallVector<Operation *> ops{op};
    Value p = op.getLhs();
    if (auto where = p.getDefiningOp<WhereOp>()) {
      auto isNan = where.getCondition().getDefiningOp<IsNaNOp>();
      std::optional<double> zero = scalarConstant(where.getX());
      if (!isNan || isNan.getInput() != where.getY() || !zero || *zero != 0.0 ||
          where.getType() != where.getY().getType())
        return rewriter.notifyMatchFailure(op, "lhs is a where other than a NaN guard");
      ops.append({where, isNan});
      p = where.getY();
    }
    // Hugging Face's eager attention takes the softmax in fp32 between casts:
    // cast(softmax(cast(s, f32)), T). The kernels' softmax is fp32 and keeps P finer than T.
    Value widened;
    if (auto narrow = p.getDefiningOp<CastOp>()) {
      auto inner = narrow.getInput().getDefiningOp<SoftmaxOp>();
      auto widen = inner ? inner.getInput().getDefiningOp<CastOp>() : CastOp();
      if (!widen || !inner.getType().getElementType().isF32() ||
          widen.getInput().getType() != narrow.getType())
        return rewriter.notifyMatchFailure(op, "lhs is a cast other than fp32 softmax's");
      ops.append({narrow, widen});
      p = narrow.getInput();
      widened = widen.getInput();
    }
    auto softmax = p.getDefiningOp<SoftmaxOp>();
    if (!softmax || softmax.getType().getRank() != 4 || softmax.getAxis() != 3)
      return rewriter.notifyMatchFailure(op, "lhs is not a softmax over the last axis");
    ops.push_back(softmax);
    Value logits = widened ? widened : softmax.getInput(), mask;
    ScoreForm form;
    MatMulOp scores = scaledScores(logits, form, options.raiseSoftcap, ops);
    if (auto add = logits.getDefiningOp<AddOp>()) {
      for (int side = 0; side < 2 && !scores; ++side) {
        mask = add->getOperand(1 - side);
        if (add->getOperand(side).getType() == add.getType())
          scores = scaledScores(add->getOperand(side), form, options.raiseSoftcap, ops);
      }
      ops.push_back(add);
    } else if (auto where = logits.getDefiningOp<WhereOp>()) {
      // where(attend, scores, -inf): the boolean condition is the mask (true attends).
      std::optional<double> fill = scalarConstant(where.getY());
      if (fill && *fill <= kMaskedScore && where.getX().getType() == where.getType()) {
        scores = scaledScores(where.getX(), form, options.raiseSoftcap, ops);
        mask = where.getCondition();
        ops.push_back(where);
      }
    }
    if (!scores)
      return rewriter.notifyMatchFailure(
          op, "softmax input is not q k^T (+ mask, or masked by where with -inf)");
    ops.push_back(scores);
    Value q = stripScale(scores.getLhs(), form.scale, ops);
    Value kT = stripScale(scores.getRhs(), form.scale, ops);
    auto qType = tensorType(q);
    if (qType.getRank() != 4)
      return rewriter.notifyMatchFailure(op, "q is not [B, H, S, D]");
    auto qs = qType.getShape();
    auto kTType = tensorType(kT);
    if (kTType.getRank() != 4)
      return rewriter.notifyMatchFailure(op, "k^T is not [B, H, D, S_kv]");
    int64_t kvSeq = kTType.getDimSize(3);
    Value k = matchTransposedKey(kT, qs[0], qs[1], kvSeq, qs[3], ops);
    Value v = matchExpandedKv(op.getRhs(), qs[0], qs[1], kvSeq, qs[3], ops);
    if (!k || !v)
      return rewriter.notifyMatchFailure(op, "k or v is not a grouped-query expansion");
    return replaceWithFused(op, q, k, v, mask, /*alsoCausal=*/false, form, ops, cache,
                            options.sharedMemoryPerBlock, rewriter);
  }
};

/// Opset 23: attention(q, kE, vE [, mask]) in the 4-D form, kE/vE possibly GQA-expanded.
struct RaiseAttentionOp : OpRewritePattern<AttentionOp> {
  RaiseAttentionOp(MLIRContext *context, MaskCache &cache, RaiseOptions options)
      : OpRewritePattern(context), cache(cache), options(options) {}
  MaskCache &cache;
  RaiseOptions options;
  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    SmallVector<Operation *> ops{op};
    auto qType = tensorType(op.getQuery());
    if (qType.getRank() != 4)
      return rewriter.notifyMatchFailure(op, "not the 4-D form");
    ScoreForm form{op.getScale().convertToDouble(), op.getSoftcap().convertToDouble()};
    if (form.softcap != 0.0 && !options.raiseSoftcap)
      return rewriter.notifyMatchFailure(op, "soft-capped scores");
    auto ks = tensorType(op.getKey()).getShape();
    Value k = matchExpandedKv(op.getKey(), ks[0], ks[1], ks[2], ks[3], ops);
    auto vs = tensorType(op.getValue()).getShape();
    Value v = matchExpandedKv(op.getValue(), vs[0], vs[1], vs[2], vs[3], ops);
    if (!k || !v)
      return rewriter.notifyMatchFailure(op, "unreachable: k/v are themselves [B, H, S, D]");
    return replaceWithFused(op, op.getQuery(), k, v, op.getMask(), op.getIsCausal(), form, ops,
                            cache, options.sharedMemoryPerBlock, rewriter);
  }
};

struct RaiseAttentionPass : sinter::impl::SinterRaiseAttentionBase<RaiseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<sinter::CompileTarget> target = sinter::compileTargetOf(getOperation());
    if (failed(target))
      return signalPassFailure();
    MaskCache cache;
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseDecomposedAttention, RaiseAttentionOp>(
        &getContext(), cache, RaiseOptions{target->sharedMemoryPerBlock, raiseSoftcap});
    GreedyRewriteConfig config;
    config.setListener(&cache);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
