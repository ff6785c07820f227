#ifndef SINTER_GRAPH_TENSOR_OPS
#define SINTER_GRAPH_TENSOR_OPS

// Shape, indexing, reduction, normalization and attention primitives of the ONNX exports
// of Llama (opsets 18 and 23).
//
// Conventions: axes are normalized by the importer (non-negative, sorted where order does
// not matter); index parameters that ONNX passes as constant inputs (Slice bounds, axes,
// Trilu's k) become attributes; shape-valued inputs whose value the result type already
// holds (Expand, ConstantOfShape) stay operands, as for `sinter.reshape`, and the result
// type governs. Verifiers recompute the result shape from operands and attributes.

//===----------------------------------------------------------------------===//
// Shape queries and constant generators
//===----------------------------------------------------------------------===//

def Graph_ShapeOp : Graph_Op<"shape"> {
  let summary = "The dimensions [start, end) of the input's shape as a 1-D i64 tensor";
  let description = [{
    `start` and `end` are normalized: 0 <= start <= end <= rank. Shapes are static, so
    this op always folds to a constant.
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$start, I64Attr:$end);
  let results = (outs StaticShapeTensorOf<[I64]>:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ConstantOfShapeOp : Graph_Op<"constant_of_shape"> {
  let summary = "A tensor of the result shape filled with one value";
  let description = [{
    `value` is a one-element tensor of the result's element type. The `shape` operand (a
    1-D integer tensor with one entry per result dimension) is kept from the ONNX node;
    the result type holds the resolved shape. Always folds to a splat constant.
  }];
  let arguments = (ins StaticShapeTensorOf<[I64]>:$shape, ElementsAttr:$value);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_RangeOp : Graph_Op<"range"> {
  let summary = "ONNX Range: start, start + delta, ... up to (excluding) limit";
  let description = [{
    `start`, `limit` and `delta` are 0-D tensors of the result's element type. The result
    length, max(ceil((limit - start) / delta), 0), is in the result type (the importer
    requires constant operands to compute it).
  }];
  let arguments = (ins Graph_Tensor:$start, Graph_Tensor:$limit, Graph_Tensor:$delta);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_GatherOp : Graph_Op<"gather"> {
  let summary = "ONNX Gather: take entries of `input` along `axis` at `indices`";
  let description = [{
    Result shape: input.shape[:axis] + indices.shape + input.shape[axis+1:]. Negative
    indices count from the end of the axis; indices outside [-dim, dim) are undefined.
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IntTensor:$indices, I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The result shape for these operand shapes and parameters, or failure with
    /// `error` set (shared by the verifier and the importer).
    static ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    inferShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> indices, int64_t axis,
               std::string &error);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_GatherNDOp : Graph_Op<"gather_nd"> {
  let summary = "ONNX GatherND: take slices of `input` at index tuples of `indices`";
  let description = [{
    With k = indices.shape[-1] and b = batch_dims, the result shape is
    indices.shape[:-1] + input.shape[b+k:]. The first b dimensions of input and indices
    are batch dimensions and must agree. Negative indices count from the end.
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IntTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The result shape for these operand shapes and parameters, or failure with
    /// `error` set (shared by the verifier and the importer).
    static ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    inferShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> indices,
               int64_t batchDims, std::string &error);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ScatterNDOp : Graph_Op<"scatter_nd"> {
  let summary = "ONNX ScatterND: a copy of `input` with `updates` written (or combined) at `indices`";
  let description = [{
    With k = indices.shape[-1]: updates.shape == indices.shape[:-1] + input.shape[k:].
    Negative indices count from the end; a tuple with an index out of range writes nothing
    (the padding of a run-time NonZero's result, which the importer lets reach scatters).
    `reduction` none writes the update (of tuples that repeat, the last); add, mul, max and
    min combine every update of an element with its value, in the order of the tuples.
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IntTensor:$indices, Graph_Tensor:$updates,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_SliceOp : Graph_Op<"slice"> {
  let summary = "Strided slice with normalized per-dimension starts, ends and steps";
  let description = [{
    One entry per input dimension. For step > 0: 0 <= start <= dim and 0 <= end <= dim;
    for step < 0: 0 <= start < dim and -1 <= end < dim (ONNX clamping already applied).
    Result dimension: max(0, ceil((end - start) / step)).
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The result shape for these operand shapes and parameters, or failure with
    /// `error` set (shared by the verifier and the importer).
    static ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    inferShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> starts,
               llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> steps,
               std::string &error);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ConcatOp : Graph_Op<"concat"> {
  let summary = "Concatenation along `axis`";
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The result shape for these operand shapes and parameters, or failure with
    /// `error` set (shared by the verifier and the importer).
    static ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    inferShape(llvm::ArrayRef<llvm::SmallVector<int64_t>> inputs, int64_t axis,
               std::string &error);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_UnsqueezeOp : Graph_Op<"unsqueeze"> {
  let summary = "Inserts size-1 dimensions at `axes` (sorted positions in the result)";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The result shape for these operand shapes and parameters, or failure with
    /// `error` set (shared by the verifier and the importer).
    static ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    inferShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> axes,
               std::string &error);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_SqueezeOp : Graph_Op<"squeeze"> {
  let summary = "Removes the size-1 dimensions at `axes` (sorted positions in the input)";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The result shape for these operand shapes and parameters, or failure with
    /// `error` set (shared by the verifier and the importer).
    static ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    inferShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> axes,
               std::string &error);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ExpandOp : Graph_Op<"expand"> {
  let summary = "ONNX Expand: broadcast the input to the result shape";
  let description = [{
    The result shape is the numpy broadcast of the input shape and the ONNX `shape`
    operand (bidirectional). The `shape` operand is kept from the ONNX node; the result
    type holds the resolved shape.
  }];
  let arguments = (ins Graph_Tensor:$input, StaticShapeTensorOf<[I64]>:$shape);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input `,` $shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TriluOp : Graph_Op<"trilu"> {
  let summary = "Keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims";
  let arguments = (ins Graph_Tensor:$input, DefaultValuedAttr<BoolAttr, "true">:$upper,
                       DefaultValuedAttr<I64Attr, "0">:$k);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and normalization
//===----------------------------------------------------------------------===//

def Graph_ReduceMeanOp : Graph_Op<"reduce_mean"> {
  let summary = "Mean over `axes` (sorted, unique); empty `axes` is the identity";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The result shape for these operand shapes and parameters, or failure with
    /// `error` set (shared by the verifier and the importer).
    static ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    inferShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> axes, bool keepdims,
               std::string &error);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_SoftmaxOp : Graph_Op<"softmax"> {
  let summary = "Softmax along one `axis`";
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_RMSNormalizationOp : Graph_Op<"rms_normalization"> {
  let summary = "ONNX RMSNormalization: x / sqrt(mean(x^2 over dims [axis, rank)) + eps) * scale";
  let description = [{
    Statistics are computed in f32 (ONNX stash_type 1). `scale` broadcasts
    unidirectionally to the input; the result has the input's shape and the scale's
    element type. The normalized row is rounded to the result's type before the scale
    multiplies it (Hugging Face's RMSNorm in bf16 / f16); with an f32 scale on a 16-bit input
    (Gemma's and OLMo 2's fp32 weights) nothing is rounded before the result.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale, I64Attr:$axis,
                       F32Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$input `,` $scale attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Graph_AttentionOp : Graph_Op<"attention"> {
  let summary = "ONNX Attention (opset 23) without KV cache: softmax(scale * Q K^T + mask) V";
  let description = [{
    Either all 4-D operands, Q [B, q_num_heads, Sq, D], K [B, kv_num_heads, Skv, D],
    V [B, kv_num_heads, Skv, Dv] -> [B, q_num_heads, Sq, Dv], or all 3-D operands,
    Q [B, Sq, q_num_heads * D], K [B, Skv, kv_num_heads * D],
    V [B, Skv, kv_num_heads * Dv] -> [B, Sq, q_num_heads * Dv]. q_num_heads is a multiple
    of kv_num_heads (grouped-query attention). The optional mask broadcasts to
    [B, q_num_heads, Sq, Skv]; i1 masks select (true attends), float masks (Q's type) add.
    `is_causal`: query i attends key j only if j <= i. `scale` is resolved (ONNX default
    1/sqrt(D)). With `softcap` > 0 the scaled scores become softcap * tanh(scores / softcap)
    before the mask. A row with no attended key gives zeros.
  }];
  let arguments = (ins Graph_FloatTensor:$query, Graph_FloatTensor:$key,
                       Graph_FloatTensor:$value, Optional<Graph_Tensor>:$mask,
                       I64Attr:$q_num_heads, I64Attr:$kv_num_heads, F32Attr:$scale,
                       DefaultValuedAttr<BoolAttr, "false">:$is_causal,
                       DefaultValuedAttr<F32Attr, "0.0">:$softcap);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` `mask` $mask^)? attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The result shape for these operand shapes and parameters, or failure with
    /// `error` set (shared by the verifier and the importer).
    static ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    inferShape(llvm::ArrayRef<int64_t> query, llvm::ArrayRef<int64_t> key,
               llvm::ArrayRef<int64_t> value, std::optional<llvm::ArrayRef<int64_t>> mask,
               int64_t qNumHeads, int64_t kvNumHeads, std::string &error);
  }];
  let hasVerifier = 1;
}

#endif // SINTER_GRAPH_TENSOR_OPS
