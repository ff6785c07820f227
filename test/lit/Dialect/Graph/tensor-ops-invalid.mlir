// RUN: sinter-opt %s -split-input-file -verify-diagnostics

func.func @shape_bounds(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{needs 0 <= start <= end <= rank (2), got start 1, end 3}}
  %0 = sinter.shape %x {start = 1 : i64, end = 3 : i64} : (tensor<2x3xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @shape_result(%x: tensor<2x3xf32>) -> tensor<3xi64> {
  // expected-error @+1 {{result shape [3] does not match the inferred shape [2]}}
  %0 = sinter.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<2x3xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @constant_of_shape_count(%s: tensor<2xi64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{value must hold exactly one element, it holds 2}}
  %0 = sinter.constant_of_shape %s {value = dense<[1.0, 2.0]> : tensor<2xf32>} : (tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @constant_of_shape_type(%s: tensor<2xi64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{value element type 'i64' differs from the result element type 'f32'}}
  %0 = sinter.constant_of_shape %s {value = dense<1> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @constant_of_shape_rank(%s: tensor<3xi64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{shape operand must be 1-D with one entry per result dimension (2)}}
  %0 = sinter.constant_of_shape %s {value = dense<1.0> : tensor<1xf32>} : (tensor<3xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @range_rank(%a: tensor<1xi64>, %b: tensor<i64>, %c: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{start, limit and delta must be 0-D tensors}}
  %0 = sinter.range %a, %b, %c : (tensor<1xi64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @range_type(%a: tensor<i64>, %b: tensor<i64>, %c: tensor<i64>) -> tensor<4xi32> {
  // expected-error @+1 {{operand and result element types differ: 'i64' vs 'i32'}}
  %0 = sinter.range %a, %b, %c : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @range_result_rank(%a: tensor<i64>, %b: tensor<i64>, %c: tensor<i64>) -> tensor<2x2xi64> {
  // expected-error @+1 {{result must be 1-D}}
  %0 = sinter.range %a, %b, %c : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

func.func @gather_axis(%x: tensor<4x8xf32>, %i: tensor<3xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 input}}
  %0 = sinter.gather %x, %i {axis = 2 : i64} : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @gather_type(%x: tensor<4x8xf32>, %i: tensor<3xi64>) -> tensor<3x8xbf16> {
  // expected-error @+1 {{input and result element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.gather %x, %i {axis = 0 : i64} : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<3x8xbf16>
  return %0 : tensor<3x8xbf16>
}

// -----

func.func @gather_shape(%x: tensor<4x8xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{result shape [3x4] does not match the inferred shape [4x3]}}
  %0 = sinter.gather %x, %i {axis = 1 : i64} : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_float_indices(%x: tensor<4x8xf32>, %i: tensor<3xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = sinter.gather %x, %i {axis = 0 : i64} : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

func.func @gather_nd_scalar_indices(%x: tensor<4x8xf32>, %i: tensor<i64>) -> tensor<8xf32> {
  // expected-error @+1 {{indices must have rank >= 1}}
  %0 = sinter.gather_nd %x, %i : (tensor<4x8xf32>, tensor<i64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @gather_nd_batch_dims(%x: tensor<4x8xf32>, %i: tensor<4x1xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{batch_dims 2 must be in [0, min(input rank, indices rank))}}
  %0 = sinter.gather_nd %x, %i {batch_dims = 2 : i64} : (tensor<4x8xf32>, tensor<4x1xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_nd_batch_mismatch(%x: tensor<4x8xf32>, %i: tensor<3x1xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{batch dimension 0 differs: 4 vs 3}}
  %0 = sinter.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<4x8xf32>, tensor<3x1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @gather_nd_tuple(%x: tensor<4x8xf32>, %i: tensor<2x3xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{the last indices dimension (3) must be in [1, 2]}}
  %0 = sinter.gather_nd %x, %i : (tensor<4x8xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @gather_nd_shape(%x: tensor<4x8xf32>, %i: tensor<2x1xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{result shape [2] does not match the inferred shape [2x8]}}
  %0 = sinter.gather_nd %x, %i : (tensor<4x8xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @scatter_nd_updates_type(%x: tensor<4x8xf32>, %i: tensor<2x1xi64>, %u: tensor<2x8xbf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{input and updates element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.scatter_nd %x, %i, %u : (tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x8xbf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scatter_nd_indices_rank(%x: tensor<4x8xf32>, %i: tensor<i64>, %u: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{indices must have rank >= 1}}
  %0 = sinter.scatter_nd %x, %i, %u : (tensor<4x8xf32>, tensor<i64>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scatter_nd_tuple(%x: tensor<4x8xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{the last indices dimension (3) must be in [1, 2]}}
  %0 = sinter.scatter_nd %x, %i, %u : (tensor<4x8xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scatter_nd_updates(%x: tensor<4x8xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{updates shape [2x4] must be [2x8]}}
  %0 = sinter.scatter_nd %x, %i, %u : (tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scatter_nd_result(%x: tensor<4x8xf32>, %i: tensor<2x1xi64>, %u: tensor<2x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{result shape [8x4] does not match the inferred shape [4x8]}}
  %0 = sinter.scatter_nd %x, %i, %u : (tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @slice_entries(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{starts, ends and steps need one entry per input dimension (2)}}
  %0 = sinter.slice %x {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_step(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{step of dimension 1 is 0}}
  %0 = sinter.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 8>, steps = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_unnormalized(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{bounds of dimension 0 (start -1, end 4, step 1) are not normalized for size 4}}
  %0 = sinter.slice %x {starts = array<i64: -1, 0>, ends = array<i64: 4, 8>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @slice_shape(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{result shape [2x8] does not match the inferred shape [2x4]}}
  %0 = sinter.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 4, 8>, steps = array<i64: 2, 2>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @concat_none() -> tensor<2xf32> {
  // expected-error @+1 {{needs at least one input}}
  %0 = sinter.concat {axis = 0 : i64} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank-2 inputs}}
  %0 = sinter.concat %a, %b {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{input 1 has rank 1, input 0 has 2}}
  %0 = sinter.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{input 1 has size 4 in dimension 0, input 0 has 2}}
  %0 = sinter.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_type(%a: tensor<2x3xf32>, %b: tensor<2x3xbf16>) -> tensor<2x6xf32> {
  // expected-error @+1 {{input and result element types differ: 'bf16' vs 'f32'}}
  %0 = sinter.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xbf16>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_shape(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{result shape [2x5] does not match the inferred shape [2x6]}}
  %0 = sinter.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @unsqueeze_axes(%x: tensor<2x3xf32>) -> tensor<1x2x3x1xf32> {
  // expected-error @+1 {{axes must be sorted, unique and within [0, 4)}}
  %0 = sinter.unsqueeze %x {axes = array<i64: 3, 0>} : (tensor<2x3xf32>) -> tensor<1x2x3x1xf32>
  return %0 : tensor<1x2x3x1xf32>
}

// -----

func.func @unsqueeze_shape(%x: tensor<2x3xf32>) -> tensor<2x1x3xf32> {
  // expected-error @+1 {{result shape [2x1x3] does not match the inferred shape [1x2x3]}}
  %0 = sinter.unsqueeze %x {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
  return %0 : tensor<2x1x3xf32>
}

// -----

func.func @squeeze_axes(%x: tensor<1x3x1xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{axes must be sorted, unique and within [0, 3)}}
  %0 = sinter.squeeze %x {axes = array<i64: 0, 3>} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @squeeze_not_one(%x: tensor<1x3x1xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{dimension 1 has size 3, not 1}}
  %0 = sinter.squeeze %x {axes = array<i64: 0, 1>} : (tensor<1x3x1xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @squeeze_shape(%x: tensor<1x3x1xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{result shape [1x3] does not match the inferred shape [3x1]}}
  %0 = sinter.squeeze %x {axes = array<i64: 0>} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @expand_shape_rank(%x: tensor<3x1xf32>, %s: tensor<1x2xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{shape operand must be 1-D}}
  %0 = sinter.expand %x, %s : (tensor<3x1xf32>, tensor<1x2xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @expand_shape_entries(%x: tensor<3x1xf32>, %s: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{shape operand has more entries than the result has dimensions}}
  %0 = sinter.expand %x, %s : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @expand_broadcast(%x: tensor<3x2xf32>, %s: tensor<2xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{input shape [3x2] does not broadcast to the result [3x4]}}
  %0 = sinter.expand %x, %s : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @trilu_rank(%x: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{input must have rank >= 2}}
  %0 = sinter.trilu %x : (tensor<6xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @trilu_type(%x: tensor<6x6xf32>) -> tensor<6x6xi1> {
  // expected-error @+1 {{input and result element types differ: 'f32' vs 'i1'}}
  %0 = sinter.trilu %x : (tensor<6x6xf32>) -> tensor<6x6xi1>
  return %0 : tensor<6x6xi1>
}

// -----

func.func @trilu_shape(%x: tensor<6x6xf32>) -> tensor<6x5xf32> {
  // expected-error @+1 {{result shape [6x5] does not match the inferred shape [6x6]}}
  %0 = sinter.trilu %x : (tensor<6x6xf32>) -> tensor<6x5xf32>
  return %0 : tensor<6x5xf32>
}

// -----

func.func @reduce_mean_int(%x: tensor<2x3xi64>) -> tensor<2x1xi64> {
  // expected-error @+1 {{input must be floating point}}
  %0 = sinter.reduce_mean %x {axes = array<i64: 1>} : (tensor<2x3xi64>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// -----

func.func @reduce_mean_axes(%x: tensor<2x3xf32>) -> tensor<1x1xf32> {
  // expected-error @+1 {{axes must be sorted, unique and within [0, 2)}}
  %0 = sinter.reduce_mean %x {axes = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

func.func @reduce_mean_shape(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{result shape [2x1] does not match the inferred shape [2]}}
  %0 = sinter.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis -1 is out of range for a rank-2 input}}
  %0 = sinter.softmax %x {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @softmax_type(%x: tensor<2x3xf32>) -> tensor<2x3xbf16> {
  // expected-error @+1 {{input and result element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.softmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

func.func @softmax_shape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{result shape [3x2] does not match the inferred shape [2x3]}}
  %0 = sinter.softmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @rms_axis(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 input}}
  %0 = sinter.rms_normalization %x, %w {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @rms_type(%x: tensor<2x8xf32>, %w: tensor<8xbf16>) -> tensor<2x8xf32> {
  // expected-error @+1 {{scale and result element types differ: 'bf16' vs 'f32'}}
  %0 = sinter.rms_normalization %x, %w {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x8xf32>, tensor<8xbf16>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @rms_scale(%x: tensor<2x8xf32>, %w: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{scale shape [2x8] does not broadcast to the normalized dimensions of [2x8]}}
  %0 = sinter.rms_normalization %x, %w {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @rms_shape(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{result shape [8x2] does not match the inferred shape [2x8]}}
  %0 = sinter.rms_normalization %x, %w {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

func.func @attention_types(%q: tensor<1x4x6x16xf32>, %k: tensor<1x4x6x16xbf16>, %v: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{query, key, value and result must have one element type}}
  %0 = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 4 : i64, scale = 0.25 : f32} : (tensor<1x4x6x16xf32>, tensor<1x4x6x16xbf16>, tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @attention_mask_type(%q: tensor<1x4x6x16xf32>, %k: tensor<1x4x6x16xf32>, %v: tensor<1x4x6x16xf32>, %m: tensor<6x6xi64>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{mask must be i1 or 'f32', got 'i64'}}
  %0 = sinter.attention %q, %k, %v, mask %m {q_num_heads = 4 : i64, kv_num_heads = 4 : i64, scale = 0.25 : f32} : (tensor<1x4x6x16xf32>, tensor<1x4x6x16xf32>, tensor<1x4x6x16xf32>, tensor<6x6xi64>) -> tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @attention_rank(%q: tensor<4x6x16xf32>, %k: tensor<1x4x6x16xf32>, %v: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{query, key and value must all be 3-D or all 4-D}}
  %0 = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 4 : i64, scale = 0.25 : f32} : (tensor<4x6x16xf32>, tensor<1x4x6x16xf32>, tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @attention_heads(%q: tensor<1x4x6x16xf32>, %k: tensor<1x3x6x16xf32>, %v: tensor<1x3x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{q_num_heads (4) must be a positive multiple of kv_num_heads (3)}}
  %0 = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 3 : i64, scale = 0.25 : f32} : (tensor<1x4x6x16xf32>, tensor<1x3x6x16xf32>, tensor<1x3x6x16xf32>) -> tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @attention_batch(%q: tensor<1x4x6x16xf32>, %k: tensor<2x2x6x16xf32>, %v: tensor<2x2x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{batch sizes of query, key and value differ}}
  %0 = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.25 : f32} : (tensor<1x4x6x16xf32>, tensor<2x2x6x16xf32>, tensor<2x2x6x16xf32>) -> tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @attention_head_dims(%q: tensor<1x4x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{head dimensions (4, 2, 2) do not match q_num_heads 4 and kv_num_heads 1}}
  %0 = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 1 : i64, scale = 0.25 : f32} : (tensor<1x4x6x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) -> tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @attention_kv_len(%q: tensor<1x4x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x5x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{key and value sequence lengths differ}}
  %0 = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.25 : f32} : (tensor<1x4x6x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @attention_hidden(%q: tensor<1x6x64xf32>, %k: tensor<1x6x30xf32>, %v: tensor<1x6x30xf32>) -> tensor<1x6x64xf32> {
  // expected-error @+1 {{hidden sizes (64, 30, 30) are not multiples of the head counts}}
  %0 = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 4 : i64, scale = 0.25 : f32} : (tensor<1x6x64xf32>, tensor<1x6x30xf32>, tensor<1x6x30xf32>) -> tensor<1x6x64xf32>
  return %0 : tensor<1x6x64xf32>
}

// -----

func.func @attention_head_size(%q: tensor<1x4x6x16xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{query and key head sizes differ: 16 vs 8}}
  %0 = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.25 : f32} : (tensor<1x4x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x16xf32>) -> tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @attention_mask_shape(%q: tensor<1x4x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>, %m: tensor<6x5xi1>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{mask shape [6x5] does not broadcast to [1x4x6x6]}}
  %0 = sinter.attention %q, %k, %v, mask %m {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.25 : f32} : (tensor<1x4x6x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>, tensor<6x5xi1>) -> tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @attention_result(%q: tensor<1x4x6x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{result shape [1x4x6x16] does not match the inferred shape [1x4x6x8]}}
  %0 = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.25 : f32} : (tensor<1x4x6x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>) -> tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @scatter_nd_reduction(%x: tensor<4xf32>, %i: tensor<1x1xi64>, %u: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduction must be none, add, mul, max or min, not 'mean'}}
  %y = sinter.scatter_nd %x, %i, %u {reduction = "mean"} : (tensor<4xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @scatter_nd_bool_add(%x: tensor<4xi1>, %i: tensor<1x1xi64>, %u: tensor<1xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{cannot combine i1 updates}}
  %y = sinter.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<4xi1>, tensor<1x1xi64>, tensor<1xi1>) -> tensor<4xi1>
  return %y : tensor<4xi1>
}
