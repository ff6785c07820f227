// RUN: sinter-opt %s -split-input-file --sinter-fold-constants | FileCheck %s

// Shapes are static: sinter.shape folds even when its input is not constant.
// CHECK-LABEL: func.func @shape
// CHECK-NOT: sinter.shape
// CHECK: %[[C:.+]] = sinter.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-NEXT: return %[[C]]
func.func @shape(%x: tensor<2x3x4xf32>) -> tensor<2xi64> {
  %0 = sinter.shape %x {start = 1 : i64, end = 3 : i64} : (tensor<2x3x4xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @constant_of_shape
// CHECK-NOT: sinter.constant_of_shape
// CHECK: %[[C:.+]] = sinter.constant dense<7> : tensor<2x3xi64>
// CHECK-NEXT: return %[[C]]
func.func @constant_of_shape(%s: tensor<2xi64>) -> tensor<2x3xi64> {
  %0 = sinter.constant_of_shape %s {value = dense<7> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @range
// CHECK-NOT: sinter.range
// CHECK-DAG: sinter.constant dense<[10, 6, 2]> : tensor<3xi64>
// CHECK-DAG: sinter.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<4xf32>
func.func @range() -> (tensor<3xi64>, tensor<4xf32>) {
  %a = sinter.constant dense<10> : tensor<i64>
  %b = sinter.constant dense<-1> : tensor<i64>
  %c = sinter.constant dense<-4> : tensor<i64>
  %0 = sinter.range %a, %b, %c : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %fa = sinter.constant dense<0.5> : tensor<f32>
  %fb = sinter.constant dense<2.1> : tensor<f32>
  %1 = sinter.range %fa, %fb, %fa : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1 : tensor<3xi64>, tensor<4xf32>
}

// -----

// A range whose result type disagrees with its operands is left alone.
// CHECK-LABEL: func.func @range_wrong_length
// CHECK: sinter.range
func.func @range_wrong_length() -> tensor<5xi64> {
  %a = sinter.constant dense<0> : tensor<i64>
  %b = sinter.constant dense<3> : tensor<i64>
  %c = sinter.constant dense<1> : tensor<i64>
  %0 = sinter.range %a, %b, %c : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

// Shape -> Gather (negative index) gives a scalar dimension.
// CHECK-LABEL: func.func @gather_shape
// CHECK: %[[C:.+]] = sinter.constant dense<4> : tensor<i64>
// CHECK-NEXT: return %[[C]]
func.func @gather_shape(%x: tensor<2x3x4xf32>) -> tensor<i64> {
  %s = sinter.shape %x {start = 0 : i64, end = 3 : i64} : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i = sinter.constant dense<-1> : tensor<i64>
  %0 = sinter.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Gather with negative indices along axis 1, then an add of the result: both fold.
// CHECK-LABEL: func.func @gather_axis1
// CHECK: %[[C:.+]] = sinter.constant dense<{{\[}}[3, -1], [6, 2]]> : tensor<2x2xi32>
// CHECK-NEXT: return %[[C]]
func.func @gather_axis1() -> tensor<2x2xi32> {
  %x = sinter.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %i = sinter.constant dense<[-1, -3]> : tensor<2xi64>
  %0 = sinter.gather %x, %i {axis = 1 : i64} : (tensor<2x3xi32>, tensor<2xi64>) -> tensor<2x2xi32>
  %one = sinter.constant dense<[[0, -2]]> : tensor<1x2xi32>
  %1 = sinter.add %0, %one : (tensor<2x2xi32>, tensor<1x2xi32>) -> tensor<2x2xi32>
  return %1 : tensor<2x2xi32>
}

// -----

// An out-of-range index reads the nearest row, as the generated kernel clamps it (a run-time
// NonZero's padding reaches gathers); a non-constant input does not fold.
// CHECK-LABEL: func.func @gather_no_fold
// CHECK-DAG: %[[CLAMPED:.+]] = sinter.constant dense<{{\[}}[3.000000e+00, 4.000000e+00]]> : tensor<1x2xf32>
// CHECK-DAG: %[[LIVE:.+]] = sinter.gather %arg0
// CHECK-NOT: sinter.gather
// CHECK: return %[[CLAMPED]], %[[LIVE]]
func.func @gather_no_fold(%w: tensor<4x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %x = sinter.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %i = sinter.constant dense<[2]> : tensor<1xi64>
  %0 = sinter.gather %x, %i {axis = 0 : i64} : (tensor<2x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %1 = sinter.gather %w, %i {axis = 0 : i64} : (tensor<4x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  return %0, %1 : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// CHECK-LABEL: func.func @gather_nd
// CHECK-DAG: sinter.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: sinter.constant dense<{{\[}}[3, 4], [5, 6]]> : tensor<2x2xi64>
// CHECK-NOT: sinter.gather_nd
func.func @gather_nd() -> (tensor<2xi1>, tensor<2x2xi64>) {
  %m = sinter.constant dense<[[true, false, true], [false, false, true]]> : tensor<2x3xi1>
  %i = sinter.constant dense<[[0, -1], [1, 0]]> : tensor<2x2xi64>
  %0 = sinter.gather_nd %m, %i : (tensor<2x3xi1>, tensor<2x2xi64>) -> tensor<2xi1>
  %x = sinter.constant dense<[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]> : tensor<2x2x2xi64>
  %j = sinter.constant dense<[[1], [0]]> : tensor<2x1xi64>
  %1 = sinter.gather_nd %x, %j {batch_dims = 1 : i64} : (tensor<2x2x2xi64>, tensor<2x1xi64>) -> tensor<2x2xi64>
  return %0, %1 : tensor<2xi1>, tensor<2x2xi64>
}

// -----

// A tuple out of range reads the nearest entry, as the generated kernel clamps it.
// CHECK-LABEL: func.func @gather_nd_clamps
// CHECK: %[[C:.+]] = sinter.constant dense<[4, 1]> : tensor<2xi64>
// CHECK-NEXT: return %[[C]]
func.func @gather_nd_clamps() -> tensor<2xi64> {
  %x = sinter.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %i = sinter.constant dense<[[2147483647, 2147483647], [0, -5]]> : tensor<2x2xi64>
  %0 = sinter.gather_nd %x, %i : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @scatter_nd
// CHECK: %[[C:.+]] = sinter.constant dense<{{\[}}[0.000000e+00, 0.000000e+00], [1.000000e+00, 2.000000e+00], [0.000000e+00, 0.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @scatter_nd() -> tensor<3x2xf32> {
  %x = sinter.constant dense<0.0> : tensor<3x2xf32>
  %i = sinter.constant dense<[[-2]]> : tensor<1x1xi64>
  %u = sinter.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %0 = sinter.scatter_nd %x, %i, %u : (tensor<3x2xf32>, tensor<1x1xi64>, tensor<1x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// A tuple out of range writes nothing (the padding of a run-time NonZero's result).
// CHECK-LABEL: func.func @scatter_nd_skips_out_of_range
// CHECK: %[[C:.+]] = sinter.constant dense<{{\[}}[5.000000e+00, 6.000000e+00], [0.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @scatter_nd_skips_out_of_range() -> tensor<2x2xf32> {
  %x = sinter.constant dense<0.0> : tensor<2x2xf32>
  %i = sinter.constant dense<[[2147483647], [0], [2]]> : tensor<3x1xi64>
  %u = sinter.constant dense<[[1.0, 2.0], [5.0, 6.0], [3.0, 4.0]]> : tensor<3x2xf32>
  %0 = sinter.scatter_nd %x, %i, %u : (tensor<2x2xf32>, tensor<3x1xi64>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @slice
// CHECK: %[[C:.+]] = sinter.constant dense<{{\[}}[6, 4], [3, 1]]> : tensor<2x2xi64>
// CHECK-NEXT: return %[[C]]
func.func @slice() -> tensor<2x2xi64> {
  %x = sinter.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = sinter.slice %x {starts = array<i64: 1, 2>, ends = array<i64: -1, -1>, steps = array<i64: -1, -2>} : (tensor<2x3xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

// A slice covering its whole input is its input.
// CHECK-LABEL: func.func @slice_identity
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @slice_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = sinter.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Concat of shape pieces, as fed to a Reshape.
// CHECK-LABEL: func.func @concat
// CHECK: %[[C:.+]] = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
// CHECK-NEXT: return %[[C]]
func.func @concat(%x: tensor<1x6x64xf32>) -> tensor<4xi64> {
  %s = sinter.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<1x6x64xf32>) -> tensor<2xi64>
  %a = sinter.constant dense<-1> : tensor<1xi64>
  %b = sinter.constant dense<16> : tensor<1xi64>
  %0 = sinter.concat %s, %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @concat_axis1
// CHECK: %[[C:.+]] = sinter.constant dense<{{\[}}[1.000000e+00, 5.000000e+00, 2.000000e+00], [3.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<2x3xbf16>
// CHECK-NEXT: return %[[C]]
func.func @concat_axis1() -> tensor<2x3xbf16> {
  %a = sinter.constant dense<[[1.0], [3.0]]> : tensor<2x1xbf16>
  %b = sinter.constant dense<[[5.0, 2.0], [6.0, 4.0]]> : tensor<2x2xbf16>
  %0 = sinter.concat %a, %b {axis = 1 : i64} : (tensor<2x1xbf16>, tensor<2x2xbf16>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

// CHECK-LABEL: func.func @unsqueeze_squeeze
// CHECK-DAG: sinter.constant dense<{{\[}}[5], [6]]> : tensor<2x1xi64>
// CHECK-DAG: sinter.constant dense<[5, 6]> : tensor<2xi64>
// CHECK-NOT: sinter.unsqueeze
// CHECK-NOT: sinter.squeeze
func.func @unsqueeze_squeeze() -> (tensor<2x1xi64>, tensor<2xi64>) {
  %x = sinter.constant dense<[5, 6]> : tensor<2xi64>
  %0 = sinter.unsqueeze %x {axes = array<i64: 1>} : (tensor<2xi64>) -> tensor<2x1xi64>
  %1 = sinter.squeeze %0 {axes = array<i64: 1>} : (tensor<2x1xi64>) -> tensor<2xi64>
  return %0, %1 : tensor<2x1xi64>, tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @expand
// CHECK: %[[C:.+]] = sinter.constant dense<{{\[}}[1, 1, 1], [2, 2, 2]]> : tensor<2x3xi64>
// CHECK-NEXT: return %[[C]]
func.func @expand() -> tensor<2x3xi64> {
  %x = sinter.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %s = sinter.constant dense<[1, 3]> : tensor<2xi64>
  %0 = sinter.expand %x, %s : (tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// A causal mask built the way exports do: a filled square, its strict upper triangle,
// broadcast to [batch, 1, S, S].
// CHECK-LABEL: func.func @causal_mask
// CHECK: %[[C:.+]] = sinter.constant dense<{{\[\[\[}}[0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00]]]]> : tensor<1x1x3x3xf32>
// CHECK-NEXT: return %[[C]]
func.func @causal_mask() -> tensor<1x1x3x3xf32> {
  %s = sinter.constant dense<3> : tensor<2xi64>
  %full = sinter.constant_of_shape %s {value = dense<0xFF800000> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<3x3xf32>
  %upper = sinter.trilu %full {k = 1 : i64} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %shape = sinter.constant dense<[1, 1, 3, 3]> : tensor<4xi64>
  %0 = sinter.expand %upper, %shape : (tensor<3x3xf32>, tensor<4xi64>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @trilu_lower
// CHECK: %[[C:.+]] = sinter.constant dense<{{\[}}[true, false, false], [true, true, false]]> : tensor<2x3xi1>
// CHECK-NEXT: return %[[C]]
func.func @trilu_lower() -> tensor<2x3xi1> {
  %x = sinter.constant dense<true> : tensor<2x3xi1>
  %0 = sinter.trilu %x {upper = false} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// CHECK-LABEL: func.func @reduce_mean
// CHECK: %[[C:.+]] = sinter.constant dense<{{\[}}[2.000000e+00], [5.000000e+00]]> : tensor<2x1xf32>
// CHECK-NEXT: return %[[C]]
func.func @reduce_mean() -> tensor<2x1xf32> {
  %x = sinter.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = sinter.reduce_mean %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// Empty axes (ONNX noop_with_empty_axes) is the identity.
// CHECK-LABEL: func.func @reduce_mean_noop
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reduce_mean_noop(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = sinter.reduce_mean %x {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// gather_elements: each output element reads its own index along the axis (negative from
// the end); an index out of range does not fold.
// CHECK-LABEL: func.func @gather_elements
// CHECK: sinter.constant dense<{{\[}}[3, 1], [4, 6]]> : tensor<2x2xi32>
// CHECK: sinter.gather_elements
func.func @gather_elements() -> (tensor<2x2xi32>, tensor<1x1xi32>) {
  %x = sinter.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %i = sinter.constant dense<[[2, 0], [0, -1]]> : tensor<2x2xi64>
  %0 = sinter.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3xi32>, tensor<2x2xi64>) -> tensor<2x2xi32>
  %bad = sinter.constant dense<[[3]]> : tensor<1x1xi64>
  %1 = sinter.gather_elements %x, %bad {axis = 1 : i64} : (tensor<2x3xi32>, tensor<1x1xi64>) -> tensor<1x1xi32>
  return %0, %1 : tensor<2x2xi32>, tensor<1x1xi32>
}

// -----

// pad in every mode, and a negative amount that crops.
// CHECK-LABEL: func.func @pad_modes
// CHECK-DAG: sinter.constant dense<[9, 1, 2, 3, 9, 9]> : tensor<6xi32>
// CHECK-DAG: sinter.constant dense<[2, 1, 2, 3, 2, 1]> : tensor<6xi32>
// CHECK-DAG: sinter.constant dense<[1, 1, 2, 3, 3, 3]> : tensor<6xi32>
// CHECK-DAG: sinter.constant dense<[3, 1, 2, 3, 1, 2]> : tensor<6xi32>
// CHECK-DAG: sinter.constant dense<[2, 3]> : tensor<2xi32>
// CHECK-NOT: sinter.pad
func.func @pad_modes() -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<2xi32>) {
  %x = sinter.constant dense<[1, 2, 3]> : tensor<3xi32>
  %0 = sinter.pad "constant" %x {before = array<i64: 1>, after = array<i64: 2>, value = 9.0 : f64} : (tensor<3xi32>) -> tensor<6xi32>
  %1 = sinter.pad "reflect" %x {before = array<i64: 1>, after = array<i64: 2>} : (tensor<3xi32>) -> tensor<6xi32>
  %2 = sinter.pad "edge" %x {before = array<i64: 1>, after = array<i64: 2>} : (tensor<3xi32>) -> tensor<6xi32>
  %3 = sinter.pad "wrap" %x {before = array<i64: 1>, after = array<i64: 2>} : (tensor<3xi32>) -> tensor<6xi32>
  %4 = sinter.pad "constant" %x {before = array<i64: -1>, after = array<i64: 0>} : (tensor<3xi32>) -> tensor<2xi32>
  return %0, %1, %2, %3, %4 : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<2xi32>
}

// -----

// softmax, log_softmax, a running sum (exclusive, reversed) and a running product along one axis.
// CHECK-LABEL: func.func @row_ops
// CHECK-DAG: sinter.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK-DAG: sinter.constant dense<-0.693147182> : tensor<2xf32>
// CHECK-DAG: sinter.constant dense<{{\[}}[5, 3, 0], [11, 6, 0]]> : tensor<2x3xi64>
// CHECK-DAG: sinter.constant dense<{{\[}}[1, 2, 6], [4, 20, 120]]> : tensor<2x3xi64>
// CHECK-NOT: sinter.softmax
// CHECK-NOT: sinter.log_softmax
// CHECK-NOT: sinter.cumulative
func.func @row_ops() -> (tensor<2xf32>, tensor<2xf32>, tensor<2x3xi64>, tensor<2x3xi64>) {
  %x = sinter.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %0 = sinter.softmax %x {axis = 0 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  %1 = sinter.log_softmax %x {axis = 0 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  %i = sinter.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %2 = sinter.cumulative %i {kind = "sum", axis = 1 : i64, exclusive = true, reverse = true} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  %3 = sinter.cumulative %i {kind = "prod", axis = 1 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2x3xi64>, tensor<2x3xi64>
}

// -----

// sinter.bitcast folds a constant's bits; a bool is its byte.
// CHECK-LABEL: func.func @bitcast
// CHECK-DAG: sinter.constant dense<[1065353216, -1073741824]> : tensor<2xi32>
// CHECK-DAG: sinter.constant dense<[1, 0, 1]> : tensor<3xui8>
// CHECK-DAG: sinter.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-NOT: sinter.bitcast
func.func @bitcast() -> (tensor<2xi32>, tensor<3xui8>, tensor<3xi1>) {
  %f = sinter.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %i = sinter.bitcast %f : (tensor<2xf32>) -> tensor<2xi32>
  %b = sinter.constant dense<[true, false, true]> : tensor<3xi1>
  %u = sinter.bitcast %b : (tensor<3xi1>) -> tensor<3xui8>
  %n = sinter.constant dense<[2, 0, 255]> : tensor<3xui8>
  %t = sinter.bitcast %n : (tensor<3xui8>) -> tensor<3xi1>
  return %i, %u, %t : tensor<2xi32>, tensor<3xui8>, tensor<3xi1>
}
