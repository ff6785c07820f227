// Import of Einsum as transposes, reshapes, reductions and batched matrix products: each
// operand's repeated labels become diagonals (a gather), labels no one else needs are summed
// out, and operands combine pairwise, left to right, as one batched product each (batch labels
// shared and kept, contracted labels shared and dropped, the rest on either side), the result
// transposed to the output's order. Ellipses broadcast as numpy's do.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include "llvm/ADT/SetVector.h"

#include <cctype>
#include <map>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// A tensor with one label per dimension: letters by their character, ellipsis dimensions as
/// 1000 + their position among the broadcast ellipsis dimensions.
struct Labeled {
  Value value;
  SmallVector<int> labels;
  RankedTensorType type() const { return cast<RankedTensorType>(value.getType()); }
  int64_t size(int label) const {
    for (size_t i = 0; i < labels.size(); ++i)
      if (labels[i] == label)
        return type().getDimSize(i);
    return 1;
  }
};

constexpr int kEllipsis = 1000;

Value transposeTo(NodeImporter &n, Labeled &t, ArrayRef<int> order) {
  SmallVector<int64_t> perm, shape;
  for (int label : order) {
    auto it = llvm::find(t.labels, label);
    perm.push_back(it - t.labels.begin());
    shape.push_back(t.type().getDimSize(perm.back()));
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == int64_t(i);
  if (!identity)
    t.value = TransposeOp::create(n.builder, n.loc, t.type().clone(shape), t.value,
                                  n.builder.getDenseI64ArrayAttr(perm));
  t.labels.assign(order.begin(), order.end());
  return t.value;
}

/// Replaces each repeated label of `t` by its diagonal.
LogicalResult takeDiagonals(NodeImporter &n, Labeled &t) {
  for (size_t a = 0; a < t.labels.size(); ++a)
    for (size_t b = a + 1; b < t.labels.size(); ++b) {
      if (t.labels[a] != t.labels[b])
        continue;
      const int64_t size = t.type().getDimSize(a);
      if (t.type().getDimSize(b) != size)
        return n.fail("label '" + Twine(char(t.labels[a])) + "' has sizes " + Twine(size) +
                      " and " + Twine(t.type().getDimSize(b)) + " in one operand");
      // [..., size, size] with the pair last, flattened, every (size + 1)-th entry.
      SmallVector<int> order;
      for (size_t i = 0; i < t.labels.size(); ++i)
        if (i != a && i != b) order.push_back(t.labels[i]);
      int pairLabel = t.labels[a];
      order.push_back(pairLabel);
      order.push_back(-1); // the second copy, renamed
      t.labels[b] = -1;
      transposeTo(n, t, order);
      SmallVector<int64_t> shape(t.type().getShape().drop_back(2));
      shape.push_back(size * size);
      Value flat = n.reshape(t.value, shape);
      SmallVector<int64_t> diagonal(size);
      for (int64_t i = 0; i < size; ++i) diagonal[i] = i * (size + 1);
      shape.back() = size;
      t.value = GatherOp::create(
          n.builder, n.loc, t.type().clone(shape), flat,
          n.constant(DenseElementsAttr::get(n.tensorType({size}, n.builder.getI64Type()),
                                            ArrayRef(diagonal))),
          n.builder.getI64IntegerAttr(shape.size() - 1));
      t.labels.pop_back();
      return takeDiagonals(n, t);
    }
  return success();
}

/// Sums out the labels of `t` that are not in `keep`.
void sumOut(NodeImporter &n, Labeled &t, const llvm::SetVector<int> &keep) {
  SmallVector<int64_t> axes, shape;
  SmallVector<int> labels;
  for (size_t i = 0; i < t.labels.size(); ++i) {
    if (keep.contains(t.labels[i])) {
      labels.push_back(t.labels[i]);
      shape.push_back(t.type().getDimSize(i));
    } else {
      axes.push_back(i);
    }
  }
  if (axes.empty())
    return;
  t.value = ReduceOp::create(n.builder, n.loc, t.type().clone(shape), t.value,
                             n.builder.getStringAttr("sum"), n.builder.getDenseI64ArrayAttr(axes),
                             n.builder.getBoolAttr(false));
  t.labels = labels;
}

/// `t` with label `label` broadcast from 1 to `size`.
void broadcastLabel(NodeImporter &n, Labeled &t, int label, int64_t size) {
  SmallVector<int64_t> shape(t.type().getShape());
  for (size_t i = 0; i < t.labels.size(); ++i)
    if (t.labels[i] == label)
      shape[i] = size;
  auto shapeType = RankedTensorType::get({(int64_t)shape.size()}, n.builder.getI64Type());
  t.value = ExpandOp::create(n.builder, n.loc, t.type().clone(shape), t.value,
                             n.constant(DenseElementsAttr::get(shapeType, ArrayRef(shape))));
}

/// A and B as one batched product, keeping the labels in `keep`.
FailureOr<Labeled> contractPair(NodeImporter &n, Labeled a, Labeled b,
                                const llvm::SetVector<int> &keep) {
  SmallVector<int> batch, contracted, left, right;
  for (int l : a.labels) {
    const bool inB = llvm::is_contained(b.labels, l);
    (inB ? (keep.contains(l) ? batch : contracted) : left).push_back(l);
  }
  for (int l : b.labels)
    if (!llvm::is_contained(a.labels, l))
      right.push_back(l);
  for (int l : llvm::concat<int>(batch, contracted)) {
    const int64_t sa = a.size(l), sb = b.size(l);
    if (sa == sb)
      continue;
    if (sa != 1 && sb != 1)
      return n.fail("a label has sizes " + Twine(sa) + " and " + Twine(sb) +
                    " in two operands");
    broadcastLabel(n, sa == 1 ? a : b, l, std::max(sa, sb));
  }
  auto volume = [&](const Labeled &t, ArrayRef<int> labels) {
    int64_t v = 1;
    for (int l : labels) v *= t.size(l);
    return v;
  };
  const int64_t B = volume(a, batch), L = volume(a, left), K = volume(a, contracted),
                R = volume(b, right);
  SmallVector<int> orderA(batch), orderB(batch);
  orderA.append(left.begin(), left.end());
  orderA.append(contracted.begin(), contracted.end());
  orderB.append(contracted.begin(), contracted.end());
  orderB.append(right.begin(), right.end());
  Value lhs = n.reshape(transposeTo(n, a, orderA), {B, L, K});
  Value rhs = n.reshape(transposeTo(n, b, orderB), {B, K, R});
  Type et = a.type().getElementType();
  Value product = MatMulOp::create(n.builder, n.loc, n.tensorType({B, L, R}, et), lhs, rhs);
  Labeled out;
  SmallVector<int64_t> shape;
  for (int l : batch) out.labels.push_back(l), shape.push_back(a.size(l));
  for (int l : left) out.labels.push_back(l), shape.push_back(a.size(l));
  for (int l : right) out.labels.push_back(l), shape.push_back(b.size(l));
  out.value = n.reshape(product, shape);
  return out;
}

/// The labels of one term ("ij", "...ij"), ellipsis dimensions aligned to the right of
/// `ellipsisRank` broadcast dimensions; fails on a bad character.
FailureOr<SmallVector<int>> parseTerm(NodeImporter &n, StringRef term, int64_t rank,
                                      int64_t &ellipsisRank, bool output) {
  SmallVector<int> labels;
  size_t dots = term.find("...");
  const int64_t letters = int64_t(term.size()) - (dots == StringRef::npos ? 0 : 3);
  const int64_t own = dots == StringRef::npos ? 0 : (output ? ellipsisRank : rank - letters);
  if (own < 0 || (!output && dots == StringRef::npos && letters != rank))
    return n.fail("term '" + term + "' does not match its operand of rank " + Twine(rank));
  if (!output)
    ellipsisRank = std::max(ellipsisRank, own);
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      for (int64_t e = 0; e < own; ++e) labels.push_back(kEllipsis + int(e));
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(term[i])))
      return n.fail("equation character '" + Twine(term[i]) + "' is not a letter or '...'");
    labels.push_back(term[i]);
  }
  return labels;
}

LogicalResult importEinsum(NodeImporter &n) {
  std::string equation;
  for (char c : n.attrString("equation", "")) if (c != ' ') equation += c;
  if (equation.empty() && !n.attr("equation"))
    return n.fail("attribute 'equation' is required");
  StringRef eq(equation);
  auto [inputsText, outputText] = eq.split("->");
  const bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> terms;
  inputsText.split(terms, ',');
  if (terms.size() != n.numInputs())
    return n.fail("the equation has " + Twine(terms.size()) + " input terms for " +
                  Twine(n.numInputs()) + " inputs");
  SmallVector<Labeled> operands;
  int64_t ellipsisRank = 0;
  SmallVector<SmallVector<int>> rawLabels;
  for (unsigned i = 0; i < terms.size(); ++i) {
    auto type = n.inputType(i);
    if (!type)
      return failure();
    auto labels = parseTerm(n, terms[i], type.getRank(), ellipsisRank, false);
    if (failed(labels))
      return failure();
    rawLabels.push_back(*labels);
  }
  // Ellipsis dimensions count from the right: an operand with fewer broadcasts over the rest.
  for (unsigned i = 0; i < terms.size(); ++i) {
    int64_t own = 0;
    for (int l : rawLabels[i]) own += l >= kEllipsis;
    for (int &l : rawLabels[i])
      if (l >= kEllipsis) l += int(ellipsisRank - own);
    operands.push_back({*n.input(i), rawLabels[i]});
  }
  SmallVector<int> outLabels;
  if (explicitOutput) {
    auto parsed = parseTerm(n, outputText, 0, ellipsisRank, true);
    if (failed(parsed))
      return failure();
    outLabels = *parsed;
  } else { // the ellipsis, then the letters seen once, in alphabetical order
    for (int64_t e = 0; e < ellipsisRank; ++e) outLabels.push_back(kEllipsis + int(e));
    std::map<int, int> count;
    for (auto &t : rawLabels)
      for (int l : t) if (l < kEllipsis) ++count[l];
    for (auto [l, c] : count) if (c == 1) outLabels.push_back(l);
  }
  for (Labeled &t : operands)
    if (failed(takeDiagonals(n, t)))
      return failure();
  if (operands.size() > 1 && !isa<FloatType>(operands[0].type().getElementType()))
    return n.fail("Einsum of several operands takes floating-point inputs (a matrix product)");
  // Labels needed after operand i: the output's and those of the operands after it.
  auto needed = [&](size_t from) {
    llvm::SetVector<int> keep(outLabels.begin(), outLabels.end());
    for (size_t j = from; j < operands.size(); ++j) keep.insert(operands[j].labels.begin(), operands[j].labels.end());
    return keep;
  };
  Labeled acc = operands[0];
  {
    llvm::SetVector<int> keep = needed(1);
    sumOut(n, acc, keep);
  }
  for (size_t i = 1; i < operands.size(); ++i) {
    Labeled next = operands[i];
    llvm::SetVector<int> keep = needed(i + 1);
    // Labels only this operand has and no one needs: summed out first.
    llvm::SetVector<int> keepNext(keep);
    keepNext.insert(acc.labels.begin(), acc.labels.end());
    sumOut(n, next, keepNext);
    auto combined = contractPair(n, acc, next, keep);
    if (failed(combined))
      return failure();
    acc = *combined;
  }
  for (int l : outLabels)
    if (!llvm::is_contained(acc.labels, l))
      return n.fail("output label '" + Twine(l < kEllipsis ? char(l) : '.') +
                    "' is in no input term");
  if (outLabels.empty() && acc.labels.empty())
    return n.setOutput(0, acc.value);
  return n.setOutput(0, transposeTo(n, acc, outLabels));
}

} // namespace

void registerEinsumImports(OpImportRegistry &r) { r["Einsum"] = {importEinsum, 12}; }

} // namespace sinter::import
