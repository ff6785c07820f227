// RUN: sinter-opt %s -split-input-file | sinter-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @program
// CHECK: %[[W:.+]] = launch.weight "w0" {offset = 0 : i64, value = dense<1.000000e+00> : tensor<8x4xf32>} : memref<8x4xf32>
// CHECK: %[[B:.+]] = launch.weight "w1" {offset = 256 : i64, value = dense<0.000000e+00> : tensor<4xf32>} : memref<4xf32>
// CHECK: %[[T:.+]] = launch.alloc {offset = 0 : i64} : memref<2x4xf32>
// CHECK: launch.gemm %arg0, %[[W]] bias %[[B]] -> %[[T]] {k = 8 : i64, m = 2 : i64, n = 4 : i64, precision = "tf32"} : memref<2x8xf32>, memref<8x4xf32>, memref<4xf32> -> memref<2x4xf32>
// CHECK: launch.kernel "rms_norm"(%[[T]], %arg1) {args = array<i64: 0, 0, 1>, block = array<i64: 128, 1, 1>, grid = array<i64: 2, 1, 1>, params = [2, 4, "925353388u"], shared_bytes = 0 : i64, writes = array<i64: 1>} : memref<2x4xf32>, memref<2x4xf32>
func.func @program(%x: memref<2x8xf32>, %y: memref<2x4xf32> {launch.output}) {
  %w = launch.weight "w0" {offset = 0 : i64, value = dense<1.0> : tensor<8x4xf32>} : memref<8x4xf32>
  %b = launch.weight "w1" {offset = 256 : i64, value = dense<0.0> : tensor<4xf32>} : memref<4xf32>
  %t = launch.alloc {offset = 0 : i64} : memref<2x4xf32>
  launch.gemm %x, %w bias %b -> %t {m = 2 : i64, n = 4 : i64, k = 8 : i64, precision = "tf32"} : memref<2x8xf32>, memref<8x4xf32>, memref<4xf32> -> memref<2x4xf32>
  launch.kernel "rms_norm"(%t, %y) {args = array<i64: 0, 0, 1>, grid = array<i64: 2, 1, 1>, block = array<i64: 128, 1, 1>, params = [2, 4, "925353388u"], shared_bytes = 0 : i64, writes = array<i64: 1>} : memref<2x4xf32>, memref<2x4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @unplanned
// CHECK: launch.alloc : memref<16xbf16>
// CHECK: launch.gemm %arg0, %{{.+}} -> %{{.+}} {k = 4 : i64, m = 4 : i64, n = 4 : i64, precision = "native"} : memref<4x4xbf16>, memref<4x4xbf16> -> memref<16xbf16>
func.func @unplanned(%x: memref<4x4xbf16>) {
  %w = launch.weight "w" {value = dense<1.0> : tensor<4x4xbf16>} : memref<4x4xbf16>
  %t = launch.alloc : memref<16xbf16>
  launch.gemm %x, %w -> %t {m = 4 : i64, n = 4 : i64, k = 4 : i64, precision = "native"} : memref<4x4xbf16>, memref<4x4xbf16> -> memref<16xbf16>
  return
}
