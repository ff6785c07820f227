// RUN: sinter-opt %s -split-input-file | sinter-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @constant
// CHECK: sinter.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK: sinter.constant dense<1.000000e+00> : tensor<2x2xbf16>
// CHECK: sinter.constant dense<[true, false]> : tensor<2xi1>
func.func @constant() -> (tensor<3xi64>, tensor<2x2xbf16>, tensor<2xi1>) {
  %0 = sinter.constant dense<[1, 2, 3]> : tensor<3xi64>
  %1 = sinter.constant dense<1.0> : tensor<2x2xbf16>
  %2 = sinter.constant dense<[true, false]> : tensor<2xi1>
  return %0, %1, %2 : tensor<3xi64>, tensor<2x2xbf16>, tensor<2xi1>
}

// -----

// Broadcasting binary ops.
// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:[^:]+]]: tensor<2x3xf32>, %[[B:[^:]+]]: tensor<3xf32>)
// CHECK: sinter.add %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: sinter.sub %[[B]], %[[A]] : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: sinter.mul %[[A]], %[[A]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: sinter.div %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: sinter.pow %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: sinter.equal %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>) {
  %0 = sinter.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = sinter.sub %b, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = sinter.mul %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = sinter.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %4 = sinter.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %5 = sinter.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>
}

// -----

// CHECK-LABEL: func.func @and
// CHECK-SAME: (%[[A:[^:]+]]: tensor<1x1x6x6xi1>, %[[B:[^:]+]]: tensor<1x6xi1>)
// CHECK: sinter.and %[[A]], %[[B]] : (tensor<1x1x6x6xi1>, tensor<1x6xi1>) -> tensor<1x1x6x6xi1>
func.func @and(%a: tensor<1x1x6x6xi1>, %b: tensor<1x6xi1>) -> tensor<1x1x6x6xi1> {
  %0 = sinter.and %a, %b : (tensor<1x1x6x6xi1>, tensor<1x6xi1>) -> tensor<1x1x6x6xi1>
  return %0 : tensor<1x1x6x6xi1>
}

// -----

// An integer exponent with a float base: the result has the base's type.
// CHECK-LABEL: func.func @pow_int_exponent
// CHECK: sinter.pow %{{.+}}, %{{.+}} : (tensor<4xbf16>, tensor<i64>) -> tensor<4xbf16>
func.func @pow_int_exponent(%a: tensor<4xbf16>, %e: tensor<i64>) -> tensor<4xbf16> {
  %0 = sinter.pow %a, %e : (tensor<4xbf16>, tensor<i64>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xbf16>)
// CHECK: sinter.sqrt %[[X]] : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CHECK: sinter.reciprocal %[[X]] : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CHECK: sinter.neg %[[X]] : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CHECK: sinter.sigmoid %[[X]] : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CHECK: sinter.is_nan %[[X]] : (tensor<2x3xbf16>) -> tensor<2x3xi1>
// CHECK: sinter.cast %[[X]] : (tensor<2x3xbf16>) -> tensor<2x3xf32>
func.func @unary(%x: tensor<2x3xbf16>) -> (tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xi1>, tensor<2x3xf32>) {
  %0 = sinter.sqrt %x : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %1 = sinter.reciprocal %x : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %2 = sinter.neg %x : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %3 = sinter.sigmoid %x : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %4 = sinter.is_nan %x : (tensor<2x3xbf16>) -> tensor<2x3xi1>
  %5 = sinter.cast %x : (tensor<2x3xbf16>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xi1>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @neg_int
// CHECK: sinter.neg %{{.+}} : (tensor<3xi64>) -> tensor<3xi64>
func.func @neg_int(%x: tensor<3xi64>) -> tensor<3xi64> {
  %0 = sinter.neg %x : (tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[C:[^:]+]]: tensor<1x1x6x6xi1>, %[[X:[^:]+]]: tensor<f32>, %[[Y:[^:]+]]: tensor<1x4x6x6xf32>)
// CHECK: sinter.where %[[C]], %[[X]], %[[Y]] : (tensor<1x1x6x6xi1>, tensor<f32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
func.func @where(%c: tensor<1x1x6x6xi1>, %x: tensor<f32>, %y: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %0 = sinter.where %c, %x, %y : (tensor<1x1x6x6xi1>, tensor<f32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:[^:]+]]: tensor<1x4x6x16xbf16>, %[[B:[^:]+]]: tensor<1x4x16x6xbf16>, %[[V:[^:]+]]: tensor<16xbf16>)
// CHECK: sinter.matmul %[[A]], %[[B]] : (tensor<1x4x6x16xbf16>, tensor<1x4x16x6xbf16>) -> tensor<1x4x6x6xbf16>
// CHECK: sinter.matmul %[[A]], %[[V]] : (tensor<1x4x6x16xbf16>, tensor<16xbf16>) -> tensor<1x4x6xbf16>
func.func @matmul(%a: tensor<1x4x6x16xbf16>, %b: tensor<1x4x16x6xbf16>, %v: tensor<16xbf16>) -> (tensor<1x4x6x6xbf16>, tensor<1x4x6xbf16>) {
  %0 = sinter.matmul %a, %b : (tensor<1x4x6x16xbf16>, tensor<1x4x16x6xbf16>) -> tensor<1x4x6x6xbf16>
  %1 = sinter.matmul %a, %v : (tensor<1x4x6x16xbf16>, tensor<16xbf16>) -> tensor<1x4x6xbf16>
  return %0, %1 : tensor<1x4x6x6xbf16>, tensor<1x4x6xbf16>
}

// -----

// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[A:[^:]+]]: tensor<8x4xf32>, %[[B:[^:]+]]: tensor<16x8xf32>, %[[C:[^:]+]]: tensor<16xf32>)
// CHECK: sinter.gemm %[[A]], %[[B]], %[[C]] {alpha = 5.000000e-01 : f32, trans_a = true, trans_b = true} : (tensor<8x4xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK: sinter.gemm %[[B]], %[[A]] : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
func.func @gemm(%a: tensor<8x4xf32>, %b: tensor<16x8xf32>, %c: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>) {
  %0 = sinter.gemm %a, %b, %c {alpha = 0.5 : f32, trans_a = true, trans_b = true} : (tensor<8x4xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %1 = sinter.gemm %b, %a : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<16x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.+]]: tensor<1x6x4x16xbf16>)
// CHECK: sinter.transpose %[[X]], [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
func.func @transpose(%x: tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16> {
  %0 = sinter.transpose %x, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  return %0 : tensor<1x4x6x16xbf16>
}

// -----

// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x6x64xbf16>, %[[S:[^:]+]]: tensor<4xi64>)
// CHECK: sinter.reshape %[[X]], %[[S]] : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
func.func @reshape(%x: tensor<1x6x64xbf16>, %s: tensor<4xi64>) -> tensor<1x6x4x16xbf16> {
  %0 = sinter.reshape %x, %s : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  return %0 : tensor<1x6x4x16xbf16>
}

// -----

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x6x64xbf16>, %[[W:[^:]+]]: tensor<64x128xbf16>, %[[B:[^:]+]]: tensor<128xbf16>, %[[R:[^:]+]]: tensor<1x6x128xbf16>)
// CHECK: sinter.linear %[[X]], %[[W]] bias %[[B]] : (tensor<1x6x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>) -> tensor<1x6x128xbf16>
// CHECK: sinter.linear %[[X]], %[[W]] : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
// CHECK: sinter.linear %[[X]], %[[W]] bias %[[B]] residual %[[R]] : (tensor<1x6x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>, tensor<1x6x128xbf16>) -> tensor<1x6x128xbf16>
func.func @linear(%x: tensor<1x6x64xbf16>, %w: tensor<64x128xbf16>, %b: tensor<128xbf16>, %r: tensor<1x6x128xbf16>) -> (tensor<1x6x128xbf16>, tensor<1x6x128xbf16>, tensor<1x6x128xbf16>) {
  %0 = sinter.linear %x, %w bias %b : (tensor<1x6x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>) -> tensor<1x6x128xbf16>
  %1 = sinter.linear %x, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %2 = sinter.linear %x, %w bias %b residual %r : (tensor<1x6x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>, tensor<1x6x128xbf16>) -> tensor<1x6x128xbf16>
  return %0, %1, %2 : tensor<1x6x128xbf16>, tensor<1x6x128xbf16>, tensor<1x6x128xbf16>
}

// -----

// An RMSNorm prologue on the input.
// CHECK-LABEL: func.func @linear_norm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<6x64xf32>, %[[W:[^:]+]]: tensor<64x32xf32>, %[[N:[^:]+]]: tensor<64xf32>)
// CHECK: sinter.linear %[[X]], %[[W]] norm %[[N]] {norm_epsilon = 9.99999974E-6 : f32} : (tensor<6x64xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<6x32xf32>
func.func @linear_norm(%x: tensor<6x64xf32>, %w: tensor<64x32xf32>, %n: tensor<64xf32>) -> tensor<6x32xf32> {
  %0 = sinter.linear %x, %w norm %n {norm_epsilon = 1.0e-5 : f32} : (tensor<6x64xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<6x32xf32>
  return %0 : tensor<6x32xf32>
}

// -----

// CHECK-LABEL: func.func @split_qkv_heads
// CHECK: sinter.split_qkv_heads %arg0 rope(%arg1, %arg2) : (tensor<1x6x128xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
// CHECK: sinter.split_qkv_heads %arg0 : (tensor<1x6x128xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
func.func @split_qkv_heads(%qkv: tensor<1x6x128xbf16>, %cos: tensor<1x1x6x16xbf16>, %sin: tensor<1x1x6x16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x4x6x16xbf16>) {
  %r:3 = sinter.split_qkv_heads %qkv rope(%cos, %sin) : (tensor<1x6x128xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  %p:3 = sinter.split_qkv_heads %qkv : (tensor<1x6x128xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  return %r#0, %p#0 : tensor<1x4x6x16xbf16>, tensor<1x4x6x16xbf16>
}
