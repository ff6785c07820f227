// Import of MaxPool, AveragePool, LpPool, GlobalMaxPool and GlobalAveragePool as ops the generic tier
// compiles: a compile-time table gathers each output position's window ([N, C, outputs,
// window]), one reduction over the window's axis pools it. Entries outside the input read one
// appended value: -inf for the maximum, 0 for the average and the p-norm; the average's divisor per output position
// is the count of entries inside the input (or, with count_include_pad, inside the padded
// input), a constant.
#include "NodeImporter.h"
#include "SlidingWindow.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <cmath>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// X of a pool; MaxPool also takes 8-bit integers (opset 12).
FailureOr<RankedTensorType> poolInput(NodeImporter &n, bool takesInt8) {
  auto x = n.inputType(0);
  if (!x)
    return failure();
  if (!(takesInt8 && x.getElementType().isInteger(8)) && failed(requireFloat(n, x, "input X")))
    return failure();
  if (x.getRank() < 3)
    return n.fail("X [" + shapeText(x.getShape()) +
                  "] must be [batch, channels, spatial...] with at least one spatial dimension");
  return x;
}

enum class Pool { Max, Average, Lp };

/// MaxPool's Indices: for each output, the flat index into X of the window entry that is the
/// maximum (the first one on ties), over [N, C, spatial...] in row-major order, or with the
/// spatial dimensions in column-major order for storage_order 1.
FailureOr<Value> maxIndices(NodeImporter &n, Value windows, const WindowTable &table,
                            RankedTensorType x, const SlidingWindow &window, int64_t storageOrder) {
  auto windowsType = cast<RankedTensorType>(windows.getType());
  const int64_t batch = windowsType.getDimSize(0), channels = windowsType.getDimSize(1),
                outputs = windowsType.getDimSize(2), kernels = windowsType.getDimSize(3),
                inputs = window.inputVolume();
  Type i64 = n.builder.getI64Type();
  auto i64Type = [&](ArrayRef<int64_t> shape) { return n.tensorType(shape, i64); };
  Value slot = ArgReduceOp::create(n.builder, n.loc, i64Type({batch, channels, outputs, 1}), windows,
                                   n.builder.getStringAttr("max"), n.builder.getI64IntegerAttr(3),
                                   n.builder.getBoolAttr(true), n.builder.getBoolAttr(false));
  // The table is [outputs, kernels] (output-major): entry (o, slot) of its flat form.
  std::vector<int64_t> positions(table.indices.getValues<int64_t>().begin(),
                                 table.indices.getValues<int64_t>().end());
  if (storageOrder == 1) {
    // Row-major spatial index -> the same position with the spatial dimensions reversed.
    ArrayRef<int64_t> dims = x.getShape().drop_front(2);
    for (int64_t &p : positions) {
      if (p >= inputs)
        continue;
      int64_t rest = p, column = 0, stride = 1;
      SmallVector<int64_t> coords(dims.size());
      for (int64_t d = (int64_t)dims.size() - 1; d >= 0; --d)
        coords[d] = rest % dims[d], rest /= dims[d];
      for (size_t d = 0; d < dims.size(); ++d)
        column += coords[d] * stride, stride *= dims[d];
      p = column;
    }
  }
  auto flatTable = n.constant(DenseElementsAttr::get(i64Type({outputs * kernels}), ArrayRef(positions)));
  Value outputBase = MulOp::create(n.builder, n.loc, i64Type({1, 1, outputs, 1}),
                                   n.iota(outputs, 2, 4), n.integerScalar(i64, kernels));
  Value entry = AddOp::create(n.builder, n.loc, i64Type({batch, channels, outputs, 1}), slot,
                              outputBase);
  Value spatial = GatherOp::create(n.builder, n.loc, i64Type({batch, channels, outputs, 1}),
                                   flatTable, entry, n.builder.getI64IntegerAttr(0));
  // (n * C + c) * inputs + spatial
  Value plane = AddOp::create(n.builder, n.loc, i64Type({batch, channels, 1, 1}),
                              MulOp::create(n.builder, n.loc, i64Type({batch, 1, 1, 1}),
                                            n.iota(batch, 0, 4), n.integerScalar(i64, channels)),
                              n.iota(channels, 1, 4));
  Value base = MulOp::create(n.builder, n.loc, i64Type({batch, channels, 1, 1}), plane,
                             n.integerScalar(i64, inputs));
  return AddOp::create(n.builder, n.loc, i64Type({batch, channels, outputs, 1}), base, spatial)
      .getResult();
}

template <Pool kind> LogicalResult importPool(NodeImporter &n) {
  constexpr bool isMax = kind == Pool::Max;
  auto x = poolInput(n, isMax);
  if (failed(x))
    return failure();
  const bool wantsIndices = isMax && n.node.output_size() > 1 && !n.node.output(1).empty();
  const int64_t rank = x->getRank() - 2;
  auto kernel = n.attrInts("kernel_shape");
  if (!kernel)
    return n.fail("attribute 'kernel_shape' is required");
  if ((int64_t)kernel->size() != rank)
    return n.fail("attribute 'kernel_shape' has " + Twine(kernel->size()) + " entries for " +
                  Twine(rank) + " spatial dimensions");
  const bool ceilMode = n.attrInt("ceil_mode", 0) != 0;
  bool includePad = false;
  double p = 2;
  int64_t storageOrder = 0;
  if (isMax && (storageOrder = n.attrInt("storage_order", 0)) != 0 && storageOrder != 1)
    return n.fail("attribute 'storage_order' = " + Twine(storageOrder) + " (0 or 1)");
  else if (kind == Pool::Average)
    includePad = n.attrInt("count_include_pad", 0) != 0;
  else if ((p = double(n.attrInt("p", 2))) < 1)
    return n.fail("attribute 'p' = " + Twine(int64_t(p)) + " must be at least 1");
  auto window = readSlidingWindow(n, x->getShape(), *kernel, ceilMode);
  if (failed(window))
    return failure();

  Type et = x->getElementType();
  const int64_t batch = x->getDimSize(0), channels = x->getDimSize(1);
  const int64_t inputs = window->inputVolume(), outputs = window->outputVolume(),
                kernels = window->kernelVolume();
  WindowTable table = windowTable(n.builder.getContext(), *window, /*outputMajor=*/true);
  Value values = n.reshape(*n.input(0), {batch, channels, inputs});
  if (!isMax && !et.isF32()) // one rounding, at the end, as the f32 reference rounds
    values = CastOp::create(n.builder, n.loc, n.tensorType({batch, channels, inputs},
                                                           n.builder.getF32Type()), values);
  Type work = cast<RankedTensorType>(values.getType()).getElementType();
  if (table.readsOutside) {
    auto fillType = n.tensorType({batch, channels, 1}, work);
    // The maximum's padding is the type's lowest value: -inf, or an integer type's minimum.
    auto integer = dyn_cast<IntegerType>(work);
    Attribute lowest =
        !integer ? Attribute(n.builder.getFloatAttr(work, isMax ? -INFINITY : 0.0))
        : integer.isUnsigned()
            ? n.builder.getIntegerAttr(work, APInt::getMinValue(integer.getWidth()))
            : n.builder.getIntegerAttr(work, APInt::getSignedMinValue(integer.getWidth()));
    Value fill = n.constant(DenseElementsAttr::get(fillType, lowest));
    values = ConcatOp::create(n.builder, n.loc, n.tensorType({batch, channels, inputs + 1}, work),
                              ValueRange{values, fill}, n.builder.getI64IntegerAttr(2));
  }
  Value windows = GatherOp::create(n.builder, n.loc,
                                   n.tensorType({batch, channels, outputs, kernels}, work), values,
                                   n.constant(table.indices), n.builder.getI64IntegerAttr(2));
  auto pooledType = n.tensorType({batch, channels, outputs}, work);
  if (kind == Pool::Lp) { // (sum |x|^p)^(1/p)
    auto windowsType = cast<RankedTensorType>(windows.getType());
    Value magnitude = UnaryFnOp::create(n.builder, n.loc, windowsType, windows,
                                        n.builder.getStringAttr("abs"),
                                        n.builder.getF32FloatAttr(0), n.builder.getF32FloatAttr(0));
    windows = PowOp::create(n.builder, n.loc, windowsType, magnitude, n.scalar(work, p));
  }
  Value pooled = ReduceOp::create(n.builder, n.loc, pooledType, windows,
                                  n.builder.getStringAttr(isMax ? "max" : "sum"),
                                  n.builder.getDenseI64ArrayAttr({3}),
                                  n.builder.getBoolAttr(false));
  if (kind == Pool::Lp)
    pooled = PowOp::create(n.builder, n.loc, pooledType, pooled, n.scalar(work, 1 / p));
  if (kind == Pool::Average) {
    const std::vector<int64_t> &count = includePad ? table.insidePadded : table.insideInput;
    std::vector<float> divisor(count.begin(), count.end());
    auto divisorType = n.tensorType({outputs}, work);
    pooled = DivOp::create(n.builder, n.loc, pooledType, pooled,
                           n.constant(DenseElementsAttr::get(divisorType, ArrayRef(divisor))));
  }
  if (work != et)
    pooled = CastOp::create(n.builder, n.loc, n.tensorType({batch, channels, outputs}, et), pooled);
  SmallVector<int64_t> shape = {batch, channels};
  shape.append(window->outputSize.begin(), window->outputSize.end());
  if (wantsIndices) {
    auto indices = maxIndices(n, windows, table, *x, *window, storageOrder);
    if (failed(indices) || failed(n.setOutput(1, n.reshape(*indices, shape))))
      return failure();
  }
  return n.setOutput(0, n.reshape(pooled, shape));
}

template <bool isMax> LogicalResult importGlobalPool(NodeImporter &n) {
  auto x = poolInput(n, false);
  if (failed(x))
    return failure();
  SmallVector<int64_t> axes, shape = {x->getDimSize(0), x->getDimSize(1)};
  for (int64_t d = 2; d < x->getRank(); ++d) {
    axes.push_back(d);
    shape.push_back(1);
  }
  auto type = n.tensorType(shape, x->getElementType());
  if (isMax)
    return n.setResult(ReduceOp::create(n.builder, n.loc, type, *n.input(0),
                                        n.builder.getStringAttr("max"),
                                        n.builder.getDenseI64ArrayAttr(axes),
                                        n.builder.getBoolAttr(true)));
  return n.setResult(ReduceMeanOp::create(n.builder, n.loc, type, *n.input(0),
                                          n.builder.getDenseI64ArrayAttr(axes),
                                          n.builder.getBoolAttr(true)));
}

} // namespace

void registerPoolImports(OpImportRegistry &r) {
  r["MaxPool"] = {importPool<Pool::Max>, 12};
  r["AveragePool"] = {importPool<Pool::Average>, 11};
  r["LpPool"] = {importPool<Pool::Lp>, 11};
  r["GlobalMaxPool"] = {importGlobalPool<true>, 1};
  r["GlobalAveragePool"] = {importGlobalPool<false>, 1};
}

} // namespace sinter::import
