// RUN: sinter-opt %s -split-input-file --sinter-fuse-linear-prologue | FileCheck %s

// CHECK-LABEL: func.func @norm_then_linear
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{.+}} norm %{{.+}} {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64x32xbf16>, tensor<64xbf16>) -> tensor<1x6x32xbf16>
// CHECK-NOT: sinter.rms_normalization
// CHECK: return %[[Y]]
func.func @norm_then_linear(%x: tensor<1x6x64xbf16>) -> tensor<1x6x32xbf16> {
  %g = sinter.constant dense<1.0> : tensor<64xbf16>
  %w = sinter.constant dense<0.5> : tensor<64x32xbf16>
  %n = sinter.rms_normalization %x, %g {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64xbf16>) -> tensor<1x6x64xbf16>
  %y = sinter.linear %n, %w : (tensor<1x6x64xbf16>, tensor<64x32xbf16>) -> tensor<1x6x32xbf16>
  return %y : tensor<1x6x32xbf16>
}

// -----

// The residual survives the fusion; the normalization stays for its other user.
// CHECK-LABEL: func.func @shared_norm
// CHECK: %[[N:.+]] = sinter.rms_normalization %arg0
// CHECK: sinter.linear %arg0, %{{.+}} residual %arg0 norm %{{.+}} {norm_epsilon
// CHECK: return %{{.+}}, %[[N]]
func.func @shared_norm(%x: tensor<2x64xbf16>) -> (tensor<2x64xbf16>, tensor<2x64xbf16>) {
  %g = sinter.constant dense<1.0> : tensor<64xbf16>
  %w = sinter.constant dense<0.5> : tensor<64x64xbf16>
  %n = sinter.rms_normalization %x, %g {axis = 1 : i64, epsilon = 1.0E-5 : f32} : (tensor<2x64xbf16>, tensor<64xbf16>) -> tensor<2x64xbf16>
  %y = sinter.linear %n, %w residual %x : (tensor<2x64xbf16>, tensor<64x64xbf16>, tensor<2x64xbf16>) -> tensor<2x64xbf16>
  return %y, %n : tensor<2x64xbf16>, tensor<2x64xbf16>
}

// -----

// Negative: a normalization over another axis is not a row prologue.
// CHECK-LABEL: func.func @other_axis
// CHECK: sinter.rms_normalization
// CHECK: sinter.linear %{{.+}}, %{{.+}} : (tensor<2x64xbf16>
func.func @other_axis(%x: tensor<2x64xbf16>) -> tensor<2x8xbf16> {
  %g = sinter.constant dense<1.0> : tensor<2x64xbf16>
  %w = sinter.constant dense<0.5> : tensor<64x8xbf16>
  %n = sinter.rms_normalization %x, %g {axis = 0 : i64, epsilon = 1.0E-5 : f32} : (tensor<2x64xbf16>, tensor<2x64xbf16>) -> tensor<2x64xbf16>
  %y = sinter.linear %n, %w : (tensor<2x64xbf16>, tensor<64x8xbf16>) -> tensor<2x8xbf16>
  return %y : tensor<2x8xbf16>
}

// -----

// Gemma / OLMo 2: the norm scales in f32 (an f32 weight, the (1 + w) folded) and one cast
// rounds back to bf16; the linear keeps the f32 weight (the kernel's RMS_NORM_FP32_WEIGHT).
// CHECK-LABEL: func.func @f32_scale_norm
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{.+}} norm %{{.+}} {norm_epsilon = 9.99999997E-7 : f32} : (tensor<1x2x64xbf16>, tensor<64x32xbf16>, tensor<64xf32>) -> tensor<1x2x32xbf16>
// CHECK-NOT: sinter.rms_normalization
// CHECK: return %[[Y]]
func.func @f32_scale_norm(%x: tensor<1x2x64xbf16>) -> tensor<1x2x32xbf16> {
  %g = sinter.constant dense<1.5> : tensor<64xf32>
  %w = sinter.constant dense<0.5> : tensor<64x32xbf16>
  %n = sinter.rms_normalization %x, %g {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<1x2x64xbf16>, tensor<64xf32>) -> tensor<1x2x64xf32>
  %c = sinter.cast %n : (tensor<1x2x64xf32>) -> tensor<1x2x64xbf16>
  %y = sinter.linear %c, %w : (tensor<1x2x64xbf16>, tensor<64x32xbf16>) -> tensor<1x2x32xbf16>
  return %y : tensor<1x2x32xbf16>
}

// -----

// Negative: the cast goes to another type than the normalized input's (f16 of a bf16 input),
// or the normalized input is f32 (the linear reads another type than the norm's input).
// CHECK-LABEL: func.func @f32_scale_norm_other_cast
// CHECK-COUNT-2: sinter.rms_normalization
// CHECK-NOT: norm %
// CHECK: return
func.func @f32_scale_norm_other_cast(%x: tensor<2x64xbf16>, %h: tensor<2x64xf32>) -> (tensor<2x32xf16>, tensor<2x32xbf16>) {
  %g = sinter.constant dense<1.5> : tensor<64xf32>
  %w = sinter.constant dense<0.5> : tensor<64x32xf16>
  %n = sinter.rms_normalization %x, %g {axis = 1 : i64, epsilon = 1.0E-5 : f32} : (tensor<2x64xbf16>, tensor<64xf32>) -> tensor<2x64xf32>
  %c = sinter.cast %n : (tensor<2x64xf32>) -> tensor<2x64xf16>
  %y = sinter.linear %c, %w : (tensor<2x64xf16>, tensor<64x32xf16>) -> tensor<2x32xf16>
  %wb = sinter.constant dense<0.5> : tensor<64x32xbf16>
  %n2 = sinter.rms_normalization %h, %g {axis = 1 : i64, epsilon = 1.0E-5 : f32} : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  %c2 = sinter.cast %n2 : (tensor<2x64xf32>) -> tensor<2x64xbf16>
  %y2 = sinter.linear %c2, %wb : (tensor<2x64xbf16>, tensor<64x32xbf16>) -> tensor<2x32xbf16>
  return %y, %y2 : tensor<2x32xf16>, tensor<2x32xbf16>
}

// -----

// GPT-2's LayerNorm before a projection: the scale and shift become the linear's norm and
// norm_bias (a LayerNorm prologue); one without a shift gets zeros.
// CHECK-LABEL: func.func @layer_norm_then_linear
// CHECK-DAG: %[[G:.+]] = sinter.constant dense<1.500000e+00> : tensor<64xbf16>
// CHECK-DAG: %[[B:.+]] = sinter.constant dense<2.500000e-01> : tensor<64xbf16>
// CHECK-DAG: %[[Z:.+]] = sinter.constant dense<0.000000e+00> : tensor<64xbf16>
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{[^ ]+}} bias %{{[^ ]+}} norm %[[G]] norm_bias %[[B]] {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64x32xbf16>, tensor<32xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<1x6x32xbf16>
// CHECK: %[[U:.+]] = sinter.linear %arg0, %{{[^ ]+}} norm %[[G]] norm_bias %[[Z]] {norm_epsilon = 9.99999974E-6 : f32}
// CHECK-NOT: sinter.layer_normalization
// CHECK: return %[[Y]], %[[U]]
func.func @layer_norm_then_linear(%x: tensor<1x6x64xbf16>) -> (tensor<1x6x32xbf16>, tensor<1x6x32xbf16>) {
  %g = sinter.constant dense<1.5> : tensor<64xbf16>
  %b = sinter.constant dense<0.25> : tensor<64xbf16>
  %w = sinter.constant dense<0.5> : tensor<64x32xbf16>
  %c = sinter.constant dense<0.125> : tensor<32xbf16>
  %n = sinter.layer_normalization %x, %g bias %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<1x6x64xbf16>
  %y = sinter.linear %n, %w bias %c : (tensor<1x6x64xbf16>, tensor<64x32xbf16>, tensor<32xbf16>) -> tensor<1x6x32xbf16>
  %m = sinter.layer_normalization %x, %g {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64xbf16>) -> tensor<1x6x64xbf16>
  %u = sinter.linear %m, %w : (tensor<1x6x64xbf16>, tensor<64x32xbf16>) -> tensor<1x6x32xbf16>
  return %y, %u : tensor<1x6x32xbf16>, tensor<1x6x32xbf16>
}

// -----

// Negative: a LayerNorm over the last two axes, and one whose scale is an argument (not known
// at compile time), stay.
// CHECK-LABEL: func.func @layer_norm_not_a_row_prologue
// CHECK-COUNT-2: sinter.layer_normalization
// CHECK-NOT: norm_bias
func.func @layer_norm_not_a_row_prologue(%x: tensor<1x6x64xbf16>, %g1: tensor<64xbf16>) -> (tensor<1x6x32xbf16>, tensor<1x6x32xbf16>) {
  %g2 = sinter.constant dense<1.5> : tensor<6x64xbf16>
  %w = sinter.constant dense<0.5> : tensor<64x32xbf16>
  %n = sinter.layer_normalization %x, %g2 {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<6x64xbf16>) -> tensor<1x6x64xbf16>
  %y = sinter.linear %n, %w : (tensor<1x6x64xbf16>, tensor<64x32xbf16>) -> tensor<1x6x32xbf16>
  %m = sinter.layer_normalization %x, %g1 {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64xbf16>) -> tensor<1x6x64xbf16>
  %u = sinter.linear %m, %w : (tensor<1x6x64xbf16>, tensor<64x32xbf16>) -> tensor<1x6x32xbf16>
  return %y, %u : tensor<1x6x32xbf16>, tensor<1x6x32xbf16>
}
