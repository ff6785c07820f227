// RUN: sinter-opt %s | sinter-opt | FileCheck %s
// RUN: sinter-opt %s --sinter-fold-constants | FileCheck %s --check-prefix=FOLD

// CHECK-LABEL: func.func @round_trip
// CHECK: sinter.unary "leaky_relu" %arg0 {alpha = 1.000000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: sinter.unary "is_inf" %arg0 {alpha = 1.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xi1>
// CHECK: sinter.binary "mod" %arg1, %arg1 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK: sinter.binary "less" %arg0, %arg2 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
// CHECK: sinter.reduce "l2" %arg3 {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK: sinter.arg_reduce "max" %arg3 {axis = 2 : i64, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
// CHECK: sinter.log_softmax %arg3 {axis = 1 : i64}
// CHECK: sinter.cumulative %arg3 {axis = 1 : i64, exclusive = true, kind = "sum", reverse = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: sinter.layer_normalization %arg3, %arg4 bias %arg4 {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK: sinter.fusion_group(%arg0) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: sinter.yield
func.func @round_trip(%x: tensor<4xf32>, %i: tensor<4xi64>, %s: tensor<1xf32>, %t: tensor<2x3x4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %0 = sinter.unary "leaky_relu" %x {alpha = 0.1 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = sinter.unary "is_inf" %x {alpha = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xi1>
  %2 = sinter.binary "mod" %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %3 = sinter.binary "less" %x, %s : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  %4 = sinter.reduce "l2" %t {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %5 = sinter.arg_reduce "max" %t {axis = 2 : i64, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  %6 = sinter.log_softmax %t {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %cs = sinter.cumulative %t {kind = "sum", axis = 1 : i64, exclusive = true, reverse = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %7 = sinter.layer_normalization %t, %w bias %w {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %8 = sinter.fusion_group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %n = sinter.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    sinter.yield %n : tensor<4xf32>
  }
  return %8 : tensor<4xf32>
}

// The folders evaluate the scalar function table on the host (mod follows the divisor's sign).
// FOLD-LABEL: func.func @folds
// FOLD-DAG: sinter.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// FOLD-DAG: sinter.constant dense<[2, 1]> : tensor<2xi64>
// FOLD-NOT: sinter.unary
// FOLD-NOT: sinter.binary
func.func @folds() -> (tensor<2xf32>, tensor<2xi64>) {
  %x = sinter.constant dense<[1.0, -3.0]> : tensor<2xf32>
  %r = sinter.unary "relu" %x : (tensor<2xf32>) -> tensor<2xf32>
  %a = sinter.constant dense<[-7, 7]> : tensor<2xi64>
  %b = sinter.constant dense<3> : tensor<i64>
  %m = sinter.binary "mod" %a, %b : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %r, %m : tensor<2xf32>, tensor<2xi64>
}

// Integer folds are exact at the ends of the range (no overflow: abs of the minimum stays the
// minimum, x mod -1 is 0).
// FOLD-LABEL: func.func @int_edges
// FOLD-DAG: sinter.constant dense<-9223372036854775808> : tensor<1xi64>
// FOLD-DAG: sinter.constant dense<0> : tensor<1xi64>
func.func @int_edges() -> (tensor<1xi64>, tensor<1xi64>) {
  %m = sinter.constant dense<-9223372036854775808> : tensor<1xi64>
  %n = sinter.constant dense<-1> : tensor<1xi64>
  %a = sinter.unary "abs" %m : (tensor<1xi64>) -> tensor<1xi64>
  %r = sinter.binary "mod" %m, %n : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %a, %r : tensor<1xi64>, tensor<1xi64>
}
