// RUN: sinter-opt %s -split-input-file --sinter-form-linear | FileCheck %s

// CHECK-LABEL: func.func @matmul_bias
// CHECK: %[[W:.+]] = sinter.constant {{.*}} : tensor<4x3xf32>
// CHECK: %[[B:.+]] = sinter.constant {{.*}} : tensor<3xf32>
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %[[W]] bias %[[B]] : (tensor<1x2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<1x2x3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_bias(%x: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  %w = sinter.constant dense<1.0> : tensor<4x3xf32>
  %b = sinter.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %m = sinter.matmul %x, %w : (tensor<1x2x4xf32>, tensor<4x3xf32>) -> tensor<1x2x3xf32>
  %y = sinter.add %b, %m : (tensor<3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}

// -----

// A bias given as [1, N] is flattened to [N].
// CHECK-LABEL: func.func @bias_rank2
// CHECK: sinter.linear %arg0, %{{.+}} bias %{{.+}} : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @bias_rank2(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = sinter.constant dense<1.0> : tensor<4x3xf32>
  %b = sinter.constant dense<2.0> : tensor<1x3xf32>
  %m = sinter.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %y = sinter.add %m, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Negative: a matmul of two activations is not a linear layer.
// CHECK-LABEL: func.func @activation_rhs
// CHECK: sinter.matmul
// CHECK-NOT: sinter.linear
func.func @activation_rhs(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %m = sinter.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %m : tensor<2x3xf32>
}

// -----

// Negative: a constant added along another dimension is not a bias; the linear forms alone.
// CHECK-LABEL: func.func @not_a_bias
// CHECK: %[[L:.+]] = sinter.linear %arg0, %{{[^,]+}} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK: sinter.add %[[L]]
func.func @not_a_bias(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = sinter.constant dense<1.0> : tensor<4x3xf32>
  %b = sinter.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %m = sinter.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %y = sinter.add %m, %b : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Negative: the bias add is not fused into a linear whose result has another user.
// CHECK-LABEL: func.func @shared_linear
// CHECK: %[[L:.+]] = sinter.linear %arg0, %{{[^,]+}} :
// CHECK: sinter.add %[[L]]
func.func @shared_linear(%x: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %w = sinter.constant dense<1.0> : tensor<4x3xf32>
  %b = sinter.constant dense<1.0> : tensor<3xf32>
  %m = sinter.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %y = sinter.add %m, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y, %m : tensor<2x3xf32>, tensor<2x3xf32>
}
