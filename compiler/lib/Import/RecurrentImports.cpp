// Import of RNN, GRU and LSTM, unrolled over their compile-time sequence length: the input's
// projection for every step is one matrix product up front; each step is the recurrent
// product and the gate arithmetic (which the graph phase fuses into one generated kernel).
// Directions run one after the other. With sequence_lens, a step past a sequence's length
// keeps its state and writes zeros to Y; the reverse direction walks the steps from the last
// one down, so each sequence starts at its own last element, as ONNX defines.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

enum class Cell { Rnn, Gru, Lstm };

/// The most unrolled steps (times directions) one node may have.
constexpr int64_t kMaxSteps = 4096;

/// One entry of the node's `activations`, with its alpha / beta.
struct Activation {
  std::string name;
  float alpha = 0, beta = 0;
};

/// Builds the ops of one recurrent node; values are [batch, width] unless said otherwise.
class RecurrentBuilder {
public:
  RecurrentBuilder(NodeImporter &n, Type et) : n(n), et(et) {}

  RankedTensorType type(ArrayRef<int64_t> shape) { return n.tensorType(shape, et); }

  Value add(Value a, Value b, ArrayRef<int64_t> shape) {
    return AddOp::create(n.builder, n.loc, type(shape), a, b);
  }
  Value mul(Value a, Value b, ArrayRef<int64_t> shape) {
    return MulOp::create(n.builder, n.loc, type(shape), a, b);
  }
  Value sub(Value a, Value b, ArrayRef<int64_t> shape) {
    return SubOp::create(n.builder, n.loc, type(shape), a, b);
  }
  Value scalar(double v) { return n.scalar(et, v); }
  Value unary(StringRef fn, Value x, ArrayRef<int64_t> shape, float alpha = 0, float beta = 0) {
    return UnaryFnOp::create(n.builder, n.loc, type(shape), x, n.builder.getStringAttr(fn),
                             n.builder.getF32FloatAttr(alpha), n.builder.getF32FloatAttr(beta));
  }
  /// Columns [begin, begin + width) of x [rows, columns].
  Value columns(Value x, int64_t begin, int64_t width) {
    auto shape = cast<RankedTensorType>(x.getType()).getShape();
    return SliceOp::create(n.builder, n.loc, type({shape[0], width}), x,
                           n.builder.getDenseI64ArrayAttr({0, begin}),
                           n.builder.getDenseI64ArrayAttr({shape[0], begin + width}),
                           n.builder.getDenseI64ArrayAttr({1, 1}));
  }
  /// Entry `index` of x's first axis, without that axis.
  Value row(Value x, int64_t index) {
    auto shape = cast<RankedTensorType>(x.getType()).getShape();
    SmallVector<int64_t> starts(shape.size(), 0), ends(shape), steps(shape.size(), 1);
    starts[0] = index;
    ends[0] = index + 1;
    SmallVector<int64_t> sliced(shape);
    sliced[0] = 1;
    Value one = SliceOp::create(n.builder, n.loc, type(sliced), x,
                                n.builder.getDenseI64ArrayAttr(starts),
                                n.builder.getDenseI64ArrayAttr(ends),
                                n.builder.getDenseI64ArrayAttr(steps));
    return n.reshape(one, shape.drop_front());
  }
  Value matmul(Value a, Value b, ArrayRef<int64_t> shape) {
    return MatMulOp::create(n.builder, n.loc, type(shape), a, b);
  }
  Value transpose2d(Value x) {
    auto shape = cast<RankedTensorType>(x.getType()).getShape();
    return TransposeOp::create(n.builder, n.loc, type({shape[1], shape[0]}), x,
                               n.builder.getDenseI64ArrayAttr({1, 0}));
  }
  Value apply(const Activation &a, Value x, ArrayRef<int64_t> shape) {
    if (a.name == "Sigmoid")
      return SigmoidOp::create(n.builder, n.loc, type(shape), x);
    if (a.name == "Affine")
      return add(mul(x, scalar(a.alpha), shape), scalar(a.beta), shape);
    if (a.name == "ScaledTanh")
      return mul(unary("tanh", mul(x, scalar(a.beta), shape), shape), scalar(a.alpha), shape);
    static const std::pair<const char *, const char *> kFunctions[] = {
        {"Tanh", "tanh"},       {"Relu", "relu"},
        {"LeakyRelu", "leaky_relu"}, {"ThresholdedRelu", "thresholded_relu"},
        {"HardSigmoid", "hard_sigmoid"}, {"Elu", "elu"},
        {"Softsign", "softsign"}, {"Softplus", "softplus"}};
    for (auto [onnxName, fn] : kFunctions)
      if (a.name == onnxName)
        return unary(fn, x, shape, a.alpha, a.beta);
    return {};
  }
  Value clip(Value x, ArrayRef<int64_t> shape, std::optional<float> limit) {
    if (!limit)
      return x;
    x = MaxOp::create(n.builder, n.loc, type(shape), x, scalar(-*limit));
    return BinaryFnOp::create(n.builder, n.loc, type(shape), x, scalar(*limit),
                              n.builder.getStringAttr("min"));
  }

  NodeImporter &n;
  Type et;
};

/// The activations of `directions` directions, `perDirection` each: the node's list, or the
/// defaults; alpha / beta consumed in order by the functions that take them, else their
/// ONNX defaults.
FailureOr<SmallVector<Activation>> readActivations(NodeImporter &n, Cell cell,
                                                   int64_t directions) {
  const int perDirection = cell == Cell::Lstm ? 3 : cell == Cell::Gru ? 2 : 1;
  SmallVector<Activation> out;
  const onnx::AttributeProto *names = n.attr("activations");
  SmallVector<float> alphas, betas;
  if (const onnx::AttributeProto *a = n.attr("activation_alpha"))
    alphas.assign(a->floats().begin(), a->floats().end());
  if (const onnx::AttributeProto *b = n.attr("activation_beta"))
    betas.assign(b->floats().begin(), b->floats().end());
  if (!names) {
    static const char *kDefaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    for (int64_t d = 0; d < directions; ++d)
      for (int i = 0; i < perDirection; ++i)
        out.push_back({kDefaults[int(cell)][i]});
    return out;
  }
  if (names->strings_size() != perDirection * directions)
    return n.fail("attribute 'activations' has " + Twine(names->strings_size()) +
                  " entries; this node needs " + Twine(perDirection * directions));
  size_t nextAlpha = 0, nextBeta = 0;
  for (const std::string &name : names->strings()) {
    Activation a{name};
    auto takeAlpha = [&](float fallback) {
      a.alpha = nextAlpha < alphas.size() ? alphas[nextAlpha++] : fallback;
    };
    auto takeBeta = [&](float fallback) {
      a.beta = nextBeta < betas.size() ? betas[nextBeta++] : fallback;
    };
    if (name == "LeakyRelu")
      takeAlpha(0.01f);
    else if (name == "ThresholdedRelu" || name == "Elu")
      takeAlpha(1.0f);
    else if (name == "HardSigmoid")
      takeAlpha(0.2f), takeBeta(0.5f);
    else if (name == "Affine" || name == "ScaledTanh")
      takeAlpha(1.0f), takeBeta(0.0f);
    else if (name != "Sigmoid" && name != "Tanh" && name != "Relu" && name != "Softsign" &&
             name != "Softplus")
      return n.fail("activation '" + name + "' is not one of ONNX's recurrent activations");
    out.push_back(a);
  }
  return out;
}

template <Cell cell> LogicalResult importRecurrent(NodeImporter &n) {
  constexpr int64_t gates = cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1;
  auto xType = n.inputType(0), wType = n.inputType(1), rType = n.inputType(2);
  if (!xType || !wType || !rType || failed(requireFloat(n, xType, "X")))
    return failure();
  const int64_t layout = n.attrInt("layout", 0);
  if (layout != 0 && layout != 1)
    return n.fail("attribute 'layout' = " + Twine(layout) + " (0 or 1)");
  const std::string direction = n.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return n.fail("attribute 'direction' = '" + direction +
                  "' (forward, reverse or bidirectional)");
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  if (xType.getRank() != 3)
    return n.fail("X must have rank 3, not " + Twine(xType.getRank()));
  const int64_t steps = xType.getDimSize(layout == 0 ? 0 : 1),
                batch = xType.getDimSize(layout == 0 ? 1 : 0), inputSize = xType.getDimSize(2);
  const int64_t hidden = n.attrInt("hidden_size", rType.getRank() == 3 ? rType.getDimSize(2) : 0);
  if (hidden <= 0)
    return n.fail("attribute 'hidden_size' must be positive");
  Type et = xType.getElementType();
  // Initial and final states: [directions, batch, hidden], batch first with layout 1.
  const SmallVector<int64_t> stateShape =
      layout == 0 ? SmallVector<int64_t>{directions, batch, hidden}
                  : SmallVector<int64_t>{batch, directions, hidden};
  auto expect = [&](unsigned i, ArrayRef<int64_t> shape, const char *what) -> LogicalResult {
    auto t = n.inputType(i);
    if (!t)
      return failure();
    if (t.getShape() != shape || t.getElementType() != (i == 4 ? t.getElementType() : et))
      return n.fail(Twine(what) + " must be [" + shapeText(shape) + "] of X's type, not [" +
                    shapeText(t.getShape()) + "]");
    return success();
  };
  if (failed(expect(1, {directions, gates * hidden, inputSize}, "W")) ||
      failed(expect(2, {directions, gates * hidden, hidden}, "R")) ||
      (n.hasInput(3) && failed(expect(3, {directions, 2 * gates * hidden}, "B"))) ||
      (n.hasInput(4) && failed(expect(4, {batch}, "sequence_lens"))) ||
      (n.hasInput(5) && failed(expect(5, stateShape, "initial_h"))) ||
      (cell == Cell::Lstm && n.hasInput(6) && failed(expect(6, stateShape, "initial_c"))) ||
      (cell == Cell::Lstm && n.hasInput(7) && failed(expect(7, {directions, 3 * hidden}, "P"))))
    return failure();
  if (steps * directions > kMaxSteps)
    return n.fail(Twine(steps) + " steps in " + Twine(directions) +
                  " directions: Sinter unrolls at most " + Twine(kMaxSteps));
  std::optional<float> clip;
  if (n.attr("clip"))
    clip = n.attrFloat("clip", 0);
  const bool linearBeforeReset = cell == Cell::Gru && n.attrInt("linear_before_reset", 0) != 0;
  const bool coupleInputForget = cell == Cell::Lstm && n.attrInt("input_forget", 0) != 0;
  auto activations = readActivations(n, cell, directions);
  if (failed(activations))
    return failure();

  RecurrentBuilder b(n, et);
  const int64_t width = gates * hidden;
  // X as [steps, batch, input].
  Value x = *n.input(0);
  if (layout == 1)
    x = TransposeOp::create(n.builder, n.loc, b.type({steps, batch, inputSize}), x,
                            n.builder.getDenseI64ArrayAttr({1, 0, 2}));
  Value xRows = n.reshape(x, {steps * batch, inputSize});
  // Per step, which sequences are still running: [batch, 1] booleans.
  Value lengths;
  if (n.hasInput(4)) {
    lengths = *n.input(4);
    auto lt = cast<RankedTensorType>(lengths.getType());
    if (!lt.getElementType().isInteger(64))
      lengths = CastOp::create(n.builder, n.loc, lt.clone(n.builder.getI64Type()), lengths);
    lengths = n.reshape(lengths, {batch, 1});
  }
  auto running = [&](int64_t t) -> Value {
    Value step = n.integerScalar(n.builder.getI64Type(), t);
    return BinaryFnOp::create(n.builder, n.loc, n.tensorType({batch, 1}, n.builder.getI1Type()),
                              lengths, step, n.builder.getStringAttr("greater"));
  };
  Value zeros = n.constant(DenseElementsAttr::get(b.type({batch, hidden}),
                                                  n.builder.getFloatAttr(et, 0.0)));

  SmallVector<Value> finalH, finalC;
  SmallVector<SmallVector<Value>> ys(directions, SmallVector<Value>(steps));
  for (int64_t d = 0; d < directions; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const int64_t perDirection = cell == Cell::Lstm ? 3 : cell == Cell::Gru ? 2 : 1;
    ArrayRef<Activation> act = ArrayRef(*activations).slice(d * perDirection, perDirection);
    Value w = b.row(*n.input(1), d), r = b.row(*n.input(2), d);
    // The input's projection for every step at once, with both biases (GRU's recurrent bias
    // of the candidate stays apart when it applies after the reset gate).
    Value projected = b.matmul(xRows, b.transpose2d(w), {steps * batch, width});
    Value recurrentCandidateBias;
    if (n.hasInput(3)) {
      Value biases = b.row(*n.input(3), d); // [2 * width]
      Value both = n.reshape(biases, {1, 2 * width});
      Value wb = b.columns(both, 0, width), rb = b.columns(both, width, width);
      if (cell == Cell::Gru) {
        // GRU: the candidate's recurrent bias goes with the recurrent product (inside the
        // reset gate's product with linear_before_reset).
        recurrentCandidateBias = b.columns(rb, 2 * hidden, hidden);
        Value zr = b.columns(rb, 0, 2 * hidden);
        Value none = n.constant(DenseElementsAttr::get(b.type({1, hidden}),
                                                       n.builder.getFloatAttr(et, 0.0)));
        rb = ConcatOp::create(n.builder, n.loc, b.type({1, width}), ValueRange{zr, none},
                              n.builder.getI64IntegerAttr(1));
      }
      projected = b.add(projected, b.add(wb, rb, {1, width}), {steps * batch, width});
    }
    projected = n.reshape(projected, {steps, batch, width});
    Value rT = b.transpose2d(r); // [hidden, width]
    auto initial = [&](unsigned i) -> Value {
      if (!n.hasInput(i))
        return zeros;
      Value state = *n.input(i);
      if (layout == 1)
        state = TransposeOp::create(n.builder, n.loc, b.type({directions, batch, hidden}), state,
                                    n.builder.getDenseI64ArrayAttr({1, 0, 2}));
      return b.row(state, d);
    };
    Value h = initial(5);
    Value c = cell == Cell::Lstm ? initial(6) : zeros;
    Value peephole;
    if (cell == Cell::Lstm && n.hasInput(7))
      peephole = n.reshape(b.row(*n.input(7), d), {1, 3 * hidden});
    const SmallVector<int64_t> bh = {batch, hidden};
    for (int64_t i = 0; i < steps; ++i) {
      const int64_t t = reverse ? steps - 1 - i : i;
      Value xt = b.row(projected, t); // [batch, width]
      Value newH, newC;
      if (cell == Cell::Gru) {
        Value rz = b.add(b.columns(xt, 0, 2 * hidden),
                         b.matmul(h, b.columns(rT, 0, 2 * hidden), {batch, 2 * hidden}),
                         {batch, 2 * hidden});
        Value z = b.apply(act[0], b.clip(b.columns(rz, 0, hidden), bh, clip), bh);
        Value reset = b.apply(act[0], b.clip(b.columns(rz, hidden, hidden), bh, clip), bh);
        Value rh = b.columns(rT, 2 * hidden, hidden); // [hidden, hidden]
        Value recurrent;
        if (linearBeforeReset) {
          Value hr = b.matmul(h, rh, bh);
          if (recurrentCandidateBias)
            hr = b.add(hr, recurrentCandidateBias, bh);
          recurrent = b.mul(reset, hr, bh);
        } else {
          recurrent = b.matmul(b.mul(reset, h, bh), rh, bh);
          if (recurrentCandidateBias)
            recurrent = b.add(recurrent, recurrentCandidateBias, bh);
        }
        Value candidate =
            b.apply(act[1], b.clip(b.add(b.columns(xt, 2 * hidden, hidden), recurrent, bh), bh,
                                   clip), bh);
        // (1 - z) * candidate + z * h
        newH = b.add(b.mul(b.sub(b.scalar(1.0), z, bh), candidate, bh), b.mul(z, h, bh), bh);
      } else {
        Value pre = b.add(xt, b.matmul(h, rT, {batch, width}), {batch, width});
        if (cell == Cell::Rnn) {
          newH = b.apply(act[0], b.clip(pre, bh, clip), bh);
        } else {
          // Gate order i, o, f, c; peepholes i, o, f.
          auto gate = [&](int64_t k) { return b.columns(pre, k * hidden, hidden); };
          auto peep = [&](int64_t k, Value state) {
            return b.mul(b.columns(peephole, k * hidden, hidden), state, bh);
          };
          Value iPre = gate(0), fPre = gate(2);
          if (peephole) {
            iPre = b.add(iPre, peep(0, c), bh);
            fPre = b.add(fPre, peep(2, c), bh);
          }
          Value in = b.apply(act[0], b.clip(iPre, bh, clip), bh);
          Value forget = coupleInputForget ? b.sub(b.scalar(1.0), in, bh)
                                           : b.apply(act[0], b.clip(fPre, bh, clip), bh);
          Value cand = b.apply(act[1], b.clip(gate(3), bh, clip), bh);
          newC = b.add(b.mul(forget, c, bh), b.mul(in, cand, bh), bh);
          Value oPre = gate(1);
          if (peephole)
            oPre = b.add(oPre, peep(1, newC), bh);
          Value out = b.apply(act[0], b.clip(oPre, bh, clip), bh);
          newH = b.mul(out, b.apply(act[2], newC, bh), bh);
        }
      }
      if (!newH)
        return n.fail("an activation of this node has no import");
      Value y = newH;
      if (lengths) {
        Value live = running(t);
        y = WhereOp::create(n.builder, n.loc, b.type(bh), live, newH, zeros);
        newH = WhereOp::create(n.builder, n.loc, b.type(bh), live, newH, h);
        if (newC)
          newC = WhereOp::create(n.builder, n.loc, b.type(bh), live, newC, c);
      }
      h = newH;
      if (newC)
        c = newC;
      ys[d][t] = n.reshape(y, {1, 1, batch, hidden});
    }
    finalH.push_back(n.reshape(h, {1, batch, hidden}));
    finalC.push_back(n.reshape(c, {1, batch, hidden}));
  }

  auto concat = [&](ArrayRef<Value> parts, ArrayRef<int64_t> shape, int64_t axis) -> Value {
    if (parts.size() == 1)
      return parts.front();
    return ConcatOp::create(n.builder, n.loc, b.type(shape), ValueRange(parts),
                            n.builder.getI64IntegerAttr(axis));
  };
  // Y [steps, directions, batch, hidden]; Y_h, Y_c [directions, batch, hidden] (layout 0).
  SmallVector<Value> perStep;
  for (int64_t t = 0; t < steps; ++t) {
    SmallVector<Value> dirs;
    for (int64_t d = 0; d < directions; ++d)
      dirs.push_back(ys[d][t]);
    perStep.push_back(concat(dirs, {1, directions, batch, hidden}, 1));
  }
  Value y = concat(perStep, {steps, directions, batch, hidden}, 0);
  Value yh = concat(finalH, {directions, batch, hidden}, 0);
  Value yc = concat(finalC, {directions, batch, hidden}, 0);
  if (layout == 1) {
    y = TransposeOp::create(n.builder, n.loc, b.type({batch, steps, directions, hidden}), y,
                            n.builder.getDenseI64ArrayAttr({2, 0, 1, 3}));
    auto batchFirst = [&](Value v) -> Value {
      return TransposeOp::create(n.builder, n.loc, b.type({batch, directions, hidden}), v,
                                 n.builder.getDenseI64ArrayAttr({1, 0, 2}));
    };
    yh = batchFirst(yh);
    yc = batchFirst(yc);
  }
  Value outputs[] = {y, yh, yc};
  for (int i = 0; i < n.node.output_size() && i < (cell == Cell::Lstm ? 3 : 2); ++i)
    if (!n.node.output(i).empty() && failed(n.setOutput(i, outputs[i])))
      return failure();
  return success();
}

} // namespace

void registerRecurrentImports(OpImportRegistry &r) {
  // Opset 7's definitions, and 14's layout attribute (absent before: 0).
  r["RNN"] = {importRecurrent<Cell::Rnn>, 7};
  r["GRU"] = {importRecurrent<Cell::Gru>, 7};
  r["LSTM"] = {importRecurrent<Cell::Lstm>, 7};
}

} // namespace sinter::import
