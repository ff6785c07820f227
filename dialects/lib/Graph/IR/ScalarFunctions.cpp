#include "sinter/Dialect/Graph/IR/ScalarFunctions.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sinter::graph {
namespace {

using F = ScalarOperands;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x * kSqrtHalf)); }
double geluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}
// Python's modulo: the sign of the divisor (ONNX Mod with fmod = 0).
double floorMod(double a, double b) {
  double r = std::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Integer versions: defined for every input (INT64_MIN % -1 and abs(INT64_MIN) would not be).
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
int64_t truncMod(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }
// Entries of integer operands only never evaluate in double.
double noFloat(double, double, float, float) { return std::numeric_limits<double>::quiet_NaN(); }
int64_t floorModInt(int64_t a, int64_t b) {
  int64_t r = truncMod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

const ScalarFunction kFunctions[] = {
    // Unary.
    {"abs", 1, F::Any, false, [](double a, double, float, float) { return std::fabs(a); },
     [](int64_t a, int64_t) { return a < 0 && a != kMin ? -a : a; }},
    {"exp", 1, F::Float, false, [](double a, double, float, float) { return std::exp(a); }},
    {"log", 1, F::Float, false, [](double a, double, float, float) { return std::log(a); }},
    {"tanh", 1, F::Float, false, [](double a, double, float, float) { return std::tanh(a); },
     nullptr, /*roundedVariant=*/true},
    {"erf", 1, F::Float, false, [](double a, double, float, float) { return std::erf(a); }},
    {"relu", 1, F::Any, false, [](double a, double, float, float) { return a > 0 ? a : 0.0; },
     [](int64_t a, int64_t) { return std::max<int64_t>(a, 0); }},
    {"leaky_relu", 1, F::Float, false,
     [](double a, double, float alpha, float) { return a >= 0 ? a : alpha * a; }},
    {"elu", 1, F::Float, false,
     [](double a, double, float alpha, float) { return a >= 0 ? a : alpha * std::expm1(a); }},
    {"softplus", 1, F::Float, false,
     [](double a, double, float, float) { return std::log1p(std::exp(a)); }},
    {"hard_sigmoid", 1, F::Float, false,
     [](double a, double, float alpha, float beta) {
       return std::fmax(0.0, std::fmin(1.0, alpha * a + beta));
     }},
    {"hard_swish", 1, F::Float, false,
     [](double a, double, float, float) {
       return a * std::fmax(0.0, std::fmin(1.0, a / 6 + 0.5));
     }},
    {"gelu", 1, F::Float, false, [](double a, double, float, float) { return gelu(a); }},
    {"gelu_tanh", 1, F::Float, false, [](double a, double, float, float) { return geluTanh(a); },
     nullptr, /*roundedVariant=*/true},
    {"tan", 1, F::Float, false, [](double a, double, float, float) { return std::tan(a); }},
    {"asin", 1, F::Float, false, [](double a, double, float, float) { return std::asin(a); }},
    {"acos", 1, F::Float, false, [](double a, double, float, float) { return std::acos(a); }},
    {"atan", 1, F::Float, false, [](double a, double, float, float) { return std::atan(a); }},
    {"sinh", 1, F::Float, false, [](double a, double, float, float) { return std::sinh(a); }},
    {"cosh", 1, F::Float, false, [](double a, double, float, float) { return std::cosh(a); }},
    {"asinh", 1, F::Float, false, [](double a, double, float, float) { return std::asinh(a); }},
    {"acosh", 1, F::Float, false, [](double a, double, float, float) { return std::acosh(a); }},
    {"atanh", 1, F::Float, false, [](double a, double, float, float) { return std::atanh(a); }},
    {"softsign", 1, F::Float, false,
     [](double a, double, float, float) { return a / (1 + std::fabs(a)); }},
    // alpha, beta: ONNX Selu's alpha and gamma.
    {"selu", 1, F::Float, false,
     [](double a, double, float alpha, float gamma) {
       return a > 0 ? gamma * a : gamma * (alpha * std::exp(a) - alpha);
     }},
    {"celu", 1, F::Float, false,
     [](double a, double, float alpha, float) {
       return std::fmax(0.0, a) + std::fmin(0.0, alpha * std::expm1(a / alpha));
     }},
    {"thresholded_relu", 1, F::Float, false,
     [](double a, double, float alpha, float) { return a > alpha ? a : 0.0; }},
    // alpha: lambd, beta: bias (ONNX Shrink's attributes).
    {"shrink", 1, F::Float, false,
     [](double a, double, float lambd, float bias) {
       return a < -lambd ? a + bias : (a > lambd ? a - bias : 0.0);
     }},
    {"mish", 1, F::Float, false,
     [](double a, double, float, float) { return a * std::tanh(std::log1p(std::exp(a))); }},
    {"swish", 1, F::Float, false,
     [](double a, double, float alpha, float) { return a / (1 + std::exp(-alpha * a)); }},
    {"sign", 1, F::Any, false,
     [](double a, double, float, float) { return double((a > 0) - (a < 0)); },
     [](int64_t a, int64_t) { return int64_t((a > 0) - (a < 0)); }},
    {"floor", 1, F::Float, false, [](double a, double, float, float) { return std::floor(a); }},
    {"ceil", 1, F::Float, false, [](double a, double, float, float) { return std::ceil(a); }},
    // ONNX Round: halves to even, as rint in the default rounding mode.
    {"round", 1, F::Float, false, [](double a, double, float, float) { return std::nearbyint(a); }},
    {"not", 1, F::Bool, false, [](double a, double, float, float) { return double(a == 0); },
     [](int64_t a, int64_t) { return int64_t(a == 0); }},
    {"bitwise_not", 1, F::Integer, false, noFloat, [](int64_t a, int64_t) { return ~a; }},
    // alpha: detect +inf, beta: detect -inf (ONNX IsInf's detect_positive/detect_negative).
    {"is_inf", 1, F::Float, true,
     [](double a, double, float alpha, float beta) {
       return double((alpha != 0 && a == INFINITY) || (beta != 0 && a == -INFINITY));
     }},
    // Binary.
    {"min", 2, F::Any, false, [](double a, double b, float, float) { return std::fmin(a, b); },
     [](int64_t a, int64_t b) { return std::min(a, b); }},
    {"mod", 2, F::Any, false, [](double a, double b, float, float) { return floorMod(a, b); },
     floorModInt},
    {"fmod", 2, F::Any, false, [](double a, double b, float, float) { return std::fmod(a, b); },
     truncMod},
    {"less", 2, F::Any, true, [](double a, double b, float, float) { return double(a < b); },
     [](int64_t a, int64_t b) { return int64_t(a < b); }},
    {"greater", 2, F::Any, true, [](double a, double b, float, float) { return double(a > b); },
     [](int64_t a, int64_t b) { return int64_t(a > b); }},
    {"greater_or_equal", 2, F::Any, true,
     [](double a, double b, float, float) { return double(a >= b); },
     [](int64_t a, int64_t b) { return int64_t(a >= b); }},
    {"or", 2, F::Bool, false,
     [](double a, double b, float, float) { return double(a != 0 || b != 0); },
     [](int64_t a, int64_t b) { return int64_t(a != 0 || b != 0); }},
    {"xor", 2, F::Bool, false,
     [](double a, double b, float, float) { return double((a != 0) != (b != 0)); },
     [](int64_t a, int64_t b) { return int64_t((a != 0) != (b != 0)); }},
    // PRelu: the slope b where a is negative.
    {"prelu", 2, F::Any, false,
     [](double a, double b, float, float) { return a < 0 ? a * b : a; },
     [](int64_t a, int64_t b) { return a < 0 ? int64_t(uint64_t(a) * uint64_t(b)) : a; }},
    // Integer bit operations. The folder truncates results to the operands' width, and reads
    // unsigned operands zero-extended, so 64-bit arithmetic here is exact at every width.
    {"bitwise_and", 2, F::Integer, false, noFloat, [](int64_t a, int64_t b) { return a & b; }},
    {"bitwise_or", 2, F::Integer, false, noFloat, [](int64_t a, int64_t b) { return a | b; }},
    {"bitwise_xor", 2, F::Integer, false, noFloat, [](int64_t a, int64_t b) { return a ^ b; }},
    // Left shifts by the width or more (or by a negative count) give 0; right shifts are
    // arithmetic for signed operands and give the sign fill (0 or -1) out of that range.
    // Truncation makes shifts between the width and 63 right. (A uint64 operand past
    // INT64_MAX reads negative here and would shift in ones: no ONNX test has one.)
    {"bitshift_left", 2, F::Integer, false, noFloat,
     [](int64_t a, int64_t b) { return b < 0 || b >= 64 ? 0 : int64_t(uint64_t(a) << b); }},
    {"bitshift_right", 2, F::Integer, false, noFloat,
     [](int64_t a, int64_t b) { return b < 0 || b >= 64 ? (a < 0 ? -1 : 0) : a >> b; }},
};

} // namespace

const ScalarFunction *lookupScalarFunction(llvm::StringRef name, unsigned arity) {
  for (const ScalarFunction &f : kFunctions)
    if (f.name == name && f.arity == arity)
      return &f;
  return nullptr;
}

} // namespace sinter::graph
