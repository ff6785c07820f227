// RUN: sinter-opt %s -split-input-file --launch-plan-arena | FileCheck %s

// A chain a -> t0 -> t1 -> t2 -> out: t2 can reuse t0's bytes (t0 is dead once t1 is
// written), t1 cannot overlap either neighbour.
// CHECK-LABEL: module attributes {launch.arena_bytes = 2048 : i64}
// CHECK: %[[T0:.+]] = launch.alloc {offset = 0 : i64} : memref<256xf32>
// CHECK: %[[T1:.+]] = launch.alloc {offset = 1024 : i64} : memref<256xf32>
// CHECK: %[[T2:.+]] = launch.alloc {offset = 0 : i64} : memref<256xf32>
module {
  func.func @chain(%x: memref<256xf32>, %y: memref<256xf32> {launch.output}) {
    %w = launch.weight "w0" {offset = 0 : i64, value = dense<1.0> : tensor<1x1xf32>} : memref<1x1xf32>
    %t0 = launch.alloc : memref<256xf32>
    launch.gemm %x, %w -> %t0 {m = 256 : i64, n = 1 : i64, k = 1 : i64, precision = "strict"} : memref<256xf32>, memref<1x1xf32> -> memref<256xf32>
    %t1 = launch.alloc : memref<256xf32>
    launch.gemm %t0, %w -> %t1 {m = 256 : i64, n = 1 : i64, k = 1 : i64, precision = "strict"} : memref<256xf32>, memref<1x1xf32> -> memref<256xf32>
    %t2 = launch.alloc : memref<256xf32>
    launch.gemm %t1, %w -> %t2 {m = 256 : i64, n = 1 : i64, k = 1 : i64, precision = "strict"} : memref<256xf32>, memref<1x1xf32> -> memref<256xf32>
    launch.gemm %t2, %w -> %y {m = 256 : i64, n = 1 : i64, k = 1 : i64, precision = "strict"} : memref<256xf32>, memref<1x1xf32> -> memref<256xf32>
    return
  }
}

// -----

// Buffers live at the same time never overlap; offsets are 256-byte aligned.
// CHECK-LABEL: module attributes {launch.arena_bytes = 768 : i64}
// CHECK-DAG: launch.alloc {offset = 0 : i64} : memref<100xf32>
// CHECK-DAG: launch.alloc {offset = 512 : i64} : memref<10xf32>
module {
  func.func @overlap(%x: memref<10xf32>, %y: memref<10xf32> {launch.output}) {
    %w = launch.weight "w0" {offset = 0 : i64, value = dense<1.0> : tensor<1x10xf32>} : memref<1x10xf32>
    %v = launch.weight "w1" {offset = 256 : i64, value = dense<1.0> : tensor<10x1xf32>} : memref<10x1xf32>
    %u = launch.weight "w2" {offset = 512 : i64, value = dense<1.0> : tensor<10x10xf32>} : memref<10x10xf32>
    %big = launch.alloc : memref<100xf32>
    launch.gemm %x, %w -> %big {m = 10 : i64, n = 10 : i64, k = 1 : i64, precision = "strict"} : memref<10xf32>, memref<1x10xf32> -> memref<100xf32>
    %small = launch.alloc : memref<10xf32>
    launch.gemm %big, %v -> %small {m = 10 : i64, n = 1 : i64, k = 10 : i64, precision = "strict"} : memref<100xf32>, memref<10x1xf32> -> memref<10xf32>
    launch.gemm %small, %u -> %y {m = 1 : i64, n = 10 : i64, k = 10 : i64, precision = "strict"} : memref<10xf32>, memref<10x10xf32> -> memref<10xf32>
    return
  }
}

// -----

// Negative: no allocations gives an empty arena.
// CHECK-LABEL: module attributes {launch.arena_bytes = 0 : i64}
module {
  func.func @none(%x: memref<4xf32>, %y: memref<4xf32> {launch.output}) {
    %w = launch.weight "w0" {offset = 0 : i64, value = dense<1.0> : tensor<1x1xf32>} : memref<1x1xf32>
    launch.gemm %x, %w -> %y {m = 4 : i64, n = 1 : i64, k = 1 : i64, precision = "strict"} : memref<4xf32>, memref<1x1xf32> -> memref<4xf32>
    return
  }
}
