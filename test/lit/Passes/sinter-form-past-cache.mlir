// RUN: sinter-opt %s -split-input-file -verify-diagnostics --sinter-form-past-cache | FileCheck %s

// The prompt entry of a with-past export (past length 0): the past becomes the whole cache,
// the present output its write at positions 0..S-1, and the attention keeps reading the new
// keys. The shape the model reads off the past stays the exported one.
// CHECK-LABEL: func.func @prompt
// CHECK-SAME: %[[CACHE:[^:]+]]: tensor<1x2x8x4xf32> {sinter.name = "past_key_values.0.key", sinter.state = "past_key_values.0.key"}
// CHECK-SAME: -> (tensor<1x2x8x4xf32> {sinter.name = "present.0.key", sinter.state = "past_key_values.0.key"}, tensor<1x2x3x4xf32>, tensor<4xi64>)
// CHECK-DAG: %[[SHAPE:.+]] = sinter.constant dense<[1, 2, 0, 4]> : tensor<4xi64>
// CHECK-DAG: %[[POS:.+]] = sinter.constant dense<[0, 1, 2]> : tensor<3xi64>
// CHECK: %[[W:.+]] = sinter.cache_write %[[CACHE]], %arg1, %[[POS]] {axis = 2 : i64}
// CHECK: %[[R:.+]] = sinter.neg %arg1
// CHECK: return %[[W]], %[[R]], %[[SHAPE]]
func.func @prompt(%past: tensor<1x2x0x4xf32> {sinter.name = "past_key_values.0.key"}, %new: tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32> {sinter.name = "present.0.key"}, tensor<1x2x3x4xf32>, tensor<4xi64>) attributes {sinter.cache_length = 8 : i64} {
  %shape = sinter.shape %past {end = 4 : i64, start = 0 : i64} : (tensor<1x2x0x4xf32>) -> tensor<4xi64>
  %present = sinter.concat %past, %new {axis = 2 : i64} : (tensor<1x2x0x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %read = sinter.neg %present : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  return %present, %read, %shape : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<4xi64>
}

// -----

// The decode step (past length L - 1, one new position): the write goes to a new
// `cache_position` argument, made once for every cache, and the readers read the written
// cache.
// CHECK-LABEL: func.func @step
// CHECK-SAME: %[[K:[^:]+]]: tensor<1x2x8x4xbf16> {sinter.name = "past_key_values.0.key", sinter.state = "past_key_values.0.key"}
// CHECK-SAME: %[[V:[^:]+]]: tensor<1x2x8x4xbf16> {sinter.name = "past_key_values.0.value", sinter.state = "past_key_values.0.value"}
// CHECK-SAME: %[[POS:[^:]+]]: tensor<1xi64> {sinter.name = "cache_position"}
// CHECK: %[[WK:.+]] = sinter.cache_write %[[K]], %arg2, %[[POS]] {axis = 2 : i64}
// CHECK: %[[WV:.+]] = sinter.cache_write %[[V]], %arg3, %[[POS]] {axis = 2 : i64}
// CHECK: %[[R:.+]] = sinter.add %[[WK]], %[[WV]]
// CHECK: return %[[R]], %[[WK]], %[[WV]]
func.func @step(%k: tensor<1x2x7x4xbf16> {sinter.name = "past_key_values.0.key"}, %v: tensor<1x2x7x4xbf16> {sinter.name = "past_key_values.0.value"}, %nk: tensor<1x2x1x4xbf16>, %nv: tensor<1x2x1x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) attributes {sinter.cache_length = 8 : i64} {
  %pk = sinter.concat %k, %nk {axis = 2 : i64} : (tensor<1x2x7x4xbf16>, tensor<1x2x1x4xbf16>) -> tensor<1x2x8x4xbf16>
  %pv = sinter.concat %v, %nv {axis = 2 : i64} : (tensor<1x2x7x4xbf16>, tensor<1x2x1x4xbf16>) -> tensor<1x2x8x4xbf16>
  %r = sinter.add %pk, %pv : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> tensor<1x2x8x4xbf16>
  return %r, %pk, %pv : tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>
}

// -----

// A model that already has an i64 [1] `cache_position` input writes there.
// CHECK-LABEL: func.func @own_position
// CHECK-SAME: (%[[K:[^:]+]]: tensor<1x1x4x2xf32> {{.*}}, %[[NEW:[^:]+]]: tensor<1x1x1x2xf32>, %[[POS:[^:]+]]: tensor<1xi64> {sinter.name = "cache_position"})
// CHECK: sinter.cache_write %[[K]], %[[NEW]], %[[POS]]
func.func @own_position(%k: tensor<1x1x3x2xf32> {sinter.name = "past_key"}, %new: tensor<1x1x1x2xf32>, %pos: tensor<1xi64> {sinter.name = "cache_position"}) -> tensor<1x1x4x2xf32> attributes {sinter.cache_length = 4 : i64} {
  %p = sinter.concat %k, %new {axis = 2 : i64} : (tensor<1x1x3x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x1x4x2xf32>
  return %p : tensor<1x1x4x2xf32>
}

// -----

// Negative: a function without sinter.cache_length is not touched.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: sinter.cache_write
// CHECK: sinter.concat
func.func @unmarked(%k: tensor<1x1x3x2xf32>, %new: tensor<1x1x1x2xf32>) -> tensor<1x1x4x2xf32> {
  %p = sinter.concat %k, %new {axis = 2 : i64} : (tensor<1x1x3x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x1x4x2xf32>
  return %p : tensor<1x1x4x2xf32>
}

// -----

// expected-error @+1 {{no result of this --cache-length entry is a cache}}
func.func @no_cache(%x: tensor<2xf32>) -> tensor<2xf32> attributes {sinter.cache_length = 4 : i64} {
  %y = sinter.neg %x : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @wrong_axis(%k: tensor<1x3x2xf32> {sinter.name = "past"}, %new: tensor<1x1x2xf32>) -> tensor<1x4x2xf32> attributes {sinter.cache_length = 4 : i64} {
  // expected-error @+1 {{the cache 'past' is concatenated along axis 1 of a rank-3 tensor}}
  %p = sinter.concat %k, %new {axis = 1 : i64} : (tensor<1x3x2xf32>, tensor<1x1x2xf32>) -> tensor<1x4x2xf32>
  return %p : tensor<1x4x2xf32>
}

// -----

func.func @short_past(%k: tensor<1x1x2x2xf32> {sinter.name = "past"}, %new: tensor<1x1x1x2xf32>) -> tensor<1x1x3x2xf32> attributes {sinter.cache_length = 4 : i64} {
  // expected-error @+1 {{the cache 'past' has 2 past and 1 new positions: neither a prompt (no past) nor a decode step (one new position filling the 4 of --cache-length)}}
  %p = sinter.concat %k, %new {axis = 2 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x1x3x2xf32>
  return %p : tensor<1x1x3x2xf32>
}

// -----

func.func @read_besides(%k: tensor<1x1x3x2xf32> {sinter.name = "past"}, %new: tensor<1x1x1x2xf32>) -> (tensor<1x1x4x2xf32>, tensor<1x1x3x2xf32>) attributes {sinter.cache_length = 4 : i64} {
  %p = sinter.concat %k, %new {axis = 2 : i64} : (tensor<1x1x3x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x1x4x2xf32>
  // expected-error @+1 {{the cache 'past' is read besides its concatenation}}
  %n = sinter.neg %k : (tensor<1x1x3x2xf32>) -> tensor<1x1x3x2xf32>
  return %p, %n : tensor<1x1x4x2xf32>, tensor<1x1x3x2xf32>
}

// -----

// expected-error @+1 {{the model's input 'cache_position' is not i64 [1]}}
func.func @bad_position(%k: tensor<1x1x3x2xf32> {sinter.name = "past"}, %new: tensor<1x1x1x2xf32>, %pos: tensor<2xi64> {sinter.name = "cache_position"}) -> tensor<1x1x4x2xf32> attributes {sinter.cache_length = 4 : i64} {
  %p = sinter.concat %k, %new {axis = 2 : i64} : (tensor<1x1x3x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x1x4x2xf32>
  return %p : tensor<1x1x4x2xf32>
}
