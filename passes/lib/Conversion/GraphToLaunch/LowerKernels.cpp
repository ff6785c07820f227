// Lowering of graph ops to launches of the kernel templates in runtime/kernels, with every
// launch parameter taken from runtime/kernels/launch_params.h (shared with the kernels).
#include "LaunchLowering.h"
#include "sinter/Passes/PatternKernels.h"

#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Passes/QuantizeWeights.h"

#include "launch_params.h"

#include <cassert>
#include <cstring>

using namespace mlir;
using namespace sinter;
namespace kn = sinter::kernels;

namespace {




/// out[r, c] = w[c, rowOf(r)] for a [K, N] row-major `raw`, with a fixed-size copy per
/// element (a run-time-size memcpy per element is a libc call each: minutes on a model).
template <typename Word>
void gatherColumnsAsRows(const char *raw, char *out, int64_t k, int64_t n,
                         function_ref<int64_t(int64_t)> rowOf, int64_t cols) {
  const Word *src = reinterpret_cast<const Word *>(raw);
  Word *dst = reinterpret_cast<Word *>(out);
  // In 64 x 64 tiles: rows map to nearby columns (identity, RoPE and SwiGLU pairs), so a
  // tile reads a cache-sized block instead of striding all of `raw` per element.
  constexpr int64_t kTile = 64;
  std::vector<int64_t> colOf(n);
  for (int64_t r = 0; r < n; ++r)
    colOf[r] = rowOf(r);
  for (int64_t r0 = 0; r0 < n; r0 += kTile)
    for (int64_t c0 = 0; c0 < k; c0 += kTile)
      for (int64_t r = r0; r < std::min(n, r0 + kTile); ++r)
        for (int64_t c = c0; c < std::min(k, c0 + kTile); ++c)
          std::memcpy(&dst[r * cols + c], &src[c * n + colOf[r]], sizeof(Word));
}

/// The bytes of a [K, N] row-major weight re-laid out as [N, K] rows, row r taken from
/// original column rowOf(r): the layout linear_small_m streams; then zero rows up to `rows`
/// (linear_small_m_weight_rows: whole 16-row tiles). Rows of `cols` >= K elements, zero past K
/// (linear_small_m_weight_cols); 0: K.
std::vector<char> kernelRows(DenseElementsAttr w, function_ref<int64_t(int64_t)> rowOf,
                             int64_t rows, int64_t cols = 0) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  if (cols == 0)
    cols = k;
  size_t elem = type.getElementTypeBitWidth() / 8;
  assert(rows >= n && "the kernel's rows hold every column of the weight");
  assert(cols >= k && "the kernel's rows hold every row of the weight");
  std::vector<char> out(rows * cols * elem, 0);
  if (w.isSplat()) {
    ArrayRef<char> one = w.getRawData();
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c)
        std::memcpy(&out[(r * cols + c) * elem], one.data(), elem);
  } else {
    const char *raw = w.getRawData().data();
    switch (elem) {
    case 2: gatherColumnsAsRows<uint16_t>(raw, out.data(), k, n, rowOf, cols); break;
    case 4: gatherColumnsAsRows<uint32_t>(raw, out.data(), k, n, rowOf, cols); break;
    case 1: gatherColumnsAsRows<uint8_t>(raw, out.data(), k, n, rowOf, cols); break;
    default: gatherColumnsAsRows<uint64_t>(raw, out.data(), k, n, rowOf, cols); break;
    }
  }
  return out;
}

DenseElementsAttr kernelWeight(DenseElementsAttr w, function_ref<int64_t(int64_t)> rowOf,
                               int64_t rows, int64_t cols) {
  auto type = cast<RankedTensorType>(w.getType());
  auto outType = RankedTensorType::get({rows, cols}, type.getElementType());
  return DenseElementsAttr::getFromRawBuffer(outType, kernelRows(w, rowOf, rows, cols));
}

template <typename T>
ArrayRef<char> bytesOf(const std::vector<T> &v) {
  return {reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T)};
}

/// kernelWeight of a bf16 weight in fp8: the e4m3 rows and their fp32 scales. Only the fp8
/// bytes become an attribute (attributes live as long as the context: a bf16 copy of every
/// weight would double the compiler's memory).
std::pair<DenseElementsAttr, DenseElementsAttr>
fp8KernelWeight(DenseElementsAttr w, function_ref<int64_t(int64_t)> rowOf, int64_t n) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t k = type.getDimSize(0);
  std::vector<char> rows = kernelRows(w, rowOf, n);
  std::vector<uint8_t> q(n * k);
  std::vector<float> scale(n);
  fp8::quantizeRows(reinterpret_cast<const uint16_t *>(rows.data()), n, k, q.data(),
                    scale.data());
  MLIRContext *context = type.getContext();
  auto qType = RankedTensorType::get({n, k}, Float8E4M3FNType::get(context));
  auto scaleType = RankedTensorType::get({n}, Float32Type::get(context));
  return {DenseElementsAttr::getFromRawBuffer(qType, bytesOf(q)),
          DenseElementsAttr::getFromRawBuffer(scaleType, bytesOf(scale))};
}

/// A bf16 [K, N] weight as the kernels see it in fp8, dequantized back to bf16
/// (QuantizeWeights.h).
DenseElementsAttr fp8DequantizedWeight(DenseElementsAttr w) {
  auto type = cast<RankedTensorType>(w.getType());
  // Every column of a splat has the same maximum, so its dequantized value is one splat too.
  int64_t k = w.isSplat() ? 1 : type.getDimSize(0), n = w.isSplat() ? 1 : type.getDimSize(1);
  std::vector<uint16_t> out(k * n);
  fp8::dequantizedColumns(reinterpret_cast<const uint16_t *>(w.getRawData().data()), k, n,
                          out.data());
  return DenseElementsAttr::getFromRawBuffer(type, bytesOf(out));
}

/// kernelWeight of a bf16 weight in int4: the packed nibbles [N, K / 2] (ui8) and the fp32
/// scales [N, K / kLinearInt4Group] of every row and group (QuantizeWeights.h).
std::pair<DenseElementsAttr, DenseElementsAttr>
int4KernelWeight(DenseElementsAttr w, function_ref<int64_t(int64_t)> rowOf, int64_t n) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t k = type.getDimSize(0);
  const int64_t group = kn::kLinearInt4Group;
  std::vector<char> rows = kernelRows(w, rowOf, n);
  std::vector<uint8_t> q(n * k / 2);
  std::vector<float> scale(n * (k / group));
  int4::quantizeGroups(reinterpret_cast<const uint16_t *>(rows.data()), n, k, group, q.data(),
                       scale.data());
  MLIRContext *context = type.getContext();
  auto qType =
      RankedTensorType::get({n, k / 2}, IntegerType::get(context, 8, IntegerType::Unsigned));
  auto scaleType = RankedTensorType::get({n, k / group}, Float32Type::get(context));
  return {DenseElementsAttr::getFromRawBuffer(qType, bytesOf(q)),
          DenseElementsAttr::getFromRawBuffer(scaleType, bytesOf(scale))};
}

/// A bf16 [K, N] weight as the kernels see it in int4, dequantized back to bf16.
DenseElementsAttr int4DequantizedWeight(DenseElementsAttr w) {
  auto type = cast<RankedTensorType>(w.getType());
  const int64_t group = kn::kLinearInt4Group;
  if (w.isSplat()) {
    // Every group of a splat has the same maximum: one group of one column gives the value.
    std::vector<uint16_t> in(group, *reinterpret_cast<const uint16_t *>(w.getRawData().data()));
    std::vector<uint16_t> out(group);
    int4::dequantizedColumns(in.data(), group, 1, group, out.data());
    return DenseElementsAttr::getFromRawBuffer(type, bytesOf(std::vector<uint16_t>{out[0]}));
  }
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  std::vector<uint16_t> out(k * n);
  int4::dequantizedColumns(reinterpret_cast<const uint16_t *>(w.getRawData().data()), k, n,
                           group, out.data());
  return DenseElementsAttr::getFromRawBuffer(type, bytesOf(out));
}

/// A [K, N] row-major weight with its columns reordered: column c taken from colOf(c).
DenseElementsAttr permuteColumns(DenseElementsAttr w, function_ref<int64_t(int64_t)> colOf) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  if (w.isSplat())
    return w;
  size_t elem = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> raw = w.getRawData();
  std::vector<char> out(raw.size());
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c)
      std::memcpy(&out[(r * n + c) * elem], &raw[(r * n + colOf(c)) * elem], elem);
  return DenseElementsAttr::getFromRawBuffer(type, out);
}

Type elementTypeOf(Value buffer) { return cast<MemRefType>(buffer.getType()).getElementType(); }

DenseElementsAttr constantData(Value v) {
  auto c = v.getDefiningOp<graph::ConstantOp>();
  return c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
}

/// cos or sin of a rope as the [rows, D] table the kernel reads (row = token of the flattened
/// batch). A table that one [S, D] slice broadcasts over a batch of sequences at the same
/// positions ([1, .., 1, S, D], as a prompt without position ids has) repeats once a sequence.
DenseElementsAttr ropeTable(Value table, int64_t rows, int64_t tableWidth) {
  DenseElementsAttr data = constantData(table);
  if (!data || tableWidth <= 0)
    return {};
  auto tableType = RankedTensorType::get({rows, tableWidth}, data.getElementType());
  int64_t elements = data.getNumElements();
  if (elements == rows * tableWidth)
    return data.reshape(tableType);
  auto type = cast<RankedTensorType>(data.getType());
  int64_t sequenceRows = elements / tableWidth;
  bool broadcast = type.getRank() >= 2 && type.getShape().back() == tableWidth &&
                   type.getDimSize(type.getRank() - 2) == sequenceRows;
  if (!broadcast || sequenceRows == 0 || rows % sequenceRows != 0)
    return {};
  if (data.isSplat())
    return data.resizeSplat(tableType);
  ArrayRef<char> raw = data.getRawData();
  std::vector<char> repeated;
  repeated.reserve(raw.size() * size_t(rows / sequenceRows));
  for (int64_t copy = 0; copy < rows / sequenceRows; ++copy)
    repeated.insert(repeated.end(), raw.begin(), raw.end());
  return DenseElementsAttr::getFromRawBuffer(tableType, repeated);
}

} // namespace

FailureOr<std::pair<Value, Value>>
FunctionLowering::ropeTableBuffers(Operation *user, graph::SplitQkvHeadsOp split, int64_t m,
                                   bool allowF32) {
  // A row of a table covers the rotated columns of a head (all of them, or fewer with partial
  // rotary).
  int64_t tableWidth = split.rotaryDim();
  auto tableTypeOk = [&](Type t) { return t.isBF16() || (allowF32 && t.isF32()); };
  // Constant tables (a prompt at fixed positions), or the rows a lookup at the cache position
  // produced (decode).
  auto buffer = [&](Value table) -> FailureOr<Value> {
    auto type = cast<RankedTensorType>(table.getType());
    Type element = type.getElementType();
    DenseElementsAttr data = tableTypeOk(element) ? ropeTable(table, m, tableWidth)
                                                  : DenseElementsAttr();
    if (data)
      return makeWeight(table.getLoc(), data);
    if (table.getDefiningOp<graph::ConstantOp>() || type.getNumElements() != m * tableWidth ||
        !tableTypeOk(element))
      return user->emitError("rope tables must be ")
             << (allowF32 ? "bf16 or f32 [" : "bf16 [") << m << ", " << tableWidth << "]";
    FailureOr<Value> b = bufferOf(table);
    if (succeeded(b) && elementTypeOf(*b) != element &&
        failed(requireModelActivations(user, "a RoPE table computed at run time")))
      return failure();
    return b;
  };
  FailureOr<Value> cos = buffer(split.getCos());
  if (failed(cos))
    return failure();
  FailureOr<Value> sin = buffer(split.getSin());
  if (failed(sin))
    return failure();
  if (elementTypeOf(*cos) != elementTypeOf(*sin))
    return user->emitError("rope tables cos and sin must have one element type");
  return std::pair(*cos, *sin);
}

bool FunctionLowering::wantsKernel(graph::LinearOp linear) const {
  auto in = linear.getInput().getType();
  // bf16 linears go through the kernel-aware lowering, which takes linear_small_m where it
  // fits and a library GEMM with separate RoPE/SwiGLU/RMSNorm launches where it does not.
  return in.getElementType().isBF16() && linear.getWeight().getDefiningOp<graph::ConstantOp>();
}

LogicalResult FunctionLowering::emitKernel(Location loc, StringRef name,
                                           ArrayRef<Attribute> params, ArrayRef<Value> args,
                                           ArrayRef<int64_t> grid, ArrayRef<int64_t> block,
                                           int64_t sharedBytes, ArrayRef<unsigned> writtenArgs) {
  launch::KernelOp::createWithArguments(builder, loc, name, builder.getArrayAttr(params), args,
                                        grid, block, sharedBytes, writtenArgs);
  return success();
}

LogicalResult FunctionLowering::lowerLinearKernel(graph::LinearOp linear) {
  auto inType = linear.getInput().getType();
  auto [m, k] = linearRows(linear);
  DenseElementsAttr w = constantData(linear.getWeight());
  if (!w)
    return linear.emitError("linear kernel needs a constant weight");
  int64_t n = cast<ShapedType>(w.getType()).getDimSize(1);

  auto epilogue = kn::LinearEpilogue::NONE;
  std::function<int64_t(int64_t)> rowOf = [](int64_t r) { return r; };
  int64_t gateStart = 0, upStart = 0;
  Value cosTable, sinTable;
  // rotaryDim: the rotated columns of a head when fewer than all (partial rotary), else 0.
  int64_t ropeRows = 0, headDim = 0, rotaryDim = 0;
  Type outType = linear.getType().getElementType();

  // The gate epilogue is the op's (sinter-fuse-linear-swiglu), the RoPE one its
  // split_qkv_heads' (sinter-fuse-qkv-heads).
  const bool geglu = linear.gateActivationName() == "gelu_tanh";
  if (std::optional<ArrayRef<int64_t>> pairs = linear.getGateUpColumns()) {
    gateStart = (*pairs)[0];
    upStart = (*pairs)[1];
    epilogue = geglu ? kn::LinearEpilogue::GELU_TANH_MUL_PAIRS
                     : kn::LinearEpilogue::SILU_MUL_PAIRS;
    int64_t g0 = gateStart, u0 = upStart;
    rowOf = [=](int64_t r) { return (r % 2 ? u0 : g0) + r / 2; };
  }
  auto split = dyn_cast_or_null<graph::SplitQkvHeadsOp>(graph::singleUser(linear.getResult()));
  // With q / k norms the rotation follows them in their own launch (lowerSplitQkvHeads).
  if (split && split.hasRope() && !split.hasNorm()) {
    if (epilogue != kn::LinearEpilogue::NONE || linear.getResidual())
      return linear.emitError("a QKV projection with rotated heads takes no residual or "
                              "gate epilogue");
    headDim = split.getQ().getType().getDimSize(3);
    ropeRows = split.columnOffset(2);
    rotaryDim = split.rotaryDim() < headDim ? split.rotaryDim() : 0;
    auto tables = ropeTableBuffers(linear, split, m);
    if (failed(tables))
      return failure();
    std::tie(cosTable, sinTable) = *tables;
    epilogue = kn::LinearEpilogue::ROPE_PAIRS;
    int64_t rr = ropeRows, hd = headDim, rd = rotaryDim;
    rowOf = [=](int64_t r) { return (int64_t)kn::linear_rope_pairs_row(r, rr, hd, rd); };
  }
  if (epilogue == kn::LinearEpilogue::NONE) {
    if (linear.getActivation()) // sinter-fuse-linear-activation's; the bias is optional
      epilogue = *linear.getActivation() == "gelu" ? kn::LinearEpilogue::GELU
                                                   : kn::LinearEpilogue::GELU_TANH;
    else if (linear.getResidual())
      epilogue = linear.getBias() ? kn::LinearEpilogue::BIAS_RESIDUAL
                                  : kn::LinearEpilogue::RESIDUAL;
    else if (linear.getBias())
      epilogue = kn::LinearEpilogue::BIAS;
  }

  auto prologue = !linear.getNormWeight()    ? kn::LinearPrologue::NONE
                  : linear.normCentered()    ? kn::LinearPrologue::LAYER_NORM
                  : linear.normScalesInF32() ? kn::LinearPrologue::RMS_NORM_FP32_WEIGHT
                                             : kn::LinearPrologue::RMS_NORM;
  const kn::LinearWeights format = kernelWeights(k);
  const int group = weightGroup(format);
  // A post-norm and residual add marked for this prologue (sinter-fuse-residual-norm-prologue):
  // the kernel reads its x and residual instead of its result, when it takes them here.
  Value prologueResidual, residualSum, postNormWeight;
  FailureOr<Value> x = failure();
  if (auto residualNorm = linear.getInput().getDefiningOp<graph::FusionGroupOp>();
      residualNorm && residualNorm.getInConsumerPrologue() &&
      prologue == kn::LinearPrologue::RMS_NORM_FP32_WEIGHT &&
      !buffers.lookup(linear.getInput())) {
    Value normX, weight, residual;
    float postEps;
    if (!residualNorm.residualNormParts(normX, weight, residual, postEps))
      return residualNorm.emitError("internal: a marked group that is no residual norm");
    FailureOr<Value> fusedX = bufferOf(normX);
    if (failed(fusedX))
      return failure();
    const int fusedXBytes = elementTypeOf(*fusedX).getIntOrFloatBitWidth() / 8;
    const auto fused = kn::LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT;
    if (postEps == linear.getNormEpsilon()->convertToFloat() &&
        kn::linear_small_m_supported(m, n, k, fused, epilogue, ropeRows, headDim, fusedXBytes,
                                     smCount, format, group, sharedMemory)) {
      FailureOr<Value> residualBuffer = bufferOf(residual);
      if (failed(residualBuffer))
        return failure();
      prologue = fused;
      x = fusedX;
      prologueResidual = *residualBuffer;
      postNormWeight = weight;
      // Block 0 writes the sum for the group's other users.
      if (!linear.getInput().hasOneUse()) {
        residualSum = destinationFor(linear.getInput());
        buffers[linear.getInput()] = residualSum;
      }
    }
  }
  if (!prologueResidual) // the group, if marked, becomes its own launch here (bufferOf)
    x = bufferOf(linear.getInput());
  if (failed(x))
    return failure();
  Value normWeight, bias, residual;
  // (A LayerNorm's scale and shift go to the kernel packed, to a library GEMM's generated
  // norm as they are: both below.)
  if (linear.getNormWeight() && prologue != kn::LinearPrologue::LAYER_NORM &&
      prologue != kn::LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT) {
    auto b = bufferOf(linear.getNormWeight());
    if (failed(b))
      return failure();
    normWeight = *b;
  }
  // A bias before RoPE: the GEMM's in column order, the kernel's in its row order (below).
  auto columnBias = [&]() -> LogicalResult {
    if (!linear.getBias())
      return success();
    auto b = bufferOf(linear.getBias());
    if (failed(b))
      return failure();
    bias = *b;
    return success();
  };
  if (epilogue != kn::LinearEpilogue::ROPE_PAIRS && failed(columnBias()))
    return failure();
  if (linear.getResidual()) {
    auto b = bufferOf(linear.getResidual());
    if (failed(b))
      return failure();
    residual = *b;
  }
  // With a gate pair epilogue the result is the gate, N/2 columns.
  Value out = destinationFor(linear.getResult());
  buffers[linear.getResult()] = out;
  Type xType = elementTypeOf(*x);
  int xBytes = xType.getIntOrFloatBitWidth() / 8;
  if (!kn::linear_small_m_supported(m, n, k, prologue, epilogue, ropeRows, headDim, xBytes,
                                    smCount, format, group, sharedMemory)) {
    if (failed(requireModelActivations(linear, "a linear on " + std::to_string(m) + " rows of " +
                                                   std::to_string(k) + " (past linear_small_m)")))
      return failure();
    // Too many rows for the streaming kernel: a library GEMM with the fused ops as their own
    // small launches around it (normalization before; RoPE in place or SwiGLU after).
    Value input = *x;
    if (prologue == kn::LinearPrologue::LAYER_NORM) {
      auto normed = emitGenericLayerNorm(linear.getLoc(), *x, linear.getNormWeight(),
                                         linear.getNormBias(), m, k,
                                         linear.getNormEpsilon()->convertToFloat());
      if (failed(normed))
        return failure();
      input = *normed;
    } else if (normWeight) {
      if (!kn::rms_norm_supported(m, k))
        return linear.emitError("no rms_norm configuration for D=") << k;
      input = launch::AllocOp::create(builder, linear.getLoc(),
                                      MemRefType::get({m, k}, inType.getElementType()),
                                      IntegerAttr());
      if (failed(emitRmsNorm(linear.getLoc(), *x, normWeight, input, m, k,
                             linear.getNormEpsilon()->convertToFloat())))
        return failure();
    }
    bool gated = kn::linear_epilogue_gates(epilogue);
    // Only a weight that linear_small_m takes at fewer rows has an fp8 or int4 form the GEMM
    // must agree with; any other (a LoRA adapter of rank 8) keeps its bf16 values.
    const kn::LinearWeights gemmFormat =
        format != kn::LinearWeights::BF16 &&
                kn::linear_small_m_supported(1, n, k, prologue, epilogue, ropeRows, headDim,
                                             xBytes, smCount, format, group, sharedMemory)
            ? format
            : kn::LinearWeights::BF16;
    DenseElementsAttr gemmWeight = gemmWeightData(linear, gemmFormat);
    if (gated) {
      int64_t half = n / 2, g0 = gateStart, u0 = upStart;
      gemmWeight = permuteColumns(gemmWeight,
                                  [=](int64_t c) { return c < half ? g0 + c : u0 + c - half; });
    }
    bool activated =
        epilogue == kn::LinearEpilogue::GELU_TANH || epilogue == kn::LinearEpilogue::GELU;
    Value product = gated || activated
                        ? launch::AllocOp::create(builder, linear.getLoc(),
                                                  MemRefType::get({m, n}, outType), IntegerAttr())
                        : out;
    const char *copySuffix = gemmFormat == kn::LinearWeights::FP8_E4M3 ? ".fp8_dequantized"
                             : gemmFormat == kn::LinearWeights::INT4   ? ".int4_dequantized"
                                                                       : nullptr;
    Value weight = makeWeight(linear.getWeight().getLoc(), gemmWeight,
                              copySuffix ? newWeightName(gemmWeight, copySuffix) : "");
    if (epilogue == kn::LinearEpilogue::ROPE_PAIRS && failed(columnBias()))
      return failure();
    launch::GemmOp::create(builder, linear.getLoc(), input, weight, bias, residual,
                           product, builder.getI64IntegerAttr(m), builder.getI64IntegerAttr(n),
                           builder.getI64IntegerAttr(k), builder.getStringAttr("native"));
    if (gated) {
      if (!kn::gate_mul_supported(m, n / 2))
        return linear.emitError("no gate_mul configuration for N=") << n / 2;
      kn::LaunchParams lp = kn::gate_mul_launch(m, n / 2);
      SmallVector<Attribute> gateParams = {intParam(builder, m), intParam(builder, n / 2)};
      if (geglu)
        gateParams.push_back(strParam(
            builder, kn::kGateActivationNames[(int)kn::GateActivation::GELU_TANH]));
      return emitKernel(linear.getLoc(), "gate_mul", gateParams,
                        {product, out}, {lp.grid.x, lp.grid.y, lp.grid.z},
                        {lp.block.x, lp.block.y, lp.block.z}, lp.shared_bytes, {1});
    }
    if (activated) // the GeLU of the rounded product: one generated launch
      return emitGenericUnary(linear.getLoc(), product, out, m, n, *linear.getActivation());
    if (epilogue == kn::LinearEpilogue::ROPE_PAIRS) {
      if (!kn::rope_rows_supported(m, n, ropeRows, headDim))
        return linear.emitError("no rope_rows configuration");
      kn::LaunchParams lp = kn::rope_rows_launch(m, ropeRows);
      SmallVector<Attribute> ropeParams = {intParam(builder, m), intParam(builder, n),
                                           intParam(builder, ropeRows), intParam(builder, headDim)};
      if (rotaryDim)
        ropeParams.push_back(intParam(builder, rotaryDim));
      return emitKernel(split.getLoc(), "rope_rows", ropeParams,
                        {cosTable, sinTable, out}, {lp.grid.x, lp.grid.y, lp.grid.z},
                        {lp.block.x, lp.block.y, lp.block.z}, lp.shared_bytes, {2});
    }
    return success();
  }
  if (residual && elementTypeOf(residual) != elementTypeOf(out))
    return linear.emitError("linear kernel: the residual is ")
           << elementTypeOf(residual) << " but the output is " << elementTypeOf(out);
  std::string layout = std::to_string((int)epilogue) + ":" + std::to_string(gateStart) + ":" +
                       std::to_string(upStart) + ":" + std::to_string(ropeRows) + ":" +
                       std::to_string(headDim);
  if (rotaryDim)
    layout += ":" + std::to_string(rotaryDim);
  const int64_t weightCols = kn::linear_small_m_weight_cols(int(k), prologue, xBytes, format);
  if (weightCols != k)
    layout += ":cols" + std::to_string(weightCols);
  auto [weight, weightScale] = makeKernelWeight(linear, layout, rowOf, format, weightCols);
  // The rotated heads' bias, added before the rotation, is in the kernel's row order too.
  if (epilogue == kn::LinearEpilogue::ROPE_PAIRS && linear.getBias()) {
    DenseElementsAttr b = constantData(linear.getBias());
    if (!b || !b.getElementType().isBF16() || b.getNumElements() != n)
      return linear.emitError("a QKV projection with rotated heads needs a constant bf16 bias of ")
             << n << " elements";
    DenseElementsAttr permuted =
        permuteColumns(b.reshape(RankedTensorType::get({1, n}, b.getElementType())), rowOf)
            .reshape(cast<ShapedType>(b.getType()));
    bias = makeWeight(linear.getBias().getLoc(), permuted, newWeightName(permuted, ".rope_rows"));
  }

  if (prologue == kn::LinearPrologue::LAYER_NORM ||
      prologue == kn::LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT) {
    FailureOr<Value> packed = postNormWeight
                                  ? pairedNormKernelWeight(postNormWeight, linear.getNormWeight(),
                                                           k, ".residual_norm")
                                  : pairedNormKernelWeight(linear.getNormWeight(),
                                                           linear.getNormBias(), k, ".layer_norm");
    if (failed(packed))
      return failure();
    normWeight = *packed;
  }
  float eps = linear.getNormEpsilon() ? linear.getNormEpsilon()->convertToFloat() : 0.0f;
  SmallVector<Attribute> params = {
      intParam(builder, m), intParam(builder, n), intParam(builder, k),
      strParam(builder, kn::kLinearPrologueNames[(int)prologue]),
      strParam(builder, kn::kLinearEpilogueNames[(int)epilogue]),
      strParam(builder, cxxType(elementTypeOf(out))),
      strParam(builder, std::to_string(floatBits(eps)) + "u"), intParam(builder, ropeRows),
      intParam(builder, headDim), intParam(builder, smCount), strParam(builder, cxxType(xType))};
  // Every launch spells all 15 template parameters: HANDOFF and HANDOFF_BLOCKS (no handoff
  // here: launch-plan-handoffs pairs decode MLP launches), then WT and W_GROUP.
  params.append({strParam(builder, "sinter::kernels::LinearHandoff::NONE"), intParam(builder, 0)});
  params.append({strParam(builder, kn::kLinearWeightTypeNames[(int)format]),
                 intParam(builder, group)});
  if (rotaryDim) // partial rotary: the optional 16th parameter
    params.push_back(intParam(builder, rotaryDim));
  kn::LaunchParams lp =
      kn::linear_small_m_launch(m, n, k, prologue, smCount, xBytes, format, sharedMemory);
  Location loc = linear.getLoc();
  SmallVector<unsigned> written = {7};
  if (residualSum)
    written.push_back(14);
  return emitKernel(loc, "linear_small_m", params,
                    {*x, weight, normWeight, bias, residual, cosTable, sinTable, out,
                     /*handoff_count=*/Value(), /*reset_x=*/Value(), /*reset_count=*/Value(),
                     weightScale, /*w_zero=*/Value(), prologueResidual, residualSum},
                    {lp.grid.x, lp.grid.y, lp.grid.z}, {lp.block.x, lp.block.y, lp.block.z},
                    lp.shared_bytes, written);
}

FailureOr<Value> FunctionLowering::pairedNormKernelWeight(Value first, Value second, int64_t k,
                                                          StringRef suffix) {
  DenseElementsAttr head = constantData(first);
  DenseElementsAttr tail = constantData(second);
  if (!head || !tail)
    return emitError(first.getLoc(), "a linear prologue needs constant norm weights");
  std::vector<float> packed = graph::readFloat32(head);
  std::vector<float> rest = graph::readFloat32(tail);
  packed.insert(packed.end(), rest.begin(), rest.end());
  auto data = graph::fromFloat32(RankedTensorType::get({2, k}, builder.getF32Type()), packed);
  Location loc = builder.getFusedLoc({first.getLoc(), second.getLoc()});
  return makeWeight(loc, data, newWeightName(data, suffix));
}

std::pair<Value, Value>
FunctionLowering::makeKernelWeight(graph::LinearOp linear, StringRef layout,
                                   function_ref<int64_t(int64_t)> rowOf,
                                   kn::LinearWeights format, int64_t cols) {
  DenseElementsAttr w = constantData(linear.getWeight());
  Location loc = linear.getWeight().getLoc();
  const void *source = w.getAsOpaquePointer();
  // Whole 16-row tiles: a ragged N (an LM head over 50257 tokens) gets zero rows after its own.
  const int64_t n = cast<ShapedType>(w.getType()).getDimSize(1);
  const int64_t paddedRows = kn::linear_small_m_weight_rows(int(n));
  if (format == kn::LinearWeights::BF16) {
    DenseElementsAttr &rows = weights.relayouts[{source, layout.str()}];
    if (!rows)
      rows = kernelWeight(w, rowOf, paddedRows, cols);
    return {makeWeight(loc, rows), Value()};
  }
  assert(cols == cast<ShapedType>(w.getType()).getDimSize(0) &&
         "fp8 and int4 kernel rows are K long");
  const std::string suffix = format == kn::LinearWeights::INT4 ? ".int4" : ".fp8";
  const std::string key = layout.str() + ":" + suffix.substr(1); // layout:fp8, layout:int4
  DenseElementsAttr &rows = weights.relayouts[{source, key}];
  DenseElementsAttr &scale = weights.relayouts[{source, key + "_scale"}];
  if (!rows)
    std::tie(rows, scale) = format == kn::LinearWeights::INT4
                                ? int4KernelWeight(w, rowOf, paddedRows)
                                : fp8KernelWeight(w, rowOf, paddedRows);
  // One number for the pair, wN.fp8 and wN.fp8_scale (wN.int4, wN.int4_scale). Equal bytes are
  // one tensor, as for every weight: a pair whose rows or scales equal an earlier pair's shares
  // that tensor, and a new scale of shared rows takes a number of its own.
  std::string rowsName = newWeightName(rows, suffix);
  std::string scaleName = rowsName.empty() ? newWeightName(scale, suffix + "_scale")
                                           : rowsName + "_scale";
  return {makeWeight(loc, rows, rowsName), makeWeight(loc, scale, scaleName)};
}

DenseElementsAttr FunctionLowering::gemmWeightData(graph::LinearOp linear,
                                                   kn::LinearWeights format) {
  DenseElementsAttr w = constantData(linear.getWeight());
  if (format == kn::LinearWeights::BF16)
    return w;
  const bool int4 = format == kn::LinearWeights::INT4;
  DenseElementsAttr &copy =
      weights.relayouts[{w.getAsOpaquePointer(), int4 ? ":int4_gemm" : ":fp8_gemm"}];
  if (!copy)
    copy = int4 ? int4DequantizedWeight(w) : fp8DequantizedWeight(w);
  return copy;
}

kn::LinearWeights FunctionLowering::kernelWeights(int64_t k) const {
  if (weightDtype == kn::LinearWeights::INT4 &&
      (k % kn::kLinearInt4BlockK != 0 ||
       !kn::linear_int4_group_supported(int(k), kn::kLinearInt4Group)))
    return kn::LinearWeights::BF16;
  return weightDtype;
}

bool sinter::gatherHasKernel(graph::GatherOp gather) {
  DenseElementsAttr table = constantData(gather.getInput());
  if (!table || gather.getAxis() != 0 || cast<RankedTensorType>(table.getType()).getRank() != 2)
    return false;
  auto tableType = cast<RankedTensorType>(table.getType());
  auto ids = cast<RankedTensorType>(gather.getIndices().getType());
  return ids.getElementType().isInteger(64) &&
         kn::embedding_gather_supported(ids.getNumElements(), tableType.getDimSize(1),
                                        tableType.getDimSize(0),
                                        tableType.getElementTypeBitWidth() / 8);
}

bool sinter::rmsNormHasKernel(graph::RMSNormalizationOp norm) {
  auto in = cast<RankedTensorType>(norm.getInput().getType());
  if (in.getRank() == 0)
    return false;
  int64_t d = in.getShape().back(), m = d ? in.getNumElements() / d : 0;
  return in.getElementType().isBF16() && norm.getType() == in &&
         norm.getAxis() == in.getRank() - 1 && kn::rms_norm_supported(m, d);
}

LogicalResult FunctionLowering::lowerGather(graph::GatherOp gather) {
  DenseElementsAttr table = constantData(gather.getInput());
  auto tableType = table ? cast<RankedTensorType>(table.getType()) : RankedTensorType();
  if (!table || gather.getAxis() != 0 || tableType.getRank() != 2)
    return gather.emitError("only embedding lookups (gather rows of a constant 2-D table) "
                            "have a kernel");
  auto ids = cast<RankedTensorType>(gather.getIndices().getType());
  if (!ids.getElementType().isInteger(64))
    return gather.emitError("embedding ids must be i64");
  int64_t m = ids.getNumElements(), d = tableType.getDimSize(1), vocab = tableType.getDimSize(0);
  int elemBytes = tableType.getElementTypeBitWidth() / 8;
  if (!kn::embedding_gather_supported(m, d, vocab, elemBytes))
    return gather.emitError("no embedding_gather configuration for D=") << d;
  auto idsBuffer = bufferOf(gather.getIndices());
  if (failed(idsBuffer))
    return failure();
  Value tableBuffer = makeWeight(gather.getInput().getLoc(), table);
  buffers[gather.getInput()] = tableBuffer;
  Value out = destinationFor(gather.getResult());
  buffers[gather.getResult()] = out;
  Type outType = elementTypeOf(out);
  // The gather verifier gives the result the table's element type; only --activations=f32
  // widens a bf16 result buffer to f32, which the kernel converts on the fly.
  assert((outType == tableType.getElementType() ||
          (tableType.getElementType().isBF16() && outType.isF32())) &&
         "embedding_gather output type");
  kn::LaunchParams lp = kn::embedding_gather_launch(m, d, elemBytes);
  return emitKernel(gather.getLoc(), "embedding_gather",
                    {intParam(builder, m), intParam(builder, d), intParam(builder, vocab),
                     strParam(builder, cxxType(tableType.getElementType())),
                     strParam(builder, cxxType(outType))},
                    {*idsBuffer, tableBuffer, out}, {lp.grid.x, lp.grid.y, lp.grid.z},
                    {lp.block.x, lp.block.y, lp.block.z}, lp.shared_bytes, {2});
}

LogicalResult FunctionLowering::lowerAttention(graph::FusedAttentionOp attention) {
  std::optional<HeadColumns> q = headColumns(attention.getQ()), k = headColumns(attention.getK()),
                             v = headColumns(attention.getV());
  if (!q || !k || !v || q->buffer != k->buffer || q->buffer != v->buffer)
    return attention.emitError("attention operands must come from one fused QKV projection "
                               "(sinter-fuse-qkv-heads)");
  auto qType = attention.getQ().getType(), kType = attention.getK().getType();
  int64_t batch = qType.getDimSize(0), s = qType.getDimSize(2), hq = qType.getDimSize(1),
          hkv = kType.getDimSize(1), d = qType.getDimSize(3), stride = q->rowStride;
  Type qkvType = elementTypeOf(q->buffer);
  int qkvBytes = qkvType.getIntOrFloatBitWidth() / 8;
  // 16-bit q/k/v take the tensor-core kernel at every length; fp32 (or a head size it does
  // not tile) the short-prompt kernel, which holds a head's keys in shared memory.
  bool flash = kn::flash_attention_supported(s, hq, hkv, d, q->offset, k->offset, v->offset, stride,
                                             qkvBytes, batch, sharedMemory);
  float softcap = attention.getSoftcap().convertToFloat();
  if (!flash && softcap != 0.0f)
    return attention.emitError("soft-capped attention needs the flash_attention kernel, which "
                               "does not take S=")
           << s << " D=" << d << " " << qkvType << " on this target";
  if (!flash && batch != 1)
    return attention.emitError("attention of ")
           << batch << " sequences needs 16-bit q/k/v and a head size that is a multiple of 16 "
           << "up to 256 (got " << qkvType << ", D=" << d << ")";
  if (!flash && !kn::attention_prefill_supported(s, hq, hkv, d, q->offset, k->offset, v->offset,
                                                 stride, qkvBytes, sharedMemory))
    return attention.emitError("no attention kernel for S=")
           << s << " D=" << d << " " << qkvType
           << ": fp32 attention keeps a head's keys in shared memory (prompts up to a few "
              "hundred tokens); compile with --dtype bf16 or f16 for longer prompts";
  if (failed(requireMergedHeads(attention, attention.getMergedHeads())))
    return failure();
  Value mask;
  if (attention.getKeyMask()) {
    auto m = bufferOf(attention.getKeyMask());
    if (failed(m))
      return failure();
    if (!cast<ShapedType>(attention.getKeyMask().getType()).getElementType().isInteger(64))
      return attention.emitError("key_mask must be i64 for the attention kernel");
    mask = *m;
  }
  Value out = destinationFor(attention.getResult());
  buffers[attention.getResult()] = out;
  float scale = attention.getScale().convertToFloat();
  kn::LaunchParams lp = flash ? kn::flash_attention_launch(s, hq, d, batch)
                              : kn::attention_prefill_launch(s, hq, d, qkvBytes);
  SmallVector<Attribute> params = {intParam(builder, s),
                                   intParam(builder, hq),
                                   intParam(builder, hkv),
                                   intParam(builder, d),
                                   intParam(builder, q->offset),
                                   intParam(builder, k->offset),
                                   intParam(builder, v->offset),
                                   intParam(builder, stride),
                                   strParam(builder, std::to_string(floatBits(scale)) + "u"),
                                   strParam(builder, attention.getCausal() ? "true" : "false"),
                                   strParam(builder, mask ? "true" : "false"),
                                   strParam(builder, cxxType(qkvType)),
                                   strParam(builder, cxxType(elementTypeOf(out)))};
  if (softcap != 0.0f) { // after the tiling parameters, spelled at their defaults
    kn::FlashAttentionTiling tiling = kn::flash_attention_default_tiling(int(s), int(d));
    params.append({intParam(builder, tiling.row_tiles), intParam(builder, tiling.key_tile),
                   intParam(builder, tiling.min_blocks_per_sm),
                   strParam(builder, std::to_string(floatBits(softcap)) + "u")});
  }
  return emitKernel(attention.getLoc(), flash ? "flash_attention" : "attention_prefill", params,
                    {q->buffer, mask, out}, {lp.grid.x, lp.grid.y, lp.grid.z},
                    {lp.block.x, lp.block.y, lp.block.z}, lp.shared_bytes, {2});
}

LogicalResult FunctionLowering::requireMergedHeads(Operation *attention, bool mergedHeads) {
  if (mergedHeads)
    return success();
  return attention->emitError("attention output must be transposed back to [B, S, heads * D]");
}

LogicalResult FunctionLowering::lowerRmsNorm(graph::RMSNormalizationOp norm) {
  auto in = cast<RankedTensorType>(norm.getInput().getType());
  int64_t d = in.getShape().back(), m = in.getNumElements() / d;
  if (!in.getElementType().isBF16() || norm.getType() != in ||
      (norm.getAxis() != in.getRank() - 1 && norm.getAxis() != -1) ||
      !kn::rms_norm_supported(m, d))
    return norm.emitError("rms_norm kernel needs bf16 [M, D] over the last axis");
  auto x = bufferOf(norm.getInput()), w = bufferOf(norm.getScale());
  if (failed(x) || failed(w))
    return failure();
  Value out = destinationFor(norm.getResult());
  buffers[norm.getResult()] = out;
  return emitRmsNorm(norm.getLoc(), *x, *w, out, m, d, norm.getEpsilon().convertToFloat());
}

LogicalResult FunctionLowering::emitRmsNorm(Location loc, Value x, Value weight, Value out,
                                            int64_t m, int64_t d, float eps) {
  kn::LaunchParams lp = kn::rms_norm_launch(m, d);
  SmallVector<Attribute> params = {intParam(builder, m), intParam(builder, d),
                                   strParam(builder, std::to_string(floatBits(eps)) + "u")};
  // An fp32 weight (of a bf16 x: Gemma, OLMo 2) scales in fp32 with one rounding.
  if (elementTypeOf(weight).isF32())
    params.push_back(strParam(builder, cxxType(elementTypeOf(weight))));
  return emitKernel(loc, "rms_norm", params,
                    {x, weight, out}, {lp.grid.x, lp.grid.y, lp.grid.z},
                    {lp.block.x, lp.block.y, lp.block.z}, lp.shared_bytes, {2});
}
