#ifndef SINTER_PASSES
#define SINTER_PASSES

include "mlir/Pass/PassBase.td"

def SinterFoldConstants : Pass<"sinter-fold-constants", "mlir::ModuleOp"> {
  let summary = "Evaluate ops whose operands are all constants at compile time";
  let description = [{
    Folds shape arithmetic, masks, tables and transposes/reshapes of initializers into
    `sinter.constant`s, and erases ops left without users.
  }];
}

def SinterNarrowFloats : Pass<"sinter-narrow-floats", "mlir::ModuleOp"> {
  let summary = "Compute an fp32 model in bf16 or f16: weights, activations, float I/O and caches";
  let description = [{
    The model's data path is every value computed from a floating-point function argument, a
    table lookup (gather) in a floating-point constant, or a matrix product with a constant
    weight of rank 2 or more. Each fp32 value on it becomes `to` (bf16 or f16), its fp32
    constant operands are converted once (finite values saturate at the type's largest finite
    value, so an additive mask of the fp32 minimum stays finite), and the function's fp32
    arguments and results change type with it. fp32 values off the data path (RoPE angles,
    masks, other position and index math) stay fp32 and are cast where the data path reads
    them, as a Hugging Face model in that dtype computes them. `--dtype` runs it after the
    raising passes (which match the fp32 decompositions: a norm's or softmax's statistics stay
    in fp32 inside the fused op) and the position tables, before the launch-shaping fusions.
  }];
  let options = [
    Option<"to", "to", "std::string", "\"bf16\"", "The narrow type: bf16 or f16">
  ];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterExpandGemm : Pass<"sinter-expand-gemm", "mlir::ModuleOp"> {
  let summary = "Write ONNX Gemm as transposes, a matmul, a scale and a bias add";
  let description = [{
    `gemm(A, B, C) {alpha, beta, trans_a, trans_b}` becomes
    `matmul(op(A), op(B)) [* alpha] [+ C [* beta]]`, so that the linear formation, constant
    folding and the generic tier see the primitives they handle.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFormLinear : Pass<"sinter-form-linear", "mlir::ModuleOp"> {
  let summary = "Turn matmuls with a constant 2-D right-hand side into sinter.linear, fusing bias adds";
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterMergeLora : Pass<"sinter-merge-lora", "mlir::ModuleOp"> {
  let summary = "Merge PEFT LoRA branches into their base linear at compile time";
  let description = [{
    Rewrites `linear(x, W, b) + s * linear(linear(x, A), B)` (either operand order, scale on
    either side or absent) into `linear(x, W + s * A @ B, b)`, computed in fp32.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFormPastCache : Pass<"sinter-form-past-cache", "mlir::ModuleOp"> {
  let summary = "Turn a with-past export's concatenated caches into in-place context state";
  let description = [{
    Runs on the functions marked `sinter.cache_length = L` (the prompt and decode-step
    entries `--cache-length` imports from one with-past export). A function result
    `concat(past, new) {axis = 2}` of a [batch, heads, length, head_dim] argument `past` is a
    cache: `past` becomes the whole cache (length L) and the result
    `sinter.cache_write(past, new, positions)`, both marked `sinter.state = "<past's
    name>"`. In the prompt (past length 0) the positions are 0..S-1 and the other readers of
    the concatenation (the attention) read `new`; in the decode step (past length L - 1, one
    new position) the position is a new i64 [1] argument `cache_position` and the readers
    read the written cache, in which the attention mask (the model's `attention_mask` over
    all L positions) hides the slots not yet written. The shape of `past` that other ops read
    becomes a constant. A marked function without such a result, a past length that is
    neither, or a cache read by anything else is an error.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFoldEmptyTensors : Pass<"sinter-fold-empty-tensors", "mlir::ModuleOp"> {
  let summary = "Fold values with no elements (a dimension of 0) into constants";
  let description = [{
    A pure op whose results all hold no elements becomes empty constants; a reduction of an
    empty input to a non-empty result becomes the splat of the reduction's identity (0 for
    sum, l1, l2 and sum_square, 1 for prod, -inf / the lowest integer / false for max,
    +inf / the highest integer / true for min, -inf for log_sum_exp, NaN for mean); a matmul
    over K = 0 becomes zeros; a concat drops its empty operands. Runs first, so that no later
    pass, launch or buffer sees a zero-sized tensor: what still reads one (an empty input of an
    op other than these) is refused by the lowering with the node named.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFuseLinearEpilogue : Pass<"sinter-fuse-linear-epilogue", "mlir::ModuleOp"> {
  let summary = "Fold scalar scales into linear weights and residual adds into the linear";
  let description = [{
    `linear(x, W) * s` with a constant scalar s becomes `linear(x, s * W)`; `linear(...) + r`
    with r of the result's shape becomes `linear(..., residual r)`, added in the GEMM
    epilogue instead of a separate launch. Runs after LoRA merging, whose pattern it would
    otherwise hide.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFormCacheState : Pass<"sinter-form-cache-state", "mlir::ModuleOp"> {
  let summary = "Turn exported KV-cache updates into in-place writes of context state";
  let description = [{
    A function result computed as `transpose(scatter_nd(transpose(arg, P), indices [N, 1],
    updates), inverse(P))` (or the scatter_nd alone) from a function argument of the same
    type is a cache update: it becomes `sinter.cache_write(arg, rows, positions) {axis}`
    with rows in the argument's layout, every reader of the result reads the write, and the
    argument and the result are marked `sinter.state = "<argument name>"`. The lowering then
    keeps that argument/result pair in the context's state instead of the I/O, written in
    place. An argument that is still read besides its update is an error.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterTabulatePosition : Pass<"sinter-tabulate-position", "mlir::ModuleOp"> {
  let summary = "Precompute values that depend only on the cache position as tables";
  let description = [{
    The positions operand of a `sinter.cache_write` that is a [1] function argument ranges
    over [0, L) with L the cache length; an i64 [batch, seq] argument named `position_ids`
    (Hugging Face's) over [0, P) with P the longest token axis of the function's [batch, N]
    i64 arguments (the attention mask's) or cache length. Every floating-point value computed
    from such an argument and constants alone (RoPE cos/sin) and read by anything else is
    evaluated with the ops' folders for each position at compile time and replaced by
    `reshape(gather(table [P, n], position))`: at run time it is a row lookup per position
    (out-of-range positions read a clamped row). A value whose elements do not depend on
    their own position alone (checked by evaluating it once more at reversed positions) or
    above max-table-elements table entries is left as it is.
  }];
  let options = [
    Option<"maxTableElements", "max-table-elements", "int64_t", "1 << 24",
           "Largest table (L * elements per position) to build">
  ];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterRaiseRmsNorm : Pass<"sinter-raise-rms-norm", "mlir::ModuleOp"> {
  let summary = "Raise the decomposed RMSNorm of the opset-18 export to sinter.rms_normalization";
  let description = [{
    `[cast<T>](xf * reciprocal(sqrt(reduce_mean(xf^2, last) + eps))) * w`, with xf the f32
    input (`cast<f32>(x)`, or x itself when it is f32), w a constant of D elements, either
    operand order of each commutative op and the reciprocal also as `1 / sqrt(...)` (the
    TorchScript exporter's, optimum's), becomes `rms_normalization(x, w) {axis = last,
    epsilon = eps}`: the op the opset-23 export imports to, so both forms meet.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterRaiseRope : Pass<"sinter-raise-rope", "mlir::ModuleOp"> {
  let summary = "Raise x * cos + rotate_half(x) * sin to sinter.rope";
  let description = [{
    `x * cos + concat(-x[..., D/2:], x[..., :D/2]) * sin` over the last axis of a 4-D x,
    with constant cos/sin tables and either operand order, becomes `rope(x, cos, sin)`; so
    does the same computed in fp32 on x cast up, with fp32 tables, cast back once (OLMo 2).
    `concat(rope(x[..., :R]), x[..., R:])` becomes a rope of x with R-column tables (partial
    rotary: GPT-NeoX, Phi).
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterRaiseSiluMul : Pass<"sinter-raise-silu-mul", "mlir::ModuleOp"> {
  let summary = "Raise (g * sigmoid(g)) * u to sinter.silu_mul";
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterRaiseGeluTanh : Pass<"sinter-raise-gelu-tanh", "mlir::ModuleOp"> {
  let summary = "Raise the tanh approximation of GeLU to sinter.unary \"gelu_tanh\"";
  let description = [{
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` as exporters decompose it (any
    association and order of the products, x^3 as Pow(x, 3) or x * x * x, constants within
    2^-7 of their values as a 16-bit export rounds them), all of one float type, becomes
    `unary "gelu_tanh"(x)`: one function evaluated in f32 from the exact constants, as
    PyTorch's gelu(approximate="tanh") is, instead of nine rounded steps. The exact form,
    `0.5 * x * (1 + erf(x / sqrt(2)))` (or `x * (1 / sqrt(2))` inside the erf), becomes
    `unary "gelu"(x)` the same way (PyTorch's gelu).
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterRaiseAttention : Pass<"sinter-raise-attention", "mlir::ModuleOp"> {
  let summary = "Raise causal grouped-query attention to sinter.fused_attention";
  let description = [{
    Matches the opset-18 decomposition `matmul([nan guard] softmax(q*s1 @ kT*s2 [+ mask]),
    vE)` (the softmax possibly in fp32 between a widening and a narrowing cast, as eager
    exports take it) and the opset-23 `attention(q, kE, vE [, mask])`, where kE/vE are the
    grouped-query expansions (unsqueeze, expand, reshape; kT also transposed) of
    [B, Hkv, S, D] k and v. The mask is recognized by evaluating its backward slice with the ops' folders: it must
    be computed from constants and at most one [B, S] function argument, select the causal
    (or full) pattern when the argument is all ones, and mask exactly key j when entry j is
    zero. The result is `fused_attention(q, k, v [key_mask arg]) {scale, causal}` on the
    unexpanded k and v, when an attention kernel takes the shape on the module's target
    (`sinter.target`: a 16-bit head the tensor-core kernel tiles, or a head's keys within the
    target's shared memory per block). One query per head over caches written at one position
    in the same step (a decode step) becomes `decode_attention(q, k, v, position [key_mask
    arg])`: without key_mask when the mask attends exactly the keys up to the position, with
    it when the mask attends exactly the keys a [B, L] integer argument keeps (a with-past
    export's attention_mask). Anything else is left unchanged.

    With `raise-softcap`, scores soft-capped as `cap * tanh(scores / cap)` (Gemma 2's eager
    export; the opset-23 `softcap` attribute) become `decode_attention {softcap = cap}` in a
    decode step and `fused_attention {softcap = cap}` in a prompt flash_attention takes (bf16,
    its head sizes, its tiles in the target's shared memory); others stay primitives. On by
    default (the capped kernels pass test/gpu/attention_decode_test and
    test/gpu/flash_attention_test); `raise-softcap=false` leaves capped attention to the
    primitives.
  }];
  let options = [
    Option<"raiseSoftcap", "raise-softcap", "bool", "true",
           "Raise soft-capped attention to decode_attention / fused_attention {softcap}">
  ];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterDeinterleaveQkv : Pass<"sinter-deinterleave-qkv", "mlir::ModuleOp"> {
  let summary = "Re-lay out a per-head interleaved QKV projection as q | k | v column blocks";
  let description = [{
    A linear with a constant weight (and a constant bias or none), read only through
    `reshape [B, S, H, 3 D] -> transpose [0, 2, 1, 3]` and three last-axis slices
    `[0, D)`, `[D, 2 D)`, `[2 D, 3 D)` (GPT-NeoX's query_key_value: each head's q, k and v
    side by side) gets its weight and bias columns permuted at compile time to all q heads,
    then all k, then all v, each part read as `slice -> reshape [B, S, H, D] -> transpose`:
    the layout of the other families' fused projections, which the attention kernels read
    in place (sinter-fuse-qkv-heads). The values computed are the same.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterMergeParallelLinears : Pass<"sinter-merge-parallel-linears", "mlir::ModuleOp"> {
  let summary = "Concatenate the weights of linears that read the same input into one linear";
  let description = [{
    Sibling linears `linear(x, W_i)` with constant weights, no residual or normalization and a
    constant bias or none become one `linear(x, concat_i W_i) bias concat_i b_i` (zeros for a
    sibling without a bias; no bias when none has one) followed by a `sinter.slice` of each
    sibling's columns: one pass over x and one launch instead of several (Q/K/V, Qwen2's
    biased Q/K/V, gate/up). A linear whose only user is a GeLU keeps its own launch, with the
    activation as its epilogue (a parallel block's MLP input projection beside q, k and v).
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFuseLinearPrologue : Pass<"sinter-fuse-linear-prologue", "mlir::ModuleOp"> {
  let summary = "Fold an RMS or layer normalization into the linears that consume it";
  let description = [{
    `linear(rms_normalization(x, w))` over the last axis becomes `linear(x, norm w)`: the
    kernel normalizes its input rows itself instead of reading a normalized copy. So does
    `linear(cast(rms_normalization(x, w)))` of a bf16 or f16 x normalized with an f32 w into
    f32 and cast back to x's type (Gemma's and OLMo 2's RMSNorm, whose weight multiply runs in
    f32): the linear keeps the f32 weight and scales with one rounding.
    `linear(layer_normalization(x, w, b))` over the last axis alone, with constant [K] w and
    b (zeros when absent), becomes `linear(x, norm w, norm_bias b)`: a LayerNorm prologue
    (GPT-2's ln_1, ln_2 and ln_f); where the rows are too many for linear_small_m the lowering
    runs a generated LayerNorm before the library GEMM, as the unfused graph did.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFuseLinearActivation : Pass<"sinter-fuse-linear-activation", "mlir::ModuleOp"> {
  let summary = "Fold an MLP's activation into the linear that feeds it";
  let description = [{
    `unary "gelu_tanh"(linear(...))` (or `"gelu"`, the exact form) of a bf16 linear with a
    constant weight, no residual and no gate, used only by the activation, becomes
    `linear(...) {activation = "gelu_tanh"}` (GPT-2's c_fc and gelu_new, the bias kept;
    GPT-NeoX's exact GeLU alike): linear_small_m's GELU_TANH / GELU epilogue, or a library
    GEMM and one generated launch where the rows are too many for the kernel.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFuseLinearSwiGLU : Pass<"sinter-fuse-linear-swiglu", "mlir::ModuleOp"> {
  let summary = "Fold a gated MLP's gate (SwiGLU or GeGLU) into its gate|up linear";
  let description = [{
    `silu_mul(slice(p, gate columns), slice(p, up columns))`, or
    `unary "gelu_tanh"(slice(p, gate columns)) * slice(p, up columns)`, of a bf16 linear p
    with a constant weight, whose only users are the two last-axis slices of N/2 columns each,
    becomes `linear(...) {gate_up_columns = [gate start, up start]}` (with
    `gate_activation = "gelu_tanh"` for GeGLU) with the gate's result. The fusion is decided
    here, for the linears the bf16 lowering takes (no bias or residual): linear_small_m's
    SILU_MUL_PAIRS / GELU_TANH_MUL_PAIRS epilogue, or a library GEMM on the gate|up columns
    and one gate_mul launch where the rows are too many for the kernel.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFuseAttentionHeadMerge : Pass<"sinter-fuse-attention-head-merge", "mlir::ModuleOp"> {
  let summary = "Fold the transpose and reshape that merge attention heads into the attention";
  let description = [{
    `reshape(transpose(attention, [0, 2, 1, 3]))` of a `sinter.fused_attention` or
    `sinter.decode_attention` whose result and transpose have no other reader becomes the
    attention with `merged_heads` and the reshape's type: the attention kernels write each
    query row's heads side by side. Runs after sinter-expand-attention, on the attentions it
    left for the kernels.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFuseDecodeQkNorm : Pass<"sinter-fuse-decode-qk-norm", "mlir::ModuleOp"> {
  let summary = "Let the decode attention apply per-head q/k norms and RoPE (no qk_norm_rope launch)";
  let description = [{
    Marks a `sinter.split_qkv_heads` with q/k norms of one head each (weights [D], bf16 or
    f32) and a rotation of the whole head (bf16 or f32 tables, one row per sequence) as
    `norm_in_attention` when its one-token bf16 q is read by one `sinter.decode_attention`
    alone and its k only by a kernel cache write whose result that attention reads: the
    attention_decode kernel then normalizes and rotates its query heads and the new key (and
    writes that key into the cache) instead of a qk_norm_rope launch between the projection and
    the attention (Qwen3's decode step). Norms over the whole projection (OLMo 2), partial
    rotation, prompts and anything else keep the qk_norm_rope launch. Runs after
    sinter-fuse-qkv-heads.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFuseQkvHeads : Pass<"sinter-fuse-qkv-heads", "mlir::ModuleOp"> {
  let summary = "Fold the head split (and RoPE) of a fused QKV projection into one split_qkv_heads";
  let description = [{
    A bf16 `sinter.linear` (constant weight, a constant bias or none; no residual or SwiGLU)
    whose every user is one of three chains `slice (last axis) -> reshape [B, S, H, D] ->
    transpose [0, 2, 1, 3] (-> rope)` feeding the q, k and v operands of one
    `sinter.fused_attention` or `sinter.decode_attention` (k and v of a decode attention through
    the cache writes of its step), in q | k | v column order covering every column, with q and k
    rotated by the same tables and v not (or no rotation at all), becomes the linear and one
    `sinter.split_qkv_heads`. The q and k chains may also hold an `rms_normalization` over the
    last axis with a 1-D weight (both, one epsilon; v none) after the slice (a norm over the
    projection, OLMo 2) or after the reshape (a norm per head, Qwen3): the split then takes
    their weights. The linear kernel then writes the rotated q | k | v rows (its RoPE
    epilogue; with norms a qk_norm_rope launch after it normalizes and rotates), and the attention and cache-write kernels read each head at its column offset, so
    the split costs no launch. A table computed at run time that the sequences of a batch share
    (a decode step's lookup at the one cache position) is broadcast to a row per token first
    (`sinter.expand` after the lookup, once per shape), as the projection kernels read one row
    per token. Anything else is left alone. Runs after sinter-expand-attention, on the
    attentions it left for the kernels.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterKeepLastLogits : Pass<"sinter-keep-last-logits", "mlir::ModuleOp"> {
  let summary = "Compute a prompt's logits at its last position only (--last-logits)";
  let description = [{
    `sinter compile --last-logits`. In every function with a result named `logits` (float
    [batch, seq, vocab], seq > 1), the final `sinter.linear` reads only the last position of
    its [batch, seq, hidden] input (a `sinter.slice` before it; its residual too), so the
    result becomes [batch, 1, vocab], as do the elementwise ops between the linear and the
    result (a logit soft-cap, whose other operands must be constants that broadcast). The
    linear's normalization prologue is row-wise, so the slice goes before it. Functions
    whose logits have one position are left alone. Fails when no function has a `logits`
    result, or when one is not computed that way. Runs after the linear prologues are fused.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect", "::mlir::func::FuncDialect"];
}

def SinterExpandAttention : Pass<"sinter-expand-attention", "mlir::ModuleOp"> {
  let summary = "Write attention that no kernel takes as matmul, mask, softmax and matmul";
  let description = [{
    Runs after the raising and linear-merging passes. A `sinter.attention` that was not
    raised, and a `sinter.fused_attention` the attention kernels cannot take (not bf16,
    operands that are not the q | k | v head split sinter-fuse-qkv-heads folds
    (QkvHeadChains.h: one bf16 projection without bias, residual or SwiGLU), a non-i64 key
    mask, an output not merged back to [B, S, heads * D]; a batch of sequences with a head
    size flash_attention does not tile or under `activations=f32`, whose fp32 projection
    output the tensor-core kernel does not read), become
    `matmul(softmax(q @ kE^T * scale [masked] [causal]), vE)` with kE and vE the grouped-query
    expansions of k and v (3-D operands are split into heads first): the products go to the
    library GEMM, the rest to generated kernels. A query row whose keys are all masked gives
    zeros, as in the kernels. A `sinter.decode_attention` the decode kernel cannot take (not
    bf16, batch other than 1, a cache other than [1, heads, length, head_dim] written along
    the length, q and the new rows not the head split of one fused QKV projection) becomes
    the same over the whole cache, with keys after the position masked.
  }];
  let options = [
    Option<"activations", "activations", "std::string", "\"model\"",
           "the activations the launch lowering will use (model or f32), as "
           "sinter-lower-to-launch's option of that name">
  ];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFormFusionGroups : Pass<"sinter-form-fusion-groups", "mlir::ModuleOp"> {
  let summary = "Partition what no pattern claimed into fusion groups for generated kernels";
  let description = [{
    Runs last in the graph phase. Every op the generic tier computes (elementwise,
    broadcast, data movement, reductions, softmax, normalizations) that no pattern kernel
    takes joins a `sinter.fusion_group`: walking from the last op back, a producer joins its
    consumers' group when all its users are in that group and the group keeps at most one
    row operation, read by the group only at its own shape. Ops around the pattern tier's
    fused ops (the slices, head reshapes and transposes, RoPE and SwiGLU that the linear and
    attention kernels absorb) are left alone, as are views (reshapes) of materialized values;
    but a slice, reshape or transpose of a pattern op's result that only generic ops read
    (Gemma's gate and up slices before its GeLU) joins their group, which reads it in place,
    and so does an RMS norm the rms_norm kernel would take when only generic ops read it (a
    post-norm before its residual add). Splat and small constants move into the groups that
    read them.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterFuseResidualNormPrologue
    : Pass<"sinter-fuse-residual-norm-prologue", "mlir::ModuleOp"> {
  let summary = "Recompute a post-norm and residual add in the next linear's prologue";
  let description = [{
    Runs after the fusion groups. A group that is exactly a post-norm and residual add,
    s = residual + cast(rms_normalization(x, w)) over the last axis with a constant f32 w
    (Gemma 2's post_attention_layernorm and post_feedforward_layernorm with their residual
    adds), whose first user is a bf16 linear normalizing s with its own constant f32 norm
    weight and the same epsilon (the next pre-norm: pre_feedforward_layernorm, the next
    layer's input_layernorm, the final norm of the LM head) is marked
    `in_consumer_prologue` when linear_small_m takes such a prologue at its rows and K on the
    target. The lowering then gives no launch to the group: the linear's kernel
    (RESIDUAL_RMS_NORM_FP32_WEIGHT) recomputes s in every block from x, the residual and w,
    and its block 0 writes s for the group's other users, which must all come after the
    linear. Where the lowering still picks another path for the linear (fp32 activations,
    quantized weights it cannot take, a library GEMM) the group becomes its own launch
    right before the linear's. A launch boundary fewer a layer for each post-norm.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect"];
}

def SinterAppendSampler : Pass<"sinter-append-sampler", "mlir::ModuleOp"> {
  let summary = "Give every language-model entry a next_token output picked on the device";
  let description = [{
    `sinter compile --sample`. Every function with a result named `logits` (float
    [batch, seq, vocab]) and an argument named `input_ids` (i64 [batch, seq]) gets one more
    result, `next_token` (i64 [batch, 1]), computed by a `sinter.sample_tokens` of the two:
    the argmax or a seeded draw of the last position's logits under the context's sampling
    parameters. Fails when no function qualifies, when a qualifying function already has a
    `next_token` result, or when the logits or input_ids have another type or shape. Runs
    after the fusion groups: nothing else in the graph phase has to know the sampler.
  }];
  let dependentDialects = ["::sinter::graph::GraphDialect", "::mlir::func::FuncDialect"];
}

def SinterLowerToLaunch : Pass<"sinter-lower-to-launch", "mlir::ModuleOp"> {
  let summary = "Lower the graph of fused ops to launches over buffers";
  let description = [{
    Each function becomes a launch program: tensor arguments and results become memref
    arguments (results written in place), constants become `launch.weight`s, intermediates
    `launch.alloc`s. A `sinter.linear` becomes a `launch.gemm` (fp32, or many rows) or a
    `linear_small_m` kernel (bf16/f16 with at most 16 rows) whose prologue (RMS norm) and
    epilogue (residual, bias, SwiGLU pairs, RoPE pairs) absorb the ops around it; embedding
    gathers, fused attention and RMS norms become kernels. Weights are re-laid out for the
    kernels at compile time. With weight-dtype=fp8 the weights of bf16 linears are quantized
    to e4m3 with one fp32 scale per output row (`wN.fp8`, `wN.fp8_scale`): linear_small_m
    reads them as they are, and a linear past its rows multiplies a bf16 copy of the
    dequantized weights, so that every entry computes with the same weights (weights it takes
    at no row count stay bf16). With weight-dtype=int4 they are quantized to 4-bit integers
    with one fp32 scale per output row and group of 128 k (`wN.int4` packed two to a byte,
    `wN.int4_scale`), symmetric, the same way; a linear whose K is not a multiple of 128 keeps
    its bf16 weights. Every kernel configuration (tilings, grids, which attention kernel) is
    chosen for the module's target (`sinter.target`: SM count, shared memory per block and
    per SM; the H200 without one). Fails naming any op that has no lowering.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"strict\"",
           "fp32 matrix math: strict (fp32 FMA) or tf32 (tensor cores)">,
    Option<"activations", "activations", "std::string", "\"model\"",
           "bf16 activations between launches and bf16 outputs: model (as the graph "
           "rounds them) or f32 (kept in fp32; weights and state keep their types)">,
    Option<"weightDtype", "weight-dtype", "std::string", "\"model\"",
           "constant weights of bf16 linears: model (as the graph holds them), bf16, fp8 (e4m3 "
           "with one fp32 scale per output row) or int4 (symmetric 4-bit integers with one "
           "fp32 scale per output row and group of 128 k); fp8 and int4 need bf16 "
           "activations">
  ];
  // The graph dialect too: generated kernels' bodies hold graph ops the lowering creates.
  let dependentDialects = ["::sinter::launch::LaunchDialect", "::mlir::memref::MemRefDialect",
                           "::sinter::graph::GraphDialect"];
}

def LaunchPlanHandoffs : Pass<"launch-plan-handoffs", "mlir::ModuleOp"> {
  let summary = "Pair decode MLP up and down launches that hand the activation over in state";
  let description = [{
    A `linear_small_m` launch with an MLP activation epilogue (SILU_MUL_PAIRS or
    GELU_TANH_MUL_PAIRS: gate/up; GELU_TANH or GELU: an up projection with its GeLU, any
    prologue) followed directly
    (only buffer definitions between) by a `linear_small_m` launch that reads its output as x,
    when nothing else reads that buffer, both compute in bf16, and the second can wait on the
    first's data (`linear_small_m_handoff_consumer_supported`: no prologue, one decode row,
    x staged by plain loads), becomes a handoff pair (LinearHandoff in launch_params.h): the
    producer writes x and a block count into the function's state buffers
    `<function>.linear_handoff.<i>.x` and `.count` instead of an arena buffer, and the
    consumer spins on the count instead of waiting for the producer's whole grid, then zeroes
    the next pair's buffers (the last consumer the first pair's), so a function needs at
    least two pairs; with fewer it keeps the plain launches. The new state is placed after
    the function's other state, and every state's offset is placed again. Runs after
    sinter-lower-to-launch, before arena planning.
  }];
}

def LaunchCheckTarget : Pass<"launch-check-target", "mlir::ModuleOp"> {
  let summary = "Check every launch against the target description's limits";
  let description = [{
    Holds the launches against the module's target (`sinter.target`, CompileTarget.h;
    the H200 without one): the architecture (the kernels use thread-block clusters and
    programmatic dependent launch, sm_90 and newer) and each launch's dynamic shared memory
    against the target's per-block limit. The kernel configurations are chosen for the same
    target, so this catches a launch whose size no configuration function bounds (a generic
    kernel's row buffer); one that does not fit is an error naming the launch, what it needs
    and the target's limit, so the compile stops instead of the launch failing at run time.
  }];
}

def LaunchPlanArena : Pass<"launch-plan-arena", "mlir::ModuleOp"> {
  let summary = "Give every launch.alloc an arena offset from buffer liveness";
  let description = [{
    Buffers whose live ranges (first to last launch touching them) do not overlap may share
    bytes. Offsets are aligned to 256 bytes; the arena size is written to the module as
    `launch.arena_bytes`.
  }];
}

#endif // SINTER_PASSES
