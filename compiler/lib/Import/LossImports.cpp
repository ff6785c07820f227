// Import of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (what a training or
// evaluation export ends with) as the ops of their definitions: the target class's entry
// gathered along the class axis, weighted, ignore_index masked out, then reduced (none, sum,
// or mean over the weights of the entries counted).
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// The loss of `logProb` [N, C, d...] at `target` [N, d...] (with optional class weights
/// [C]): -logProb[n, target, d...] * weight[target], 0 where target == ignore_index, reduced.
FailureOr<Value> negativeLogLikelihood(NodeImporter &n, Value logProb, Value target,
                                       Value weight) {
  auto probType = cast<RankedTensorType>(logProb.getType());
  auto targetType = cast<RankedTensorType>(target.getType());
  Type et = probType.getElementType(), i64 = n.builder.getI64Type(), i1 = n.builder.getI1Type();
  ArrayRef<int64_t> shape = probType.getShape();
  if (probType.getRank() < 2)
    return n.fail("the input must be [N, C, d...] (rank >= 2)");
  auto targetElement = dyn_cast<IntegerType>(targetType.getElementType());
  if (!targetElement || targetElement.getWidth() < 32)
    return n.fail("the target must be int32 or int64");
  SmallVector<int64_t> targetShape(shape);
  targetShape.erase(targetShape.begin() + 1);
  if (targetType.getShape() != ArrayRef<int64_t>(targetShape))
    return n.fail("the target must be [" + shapeText(targetShape) + "] for input [" +
                  shapeText(shape) + "]");
  const int64_t classes = shape[1];
  if (weight && cast<RankedTensorType>(weight.getType()) != n.tensorType({classes}, et))
    return n.fail("the weights must be [" + Twine(classes) + "] of the input's type");
  std::string reduction = n.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return n.fail("attribute 'reduction' = '" + reduction + "' (none, sum or mean)");

  auto wideT = n.tensorType(targetShape, i64);
  auto floatT = n.tensorType(targetShape, et);
  Value classOf = targetType.getElementType() == i64
                      ? target
                      : CastOp::create(n.builder, n.loc, wideT, target).getResult();
  // Ignored entries read class 0 (their index may be anything), and count nothing.
  Value counted;
  if (const onnx::AttributeProto *ignore = n.attr("ignore_index")) {
    (void)ignore;
    Value ignored = EqualOp::create(n.builder, n.loc, n.tensorType(targetShape, i1), classOf,
                                    n.integerScalar(i64, n.attrInt("ignore_index", 0)));
    counted = UnaryFnOp::create(n.builder, n.loc, n.tensorType(targetShape, i1), ignored,
                                n.builder.getStringAttr("not"), n.builder.getF32FloatAttr(0),
                                n.builder.getF32FloatAttr(0));
    classOf = WhereOp::create(n.builder, n.loc, wideT, ignored, n.integerScalar(i64, 0), classOf);
  }
  SmallVector<int64_t> picked(shape);
  picked[1] = 1;
  Value index = n.reshape(classOf, picked);
  Value chosen = GatherElementsOp::create(n.builder, n.loc, n.tensorType(picked, et), logProb,
                                          index, n.builder.getI64IntegerAttr(1));
  Value loss = NegOp::create(n.builder, n.loc, floatT, n.reshape(chosen, targetShape));
  Value w; // each entry's weight, or null for 1
  if (weight)
    w = GatherOp::create(n.builder, n.loc, floatT, weight, classOf, n.builder.getI64IntegerAttr(0));
  if (counted)
    w = WhereOp::create(n.builder, n.loc, floatT, counted, w ? w : n.scalar(et, 1.0), n.scalar(et, 0.0));
  if (w)
    loss = MulOp::create(n.builder, n.loc, floatT, loss, w);
  if (reduction == "none")
    return loss;
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < (int64_t)targetShape.size(); ++d)
    all.push_back(d);
  auto scalarType = n.tensorType({}, et);
  auto sumOf = [&](Value v) -> Value {
    return ReduceOp::create(n.builder, n.loc, scalarType, v, n.builder.getStringAttr("sum"),
                            n.builder.getDenseI64ArrayAttr(all), n.builder.getBoolAttr(false));
  };
  Value total = sumOf(loss);
  if (reduction == "sum")
    return total;
  if (!w) {
    int64_t count = 1;
    for (int64_t d : targetShape)
      count *= d;
    return DivOp::create(n.builder, n.loc, scalarType, total, n.scalar(et, double(count))).getResult();
  }
  return DivOp::create(n.builder, n.loc, scalarType, total, sumOf(w)).getResult();
}

LogicalResult importNegativeLogLikelihoodLoss(NodeImporter &n) {
  auto input = n.inputType(0), target = n.inputType(1);
  if (!input || !target || failed(requireFloat(n, input, "input")))
    return failure();
  auto loss = negativeLogLikelihood(n, *n.input(0), *n.input(1),
                                    n.hasInput(2) ? *n.input(2) : Value());
  return failed(loss) ? failure() : n.setOutput(0, *loss);
}

/// SoftmaxCrossEntropyLoss(scores, labels, weights?): the NLL of log_softmax(scores) along
/// the class axis; the second output is that log-probability.
LogicalResult importSoftmaxCrossEntropyLoss(NodeImporter &n) {
  auto scores = n.inputType(0), labels = n.inputType(1);
  if (!scores || !labels || failed(requireFloat(n, scores, "scores")))
    return failure();
  if (scores.getRank() < 2)
    return n.fail("scores must be [N, C, d...] (rank >= 2)");
  Value logProb = LogSoftmaxOp::create(n.builder, n.loc, scores, *n.input(0),
                                       n.builder.getI64IntegerAttr(1));
  auto loss = negativeLogLikelihood(n, logProb, *n.input(1), n.hasInput(2) ? *n.input(2) : Value());
  if (failed(loss) || failed(n.setOutput(0, *loss)))
    return failure();
  if (n.node.output_size() > 1 && !n.node.output(1).empty())
    return n.setOutput(1, logProb);
  return success();
}

} // namespace

void registerLossImports(OpImportRegistry &r) {
  r["NegativeLogLikelihoodLoss"] = {importNegativeLogLikelihoodLoss, 13};
  r["SoftmaxCrossEntropyLoss"] = {importSoftmaxCrossEntropyLoss, 13};
}

} // namespace sinter::import
