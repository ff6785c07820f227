// RUN: sinter-opt %s -split-input-file --sinter-lower-to-launch -verify-diagnostics | FileCheck %s

// A fusion group is one launch.generic over its inputs' buffers, the group's body inside.
// CHECK-LABEL: func.func @group
// CHECK-SAME: (%[[X:.+]]: memref<4x8xf32>, %[[Y:.+]]: memref<4x8xf32> {launch.output})
// CHECK: launch.generic(%[[X]]) -> (%[[Y]]) {block = array<i64: 256, 1, 1>, elements_per_thread = 1 : i64, grid = array<i64: 1, 1, 1>, rows_per_block = 8 : i64, shared_bytes = 0 : i64, threads_per_row = 32 : i64} : (memref<4x8xf32>) -> memref<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x8xf32>):
// CHECK: sinter.softmax
// CHECK: sinter.yield
func.func @group(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %g = sinter.fusion_group(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %n = sinter.neg %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %s = sinter.softmax %n {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    sinter.yield %s : tensor<4x8xf32>
  }
  return %g : tensor<4x8xf32>
}

// -----

// A batched product of two activations is one strided-batched library GEMM.
// CHECK-LABEL: func.func @batched
// CHECK: launch.gemm %arg0, %arg1 -> %arg2 {batch = 6 : i64, k = 4 : i64, m = 3 : i64, n = 5 : i64, precision = "strict"}
func.func @batched(%a: tensor<2x3x3x4xf32>, %b: tensor<2x3x4x5xf32>) -> tensor<2x3x3x5xf32> {
  %y = sinter.matmul %a, %b : (tensor<2x3x3x4xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x3x5xf32>
  return %y : tensor<2x3x3x5xf32>
}

// -----

// One operand's single matrix serves every batch (stride 0); operands whose batch
// dimensions broadcast partially are first expanded by generated copies.
// CHECK-LABEL: func.func @broadcasts
// CHECK: launch.gemm %arg0, %arg1 -> %arg4 {batch = 2 : i64, broadcast_weight = true, k = 4 : i64, m = 3 : i64, n = 5 : i64, precision = "native"}
// CHECK: %[[EA:.+]] = launch.alloc : memref<2x3x3x4xf16>
// CHECK: launch.generic(%arg2) -> (%[[EA]])
// CHECK: sinter.expand
// CHECK: %[[EB:.+]] = launch.alloc : memref<2x3x4x5xf16>
// CHECK: launch.generic(%arg3) -> (%[[EB]])
// CHECK: sinter.expand
// CHECK: launch.gemm %[[EA]], %[[EB]] -> %arg5 {batch = 6 : i64, k = 4 : i64, m = 3 : i64, n = 5 : i64, precision = "native"}
func.func @broadcasts(%a: tensor<2x3x4xf16>, %b: tensor<4x5xf16>, %c: tensor<2x1x3x4xf16>, %d: tensor<3x4x5xf16>) -> (tensor<2x3x5xf16>, tensor<2x3x3x5xf16>) {
  %y = sinter.matmul %a, %b : (tensor<2x3x4xf16>, tensor<4x5xf16>) -> tensor<2x3x5xf16>
  %z = sinter.matmul %c, %d : (tensor<2x1x3x4xf16>, tensor<3x4x5xf16>) -> tensor<2x3x3x5xf16>
  return %y, %z : tensor<2x3x5xf16>, tensor<2x3x3x5xf16>
}

// -----

// Negative: integer matrix products have no library path.
func.func @integer(%a: tensor<2x2xi64>, %b: tensor<2x2xi64>) -> tensor<2x2xi64> {
  // expected-error @+1 {{matrix products on 'i64' are not supported (f32, f16, bf16, f64)}}
  %y = sinter.matmul %a, %b : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  return %y : tensor<2x2xi64>
}

// -----

// An RMS normalization the rms_norm kernel does not take (f32) is generated instead.
// CHECK-LABEL: func.func @rms_f32
// CHECK: launch.generic
// CHECK: sinter.rms_normalization
func.func @rms_f32(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %w = sinter.constant dense<1.0> : tensor<16xf32>
  %y = sinter.rms_normalization %x, %w {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// Negative: a body that is not one kernel (two row operations) is refused.
func.func @two_rows(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{a generated kernel holds at most one row operation}}
  %g = sinter.fusion_group(%x) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = sinter.softmax %a {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %m = sinter.reduce "max" %s {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
    sinter.yield %m : tensor<4x1xf32>
  }
  return %g : tensor<4x1xf32>
}

// -----

// A body that reads an input across the output's innermost dimension covers the output in
// 32 x 32 tiles (3 x 2 tiles per matrix, 3 matrices), 4 elements a thread; the same transpose
// of matrices too narrow for tiles (8 columns) stays one thread per element.
// CHECK-LABEL: func.func @transpose_tiles
// CHECK: launch.generic(%arg0, %arg1) -> (%arg3) {block = array<i64: 256, 1, 1>, elements_per_thread = 4 : i64, grid = array<i64: 18, 1, 1>
// CHECK: launch.generic(%arg2) -> (%arg4) {block = array<i64: 256, 1, 1>, elements_per_thread = 1 : i64, grid = array<i64: 4, 1, 1>
func.func @transpose_tiles(%x: tensor<3x40x70xf32>, %y: tensor<3x70x40xf32>, %z: tensor<3x40x8xf32>) -> (tensor<3x70x40xf32>, tensor<3x8x40xf32>) {
  %g = sinter.fusion_group(%x, %y) : (tensor<3x40x70xf32>, tensor<3x70x40xf32>) -> tensor<3x70x40xf32> {
  ^bb0(%a: tensor<3x40x70xf32>, %b: tensor<3x70x40xf32>):
    %t = sinter.transpose %a, [0, 2, 1] : (tensor<3x40x70xf32>) -> tensor<3x70x40xf32>
    %s = sinter.add %t, %b : (tensor<3x70x40xf32>, tensor<3x70x40xf32>) -> tensor<3x70x40xf32>
    sinter.yield %s : tensor<3x70x40xf32>
  }
  %u = sinter.transpose %z, [0, 2, 1] : (tensor<3x40x8xf32>) -> tensor<3x8x40xf32>
  return %g, %u : tensor<3x70x40xf32>, tensor<3x8x40xf32>
}

// -----

// 16-bit elements: 64 x 64 tiles (a tile row is a 128-byte line), 16 elements a thread.
// CHECK-LABEL: func.func @transpose_tiles_bf16
// CHECK: launch.generic(%arg0) -> (%arg1) {block = array<i64: 256, 1, 1>, elements_per_thread = 16 : i64, grid = array<i64: 2, 1, 1>
func.func @transpose_tiles_bf16(%x: tensor<70x40xbf16>) -> tensor<40x70xbf16> {
  %t = sinter.transpose %x, [1, 0] : (tensor<70x40xbf16>) -> tensor<40x70xbf16>
  return %t : tensor<40x70xbf16>
}
