// Import of Resize (nearest, linear and cubic, every coordinate transformation, antialias,
// exclude_outside, axes, keep_aspect_ratio_policy, tf_crop_and_resize's extrapolation) with
// compile-time scales or sizes. The interpolation is separable: each resized axis has, per
// output index, a few input taps and their coefficients, computed here as the ONNX reference
// implementation computes them. Their tensor product over the trailing block of axes (from the
// first resized one to the last) becomes a table of taps per output position: a gather reads
// them, a multiply by the coefficients and a sum over the taps interpolate (nearest: the gather
// alone). Leading axes that are not resized stay batch dimensions.
#include "NodeImporter.h"
#include "SlidingWindow.h" // kMaxWindowEntries
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

struct ResizeMode {
  std::string mode, nearest, transform;
  double cubicA = -0.75;
  bool antialias = false, excludeOutside = false;
};

/// The coefficients of one output index's taps, as onnx.reference's get_coeffs.
std::vector<double> coefficients(const ResizeMode &m, double ratio, double scale) {
  if (m.mode == "nearest") {
    if (ratio == 1.0)
      return {0, 1};
    if (m.nearest == "round_prefer_floor") return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (m.nearest == "round_prefer_ceil") return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (m.nearest == "floor") return {1, 0};
    if (m.nearest == "sinter.legacy") // Upsample / Resize-10: floor enlarging, ceil shrinking
      return scale >= 1 ? std::vector<double>{1, 0} : std::vector<double>{0, 1};
    return {0, 1}; // ceil
  }
  std::vector<double> c;
  if (m.mode == "linear" && !m.antialias)
    return {1 - ratio, ratio};
  const double s = std::min(scale, 1.0), a = m.cubicA;
  if (m.mode == "linear") {
    const int64_t start = int64_t(std::floor(-1 / s) + 1), footprint = 2 - 2 * start;
    for (int64_t i = start; i < start + footprint; ++i)
      c.push_back(std::clamp(1 - std::fabs((i - ratio) * s), 0.0, 1.0));
  } else if (!m.antialias) {
    const double r = ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
            ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a};
  } else {
    const int64_t start = int64_t(std::floor(-2 / s) + 1), end = 2 - start;
    for (int64_t i = start; i < end; ++i) {
      const double x = std::fabs(s * (i - ratio)), x2 = x * x, x3 = x * x2;
      c.push_back(x <= 1 ? (a + 2) * x3 - (a + 3) * x2 + 1
                  : x < 2 ? a * x3 - 5 * a * x2 + 8 * a * x - 4 * a
                          : 0.0);
    }
  }
  const double sum = std::accumulate(c.begin(), c.end(), 0.0);
  for (double &v : c) v /= sum;
  return c;
}

/// The taps a mode reads per output index along an axis of this scale (antialiased filters
/// widen as they shrink); saturates past 2^30.
int64_t tapsPerIndex(const ResizeMode &m, double scale) {
  if (m.mode == "nearest" || (m.mode == "linear" && !m.antialias))
    return 2;
  if (!m.antialias)
    return 4;
  const double reach = (m.mode == "linear" ? 1.0 : 2.0) / std::min(scale, 1.0);
  return reach > double(1 << 29) ? int64_t(1) << 30 : 2 * (int64_t(std::floor(reach)) + 1);
}

/// One axis: `taps` input indices (clamped) and coefficients per output index, and whether the
/// output index lies outside the crop (tf_crop_and_resize).
struct AxisTaps {
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<double> coeff;
  std::vector<bool> extrapolated;
};

AxisTaps axisTaps(const ResizeMode &m, double scale, int64_t in, int64_t out, double roiStart,
                  double roiEnd) {
  AxisTaps t;
  const double outWidth = scale * double(in);
  for (int64_t y = 0; y < out; ++y) {
    double x;
    bool outside = false;
    if (m.transform == "align_corners") {
      x = outWidth == 1 ? 0.0 : y * double(in - 1) / (outWidth - 1);
    } else if (m.transform == "asymmetric") {
      x = y / scale;
    } else if (m.transform == "tf_crop_and_resize") {
      x = outWidth == 1 ? (roiEnd - roiStart) * double(in - 1) / 2
                        : y * (roiEnd - roiStart) * double(in - 1) / (outWidth - 1);
      x += roiStart * double(in - 1);
      outside = x < 0 || x > double(in - 1);
    } else if (m.transform == "pytorch_half_pixel") {
      x = outWidth == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    } else if (m.transform == "half_pixel") {
      x = (y + 0.5) / scale - 0.5;
    } else { // half_pixel_symmetric
      const double adjustment = double(out) / outWidth, center = double(in) / 2;
      x = center * (1 - adjustment) + (y + 0.5) / scale - 0.5;
    }
    const double floorX = std::floor(x);
    std::vector<double> c = coefficients(m, x == floorX ? 1.0 : x - floorX, scale);
    const int64_t n = c.size(), pad = (n + 1) / 2;
    const double padded = x + pad, p = std::floor(padded), frac = padded - p;
    int64_t offset = n % 2 == 0 ? (frac == 0 ? -(n / 2) : -(n / 2) + 1)
                                : (frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1);
    const int64_t start = int64_t(p) + offset - pad;
    if (m.excludeOutside) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (start + i < 0 || start + i >= in)
          c[i] = 0;
        sum += c[i];
      }
      for (double &v : c) v /= sum == 0 ? 1 : sum;
    }
    t.taps = n;
    for (int64_t i = 0; i < n; ++i) {
      t.index.push_back(std::clamp<int64_t>(start + i, 0, in - 1));
      t.coeff.push_back(c[i]);
    }
    t.extrapolated.push_back(outside);
  }
  if (m.mode == "nearest") { // one tap: the one whose coefficient is 1
    AxisTaps one;
    one.extrapolated = t.extrapolated;
    for (int64_t y = 0; y < out; ++y) {
      int64_t pick = 0;
      for (int64_t i = 0; i < t.taps; ++i)
        if (t.coeff[y * t.taps + i] == 1.0)
          pick = i;
      one.index.push_back(t.index[y * t.taps + pick]);
      one.coeff.push_back(1.0);
    }
    return one;
  }
  return t;
}

std::optional<SmallVector<double>> constantFloats(NodeImporter &n, unsigned i) {
  if (!n.hasInput(i))
    return SmallVector<double>();
  DenseElementsAttr c = n.constantInput(i);
  if (!c || !isa<FloatType>(c.getElementType()))
    return std::nullopt;
  SmallVector<double> out;
  for (const APFloat &v : c.getValues<APFloat>())
    out.push_back(v.convertToDouble());
  return out;
}

LogicalResult importResize(NodeImporter &n) {
  auto x = n.inputType(0);
  if (!x)
    return failure();
  ResizeMode m;
  m.mode = n.attrString("mode", "nearest");
  m.nearest = n.attrString("nearest_mode", "round_prefer_floor");
  m.transform = n.attrString("coordinate_transformation_mode", "half_pixel");
  m.cubicA = n.attrFloat("cubic_coeff_a", -0.75f);
  m.antialias = n.attrInt("antialias", 0) != 0;
  m.excludeOutside = n.attrInt("exclude_outside", 0) != 0;
  const double extrapolation = n.attrFloat("extrapolation_value", 0.0f);
  const std::string policy = n.attrString("keep_aspect_ratio_policy", "stretch");
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    return n.fail("attribute 'mode' = '" + m.mode + "' (nearest, linear or cubic)");
  // "sinter.legacy" comes only from LegacyForms.cpp's rewrite of Upsample and Resize-10.
  if (m.nearest != "round_prefer_floor" && m.nearest != "round_prefer_ceil" &&
      m.nearest != "floor" && m.nearest != "ceil" && m.nearest != "sinter.legacy")
    return n.fail("attribute 'nearest_mode' = '" + m.nearest + "'");
  static const char *kTransforms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                      "align_corners", "asymmetric", "tf_crop_and_resize"};
  if (llvm::none_of(kTransforms, [&](const char *t) { return m.transform == t; }))
    return n.fail("attribute 'coordinate_transformation_mode' = '" + m.transform + "'");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return n.fail("attribute 'keep_aspect_ratio_policy' = '" + policy + "'");
  if (m.antialias && m.mode == "nearest")
    return n.fail("antialias = 1 takes mode linear or cubic");
  if (m.mode != "nearest" && failed(requireFloat(n, x, "input X (linear and cubic modes)")))
    return failure();

  const int64_t rank = x.getRank();
  SmallVector<int64_t> axes;
  if (auto given = n.attrInts("axes")) {
    auto normalized = normalizeAxes(n, *given, rank, "axes entry");
    if (failed(normalized))
      return failure();
    for (int64_t a : *given) axes.push_back(a < 0 ? a + rank : a); // the given order
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  auto roi = constantFloats(n, 1), scalesIn = constantFloats(n, 2);
  if (!roi || !scalesIn)
    return n.fail("roi and scales must be compile-time float constants");
  SmallVector<int64_t> sizesIn;
  if (n.hasInput(3)) {
    auto s = n.constantInts(3);
    if (failed(s))
      return failure();
    sizesIn = *s;
  }
  if (scalesIn->empty() == sizesIn.empty())
    return n.fail("exactly one of scales and sizes must be given (a non-empty constant)");
  const size_t given = scalesIn->empty() ? sizesIn.size() : scalesIn->size();
  if (given != axes.size())
    return n.fail((scalesIn->empty() ? "sizes" : "scales") + Twine(" has ") + Twine(given) +
                  " entries for " + Twine(axes.size()) + " axes");
  SmallVector<double> scale(rank, 1.0), roiStart(rank, 0.0), roiEnd(rank, 1.0);
  SmallVector<int64_t> outSize(x.getShape());
  if (m.transform == "tf_crop_and_resize") {
    if (roi->size() != 2 * axes.size())
      return n.fail("tf_crop_and_resize needs roi of " + Twine(2 * axes.size()) + " entries");
    for (size_t i = 0; i < axes.size(); ++i) {
      roiStart[axes[i]] = (*roi)[i];
      roiEnd[axes[i]] = (*roi)[axes.size() + i];
    }
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t d = axes[i], in = x.getDimSize(d);
    if (!scalesIn->empty()) {
      if (!((*scalesIn)[i] > 0) || !std::isfinite((*scalesIn)[i]))
        return n.fail("scales must be positive and finite");
      scale[d] = (*scalesIn)[i];
      if (scale[d] * double(in) > double(kMaxElements))
        return n.fail("scales make axis " + Twine(d) + " larger than 2^48");
      outSize[d] = int64_t(scale[d] * double(in));
    } else {
      if (sizesIn[i] < 1 || sizesIn[i] > kMaxElements || in < 1)
        return n.fail("sizes must be 1 to 2^48 over non-empty axes");
      outSize[d] = sizesIn[i];
      scale[d] = double(sizesIn[i]) / double(in);
    }
  }
  if (!sizesIn.empty() && policy != "stretch") {
    double s = policy == "not_larger" ? INFINITY : 0;
    for (int64_t d : axes)
      s = policy == "not_larger" ? std::min(s, scale[d]) : std::max(s, scale[d]);
    for (int64_t d : axes) {
      scale[d] = s;
      if (s * double(x.getDimSize(d)) > double(kMaxElements))
        return n.fail("keep_aspect_ratio_policy makes axis " + Twine(d) + " larger than 2^48");
      outSize[d] = int64_t(s * double(x.getDimSize(d)) + 0.5);
    }
  }
  // Axes the reference skips as the identity, and the first one it resizes.
  int64_t first = rank;
  for (int64_t d = rank - 1; d >= 0; --d) {
    const bool identity = std::fabs(scale[d] - 1.0) <= 1e-9 && outSize[d] == x.getDimSize(d) &&
                          std::fabs(roiStart[d]) <= 1e-9 && std::fabs(roiEnd[d] - 1.0) <= 1e-9;
    if (!identity)
      first = d;
  }
  if (llvm::any_of(outSize, [](int64_t s) { return s < 1; }))
    return n.fail("the output would have an empty dimension [" + shapeText(outSize) + "]");
  if (first == rank)
    return n.setOutput(0, *n.input(0));

  // The trailing block [first, rank): taps per output position, their tensor product; its size
  // bounded before any axis's taps are computed.
  int64_t bound = 1;
  for (int64_t d = first; d < rank; ++d)
    if (__builtin_mul_overflow(bound, outSize[d], &bound) ||
        __builtin_mul_overflow(bound, tapsPerIndex(m, scale[d]), &bound) ||
        bound > 2 * kMaxWindowEntries)
      return n.fail("the resize table would hold more than 2^24 entries (output [" +
                    shapeText(outSize) + "])");
  SmallVector<AxisTaps> per;
  int64_t positions = 1, taps = 1, inputs = 1;
  for (int64_t d = first; d < rank; ++d) {
    const bool identity = d != first && std::fabs(scale[d] - 1.0) <= 1e-9 &&
                          outSize[d] == x.getDimSize(d) && std::fabs(roiStart[d]) <= 1e-9 &&
                          std::fabs(roiEnd[d] - 1.0) <= 1e-9;
    AxisTaps t;
    if (identity) {
      for (int64_t y = 0; y < outSize[d]; ++y) {
        t.index.push_back(y);
        t.coeff.push_back(1.0);
        t.extrapolated.push_back(false);
      }
    } else {
      t = axisTaps(m, scale[d], x.getDimSize(d), outSize[d], roiStart[d], roiEnd[d]);
    }
    if (__builtin_mul_overflow(positions, outSize[d], &positions) ||
        __builtin_mul_overflow(taps, t.taps, &taps) ||
        __builtin_mul_overflow(inputs, x.getDimSize(d), &inputs))
      return n.fail("the resize table is too large");
    per.push_back(std::move(t));
  }
  int64_t entries;
  if (__builtin_mul_overflow(positions, taps, &entries) || entries > kMaxWindowEntries)
    return n.fail("the resize table would hold more than 2^24 entries (" + Twine(positions) +
                  " output positions of " + Twine(taps) + " taps)");
  std::vector<int64_t> index(entries);
  std::vector<float> weight(entries);
  std::vector<float> fill(positions, 0.0f);
  bool extrapolates = false;
  const int64_t block = rank - first;
  SmallVector<int64_t> y(block), k(block);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    bool outside = false;
    for (int64_t a = block; a-- > 0;) {
      y[a] = rest % outSize[first + a];
      rest /= outSize[first + a];
      outside |= per[a].extrapolated[y[a]];
    }
    extrapolates |= outside;
    fill[p] = outside ? float(extrapolation) : 0.0f;
    for (int64_t j = 0; j < taps; ++j) {
      rest = j;
      for (int64_t a = block; a-- > 0;) {
        k[a] = rest % per[a].taps;
        rest /= per[a].taps;
      }
      int64_t flat = 0;
      double w = outside ? 0.0 : 1.0;
      for (int64_t a = 0; a < block; ++a) {
        flat = flat * x.getDimSize(first + a) + per[a].index[y[a] * per[a].taps + k[a]];
        w *= per[a].coeff[y[a] * per[a].taps + k[a]];
      }
      index[p * taps + j] = flat;
      weight[p * taps + j] = float(w);
    }
  }

  int64_t lead = 1;
  for (int64_t d = 0; d < first; ++d) lead *= x.getDimSize(d);
  Type et = x.getElementType();
  Value values = n.reshape(*n.input(0), {lead, inputs});
  auto tableType = RankedTensorType::get({positions, taps}, n.builder.getI64Type());
  Value result;
  if (m.mode == "nearest" && !extrapolates) {
    result = GatherOp::create(n.builder, n.loc, n.tensorType({lead, positions, 1}, et), values,
                              n.constant(DenseElementsAttr::get(tableType, ArrayRef(index))),
                              n.builder.getI64IntegerAttr(1));
  } else {
    // In f32 (16-bit X rounded once at the end), as the reference interpolates in float64.
    Type f32 = n.builder.getF32Type();
    if (et != f32)
      values = CastOp::create(n.builder, n.loc, n.tensorType({lead, inputs}, f32), values);
    Value gathered = GatherOp::create(
        n.builder, n.loc, n.tensorType({lead, positions, taps}, f32), values,
        n.constant(DenseElementsAttr::get(tableType, ArrayRef(index))),
        n.builder.getI64IntegerAttr(1));
    Value weights = n.constant(DenseElementsAttr::get(n.tensorType({positions, taps}, f32),
                                                      ArrayRef(weight)));
    Value product = MulOp::create(n.builder, n.loc, n.tensorType({lead, positions, taps}, f32),
                                  gathered, weights);
    result = ReduceOp::create(n.builder, n.loc, n.tensorType({lead, positions, 1}, f32), product,
                              n.builder.getStringAttr("sum"), n.builder.getDenseI64ArrayAttr({2}),
                              n.builder.getBoolAttr(true));
    if (extrapolates)
      result = AddOp::create(
          n.builder, n.loc, n.tensorType({lead, positions, 1}, f32), result,
          n.constant(DenseElementsAttr::get(n.tensorType({positions, 1}, f32), ArrayRef(fill))));
    if (et != f32)
      result = CastOp::create(n.builder, n.loc, n.tensorType({lead, positions, 1}, et), result);
  }
  return n.setOutput(0, n.reshape(result, outSize));
}

} // namespace

void registerResizeImports(OpImportRegistry &r) { r["Resize"] = {importResize, 13}; }

} // namespace sinter::import
