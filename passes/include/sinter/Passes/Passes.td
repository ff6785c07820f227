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

def SinterLowerToLaunch : Pass<"sinter-lower-to-launch", "mlir::ModuleOp"> {
  let summary = "Lower the graph of fused ops to launches over buffers";
  let description = [{
    Each function becomes a launch program: tensor arguments and results become memref
    arguments (results written in place), constants become `launch.weight`s, intermediates
    `launch.alloc`s, and each `sinter.linear` a `launch.gemm`. Fails naming any op that has
    no lowering.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"strict\"",
           "fp32 matrix math: strict (fp32 FMA) or tf32 (tensor cores)">
  ];
  let dependentDialects = ["::sinter::launch::LaunchDialect", "::mlir::memref::MemRefDialect"];
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
