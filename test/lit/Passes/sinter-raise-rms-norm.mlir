// RUN: sinter-opt %s -split-input-file --sinter-raise-rms-norm | FileCheck %s

// The opset-18 export of LlamaRMSNorm in bf16: statistics in f32, cast back, times weight.
// CHECK-LABEL: func.func @bf16
// CHECK: %[[W:.+]] = sinter.constant dense<{{.+}}> : tensor<4xbf16>
// CHECK-NEXT: %[[Y:.+]] = sinter.rms_normalization %arg0, %[[W]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<1x3x4xbf16>, tensor<4xbf16>) -> tensor<1x3x4xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @bf16(%x: tensor<1x3x4xbf16>) -> tensor<1x3x4xbf16> {
  %w = sinter.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xbf16>
  %two = sinter.constant dense<2.0> : tensor<f32>
  %eps = sinter.constant dense<9.99999974E-6> : tensor<f32>
  %xf = sinter.cast %x : (tensor<1x3x4xbf16>) -> tensor<1x3x4xf32>
  %sq = sinter.pow %xf, %two : (tensor<1x3x4xf32>, tensor<f32>) -> tensor<1x3x4xf32>
  %mean = sinter.reduce_mean %sq {axes = array<i64: 2>} : (tensor<1x3x4xf32>) -> tensor<1x3x1xf32>
  %var = sinter.add %mean, %eps : (tensor<1x3x1xf32>, tensor<f32>) -> tensor<1x3x1xf32>
  %rms = sinter.sqrt %var : (tensor<1x3x1xf32>) -> tensor<1x3x1xf32>
  %inv = sinter.reciprocal %rms : (tensor<1x3x1xf32>) -> tensor<1x3x1xf32>
  %n = sinter.mul %xf, %inv : (tensor<1x3x4xf32>, tensor<1x3x1xf32>) -> tensor<1x3x4xf32>
  %nb = sinter.cast %n : (tensor<1x3x4xf32>) -> tensor<1x3x4xbf16>
  %y = sinter.mul %nb, %w : (tensor<1x3x4xbf16>, tensor<4xbf16>) -> tensor<1x3x4xbf16>
  return %y : tensor<1x3x4xbf16>
}

// -----

// f32: no casts; every commutative op with its operands swapped, x*x for the square.
// CHECK-LABEL: func.func @f32_commuted
// CHECK: %[[Y:.+]] = sinter.rms_normalization %arg0, %{{.+}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @f32_commuted(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = sinter.constant dense<0.5> : tensor<4xf32>
  %eps = sinter.constant dense<1.0e-6> : tensor<1xf32>
  %sq = sinter.mul %x, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %mean = sinter.reduce_mean %sq {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %var = sinter.add %eps, %mean : (tensor<1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %rms = sinter.sqrt %var : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %inv = sinter.reciprocal %rms : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = sinter.mul %inv, %x : (tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = sinter.mul %w, %n : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A [1, 1, D] weight is flattened to [D]; x / sqrt(...) is the same normalization.
// CHECK-LABEL: func.func @weight_3d_div
// CHECK: %[[W:.+]] = sinter.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: sinter.rms_normalization %arg0, %[[W]] {axis = 2 : i64
func.func @weight_3d_div(%x: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %w = sinter.constant dense<2.0> : tensor<1x1x4xf32>
  %two = sinter.constant dense<2.0> : tensor<f32>
  %eps = sinter.constant dense<1.0e-5> : tensor<f32>
  %sq = sinter.pow %x, %two : (tensor<1x3x4xf32>, tensor<f32>) -> tensor<1x3x4xf32>
  %mean = sinter.reduce_mean %sq {axes = array<i64: 2>} : (tensor<1x3x4xf32>) -> tensor<1x3x1xf32>
  %var = sinter.add %mean, %eps : (tensor<1x3x1xf32>, tensor<f32>) -> tensor<1x3x1xf32>
  %rms = sinter.sqrt %var : (tensor<1x3x1xf32>) -> tensor<1x3x1xf32>
  %n = sinter.div %x, %rms : (tensor<1x3x4xf32>, tensor<1x3x1xf32>) -> tensor<1x3x4xf32>
  %y = sinter.mul %n, %w : (tensor<1x3x4xf32>, tensor<1x1x4xf32>) -> tensor<1x3x4xf32>
  return %y : tensor<1x3x4xf32>
}

// -----

// Negative: the mean runs over a dimension other than the last.
// CHECK-LABEL: func.func @not_last_axis
// CHECK-NOT: sinter.rms_normalization
// CHECK: sinter.reduce_mean
func.func @not_last_axis(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = sinter.constant dense<0.5> : tensor<4xf32>
  %two = sinter.constant dense<2.0> : tensor<f32>
  %eps = sinter.constant dense<1.0e-5> : tensor<f32>
  %sq = sinter.pow %x, %two : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %mean = sinter.reduce_mean %sq {axes = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<1x4xf32>
  %var = sinter.add %mean, %eps : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %rms = sinter.sqrt %var : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %inv = sinter.reciprocal %rms : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %n = sinter.mul %x, %inv : (tensor<4x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %y = sinter.mul %n, %w : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Negative: a cube is not a square, a weight computed at run time is not a constant, and
// the statistics of another tensor do not normalize this one.
// CHECK-LABEL: func.func @not_rms
// CHECK-NOT: sinter.rms_normalization
// CHECK: sinter.pow
// CHECK: sinter.pow
// CHECK: sinter.pow
func.func @not_rms(%x: tensor<2x4xf32>, %z: tensor<2x4xf32>, %wr: tensor<4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = sinter.constant dense<0.5> : tensor<4xf32>
  %two = sinter.constant dense<2.0> : tensor<f32>
  %three = sinter.constant dense<3.0> : tensor<f32>
  %eps = sinter.constant dense<1.0e-5> : tensor<f32>
  %c = sinter.pow %x, %three : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %cm = sinter.reduce_mean %c {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %cv = sinter.add %cm, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %cr = sinter.sqrt %cv : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %ci = sinter.reciprocal %cr : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %cn = sinter.mul %x, %ci : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %y0 = sinter.mul %cn, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %s = sinter.pow %x, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %sm = sinter.reduce_mean %s {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %sv = sinter.add %sm, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %sr = sinter.sqrt %sv : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %si = sinter.reciprocal %sr : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %sn = sinter.mul %x, %si : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %y1 = sinter.mul %sn, %wr : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %o = sinter.pow %z, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %om = sinter.reduce_mean %o {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %ov = sinter.add %om, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %or = sinter.sqrt %ov : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %oi = sinter.reciprocal %or : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %on = sinter.mul %x, %oi : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %y2 = sinter.mul %on, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y0, %y1, %y2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// The TorchScript exporter's form (optimum's exports): the reciprocal as 1 / sqrt(...).
// CHECK-LABEL: func.func @one_over_sqrt
// CHECK: %[[Y:.+]] = sinter.rms_normalization %arg0, %{{.+}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @one_over_sqrt(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = sinter.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %two = sinter.constant dense<2.0> : tensor<f32>
  %one = sinter.constant dense<1.0> : tensor<f32>
  %eps = sinter.constant dense<9.99999997E-7> : tensor<f32>
  %sq = sinter.pow %x, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %mean = sinter.reduce_mean %sq {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %var = sinter.add %mean, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %rms = sinter.sqrt %var : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %inv = sinter.div %one, %rms : (tensor<f32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = sinter.mul %x, %inv : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %y = sinter.mul %n, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Negative: 2 / sqrt(...) is twice the normalization, not it.
// CHECK-LABEL: func.func @two_over_sqrt
// CHECK-NOT: sinter.rms_normalization
// CHECK: sinter.div
func.func @two_over_sqrt(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = sinter.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %two = sinter.constant dense<2.0> : tensor<f32>
  %eps = sinter.constant dense<9.99999997E-7> : tensor<f32>
  %sq = sinter.pow %x, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %mean = sinter.reduce_mean %sq {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %var = sinter.add %mean, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %rms = sinter.sqrt %var : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %inv = sinter.div %two, %rms : (tensor<f32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = sinter.mul %x, %inv : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %y = sinter.mul %n, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
