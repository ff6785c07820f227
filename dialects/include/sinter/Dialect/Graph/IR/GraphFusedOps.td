#ifndef SINTER_GRAPH_FUSED_OPS
#define SINTER_GRAPH_FUSED_OPS

// Ops the graph phase forms from primitives.

def Graph_LinearOp : Graph_Op<"linear", [AttrSizedOperandSegments]> {
  let summary = "y = prologue(x) @ weight (+ bias) (+ residual): a matrix product with a constant weight";
  let description = [{
    `x` has shape [..., K]; leading dimensions are flattened into M rows. `weight` is
    [K, N] row-major (the ONNX MatMul right-hand side), `bias` is [N], `residual` has the
    result's shape and is added in the epilogue. With `norm_weight` ([K]) the input is first
    RMS-normalized over K with `norm_epsilon` and scaled by it, recomputed by the kernel
    instead of written out. A weight of the input's type scales the normalized input rounded
    to that type (Llama: weight * x.to(dtype)); an f32 weight of a 16-bit input scales it in
    f32 with one rounding (Gemma's (1 + w), OLMo 2: (weight * x).to(dtype)). With `norm_bias`
    ([K], the norm weight's type) the prologue is a LayerNorm instead:
    (x - mean) / sqrt(var + norm_epsilon) * norm_weight + norm_bias, the statistics and the
    affine map in f32, rounded once to the input's type (sinter.layer_normalization over the
    last axis).

    With `gate_up_columns = [g, u]` (a gated MLP, set by sinter-fuse-linear-swiglu; no bias
    or residual) the product p = x @ weight is not the result: the result is
    act(p[..., g : g + N/2]) * p[..., u : u + N/2], of last dimension N/2, computed in the
    result's type as graph.silu_mul does (act rounded, then the product rounded). act is
    `gate_activation`: "silu" (SwiGLU, the default) or "gelu_tanh" (GeGLU).

    With `activation = "gelu_tanh"` or `"gelu"` (no gate, no residual) the result is that
    function of the product (+ bias) rounded to the result's type, computed in f32 and
    rounded again, as sinter.unary of that name on that product does (GPT-2's c_fc and
    gelu_new; GPT-NeoX's dense_h_to_4h and exact GeLU; set by sinter-fuse-linear-activation).
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$weight,
                       Optional<Graph_Tensor>:$bias, Optional<Graph_Tensor>:$residual,
                       Optional<Graph_Tensor>:$norm_weight,
                       Optional<Graph_Tensor>:$norm_bias,
                       OptionalAttr<F32Attr>:$norm_epsilon,
                       OptionalAttr<DenseI64ArrayAttr>:$gate_up_columns,
                       OptionalAttr<StrAttr>:$gate_activation,
                       OptionalAttr<StrAttr>:$activation);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? (`residual` $residual^)? (`norm` $norm_weight^)?
    (`norm_bias` $norm_bias^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "mlir::Type":$type, "mlir::Value":$input, "mlir::Value":$weight,
                   "mlir::Value":$bias, "mlir::Value":$residual), [{
      build($_builder, $_state, type, input, weight, bias, residual, mlir::Value(),
            mlir::Value(), mlir::FloatAttr(), mlir::DenseI64ArrayAttr(), mlir::StringAttr(),
            mlir::StringAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// Whether the normalization prologue scales in f32 with one rounding (an f32 norm
    /// weight of a 16-bit input).
    bool normScalesInF32();
    /// Whether the prologue is a LayerNorm (centered, with a shift) rather than an RMSNorm.
    bool normCentered() { return static_cast<bool>(getNormBias()); }
    /// The gate activation of a gated linear ("silu" when unset).
    llvm::StringRef gateActivationName() {
      return getGateActivation() ? *getGateActivation() : llvm::StringRef("silu");
    }
  }];
  let hasVerifier = 1;
}

def Graph_RopeOp : Graph_Op<"rope"> {
  let summary = "Rotary position embedding (GPT-NeoX / Hugging Face Llama layout)";
  let description = [{
    `input` is [B, H, S, D]; `cos` and `sin` broadcast to [B, H, S, R] (typically
    [1, 1, S, R] constants) with R even, at most D: the first R columns of each head rotate
    and the rest pass through (R < D: partial rotary, GPT-NeoX's and Phi's). With
    x1 = x[..., :R/2] and x2 = x[..., R/2:R], output[..., :R] = x[..., :R] * cos +
    concat(-x2, x1) * sin, in the input's element type. With f32 tables on a 16-bit input
    (OLMo 2's export: x and the tables in fp32) the rotation runs in fp32 and is rounded to
    the input's type once.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$cos, Graph_FloatTensor:$sin);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$input `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The rotated columns of each head, R: the tables' last dimension.
    int64_t rotaryDim() {
      return mlir::cast<mlir::RankedTensorType>(getCos().getType()).getShape().back();
    }
  }];
  let hasVerifier = 1;
}

def Graph_SplitQkvHeadsOp : Graph_Op<"split_qkv_heads", [AttrSizedOperandSegments]> {
  let summary = "A fused QKV projection's output split into query, key and value heads";
  let description = [{
    `qkv` is [B, S, (Hq + 2 Hkv) * D], the q | k | v columns of one projection; the results
    are q [B, Hq, S, D], k and v [B, Hkv, S, D]: each column block reshaped to
    [B, S, heads, D] and transposed to [B, heads, S, D]. With `cos` and `sin` (both or
    neither; they broadcast to q's and k's shape) q and k are rotated as sinter.rope does; v
    never is. With `q_norm` and `k_norm` (both or neither, with `norm_epsilon`) q and k are
    RMS-normalized before the rotation, as sinter.rms_normalization over the last axis does:
    a weight of D elements normalizes each head (Qwen3's q_norm / k_norm), one of all the
    heads' columns (Hq * D for q, Hkv * D for k) the whole projection (OLMo 2). The weights
    have the heads' element type or are both f32 (the norm in fp32, rounded once to the
    heads' type, as OLMo 2's RMSNorm and its cast back are). Formed by
    sinter-fuse-qkv-heads for the attention kernels: the projection's kernel writes the
    rotated columns (with norms, a qk_norm_rope launch after it normalizes and rotates them in
    place), and the attention and cache-write kernels read each head in place at its column
    offset, so the split itself is no launch. With `norm_in_attention` (set by
    sinter-fuse-decode-qk-norm: per-head norms and whole-head rotation, q read by one decode
    attention and k only written into the cache it reads) the meaning is the same, but the
    decode attention kernel normalizes and rotates q and the new key itself: the projection's
    output keeps the raw heads and no qk_norm_rope launch runs.
  }];
  let arguments = (ins Graph_FloatTensor:$qkv, Optional<Graph_FloatTensor>:$cos,
                       Optional<Graph_FloatTensor>:$sin, Optional<Graph_FloatTensor>:$q_norm,
                       Optional<Graph_FloatTensor>:$k_norm, OptionalAttr<F32Attr>:$norm_epsilon,
                       UnitAttr:$norm_in_attention);
  let results = (outs Graph_FloatTensor:$q, Graph_FloatTensor:$k, Graph_FloatTensor:$v);
  let assemblyFormat = [{
    $qkv (`rope` `(` $cos^ `,` $sin `)`)? (`norm` `(` $q_norm^ `,` $k_norm `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The first column of result `index` (0 q, 1 k, 2 v) in a row of `qkv`.
    int64_t columnOffset(unsigned index);
    /// Whether q and k are rotated.
    bool hasRope() { return getCos() != nullptr; }
    /// The rotated columns of each head (the tables' last dimension; 0 without rope).
    int64_t rotaryDim() {
      return hasRope() ? mlir::cast<mlir::RankedTensorType>(getCos().getType()).getShape().back()
                       : 0;
    }
    /// Whether q and k are normalized (before the rotation).
    bool hasNorm() { return getQNorm() != nullptr; }
  }];
  let hasVerifier = 1;
}

def Graph_SiluMulOp : Graph_Op<"silu_mul"> {
  let summary = "SwiGLU gate: silu(gate) * up, elementwise";
  let description = [{ silu(g) = g * sigmoid(g), computed as the export does in its type. }];
  let arguments = (ins Graph_FloatTensor:$gate, Graph_FloatTensor:$up);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$gate `,` $up attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_FusedAttentionOp : Graph_Op<"fused_attention"> {
  let summary = "softmax(q k^T * scale + mask) v with grouped kv heads, causal and key-padding masks";
  let description = [{
    `q` is [B, Hq, S, D]; `k` and `v` are [B, Hkv, S, D] with Hq a multiple of Hkv (query
    head h reads kv head h / (Hq / Hkv)). With `causal`, key j > query i is masked. The
    optional `key_mask` is [B, S] (integer or i1): key j of batch b is masked where it is 0.
    A query row with every key masked gives zeros. Softmax runs in fp32. With `softcap` > 0
    each scaled score s becomes softcap * tanh(s / softcap) before the masks (Gemma 2).

    With `merged_heads` (set by sinter-fuse-attention-head-merge) the result is that output
    transposed to [B, S, Hq, D] and reshaped to the result type, as the kernels write it.
  }];
  let arguments = (ins Graph_FloatTensor:$q, Graph_FloatTensor:$k, Graph_FloatTensor:$v,
                       Optional<Graph_Tensor>:$key_mask, F32Attr:$scale, BoolAttr:$causal,
                       UnitAttr:$merged_heads, DefaultValuedAttr<F32Attr, "0.0">:$softcap);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`key_mask` $key_mask^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_CacheWriteOp : Graph_Op<"cache_write"> {
  let summary = "A copy of the cache `state` with `rows` written at `positions` along `axis`";
  let description = [{
    `state` is a cache (a function argument marked `sinter.state`), `rows` has the state's
    shape except along `axis`, where it has one entry per position; `positions` is a 1-D
    integer tensor. result[..., positions[i], ...] = rows[..., i, ...] along `axis`, every
    other entry is `state`'s. A position outside [0, state.shape[axis]) writes nothing.
    Lowered as an in-place write into the context's state.
  }];
  let arguments = (ins Graph_Tensor:$state, Graph_Tensor:$rows, Graph_IntTensor:$positions,
                       I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = [{
    $state `,` $rows `,` $positions attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_SampleTokensOp : Graph_Op<"sample_tokens"> {
  let summary = "Each sequence's next token, picked from its last position's logits";
  let description = [{
    `logits` is [B, S, V] (float), `input_ids` [B, N] (i64), the result [B, 1] (i64). The
    token ids in `input_ids` join the sequence's seen tokens, and the next token is the argmax
    or a seeded draw of the logits at position S - 1 under the context's sampling parameters
    (temperature, top-k, top-p, repetition penalty on the seen tokens: sinter.h,
    sinter_context_set_sampling). Reads and advances sampler state, so it is never removed,
    merged or reordered: it is not pure.
  }];
  let arguments = (ins Graph_FloatTensor:$logits, Graph_IntTensor:$input_ids);
  let results = (outs Graph_IntTensor:$next_token);
  let assemblyFormat = [{
    $logits `,` $input_ids attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_DecodeAttentionOp : Graph_Op<"decode_attention"> {
  let summary = "Attention of new queries over a KV cache, bounded by the position";
  let description = [{
    `q` is [B, Hq, 1, D]; `k` and `v` are caches [B, Hkv, L, D] (Hq a multiple of Hkv) that
    this step wrote at `position` (a [1] integer tensor, p). Without `key_mask` the query
    attends keys [0, p] only: softmax(q k[:, :, 0..p]^T * scale) v[:, :, 0..p], softmax in
    fp32; keys after p are never read, so the cost follows the position, not the cache
    length. With `key_mask` ([B, L] integer or i1, as a with-past export's attention_mask)
    the query attends the keys j of the whole cache where key_mask[b, j] is not 0, whatever
    the position; a query with every key masked gives zeros. With `softcap` > 0 each scaled
    score s becomes softcap * tanh(s / softcap) before the softmax (Gemma 2's attention
    soft-capping). `merged_heads` as for sinter.fused_attention.
  }];
  let arguments = (ins Graph_FloatTensor:$q, Graph_FloatTensor:$k, Graph_FloatTensor:$v,
                       Graph_IntTensor:$position, Optional<Graph_Tensor>:$key_mask,
                       F32Attr:$scale, UnitAttr:$merged_heads,
                       DefaultValuedAttr<F32Attr, "0.0">:$softcap);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $position (`key_mask` $key_mask^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // SINTER_GRAPH_FUSED_OPS
