// RUN: sinter-opt %s -split-input-file --launch-check-target | FileCheck %s
// RUN: sinter-opt %s -split-input-file --launch-check-target="target-name=small shared-memory-per-block=49152" -verify-diagnostics
// RUN: not sinter-opt %s -split-input-file --launch-check-target="target-name=old arch=sm_80" 2>&1 | FileCheck %s --check-prefix=ARCH

// Launches within the H200's limits pass unchanged.
// CHECK-LABEL: func.func @fits
// CHECK: launch.kernel "silu_mul"
// ARCH: target 'old' is sm_80: Sinter's kernels need sm_90 or newer (thread-block clusters, programmatic dependent launch)
func.func @fits(%x: memref<4xf32>, %y: memref<4xf32>) {
  launch.kernel "silu_mul"(%x, %y) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0, 1>, params = [1, 4], shared_bytes = 40960 : i64, writes = array<i64: 1>} : memref<4xf32>, memref<4xf32>
  return
}

// -----

// Negative: more dynamic shared memory than a block of the target may use.
// CHECK-LABEL: func.func @too_much_shared
func.func @too_much_shared(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{launch 'silu_mul' needs 65536 bytes of dynamic shared memory; target 'small' allows 49152 a block}}
  launch.kernel "silu_mul"(%x, %y) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0, 1>, params = [1, 4], shared_bytes = 65536 : i64, writes = array<i64: 1>} : memref<4xf32>, memref<4xf32>
  return
}
