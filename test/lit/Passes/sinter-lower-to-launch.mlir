// RUN: sinter-opt %s -split-input-file --sinter-lower-to-launch -verify-diagnostics | FileCheck %s
// RUN: sinter-opt %s -split-input-file --sinter-lower-to-launch="precision=tf32" -verify-diagnostics | FileCheck %s --check-prefix=TF32

// CHECK-LABEL: func.func @two_linears
// CHECK-SAME: (%[[X:.+]]: memref<1x4x8xf32> {sinter.name = "x"}, %[[Y:.+]]: memref<1x4x2xf32> {launch.output, sinter.name = "y"})
// Weights are placed in the blob in first-use order.
// CHECK: %[[W0:.+]] = launch.weight "w0" {offset = 0 : i64, value = {{.*}}} : memref<8x16xf32>
// CHECK: %[[T:.+]] = launch.alloc : memref<1x4x16xf32>
// CHECK: launch.gemm %[[X]], %[[W0]] -> %[[T]] {k = 8 : i64, m = 4 : i64, n = 16 : i64, precision = "strict"}
// CHECK: %[[W1:.+]] = launch.weight "w1" {offset = 512 : i64, value = {{.*}}} : memref<16x2xf32>
// CHECK: %[[B1:.+]] = launch.weight "w2" {offset = 768 : i64, value = {{.*}}} : memref<2xf32>
// CHECK: launch.gemm %[[T]], %[[W1]] bias %[[B1]] -> %[[Y]] {k = 16 : i64, m = 4 : i64, n = 2 : i64, precision = "strict"}
// CHECK: return
// TF32-LABEL: func.func @two_linears
// TF32-COUNT-2: precision = "tf32"
func.func @two_linears(%x: tensor<1x4x8xf32> {sinter.name = "x"}) -> (tensor<1x4x2xf32> {sinter.name = "y"}) {
  %w0 = sinter.constant dense<1.0> : tensor<8x16xf32>
  %w1 = sinter.constant dense<1.0> : tensor<16x2xf32>
  %b1 = sinter.constant dense<1.0> : tensor<2xf32>
  %h = sinter.linear %x, %w0 : (tensor<1x4x8xf32>, tensor<8x16xf32>) -> tensor<1x4x16xf32>
  %y = sinter.linear %h, %w1 bias %b1 : (tensor<1x4x16xf32>, tensor<16x2xf32>, tensor<2xf32>) -> tensor<1x4x2xf32>
  return %y : tensor<1x4x2xf32>
}

// -----

// bf16 linears use the tensor-core path whatever the fp32 precision policy.
// CHECK-LABEL: func.func @bf16
// CHECK: precision = "native"
// TF32-LABEL: func.func @bf16
// TF32: precision = "native"
func.func @bf16(%x: tensor<2x8xbf16>) -> tensor<2x4xbf16> {
  %w = sinter.constant dense<1.0> : tensor<8x4xbf16>
  %y = sinter.linear %x, %w : (tensor<2x8xbf16>, tensor<8x4xbf16>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// -----

// An op no pattern takes is one generated kernel (the generic tier), four f32 elements (one
// 16-byte vector) a thread.
// CHECK-LABEL: func.func @generic_op
// CHECK: launch.generic(%{{.+}}) -> (%{{.+}}) {block = array<i64: 256, 1, 1>, elements_per_thread = 4 : i64, grid = array<i64: 1, 1, 1>, rows_per_block = 1 : i64, shared_bytes = 0 : i64, threads_per_row = 0 : i64}
// CHECK: sinter.sqrt
// CHECK: sinter.yield
func.func @generic_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = sinter.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// An output that is an input is a generated copy.
// CHECK-LABEL: func.func @input_returned
// CHECK-SAME: (%[[X:.+]]: memref<4xf32>, %[[Y:.+]]: memref<4xf32> {launch.output})
// CHECK: launch.generic(%[[X]]) -> (%[[Y]])
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4xf32>):
// CHECK-NEXT: sinter.yield %[[A]] : tensor<4xf32>
func.func @input_returned(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A residual operand becomes the GEMM's accumulate input.
// CHECK-LABEL: func.func @residual
// CHECK: launch.gemm %[[X:.+]], %{{.+}} residual %[[X]] -> %{{.+}} {k = 4 : i64, m = 2 : i64, n = 4 : i64
func.func @residual(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = sinter.constant dense<1.0> : tensor<4x4xf32>
  %y = sinter.linear %x, %w residual %x : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A biased projection into the residual stream (GPT-2's c_proj): one linear_small_m launch
// with the BIAS_RESIDUAL epilogue for a decode row; past 16 rows the library GEMM takes both.
// CHECK-LABEL: func.func @bias_and_residual
// CHECK: launch.kernel "linear_small_m"(%arg0, %{{[^,]+}}, %{{[^,]+}}, %arg1, %{{[^)]+}}) {args = array<i64: 0, 1, -1, 2, 3, -1, -1, 4, {{.*}}"sinter::kernels::LinearEpilogue::BIAS_RESIDUAL"
// CHECK: launch.gemm %arg2, %{{[^ ]+}} bias %{{[^ ]+}} residual %arg3 -> %{{.+}} {k = 64 : i64, m = 32 : i64, n = 64 : i64
func.func @bias_and_residual(%x: tensor<1x1x64xbf16>, %r: tensor<1x1x64xbf16>, %xs: tensor<1x32x64xbf16>, %rs: tensor<1x32x64xbf16>) -> (tensor<1x1x64xbf16>, tensor<1x32x64xbf16>) {
  %w = sinter.constant dense<1.0> : tensor<64x64xbf16>
  %b = sinter.constant dense<0.5> : tensor<64xbf16>
  %y = sinter.linear %x, %w bias %b residual %r : (tensor<1x1x64xbf16>, tensor<64x64xbf16>, tensor<64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  %z = sinter.linear %xs, %w bias %b residual %rs : (tensor<1x32x64xbf16>, tensor<64x64xbf16>, tensor<64xbf16>, tensor<1x32x64xbf16>) -> tensor<1x32x64xbf16>
  return %y, %z : tensor<1x1x64xbf16>, tensor<1x32x64xbf16>
}

// -----

// A LayerNorm prologue (GPT-2): linear_small_m's LAYER_NORM takes the scale and the shift
// packed as one fp32 [2, K] weight; past 16 rows a generated LayerNorm runs before the GEMM.
// CHECK-LABEL: func.func @layer_norm_prologue
// CHECK: %[[P:.+]] = launch.weight "w{{[0-9]+}}.layer_norm" {{.*}}tensor<2x64xf32>
// CHECK: launch.kernel "linear_small_m"(%arg0, %{{[^,]+}}, %[[P]], %{{[^)]+}}) {args = array<i64: 0, 1, 2, 3, -1, -1, -1, 4, {{.*}}"sinter::kernels::LinearPrologue::LAYER_NORM", "sinter::kernels::LinearEpilogue::BIAS"
// CHECK: launch.generic(%arg1, %{{[^,]+}}, %{{[^)]+}}) -> (%[[N:[^)]+]])
// CHECK: sinter.layer_normalization
// CHECK: launch.gemm %[[N]], %{{[^ ]+}} bias %{{[^ ]+}} -> %{{.+}} {k = 64 : i64, m = 32 : i64, n = 32 : i64
func.func @layer_norm_prologue(%x: tensor<1x1x64xbf16>, %xs: tensor<1x32x64xbf16>) -> (tensor<1x1x32xbf16>, tensor<1x32x32xbf16>) {
  %w = sinter.constant dense<1.0> : tensor<64x32xbf16>
  %b = sinter.constant dense<0.5> : tensor<32xbf16>
  %g = sinter.constant dense<1.5> : tensor<64xbf16>
  %s = sinter.constant dense<0.25> : tensor<64xbf16>
  %y = sinter.linear %x, %w bias %b norm %g norm_bias %s {norm_epsilon = 1.0e-5 : f32} : (tensor<1x1x64xbf16>, tensor<64x32xbf16>, tensor<32xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<1x1x32xbf16>
  %z = sinter.linear %xs, %w bias %b norm %g norm_bias %s {norm_epsilon = 1.0e-5 : f32} : (tensor<1x32x64xbf16>, tensor<64x32xbf16>, tensor<32xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<1x32x32xbf16>
  return %y, %z : tensor<1x1x32xbf16>, tensor<1x32x32xbf16>
}

// -----

// An activated linear (GPT-2's c_fc + GeLU): linear_small_m's GELU_TANH epilogue with the bias;
// past 16 rows the library GEMM into a scratch buffer, then one generated GeLU launch.
// CHECK-LABEL: func.func @activated_linear
// CHECK: launch.kernel "linear_small_m"(%arg0, %{{[^,]+}}, %{{[^,]+}}, %{{[^)]+}}) {args = array<i64: 0, 1, -1, 2, -1, -1, -1, 3, {{.*}}"sinter::kernels::LinearEpilogue::GELU_TANH"
// CHECK: launch.gemm %arg1, %{{[^ ]+}} bias %{{[^ ]+}} -> %[[P:[^ ]+]] {k = 64 : i64, m = 32 : i64, n = 128 : i64
// CHECK: launch.generic(%[[P]]) -> (%{{[^)]+}})
// CHECK: sinter.unary "gelu_tanh"
func.func @activated_linear(%x: tensor<1x1x64xbf16>, %xs: tensor<1x32x64xbf16>) -> (tensor<1x1x128xbf16>, tensor<1x32x128xbf16>) {
  %w = sinter.constant dense<1.0> : tensor<64x128xbf16>
  %b = sinter.constant dense<0.5> : tensor<128xbf16>
  %y = sinter.linear %x, %w bias %b {activation = "gelu_tanh"} : (tensor<1x1x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>) -> tensor<1x1x128xbf16>
  %z = sinter.linear %xs, %w bias %b {activation = "gelu_tanh"} : (tensor<1x32x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>) -> tensor<1x32x128xbf16>
  return %y, %z : tensor<1x1x128xbf16>, tensor<1x32x128xbf16>
}

// -----

// The exact GeLU (GPT-NeoX's): the GELU epilogue; past 16 rows a generated "gelu" launch.
// CHECK-LABEL: func.func @exact_gelu_linear
// CHECK: launch.kernel "linear_small_m"{{.*}}"sinter::kernels::LinearEpilogue::GELU"
// CHECK: launch.gemm %arg1
// CHECK: sinter.unary "gelu"
func.func @exact_gelu_linear(%x: tensor<1x1x64xbf16>, %xs: tensor<1x32x64xbf16>) -> (tensor<1x1x128xbf16>, tensor<1x32x128xbf16>) {
  %w = sinter.constant dense<1.0> : tensor<64x128xbf16>
  %b = sinter.constant dense<0.5> : tensor<128xbf16>
  %y = sinter.linear %x, %w bias %b {activation = "gelu"} : (tensor<1x1x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>) -> tensor<1x1x128xbf16>
  %z = sinter.linear %xs, %w bias %b {activation = "gelu"} : (tensor<1x32x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>) -> tensor<1x32x128xbf16>
  return %y, %z : tensor<1x1x128xbf16>, tensor<1x32x128xbf16>
}

// -----

// A ragged N (an LM head over GPT-2's 50257 tokens; here 20 columns): linear_small_m reads a
// weight of whole 16-row tiles (32 rows, the last 12 zero) and writes the 20 columns. A
// residual epilogue takes only whole tiles: the library GEMM.
// CHECK-LABEL: func.func @ragged_n
// CHECK: launch.weight {{.*}}tensor<32x64xbf16>
// CHECK: launch.kernel "linear_small_m"{{.*}}params = [1, 20, 64, "sinter::kernels::LinearPrologue::NONE", "sinter::kernels::LinearEpilogue::NONE"
// CHECK: launch.gemm %arg0, %{{[^ ]+}} residual %arg1 -> %{{.+}} {k = 64 : i64, m = 1 : i64, n = 20 : i64
func.func @ragged_n(%x: tensor<1x1x64xbf16>, %r: tensor<1x1x20xbf16>) -> (tensor<1x1x20xbf16>, tensor<1x1x20xbf16>) {
  %w = sinter.constant dense<1.0> : tensor<64x20xbf16>
  %w2 = sinter.constant dense<2.0> : tensor<64x20xbf16>
  %y = sinter.linear %x, %w : (tensor<1x1x64xbf16>, tensor<64x20xbf16>) -> tensor<1x1x20xbf16>
  %z = sinter.linear %x, %w2 residual %r : (tensor<1x1x64xbf16>, tensor<64x20xbf16>, tensor<1x1x20xbf16>) -> tensor<1x1x20xbf16>
  return %y, %z : tensor<1x1x20xbf16>, tensor<1x1x20xbf16>
}

// -----

// Empty tensors: an empty input given back as an output is no launch, and so is an empty
// constant output (what sinter-fold-empty-tensors leaves).
// CHECK-LABEL: func.func @empty_io
// CHECK-SAME: memref<0x4xf32>
// CHECK-NOT: launch.generic
// CHECK-NOT: launch.kernel
// CHECK: return
func.func @empty_io(%x: tensor<0x4xf32>) -> (tensor<0x4xf32>, tensor<3x0xf32>) {
  %e = sinter.constant dense<> : tensor<3x0xf32>
  return %x, %e : tensor<0x4xf32>, tensor<3x0xf32>
}

// -----

// Negative: an op that makes something of an empty tensor without a fold is refused, named.
func.func @empty_operand(%x: tensor<2x0xf32>) -> tensor<2x1xi64> {
  // expected-error @+1 {{'sinter.arg_reduce' of an empty tensor 'tensor<2x0xf32>' is not supported}}
  %i = sinter.arg_reduce "max" %x {axis = 1 : i64} : (tensor<2x0xf32>) -> tensor<2x1xi64>
  return %i : tensor<2x1xi64>
}

// -----

// Negative: only flash_attention caps scores; at head size 8 (it tiles multiples of 16) a
// soft-capped fused attention has no kernel (sinter-expand-attention sends such attention to
// primitives before the lowering).
func.func @softcap_without_flash(%x: tensor<1x6x32xbf16>) -> tensor<1x6x32xbf16> {
  %w = sinter.constant dense<0.5> : tensor<32x64xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x6x32xbf16>, tensor<32x64xbf16>) -> tensor<1x6x64xbf16>
  %h:3 = sinter.split_qkv_heads %qkv : (tensor<1x6x64xbf16>) -> (tensor<1x4x6x8xbf16>, tensor<1x2x6x8xbf16>, tensor<1x2x6x8xbf16>)
  // expected-error @+1 {{soft-capped attention needs the flash_attention kernel, which does not take S=6 D=8 'bf16' on this target}}
  %a = sinter.fused_attention %h#0, %h#1, %h#2 {scale = 3.500000e-01 : f32, causal = true, merged_heads, softcap = 5.000000e+01 : f32} : (tensor<1x4x6x8xbf16>, tensor<1x2x6x8xbf16>, tensor<1x2x6x8xbf16>) -> tensor<1x6x32xbf16>
  return %a : tensor<1x6x32xbf16>
}

// -----

// Negative: the heads of a split_qkv_heads are read in place in a projection kernel's output;
// a split of anything else has no buffer to read them from.
func.func @split_of_input(%qkv: tensor<1x6x128xbf16>, %mask: tensor<1x6xi64>) -> tensor<1x6x64xbf16> {
  // expected-error @+1 {{the heads are read in place: the qkv operand must be a bf16 linear with a constant weight}}
  %h:3 = sinter.split_qkv_heads %qkv : (tensor<1x6x128xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  %a = sinter.fused_attention %h#0, %h#1, %h#2 key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// Negative: RoPE tables computed at run time are read as [rows, D] for the flattened batch; one
// sequence's [1, 1, S, D] broadcast over two sequences has no such buffer.
func.func @rope_table_of_one_sequence(%h: tensor<2x2x64xbf16>, %mask: tensor<2x2xi64>, %cos: tensor<1x1x2x16xbf16>, %sin: tensor<1x1x2x16xbf16>) -> tensor<2x2x64xbf16> {
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  // expected-error @+1 {{rope tables must be bf16 [4, 16]}}
  %qkv = sinter.linear %h, %wqkv norm %g1 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<2x2x64xbf16>, tensor<64x128xbf16>, tensor<64xbf16>) -> tensor<2x2x128xbf16>
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) : (tensor<2x2x128xbf16>, tensor<1x1x2x16xbf16>, tensor<1x1x2x16xbf16>) -> (tensor<2x4x2x16xbf16>, tensor<2x2x2x16xbf16>, tensor<2x2x2x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<2x4x2x16xbf16>, tensor<2x2x2x16xbf16>, tensor<2x2x2x16xbf16>, tensor<2x2xi64>) -> tensor<2x2x64xbf16>
  return %a3 : tensor<2x2x64xbf16>
}

// -----

// Negative: qk_norm_rope reads bf16 or f32 tables; f16 ones computed at run time are refused.
func.func @qk_norm_f16_tables(%h: tensor<1x6x64xbf16>, %mask: tensor<1x6xi64>, %cos: tensor<1x1x6x16xf16>, %sin: tensor<1x1x6x16xf16>) -> tensor<1x6x64xbf16> {
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<16xbf16>
  %kw = sinter.constant dense<2.0> : tensor<16xbf16>
  %qkv = sinter.linear %h, %wqkv : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  // expected-error @+1 {{rope tables must be bf16 or f32 [6, 16]}}
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) norm(%qw, %kw) {norm_epsilon = 1.0e-6 : f32} : (tensor<1x6x128xbf16>, tensor<1x1x6x16xf16>, tensor<1x1x6x16xf16>, tensor<16xbf16>, tensor<16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  return %a3 : tensor<1x6x64xbf16>
}

// -----

// Kernel configurations are the module's target's: 16 bf16 rows of 2048 (66 KiB of x in shared
// memory) stream through linear_small_m on the H200 ...
// CHECK-LABEL: func.func @rows_in_shared_memory
// CHECK: launch.kernel "linear_small_m"
// CHECK-NOT: launch.gemm
func.func @rows_in_shared_memory(%x: tensor<16x2048xbf16>) -> tensor<16x16xbf16> {
  %w = sinter.constant dense<1.0> : tensor<2048x16xbf16>
  %y = sinter.linear %x, %w : (tensor<16x2048xbf16>, tensor<2048x16xbf16>) -> tensor<16x16xbf16>
  return %y : tensor<16x16xbf16>
}

// -----

// ... and go to the library GEMM on a target with 48 KiB a block.
// CHECK-LABEL: func.func @rows_in_shared_memory_small_target
// CHECK-NOT: launch.kernel "linear_small_m"
// CHECK: launch.gemm
module attributes {sinter.target = {name = "small", shared_memory_per_block = 49152 : i64, shared_memory_per_sm = 65536 : i64}} {
func.func @rows_in_shared_memory_small_target(%x: tensor<16x2048xbf16>) -> tensor<16x16xbf16> {
  %w = sinter.constant dense<1.0> : tensor<2048x16xbf16>
  %y = sinter.linear %x, %w : (tensor<16x2048xbf16>, tensor<2048x16xbf16>) -> tensor<16x16xbf16>
  return %y : tensor<16x16xbf16>
}
}

// -----

// expected-error @+1 {{'sinter.target' field 'l2_bytes' is unknown or out of range}}
module attributes {sinter.target = {l2_bytes = 0 : i64}} {
func.func @bad_target(%x: tensor<2x8xbf16>) -> tensor<2x4xbf16> {
  %w = sinter.constant dense<1.0> : tensor<8x4xbf16>
  %y = sinter.linear %x, %w : (tensor<2x8xbf16>, tensor<8x4xbf16>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}
}

// -----

// A norm over a q projection wider than one block of qk_norm_rope holds (8448 columns).
func.func @qk_norm_too_wide(%h: tensor<1x1x64xbf16>) -> (tensor<1x528x1x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1x2x1x16xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x8512xbf16>
  %qw = sinter.constant dense<1.5> : tensor<8448xbf16>
  %kw = sinter.constant dense<2.0> : tensor<32xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x1x64xbf16>, tensor<64x8512xbf16>) -> tensor<1x1x8512xbf16>
  // expected-error @+1 {{no qk_norm_rope configuration for q/k norms over 8448 and 32 columns of heads of 16 (at most 8192)}}
  %q, %k, %v = sinter.split_qkv_heads %qkv norm(%qw, %kw) {norm_epsilon = 1.0e-6 : f32} : (tensor<1x1x8512xbf16>, tensor<8448xbf16>, tensor<32xbf16>) -> (tensor<1x528x1x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1x2x1x16xbf16>)
  return %q, %k, %v : tensor<1x528x1x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1x2x1x16xbf16>
}

// -----

// A decode row through Gemma's gate/up: linear_small_m normalizes with the fp32 weight (one
// rounding) and applies the GeGLU in its epilogue; the norm weight stays f32.
// CHECK-LABEL: func.func @gemma_gate_up_row
// CHECK: %[[NW:.+]] = launch.weight {{.*}} : memref<64xf32>
// CHECK: launch.kernel "linear_small_m"(%arg0, %{{.+}}, %[[NW]], %arg1) {{.*}}params = [1, 256, 64, "sinter::kernels::LinearPrologue::RMS_NORM_FP32_WEIGHT", "sinter::kernels::LinearEpilogue::GELU_TANH_MUL_PAIRS",
func.func @gemma_gate_up_row(%h: tensor<1x1x64xbf16>) -> tensor<1x1x128xbf16> {
  %g = sinter.constant dense<1.5> : tensor<64xf32>
  %wgu = sinter.constant dense<0.5> : tensor<64x256xbf16>
  %y = sinter.linear %h, %wgu norm %g {gate_activation = "gelu_tanh", gate_up_columns = array<i64: 0, 128>, norm_epsilon = 9.99999997E-7 : f32} : (tensor<1x1x64xbf16>, tensor<64x256xbf16>, tensor<64xf32>) -> tensor<1x1x128xbf16>
  return %y : tensor<1x1x128xbf16>
}

// -----

// An f16 linear with an f32-scaled norm: no kernel takes f16, so a generated row kernel
// normalizes (in f32, then one cast to f16) before the library GEMM.
// CHECK-LABEL: func.func @f16_f32_scaled_norm
// CHECK: launch.generic(%arg0, %{{.+}}) -> (%[[N:[0-9]+]])
// CHECK: sinter.rms_normalization {{.*}} -> tensor<2x64xf32>
// CHECK: sinter.cast {{.*}} -> tensor<2x64xf16>
// CHECK: launch.gemm %[[N]], %{{.+}} -> %arg1
func.func @f16_f32_scaled_norm(%h: tensor<2x64xf16>) -> tensor<2x32xf16> {
  %g = sinter.constant dense<1.5> : tensor<64xf32>
  %w = sinter.constant dense<0.5> : tensor<64x32xf16>
  %y = sinter.linear %h, %w norm %g {norm_epsilon = 9.99999997E-7 : f32} : (tensor<2x64xf16>, tensor<64x32xf16>, tensor<64xf32>) -> tensor<2x32xf16>
  return %y : tensor<2x32xf16>
}
