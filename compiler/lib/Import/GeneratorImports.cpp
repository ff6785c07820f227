// Import of ops whose output depends only on shapes and attributes: EyeLike and the window
// functions (HannWindow, HammingWindow, BlackmanWindow, with a compile-time size). Each
// becomes a constant.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/ElementsFolding.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

#include <cmath>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {
namespace {

/// The element type named by attribute `name` (an ONNX data type code), or `fallback`.
FailureOr<Type> typeAttribute(NodeImporter &n, StringRef name, Type fallback) {
  const onnx::AttributeProto *a = n.attr(name);
  if (!a)
    return fallback;
  Type t = elementTypeFor(n.builder.getContext(), int(n.attrInt(name, 0)));
  if (!t)
    return n.fail("attribute '" + name + "' has unsupported data type " +
                  dataTypeText(int(n.attrInt(name, 0))));
  return t;
}

LogicalResult importEyeLike(NodeImporter &n) {
  auto in = n.inputType(0);
  if (!in)
    return failure();
  if (in.getRank() != 2)
    return n.fail("input must have rank 2, not " + Twine(in.getRank()));
  auto et = typeAttribute(n, "dtype", in.getElementType());
  if (failed(et))
    return failure();
  const int64_t k = n.attrInt("k", 0), rows = in.getDimSize(0), columns = in.getDimSize(1);
  HostValues values;
  values.isFloat = isa<FloatType>(*et);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < columns; ++j) {
      const bool one = j - i == k;
      if (values.isFloat)
        values.floats.push_back(one ? 1.0 : 0.0);
      else
        values.ints.push_back(one ? 1 : 0);
    }
  return n.setOutput(0, n.constant(makeElements(n.tensorType(in.getShape(), *et), values)));
}

enum class Window { Hann, Hamming, Blackman };

template <Window window> LogicalResult importWindow(NodeImporter &n) {
  auto size = n.constantInts(0);
  if (failed(size))
    return failure();
  if (size->size() != 1 || size->front() < 0 || size->front() > (int64_t(1) << 24))
    return n.fail("size must be one value in [0, 2^24]");
  auto et = typeAttribute(n, "output_datatype", n.builder.getF32Type());
  if (failed(et))
    return failure();
  const int64_t length = size->front();
  const bool periodic = n.attrInt("periodic", 1) != 0;
  const double span = periodic ? double(length) : double(length - 1);
  HostValues values;
  values.isFloat = isa<FloatType>(*et);
  for (int64_t i = 0; i < length; ++i) {
    const double x = span > 0 ? 2 * M_PI * double(i) / span : 0;
    double v;
    if (window == Window::Hann)
      v = 0.5 - 0.5 * std::cos(x);
    else if (window == Window::Hamming)
      v = 25.0 / 46 - 21.0 / 46 * std::cos(x);
    else
      v = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
    if (values.isFloat)
      values.floats.push_back(v);
    else
      values.ints.push_back(int64_t(v));
  }
  return n.setOutput(0, n.constant(makeElements(n.tensorType({length}, *et), values)));
}

} // namespace

void registerGeneratorImports(OpImportRegistry &r) {
  r["EyeLike"] = {importEyeLike, 9};
  r["HannWindow"] = {importWindow<Window::Hann>, 17};
  r["HammingWindow"] = {importWindow<Window::Hamming>, 17};
  r["BlackmanWindow"] = {importWindow<Window::Blackman>, 17};
}

} // namespace sinter::import
