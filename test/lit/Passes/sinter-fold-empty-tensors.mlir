// RUN: sinter-opt %s -split-input-file --sinter-fold-empty-tensors | FileCheck %s

// An op whose result holds no elements becomes an empty constant.
// CHECK-LABEL: func.func @empty_result
// CHECK: %[[E:.+]] = sinter.constant dense<> : tensor<0x4xf32>
// CHECK-NOT: sinter.add
// CHECK: return %[[E]]
func.func @empty_result(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %y = sinter.add %x, %x : (tensor<0x4xf32>, tensor<0x4xf32>) -> tensor<0x4xf32>
  return %y : tensor<0x4xf32>
}

// -----

// Reductions over no elements: their identities (ONNX's *_empty_set node tests).
// CHECK-LABEL: func.func @empty_reductions
// CHECK-DAG: sinter.constant dense<0.000000e+00> : tensor<2x1x4xf32>
// CHECK-DAG: sinter.constant dense<1.000000e+00> : tensor<2x1x4xf32>
// CHECK-DAG: sinter.constant dense<0xFF800000> : tensor<2x1x4xf32>
// CHECK-DAG: sinter.constant dense<0x7F800000> : tensor<2x1x4xf32>
// CHECK-DAG: sinter.constant dense<-9223372036854775808> : tensor<2x1x4xi64>
// CHECK-DAG: sinter.constant dense<0x7FC00000> : tensor<2x1x4xf32>
// CHECK-NOT: sinter.reduce
func.func @empty_reductions(%x: tensor<2x0x4xf32>, %i: tensor<2x0x4xi64>)
    -> (tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>,
        tensor<2x1x4xi64>, tensor<2x1x4xf32>) {
  %sum = sinter.reduce "sum" %x {axes = array<i64: 1>} : (tensor<2x0x4xf32>) -> tensor<2x1x4xf32>
  %prod = sinter.reduce "prod" %x {axes = array<i64: 1>} : (tensor<2x0x4xf32>) -> tensor<2x1x4xf32>
  %max = sinter.reduce "max" %x {axes = array<i64: 1>} : (tensor<2x0x4xf32>) -> tensor<2x1x4xf32>
  %min = sinter.reduce "min" %x {axes = array<i64: 1>} : (tensor<2x0x4xf32>) -> tensor<2x1x4xf32>
  %imax = sinter.reduce "max" %i {axes = array<i64: 1>} : (tensor<2x0x4xi64>) -> tensor<2x1x4xi64>
  %mean = sinter.reduce_mean %x {axes = array<i64: 1>} : (tensor<2x0x4xf32>) -> tensor<2x1x4xf32>
  return %sum, %prod, %max, %min, %imax, %mean : tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xi64>, tensor<2x1x4xf32>
}

// -----

// A product over K = 0 is zeros; a concat drops its empty operands.
// CHECK-LABEL: func.func @matmul_and_concat
// CHECK: %[[Z:.+]] = sinter.constant dense<0.000000e+00> : tensor<3x5xf32>
// CHECK: %[[C:.+]] = sinter.concat %arg2, %arg2 {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
// CHECK: return %[[Z]], %[[C]], %arg2
func.func @matmul_and_concat(%a: tensor<3x0xf32>, %b: tensor<0x5xf32>, %x: tensor<2x4xf32>, %e: tensor<0x4xf32>)
    -> (tensor<3x5xf32>, tensor<4x4xf32>, tensor<2x4xf32>) {
  %m = sinter.matmul %a, %b : (tensor<3x0xf32>, tensor<0x5xf32>) -> tensor<3x5xf32>
  %c = sinter.concat %x, %e, %x {axis = 0 : i64} : (tensor<2x4xf32>, tensor<0x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %d = sinter.concat %e, %x {axis = 0 : i64} : (tensor<0x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %m, %c, %d : tensor<3x5xf32>, tensor<4x4xf32>, tensor<2x4xf32>
}

// -----

// Negative: non-empty values stay, and so does an arg_reduce of an empty axis (it has no
// answer; the lowering refuses it).
// CHECK-LABEL: func.func @untouched
// CHECK: sinter.add
// CHECK: sinter.arg_reduce
func.func @untouched(%x: tensor<2x4xf32>, %e: tensor<2x0xf32>) -> (tensor<2x4xf32>, tensor<2x1xi64>) {
  %y = sinter.add %x, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %i = sinter.arg_reduce "max" %e {axis = 1 : i64} : (tensor<2x0xf32>) -> tensor<2x1xi64>
  return %y, %i : tensor<2x4xf32>, tensor<2x1xi64>
}
