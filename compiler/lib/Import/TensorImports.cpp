// Import of reductions, normalization, softmax, masks and attention: ReduceMean, Softmax,
// RMSNormalization, Trilu, Attention.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <cmath>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {


LogicalResult importSoftmax(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in || failed(requireFloat(n, in, "Softmax input")))
    return failure();
  if (in.getRank() == 0)
    return n.fail("Softmax input must have rank >= 1");
  auto axis = normalizeAxis(n, n.attrInt("axis", -1), in.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  auto op = SoftmaxOp::create(n.builder, n.loc, in, *n.input(0),
                              n.builder.getI64IntegerAttr(*axis));
  return n.setResult(op);
}

LogicalResult importRMSNormalization(NodeImporter &n) {
  auto in = n.inputType(0), scale = n.inputType(1);
  if (!in || !scale || failed(requireFloat(n, in, "input X")) ||
      failed(requireFloat(n, scale, "input scale")))
    return failure();
  if (int64_t stash = n.attrInt("stash_type", 1); stash != 1)
    return n.fail("attribute 'stash_type' = " + Twine(stash) +
                  " is not supported (only 1, float32)");
  if (in.getRank() == 0)
    return n.fail("input X must have rank >= 1");
  auto axis = normalizeAxis(n, n.attrInt("axis", -1), in.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  auto b = broadcastShapes(in.getShape(), scale.getShape());
  if (scale.getRank() > in.getRank() - *axis || failed(b) ||
      ArrayRef<int64_t>(*b) != in.getShape())
    return n.fail("scale does not broadcast to the normalized dimensions of X");
  float epsilon = n.attrFloat("epsilon", 1e-5f);
  if (!(epsilon >= 0) || !std::isfinite(epsilon))
    return n.fail("attribute 'epsilon' must be finite and non-negative");
  auto op = RMSNormalizationOp::create(
      n.builder, n.loc, n.tensorType(in.getShape(), scale.getElementType()), *n.input(0),
      *n.input(1), n.builder.getI64IntegerAttr(*axis), n.builder.getF32FloatAttr(epsilon));
  return n.setResult(op);
}

LogicalResult importTrilu(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  if (in.getRank() < 2)
    return n.fail("Trilu input must have rank >= 2");
  int64_t k = 0;
  if (n.hasInput(1)) {
    auto given = n.constantInts(1);
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return n.fail("input k must hold exactly one value");
    k = (*given)[0];
  }
  bool upper = n.attrInt("upper", 1) != 0;
  auto op = TriluOp::create(n.builder, n.loc, in, *n.input(0), n.builder.getBoolAttr(upper),
                            n.builder.getI64IntegerAttr(k));
  return n.setResult(op);
}

LogicalResult importAttention(NodeImporter &n) {
  if (n.hasInput(4) || n.hasInput(5))
    return n.fail("inputs past_key/past_value (KV cache) are not supported");
  if (n.numInputs() > 6)
    return n.fail("inputs beyond past_value are not supported");
  for (int i = 1; i < n.node.output_size(); ++i)
    if (!n.node.output(i).empty())
      return n.fail("output " + Twine(i) + " ('" + n.node.output(i) +
                    "'; present_key/present_value/qk_matmul_output) is not supported: only "
                    "output 0 (Y)");
  if (float softcap = n.attrFloat("softcap", 0.0f); softcap != 0.0f)
    return n.fail("attribute 'softcap' = " + Twine(std::to_string(softcap)) +
                  " is not supported (only 0)");
  if (int64_t mode = n.attrInt("qk_matmul_output_mode", 0); mode != 0)
    return n.fail("attribute 'qk_matmul_output_mode' = " + Twine(mode) +
                  " is not supported (only 0)");
  if (const auto *p = n.attr("softmax_precision"); p && p->i() != 1)
    return n.fail("attribute 'softmax_precision' = " + Twine(p->i()) +
                  " is not supported (only 1, float32)");

  auto q = n.inputType(0), k = n.inputType(1), v = n.inputType(2);
  if (!q || !k || !v || failed(requireFloat(n, q, "Q")))
    return failure();
  Type et = q.getElementType();
  if (k.getElementType() != et || v.getElementType() != et)
    return n.fail("Q, K and V must have the same element type");
  int64_t rank = q.getRank();
  if ((rank != 3 && rank != 4) || k.getRank() != rank || v.getRank() != rank)
    return n.fail("Q, K and V must all be 3-D or all 4-D");

  int64_t qHeads, kvHeads;
  const auto *qAttr = n.attr("q_num_heads"), *kvAttr = n.attr("kv_num_heads");
  if (rank == 3) {
    if (!qAttr || !kvAttr)
      return n.fail("attributes 'q_num_heads' and 'kv_num_heads' are required for 3-D inputs");
    qHeads = qAttr->i();
    kvHeads = kvAttr->i();
  } else {
    qHeads = q.getDimSize(1);
    kvHeads = k.getDimSize(1);
    if (qAttr && qAttr->i() != qHeads)
      return n.fail("attribute 'q_num_heads' = " + Twine(qAttr->i()) +
                    " does not match Q's head dimension " + Twine(qHeads));
    if (kvAttr && kvAttr->i() != kvHeads)
      return n.fail("attribute 'kv_num_heads' = " + Twine(kvAttr->i()) +
                    " does not match K's head dimension " + Twine(kvHeads));
  }
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads != 0)
    return n.fail("attribute 'q_num_heads' (" + Twine(qHeads) +
                  ") must be a positive multiple of 'kv_num_heads' (" + Twine(kvHeads) + ")");

  Value mask;
  std::optional<ArrayRef<int64_t>> maskShape;
  RankedTensorType maskType;
  if (n.hasInput(3)) {
    maskType = n.inputType(3);
    if (!maskType)
      return failure();
    Type mt = maskType.getElementType();
    if (!mt.isInteger(1) && mt != et)
      return n.fail("attn_mask must be bool or of Q's element type; integer masks are not "
                    "supported");
    mask = *n.input(3);
    maskShape = maskType.getShape();
  }
  std::string error;
  auto shape = AttentionOp::inferShape(q.getShape(), k.getShape(), v.getShape(), maskShape,
                                       qHeads, kvHeads, error);
  if (failed(shape))
    return n.fail(error);
  int64_t headSize = rank == 4 ? q.getDimSize(3) : q.getDimSize(2) / qHeads;
  float scale = n.attr("scale") ? n.attrFloat("scale", 1.0f)
                                : (float)(1.0 / std::sqrt((double)std::max<int64_t>(headSize, 1)));
  auto op = AttentionOp::create(n.builder, n.loc, n.tensorType(*shape, et), *n.input(0),
                                *n.input(1), *n.input(2), mask,
                                n.builder.getI64IntegerAttr(qHeads),
                                n.builder.getI64IntegerAttr(kvHeads),
                                n.builder.getF32FloatAttr(scale),
                                n.builder.getBoolAttr(n.attrInt("is_causal", 0) != 0));
  return n.setResult(op);
}

} // namespace

void registerTensorImports(OpImportRegistry &r) {
  r["Softmax"] = {importSoftmax, 13};
  r["RMSNormalization"] = {importRMSNormalization, 23};
  r["Trilu"] = {importTrilu, 14};
  r["Attention"] = {importAttention, 23};
}

} // namespace sinter::import
