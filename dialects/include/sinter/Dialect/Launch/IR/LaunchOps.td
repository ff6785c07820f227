#ifndef SINTER_LAUNCH_OPS
#define SINTER_LAUNCH_OPS

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Launch_Dialect : Dialect {
  let name = "launch";
  let summary = "The pre-resolved run-time program: buffers and launches";
  let description = [{
    A `func.func` whose arguments are the model's inputs and outputs (memrefs, outputs
    written in place) and whose body is a straight-line list of launches over buffers.
    Every buffer is an input/output slot, a slice of the weight blob, or a slice of the
    activation arena; every launch parameter is an attribute. Nothing is left to decide
    at run time except the I/O pointers.
  }];
  let cppNamespace = "::sinter::launch";
}

class Launch_Op<string mnemonic, list<Trait> traits = []>
    : Op<Launch_Dialect, mnemonic, traits>;

def Launch_WeightOp : Launch_Op<"weight", [Pure]> {
  let summary = "A constant buffer stored in the weight blob";
  let arguments = (ins StrAttr:$sym_name, ElementsAttr:$value,
                       OptionalAttr<I64Attr>:$offset);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "$sym_name attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Launch_StateOp : Launch_Op<"state", [Pure]> {
  let summary = "A buffer in the context's state block (a KV cache, or zeroed kernel scratch)";
  let description = [{
    State persists across runs and entries of one context and is zeroed at its creation.
    Every function of the module that names the same state gets the same bytes: `offset`
    (set by the lowering once all functions are lowered) is bytes into the state block.
  }];
  let arguments = (ins StrAttr:$sym_name, OptionalAttr<I64Attr>:$offset);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "$sym_name attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Launch_AllocOp : Launch_Op<"alloc", [Pure]> {
  let summary = "An intermediate buffer in the activation arena";
  let description = [{ `offset` is the byte offset in the arena, set by the arena planner. }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Launch_GemmOp : Launch_Op<"gemm", [AttrSizedOperandSegments]> {
  let summary = "A cuBLASLt matrix product: output[m, n] = input[m, k] @ weight[k, n] (+ bias[n]) (+ residual[m, n])";
  let description = [{
    Row-major operands. `precision` is the math the library may use: "strict" (fp32 FMA;
    f64 FMA for f64 operands),
    "tf32" (tensor cores, 10-bit mantissa inputs) or "native" (the operand type's own
    tensor-core path, for bf16/f16). The algorithm is chosen once when the model loads.
    With `batch` > 1 the product runs `batch` times over consecutive [m, k], [k, n] and
    [m, n] matrices (strided batched); an operand marked `broadcast_*` is one matrix read
    by every batch. A batched product has no bias or residual.
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "", [MemRead]>:$input,
                       Arg<AnyStaticShapeMemRef, "", [MemRead]>:$weight,
                       Arg<Optional<AnyStaticShapeMemRef>, "", [MemRead]>:$bias,
                       Arg<Optional<AnyStaticShapeMemRef>, "", [MemRead]>:$residual,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$output,
                       I64Attr:$m, I64Attr:$n, I64Attr:$k,
                       StrAttr:$precision,
                       DefaultValuedAttr<I64Attr, "1">:$batch,
                       DefaultValuedAttr<BoolAttr, "false">:$broadcast_input,
                       DefaultValuedAttr<BoolAttr, "false">:$broadcast_weight);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? (`residual` $residual^)? `->` $output attr-dict `:`
    type($input) `,` type($weight) (`,` type($bias)^)? (`,` type($residual)^)? `->` type($output)
  }];
  let hasVerifier = 1;
}

def Launch_KernelOp : Launch_Op<"kernel"> {
  let summary = "A launch of a kernel template instantiated at compile time";
  let description = [{
    `kernel_template` names a kernel template in runtime/kernels (`sinter::kernels::<name>`)
    registered in KernelRegistry.h; `params` are its template arguments, integers or C++
    spellings (types, enumerators, float bits), checked against the registry's kinds.
    Grid, block and dynamic shared memory are fixed here. `args` gives, for each pointer
    argument of the kernel in order, the index of the buffer passed there or -1 for a null
    pointer; `writes` lists the indices of the buffers it writes.
  }];
  let arguments = (ins Variadic<AnyStaticShapeMemRef>:$buffers,
                       StrAttr:$kernel_template, ArrayAttr:$params,
                       DenseI64ArrayAttr:$args,
                       DenseI64ArrayAttr:$grid, DenseI64ArrayAttr:$block,
                       I64Attr:$shared_bytes, DenseI64ArrayAttr:$writes);
  let assemblyFormat = "$kernel_template `(` $buffers `)` attr-dict `:` type($buffers)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Parameter kinds, argument count and written arguments against the template's entry
    /// in the kernel registry (KernelRegistry.h).
    ::mlir::LogicalResult verifyAgainstRegistry();
    /// The template parameter the registry calls `name`, or null (unregistered template,
    /// unknown name, or an optional parameter not given).
    ::mlir::Attribute getParam(::llvm::StringRef name);
    /// The buffer passed as the registry's argument `name`, or null.
    ::mlir::Value getArgument(::llvm::StringRef name);
    /// One buffer (or null) per argument of the template, in the registry's order.
    ::llvm::SmallVector<::mlir::Value> getArgumentValues();
    /// The indices of the arguments this launch writes.
    ::llvm::SmallVector<unsigned> getWrittenArguments();
    /// A launch of `kernelTemplate` from one buffer (or null) per argument and the indices of
    /// the arguments it writes: the buffers deduplicated in argument order.
    static KernelOp createWithArguments(::mlir::OpBuilder &builder, ::mlir::Location loc,
                           ::llvm::StringRef kernelTemplate, ::mlir::ArrayAttr params,
                           ::llvm::ArrayRef<::mlir::Value> arguments,
                           ::llvm::ArrayRef<int64_t> grid, ::llvm::ArrayRef<int64_t> block,
                           int64_t sharedBytes, ::llvm::ArrayRef<unsigned> writtenArguments);
  }];
}

def Launch_GenericOp : Launch_Op<"generic", [AttrSizedOperandSegments, IsolatedFromAbove]> {
  let summary = "A kernel generated from its body: the generic tier's one launch per fusion group";
  let description = [{
    The body (graph-dialect ops over tensors, ended by `sinter.yield`) takes one argument
    per input buffer, of the same shape and element type, and yields one value per output
    buffer. The emitter writes it as one CUDA kernel with every shape and stride a
    compile-time constant. `threads_per_row` = 0: one thread per output element,
    `elements_per_thread` of them each (a body that reads an input across the output's
    innermost dimension covers the output in square tiles, 32 or 64 (16-bit elements) wide,
    staged through shared memory, one block a tile; GenericPlan decides). Otherwise the body holds one row operation
    (reduction, softmax, normalization): `threads_per_row` threads share each row,
    `rows_per_block` rows a block. Grid, block and shared memory are fixed here.
  }];
  let arguments = (ins Arg<Variadic<AnyStaticShapeMemRef>, "", [MemRead]>:$inputs,
                       Arg<Variadic<AnyStaticShapeMemRef>, "", [MemWrite]>:$outputs,
                       DenseI64ArrayAttr:$grid, DenseI64ArrayAttr:$block,
                       I64Attr:$shared_bytes, I64Attr:$threads_per_row,
                       I64Attr:$rows_per_block, I64Attr:$elements_per_thread);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` `->` `(` $outputs `)` attr-dict `:` functional-type($inputs, $outputs) $body
  }];
  let hasVerifier = 1;
}

#endif // SINTER_LAUNCH_OPS
