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
