// RUN: sinter-opt %s -split-input-file -verify-diagnostics

func.func @weight_type(%x: memref<2xf32>) {
  // expected-error @+1 {{value type 'tensor<3xf32>' does not match the buffer 'memref<2xf32>'}}
  %w = launch.weight "w" {value = dense<1.0> : tensor<3xf32>} : memref<2xf32>
  return
}

// -----

func.func @negative_offset() {
  // expected-error @+1 {{offset must be non-negative}}
  %t = launch.alloc {offset = -256 : i64} : memref<2xf32>
  return
}

// -----

func.func @strided() {
  // expected-error @+1 {{buffers must be dense row-major (identity layout)}}
  %t = launch.alloc : memref<2x2xf32, strided<[1, 2]>>
  return
}

// -----

func.func @gemm_k(%x: memref<2x8xf32>, %w: memref<4x4xf32>, %y: memref<2x4xf32>) {
  // expected-error @+1 {{weight must be [8x4], got 'memref<4x4xf32>'}}
  launch.gemm %x, %w -> %y {m = 2 : i64, n = 4 : i64, k = 8 : i64, precision = "strict"} : memref<2x8xf32>, memref<4x4xf32> -> memref<2x4xf32>
  return
}

// -----

func.func @gemm_output(%x: memref<2x8xf32>, %w: memref<8x4xf32>, %y: memref<3x4xf32>) {
  // expected-error @+1 {{output holds 12 elements, expected m*n = 8}}
  launch.gemm %x, %w -> %y {m = 2 : i64, n = 4 : i64, k = 8 : i64, precision = "strict"} : memref<2x8xf32>, memref<8x4xf32> -> memref<3x4xf32>
  return
}

// -----

func.func @gemm_bias(%x: memref<2x8xf32>, %w: memref<8x4xf32>, %b: memref<5xf32>, %y: memref<2x4xf32>) {
  // expected-error @+1 {{bias must hold n = 4 elements}}
  launch.gemm %x, %w bias %b -> %y {m = 2 : i64, n = 4 : i64, k = 8 : i64, precision = "strict"} : memref<2x8xf32>, memref<8x4xf32>, memref<5xf32> -> memref<2x4xf32>
  return
}

// -----

func.func @gemm_precision(%x: memref<2x8xf32>, %w: memref<8x4xf32>, %y: memref<2x4xf32>) {
  // expected-error @+1 {{precision must be strict, tf32 or native, got 'fast'}}
  launch.gemm %x, %w -> %y {m = 2 : i64, n = 4 : i64, k = 8 : i64, precision = "fast"} : memref<2x8xf32>, memref<8x4xf32> -> memref<2x4xf32>
  return
}

// -----

func.func @gemm_tf32_bf16(%x: memref<2x8xbf16>, %w: memref<8x4xbf16>, %y: memref<2x4xbf16>) {
  // expected-error @+1 {{precision 'tf32' needs f32 operands}}
  launch.gemm %x, %w -> %y {m = 2 : i64, n = 4 : i64, k = 8 : i64, precision = "tf32"} : memref<2x8xbf16>, memref<8x4xbf16> -> memref<2x4xbf16>
  return
}

// -----

func.func @gemm_strict_bf16(%x: memref<2x8xbf16>, %w: memref<8x4xbf16>, %y: memref<2x4xbf16>) {
  // expected-error @+1 {{precision 'strict' needs f32 or f64 operands}}
  launch.gemm %x, %w -> %y {m = 2 : i64, n = 4 : i64, k = 8 : i64, precision = "strict"} : memref<2x8xbf16>, memref<8x4xbf16> -> memref<2x4xbf16>
  return
}

// -----

func.func @gemm_zero(%x: memref<2x8xf32>, %w: memref<8x4xf32>, %y: memref<2x4xf32>) {
  // expected-error @+1 {{m, n and k must be positive}}
  launch.gemm %x, %w -> %y {m = 0 : i64, n = 4 : i64, k = 8 : i64, precision = "strict"} : memref<2x8xf32>, memref<8x4xf32> -> memref<2x4xf32>
  return
}

// -----

func.func @kernel_threads(%x: memref<4xf32>) {
  // expected-error @+1 {{block has 2048 threads, more than 1024}}
  launch.kernel "k"(%x) {grid = array<i64: 1, 1, 1>, block = array<i64: 1024, 2, 1>, args = array<i64: 0>, params = [], shared_bytes = 0 : i64, writes = array<i64: 0>} : memref<4xf32>
  return
}

// -----

func.func @kernel_grid(%x: memref<4xf32>) {
  // expected-error @+1 {{grid and block must have 3 entries}}
  launch.kernel "k"(%x) {grid = array<i64: 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>, params = [], shared_bytes = 0 : i64, writes = array<i64: 0>} : memref<4xf32>
  return
}

// -----

func.func @kernel_writes(%x: memref<4xf32>) {
  // expected-error @+1 {{writes index 1 is out of range}}
  launch.kernel "k"(%x) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>, params = [], shared_bytes = 0 : i64, writes = array<i64: 1>} : memref<4xf32>
  return
}

// -----

func.func @kernel_args(%x: memref<4xf32>) {
  // expected-error @+1 {{args index 3 is out of range}}
  launch.kernel "k"(%x) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0, -1, 3>, params = [], shared_bytes = 0 : i64, writes = array<i64: 0>} : memref<4xf32>
  return
}

// -----

func.func @kernel_params(%x: memref<4xf32>) {
  // expected-error @+1 {{params must be integers or strings}}
  launch.kernel "k"(%x) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>, params = [1.0 : f32], shared_bytes = 0 : i64, writes = array<i64: 0>} : memref<4xf32>
  return
}

// -----

func.func @kernel_unknown(%x: memref<4xf32>) {
  // expected-error @+1 {{unknown kernel template 'k'}}
  launch.kernel "k"(%x) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>, params = [], shared_bytes = 0 : i64, writes = array<i64: 0>} : memref<4xf32>
  return
}

// -----

func.func @kernel_param_count(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'gate_mul' takes 2 to 3 parameters, got 1}}
  launch.kernel "gate_mul"(%x, %y) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0, 1>, params = [1], shared_bytes = 0 : i64, writes = array<i64: 1>} : memref<4xf32>, memref<4xf32>
  return
}

// -----

func.func @kernel_param_kind(%x: memref<4xf32>, %y: memref<4xf32>, %w: memref<4xf32>) {
  // expected-error @+1 {{parameter 2 ('EPS_BITS') of 'rms_norm' is not a valid value: "1e-5"}}
  launch.kernel "rms_norm"(%x, %w, %y) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0, 1, 2>, params = [1, 4, "1e-5"], shared_bytes = 0 : i64, writes = array<i64: 2>} : memref<4xf32>, memref<4xf32>, memref<4xf32>
  return
}

// -----

func.func @kernel_arg_count(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'gate_mul' takes 2 arguments, got 1}}
  launch.kernel "gate_mul"(%x, %y) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0>, params = [1, 4], shared_bytes = 0 : i64, writes = array<i64: 0>} : memref<4xf32>, memref<4xf32>
  return
}

// -----

func.func @kernel_required_arg(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{argument 'gate_up' of 'gate_mul' is required}}
  launch.kernel "gate_mul"(%y) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: -1, 0>, params = [1, 4], shared_bytes = 0 : i64, writes = array<i64: 0>} : memref<4xf32>
  return
}

// -----

func.func @kernel_writes_input(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{buffer 0 is listed as written but no output argument of 'gate_mul' receives it}}
  launch.kernel "gate_mul"(%x, %y) {grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, args = array<i64: 0, 1>, params = [1, 4], shared_bytes = 0 : i64, writes = array<i64: 0>} : memref<4xf32>, memref<4xf32>
  return
}
