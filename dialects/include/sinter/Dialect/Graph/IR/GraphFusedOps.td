#ifndef SINTER_GRAPH_FUSED_OPS
#define SINTER_GRAPH_FUSED_OPS

// Ops the graph phase forms from primitives.

def Graph_LinearOp : Graph_Op<"linear", [AttrSizedOperandSegments]> {
  let summary = "y = x @ weight (+ bias) (+ residual): a matrix product with a constant weight";
  let description = [{
    `x` has shape [..., K]; leading dimensions are flattened into M rows. `weight` is
    [K, N] row-major (the ONNX MatMul right-hand side), `bias` is [N], `residual` has the
    result's shape and is added in the epilogue.
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$weight,
                       Optional<Graph_Tensor>:$bias, Optional<Graph_Tensor>:$residual);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? (`residual` $residual^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // SINTER_GRAPH_FUSED_OPS
