// RUN: sinter-opt %s -split-input-file --sinter-expand-gemm | FileCheck %s

// CHECK-LABEL: func.func @gemm
// CHECK: %[[BT:.+]] = sinter.transpose %arg1, [1, 0] : (tensor<5x4xf32>) -> tensor<4x5xf32>
// CHECK: %[[P:.+]] = sinter.matmul %arg0, %[[BT]] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK: %[[ALPHA:.+]] = sinter.constant dense<2.500000e-01> : tensor<f32>
// CHECK: %[[S:.+]] = sinter.mul %[[P]], %[[ALPHA]]
// CHECK: %[[BETA:.+]] = sinter.constant dense<3.000000e+00> : tensor<f32>
// CHECK: %[[C:.+]] = sinter.mul %arg2, %[[BETA]]
// CHECK: %[[Y:.+]] = sinter.add %[[S]], %[[C]]
// CHECK: return %[[Y]]
func.func @gemm(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>, %c: tensor<5xf32>) -> tensor<3x5xf32> {
  %y = sinter.gemm %a, %b, %c {alpha = 0.25 : f32, beta = 3.0 : f32, trans_b = true} : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

// Default alpha and beta, no C: a plain matmul (A transposed).
// CHECK-LABEL: func.func @plain
// CHECK: %[[AT:.+]] = sinter.transpose %arg0, [1, 0]
// CHECK-NEXT: %[[P:.+]] = sinter.matmul %[[AT]], %arg1
// CHECK-NEXT: return %[[P]]
func.func @plain(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %y = sinter.gemm %a, %b {trans_a = true} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

// Negative: an integer Gemm is left as it is.
// CHECK-LABEL: func.func @integer
// CHECK: sinter.gemm
func.func @integer(%a: tensor<2x2xi64>, %b: tensor<2x2xi64>) -> tensor<2x2xi64> {
  %y = sinter.gemm %a, %b : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  return %y : tensor<2x2xi64>
}
