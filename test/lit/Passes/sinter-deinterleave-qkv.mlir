// RUN: sinter-opt %s -split-input-file --sinter-deinterleave-qkv | FileCheck %s

// GPT-NeoX's query_key_value: 2 heads of 2, each head's columns [q | k | v]. The weight's
// columns become all q heads, all k heads, all v heads (column c of the new layout is column
// h * 6 + part * 2 + e of the old), the bias alike, and each part is a slice of its block.
// CHECK-LABEL: func.func @interleaved
// CHECK-DAG: %[[W:.+]] = sinter.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 6.000000e+00, 7.000000e+00, 2.000000e+00, 3.000000e+00, 8.000000e+00, 9.000000e+00, 4.000000e+00, 5.000000e+00, 1.000000e+01, 1.100000e+01]]> : tensor<1x12xf32>
// CHECK-DAG: %[[B:.+]] = sinter.constant dense<[1.000000e+02, 1.010000e+02, 1.060000e+02, 1.070000e+02, 1.020000e+02, 1.030000e+02, 1.080000e+02, 1.090000e+02, 1.040000e+02, 1.050000e+02, 1.100000e+02, 1.110000e+02]> : tensor<12xf32>
// CHECK: %[[L:.+]] = sinter.linear %arg0, %[[W]] bias %[[B]]
// CHECK: %[[Q:.+]] = sinter.slice %[[L]] {ends = array<i64: 1, 3, 4>, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>}
// CHECK: %[[Q4:.+]] = sinter.reshape %[[Q]], %{{.+}} : (tensor<1x3x4xf32>, tensor<4xi64>) -> tensor<1x3x2x2xf32>
// CHECK: %[[QT:.+]] = sinter.transpose %[[Q4]], [0, 2, 1, 3] : (tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
// CHECK: %[[K:.+]] = sinter.slice %[[L]] {ends = array<i64: 1, 3, 8>, starts = array<i64: 0, 0, 4>
// CHECK: %[[V:.+]] = sinter.slice %[[L]] {ends = array<i64: 1, 3, 12>, starts = array<i64: 0, 0, 8>
// CHECK-NOT: tensor<1x3x2x6xf32>
// CHECK: return %[[QT]]
func.func @interleaved(%x: tensor<1x3x1xf32>) -> (tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>) {
  %w = sinter.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]]> : tensor<1x12xf32>
  %b = sinter.constant dense<[100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0]> : tensor<12xf32>
  %qkv = sinter.linear %x, %w bias %b : (tensor<1x3x1xf32>, tensor<1x12xf32>, tensor<12xf32>) -> tensor<1x3x12xf32>
  %shape = sinter.constant dense<[1, 3, 2, 6]> : tensor<4xi64>
  %h = sinter.reshape %qkv, %shape : (tensor<1x3x12xf32>, tensor<4xi64>) -> tensor<1x3x2x6xf32>
  %t = sinter.transpose %h, [0, 2, 1, 3] : (tensor<1x3x2x6xf32>) -> tensor<1x2x3x6xf32>
  %q = sinter.slice %t {ends = array<i64: 1, 2, 3, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x2xf32>
  %k = sinter.slice %t {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x2xf32>
  %v = sinter.slice %t {ends = array<i64: 1, 2, 3, 6>, starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x2xf32>
  return %q, %k, %v : tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>
}

// -----

// Negative: the heads are read whole as well (a fourth user of the transpose), and a
// projection whose weight is not a constant: both left as they are.
// CHECK-LABEL: func.func @not_only_the_parts
// CHECK: sinter.transpose %{{.+}}, [0, 2, 1, 3] : (tensor<1x3x2x6xf32>) -> tensor<1x2x3x6xf32>
// CHECK: sinter.transpose %{{.+}}, [0, 2, 1, 3] : (tensor<1x3x2x6xf32>) -> tensor<1x2x3x6xf32>
func.func @not_only_the_parts(%x: tensor<1x3x1xf32>, %wv: tensor<1x12xf32>) -> (tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x6xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>) {
  %w = sinter.constant dense<0.5> : tensor<1x12xf32>
  %qkv = sinter.linear %x, %w : (tensor<1x3x1xf32>, tensor<1x12xf32>) -> tensor<1x3x12xf32>
  %shape = sinter.constant dense<[1, 3, 2, 6]> : tensor<4xi64>
  %h = sinter.reshape %qkv, %shape : (tensor<1x3x12xf32>, tensor<4xi64>) -> tensor<1x3x2x6xf32>
  %t = sinter.transpose %h, [0, 2, 1, 3] : (tensor<1x3x2x6xf32>) -> tensor<1x2x3x6xf32>
  %q = sinter.slice %t {ends = array<i64: 1, 2, 3, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x2xf32>
  %k = sinter.slice %t {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x2xf32>
  %v = sinter.slice %t {ends = array<i64: 1, 2, 3, 6>, starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x2xf32>
  %qkv2 = sinter.linear %x, %wv : (tensor<1x3x1xf32>, tensor<1x12xf32>) -> tensor<1x3x12xf32>
  %h2 = sinter.reshape %qkv2, %shape : (tensor<1x3x12xf32>, tensor<4xi64>) -> tensor<1x3x2x6xf32>
  %t2 = sinter.transpose %h2, [0, 2, 1, 3] : (tensor<1x3x2x6xf32>) -> tensor<1x2x3x6xf32>
  %q2 = sinter.slice %t2 {ends = array<i64: 1, 2, 3, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x2xf32>
  %k2 = sinter.slice %t2 {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x2xf32>
  %v2 = sinter.slice %t2 {ends = array<i64: 1, 2, 3, 6>, starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x2xf32>
  return %q, %k, %v, %t, %q2, %k2, %v2 : tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x6xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>
}

// -----

// Negative: slices that are not whole thirds of a head (q of 3 columns, k of 1) are not a
// q | k | v interleaving.
// CHECK-LABEL: func.func @uneven_parts
// CHECK: sinter.reshape %{{.+}} -> tensor<1x3x2x6xf32>
func.func @uneven_parts(%x: tensor<1x3x1xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x1xf32>, tensor<1x2x3x2xf32>) {
  %w = sinter.constant dense<0.5> : tensor<1x12xf32>
  %qkv = sinter.linear %x, %w : (tensor<1x3x1xf32>, tensor<1x12xf32>) -> tensor<1x3x12xf32>
  %shape = sinter.constant dense<[1, 3, 2, 6]> : tensor<4xi64>
  %h = sinter.reshape %qkv, %shape : (tensor<1x3x12xf32>, tensor<4xi64>) -> tensor<1x3x2x6xf32>
  %t = sinter.transpose %h, [0, 2, 1, 3] : (tensor<1x3x2x6xf32>) -> tensor<1x2x3x6xf32>
  %q = sinter.slice %t {ends = array<i64: 1, 2, 3, 3>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x3xf32>
  %k = sinter.slice %t {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 3>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x1xf32>
  %v = sinter.slice %t {ends = array<i64: 1, 2, 3, 6>, starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x6xf32>) -> tensor<1x2x3x2xf32>
  return %q, %k, %v : tensor<1x2x3x3xf32>, tensor<1x2x3x1xf32>, tensor<1x2x3x2xf32>
}
