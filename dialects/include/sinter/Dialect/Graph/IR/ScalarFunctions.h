// The scalar functions of sinter.unary and sinter.binary: one table that the verifiers, the
// folders (host evaluation) and the generated kernels (device helpers named after the entry,
// runtime/kernels/generic.cuh) all read, so an op name means one thing everywhere.
#ifndef SINTER_DIALECT_GRAPH_IR_SCALARFUNCTIONS_H
#define SINTER_DIALECT_GRAPH_IR_SCALARFUNCTIONS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace sinter::graph {

enum class ScalarOperands { Float, Integer, Bool, Any };

struct ScalarFunction {
  llvm::StringRef name;
  unsigned arity;
  /// The operand element types the function accepts.
  ScalarOperands operands;
  /// A predicate gives i1; otherwise the result has the operands' element type.
  bool predicate;
  /// Host evaluation in double, for folding floating-point constants.
  double (*eval)(double a, double b, float alpha, float beta);
  /// Exact host evaluation of integer and boolean operands (no overflow), or null for
  /// functions of floats only.
  int64_t (*evalInt)(int64_t a, int64_t b) = nullptr;
  /// runtime/kernels/generic.cuh has fn_<name>_rounded<Storage>, a cheaper device helper for
  /// f16 and bf16 results, accurate to well under their rounding.
  bool roundedVariant = false;
};

/// The entry named `name` with `arity` operands, or null.
const ScalarFunction *lookupScalarFunction(llvm::StringRef name, unsigned arity);

} // namespace sinter::graph

#endif
