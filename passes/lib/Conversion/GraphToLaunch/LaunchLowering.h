// Shared state of the graph -> launch lowering (sinter-lower-to-launch): one instance
// rewrites one function. Library GEMMs live in LowerToLaunch.cpp, kernel launches in
// LowerKernels.cpp.
#ifndef SINTER_PASSES_LIB_LAUNCHLOWERING_H
#define SINTER_PASSES_LIB_LAUNCHLOWERING_H

#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Dialect/Launch/IR/LaunchOps.h"
#include "sinter/Passes/CompileTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include "launch_params.h"

#include <cstring>
#include <map>
#include <optional>
#include <string>

namespace sinter {

/// Kernel template parameters and small queries shared by the lowering files.
inline mlir::Attribute intParam(mlir::Builder &b, int64_t v) { return b.getI64IntegerAttr(v); }
inline mlir::Attribute strParam(mlir::Builder &b, llvm::StringRef s) { return b.getStringAttr(s); }
/// The CUDA spelling of a kernel template's element type parameter ("" for other types).
inline llvm::StringRef cxxType(mlir::Type t) {
  if (t.isBF16())
    return "__nv_bfloat16";
  if (t.isF32())
    return "float";
  if (t.isF16())
    return "__half";
  if (llvm::isa<mlir::Float8E4M3FNType>(t))
    return "__nv_fp8_e4m3";
  return "";
}
inline uint32_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}
/// A linear's input as a matrix: m rows (every leading dimension) of k.
struct LinearRows {
  int64_t m, k;
};
inline LinearRows linearRows(graph::LinearOp linear) {
  auto type = linear.getInput().getType();
  int64_t k = type.getShape().back();
  return {type.getNumElements() / k, k};
}

/// Where a head of a fused QKV projection (a result of sinter.split_qkv_heads) lives: the
/// projection's buffer, its row length and the head's first column.
struct HeadColumns {
  mlir::Value buffer;
  int64_t rowStride = 0;
  int64_t offset = 0;
};

/// The weight blob, shared by every function of the module: entry points of one model
/// (prefill, decode) read one copy of each weight.
struct WeightTable {
  struct Entry {
    std::string name;
    int64_t offset;
  };
  llvm::DenseMap<mlir::Attribute, Entry> byData;
  int64_t count = 0;
  int64_t bytes = 0;
  /// Compile-time re-layouts by (source data, layout): the second entry point reading a
  /// weight in the same layout reuses it instead of copying gigabytes again. fp8 weights are
  /// keyed with the layout and ":fp8" (the e4m3 rows), ":fp8_scale" (their scales) or
  /// ":fp8_gemm" (the dequantized bf16 copy a library GEMM reads); int4 weights likewise with
  /// ":int4", ":int4_scale" and ":int4_gemm".
  std::map<std::pair<const void *, std::string>, mlir::DenseElementsAttr> relayouts;
};

class FunctionLowering {
public:
  FunctionLowering(mlir::func::FuncOp func, llvm::StringRef precision, const CompileTarget &target,
                   bool f32Activations, kernels::LinearWeights weightDtype, WeightTable &weights)
      : func(func), precision(precision), smCount(target.smCount),
        sharedMemory{uint32_t(target.sharedMemoryPerBlock), uint32_t(target.sharedMemoryPerSm)},
        f32Activations(f32Activations), weightDtype(weightDtype), weights(weights),
        builder(func.getContext()) {}

  mlir::LogicalResult run();

private:
  mlir::LogicalResult lowerOp(mlir::Operation *op);
  mlir::LogicalResult lowerGemm(graph::LinearOp linear);

  // The generic tier (LowerGeneric.cpp): a fusion group, or one op no pattern kernel takes,
  // as one generated kernel; a matrix product of activations as a (batched) library GEMM;
  // an output that is an input, a constant or another output as a copy.
  mlir::LogicalResult lowerGeneric(mlir::Operation *op);
  mlir::LogicalResult lowerMatMul(graph::MatMulOp matmul);
  mlir::LogicalResult emitCopy(mlir::Value source, mlir::Value slot);
  /// Two f32 [K] norm weights packed as one [2, K] kernel weight: a LayerNorm's scale and
  /// shift, or a post-norm's and the next pre-norm's weights.
  mlir::FailureOr<mlir::Value> pairedNormKernelWeight(mlir::Value first, mlir::Value second,
                                                      int64_t k, llvm::StringRef suffix);
  /// x [m, k] RMS-normalized over k and scaled by `weight` (a graph value), by a generated row
  /// kernel into a new arena buffer.
  mlir::FailureOr<mlir::Value> emitGenericRmsNorm(mlir::Location loc, mlir::Value x,
                                                  mlir::Value weight, int64_t m, int64_t k,
                                                  float epsilon);
  /// A generated `fn` (a sinter.unary function) of x's [m, n] elements into out: an
  /// activation after a library GEMM.
  mlir::LogicalResult emitGenericUnary(mlir::Location loc, mlir::Value x, mlir::Value out,
                                       int64_t m, int64_t n, llvm::StringRef fn);
  /// x [m, n] + bias [n] into out: the bias of an f64 library GEMM (cuBLASLt's bias
  /// epilogue is not used for f64).
  mlir::LogicalResult emitGenericBias(mlir::Location loc, mlir::Value x, mlir::Value bias,
                                      mlir::Value out, int64_t m, int64_t n);
  /// A generated LayerNorm of x's [m, k] rows (scale and shift [k]) into a new buffer: a
  /// LayerNorm prologue before a library GEMM.
  mlir::FailureOr<mlir::Value> emitGenericLayerNorm(mlir::Location loc, mlir::Value x,
                                                    mlir::Value scale, mlir::Value shift,
                                                    int64_t m, int64_t k, float epsilon);
  /// A launch.generic computing `body` (built by `fill` from the body's arguments, one per
  /// entry of `inputs`) into `outputs`.
  mlir::LogicalResult emitGeneric(
      mlir::Location loc, llvm::ArrayRef<mlir::Value> inputs, llvm::ArrayRef<mlir::Value> outputs,
      llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::OpBuilder &, mlir::ValueRange)> fill);

  // Kernel launches (LowerKernels.cpp).
  bool wantsKernel(graph::LinearOp linear) const;
  mlir::LogicalResult lowerLinearKernel(graph::LinearOp linear);
  mlir::LogicalResult lowerGather(graph::GatherOp gather);
  mlir::LogicalResult lowerAttention(graph::FusedAttentionOp attention);
  mlir::LogicalResult lowerRmsNorm(graph::RMSNormalizationOp norm);
  /// The attention kernels write [B, S, heads * D]: fails on an attention without
  /// merged_heads (sinter-fuse-attention-head-merge).
  mlir::LogicalResult requireMergedHeads(mlir::Operation *attention, bool mergedHeads);
  /// A split_qkv_heads is no launch: its heads are read in place in the projection's buffer,
  /// which the linear producing it was lowered into (with the rotation when it has tables),
  /// unless it normalizes q and k: then a qk_norm_rope launch (LowerSplitQkvHeads.cpp).
  mlir::LogicalResult lowerSplitQkvHeads(graph::SplitQkvHeadsOp split);
  /// The split's cos and sin tables as the kernels read them, bf16 (or, with `allowF32`, f32)
  /// [m, head_dim]: weights for constant tables, else the buffers of tables computed at run
  /// time (errors on `user`).
  mlir::FailureOr<std::pair<mlir::Value, mlir::Value>>
  ropeTableBuffers(mlir::Operation *user, graph::SplitQkvHeadsOp split, int64_t m,
                   bool allowF32 = false);
  /// The columns `head` is read from when it is a result of a split_qkv_heads, else nullopt.
  std::optional<HeadColumns> headColumns(mlir::Value head);
  /// KV caches (LowerCache.cpp): a write that no decode attention absorbs (prefill), and
  /// decode attention with the writes of its step.
  mlir::LogicalResult lowerCacheWrite(graph::CacheWriteOp write);
  mlir::LogicalResult lowerDecodeAttention(graph::DecodeAttentionOp attention);
  /// A cache write no fused-QKV kernel takes: the cache_rows_write kernel, into `state`.
  mlir::LogicalResult lowerCacheRowsWrite(graph::CacheWriteOp write, mlir::Value state);
  /// The next token of each sequence (--sample): the sample_tokens kernel (LowerSampler.cpp).
  mlir::LogicalResult lowerSampleTokens(graph::SampleTokensOp sample);
  /// A buffer of the context's state block called `name`.
  mlir::Value stateBuffer(mlir::Location loc, llvm::StringRef name, mlir::MemRefType type);
  /// out[m, :] = RMS-normalized x[m, :] times weight: the rms_norm kernel launch (an f32
  /// weight scales in f32 with one rounding, a bf16 one the rounded normalized row).
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
  /// A new weight in the blob holding `data`, named `name` (default: the next "wN").
  mlir::Value makeWeight(mlir::Location loc, mlir::DenseElementsAttr data,
                         llvm::StringRef name = {});
  /// "wN" + suffix with the next N for `data` when no weight holds it yet, else "" (makeWeight
  /// then returns the weight that does).
  std::string newWeightName(mlir::DenseElementsAttr data, llvm::StringRef suffix);
  /// The weight of a linear_small_m launch in the kernel row order `rowOf` (cached under
  /// `layout`) stored as `format` in rows of `cols` (linear_small_m_weight_cols), and for fp8
  /// and int4 its scales (one per row, or per row and group), else a null Value.
  std::pair<mlir::Value, mlir::Value>
  makeKernelWeight(graph::LinearOp linear, llvm::StringRef layout,
                   llvm::function_ref<int64_t(int64_t)> rowOf, kernels::LinearWeights format,
                   int64_t cols);
  /// The [K, N] weight a library GEMM computing a bf16 linear reads: the graph's, or for fp8
  /// and int4 the dequantized quantized weight in bf16 (so that it agrees with the kernels).
  mlir::DenseElementsAttr gemmWeightData(graph::LinearOp linear, kernels::LinearWeights format);
  /// How linear_small_m launches of a linear with K = `k` read its constant weight: the
  /// --weight-dtype's format where the kernel takes it at that K (int4: K a multiple of
  /// kLinearInt4BlockK with whole groups of kLinearInt4Group), else bf16.
  kernels::LinearWeights kernelWeights(int64_t k) const;
  /// W_GROUP of linear_small_m (and linear_small_m_supported's w_group): the int4 group size,
  /// 0 for bf16 and fp8.
  static int weightGroup(kernels::LinearWeights format) {
    return format == kernels::LinearWeights::INT4 ? kernels::kLinearInt4Group : 0;
  }
  /// The buffer an op result is written to: its output slot or a fresh arena allocation.
  mlir::Value destinationFor(mlir::Value result);
  /// The memref type a value of tensor type `t` is held in: the same element type, or f32
  /// for bf16 under f32Activations.
  mlir::MemRefType bufferTypeFor(mlir::Type t) const;
  /// Fails on `op` when f32Activations is on: its lowering only handles the model's types.
  mlir::LogicalResult requireModelActivations(mlir::Operation *op, llvm::StringRef what);
  void copyArgAttrs(mlir::DictionaryAttr attrs, mlir::func::FuncOp lowered, unsigned index,
                    bool isOutput);

  mlir::func::FuncOp func;
  llvm::StringRef precision;
  /// The module's target (sinter.target): every kernel configuration is chosen for these.
  int64_t smCount;
  kernels::SharedMemoryLimits sharedMemory;
  /// --activations=f32: bf16 activations and outputs get fp32 buffers (see bufferTypeFor).
  bool f32Activations;
  /// --weight-dtype: BF16 (model, bf16), FP8_E4M3 (fp8: bf16 linears with constant weights
  /// compute with e4m3 weights scaled per output row) or INT4 (int4: 4-bit weights scaled per
  /// output row and group of kLinearInt4Group k), QuantizeWeights.h.
  kernels::LinearWeights weightDtype;
  WeightTable &weights;
  mlir::OpBuilder builder;
  llvm::DenseMap<mlir::Value, mlir::Value> buffers;
  llvm::DenseMap<mlir::Value, mlir::Value> outputSlots;
  /// Outputs that copy a value held elsewhere (an input, a constant, another output).
  llvm::SmallVector<std::pair<mlir::Value, mlir::Value>> outputCopies;
  /// This function's weight ops, by the data they hold.
  llvm::DenseMap<mlir::Attribute, mlir::Value> weightsByData;
  llvm::StringMap<mlir::Value> states;
  mlir::Operation *lastState = nullptr;
};

} // namespace sinter

#endif
