#ifndef SINTER_GRAPH_FUSED_OPS
#define SINTER_GRAPH_FUSED_OPS

// Ops the graph phase forms from primitives.

def Graph_LinearOp : Graph_Op<"linear"> {
  let summary = "y = x @ weight (+ bias): a matrix product with a constant [K, N] weight";
  let description = [{
    `x` has shape [..., K]; leading dimensions are flattened into M rows. `weight` is
    [K, N] row-major (the ONNX MatMul right-hand side), `bias` is [N].
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$weight,
                       Optional<Graph_Tensor>:$bias);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // SINTER_GRAPH_FUSED_OPS
