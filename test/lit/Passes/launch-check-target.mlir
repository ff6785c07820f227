// RUN: sinter-opt %s -split-input-file --launch-check-target -verify-diagnostics | FileCheck %s

// Without a sinter.target the module is for the H200: launches within its limits pass
// unchanged.
// CHECK-LABEL: func.func @fits
// CHECK: launch.kernel "gate_mul"
func.func @fits(%x: memref<4xf32>, %y: memref<4xf32>) {
  launch.kernel "gate_mul"(%x, %y) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0, 1>, params = [1, 4], shared_bytes = 40960 : i64, writes = array<i64: 1>} : memref<4xf32>, memref<4xf32>
  return
}

// -----

// Negative: more dynamic shared memory than a block of the module's target may use.
module attributes {sinter.target = {name = "small", shared_memory_per_block = 49152 : i64, shared_memory_per_sm = 65536 : i64}} {
func.func @too_much_shared(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{launch 'gate_mul' needs 65536 bytes of dynamic shared memory; target 'small' allows 49152 a block}}
  launch.kernel "gate_mul"(%x, %y) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0, 1>, params = [1, 4], shared_bytes = 65536 : i64, writes = array<i64: 1>} : memref<4xf32>, memref<4xf32>
  return
}
}

// -----

// Negative: a target older than sm_90.
// expected-error @+1 {{target 'old' is sm_80: Sinter's kernels need sm_90 or newer (thread-block clusters, programmatic dependent launch)}}
module attributes {sinter.target = {name = "old", arch = "sm_80"}} {
func.func @old(%x: memref<4xf32>) {
  return
}
}

// -----

// Negative: a malformed target attribute.
// expected-error @+1 {{'sinter.target' field 'sm_count' is unknown or out of range}}
module attributes {sinter.target = {sm_count = "many"}} {
func.func @malformed(%x: memref<4xf32>) {
  return
}
}

// -----

// expected-error @+1 {{'sinter.target': shared_memory_per_sm (1024) is below shared_memory_per_block (232448)}}
module attributes {sinter.target = {shared_memory_per_sm = 1024 : i64}} {
func.func @smaller_sm(%x: memref<4xf32>) {
  return
}
}

// -----

// expected-error @+1 {{'sinter.target' must be a dictionary}}
module attributes {sinter.target = "h200"} {
func.func @not_a_dictionary(%x: memref<4xf32>) {
  return
}
}
