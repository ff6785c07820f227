// RUN: sinter-opt %s -split-input-file --sinter-fuse-linear-epilogue | FileCheck %s

// An unmerged LoRA adapter: the scale folds into B, the sum into the base GEMM's epilogue.
// CHECK-LABEL: func.func @unmerged_lora
// CHECK: %[[B2:.+]] = sinter.constant dense<1.000000e+00> : tensor<1x2xf32>
// CHECK: %[[DOWN:.+]] = sinter.linear %arg0, %{{.+}} : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
// CHECK: %[[UP:.+]] = sinter.linear %[[DOWN]], %[[B2]] : (tensor<3x1xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{.+}} bias %{{.+}} residual %[[UP]]
// CHECK-NEXT: return %[[Y]]
func.func @unmerged_lora(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = sinter.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %b = sinter.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %a = sinter.constant dense<1.0> : tensor<2x1xf32>
  %bb = sinter.constant dense<0.5> : tensor<1x2xf32>
  %s = sinter.constant dense<2.0> : tensor<f32>
  %base = sinter.linear %x, %w bias %b : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %down = sinter.linear %x, %a : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  %up = sinter.linear %down, %bb : (tensor<3x1xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  %scaled = sinter.mul %up, %s : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %y = sinter.add %base, %scaled : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// A residual connection from the block input.
// CHECK-LABEL: func.func @residual_input
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{.+}} residual %arg0 : (tensor<2x4xbf16>, tensor<4x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @residual_input(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %w = sinter.constant dense<1.0> : tensor<4x4xbf16>
  %l = sinter.linear %x, %w : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
  %y = sinter.add %x, %l : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// -----

// Negative: a broadcast addend is not a residual, and a constant one stays a separate add.
// CHECK-LABEL: func.func @not_residual
// CHECK: sinter.add %{{.+}}, %arg1
// CHECK: sinter.add %{{.+}}, %{{.+}} :
func.func @not_residual(%x: tensor<2x4xf32>, %r: tensor<1x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = sinter.constant dense<1.0> : tensor<4x4xf32>
  %c = sinter.constant dense<1.0> : tensor<2x4xf32>
  %l = sinter.linear %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %y = sinter.add %l, %r : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %l2 = sinter.linear %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %z = sinter.add %l2, %c : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y, %z : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Negative: a scale on a linear with a bias cannot move into the weight alone.
// CHECK-LABEL: func.func @scaled_biased
// CHECK: sinter.mul
func.func @scaled_biased(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = sinter.constant dense<1.0> : tensor<4x4xf32>
  %b = sinter.constant dense<1.0> : tensor<4xf32>
  %s = sinter.constant dense<3.0> : tensor<f32>
  %l = sinter.linear %x, %w bias %b : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %y = sinter.mul %l, %s : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
