// Internal interface between the importer core and the per-op import functions.
#ifndef SINTER_COMPILER_IMPORT_NODEIMPORTER_H
#define SINTER_COMPILER_IMPORT_NODEIMPORTER_H

#include "PaddedValues.h"
#include "onnx.pb.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sinter::import {

/// TensorProto data type codes by number (newer than some onnx.proto this may be built against).
constexpr int kOnnxFloat8E4M3FN = 17;
constexpr int kOnnxUint4 = 21;
constexpr int kOnnxInt4 = 22;

/// Converts an ONNX element type code to an MLIR type, or null when unsupported.
mlir::Type elementTypeFor(mlir::MLIRContext *context, int onnxType);
/// elementTypeFor, and for constants (quantized weights) also UINT8, FLOAT8E4M3FN and the
/// 4-bit INT4 / UINT4, which widen to i8 / ui8 (tensorFromProto unpacks them).
mlir::Type constantElementTypeFor(mlir::MLIRContext *context, int onnxType);
/// "17 (FLOAT8E4M3FN); supported: ...": an unsupported ONNX element type code, named, and
/// the codes Sinter supports.
std::string dataTypeText(int onnxType);

/// The most elements one tensor may hold. Far beyond any device, yet small enough that byte
/// sizes, offsets and their sums in later phases never overflow 64 bits.
constexpr int64_t kMaxElements = int64_t(1) << 48;
/// "2x3x4" ("scalar" for rank 0).
std::string shapeText(llvm::ArrayRef<int64_t> shape);
/// Why `shape` cannot be a tensor's shape (a negative dimension, an element count that
/// overflows int64 or exceeds kMaxElements), phrased to follow "<tensor> has ..."; empty when
/// it can. Never overflows while checking.
std::string shapeProblem(llvm::ArrayRef<int64_t> shape);

/// The caches of a with-past export: the graph inputs a Concat joins with new rows into a
/// graph output, the symbolic dimension they share along that axis (`past`) and the one of
/// the new tokens (`sequence`).
struct PastCacheDims {
  std::string past, sequence;
  std::vector<std::string> caches;
};
/// Fills `dims` from `graph`; returns why it cannot (a one-line message), "" on success.
std::string findPastCacheDims(const onnx::GraphProto &graph,
                              const llvm::StringSet<> &initializerNames, PastCacheDims &dims);

/// State shared by every node of one graph: values by name and known constant values.
struct GraphState {
  llvm::StringMap<mlir::Value> values;
  llvm::DenseMap<mlir::Value, mlir::Attribute> constants;
  /// Every node output of the graph -> the name of the node that computes it, so that a read
  /// of a value not yet defined says whether it comes later or never.
  llvm::StringMap<std::string> producers;
  int64_t opset = 0;
  std::string modelDir;
  /// Imports one node of a subgraph (If, Loop, Scan) through the importer's own path; the
  /// importer sets it, and `importError` gives the message of its last failure.
  std::function<mlir::LogicalResult(const onnx::NodeProto &, const std::string &)> importNode;
  std::function<std::string()> importError;
  /// Values that hold a run-time NonZero's padding (PaddedValues.h).
  PaddedValues padded;
};

/// What an op import function sees of the node it imports. Every accessor that can fail
/// records an error message; import functions return failure() after any of them fails.
class NodeImporter {
public:
  NodeImporter(const onnx::NodeProto &node, GraphState &state, mlir::OpBuilder &builder,
               mlir::Location loc)
      : node(node), state(state), builder(builder), loc(loc) {}

  const onnx::NodeProto &node;
  GraphState &state;
  mlir::OpBuilder &builder;
  mlir::Location loc;
  std::string error;

  int64_t opset() const { return state.opset; }
  unsigned numInputs() const { return node.input_size(); }
  bool hasInput(unsigned i) const { return i < (unsigned)node.input_size() && !node.input(i).empty(); }

  /// The value of input i (failure when missing or unknown).
  mlir::FailureOr<mlir::Value> input(unsigned i);
  mlir::RankedTensorType inputType(unsigned i);
  /// The known constant value of input i, or null when it is not a compile-time constant.
  mlir::DenseElementsAttr constantInput(unsigned i);
  /// Integer values of a constant input (shape, axes, ...); fails when not constant.
  mlir::FailureOr<llvm::SmallVector<int64_t>> constantInts(unsigned i);

  /// The attribute named `name`, or null. Every accessor records the name as read: after a
  /// successful import, an attribute of the node that no accessor asked for is an error (a
  /// later opset's attribute would otherwise be dropped without a word). An import function
  /// that takes an attribute without needing its value still asks for it.
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  /// The node's attributes no accessor has asked for, in the node's order.
  llvm::SmallVector<std::string> unreadAttributes() const;
  /// Attribute values. An attribute whose declared type is not the one asked for gives the
  /// default and records attrError (the import of the node then fails with it).
  int64_t attrInt(llvm::StringRef name, int64_t defaultValue) const;
  float attrFloat(llvm::StringRef name, float defaultValue) const;
  std::optional<llvm::SmallVector<int64_t>> attrInts(llvm::StringRef name) const;
  std::string attrString(llvm::StringRef name, llvm::StringRef defaultValue) const;
  mutable std::string attrError;
  mutable llvm::StringSet<> readAttributes;

  /// Binds output i to `value` and records its constant value when its op folds.
  mlir::LogicalResult setOutput(unsigned i, mlir::Value value);
  /// Binds output 0 of a single-result op.
  mlir::LogicalResult setResult(mlir::Operation *op) { return setOutput(0, op->getResult(0)); }

  mlir::LogicalResult fail(const llvm::Twine &message);

  /// A helper constant the import itself needs (a shape, a bound), known to later folds.
  mlir::Value constant(mlir::DenseElementsAttr value);
  /// A rank-0 constant of float type `type` holding `value` (rounded to the type).
  mlir::Value scalar(mlir::Type type, double value);
  /// A rank-0 constant of integer type `type` holding `value`.
  mlir::Value integerScalar(mlir::Type type, int64_t value);
  /// `value` reshaped (a view) to `shape`.
  mlir::Value reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  /// An int64 constant 0 .. size-1 laid along dimension `axis` of a rank-`rank` shape of ones
  /// (compared with an index to mark its position along that axis).
  mlir::Value iota(int64_t size, int64_t axis, int64_t rank);

  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape, mlir::Type elementType) {
    return mlir::RankedTensorType::get(shape, elementType);
  }
};

/// Normalizes a possibly negative axis into [0, rank); fails naming `what`.
mlir::FailureOr<int64_t> normalizeAxis(NodeImporter &n, int64_t axis, int64_t rank,
                                       const llvm::Twine &what);
/// Normalizes a list of axes against `rank`, sorts them and rejects duplicates.
mlir::FailureOr<llvm::SmallVector<int64_t>> normalizeAxes(NodeImporter &n,
                                                          llvm::ArrayRef<int64_t> axes,
                                                          int64_t rank, const llvm::Twine &what);
/// Fails unless `type` has a floating-point element type, naming `what`.
mlir::LogicalResult requireFloat(NodeImporter &n, mlir::RankedTensorType type,
                                 const llvm::Twine &what);

/// Where an 8-bit operand's zero point may hold one value per entry: along `axis` (negative:
/// counted from the last dimension), an entry named `unit` in messages ("row", "column").
struct ZeroPointAxis {
  int64_t axis;
  llvm::StringRef unit;
};
/// Input `index` (int8 or uint8, rank >= minRank) in f64, less its zero point (input
/// `zeroIndex`, optional): one value or, with `perAxis`, one per entry along that axis. The
/// integer products of MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv read these.
mlir::FailureOr<mlir::Value> shiftedEightBit(NodeImporter &n, unsigned index, unsigned zeroIndex,
                                             std::optional<ZeroPointAxis> perAxis,
                                             llvm::StringRef name, int64_t minRank);

/// The normalized axis of LayerNormalization / RMSNormalization on `input` (rank >= 1,
/// stash_type 1), or failure with the node's error set.
mlir::FailureOr<int64_t> normalizationAxis(NodeImporter &n, mlir::RankedTensorType input);

using OpImportFn = mlir::LogicalResult (*)(NodeImporter &);

struct OpImportEntry {
  OpImportFn fn;
  int64_t minOpset = 1; // lowest opset whose semantics the function implements
};

using OpImportRegistry = llvm::StringMap<OpImportEntry>;

void registerElementwiseImports(OpImportRegistry &registry);
void registerMatrixImports(OpImportRegistry &registry);
void registerShapeImports(OpImportRegistry &registry);
void registerTensorImports(OpImportRegistry &registry);
void registerGenericImports(OpImportRegistry &registry);
void registerQuantizedImports(OpImportRegistry &registry);
void registerQuantizeImports(OpImportRegistry &registry);
void registerRecurrentImports(OpImportRegistry &registry);
void registerIndexingImports(OpImportRegistry &registry);
void registerGeneratorImports(OpImportRegistry &registry);
void registerLossImports(OpImportRegistry &registry);
void registerControlFlowImports(OpImportRegistry &registry);
void registerConvImports(OpImportRegistry &registry);
void registerPoolImports(OpImportRegistry &registry);
void registerChannelNormImports(OpImportRegistry &registry);
void registerRotaryImports(OpImportRegistry &registry);
void registerResizeImports(OpImportRegistry &registry);
void registerLayoutImports(OpImportRegistry &registry);
void registerEinsumImports(OpImportRegistry &registry);
void registerTopKImports(OpImportRegistry &registry);
void registerIntegerMatrixImports(OpImportRegistry &registry);
void registerSpectralImports(OpImportRegistry &registry);
void registerGridSampleImports(OpImportRegistry &registry);
void registerUnpoolImports(OpImportRegistry &registry);
void registerLinearRecurrenceImports(OpImportRegistry &registry);
/// Ops of the domain com.microsoft (onnxruntime's contrib ops) Sinter imports.
void registerMicrosoftImports(OpImportRegistry &registry);

/// Converts a TensorProto (inline or external data) to a dense attribute.
mlir::FailureOr<mlir::DenseElementsAttr> tensorFromProto(const onnx::TensorProto &tensor,
                                                         mlir::MLIRContext *context,
                                                         const std::string &modelDir,
                                                         std::string &error);

} // namespace sinter::import

#endif
