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

// -----

// A Gemm-based export (GPT-2's Conv1D): flatten to [rows, K], addmm, view back as [..., N].
// The linear takes the [1, 6, K] tensor itself; the attention output's [1, 6, 4, 16] -> [6, 64]
// is viewed as [1, 6, 64] instead.
// CHECK-LABEL: func.func @unflatten
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{[^ ]+}} bias %{{[^ ]+}} : (tensor<1x6x64xf32>, tensor<64x192xf32>, tensor<192xf32>) -> tensor<1x6x192xf32>
// CHECK: %[[H:.+]] = sinter.reshape %arg1, %{{.+}} : (tensor<1x6x4x16xf32>, tensor<3xi64>) -> tensor<1x6x64xf32>
// CHECK: %[[Z:.+]] = sinter.linear %[[H]], %{{[^ ]+}} : (tensor<1x6x64xf32>, tensor<64x64xf32>) -> tensor<1x6x64xf32>
// CHECK: return %[[Y]], %[[Z]]
func.func @unflatten(%x: tensor<1x6x64xf32>, %heads: tensor<1x6x4x16xf32>) -> (tensor<1x6x192xf32>, tensor<1x6x64xf32>) {
  %flat = sinter.constant dense<[-1, 64]> : tensor<2xi64>
  %s192 = sinter.constant dense<[1, 6, 192]> : tensor<3xi64>
  %s64 = sinter.constant dense<[1, 6, 64]> : tensor<3xi64>
  %w = sinter.constant dense<1.0> : tensor<64x192xf32>
  %b = sinter.constant dense<0.5> : tensor<192xf32>
  %wo = sinter.constant dense<1.0> : tensor<64x64xf32>
  %x2 = sinter.reshape %x, %flat : (tensor<1x6x64xf32>, tensor<2xi64>) -> tensor<6x64xf32>
  %m = sinter.matmul %x2, %w : (tensor<6x64xf32>, tensor<64x192xf32>) -> tensor<6x192xf32>
  %a = sinter.add %b, %m : (tensor<192xf32>, tensor<6x192xf32>) -> tensor<6x192xf32>
  %y = sinter.reshape %a, %s192 : (tensor<6x192xf32>, tensor<3xi64>) -> tensor<1x6x192xf32>
  %h2 = sinter.reshape %heads, %flat : (tensor<1x6x4x16xf32>, tensor<2xi64>) -> tensor<6x64xf32>
  %o = sinter.matmul %h2, %wo : (tensor<6x64xf32>, tensor<64x64xf32>) -> tensor<6x64xf32>
  %z = sinter.reshape %o, %s64 : (tensor<6x64xf32>, tensor<3xi64>) -> tensor<1x6x64xf32>
  return %y, %z : tensor<1x6x192xf32>, tensor<1x6x64xf32>
}

// -----

// Negative: a view that splits the feature axis ([6, 192] as [1, 6, 2, 96]), and a 2-D result
// with a second user, stay 2-D linears.
// CHECK-LABEL: func.func @not_unflattened
// CHECK: sinter.linear %arg0, %{{[^ ]+}} : (tensor<6x64xf32>, tensor<64x192xf32>) -> tensor<6x192xf32>
// CHECK: sinter.linear %arg0, %{{[^ ]+}} : (tensor<6x64xf32>, tensor<64x192xf32>) -> tensor<6x192xf32>
func.func @not_unflattened(%x: tensor<6x64xf32>) -> (tensor<1x6x2x96xf32>, tensor<1x6x192xf32>, tensor<6x192xf32>) {
  %split = sinter.constant dense<[1, 6, 2, 96]> : tensor<4xi64>
  %s192 = sinter.constant dense<[1, 6, 192]> : tensor<3xi64>
  %w = sinter.constant dense<1.0> : tensor<64x192xf32>
  %w2 = sinter.constant dense<2.0> : tensor<64x192xf32>
  %m = sinter.matmul %x, %w : (tensor<6x64xf32>, tensor<64x192xf32>) -> tensor<6x192xf32>
  %y = sinter.reshape %m, %split : (tensor<6x192xf32>, tensor<4xi64>) -> tensor<1x6x2x96xf32>
  %m2 = sinter.matmul %x, %w2 : (tensor<6x64xf32>, tensor<64x192xf32>) -> tensor<6x192xf32>
  %z = sinter.reshape %m2, %s192 : (tensor<6x192xf32>, tensor<3xi64>) -> tensor<1x6x192xf32>
  return %y, %z, %m2 : tensor<1x6x2x96xf32>, tensor<1x6x192xf32>, tensor<6x192xf32>
}
