// RUN: sinter-opt %s -split-input-file -verify-diagnostics --sinter-form-cache-state | FileCheck %s

// torch.onnx's form of `cache.index_copy(2, positions, rows)`: the cache transposed so the
// written axis leads, a ScatterND of the rows (transposed alike), transposed back.
// CHECK-LABEL: func.func @index_copy
// CHECK-SAME: %[[CACHE:[^:]+]]: tensor<1x2x8x4xbf16> {sinter.name = "past_key_0", sinter.state = "past_key_0"}
// CHECK-SAME: {sinter.state = "past_key_0"}
// CHECK: %[[W:.+]] = sinter.cache_write %[[CACHE]], %arg1, %arg2 {axis = 2 : i64}
// CHECK-NOT: sinter.scatter_nd
// CHECK: %[[R:.+]] = sinter.neg %[[W]]
// CHECK: return %[[W]], %[[R]]
func.func @index_copy(%cache: tensor<1x2x8x4xbf16> {sinter.name = "past_key_0"}, %rows: tensor<1x2x1x4xbf16>, %pos: tensor<1xi64>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) {
  %t = sinter.transpose %cache, [2, 0, 1, 3] : (tensor<1x2x8x4xbf16>) -> tensor<8x1x2x4xbf16>
  %idx = sinter.unsqueeze %pos {axes = array<i64: 1>} : (tensor<1xi64>) -> tensor<1x1xi64>
  %u = sinter.transpose %rows, [2, 0, 1, 3] : (tensor<1x2x1x4xbf16>) -> tensor<1x1x2x4xbf16>
  %s = sinter.scatter_nd %t, %idx, %u : (tensor<8x1x2x4xbf16>, tensor<1x1xi64>, tensor<1x1x2x4xbf16>) -> tensor<8x1x2x4xbf16>
  %new = sinter.transpose %s, [1, 2, 0, 3] : (tensor<8x1x2x4xbf16>) -> tensor<1x2x8x4xbf16>
  // A reader of the update (attention) reads the cache write.
  %read = sinter.neg %new : (tensor<1x2x8x4xbf16>) -> tensor<1x2x8x4xbf16>
  return %new, %read : tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>
}

// -----

// Negative: a scatter of another layout (the first axis of a [8, 4] tensor) is no KV cache:
// it stays a scatter_nd of the generic tier, with plain input and output.
// CHECK-LABEL: func.func @first_axis
// CHECK-NOT: sinter.cache_write
// CHECK-NOT: sinter.state
// CHECK: sinter.scatter_nd
func.func @first_axis(%cache: tensor<8x4xf32>, %rows: tensor<2x4xf32>, %pos: tensor<2xi64>) -> tensor<8x4xf32> {
  %idx = sinter.unsqueeze %pos {axes = array<i64: 1>} : (tensor<2xi64>) -> tensor<2x1xi64>
  %s = sinter.scatter_nd %cache, %idx, %rows : (tensor<8x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// Negative: a scatter that adds its rows is no cache update either, in the KV layout too.
// CHECK-LABEL: func.func @adds_rows
// CHECK-NOT: sinter.cache_write
// CHECK: sinter.scatter_nd {{.*}}reduction = "add"
func.func @adds_rows(%cache: tensor<1x2x8x4xbf16>, %rows: tensor<1x2x1x4xbf16>, %pos: tensor<1xi64>) -> tensor<1x2x8x4xbf16> {
  %t = sinter.transpose %cache, [2, 0, 1, 3] : (tensor<1x2x8x4xbf16>) -> tensor<8x1x2x4xbf16>
  %idx = sinter.unsqueeze %pos {axes = array<i64: 1>} : (tensor<1xi64>) -> tensor<1x1xi64>
  %u = sinter.transpose %rows, [2, 0, 1, 3] : (tensor<1x2x1x4xbf16>) -> tensor<1x1x2x4xbf16>
  %s = sinter.scatter_nd %t, %idx, %u {reduction = "add"} : (tensor<8x1x2x4xbf16>, tensor<1x1xi64>, tensor<1x1x2x4xbf16>) -> tensor<8x1x2x4xbf16>
  %new = sinter.transpose %s, [1, 2, 0, 3] : (tensor<8x1x2x4xbf16>) -> tensor<1x2x8x4xbf16>
  return %new : tensor<1x2x8x4xbf16>
}

// -----

// Negative: a scatter into a tensor that is not returned, and a returned scatter of a
// computed tensor, are ordinary ops.
// CHECK-LABEL: func.func @not_a_cache
// CHECK-NOT: sinter.cache_write
// CHECK-NOT: sinter.state
// CHECK: sinter.scatter_nd
func.func @not_a_cache(%x: tensor<8x4xf32>, %rows: tensor<1x4xf32>, %pos: tensor<1x1xi64>) -> tensor<8x4xf32> {
  %y = sinter.neg %x : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = sinter.scatter_nd %y, %pos, %rows : (tensor<8x4xf32>, tensor<1x1xi64>, tensor<1x4xf32>) -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// Negative: the old cache is still read after the update; writing in place would change
// what that reader sees.
func.func @old_cache_read(%cache: tensor<1x2x8x4xf32> {sinter.name = "cache"}, %rows: tensor<1x2x1x4xf32>, %pos: tensor<1xi64>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %t = sinter.transpose %cache, [2, 0, 1, 3] : (tensor<1x2x8x4xf32>) -> tensor<8x1x2x4xf32>
  %idx = sinter.unsqueeze %pos {axes = array<i64: 1>} : (tensor<1xi64>) -> tensor<1x1xi64>
  %u = sinter.transpose %rows, [2, 0, 1, 3] : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  %s = sinter.scatter_nd %t, %idx, %u : (tensor<8x1x2x4xf32>, tensor<1x1xi64>, tensor<1x1x2x4xf32>) -> tensor<8x1x2x4xf32>
  %new = sinter.transpose %s, [1, 2, 0, 3] : (tensor<8x1x2x4xf32>) -> tensor<1x2x8x4xf32>
  // expected-error @+1 {{the cache 'cache' is read besides its update}}
  %old = sinter.neg %cache : (tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %new, %old : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}
