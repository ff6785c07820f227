// RUN: sinter-opt %s -split-input-file --sinter-fuse-linear-swiglu | FileCheck %s

// The gate|up linear (with its RMSNorm prologue) takes the SwiGLU: the slices and the
// silu_mul go, the linear's result is the silu_mul's.
// CHECK-LABEL: func.func @swiglu
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{.+}} norm %{{.+}} {gate_up_columns = array<i64: 0, 128>, norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64x256xbf16>, tensor<64xbf16>) -> tensor<1x6x128xbf16>
// CHECK-NOT: sinter.slice
// CHECK-NOT: sinter.silu_mul
// CHECK: return %[[Y]]
func.func @swiglu(%x: tensor<1x6x64xbf16>) -> tensor<1x6x128xbf16> {
  %g = sinter.constant dense<1.0> : tensor<64xbf16>
  %w = sinter.constant dense<0.5> : tensor<64x256xbf16>
  %p = sinter.linear %x, %w norm %g {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64x256xbf16>, tensor<64xbf16>) -> tensor<1x6x256xbf16>
  %gate = sinter.slice %p {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x256xbf16>) -> tensor<1x6x128xbf16>
  %up = sinter.slice %p {starts = array<i64: 0, 0, 128>, ends = array<i64: 1, 6, 256>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x256xbf16>) -> tensor<1x6x128xbf16>
  %y = sinter.silu_mul %gate, %up : (tensor<1x6x128xbf16>, tensor<1x6x128xbf16>) -> tensor<1x6x128xbf16>
  return %y : tensor<1x6x128xbf16>
}

// -----

// Up's columns first: the pairs still name the gate's start first.
// CHECK-LABEL: func.func @up_first
// CHECK: sinter.linear %arg0, %{{.+}} {gate_up_columns = array<i64: 4, 0>} : (tensor<2x16xbf16>, tensor<16x8xbf16>) -> tensor<2x4xbf16>
func.func @up_first(%x: tensor<2x16xbf16>) -> tensor<2x4xbf16> {
  %w = sinter.constant dense<0.5> : tensor<16x8xbf16>
  %p = sinter.linear %x, %w : (tensor<2x16xbf16>, tensor<16x8xbf16>) -> tensor<2x8xbf16>
  %up = sinter.slice %p {starts = array<i64: 0, 0>, ends = array<i64: 2, 4>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %gate = sinter.slice %p {starts = array<i64: 0, 4>, ends = array<i64: 2, 8>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %y = sinter.silu_mul %gate, %up : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// -----

// Negative: the product has a third reader, so the slices stay.
// CHECK-LABEL: func.func @product_is_read
// CHECK: sinter.silu_mul
// CHECK-NOT: gate_up_columns
func.func @product_is_read(%x: tensor<2x16xbf16>) -> (tensor<2x4xbf16>, tensor<2x8xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<16x8xbf16>
  %p = sinter.linear %x, %w : (tensor<2x16xbf16>, tensor<16x8xbf16>) -> tensor<2x8xbf16>
  %gate = sinter.slice %p {starts = array<i64: 0, 0>, ends = array<i64: 2, 4>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %up = sinter.slice %p {starts = array<i64: 0, 4>, ends = array<i64: 2, 8>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %y = sinter.silu_mul %gate, %up : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %y, %p : tensor<2x4xbf16>, tensor<2x8xbf16>
}

// -----

// Negative: an f32 linear goes to the library GEMM, whose SwiGLU stays generic.
// CHECK-LABEL: func.func @f32
// CHECK: sinter.silu_mul
// CHECK-NOT: gate_up_columns
func.func @f32(%x: tensor<2x16xf32>) -> tensor<2x4xf32> {
  %w = sinter.constant dense<0.5> : tensor<16x8xf32>
  %p = sinter.linear %x, %w : (tensor<2x16xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
  %gate = sinter.slice %p {starts = array<i64: 0, 0>, ends = array<i64: 2, 4>, steps = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %up = sinter.slice %p {starts = array<i64: 0, 4>, ends = array<i64: 2, 8>, steps = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %y = sinter.silu_mul %gate, %up : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Negative: a bias stays in its own epilogue; the kernel's SwiGLU pairs take none.
// CHECK-LABEL: func.func @bias
// CHECK: sinter.silu_mul
// CHECK-NOT: gate_up_columns
func.func @bias(%x: tensor<2x16xbf16>) -> tensor<2x4xbf16> {
  %w = sinter.constant dense<0.5> : tensor<16x8xbf16>
  %b = sinter.constant dense<0.5> : tensor<8xbf16>
  %p = sinter.linear %x, %w bias %b : (tensor<2x16xbf16>, tensor<16x8xbf16>, tensor<8xbf16>) -> tensor<2x8xbf16>
  %gate = sinter.slice %p {starts = array<i64: 0, 0>, ends = array<i64: 2, 4>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %up = sinter.slice %p {starts = array<i64: 0, 4>, ends = array<i64: 2, 8>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %y = sinter.silu_mul %gate, %up : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// -----

// Negative: slices of a quarter each are not the linear's gate|up halves.
// CHECK-LABEL: func.func @quarters
// CHECK: sinter.silu_mul
// CHECK-NOT: gate_up_columns
func.func @quarters(%x: tensor<2x16xbf16>) -> tensor<2x2xbf16> {
  %w = sinter.constant dense<0.5> : tensor<16x8xbf16>
  %p = sinter.linear %x, %w : (tensor<2x16xbf16>, tensor<16x8xbf16>) -> tensor<2x8xbf16>
  %gate = sinter.slice %p {starts = array<i64: 0, 0>, ends = array<i64: 2, 2>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x2xbf16>
  %up = sinter.slice %p {starts = array<i64: 0, 4>, ends = array<i64: 2, 6>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x2xbf16>
  %y = sinter.silu_mul %gate, %up : (tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
  return %y : tensor<2x2xbf16>
}

// -----

// GeGLU (Gemma): gelu_tanh(gate) * up, the product's operands commuted, an f32-scaled norm in
// the prologue; the linear records the activation.
// CHECK-LABEL: func.func @geglu
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{.+}} norm %{{.+}} {gate_activation = "gelu_tanh", gate_up_columns = array<i64: 0, 128>, norm_epsilon = 9.99999997E-7 : f32} : (tensor<1x6x64xbf16>, tensor<64x256xbf16>, tensor<64xf32>) -> tensor<1x6x128xbf16>
// CHECK-NOT: sinter.slice
// CHECK-NOT: "gelu_tanh" %
// CHECK: return %[[Y]]
func.func @geglu(%x: tensor<1x6x64xbf16>) -> tensor<1x6x128xbf16> {
  %g = sinter.constant dense<1.5> : tensor<64xf32>
  %w = sinter.constant dense<0.5> : tensor<64x256xbf16>
  %p = sinter.linear %x, %w norm %g {norm_epsilon = 9.99999997E-7 : f32} : (tensor<1x6x64xbf16>, tensor<64x256xbf16>, tensor<64xf32>) -> tensor<1x6x256xbf16>
  %gate = sinter.slice %p {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x256xbf16>) -> tensor<1x6x128xbf16>
  %up = sinter.slice %p {starts = array<i64: 0, 0, 128>, ends = array<i64: 1, 6, 256>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x256xbf16>) -> tensor<1x6x128xbf16>
  %a = sinter.unary "gelu_tanh" %gate : (tensor<1x6x128xbf16>) -> tensor<1x6x128xbf16>
  %y = sinter.mul %up, %a : (tensor<1x6x128xbf16>, tensor<1x6x128xbf16>) -> tensor<1x6x128xbf16>
  return %y : tensor<1x6x128xbf16>
}

// -----

// Negative: the activation is read elsewhere too, and the erf GeLU is no kernel epilogue.
// CHECK-LABEL: func.func @geglu_not_fused
// CHECK-NOT: gate_up_columns
// CHECK: return
func.func @geglu_not_fused(%x: tensor<2x16xbf16>) -> (tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<16x8xbf16>
  %p = sinter.linear %x, %w : (tensor<2x16xbf16>, tensor<16x8xbf16>) -> tensor<2x8xbf16>
  %gate = sinter.slice %p {starts = array<i64: 0, 0>, ends = array<i64: 2, 4>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %up = sinter.slice %p {starts = array<i64: 0, 4>, ends = array<i64: 2, 8>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %a = sinter.unary "gelu_tanh" %gate : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %y = sinter.mul %a, %up : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %p2 = sinter.linear %x, %w : (tensor<2x16xbf16>, tensor<16x8xbf16>) -> tensor<2x8xbf16>
  %gate2 = sinter.slice %p2 {starts = array<i64: 0, 0>, ends = array<i64: 2, 4>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %up2 = sinter.slice %p2 {starts = array<i64: 0, 4>, ends = array<i64: 2, 8>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %e = sinter.unary "gelu" %gate2 : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %y2 = sinter.mul %e, %up2 : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %y, %a, %y2 : tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16>
}
