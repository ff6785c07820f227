// Import of DFT, STFT and MelWeightMatrix. With lengths known when compiling, a DFT is a
// matrix product with constant cosine and sine tables (cos and sin of 2 pi n k / N for the
// input entries n and output entries k it has), so it runs on the GEMM path (in f64 for f32
// and f64 signals); STFT gathers its frames with a table, weights them by the window and
// takes that DFT of each; the mel matrix is a constant.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <cmath>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// The largest table (input entries x output entries) a DFT may use: 2^24 entries, 64 MiB in
/// f32 for each of the cosine and sine tables.
constexpr int64_t kMaxTableEntries = int64_t(1) << 24;

enum class Transform { Forward, Inverse, InverseOneSided };

/// A complex signal as its real and (when not null) imaginary parts, [..., L] each with the
/// signal along `axis`.
struct SplitSignal {
  Value real, imag;
};

/// cos and sin of 2 pi r / N, exact at the multiples of a quarter turn.
std::pair<double, double> turn(int64_t r, int64_t length) {
  if ((4 * r) % length == 0)
    switch (4 * r / length) {
    case 0:
      return {1, 0};
    case 1:
      return {0, 1};
    case 2:
      return {-1, 0};
    default:
      return {0, -1};
    }
  const double angle = 2 * M_PI * double(r) / double(length);
  return {std::cos(angle), std::sin(angle)};
}

/// A [rows, columns] constant of `et` from values computed in double.
Value table(NodeImporter &n, int64_t rows, int64_t columns, Type et,
            const std::vector<double> &values) {
  HostValues host;
  host.isFloat = true;
  host.floats = values;
  return n.constant(makeElements(n.tensorType({rows, columns}, et), host));
}

/// `value` with dimension `axis` moved last (inverse: moved back from last to `axis`).
Value moveAxis(NodeImporter &n, Value value, int64_t axis, bool back) {
  auto type = cast<RankedTensorType>(value.getType());
  const int64_t rank = type.getRank();
  if (axis == rank - 1)
    return value;
  SmallVector<int64_t> perm;
  if (!back) {
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        perm.push_back(d);
    perm.push_back(axis);
  } else {
    for (int64_t d = 0; d < rank - 1; ++d) {
      if (d == axis)
        perm.push_back(rank - 1);
      perm.push_back(d);
    }
  }
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  return TransposeOp::create(n.builder, n.loc, type.clone(shape), value,
                             n.builder.getDenseI64ArrayAttr(perm));
}

/// The first `count` entries of the last dimension of `value`.
Value leading(NodeImporter &n, Value value, int64_t count) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape().back() == count)
    return value;
  SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()), steps(type.getRank(), 1);
  ends.back() = count;
  return SliceOp::create(
      n.builder, n.loc, type.clone(ends), value, n.builder.getDenseI64ArrayAttr(starts),
      n.builder.getDenseI64ArrayAttr(ends), n.builder.getDenseI64ArrayAttr(steps));
}

/// The DFT of length `length` along `axis` of `in`, by `transform`. Forward: X[k] = sum_n x[n]
/// e^(-2 pi i n k / N), k < N (N / 2 + 1 with `oneSided`); inverse: x[n] = 1/N sum_k X[k]
/// e^(2 pi i n k / N); inverse one-sided: the real signal of N entries whose spectrum's first
/// N / 2 + 1 entries `in` holds (the rest are their conjugates). Input entries past those the
/// transform reads are dropped and missing ones count as zeros, as numpy's fft pads.
FailureOr<SplitSignal> dft(NodeImporter &n, SplitSignal in, int64_t axis, int64_t length,
                           Transform transform, bool oneSided) {
  auto inType = cast<RankedTensorType>(in.real.getType());
  // The tables and products in f64 (f32 for 16-bit signals): an f32 product loses the small
  // entries of a spectrum whose others are large, where the reference (numpy's fft in f64,
  // rounded once) keeps them.
  Type et = inType.getElementType().getIntOrFloatBitWidth() == 16 ? Type(n.builder.getF32Type())
                                                                  : Type(n.builder.getF64Type());
  auto type = inType.clone(et);
  auto widen = [&](Value v) -> Value {
    return v && et != inType.getElementType() ? Value(CastOp::create(n.builder, n.loc, type, v))
                                              : v;
  };
  in.real = widen(in.real);
  in.imag = widen(in.imag);
  const int64_t inputEntries = transform == Transform::InverseOneSided ? length / 2 + 1 : length;
  const int64_t rows = std::min(type.getDimSize(axis), inputEntries);
  const int64_t columns = transform == Transform::Forward && oneSided ? length / 2 + 1 : length;
  if (rows * columns > kMaxTableEntries) {
    (void)n.fail("a DFT of length " + Twine(length) + " over " + Twine(rows) +
                 " input entries needs a " + Twine(rows) + "x" + Twine(columns) +
                 " table; Sinter computes DFTs as matrix products with tables of at most 2^24 "
                 "entries");
    return failure();
  }
  const bool inverse = transform != Transform::Forward;
  const double scale = inverse ? 1.0 / double(length) : 1.0;
  std::vector<double> cosines(rows * columns), sines(rows * columns);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < columns; ++c) {
      auto [cosine, sine] = turn(r * c % length, length);
      // A one-sided spectrum's entries between 0 and N / 2 stand for their conjugates too.
      double weight = scale;
      if (transform == Transform::InverseOneSided && r != 0 && 2 * r != length)
        weight *= 2;
      cosines[r * columns + c] = weight * cosine;
      sines[r * columns + c] = weight * sine;
    }
  Value cosTable = table(n, rows, columns, et, cosines);
  Value sinTable = table(n, rows, columns, et, sines);

  auto prepare = [&](Value part) { return leading(n, moveAxis(n, part, axis, false), rows); };
  SmallVector<int64_t> outShape(type.getShape());
  outShape.erase(outShape.begin() + axis);
  outShape.push_back(columns);
  auto outType = type.clone(outShape);
  auto product = [&](Value part, Value tableValue) -> Value {
    return MatMulOp::create(n.builder, n.loc, outType, part, tableValue);
  };
  Value real = prepare(in.real);
  Value imag = in.imag ? prepare(in.imag) : Value();
  // Forward: Re = xr cos + xi sin, Im = xi cos - xr sin; inverse: the signs of sin flip.
  Value outReal = product(real, cosTable);
  Value outImag;
  if (imag) {
    Value cross = product(imag, sinTable);
    outReal = inverse ? Value(SubOp::create(n.builder, n.loc, outType, outReal, cross))
                      : Value(AddOp::create(n.builder, n.loc, outType, outReal, cross));
  }
  if (transform != Transform::InverseOneSided) {
    Value realSin = product(real, sinTable);
    if (imag) {
      Value imagCos = product(imag, cosTable);
      outImag = inverse ? Value(AddOp::create(n.builder, n.loc, outType, imagCos, realSin))
                        : Value(SubOp::create(n.builder, n.loc, outType, imagCos, realSin));
    } else {
      outImag = inverse ? realSin : Value(NegOp::create(n.builder, n.loc, outType, realSin));
    }
  }
  auto narrow = [&](Value v) -> Value {
    v = moveAxis(n, v, axis, true);
    auto wide = cast<RankedTensorType>(v.getType());
    if (wide.getElementType() == inType.getElementType())
      return v;
    return CastOp::create(n.builder, n.loc, wide.clone(inType.getElementType()), v);
  };
  SplitSignal out;
  out.real = narrow(outReal);
  if (outImag)
    out.imag = narrow(outImag);
  return out;
}

/// `x` [..., 1 or 2] (a real signal or interleaved real and imaginary parts) split.
FailureOr<SplitSignal> splitComplex(NodeImporter &n, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  const int64_t parts = type.getShape().back();
  if (parts != 1 && parts != 2) {
    (void)n.fail("the last dimension of the input must be 1 (real) or 2 (complex), not " +
                 Twine(parts));
    return failure();
  }
  SmallVector<int64_t> shape(type.getShape().drop_back());
  auto part = [&](int64_t index) -> Value {
    SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()), steps(type.getRank(), 1),
        sliced(type.getShape());
    starts.back() = index;
    ends.back() = index + 1;
    sliced.back() = 1;
    Value v = x;
    if (parts != 1)
      v = SliceOp::create(
          n.builder, n.loc, type.clone(sliced), x, n.builder.getDenseI64ArrayAttr(starts),
          n.builder.getDenseI64ArrayAttr(ends), n.builder.getDenseI64ArrayAttr(steps));
    return n.reshape(v, shape);
  };
  SplitSignal s;
  s.real = part(0);
  if (parts == 2)
    s.imag = part(1);
  return s;
}

/// The parts stacked along a new last dimension: [..., 2], or [..., 1] for a real signal.
Value interleave(NodeImporter &n, SplitSignal s) {
  auto type = cast<RankedTensorType>(s.real.getType());
  SmallVector<int64_t> one(type.getShape());
  one.push_back(1);
  Value real = n.reshape(s.real, one);
  if (!s.imag)
    return real;
  SmallVector<int64_t> two(one);
  two.back() = 2;
  return ConcatOp::create(n.builder, n.loc, type.clone(two),
                          ValueRange{real, n.reshape(s.imag, one)},
                          n.builder.getI64IntegerAttr(type.getRank()));
}

/// One scalar integer input known when compiling, or `fallback` when the input is absent.
FailureOr<int64_t> scalarInput(NodeImporter &n, unsigned index, int64_t fallback, StringRef name) {
  if (!n.hasInput(index))
    return fallback;
  auto values = n.constantInts(index);
  if (failed(values))
    return failure();
  if (values->size() != 1) {
    (void)n.fail("input '" + name + "' must hold one value, not " + Twine(values->size()));
    return failure();
  }
  return values->front();
}

LogicalResult importDFT(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  if (failed(requireFloat(n, in, "input")))
    return failure();
  const int64_t rank = in.getRank();
  if (rank < 2)
    return n.fail("input must have rank >= 2 (the signal and its real / imaginary parts)");
  // Opset 20 made the axis an input (default -2, the last signal axis); before, an attribute.
  auto axisValue =
      n.opset() >= 20 ? scalarInput(n, 2, -2, "axis") : FailureOr<int64_t>(n.attrInt("axis", 1));
  if (failed(axisValue))
    return failure();
  int64_t axis = *axisValue < 0 ? *axisValue + rank : *axisValue;
  if (axis < 0 || axis > rank - 2)
    return n.fail("axis " + Twine(*axisValue) + " is not a signal axis of a rank-" + Twine(rank) +
                  " input (the last dimension holds the real and imaginary parts)");
  const bool inverse = n.attrInt("inverse", 0) != 0, oneSided = n.attrInt("onesided", 0) != 0;
  const int64_t signalLength = in.getDimSize(axis);
  const int64_t defaultLength = inverse && oneSided ? 2 * (signalLength - 1) : signalLength;
  auto length = scalarInput(n, 1, defaultLength, "dft_length");
  if (failed(length))
    return failure();
  if (*length < 1 || *length > kMaxTableEntries)
    return n.fail("dft_length " + Twine(*length) + " is not in [1, 2^24]");
  auto signal = splitComplex(n, *n.input(0));
  if (failed(signal))
    return failure();
  const Transform transform =
      !inverse ? Transform::Forward : (oneSided ? Transform::InverseOneSided : Transform::Inverse);
  auto out = dft(n, *signal, axis, *length, transform, oneSided);
  if (failed(out))
    return failure();
  return n.setOutput(0, interleave(n, *out));
}

/// STFT(signal [batch, L, 1 or 2], frame_step, window?, frame_length?): frames of
/// frame_length entries every frame_step, each weighted by the window and transformed (one-
/// sided by default): [batch, frames, bins, 2].
LogicalResult importSTFT(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  if (failed(requireFloat(n, in, "signal")))
    return failure();
  if (in.getRank() != 3)
    return n.fail("signal must have shape [batch, length, 1 or 2], not " +
                  shapeText(in.getShape()));
  auto step = scalarInput(n, 1, 0, "frame_step");
  if (failed(step))
    return failure();
  RankedTensorType windowType;
  if (n.hasInput(2)) {
    windowType = n.inputType(2);
    if (!windowType)
      return failure();
    if (windowType.getRank() != 1 || windowType.getElementType() != in.getElementType())
      return n.fail("window must be one-dimensional, of the signal's element type");
  }
  const int64_t signalLength = in.getDimSize(1);
  auto frameLength =
      scalarInput(n, 3, windowType ? windowType.getDimSize(0) : signalLength, "frame_length");
  if (failed(frameLength))
    return failure();
  const int64_t windowLength = windowType ? windowType.getDimSize(0) : *frameLength;
  if (*step < 1 || *frameLength < 1 || *frameLength > signalLength || windowLength > signalLength)
    return n.fail("frame_step " + Twine(*step) + " and frame_length " + Twine(*frameLength) +
                  " (window " + Twine(windowLength) + ") do not fit a signal of " +
                  Twine(signalLength) + " entries");
  const int64_t frames = 1 + (signalLength - *frameLength) / *step;
  if (frames * windowLength > kMaxTableEntries)
    return n.fail("the frames need a table of " + Twine(frames) + "x" + Twine(windowLength) +
                  " entries; at most 2^24 are supported");
  // Frame f reads entries f * step + j; past the signal's end (a window longer than the
  // frame), a zero appended to the signal.
  const int64_t batch = in.getDimSize(0), parts = in.getDimSize(2);
  Type et = in.getElementType();
  Value x = *n.input(0);
  bool padded = false;
  std::vector<int64_t> entries;
  entries.reserve(frames * windowLength);
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < windowLength; ++j) {
      int64_t at = f * *step + j;
      if (at >= signalLength)
        at = signalLength, padded = true;
      entries.push_back(at);
    }
  if (padded)
    x = PadOp::create(n.builder, n.loc, n.tensorType({batch, signalLength + 1, parts}, et), x,
                      n.builder.getDenseI64ArrayAttr({0, 0, 0}),
                      n.builder.getDenseI64ArrayAttr({0, 1, 0}),
                      n.builder.getStringAttr("constant"), n.builder.getF64FloatAttr(0.0));
  auto indexType = RankedTensorType::get({frames, windowLength}, n.builder.getI64Type());
  Value framed =
      GatherOp::create(n.builder, n.loc, n.tensorType({batch, frames, windowLength, parts}, et), x,
                       n.constant(DenseElementsAttr::get(indexType, ArrayRef(entries))),
                       n.builder.getI64IntegerAttr(1));
  auto signal = splitComplex(n, framed);
  if (failed(signal))
    return failure();
  if (windowType) {
    Value window = *n.input(2);
    auto frameType = n.tensorType({batch, frames, windowLength}, et);
    signal->real = MulOp::create(n.builder, n.loc, frameType, signal->real, window);
    if (signal->imag)
      signal->imag = MulOp::create(n.builder, n.loc, frameType, signal->imag, window);
  }
  auto out = dft(n, *signal, 2, *frameLength, Transform::Forward, n.attrInt("onesided", 1) != 0);
  if (failed(out))
    return failure();
  if (!out->imag) // a forward transform always has an imaginary part
    return n.fail("internal error: the STFT's DFT has no imaginary part");
  return n.setOutput(0, interleave(n, *out));
}

/// MelWeightMatrix: the [dft_length / 2 + 1, num_mel_bins] triangular filters of the ONNX
/// definition (the reference implementation's integer bin edges), computed here.
LogicalResult importMelWeightMatrix(NodeImporter &n) {
  auto bins = scalarInput(n, 0, 0, "num_mel_bins");
  auto length = scalarInput(n, 1, 0, "dft_length");
  auto rate = scalarInput(n, 2, 0, "sample_rate");
  if (failed(bins) || failed(length) || failed(rate))
    return failure();
  auto edge = [&](unsigned index) -> FailureOr<double> {
    DenseElementsAttr c = n.constantInput(index);
    if (!c || c.getNumElements() != 1 || !isa<FloatType>(c.getElementType())) {
      (void)n.fail("input " + Twine(index) + " must be one float known when compiling");
      return failure();
    }
    return (*c.getValues<APFloat>().begin()).convertToDouble();
  };
  auto lower = edge(3), upper = edge(4);
  if (failed(lower) || failed(upper))
    return failure();
  if (*bins < 1 || *length < 1 || *rate < 1 || *bins > (1 << 16) || *length > (1 << 24) ||
      (*length / 2 + 1) * *bins > kMaxTableEntries)
    return n.fail("num_mel_bins " + Twine(*bins) + ", dft_length " + Twine(*length) +
                  " and sample_rate " + Twine(*rate) +
                  " must be positive and the matrix at most "
                  "2^24 entries");
  Type et = n.builder.getF32Type();
  if (n.attr("output_datatype")) {
    et = elementTypeFor(n.builder.getContext(), int(n.attrInt("output_datatype", 1)));
    if (!et || !isa<FloatType>(et))
      return n.fail("output_datatype must be a float type");
  }
  const int64_t spectrumBins = *length / 2 + 1;
  const double lowMel = 2595 * std::log1p(*lower / 700) / std::log(10.0);
  const double highMel = 2595 * std::log1p(*upper / 700) / std::log(10.0);
  const double melStep = (highMel - lowMel) / double(*bins + 2);
  std::vector<int64_t> edges(*bins + 2);
  for (int64_t i = 0; i < *bins + 2; ++i) {
    const double hertz = 700 * std::expm1((double(i) * melStep + lowMel) / 2595 * std::log(10.0));
    edges[i] = int64_t(std::floor(double(*length + 1) * hertz / double(*rate)));
    if (edges[i] < 0 || edges[i] >= spectrumBins + 1)
      return n.fail("the mel edges fall outside the spectrum's " + Twine(spectrumBins) +
                    " bins (check lower_edge_hertz, upper_edge_hertz and sample_rate)");
  }
  std::vector<double> values(spectrumBins * *bins, 0.0);
  auto set = [&](int64_t row, int64_t column, double v) -> bool {
    if (row < 0 || row >= spectrumBins)
      return false;
    values[row * *bins + column] = v;
    return true;
  };
  for (int64_t i = 0; i < *bins; ++i) {
    const int64_t low = edges[i], center = edges[i + 1], high = edges[i + 2];
    bool ok = true;
    if (center == low)
      ok = set(center, i, 1);
    else
      for (int64_t j = low; j <= center && ok; ++j)
        ok = set(j, i, double(j - low) / double(center - low));
    for (int64_t j = center; j < high && ok; ++j)
      ok = set(j, i, double(high - j) / double(high - center));
    if (!ok)
      return n.fail("mel filter " + Twine(i) + " reaches past the spectrum's " +
                    Twine(spectrumBins) + " bins");
  }
  return n.setOutput(0, table(n, spectrumBins, *bins, et, values));
}

} // namespace

void registerSpectralImports(OpImportRegistry &r) {
  r["DFT"] = {importDFT, 17};
  r["STFT"] = {importSTFT, 17};
  r["MelWeightMatrix"] = {importMelWeightMatrix, 17};
}

} // namespace sinter::import
