// Where the padded result of a NonZero over a run-time input may flow.
//
// Sinter resolves every shape at compile time, so NonZero of a run-time input has the largest
// length it can have: the input's element count, the nonzero elements' coordinates first and
// kPaddedCoordinate in every later column. That is exact for what mixture-of-experts exports
// do with it (the per-expert token lists of Hugging Face's routing loop): gather the listed
// rows (a gather clamps the padding to a real row), compute on each row alone, and scatter the
// results back (a scatter skips an out-of-range index, so padded rows write nothing). Anything
// else would let the padding change a result: a reduction over the listed rows, their count
// through Shape, a graph output. PaddedValues follows the padded values by name through the
// graph, node by node, and refuses the first node where padding could leak.
#ifndef SINTER_COMPILER_IMPORT_PADDEDVALUES_H
#define SINTER_COMPILER_IMPORT_PADDEDVALUES_H

#include "mlir/IR/BuiltinTypes.h"
#include "onnx.pb.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <string>

namespace sinter::import {

/// The coordinate a padded NonZero column holds on every axis: out of range of any axis a
/// scatter can address, and kept by a cast to int32.
constexpr int64_t kPaddedCoordinate = 2147483647;

class PaddedValues {
public:
  /// What a padded value holds at its padded positions.
  enum class Kind {
    /// Only kPaddedCoordinate: NonZero's result moved around (transposed, split, expanded,
    /// cast to an integer type). A scatter may take it as indices.
    Coordinates,
    /// Anything: values computed from padded rows or coordinates. Only gathered rows,
    /// row-wise computation and a scatter's updates.
    Rows,
    /// A shape or size of a padded value: it holds the padded length, so it may only shape a
    /// padded value (Reshape's and Expand's shape input).
    Size,
  };
  struct Info {
    Kind kind;
    int64_t axis;       // the padded axis (Size: unused)
    std::string source; // the NonZero result the padding comes from
  };

  /// How messages name a padded value's origin: "the padded NonZero result 'X' (why it is
  /// padded)".
  static std::string describe(const Info &info);
  /// How messages end: where a padded value may go.
  static constexpr const char *kWhereItMayGo =
      "; Sinter takes such a result only into gathers, row-wise computation and scatters";

  /// `name`, a NonZero result padded to its input's element count, starts a padded value.
  void startAt(llvm::StringRef name) { values[name] = {Kind::Coordinates, 1, name.str()}; }
  bool empty() const { return values.empty(); }
  const Info *find(llvm::StringRef name) const {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }

  /// After `node` imported: records which of its outputs are padded, or
  /// returns why padding would reach a result it changes ("" when the node is fine).
  /// `typeOf` gives a value's type by name (null when unknown).
  std::string propagate(const onnx::NodeProto &node,
                        const std::function<mlir::RankedTensorType(const std::string &)> &typeOf);

private:
  llvm::StringMap<Info> values;
};

} // namespace sinter::import

#endif
