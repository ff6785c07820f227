// RUN: sinter-opt %s -split-input-file | sinter-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @shape
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xbf16>)
// CHECK: sinter.shape %[[X]] {end = 3 : i64, start = 1 : i64} : (tensor<2x3x4xbf16>) -> tensor<2xi64>
func.func @shape(%x: tensor<2x3x4xbf16>) -> tensor<2xi64> {
  %0 = sinter.shape %x {start = 1 : i64, end = 3 : i64} : (tensor<2x3x4xbf16>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @constant_of_shape
// CHECK-SAME: (%[[S:.+]]: tensor<2xi64>)
// CHECK: sinter.constant_of_shape %[[S]] {value = dense<0xFF800000> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<6x6xf32>
func.func @constant_of_shape(%s: tensor<2xi64>) -> tensor<6x6xf32> {
  %0 = sinter.constant_of_shape %s {value = dense<0xFF800000> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<6x6xf32>
  return %0 : tensor<6x6xf32>
}

// -----

// CHECK-LABEL: func.func @range
// CHECK-SAME: (%[[A:[^:]+]]: tensor<i64>, %[[B:[^:]+]]: tensor<i64>, %[[C:[^:]+]]: tensor<i64>)
// CHECK: sinter.range %[[A]], %[[B]], %[[C]] : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<6xi64>
func.func @range(%a: tensor<i64>, %b: tensor<i64>, %c: tensor<i64>) -> tensor<6xi64> {
  %0 = sinter.range %a, %b, %c : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<6xi64>
  return %0 : tensor<6xi64>
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[W:[^:]+]]: tensor<256x64xbf16>, %[[I:[^:]+]]: tensor<1x6xi64>)
// CHECK: sinter.gather %[[W]], %[[I]] {axis = 0 : i64} : (tensor<256x64xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
func.func @gather(%w: tensor<256x64xbf16>, %i: tensor<1x6xi64>) -> tensor<1x6x64xbf16> {
  %0 = sinter.gather %w, %i {axis = 0 : i64} : (tensor<256x64xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  return %0 : tensor<1x6x64xbf16>
}

// -----

// CHECK-LABEL: func.func @gather_scalar_index
// CHECK: sinter.gather %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<i32>) -> tensor<2x4xf32>
func.func @gather_scalar_index(%x: tensor<2x3x4xf32>, %i: tensor<i32>) -> tensor<2x4xf32> {
  %0 = sinter.gather %x, %i {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<i32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @gather_nd
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x6xi1>, %[[I:[^:]+]]: tensor<1x1x1x6x2xi64>)
// CHECK: sinter.gather_nd %[[X]], %[[I]] : (tensor<1x6xi1>, tensor<1x1x1x6x2xi64>) -> tensor<1x1x1x6xi1>
func.func @gather_nd(%x: tensor<1x6xi1>, %i: tensor<1x1x1x6x2xi64>) -> tensor<1x1x1x6xi1> {
  %0 = sinter.gather_nd %x, %i : (tensor<1x6xi1>, tensor<1x1x1x6x2xi64>) -> tensor<1x1x1x6xi1>
  return %0 : tensor<1x1x1x6xi1>
}

// -----

// CHECK-LABEL: func.func @gather_nd_batch
// CHECK: sinter.gather_nd %{{.+}}, %{{.+}} {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
func.func @gather_nd_batch(%x: tensor<2x3x4xf32>, %i: tensor<2x1xi64>) -> tensor<2x4xf32> {
  %0 = sinter.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_nd
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>, %[[I:[^:]+]]: tensor<5x2xi64>, %[[U:[^:]+]]: tensor<5x4xf32>)
// CHECK: sinter.scatter_nd %[[X]], %[[I]], %[[U]] : (tensor<2x3x4xf32>, tensor<5x2xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
func.func @scatter_nd(%x: tensor<2x3x4xf32>, %i: tensor<5x2xi64>, %u: tensor<5x4xf32>) -> tensor<2x3x4xf32> {
  %0 = sinter.scatter_nd %x, %i, %u : (tensor<2x3x4xf32>, tensor<5x2xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x6x16xbf16>)
// CHECK: sinter.slice %[[X]] {ends = array<i64: 1, 4, 6, 16>, starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x16xbf16>) -> tensor<1x4x6x8xbf16>
func.func @slice(%x: tensor<1x4x6x16xbf16>) -> tensor<1x4x6x8xbf16> {
  %0 = sinter.slice %x {starts = array<i64: 0, 0, 0, 8>, ends = array<i64: 1, 4, 6, 16>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x16xbf16>) -> tensor<1x4x6x8xbf16>
  return %0 : tensor<1x4x6x8xbf16>
}

// -----

// A reversed, strided slice: rows 4, 2, 0.
// CHECK-LABEL: func.func @slice_reverse
// CHECK: sinter.slice %{{.+}} {ends = array<i64: -1, 3>, starts = array<i64: 4, 0>, steps = array<i64: -2, 1>} : (tensor<5x3xf32>) -> tensor<3x3xf32>
func.func @slice_reverse(%x: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %0 = sinter.slice %x {starts = array<i64: 4, 0>, ends = array<i64: -1, 3>, steps = array<i64: -2, 1>} : (tensor<5x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:[^:]+]]: tensor<1x4x6x8xbf16>, %[[B:[^:]+]]: tensor<1x4x6x8xbf16>)
// CHECK: sinter.concat %[[A]], %[[B]] {axis = 3 : i64} : (tensor<1x4x6x8xbf16>, tensor<1x4x6x8xbf16>) -> tensor<1x4x6x16xbf16>
func.func @concat(%a: tensor<1x4x6x8xbf16>, %b: tensor<1x4x6x8xbf16>) -> tensor<1x4x6x16xbf16> {
  %0 = sinter.concat %a, %b {axis = 3 : i64} : (tensor<1x4x6x8xbf16>, tensor<1x4x6x8xbf16>) -> tensor<1x4x6x16xbf16>
  return %0 : tensor<1x4x6x16xbf16>
}

// -----

// CHECK-LABEL: func.func @unsqueeze
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x6x16xbf16>)
// CHECK: sinter.unsqueeze %[[X]] {axes = array<i64: 2>} : (tensor<1x2x6x16xbf16>) -> tensor<1x2x1x6x16xbf16>
func.func @unsqueeze(%x: tensor<1x2x6x16xbf16>) -> tensor<1x2x1x6x16xbf16> {
  %0 = sinter.unsqueeze %x {axes = array<i64: 2>} : (tensor<1x2x6x16xbf16>) -> tensor<1x2x1x6x16xbf16>
  return %0 : tensor<1x2x1x6x16xbf16>
}

// -----

// CHECK-LABEL: func.func @squeeze
// CHECK-SAME: (%[[X:.+]]: tensor<1x6x1xi64>)
// CHECK: sinter.squeeze %[[X]] {axes = array<i64: 0, 2>} : (tensor<1x6x1xi64>) -> tensor<6xi64>
func.func @squeeze(%x: tensor<1x6x1xi64>) -> tensor<6xi64> {
  %0 = sinter.squeeze %x {axes = array<i64: 0, 2>} : (tensor<1x6x1xi64>) -> tensor<6xi64>
  return %0 : tensor<6xi64>
}

// -----

// CHECK-LABEL: func.func @expand
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x2x1x6x16xbf16>, %[[S:[^:]+]]: tensor<5xi64>)
// CHECK: sinter.expand %[[X]], %[[S]] : (tensor<1x2x1x6x16xbf16>, tensor<5xi64>) -> tensor<1x2x2x6x16xbf16>
func.func @expand(%x: tensor<1x2x1x6x16xbf16>, %s: tensor<5xi64>) -> tensor<1x2x2x6x16xbf16> {
  %0 = sinter.expand %x, %s : (tensor<1x2x1x6x16xbf16>, tensor<5xi64>) -> tensor<1x2x2x6x16xbf16>
  return %0 : tensor<1x2x2x6x16xbf16>
}

// -----

// CHECK-LABEL: func.func @trilu
// CHECK-SAME: (%[[X:.+]]: tensor<6x6xi1>)
// CHECK: sinter.trilu %[[X]] {k = 1 : i64, upper = false} : (tensor<6x6xi1>) -> tensor<6x6xi1>
// CHECK: sinter.trilu %[[X]] : (tensor<6x6xi1>) -> tensor<6x6xi1>
func.func @trilu(%x: tensor<6x6xi1>) -> (tensor<6x6xi1>, tensor<6x6xi1>) {
  %0 = sinter.trilu %x {upper = false, k = 1 : i64} : (tensor<6x6xi1>) -> tensor<6x6xi1>
  %1 = sinter.trilu %x : (tensor<6x6xi1>) -> tensor<6x6xi1>
  return %0, %1 : tensor<6x6xi1>, tensor<6x6xi1>
}

// -----

// CHECK-LABEL: func.func @reduce_mean
// CHECK-SAME: (%[[X:.+]]: tensor<1x6x64xf32>)
// CHECK: sinter.reduce_mean %[[X]] {axes = array<i64: 2>} : (tensor<1x6x64xf32>) -> tensor<1x6x1xf32>
// CHECK: sinter.reduce_mean %[[X]] {axes = array<i64: 0, 2>, keepdims = false} : (tensor<1x6x64xf32>) -> tensor<6xf32>
func.func @reduce_mean(%x: tensor<1x6x64xf32>) -> (tensor<1x6x1xf32>, tensor<6xf32>) {
  %0 = sinter.reduce_mean %x {axes = array<i64: 2>} : (tensor<1x6x64xf32>) -> tensor<1x6x1xf32>
  %1 = sinter.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<1x6x64xf32>) -> tensor<6xf32>
  return %0, %1 : tensor<1x6x1xf32>, tensor<6xf32>
}

// -----

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x6x6xf32>)
// CHECK: sinter.softmax %[[X]] {axis = 3 : i64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
func.func @softmax(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %0 = sinter.softmax %x {axis = 3 : i64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// CHECK-LABEL: func.func @rms_normalization
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x6x64xbf16>, %[[W:[^:]+]]: tensor<64xbf16>)
// CHECK: sinter.rms_normalization %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64xbf16>) -> tensor<1x6x64xbf16>
func.func @rms_normalization(%x: tensor<1x6x64xbf16>, %w: tensor<64xbf16>) -> tensor<1x6x64xbf16> {
  %0 = sinter.rms_normalization %x, %w {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<1x6x64xbf16>, tensor<64xbf16>) -> tensor<1x6x64xbf16>
  return %0 : tensor<1x6x64xbf16>
}

// -----

// 4-D grouped-query attention with a boolean mask.
// CHECK-LABEL: func.func @attention_4d
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x6x16xbf16>, %[[K:[^:]+]]: tensor<1x2x6x16xbf16>, %[[V:[^:]+]]: tensor<1x2x6x16xbf16>, %[[M:[^:]+]]: tensor<1x1x6x6xi1>)
// CHECK: sinter.attention %[[Q]], %[[K]], %[[V]], mask %[[M]] {kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x1x6x6xi1>) -> tensor<1x4x6x16xbf16>
func.func @attention_4d(%q: tensor<1x4x6x16xbf16>, %k: tensor<1x2x6x16xbf16>, %v: tensor<1x2x6x16xbf16>, %m: tensor<1x1x6x6xi1>) -> tensor<1x4x6x16xbf16> {
  %0 = sinter.attention %q, %k, %v, mask %m {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.25 : f32} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x1x6x6xi1>) -> tensor<1x4x6x16xbf16>
  return %0 : tensor<1x4x6x16xbf16>
}

// -----

// 3-D causal attention without a mask.
// CHECK-LABEL: func.func @attention_3d
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x6x64xf32>, %[[K:[^:]+]]: tensor<1x6x32xf32>, %[[V:[^:]+]]: tensor<1x6x32xf32>)
// CHECK: sinter.attention %[[Q]], %[[K]], %[[V]] {is_causal = true, kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<1x6x64xf32>, tensor<1x6x32xf32>, tensor<1x6x32xf32>) -> tensor<1x6x64xf32>
func.func @attention_3d(%q: tensor<1x6x64xf32>, %k: tensor<1x6x32xf32>, %v: tensor<1x6x32xf32>) -> tensor<1x6x64xf32> {
  %0 = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.25 : f32, is_causal = true} : (tensor<1x6x64xf32>, tensor<1x6x32xf32>, tensor<1x6x32xf32>) -> tensor<1x6x64xf32>
  return %0 : tensor<1x6x64xf32>
}
