#ifndef SINTER_GRAPH_DIALECT
#define SINTER_GRAPH_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Graph_Dialect : Dialect {
  let name = "sinter";
  let summary = "Tensor-level graph of an imported model";
  let description = [{
    Statically shaped tensor ops: the ONNX-level primitives an import produces and the
    fused ops the graph phase forms from them. Every value is a ranked tensor with static
    dimensions; ops are side-effect free.
  }];
  let cppNamespace = "::sinter::graph";
  let hasConstantMaterializer = 1;
}

// Signless integers are ONNX's signed types; unsigned ones are MLIR's unsigned integers.
def Graph_ElemType : AnyTypeOf<[BF16, F16, F32, F64, I64, I32, I16, I8, UI64, UI32, UI16, UI8,
                                I1]>;
def Graph_Tensor : StaticShapeTensorOf<[BF16, F16, F32, F64, I64, I32, I16, I8, UI64, UI32, UI16,
                                        UI8, I1]>;
def Graph_FloatTensor : StaticShapeTensorOf<[BF16, F16, F32, F64]>;
def Graph_IntTensor : StaticShapeTensorOf<[I64, I32]>;
def Graph_BoolTensor : StaticShapeTensorOf<[I1]>;

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, !listconcat(traits, [Pure])>;

#endif // SINTER_GRAPH_DIALECT
