// Import of MatMul, Gemm, Transpose and Reshape.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

LogicalResult importMatMul(NodeImporter &n) {
  auto a = n.inputType(0), b = n.inputType(1);
  if (!a || !b)
    return failure();
  auto shape = matmulShape(a.getShape(), b.getShape());
  if (failed(shape))
    return n.fail("contraction dimensions do not match");
  auto op = MatMulOp::create(n.builder, n.loc, n.tensorType(*shape, a.getElementType()),
                             *n.input(0), *n.input(1));
  return n.setResult(op);
}

LogicalResult importGemm(NodeImporter &n) {
  auto a = n.inputType(0), b = n.inputType(1);
  if (!a || !b)
    return failure();
  if (a.getRank() != 2 || b.getRank() != 2)
    return n.fail("Gemm operands must be 2-D");
  bool ta = n.attrInt("transA", 0), tb = n.attrInt("transB", 0);
  int64_t m = ta ? a.getDimSize(1) : a.getDimSize(0);
  int64_t nn = tb ? b.getDimSize(0) : b.getDimSize(1);
  Value c;
  if (n.hasInput(2)) {
    auto v = n.input(2);
    if (failed(v))
      return failure();
    c = *v;
  }
  auto op = GemmOp::create(n.builder, n.loc, n.tensorType({m, nn}, a.getElementType()),
                           *n.input(0), *n.input(1), c,
                           n.builder.getF32FloatAttr(n.attrFloat("alpha", 1.0f)),
                           n.builder.getF32FloatAttr(n.attrFloat("beta", 1.0f)),
                           n.builder.getBoolAttr(ta), n.builder.getBoolAttr(tb));
  return n.setResult(op);
}

LogicalResult importTranspose(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  SmallVector<int64_t> perm;
  if (auto given = n.attrInts("perm"))
    perm = *given;
  else
    for (int64_t d = in.getRank() - 1; d >= 0; --d)
      perm.push_back(d);
  if ((int64_t)perm.size() != in.getRank())
    return n.fail("perm has " + Twine(perm.size()) + " entries for a rank-" +
                  Twine(in.getRank()) + " input");
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank())
      return n.fail("perm entry " + Twine(p) + " is out of range");
    shape.push_back(in.getDimSize(p));
  }
  auto op = TransposeOp::create(n.builder, n.loc, n.tensorType(shape, in.getElementType()),
                                *n.input(0), n.builder.getDenseI64ArrayAttr(perm));
  return n.setResult(op);
}

LogicalResult importReshape(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  auto target = n.constantInts(1);
  if (failed(target))
    return failure();
  bool allowZero = n.attrInt("allowzero", 0);
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < target->size(); ++i) {
    int64_t d = (*target)[i];
    if (d == 0 && !allowZero) {
      if ((int64_t)i >= in.getRank())
        return n.fail("shape entry 0 at position " + Twine(i) + " copies a missing input dimension");
      d = in.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        return n.fail("shape has more than one -1");
      inferred = i;
    } else if (d < 0) {
      return n.fail("shape entry " + Twine(d) + " is negative");
    } else if (d != 0 && known > kMaxElements / d) {
      return n.fail("shape input holds too many elements (more than 2^48)");
    } else {
      known *= d;
    }
    shape.push_back(d);
  }
  int64_t total = in.getNumElements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return n.fail("cannot infer the -1 dimension");
    shape[inferred] = total / known;
  } else if (known != total) {
    return n.fail("shape holds " + Twine(known) + " elements, the input " + Twine(total));
  }
  auto op = ReshapeOp::create(n.builder, n.loc, n.tensorType(shape, in.getElementType()),
                              *n.input(0), *n.input(1));
  return n.setResult(op);
}

} // namespace

void registerMatrixImports(OpImportRegistry &r) {
  r["MatMul"] = {importMatMul};
  r["Gemm"] = {importGemm};
  r["Transpose"] = {importTranspose};
  r["Reshape"] = {importReshape, 5}; // 14 added allowzero (0 before: a 0 copies the dimension)
}

} // namespace sinter::import
