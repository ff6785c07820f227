#ifndef SINTER_GRAPH_OPS
#define SINTER_GRAPH_OPS

include "sinter/Dialect/Graph/IR/GraphDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Graph_ConstantOp : Graph_Op<"constant", [ConstantLike,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "A constant tensor (an ONNX initializer or Constant node)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops (numpy broadcasting)
//===----------------------------------------------------------------------===//

class Graph_BinaryOp<string mnemonic, Type operandType, Type resultType,
                     list<Trait> traits = []>
    : Graph_Op<mnemonic, traits> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_AddOp : Graph_BinaryOp<"add", Graph_Tensor, Graph_Tensor, [Commutative]> {
  let summary = "Elementwise sum";
}
def Graph_SubOp : Graph_BinaryOp<"sub", Graph_Tensor, Graph_Tensor> {
  let summary = "Elementwise difference";
}
def Graph_MulOp : Graph_BinaryOp<"mul", Graph_Tensor, Graph_Tensor, [Commutative]> {
  let summary = "Elementwise product";
}
def Graph_DivOp : Graph_BinaryOp<"div", Graph_Tensor, Graph_Tensor> {
  let summary = "Elementwise quotient (integer division truncates)";
}
def Graph_PowOp : Graph_BinaryOp<"pow", Graph_Tensor, Graph_Tensor> {
  let summary = "Elementwise power; the result has the type of the base";
}
def Graph_AndOp : Graph_BinaryOp<"and", Graph_BoolTensor, Graph_BoolTensor, [Commutative]> {
  let summary = "Elementwise logical and";
}
def Graph_EqualOp : Graph_BinaryOp<"equal", Graph_Tensor, Graph_BoolTensor, [Commutative]> {
  let summary = "Elementwise equality, giving i1";
}
def Graph_LessOrEqualOp : Graph_BinaryOp<"less_or_equal", Graph_Tensor, Graph_BoolTensor> {
  let summary = "Elementwise lhs <= rhs, giving i1";
}
def Graph_MaxOp : Graph_BinaryOp<"max", Graph_Tensor, Graph_Tensor, [Commutative]> {
  let summary = "Elementwise maximum of two operands";
}

class Graph_UnaryOp<string mnemonic, Type operandType, Type resultType,
                    list<Trait> traits = []>
    : Graph_Op<mnemonic, traits> {
  let arguments = (ins operandType:$input);
  let results = (outs resultType:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_SqrtOp : Graph_UnaryOp<"sqrt", Graph_FloatTensor, Graph_FloatTensor> {
  let summary = "Elementwise square root";
}
def Graph_ReciprocalOp : Graph_UnaryOp<"reciprocal", Graph_FloatTensor, Graph_FloatTensor> {
  let summary = "Elementwise 1/x";
}
def Graph_NegOp : Graph_UnaryOp<"neg", Graph_Tensor, Graph_Tensor> {
  let summary = "Elementwise negation";
}
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", Graph_FloatTensor, Graph_FloatTensor> {
  let summary = "Elementwise logistic function";
}
def Graph_CosOp : Graph_UnaryOp<"cos", Graph_FloatTensor, Graph_FloatTensor> {
  let summary = "Elementwise cosine";
}
def Graph_SinOp : Graph_UnaryOp<"sin", Graph_FloatTensor, Graph_FloatTensor> {
  let summary = "Elementwise sine";
}
def Graph_IsNaNOp : Graph_UnaryOp<"is_nan", Graph_FloatTensor, Graph_BoolTensor> {
  let summary = "Elementwise NaN test";
}
def Graph_CastOp : Graph_UnaryOp<"cast", Graph_Tensor, Graph_Tensor> {
  let summary = "Elementwise conversion to the result's element type";
}
def Graph_BitCastOp : Graph_UnaryOp<"bitcast", Graph_Tensor, Graph_Tensor> {
  let summary = "Elementwise reinterpretation of the bits as the result's element type";
  let description = [{
    ONNX BitCast: operand and result element types have the same width in bits (bool counts
    as 8, its stored byte).
  }];
  let extraClassDeclaration = [{
    /// The bits an element of `type` is stored in (a bool's byte: 8).
    static unsigned storedBits(::mlir::Type type) {
      return type.isInteger(1) ? 8 : type.getIntOrFloatBitWidth();
    }
  }];
}

def Graph_WhereOp : Graph_Op<"where"> {
  let summary = "Elementwise select: cond ? x : y (numpy broadcasting)";
  let arguments = (ins Graph_BoolTensor:$condition, Graph_Tensor:$x, Graph_Tensor:$y);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$condition `,` $x `,` $y attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

def Graph_MatMulOp : Graph_Op<"matmul"> {
  let summary = "numpy matmul: batched over leading dimensions, broadcasting";
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_GemmOp : Graph_Op<"gemm"> {
  let summary = "ONNX Gemm: alpha * op(A) * op(B) + beta * C on 2-D operands";
  let arguments = (ins Graph_Tensor:$a, Graph_Tensor:$b, Optional<Graph_Tensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_TransposeOp : Graph_Op<"transpose"> {
  let summary = "Permutes dimensions: output dim i = input dim perm[i]";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input `,` $perm attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ReshapeOp : Graph_Op<"reshape"> {
  let summary = "Reinterprets the input with the static result shape";
  let description = [{
    The ONNX shape operand is kept so the op stays one-to-one with its source node; the
    result type holds the resolved shape, which governs.
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IntTensor:$shape);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input `,` $shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

include "sinter/Dialect/Graph/IR/GraphTensorOps.td"
include "sinter/Dialect/Graph/IR/GraphFusedOps.td"
include "sinter/Dialect/Graph/IR/GraphGenericOps.td"

#endif // SINTER_GRAPH_OPS
