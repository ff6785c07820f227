// RUN: sinter-opt %s -split-input-file | sinter-opt -split-input-file | FileCheck %s
// RUN: sinter-opt %s -split-input-file --sinter-fold-constants | FileCheck %s --check-prefix=FOLD

// CHECK-LABEL: func.func @round_trip
// CHECK: sinter.less_or_equal %arg0, %arg1 : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
// CHECK: sinter.max %arg0, %arg1 : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
// CHECK: sinter.cos %arg2 : (tensor<2xf32>) -> tensor<2xf32>
// CHECK: sinter.sin %arg2 : (tensor<2xf32>) -> tensor<2xf32>
func.func @round_trip(%a: tensor<3xi64>, %b: tensor<3xi64>, %x: tensor<2xf32>)
    -> (tensor<3xi1>, tensor<3xi64>, tensor<2xf32>, tensor<2xf32>) {
  %le = sinter.less_or_equal %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %mx = sinter.max %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %c = sinter.cos %x : (tensor<2xf32>) -> tensor<2xf32>
  %s = sinter.sin %x : (tensor<2xf32>) -> tensor<2xf32>
  return %le, %mx, %c, %s : tensor<3xi1>, tensor<3xi64>, tensor<2xf32>, tensor<2xf32>
}

// -----

// FOLD-LABEL: func.func @fold
// FOLD-DAG: sinter.constant dense<[true, true, false]> : tensor<3xi1>
// FOLD-DAG: sinter.constant dense<[2, 2, 3]> : tensor<3xi64>
// FOLD-DAG: sinter.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>
// FOLD-DAG: sinter.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
func.func @fold() -> (tensor<3xi1>, tensor<3xi64>, tensor<2xf32>, tensor<2xf32>) {
  %a = sinter.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = sinter.constant dense<2> : tensor<i64>
  %le = sinter.less_or_equal %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %mx = sinter.max %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %x = sinter.constant dense<[0.0, 3.14159274]> : tensor<2xf32>
  %h = sinter.constant dense<[0.0, 1.57079637]> : tensor<2xf32>
  %c = sinter.cos %x : (tensor<2xf32>) -> tensor<2xf32>
  %s = sinter.sin %h : (tensor<2xf32>) -> tensor<2xf32>
  return %le, %mx, %c, %s : tensor<3xi1>, tensor<3xi64>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Products of constants fold (RoPE's positions x inverse frequencies), batched and broadcast.
// FOLD-LABEL: func.func @matmul
// FOLD: sinter.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00], [0.000000e+00, 5.000000e-01, 1.000000e+00]]]> : tensor<1x2x3xf32>
// FOLD-NOT: sinter.matmul
func.func @matmul() -> tensor<1x2x3xf32> {
  %f = sinter.constant dense<[[[1.0], [0.5]]]> : tensor<1x2x1xf32>
  %p = sinter.constant dense<[[[0.0, 1.0, 2.0]]]> : tensor<1x1x3xf32>
  %m = sinter.matmul %f, %p : (tensor<1x2x1xf32>, tensor<1x1x3xf32>) -> tensor<1x2x3xf32>
  return %m : tensor<1x2x3xf32>
}

// -----

// Negative: a product with a function argument stays.
// FOLD-LABEL: func.func @runtime_matmul
// FOLD: sinter.matmul
func.func @runtime_matmul(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = sinter.constant dense<1.0> : tensor<2x2xf32>
  %m = sinter.matmul %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}
