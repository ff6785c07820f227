// Shared state of the graph -> launch lowering (sinter-lower-to-launch): one instance
// rewrites one function. Library GEMMs live in LowerToLaunch.cpp, kernel launches in
// LowerKernels.cpp.
#ifndef SINTER_PASSES_LIB_LAUNCHLOWERING_H
#define SINTER_PASSES_LIB_LAUNCHLOWERING_H

#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Dialect/Launch/IR/LaunchOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace sinter {

/// Where a slice of a fused QKV projection's output lives: the projection's buffer and the
/// first column of the slice.
struct FusedColumns {
  mlir::Value buffer;
  int64_t rowStride = 0;
  int64_t offset = 0;
  bool roped = false;
};

class FunctionLowering {
public:
  FunctionLowering(mlir::func::FuncOp func, llvm::StringRef precision, int64_t smCount)
      : func(func), precision(precision), smCount(smCount), builder(func.getContext()) {}

  mlir::LogicalResult run();
  int64_t weightBytes = 0;

private:
  mlir::LogicalResult lowerOp(mlir::Operation *op);
  mlir::LogicalResult lowerGemm(graph::LinearOp linear);

  // Kernel launches (LowerKernels.cpp).
  bool wantsKernel(graph::LinearOp linear) const;
  mlir::LogicalResult lowerLinearKernel(graph::LinearOp linear);
  mlir::LogicalResult lowerGather(graph::GatherOp gather);
  mlir::LogicalResult lowerAttention(graph::FusedAttentionOp attention);
  mlir::LogicalResult lowerRmsNorm(graph::RMSNormalizationOp norm);
  /// out[m, :] = RMS-normalized x[m, :] times weight: the rms_norm kernel launch.
  mlir::LogicalResult emitRmsNorm(mlir::Location loc, mlir::Value x, mlir::Value weight,
                                  mlir::Value out, int64_t m, int64_t d, float eps);
  mlir::LogicalResult emitKernel(mlir::Location loc, llvm::StringRef name,
                                 llvm::ArrayRef<mlir::Attribute> params,
                                 llvm::ArrayRef<mlir::Value> args,
                                 llvm::ArrayRef<int64_t> grid, llvm::ArrayRef<int64_t> block,
                                 int64_t sharedBytes, llvm::ArrayRef<unsigned> writtenArgs);

  /// The buffer holding `value`: an I/O slot, an arena buffer, or (for a constant) a weight
  /// created on first use.
  mlir::FailureOr<mlir::Value> bufferOf(mlir::Value value);
  /// A new weight in the blob holding `data`.
  mlir::Value makeWeight(mlir::Location loc, mlir::DenseElementsAttr data);
  /// The buffer an op result is written to: its output slot or a fresh arena allocation.
  mlir::Value destinationFor(mlir::Value result);
  void copyArgAttrs(mlir::DictionaryAttr attrs, mlir::func::FuncOp lowered, unsigned index,
                    bool isOutput);

  mlir::func::FuncOp func;
  llvm::StringRef precision;
  int64_t smCount;
  mlir::OpBuilder builder;
  llvm::DenseMap<mlir::Value, mlir::Value> buffers;
  llvm::DenseMap<mlir::Value, mlir::Value> outputSlots;
  /// Graph ops whose work a launch already covers (views, fused epilogues).
  llvm::DenseSet<mlir::Operation *> absorbed;
  /// Attention operands found inside a fused QKV projection's output.
  llvm::DenseMap<mlir::Value, FusedColumns> fusedColumns;
  int64_t weightIndex = 0;
  llvm::DenseMap<mlir::Attribute, mlir::Value> weightsByData;
};

} // namespace sinter

#endif
