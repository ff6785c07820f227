#ifndef SINTER_GRAPH_GENERIC_OPS
#define SINTER_GRAPH_GENERIC_OPS

// Ops of the generic tier: scalar functions named by a table (ScalarFunctions.h) instead of
// one op each, reductions of any kind over any axes, the normalizations that exports keep as
// one node, and the fusion group the graph phase forms for the generated kernels.

def Graph_UnaryFnOp : Graph_Op<"unary"> {
  let summary = "An elementwise scalar function of one operand, named by `fn`";
  let description = [{
    `fn` names an entry of the scalar function table (ScalarFunctions.h: tanh, erf, relu,
    gelu, floor, not, is_inf, ...); `alpha` and `beta` are its parameters where it has any
    (LeakyRelu's slope, HardSigmoid's alpha and beta, IsInf's detect flags). The result has
    the input's shape, and its element type (i1 for predicates).
  }];
  let arguments = (ins Graph_Tensor:$input, StrAttr:$fn,
                       DefaultValuedAttr<F32Attr, "0.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "0.0">:$beta);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$fn $input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_BinaryFnOp : Graph_Op<"binary"> {
  let summary = "An elementwise scalar function of two broadcasting operands, named by `fn`";
  let description = [{
    `fn` names a two-operand entry of the scalar function table (min, mod, fmod, less,
    greater, greater_or_equal, or, xor, bitshift, ...). Operands have one element type and
    numpy-broadcast to the result shape; comparisons give i1.
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs, StrAttr:$fn);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$fn $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ReduceOp : Graph_Op<"reduce"> {
  let summary = "A reduction of kind `kind` over `axes` (sorted, unique)";
  let description = [{
    `kind` is one of sum, mean, max, min, prod, l1, l2, sum_square, log_sum_exp. Floating
    point reductions accumulate in f32 (f64 for f64); integer ones in i64. The result keeps
    the reduced dimensions as 1 with `keepdims`. Empty `axes` reduces nothing (identity, with
    the kind's elementwise part applied: abs for l1, square for sum_square, ...).
  }];
  let arguments = (ins Graph_Tensor:$input, StrAttr:$kind, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$kind $input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ArgReduceOp : Graph_Op<"arg_reduce"> {
  let summary = "ONNX ArgMax / ArgMin: the i64 index of the largest or smallest entry along `axis`";
  let arguments = (ins Graph_Tensor:$input, StrAttr:$kind, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs StaticShapeTensorOf<[I64]>:$output);
  let assemblyFormat = "$kind $input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_CumulativeOp : Graph_Op<"cumulative"> {
  let summary = "ONNX CumSum and CumProd: running sums (`kind` \"sum\") or products (\"prod\") along `axis`, inclusive or exclusive, forward or reversed";
  let arguments = (ins Graph_Tensor:$input, StrAttr:$kind, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_LogSoftmaxOp : Graph_Op<"log_softmax"> {
  let summary = "log(softmax(x)) along one `axis`, computed as x - max - log(sum(exp(x - max)))";
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_LayerNormalizationOp : Graph_Op<"layer_normalization"> {
  let summary = "ONNX LayerNormalization over dims [axis, rank): (x - mean) / sqrt(var + eps) * scale + bias";
  let description = [{
    Statistics in f32 (ONNX stash_type 1). `scale` and the optional `bias` broadcast
    unidirectionally to the normalized dimensions; the result has the input's type.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                       Optional<Graph_FloatTensor>:$bias, I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$input `,` $scale (`bias` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_GatherElementsOp : Graph_Op<"gather_elements"> {
  let summary = "ONNX GatherElements: out[i] = input[i with axis replaced by indices[i]]";
  let description = [{
    `indices` has the input's rank; the result has the indices' shape and the input's
    element type. Negative indices count from the end of the axis.
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IntTensor:$indices, I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_PadOp : Graph_Op<"pad"> {
  let summary = "ONNX Pad: widen (or, with negative amounts, crop) every dimension";
  let description = [{
    Dimension d of the result is input.shape[d] + before[d] + after[d]. `mode` is constant
    (new entries are `value`), reflect (mirrored without the edge), edge (the edge repeated)
    or wrap (the other end's entries).
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$before, DenseI64ArrayAttr:$after,
                       StrAttr:$mode, DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$mode $input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_FusionGroupOp : Graph_Op<"fusion_group", [
    SingleBlockImplicitTerminator<"YieldOp">, IsolatedFromAbove]> {
  let summary = "Ops the generic tier computes in one generated kernel";
  let description = [{
    Formed by the graph phase (sinter-form-fusion-groups): elementwise, broadcast and
    data-movement ops plus at most one row operation (a reduction, softmax or
    normalization), whose consumers inside the group read it at its own shape. The region's
    arguments are the group's operands, in order; `sinter.yield` gives its results. Each
    group becomes one launch, except one marked `in_consumer_prologue`
    (sinter-fuse-residual-norm-prologue): a post-norm and residual add,
    residual + cast(rms_normalization(x, f32 weight)), that the linear reading it recomputes
    in its prologue (`residualNormParts`); that linear's launch writes the group's result
    for the group's other users.
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, UnitAttr:$in_consumer_prologue);
  let results = (outs Variadic<Graph_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`(` $inputs `)` attr-dict-with-keyword `:` functional-type($inputs, $outputs) $body";
  let extraClassDeclaration = [{
    /// Whether the group is exactly a post-norm and residual add over the last axis:
    /// one result, residual + cast(rms_normalization(x, weight)) with a bf16 x and
    /// residual of the result's type and an f32 weight (either add order; the kernel's
    /// RESIDUAL_RMS_NORM_FP32_WEIGHT reads bf16). Sets the group's
    /// inputs that are x, the weight and the residual, and the norm's epsilon.
    bool residualNormParts(mlir::Value &x, mlir::Value &weight, mlir::Value &residual,
                           float &epsilon);
  }];
  let hasVerifier = 1;
}

def Graph_YieldOp : Graph_Op<"yield", [Terminator]> {
  let summary = "The results of a fusion group (or of a generic launch's body)";
  let arguments = (ins Variadic<Graph_Tensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, mlir::ValueRange()); }]>];
}

#endif // SINTER_GRAPH_GENERIC_OPS
