// RUN: sinter-opt %s -split-input-file --sinter-fold-constants | FileCheck %s

// A transposed initializer becomes a constant holding the transposed data.
// CHECK-LABEL: func.func @transpose_initializer
// CHECK-NOT: sinter.transpose
// CHECK: %[[W:.+]] = sinter.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: sinter.matmul %arg0, %[[W]]
func.func @transpose_initializer(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = sinter.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %t = sinter.transpose %w, [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = sinter.matmul %x, %t : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// A 3-D bf16 transpose (2-byte elements) moving every axis: out[i, j, k] = w[k, i, j].
// CHECK-LABEL: func.func @transpose_3d_bf16
// CHECK: sinter.constant dense<{{\[}}{{\[}}[0.000000e+00, 6.000000e+00], [1.000000e+00, 7.000000e+00], [2.000000e+00, 8.000000e+00]], {{\[}}[3.000000e+00, 9.000000e+00], [4.000000e+00, 1.000000e+01], [5.000000e+00, 1.100000e+01]]]> : tensor<2x3x2xbf16>
func.func @transpose_3d_bf16() -> tensor<2x3x2xbf16> {
  %w = sinter.constant dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]> : tensor<2x2x3xbf16>
  %t = sinter.transpose %w, [1, 2, 0] : (tensor<2x2x3xbf16>) -> tensor<2x3x2xbf16>
  return %t : tensor<2x3x2xbf16>
}

// -----

// Booleans (stored one bit each) move as values: out[i, j, k] = w[k, i, j].
// CHECK-LABEL: func.func @transpose_3d_bool
// CHECK: sinter.constant dense<{{\[}}{{\[}}[true, false], [false, false], [true, true]], {{\[}}[false, true], [true, false], [true, false]]]> : tensor<2x3x2xi1>
func.func @transpose_3d_bool() -> tensor<2x3x2xi1> {
  %w = sinter.constant dense<[[[true, false, true], [false, true, true]], [[false, false, true], [true, false, false]]]> : tensor<2x2x3xi1>
  %t = sinter.transpose %w, [1, 2, 0] : (tensor<2x2x3xi1>) -> tensor<2x3x2xi1>
  return %t : tensor<2x3x2xi1>
}

// -----

// Swapping the last two axes (the tiled path), with a leading batch axis kept.
// CHECK-LABEL: func.func @transpose_last_two
// CHECK: sinter.constant dense<{{\[}}{{\[}}[0.000000e+00, 3.000000e+00], [1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00]], {{\[}}[6.000000e+00, 9.000000e+00], [7.000000e+00, 1.000000e+01], [8.000000e+00, 1.100000e+01]]]> : tensor<2x3x2xbf16>
func.func @transpose_last_two() -> tensor<2x3x2xbf16> {
  %w = sinter.constant dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]> : tensor<2x2x3xbf16>
  %t = sinter.transpose %w, [0, 2, 1] : (tensor<2x2x3xbf16>) -> tensor<2x3x2xbf16>
  return %t : tensor<2x3x2xbf16>
}

// -----

// Shape arithmetic on i64 constants folds, broadcasting included.
// CHECK-LABEL: func.func @shape_math
// CHECK: %[[C:.+]] = sinter.constant dense<[7, 10]> : tensor<2xi64>
// CHECK-NEXT: return %[[C]]
func.func @shape_math() -> tensor<2xi64> {
  %a = sinter.constant dense<[2, 3]> : tensor<2xi64>
  %b = sinter.constant dense<3> : tensor<i64>
  %m = sinter.mul %a, %b : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %one = sinter.constant dense<1> : tensor<i64>
  %s = sinter.add %m, %one : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

// Masks: comparisons and selects on constants fold to constants.
// CHECK-LABEL: func.func @mask
// CHECK: sinter.constant dense<[0.000000e+00, -1.000000e+09]> : tensor<2xf32>
// CHECK-NOT: sinter.where
func.func @mask() -> tensor<2xf32> {
  %a = sinter.constant dense<[1, 2]> : tensor<2xi64>
  %b = sinter.constant dense<1> : tensor<i64>
  %eq = sinter.equal %a, %b : (tensor<2xi64>, tensor<i64>) -> tensor<2xi1>
  %zero = sinter.constant dense<0.0> : tensor<f32>
  %ninf = sinter.constant dense<-1.0e9> : tensor<f32>
  %m = sinter.where %eq, %zero, %ninf : (tensor<2xi1>, tensor<f32>, tensor<f32>) -> tensor<2xf32>
  return %m : tensor<2xf32>
}

// -----

// Casts between float types round to the target type.
// CHECK-LABEL: func.func @cast_to_bf16
// CHECK: sinter.constant dense<1.007810e+00> : tensor<bf16>
func.func @cast_to_bf16() -> tensor<bf16> {
  %a = sinter.constant dense<1.01> : tensor<f32>
  %c = sinter.cast %a : (tensor<f32>) -> tensor<bf16>
  return %c : tensor<bf16>
}

// -----

// Negative: ops reading a function argument stay.
// CHECK-LABEL: func.func @runtime_value
// CHECK: sinter.add %arg0
// CHECK: sinter.sqrt
func.func @runtime_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = sinter.constant dense<1.0> : tensor<4xf32>
  %a = sinter.add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = sinter.sqrt %a : (tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Negative: integer division by zero is left for the runtime to report, not folded.
// CHECK-LABEL: func.func @div_by_zero
// CHECK: sinter.div
func.func @div_by_zero() -> tensor<i64> {
  %a = sinter.constant dense<4> : tensor<i64>
  %z = sinter.constant dense<0> : tensor<i64>
  %d = sinter.div %a, %z : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %d : tensor<i64>
}
