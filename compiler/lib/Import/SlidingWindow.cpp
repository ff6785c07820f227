#include "SlidingWindow.h"

using namespace mlir;

namespace sinter::import {
namespace {

/// The product of `dims`, saturated at kMaxElements (hostile shapes must not overflow).
int64_t volume(ArrayRef<int64_t> dims) {
  int64_t v = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(v, d, &v) || v > kMaxElements)
      return kMaxElements;
  return v;
}

} // namespace

int64_t SlidingWindow::kernelVolume() const { return volume(kernel); }
int64_t SlidingWindow::outputVolume() const { return volume(outputSize); }
int64_t SlidingWindow::inputVolume() const { return volume(inputSize); }

FailureOr<SmallVector<int64_t>> spatialAttribute(NodeImporter &n, StringRef name, int64_t fill,
                                                size_t size, size_t rank) {
  auto given = n.attrInts(name);
  if (!given)
    return SmallVector<int64_t>(size, fill);
  if (given->size() != size)
    return n.fail("attribute '" + name + "' has " + Twine(given->size()) + " entries for " +
                  Twine(rank) + " spatial dimensions");
  return *given;
}

FailureOr<SlidingWindow> readSlidingWindow(NodeImporter &n, ArrayRef<int64_t> input,
                                           ArrayRef<int64_t> kernel, bool ceilMode) {
  const size_t rank = kernel.size();
  SlidingWindow w;
  w.inputSize.assign(input.begin() + 2, input.end());
  w.kernel.assign(kernel.begin(), kernel.end());
  if (auto given = n.attrInts("kernel_shape"))
    if (ArrayRef<int64_t>(*given) != kernel)
      return n.fail("attribute 'kernel_shape' [" + shapeText(*given) +
                    "] does not match the weight's spatial dimensions [" + shapeText(kernel) +
                    "]");
  auto strides = spatialAttribute(n, "strides", 1, rank, rank);
  auto dilations = spatialAttribute(n, "dilations", 1, rank, rank);
  auto pads = spatialAttribute(n, "pads", 0, 2 * rank, rank);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.fail("attribute 'auto_pad' = '" + autoPad +
                  "' (NOTSET, VALID, SAME_UPPER or SAME_LOWER)");
  if (autoPad != "NOTSET" && n.attrInts("pads"))
    return n.fail("attribute 'pads' is given with auto_pad = '" + autoPad + "'");
  if (autoPad != "NOTSET" && ceilMode)
    return n.fail("attribute 'ceil_mode' = 1 is given with auto_pad = '" + autoPad + "'");
  for (size_t i = 0; i < rank; ++i) {
    const int64_t size = w.inputSize[i], k = w.kernel[i], s = w.strides[i], d = w.dilations[i];
    if (k < 1 || s < 1 || d < 1 || k > kMaxElements || s > kMaxElements || d > kMaxElements)
      return n.fail("spatial dimension " + Twine(i) + ": kernel " + Twine(k) + ", stride " +
                    Twine(s) + " and dilation " + Twine(d) + " must be 1 to 2^48");
    int64_t span;
    if (__builtin_mul_overflow(d, k - 1, &span) || span >= kMaxElements)
      return n.fail("spatial dimension " + Twine(i) + ": the window (kernel " + Twine(k) +
                    ", dilation " + Twine(d) + ") spans more than 2^48 entries");
    span += 1;
    int64_t before = (*pads)[i], after = (*pads)[i + rank];
    if (autoPad == "VALID") {
      before = after = 0;
    } else if (autoPad != "NOTSET") {
      const int64_t out = (size + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - size);
      before = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      after = total - before;
    }
    if (before < 0 || after < 0 || before > kMaxElements || after > kMaxElements)
      return n.fail("attribute 'pads' of spatial dimension " + Twine(i) +
                    " must be 0 to 2^48 (negative padding is not supported)");
    const int64_t padded = size + before + after;
    int64_t out;
    if (padded >= span) {
      out = (padded - span) / s + 1;
      if (ceilMode && (padded - span) % s != 0 && out * s < size + before)
        ++out; // one more window, starting inside the input or its leading pad
    } else if (ceilMode && span - padded < s) {
      // ceil((padded - span) / s) + 1 = 1: one window, overhanging the end (HF EfficientNet's
      // pooler, its kernel the width of its last convolution, over small images).
      out = 1;
    } else {
      return n.fail("spatial dimension " + Twine(i) + ": the window (" + Twine(span) +
                    " with dilation) is larger than the padded input (" + Twine(padded) + ")" +
                    (ceilMode ? " by a stride or more" : ""));
    }
    w.padBefore.push_back(before);
    w.padAfter.push_back(after);
    w.outputSize.push_back(out);
  }
  int64_t entries;
  if (__builtin_mul_overflow(w.kernelVolume(), w.outputVolume(), &entries) ||
      entries > kMaxWindowEntries)
    return n.fail("the window table would hold more than 2^24 entries (kernel " +
                  shapeText(w.kernel) + " over output " + shapeText(w.outputSize) + ")");
  return w;
}

WindowTable windowTable(MLIRContext *context, const SlidingWindow &w, bool outputMajor) {
  const size_t rank = w.kernel.size();
  const int64_t kernels = w.kernelVolume(), outputs = w.outputVolume(), outside = w.inputVolume();
  WindowTable t;
  t.insideInput.assign(outputs, 0);
  t.insidePadded.assign(outputs, 0);
  std::vector<int64_t> table(kernels * outputs);
  SmallVector<int64_t> offset(rank, 0), out(rank, 0);
  for (int64_t j = 0; j < kernels; ++j) {
    int64_t rest = j;
    for (size_t i = rank; i-- > 0;) {
      offset[i] = rest % w.kernel[i];
      rest /= w.kernel[i];
    }
    for (int64_t p = 0; p < outputs; ++p) {
      rest = p;
      for (size_t i = rank; i-- > 0;) {
        out[i] = rest % w.outputSize[i];
        rest /= w.outputSize[i];
      }
      int64_t flat = 0;
      bool inside = true, padded = true;
      for (size_t i = 0; i < rank; ++i) {
        int64_t at = out[i] * w.strides[i] - w.padBefore[i] + offset[i] * w.dilations[i];
        inside &= at >= 0 && at < w.inputSize[i];
        padded &= at < w.inputSize[i] + w.padAfter[i];
        flat = flat * w.inputSize[i] + at;
      }
      t.readsOutside |= !inside;
      t.insideInput[p] += inside;
      t.insidePadded[p] += padded;
      table[outputMajor ? p * kernels + j : j * outputs + p] = inside ? flat : outside;
    }
  }
  auto type = RankedTensorType::get(outputMajor ? ArrayRef<int64_t>{outputs, kernels}
                                                : ArrayRef<int64_t>{kernels, outputs},
                                    IntegerType::get(context, 64));
  t.indices = DenseElementsAttr::get(type, ArrayRef<int64_t>(table));
  return t;
}

} // namespace sinter::import
