#include "transformer_generator.h"

#include "onnx_graph_builder.h"

#include <cmath>

namespace sinter::fuzz {
namespace {

/// The model's dimensions; every block keeps the activation at [batch, seq, hidden].
struct ModelDims {
  int64_t batch, seq, hidden, heads, kvHeads, headDim, intermediate, vocab, pastLength,
      cacheLength;
};

/// How a block's keys and values reach attention.
enum class KvCache { None, ConcatPast, ScatterIntoCache };

class TransformerGenerator {
public:
  explicit TransformerGenerator(FuzzedDataProvider &bytes)
      : in_(bytes), graph_(in_.ConsumeBool() ? 23 : 18, in_.ConsumeIntegral<uint32_t>()) {}

  GeneratedModel run();

private:
  template <typename T> T pick(std::initializer_list<T> choices) {
    auto index = in_.ConsumeIntegralInRange<size_t>(0, choices.size() - 1);
    return *(choices.begin() + index);
  }
  void note(const std::string &what) { summary_ += " " + what; }

  std::string linear(const std::string &x, int64_t inWidth, int64_t outWidth, bool mayBias);
  std::string rmsNorm(const std::string &x, int64_t width);
  std::string layerNorm(const std::string &x, int64_t width);
  std::string norm(const std::string &x, int64_t width);
  std::string rope(const std::string &x4d, int64_t rotaryDim);
  std::string repeatKv(const std::string &kv4d, int64_t keys);
  std::string attentionBlock(const std::string &x);
  std::string mlpBlock(const std::string &x);
  std::string genericBlock(const std::string &x);
  std::string toFloat(const std::string &x) {
    return dtype_ == kFloat ? x : graph_.node("Cast", {x}, {Attribute::integer("to", kFloat)});
  }
  std::string fromFloat(const std::string &x) {
    return dtype_ == kFloat ? x : graph_.node("Cast", {x}, {Attribute::integer("to", dtype_)});
  }
  std::string shape(const std::vector<int64_t> &dims) { return graph_.ints(dims); }

  FuzzedDataProvider &in_;
  OnnxGraphBuilder graph_;
  ElementType dtype_ = kBFloat16;
  ModelDims dims_{};
  std::string summary_;
  std::string embedding_;              // [vocab, hidden] when the model reads token ids
  std::vector<std::string> shared_;    // [hidden, hidden] weights a later linear may reuse
  std::string cachePosition_;          // int64 [seq] input, once a block scatters into a cache
  int cacheIndex_ = 0;
  std::vector<std::string> presents_;
};

std::string TransformerGenerator::linear(const std::string &x, int64_t inWidth, int64_t outWidth,
                                         bool mayBias) {
  float scale = 1.0f / std::sqrt(static_cast<float>(inWidth));
  std::string w;
  if (inWidth == dims_.hidden && outWidth == dims_.hidden && !shared_.empty() &&
      in_.ConsumeIntegralInRange(0, 3) == 0) {
    w = shared_[in_.ConsumeIntegralInRange<size_t>(0, shared_.size() - 1)];
    note("shared-weight");
  } else {
    w = graph_.weight("weight", dtype_, {inWidth, outWidth}, scale, in_.ConsumeIntegralInRange(0, 7) == 0);
    if (inWidth == dims_.hidden && outWidth == dims_.hidden)
      shared_.push_back(w);
  }
  std::string y = graph_.node("MatMul", {x, w});
  if (mayBias && in_.ConsumeIntegralInRange(0, 2) == 0)
    y = graph_.node("Add", {y, graph_.weight("bias", dtype_, {outWidth}, 0.1f)});
  if (in_.ConsumeIntegralInRange(0, 2) == 0) { // a PEFT LoRA adapter, unmerged in the export
    int64_t rank = pick<int64_t>({1, 2, 4, 8});
    std::string down = graph_.node("MatMul", {x, graph_.weight("lora_A", dtype_, {inWidth, rank}, scale)});
    std::string up = graph_.node("MatMul", {down, graph_.weight("lora_B", dtype_, {rank, outWidth}, 0.2f)});
    if (in_.ConsumeBool())
      up = graph_.node("Mul", {up, graph_.scalar(dtype_, pick<float>({0.5f, 2.0f, 4.0f}))});
    y = in_.ConsumeBool() ? graph_.node("Add", {y, up}) : graph_.node("Add", {up, y});
    note("lora" + std::to_string(rank));
  }
  return y;
}

std::string TransformerGenerator::rmsNorm(const std::string &x, int64_t width) {
  float eps = pick<float>({1e-5f, 1e-6f});
  if (graph_.opset() >= 23 && in_.ConsumeBool()) {
    note("RMSNormalization");
    return graph_.node("RMSNormalization", {x, graph_.weightNear("norm", dtype_, {width}, 1.0f, 0.1f)},
                       {Attribute::integer("axis", -1), Attribute::real("epsilon", eps)});
  }
  note("rms");
  std::string xf = toFloat(x);
  std::string sq = graph_.node("Pow", {xf, graph_.scalar(kFloat, 2.0f)});
  std::string mean = graph_.node("ReduceMean", {sq, graph_.ints({-1})},
                                 {Attribute::integer("keepdims", 1)});
  std::string rstd = graph_.node(
      "Reciprocal", {graph_.node("Sqrt", {graph_.node("Add", {mean, graph_.scalar(kFloat, eps)})})});
  std::string normed = fromFloat(graph_.node("Mul", {xf, rstd}));
  std::string w = graph_.weightNear("norm", dtype_, {width}, 1.0f, 0.1f);
  if (in_.ConsumeIntegralInRange(0, 3) == 0) { // Gemma: (1 + w)
    w = graph_.node("Add", {w, graph_.scalar(dtype_, 1.0f)});
    note("(1+w)");
  }
  return in_.ConsumeBool() ? graph_.node("Mul", {w, normed}) : graph_.node("Mul", {normed, w});
}

std::string TransformerGenerator::layerNorm(const std::string &x, int64_t width) {
  note("layernorm");
  std::vector<std::string> inputs = {x, graph_.weightNear("ln", dtype_, {width}, 1.0f, 0.1f)};
  if (in_.ConsumeBool())
    inputs.push_back(graph_.weight("ln_bias", dtype_, {width}, 0.1f));
  return graph_.node("LayerNormalization", inputs,
                     {Attribute::integer("axis", -1), Attribute::real("epsilon", 1e-5f)});
}

std::string TransformerGenerator::norm(const std::string &x, int64_t width) {
  switch (in_.ConsumeIntegralInRange(0, 3)) {
  case 0:
    return x;
  case 1:
    return layerNorm(x, width);
  default:
    return rmsNorm(x, width);
  }
}

std::string TransformerGenerator::rope(const std::string &x4d, int64_t rotaryDim) {
  int64_t half = rotaryDim / 2;
  std::string axis = graph_.ints({3}), one = graph_.ints({1});
  // GPT-NeoX / Phi / StableLM: only the first rotaryDim features of each head turn, the rest
  // pass through (concat(rope(x[..., :R]), x[..., R:])).
  std::string rotated = x4d, passed;
  if (rotaryDim < dims_.headDim) {
    rotated = graph_.node("Slice", {x4d, graph_.ints({0}), graph_.ints({rotaryDim}), axis, one});
    passed = graph_.node("Slice", {x4d, graph_.ints({rotaryDim}), graph_.ints({INT64_MAX}), axis, one});
  }
  std::string cos = graph_.weight("cos", dtype_, {1, 1, dims_.seq, rotaryDim}, 1.0f);
  std::string sin = graph_.weight("sin", dtype_, {1, 1, dims_.seq, rotaryDim}, 1.0f);
  std::string first = graph_.node("Slice", {rotated, graph_.ints({0}), graph_.ints({half}), axis, one});
  std::string second = graph_.node(
      "Slice", {rotated, graph_.ints({half}), graph_.ints({INT64_MAX}), axis, one});
  std::string turned = graph_.node("Concat", {graph_.node("Neg", {second}), first},
                                   {Attribute::integer("axis", -1)});
  std::string out =
      graph_.node("Add", {graph_.node("Mul", {rotated, cos}), graph_.node("Mul", {turned, sin})});
  return passed.empty() ? out : graph_.node("Concat", {out, passed}, {Attribute::integer("axis", -1)});
}

/// [batch, kv_heads, keys, head_dim] -> [batch, heads, keys, head_dim] (repeat_kv).
std::string TransformerGenerator::repeatKv(const std::string &kv4d, int64_t keys) {
  int64_t groups = dims_.heads / dims_.kvHeads;
  if (groups == 1)
    return kv4d;
  std::string expanded = graph_.node(
      "Expand", {graph_.node("Unsqueeze", {kv4d, graph_.ints({2})}),
                 shape({dims_.batch, dims_.kvHeads, groups, keys, dims_.headDim})});
  return graph_.node("Reshape", {expanded, shape({dims_.batch, dims_.heads, keys, dims_.headDim})});
}

std::string TransformerGenerator::attentionBlock(const std::string &x) {
  const ModelDims &d = dims_;
  std::string h = norm(x, d.hidden);
  auto project = [&](int64_t heads, bool headNorm) {
    std::string flat = linear(h, d.hidden, heads * d.headDim, true);
    std::string split = graph_.node("Reshape", {flat, shape({d.batch, d.seq, heads, d.headDim})});
    if (headNorm) // Qwen3 / OLMo 2: RMSNorm over each head
      split = rmsNorm(split, d.headDim);
    return graph_.node("Transpose", {split}, {Attribute::list("perm", {0, 2, 1, 3})});
  };
  bool headNorm = in_.ConsumeIntegralInRange(0, 3) == 0;
  std::string q, k, v;
  if (d.heads == d.kvHeads && in_.ConsumeIntegralInRange(0, 3) == 0) {
    // GPT-NeoX: one projection whose columns hold each head's q, k and v side by side.
    note("qkv-interleaved");
    std::string flat = linear(h, d.hidden, 3 * d.heads * d.headDim, true);
    std::string heads = graph_.node("Reshape", {flat, shape({d.batch, d.seq, d.heads, 3 * d.headDim})});
    std::string parts = graph_.node("Split", {heads, graph_.ints({d.headDim, d.headDim, d.headDim})},
                                    {Attribute::integer("axis", 3)}, 3);
    auto head = [&](int i, bool normed) {
      std::string part = graph_.nodeOutput(parts, i);
      if (normed)
        part = rmsNorm(part, d.headDim);
      return graph_.node("Transpose", {part}, {Attribute::list("perm", {0, 2, 1, 3})});
    };
    q = head(0, headNorm);
    k = head(1, headNorm);
    v = head(2, false);
  } else {
    q = project(d.heads, headNorm);
    k = project(d.kvHeads, headNorm);
    v = project(d.kvHeads, false);
  }
  if (in_.ConsumeBool()) {
    int64_t rotaryDim = d.headDim;
    if (d.headDim >= 8 && in_.ConsumeIntegralInRange(0, 2) == 0) {
      rotaryDim = d.headDim / 2;
      note("rope-partial");
    } else {
      note("rope");
    }
    q = rope(q, rotaryDim);
    k = rope(k, rotaryDim);
  }
  auto cache = pick<KvCache>({KvCache::None, KvCache::None, KvCache::ConcatPast, KvCache::ScatterIntoCache});
  int64_t keys = d.seq;
  std::string layer = std::to_string(cacheIndex_++);
  Shape pastShape;
  if (cache == KvCache::ConcatPast) {
    note("kv-concat");
    keys = d.pastLength + d.seq;
    pastShape = {d.batch, d.kvHeads, d.pastLength, d.headDim};
    for (std::string *t : {&k, &v}) {
      std::string past = std::string(t == &k ? "past_key_" : "past_value_") + layer;
      graph_.input(past, dtype_, pastShape);
      *t = graph_.node("Concat", {past, *t}, {Attribute::integer("axis", 2)});
      presents_.push_back(*t);
    }
  } else if (cache == KvCache::ScatterIntoCache) {
    note("kv-scatter");
    keys = d.cacheLength;
    if (cachePosition_.empty()) {
      cachePosition_ = "cache_position";
      graph_.input(cachePosition_, kInt64, {d.seq});
    }
    std::string indices = graph_.node("Unsqueeze", {cachePosition_, graph_.ints({1})});
    for (std::string *t : {&k, &v}) {
      std::string past = std::string(t == &k ? "past_key_" : "past_value_") + layer;
      graph_.input(past, dtype_, {d.batch, d.kvHeads, d.cacheLength, d.headDim});
      std::string data = graph_.node("Transpose", {past}, {Attribute::list("perm", {2, 0, 1, 3})});
      std::string updates = graph_.node("Transpose", {*t}, {Attribute::list("perm", {2, 0, 1, 3})});
      std::string scattered = graph_.node("ScatterND", {data, indices, updates});
      *t = graph_.node("Transpose", {scattered}, {Attribute::list("perm", {1, 2, 0, 3})});
      presents_.push_back(*t);
    }
  }

  std::string attended;
  if (graph_.opset() >= 23 && cache != KvCache::ScatterIntoCache && in_.ConsumeBool()) {
    note("Attention");
    bool causal = in_.ConsumeBool();
    attended = graph_.node("Attention", {q, repeatKv(k, keys), repeatKv(v, keys)},
                           {Attribute::integer("is_causal", causal ? 1 : 0)});
  } else {
    std::string scores;
    float scale = 1.0f / std::sqrt(static_cast<float>(d.headDim));
    std::string keysT = graph_.node("Transpose", {repeatKv(k, keys)},
                                    {Attribute::list("perm", {0, 1, 3, 2})});
    if (in_.ConsumeBool()) { // the dynamo exporter: both sides scaled by head_dim^-1/4
      std::string s = graph_.scalar(dtype_, std::sqrt(scale));
      scores = graph_.node("MatMul", {graph_.node("Mul", {q, s}), graph_.node("Mul", {keysT, s})});
    } else {
      scores = graph_.node("Mul", {graph_.node("MatMul", {q, keysT}), graph_.scalar(dtype_, scale)});
    }
    std::string zero = graph_.scalar(dtype_, 0.0f), lowest = graph_.scalar(dtype_, -1e4f);
    if (cache == KvCache::ScatterIntoCache) { // keys at or before each query's position
      std::vector<int64_t> positions;
      for (int64_t i = 0; i < keys; ++i)
        positions.push_back(i);
      std::string visible = graph_.node(
          "LessOrEqual", {graph_.ints(positions),
                          graph_.node("Unsqueeze", {cachePosition_, graph_.ints({1})})});
      scores = graph_.node("Add", {scores, graph_.node("Where", {visible, zero, lowest})});
    } else if (in_.ConsumeBool()) { // bottom-right causal
      note("mask");
      std::vector<bool> mask;
      for (int64_t i = 0; i < d.seq; ++i)
        for (int64_t j = 0; j < keys; ++j)
          mask.push_back(j <= i + keys - d.seq);
      std::string visible = graph_.boolTensor({1, 1, d.seq, keys}, mask);
      scores = graph_.node("Add", {scores, graph_.node("Where", {visible, zero, lowest})});
    }
    std::string probs = graph_.node("Softmax", {scores}, {Attribute::integer("axis", -1)});
    attended = graph_.node("MatMul", {probs, repeatKv(v, keys)});
  }
  std::string merged = graph_.node(
      "Reshape", {graph_.node("Transpose", {attended}, {Attribute::list("perm", {0, 2, 1, 3})}),
                  shape({d.batch, d.seq, d.heads * d.headDim})});
  std::string out = linear(merged, d.heads * d.headDim, d.hidden, true);
  if (in_.ConsumeIntegralInRange(0, 3) == 0) // OLMo 2 / Gemma 2: a norm after the block too
    out = rmsNorm(out, d.hidden);
  return graph_.node("Add", {x, out});
}

std::string TransformerGenerator::mlpBlock(const std::string &x) {
  const ModelDims &d = dims_;
  std::string h = norm(x, d.hidden);
  std::string gate = linear(h, d.hidden, d.intermediate, true);
  std::string act;
  switch (in_.ConsumeIntegralInRange(0, 3)) {
  case 0:
    note("swiglu");
    act = graph_.node("Mul", {gate, graph_.node("Sigmoid", {gate})});
    break;
  case 1:
    if (graph_.opset() >= 20) {
      note("Gelu");
      act = graph_.node("Gelu", {gate},
                        {Attribute::text("approximate", in_.ConsumeBool() ? "tanh" : "none")});
      break;
    }
    [[fallthrough]];
  case 2: { // erf GeLU, as exported from torch.nn.functional.gelu
    note("gelu-erf");
    std::string erf = graph_.node(
        "Erf", {graph_.node("Div", {gate, graph_.scalar(dtype_, std::sqrt(2.0f))})});
    act = graph_.node("Mul", {graph_.node("Mul", {gate, graph_.scalar(dtype_, 0.5f)}),
                              graph_.node("Add", {erf, graph_.scalar(dtype_, 1.0f)})});
    break;
  }
  default: { // tanh GeLU (Gemma's gelu_pytorch_tanh), decomposed
    note("gelu-tanh");
    std::string cube = graph_.node("Pow", {gate, graph_.scalar(dtype_, 3.0f)});
    std::string inner = graph_.node(
        "Mul", {graph_.node("Add", {gate, graph_.node("Mul", {cube, graph_.scalar(dtype_, 0.044715f)})}),
                graph_.scalar(dtype_, 0.7978845608f)});
    act = graph_.node("Mul", {graph_.node("Mul", {gate, graph_.scalar(dtype_, 0.5f)}),
                              graph_.node("Add", {graph_.node("Tanh", {inner}), graph_.scalar(dtype_, 1.0f)})});
  }
  }
  if (in_.ConsumeBool()) // gated: act(gate) * up
    act = graph_.node("Mul", {act, linear(h, d.hidden, d.intermediate, true)});
  std::string out = linear(act, d.intermediate, d.hidden, true);
  return in_.ConsumeIntegralInRange(0, 4) == 0 ? out : graph_.node("Add", {x, out});
}

std::string TransformerGenerator::genericBlock(const std::string &x) {
  const ModelDims &d = dims_;
  switch (in_.ConsumeIntegralInRange(0, 11)) {
  case 0: {
    std::string op = pick<std::string>({"Tanh", "Relu", "Abs", "Neg", "Sigmoid", "Erf", "Sin", "Cos",
                                        "Atan", "Asinh", "Softsign", "Selu", "Celu", "Mish"});
    note(op);
    return graph_.node(op, {x});
  }
  case 1: {
    std::string op = pick<std::string>({"Add", "Sub", "Mul", "Div", "Max", "Min"});
    Shape shape = pick<Shape>({Shape{d.hidden}, Shape{d.seq, 1}, Shape{}, Shape{d.batch, 1, d.hidden}});
    note(op + "-broadcast");
    std::string w = graph_.weightNear("operand", dtype_, shape, op == "Div" ? 2.0f : 0.0f, 0.5f);
    return in_.ConsumeBool() ? graph_.node(op, {x, w}) : graph_.node(op, {w, x});
  }
  case 2: {
    std::string op = pick<std::string>({"Softmax", "LogSoftmax"});
    int64_t axis = pick<int64_t>({-1, 1, 0});
    note(op + std::to_string(axis));
    return graph_.node(op, {x}, {Attribute::integer("axis", axis)});
  }
  case 3: {
    std::string op = pick<std::string>({"ReduceSum", "ReduceMax", "ReduceMean", "ReduceMin"});
    int64_t axis = pick<int64_t>({-1, 1});
    note(op);
    std::string reduced = graph_.node(op, {x, graph_.ints({axis})}, {Attribute::integer("keepdims", 1)});
    return graph_.node("Sub", {x, reduced});
  }
  case 4: {
    note("transpose");
    std::string t = graph_.node("Transpose", {x}, {Attribute::list("perm", {0, 2, 1})});
    t = graph_.node("Mul", {t, graph_.weight("col", dtype_, {d.seq}, 1.0f)});
    return graph_.node("Transpose", {t}, {Attribute::list("perm", {0, 2, 1})});
  }
  case 5: {
    note("split-concat");
    int64_t half = d.hidden / 2;
    std::string parts = graph_.node("Split", {x, graph_.ints({half, d.hidden - half})},
                                    {Attribute::integer("axis", -1)}, 2);
    return graph_.node("Concat", {graph_.nodeOutput(parts, 1), parts},
                       {Attribute::integer("axis", -1)});
  }
  case 6: {
    note("clip");
    return graph_.node("Clip", {x, graph_.scalar(dtype_, -0.5f), graph_.scalar(dtype_, 0.5f)});
  }
  case 7: {
    note("where");
    std::vector<bool> mask;
    for (int64_t i = 0; i < d.hidden; ++i)
      mask.push_back(i % 3 != 0);
    return graph_.node("Where", {graph_.boolTensor({d.hidden}, mask), x, graph_.scalar(dtype_, 0.0f)});
  }
  case 8: {
    note("cast-f32");
    std::string f = graph_.node("Cast", {x}, {Attribute::integer("to", kFloat)});
    f = graph_.node("Exp", {graph_.node("Mul", {f, graph_.scalar(kFloat, 0.1f)})});
    return graph_.node("Cast", {f}, {Attribute::integer("to", dtype_)});
  }
  case 9: {
    note("flatten");
    std::string flat = graph_.node("Flatten", {x}, {Attribute::integer("axis", 2)});
    return graph_.node("Reshape", {flat, shape({d.batch, d.seq, d.hidden})});
  }
  case 10: {
    note("slice-pad");
    std::string kept = graph_.node(
        "Slice", {x, graph_.ints({1}), graph_.ints({d.hidden}), graph_.ints({2}), graph_.ints({1})});
    return graph_.node("Pad", {kept, graph_.ints({0, 0, 0, 0, 0, 1})});
  }
  default: {
    note("softcap");
    float cap = pick<float>({30.0f, 50.0f});
    std::string t = graph_.node("Tanh", {graph_.node("Div", {x, graph_.scalar(dtype_, cap)})});
    return graph_.node("Mul", {t, graph_.scalar(dtype_, cap)});
  }
  }
}

GeneratedModel TransformerGenerator::run() {
  GeneratedModel model;
  dtype_ = pick<ElementType>({kBFloat16, kBFloat16, kFloat16, kFloat});
  ModelDims &d = dims_;
  d.batch = pick<int64_t>({1, 1, 2, 3});
  d.seq = in_.ConsumeIntegralInRange<int64_t>(1, 9);
  // Small enough for hundreds of compiles a second; wide enough for every kernel's tiling
  // decisions (rows per block, vector widths, head-dim cases) to vary.
  d.headDim = pick<int64_t>({8, 16, 4, 32});
  d.kvHeads = pick<int64_t>({1, 2});
  d.heads = d.kvHeads * pick<int64_t>({1, 2, 4});
  d.hidden = d.heads * d.headDim * (d.heads * d.headDim < 32 ? pick<int64_t>({1, 2}) : 1);
  d.intermediate = d.hidden * pick<int64_t>({2, 1, 3});
  d.vocab = pick<int64_t>({64, 32, 48});
  d.pastLength = in_.ConsumeIntegralInRange<int64_t>(1, 8);
  d.cacheLength = d.seq + in_.ConsumeIntegralInRange<int64_t>(0, 8);
  summary_ = std::string(dtype_ == kFloat ? "f32" : dtype_ == kFloat16 ? "f16" : "bf16") +
             " opset" + std::to_string(graph_.opset()) + " B" + std::to_string(d.batch) + " S" +
             std::to_string(d.seq) + " H" + std::to_string(d.hidden) + " heads" +
             std::to_string(d.heads) + "/" + std::to_string(d.kvHeads) + "x" +
             std::to_string(d.headDim) + ":";

  // Symbolic batch and sequence dimensions, as exporters with dynamic axes write them.
  bool symbolic = in_.ConsumeIntegralInRange(0, 4) == 0;
  std::vector<std::string> symbols;
  Shape tokens = {d.batch, d.seq};
  if (symbolic) {
    note("dynamic");
    tokens = {-1, -1};
    symbols = {"batch_size", "sequence_length"};
  }
  std::string x;
  bool readsTokens = in_.ConsumeBool();
  std::string inputName = readsTokens ? "input_ids" : "inputs_embeds";
  if (readsTokens) {
    graph_.input(inputName, kInt64, tokens, symbols);
    embedding_ = graph_.weight("embed_tokens", dtype_, {d.vocab, d.hidden}, 1.0f);
    x = graph_.node("Gather", {embedding_, inputName}, {Attribute::integer("axis", 0)});
    if (in_.ConsumeIntegralInRange(0, 3) == 0) { // Gemma: embeddings scaled by sqrt(hidden)
      note("embed-scale");
      x = graph_.node("Mul", {x, graph_.scalar(dtype_, std::sqrt(static_cast<float>(d.hidden)))});
    }
  } else {
    Shape embeds = tokens;
    embeds.push_back(d.hidden);
    graph_.input(inputName, dtype_, embeds, symbols);
    x = inputName;
  }
  switch (symbolic ? in_.ConsumeIntegralInRange(0, 5) : -1) {
  case -1:
    break;
  case 0: // nothing given: refused in one line
    break;
  case 1: // a --dim the model does not have
    model.dimValues["seq_len"] = d.seq;
    break;
  case 2:
  case 3:
    model.dimValues["batch_size"] = d.batch;
    model.dimValues["sequence_length"] = d.seq;
    break;
  default:
    model.inputShapes[inputName] = readsTokens ? Shape{d.batch, d.seq} : Shape{d.batch, d.seq, d.hidden};
  }

  int blocks = in_.ConsumeIntegralInRange(1, 5);
  for (int b = 0; b < blocks && in_.remaining_bytes() > 0; ++b) {
    note("|");
    switch (in_.ConsumeIntegralInRange(0, 5)) {
    case 0:
    case 1:
      x = attentionBlock(x);
      break;
    case 2:
    case 3:
      x = mlpBlock(x);
      break;
    case 4:
      x = genericBlock(x);
      break;
    default: {
      note("linear");
      std::string y = linear(x, d.hidden, d.hidden, true);
      x = in_.ConsumeBool() ? graph_.node("Add", {x, y}) : y;
    }
    }
  }

  note("| head");
  x = norm(x, d.hidden);
  if (in_.ConsumeBool()) { // the LM head; tied to the embedding when the model has one
    if (!embedding_.empty() && in_.ConsumeBool()) {
      note("tied");
      x = graph_.node("MatMul", {x, graph_.node("Transpose", {embedding_}, {Attribute::list("perm", {1, 0})})});
    } else {
      x = linear(x, d.hidden, d.vocab, false);
    }
  }
  graph_.output(x, "logits", dtype_);
  for (size_t i = 0; i < presents_.size(); ++i)
    graph_.output(presents_[i], (i % 2 ? "present_value_" : "present_key_") + std::to_string(i / 2),
                  dtype_);
  model.bytes = graph_.serialize();
  model.summary = summary_;
  return model;
}

} // namespace

GeneratedModel generateTransformer(FuzzedDataProvider &bytes) {
  return TransformerGenerator(bytes).run();
}

} // namespace sinter::fuzz
