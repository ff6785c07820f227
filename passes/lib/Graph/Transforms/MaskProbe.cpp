#include "MaskProbe.h"

#include "SlicePoints.h"

#include "sinter/Dialect/Graph/IR/ElementsFolding.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::passes {

namespace {
/// Masks are small graphs (a cast, a gather, an and, a where); anything much larger is not
/// a mask this recognizes, and must not make the probing slow.
constexpr size_t kMaxSliceOps = 256;
} // namespace

std::optional<SliceEvaluator> SliceEvaluator::build(Value root) {
  SliceEvaluator eval;
  eval.root = root;
  llvm::DenseSet<Operation *> visited;
  llvm::DenseSet<Value> seenArgs;
  // Iterative post-order DFS: an op is appended after all of its operands' producers.
  SmallVector<std::pair<Operation *, unsigned>> stack;
  auto visitValue = [&](Value v) -> bool {
    if (isa<BlockArgument>(v)) {
      if (seenArgs.insert(v).second)
        eval.args.push_back(v);
      return true;
    }
    Operation *op = v.getDefiningOp();
    if (op->getNumRegions() != 0)
      return false;
    if (visited.insert(op).second)
      stack.push_back({op, 0});
    return true;
  };
  if (!visitValue(root))
    return std::nullopt;
  while (!stack.empty()) {
    auto &[op, next] = stack.back();
    if (next < op->getNumOperands()) {
      Value operand = op->getOperand(next++);
      if (!visitValue(operand))
        return std::nullopt;
      continue;
    }
    eval.ops.push_back(op);
    stack.pop_back();
    if (eval.ops.size() > kMaxSliceOps)
      return std::nullopt;
  }
  return eval;
}

Attribute SliceEvaluator::evaluate(ArrayRef<Attribute> argValues) const {
  if (argValues.size() != args.size())
    return {};
  llvm::DenseMap<Value, Attribute> env;
  for (auto [arg, value] : llvm::zip(args, argValues))
    env[arg] = value;
  for (Operation *op : ops) {
    SmallVector<Attribute> operands;
    for (Value operand : op->getOperands()) {
      Attribute attr = env.lookup(operand);
      // Never call a folder with a non-constant operand: trait folders (commutative
      // operand sorting) would then rewrite the op in place.
      if (!attr)
        return {};
      operands.push_back(attr);
    }
    SmallVector<OpFoldResult> results;
    if (failed(op->fold(operands, results)) || results.size() != op->getNumResults())
      return {};
    for (auto [result, folded] : llvm::zip(op->getResults(), results)) {
      Attribute attr = dyn_cast<Attribute>(folded);
      if (!attr)
        attr = env.lookup(cast<Value>(folded));
      if (!attr)
        return {};
      env[result] = attr;
    }
  }
  return env.lookup(root);
}

namespace {

/// Masks up to this many elements (batch x mask heads x S x S: 1024 tokens at batch 1) are
/// checked at every element; larger ones at sampled rows, columns and diagonals, evaluated
/// at those points only (a 32768-token mask has 2^30 elements).
constexpr int64_t kExhaustiveMaskElements = 1 << 20;

/// Whether a mask value attends; nullopt when it is neither "attend" nor "masked".
std::optional<bool> attends(MaskKind kind, const HostValues &values, size_t n) {
  if (kind == MaskKind::Boolean)
    return values.ints[n] != 0;
  double v = values.floats[n];
  if (v == 0.0)
    return true;
  if (v <= -1e4) // includes -inf
    return false;
  return std::nullopt;
}

/// Key-padding probes ([batch, seq] keep flags): one zero key at a time in every batch
/// (every position up to 128 keys; beyond, the first and last four and eight spread
/// between, plus pseudo-random halves, so long prompts stay cheap to compile), alternate
/// keys zero, and alternate keys zero in one batch only.
std::vector<std::vector<uint8_t>> keyProbes(int64_t batch, int64_t seq) {
  std::vector<std::vector<uint8_t>> probes;
  auto addProbe = [&](auto zeroAt) {
    std::vector<uint8_t> keep(batch * seq, 1);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < seq; ++j)
        if (zeroAt(b, j))
          keep[b * seq + j] = 0;
    probes.push_back(std::move(keep));
  };
  constexpr int64_t kExhaustive = 128;
  for (int64_t j = 0; j < seq; ++j) {
    bool sampled = seq <= kExhaustive || j < 4 || j >= seq - 4 || j % (seq / 8) == seq / 16;
    if (sampled)
      addProbe([j](int64_t, int64_t k) { return k == j; });
  }
  if (seq > kExhaustive) {
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int round = 0; round < 4; ++round) {
      std::vector<uint8_t> zero(batch * seq);
      for (uint8_t &z : zero) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        z = (state >> 33) & 1;
      }
      addProbe([&zero, seq](int64_t b, int64_t k) { return zero[b * seq + k] != 0; });
    }
  }
  if (seq > 1) {
    addProbe([](int64_t, int64_t k) { return k % 2 == 0; });
    addProbe([](int64_t, int64_t k) { return k % 2 == 1; });
  }
  if (batch > 1)
    for (int64_t only = 0; only < std::min<int64_t>(batch, 8); ++only)
      addProbe([only](int64_t b, int64_t k) { return b == only && k % 2 == 0; });
  return probes;
}

/// An element of the [batch, heads, seq, seq] attention mask.
struct MaskPoint {
  int64_t b, h, i, j;
};

/// Rows (query positions) a sampled check reads in full: the first and last four, `spread`
/// evenly spaced and `spread` pseudo-random ones.
std::vector<int64_t> sampledRows(int64_t seq, int64_t spread, uint64_t seed) {
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < std::min<int64_t>(4, seq); ++i)
    rows.push_back(i), rows.push_back(seq - 1 - i);
  for (int64_t n = 0; n < spread; ++n) {
    rows.push_back(n * seq / spread + seq / (2 * spread));
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    rows.push_back((int64_t)((seed >> 33) % (uint64_t)seq));
  }
  llvm::sort(rows);
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

/// The [batch, seq] integer argument a mask slice reads (null when it reads none); failure
/// when it reads another or more than one.
FailureOr<Value> keyFlagArgument(ArrayRef<Value> arguments, int64_t batch, int64_t seq) {
  if (arguments.empty())
    return Value();
  auto type = dyn_cast<RankedTensorType>(arguments.front().getType());
  if (arguments.size() > 1 || !type || !isa<IntegerType>(type.getElementType()) ||
      type.getShape() != ArrayRef<int64_t>{batch, seq})
    return failure();
  return arguments.front();
}

/// The [batch, seq] key flags `keep` as a value of the argument's type.
Attribute keyFlags(Value arg, const std::vector<uint8_t> &keep) {
  HostValues values;
  values.ints.assign(keep.begin(), keep.end());
  return makeElements(cast<RankedTensorType>(arg.getType()), values);
}

/// probeMask for masks of at most kExhaustiveMaskElements: the slice folded whole, every
/// element compared. `shape` is the mask's shape padded to 4-D.
std::optional<MaskMeaning> probeMaskExhaustively(Value mask, MaskKind kind,
                                                 ArrayRef<int64_t> shape, int64_t batch,
                                                 int64_t seq, bool alsoCausal) {
  int64_t maskHeads = shape[1];
  std::optional<SliceEvaluator> eval = SliceEvaluator::build(mask);
  if (!eval)
    return std::nullopt;
  FailureOr<Value> arg = keyFlagArgument(eval->arguments(), batch, seq);
  if (failed(arg))
    return std::nullopt;

  // Which (b, h, i, j) the evaluated mask attends, flattened over [batch, maskHeads, seq,
  // seq]; nullopt when a value is neither "attend" nor "masked".
  auto attended = [&](Attribute result) -> std::optional<std::vector<uint8_t>> {
    std::optional<HostValues> values = readValues(result);
    if (!values)
      return std::nullopt;
    std::vector<uint8_t> out;
    out.reserve(batch * maskHeads * seq * seq);
    SmallVector<int64_t> outShape{batch, maskHeads, seq, seq};
    BroadcastWalk walk(outShape, shape);
    for (int64_t flat = 0, e = batch * maskHeads * seq * seq; flat < e; ++flat, walk.next()) {
      int64_t src = walk.index();
      std::optional<bool> attend = attends(kind, *values, src);
      if (!attend)
        return std::nullopt;
      int64_t i = (flat / seq) % seq, j = flat % seq;
      out.push_back(*attend && (!alsoCausal || j <= i));
    }
    return out;
  };
  // Whether `got` is the causal (or full) pattern with the keys where keep[b * seq + j] is
  // 0 masked.
  auto matches = [&](const std::vector<uint8_t> &got, bool causal,
                     const std::vector<uint8_t> *keep) {
    size_t flat = 0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < maskHeads; ++h)
        for (int64_t i = 0; i < seq; ++i)
          for (int64_t j = 0; j < seq; ++j, ++flat) {
            bool expect = (!causal || j <= i) && (!keep || (*keep)[b * seq + j]);
            if (got[flat] != expect)
              return false;
          }
    return true;
  };
  auto evaluateWith = [&](const std::vector<uint8_t> &keep) -> std::optional<std::vector<uint8_t>> {
    SmallVector<Attribute> bound;
    if (*arg)
      bound.push_back(keyFlags(*arg, keep));
    Attribute result = eval->evaluate(bound);
    if (!result)
      return std::nullopt;
    return attended(result);
  };

  std::vector<uint8_t> ones(batch * seq, 1);
  std::optional<std::vector<uint8_t>> base = evaluateWith(ones);
  if (!base)
    return std::nullopt;
  MaskMeaning meaning;
  if (matches(*base, /*causal=*/true, nullptr))
    meaning.causal = true;
  else if (!matches(*base, /*causal=*/false, nullptr))
    return std::nullopt;
  if (!*arg)
    return meaning;

  bool withKeyMask = true, withoutKeyMask = true;
  for (const std::vector<uint8_t> &keep : keyProbes(batch, seq)) {
    std::optional<std::vector<uint8_t>> got = evaluateWith(keep);
    if (!got)
      return std::nullopt;
    withKeyMask = withKeyMask && matches(*got, meaning.causal, &keep);
    withoutKeyMask = withoutKeyMask && matches(*got, meaning.causal, nullptr);
    if (!withKeyMask && !withoutKeyMask)
      return std::nullopt;
  }
  if (withKeyMask)
    meaning.keyMask = *arg;
  return meaning;
}

} // namespace

Value probeKeyMask(Value mask, int64_t batch, int64_t keys) {
  auto maskType = dyn_cast<RankedTensorType>(mask.getType());
  if (!maskType || maskType.getRank() > 4 || batch <= 0 || keys <= 0)
    return {};
  const MaskKind kind = maskKindOf(mask);
  if (kind == MaskKind::Additive && !isa<FloatType>(maskType.getElementType()))
    return {};
  // The mask's shape padded to 4-D: [batch or 1, heads or 1, 1, keys].
  SmallVector<int64_t> shape(4 - maskType.getRank(), 1);
  llvm::append_range(shape, maskType.getShape());
  if ((shape[0] != 1 && shape[0] != batch) || shape[2] != 1 || shape[3] != keys)
    return {};
  std::optional<SliceEvaluator> eval = SliceEvaluator::build(mask);
  if (!eval)
    return {};
  FailureOr<Value> arg = keyFlagArgument(eval->arguments(), batch, keys);
  if (failed(arg) || !*arg)
    return {};
  int64_t maskHeads = shape[1];
  // Whether the mask, with `keep` bound to the argument, attends (b, h, j) exactly where
  // keep[b * keys + j] is not 0, for every head.
  auto matches = [&](const std::vector<uint8_t> &keep) {
    std::optional<HostValues> values =
        readValues(eval->evaluate({keyFlags(*arg, keep)}));
    if (!values || (int64_t)values->size() != shape[0] * maskHeads * keys)
      return false;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < maskHeads; ++h)
        for (int64_t j = 0; j < keys; ++j) {
          int64_t n = ((shape[0] == 1 ? 0 : b) * maskHeads + h) * keys + j;
          std::optional<bool> attend = attends(kind, *values, n);
          if (!attend || *attend != (keep[b * keys + j] != 0))
            return false;
        }
    return true;
  };
  if (!matches(std::vector<uint8_t>(batch * keys, 1)))
    return {};
  for (const std::vector<uint8_t> &keep : keyProbes(batch, keys))
    if (!matches(keep))
      return {};
  return *arg;
}

std::optional<MaskMeaning> probeMask(Value mask, int64_t batch, int64_t heads, int64_t seq,
                                     bool alsoCausal) {
  auto maskType = dyn_cast<RankedTensorType>(mask.getType());
  if (!maskType || maskType.getRank() > 4 || batch <= 0 || heads <= 0 || seq <= 0)
    return std::nullopt;
  // The mask's shape, padded to 4-D, must broadcast to [batch, heads, seq, seq].
  SmallVector<int64_t> full{batch, heads, seq, seq};
  SmallVector<int64_t> shape(4 - maskType.getRank(), 1);
  llvm::append_range(shape, maskType.getShape());
  for (int d = 0; d < 4; ++d)
    if (shape[d] != 1 && shape[d] != full[d])
      return std::nullopt;
  const MaskKind kind = maskKindOf(mask);
  if (kind == MaskKind::Additive && !isa<FloatType>(maskType.getElementType()))
    return std::nullopt;
  // The mask is the same for every head when its head dimension is 1: look at one.
  int64_t maskHeads = shape[1];
  if (batch * maskHeads * seq * seq <= kExhaustiveMaskElements)
    return probeMaskExhaustively(mask, kind, shape, batch, seq, alsoCausal);

  std::optional<SlicePointEvaluator> eval = SlicePointEvaluator::build(mask);
  if (!eval)
    return std::nullopt;
  FailureOr<Value> arg = keyFlagArgument(eval->arguments(), batch, seq);
  if (failed(arg))
    return std::nullopt;
  SmallVector<int64_t> probedShape{batch, maskHeads, seq, seq};
  // What the mask selects at `points` with `keep` bound to the argument; nullopt when a
  // value is neither "attend" nor "masked".
  auto selectedAt = [&](const std::vector<MaskPoint> &points,
                        const std::vector<uint8_t> &keep) -> std::optional<std::vector<uint8_t>> {
    std::vector<int64_t> flat;
    flat.reserve(points.size());
    for (const MaskPoint &p : points)
      flat.push_back(broadcastSourceIndex(((p.b * maskHeads + p.h) * seq + p.i) * seq + p.j,
                                          probedShape, shape));
    SmallVector<Attribute> bound;
    if (*arg)
      bound.push_back(keyFlags(*arg, keep));
    std::optional<HostValues> got = eval->evaluate(bound, flat);
    if (!got || got->size() != points.size())
      return std::nullopt;
    std::vector<uint8_t> selected;
    selected.reserve(points.size());
    for (size_t n = 0; n < points.size(); ++n) {
      std::optional<bool> attend = attends(kind, *got, n);
      if (!attend)
        return std::nullopt;
      selected.push_back(*attend && (!alsoCausal || points[n].j <= points[n].i));
    }
    return selected;
  };
  // Whether `selected` is the causal (or full) pattern with the keys where keep[b * seq + j]
  // is 0 masked.
  auto matches = [&](const std::vector<MaskPoint> &points, const std::vector<uint8_t> &selected,
                     bool causal, const std::vector<uint8_t> *keep) {
    for (size_t n = 0; n < points.size(); ++n) {
      const MaskPoint &p = points[n];
      bool expect = (!causal || p.j <= p.i) && (!keep || (*keep)[p.b * seq + p.j]);
      if (selected[n] != expect)
        return false;
    }
    return true;
  };

  // With every key attended, batches differ only where the mask's constants do: the
  // first, middle and last stand for them (the key probes below read every batch).
  SmallVector<int64_t> batchSamples{0, batch / 2, batch - 1};
  batchSamples.erase(std::unique(batchSamples.begin(), batchSamples.end()), batchSamples.end());
  SmallVector<int64_t> headSamples{0, maskHeads / 2, maskHeads - 1};
  headSamples.erase(std::unique(headSamples.begin(), headSamples.end()), headSamples.end());
  std::vector<MaskPoint> basePoints;
  for (int64_t b : batchSamples)
    for (int64_t h : headSamples) {
      for (int64_t i : sampledRows(seq, 8, 0x2545F4914F6CDD1Dull + b))
        for (int64_t j = 0; j < seq; ++j)
          basePoints.push_back({b, h, i, j});
      for (int64_t j : sampledRows(seq, 2, 0x9E3779B97F4A7C15ull + b))
        for (int64_t i = 0; i < seq; ++i)
          basePoints.push_back({b, h, i, j});
      for (int64_t i = 0; i < seq; ++i)
        for (int64_t j = std::max<int64_t>(0, i - 1); j <= std::min(seq - 1, i + 1); ++j)
          basePoints.push_back({b, h, i, j});
    }
  std::vector<uint8_t> ones(batch * seq, 1);
  std::optional<std::vector<uint8_t>> base = selectedAt(basePoints, ones);
  if (!base)
    return std::nullopt;
  MaskMeaning meaning;
  if (matches(basePoints, *base, /*causal=*/true, nullptr))
    meaning.causal = true;
  else if (!matches(basePoints, *base, /*causal=*/false, nullptr))
    return std::nullopt;
  if (!*arg)
    return meaning;

  // The key probes look at the last row (which sees every key under causality) and three
  // others in each batch.
  std::vector<MaskPoint> keyPoints;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i : {seq - 1, seq / 2, std::min<int64_t>(1, seq - 1), (seq * 3) / 4 + 1})
      for (int64_t j = 0; j < seq; ++j)
        keyPoints.push_back({b, 0, std::min(i, seq - 1), j});
  bool withKeyMask = true, withoutKeyMask = true;
  for (const std::vector<uint8_t> &keep : keyProbes(batch, seq)) {
    std::optional<std::vector<uint8_t>> got = selectedAt(keyPoints, keep);
    if (!got)
      return std::nullopt;
    withKeyMask = withKeyMask && matches(keyPoints, *got, meaning.causal, &keep);
    withoutKeyMask = withoutKeyMask && matches(keyPoints, *got, meaning.causal, nullptr);
    if (!withKeyMask && !withoutKeyMask)
      return std::nullopt;
  }
  if (withKeyMask)
    meaning.keyMask = *arg;
  return meaning;
}

} // namespace sinter::passes
