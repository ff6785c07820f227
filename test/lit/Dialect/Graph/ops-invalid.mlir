// RUN: sinter-opt %s -split-input-file -verify-diagnostics

func.func @constant_type() -> tensor<2xi4> {
  // expected-error @+1 {{result #0 must be statically shaped tensor of}}
  %0 = sinter.constant dense<1> : tensor<2xi4>
  return %0 : tensor<2xi4>
}

// -----

func.func @add_operand_types(%a: tensor<2xf32>, %b: tensor<2xbf16>) -> tensor<2xf32> {
  // expected-error @+1 {{operand element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.add %a, %b : (tensor<2xf32>, tensor<2xbf16>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @sub_result_type(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xbf16> {
  // expected-error @+1 {{operand and result element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.sub %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// -----

func.func @mul_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operand shapes are not broadcast-compatible}}
  %0 = sinter.mul %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @div_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result shape [3] does not match the inferred shape [2x3]}}
  %0 = sinter.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @and_not_bool(%a: tensor<2xi64>, %b: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = sinter.and %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @equal_result(%a: tensor<2xi64>, %b: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = sinter.equal %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @pow_result_type(%a: tensor<2xf32>, %b: tensor<i64>) -> tensor<2xi64> {
  // expected-error @+1 {{base and result element types differ: 'f32' vs 'i64'}}
  %0 = sinter.pow %a, %b : (tensor<2xf32>, tensor<i64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @pow_broadcast(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operand shapes are not broadcast-compatible}}
  %0 = sinter.pow %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @pow_shape(%a: tensor<2xf32>, %b: tensor<f32>) -> tensor<1x2xf32> {
  // expected-error @+1 {{result shape [1x2] does not match the inferred shape [2]}}
  %0 = sinter.pow %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

func.func @sqrt_int(%x: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of bfloat16 type or 16-bit float or 32-bit float or 64-bit float values}}
  %0 = sinter.sqrt %x : (tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @neg_type(%x: tensor<2xf32>) -> tensor<2xbf16> {
  // expected-error @+1 {{operand and result element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.neg %x : (tensor<2xf32>) -> tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// -----

func.func @sigmoid_shape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{result shape [3x2] does not match the inferred shape [2x3]}}
  %0 = sinter.sigmoid %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @is_nan_result(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = sinter.is_nan %x : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @bitcast_width(%x: tensor<2xf32>) -> tensor<2xi16> {
  // expected-error @+1 {{operand 'f32' and result 'i16' must have the same width in bits}}
  %0 = sinter.bitcast %x : (tensor<2xf32>) -> tensor<2xi16>
  return %0 : tensor<2xi16>
}

// -----

func.func @cast_shape(%x: tensor<2xf32>) -> tensor<3xbf16> {
  // expected-error @+1 {{result shape [3] does not match the inferred shape [2]}}
  %0 = sinter.cast %x : (tensor<2xf32>) -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// -----

func.func @reciprocal_dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = sinter.reciprocal %x : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @where_xy(%c: tensor<2xi1>, %x: tensor<2xf32>, %y: tensor<2xbf16>) -> tensor<2xf32> {
  // expected-error @+1 {{x and y element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.where %c, %x, %y : (tensor<2xi1>, tensor<2xf32>, tensor<2xbf16>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @where_result_type(%c: tensor<2xi1>, %x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xbf16> {
  // expected-error @+1 {{x and result element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.where %c, %x, %y : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// -----

func.func @where_xy_broadcast(%c: tensor<2xi1>, %x: tensor<2xf32>, %y: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operand shapes are not broadcast-compatible}}
  %0 = sinter.where %c, %x, %y : (tensor<2xi1>, tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @where_condition_broadcast(%c: tensor<3xi1>, %x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operand shapes are not broadcast-compatible}}
  %0 = sinter.where %c, %x, %y : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @where_shape(%c: tensor<2x1xi1>, %x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{result shape [2] does not match the inferred shape [2x2]}}
  %0 = sinter.where %c, %x, %y : (tensor<2x1xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @matmul_types(%a: tensor<2x3xf32>, %b: tensor<3x4xbf16>) -> tensor<2x4xf32> {
  // expected-error @+1 {{operand element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xbf16>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_result_type(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{operand and result element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{contraction dimensions do not match}}
  %0 = sinter.matmul %a, %b : (tensor<2x3xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_shape(%a: tensor<2x2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{result shape [2x4] does not match the inferred shape [2x2x4]}}
  %0 = sinter.matmul %a, %b : (tensor<2x2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{A and B must be 2-D}}
  %0 = sinter.gemm %a, %b : (tensor<2x3x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @gemm_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{contraction dimensions do not match: 3 vs 4}}
  %0 = sinter.gemm %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @gemm_c(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<3xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{C is not broadcastable to [2x5]}}
  %0 = sinter.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @gemm_shape(%a: tensor<3x2xf32>, %b: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{result shape [3x5] does not match the inferred shape [2x5]}}
  %0 = sinter.gemm %a, %b {trans_a = true} : (tensor<3x2xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @transpose_perm_size(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{perm has 3 entries for a rank-2 input}}
  %0 = sinter.transpose %x, [1, 0, 2] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{perm is not a permutation}}
  %0 = sinter.transpose %x, [1, 1] : (tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @transpose_shape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{result shape [2x3] does not match the inferred shape [3x2]}}
  %0 = sinter.transpose %x, [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{element count changes from 6 to 4}}
  %0 = sinter.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @reshape_type(%x: tensor<2x3xf32>, %s: tensor<1xi64>) -> tensor<6xbf16> {
  // expected-error @+1 {{operand and result element types differ: 'f32' vs 'bf16'}}
  %0 = sinter.reshape %x, %s : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xbf16>
  return %0 : tensor<6xbf16>
}

// -----

func.func @reshape_shape_operand(%x: tensor<2x3xf32>, %s: tensor<1xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = sinter.reshape %x, %s : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @linear_weight_rank(%x: tensor<2x4xf32>, %w: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{weight must be 2-D [K, N] and the input at least 1-D}}
  %0 = sinter.linear %x, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @linear_k(%x: tensor<2x4xf32>, %w: tensor<8x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{input has K = 4 but the weight has 8 rows}}
  %0 = sinter.linear %x, %w : (tensor<2x4xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @linear_bias(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{bias must be [3]}}
  %0 = sinter.linear %x, %w bias %b : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @linear_residual(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %r: tensor<1x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{residual type 'tensor<1x3xf32>' differs from the result type 'tensor<2x3xf32>'}}
  %0 = sinter.linear %x, %w residual %r : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @linear_shape(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{result shape [2x4] does not match the inferred shape [2x3]}}
  %0 = sinter.linear %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @attention_merged_heads_count(%q: tensor<1x4x6x16xbf16>, %k: tensor<1x2x6x16xbf16>, %v: tensor<1x2x6x16xbf16>) -> tensor<1x6x32xbf16> {
  // expected-error @+1 {{merged_heads result 'tensor<1x6x32xbf16>' does not hold the 384 elements of the heads}}
  %0 = sinter.fused_attention %q, %k, %v {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x32xbf16>
  return %0 : tensor<1x6x32xbf16>
}

// -----

func.func @linear_gate_up_columns_shape(%x: tensor<2x4xbf16>, %w: tensor<4x8xbf16>) -> tensor<2x8xbf16> {
  // expected-error @+1 {{result shape [2x8] does not match the inferred shape [2x4]}}
  %0 = sinter.linear %x, %w {gate_up_columns = array<i64: 0, 4>} : (tensor<2x4xbf16>, tensor<4x8xbf16>) -> tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

// -----

func.func @linear_gate_up_columns_range(%x: tensor<2x4xbf16>, %w: tensor<4x8xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{gate_up_columns column 6 + N/2 = 10 is past N = 8}}
  %0 = sinter.linear %x, %w {gate_up_columns = array<i64: 0, 6>} : (tensor<2x4xbf16>, tensor<4x8xbf16>) -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @linear_gate_up_columns_odd(%x: tensor<2x4xbf16>, %w: tensor<4x7xbf16>) -> tensor<2x3xbf16> {
  // expected-error @+1 {{gate_up_columns must be [gate start, up start] of an even N, got N = 7}}
  %0 = sinter.linear %x, %w {gate_up_columns = array<i64: 0, 3>} : (tensor<2x4xbf16>, tensor<4x7xbf16>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

func.func @linear_gate_up_columns_bias(%x: tensor<2x4xbf16>, %w: tensor<4x8xbf16>, %b: tensor<8xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{gate_up_columns takes no bias or residual}}
  %0 = sinter.linear %x, %w bias %b {gate_up_columns = array<i64: 0, 4>} : (tensor<2x4xbf16>, tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @linear_gate_activation_unknown(%x: tensor<2x4xbf16>, %w: tensor<4x8xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{gate_activation must be silu or gelu_tanh, got 'relu'}}
  %0 = sinter.linear %x, %w {gate_up_columns = array<i64: 0, 4>, gate_activation = "relu"} : (tensor<2x4xbf16>, tensor<4x8xbf16>) -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @linear_gate_activation_alone(%x: tensor<2x4xbf16>, %w: tensor<4x8xbf16>) -> tensor<2x8xbf16> {
  // expected-error @+1 {{gate_activation without gate_up_columns}}
  %0 = sinter.linear %x, %w {gate_activation = "gelu_tanh"} : (tensor<2x4xbf16>, tensor<4x8xbf16>) -> tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

// -----

func.func @linear_norm_weight_type(%x: tensor<2x4xf32>, %w: tensor<4x8xf32>, %g: tensor<4xbf16>) -> tensor<2x8xf32> {
  // expected-error @+1 {{norm_weight must be of the input's type or f32 for a 16-bit input, got 'bf16' for 'f32'}}
  %0 = sinter.linear %x, %w norm %g {norm_epsilon = 1.0E-5 : f32} : (tensor<2x4xf32>, tensor<4x8xf32>, tensor<4xbf16>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @linear_norm_shape(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %n: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{norm_weight must be [4]}}
  %0 = sinter.linear %x, %w norm %n {norm_epsilon = 1.0e-5 : f32} : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @linear_norm_epsilon(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %n: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{norm_weight needs norm_epsilon}}
  %0 = sinter.linear %x, %w norm %n : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @linear_epsilon_alone(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{norm_epsilon or norm_bias without norm_weight}}
  %0 = sinter.linear %x, %w {norm_epsilon = 1.0e-5 : f32} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @linear_activation_unknown(%x: tensor<2x4xbf16>, %w: tensor<4x3xbf16>) -> tensor<2x3xbf16> {
  // expected-error @+1 {{activation must be gelu_tanh or gelu, got 'relu'}}
  %0 = sinter.linear %x, %w {activation = "relu"} : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

func.func @linear_activation_residual(%x: tensor<2x4xbf16>, %w: tensor<4x3xbf16>, %r: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  // expected-error @+1 {{activation takes no gate_up_columns or residual}}
  %0 = sinter.linear %x, %w residual %r {activation = "gelu_tanh"} : (tensor<2x4xbf16>, tensor<4x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

func.func @linear_norm_bias_alone(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{norm_epsilon or norm_bias without norm_weight}}
  %0 = sinter.linear %x, %w norm_bias %b : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @linear_norm_bias_type(%x: tensor<2x4xbf16>, %w: tensor<4x3xbf16>, %g: tensor<4xbf16>, %b: tensor<4xf32>) -> tensor<2x3xbf16> {
  // expected-error @+1 {{norm_bias must have norm_weight's type 'tensor<4xbf16>', got 'tensor<4xf32>'}}
  %0 = sinter.linear %x, %w norm %g norm_bias %b {norm_epsilon = 1.0e-5 : f32} : (tensor<2x4xbf16>, tensor<4x3xbf16>, tensor<4xbf16>, tensor<4xf32>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

func.func @less_or_equal_result(%a: tensor<3xi64>, %b: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 1-bit signless integer values}}
  %le = sinter.less_or_equal %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %le : tensor<3xi64>
}

// -----

func.func @max_types(%a: tensor<3xi64>, %b: tensor<3xi32>) -> tensor<3xi64> {
  // expected-error @+1 {{operand element types differ}}
  %m = sinter.max %a, %b : (tensor<3xi64>, tensor<3xi32>) -> tensor<3xi64>
  return %m : tensor<3xi64>
}

// -----

func.func @cos_int(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of bfloat16 type or 16-bit float or 32-bit float or 64-bit float values}}
  %c = sinter.cos %a : (tensor<3xi64>) -> tensor<3xi64>
  return %c : tensor<3xi64>
}

// -----

func.func @split_qkv_heads_columns(%qkv: tensor<1x6x96xbf16>) {
  // expected-error @+1 {{qkv has 96 columns; q, k and v take 128}}
  %r:3 = sinter.split_qkv_heads %qkv : (tensor<1x6x96xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  return
}

// -----

func.func @split_qkv_heads_kv_types(%qkv: tensor<1x6x144xbf16>) {
  // expected-error @+1 {{q must be [B, Hq, S, D] and k, v one [B, Hkv, S, D] type}}
  %r:3 = sinter.split_qkv_heads %qkv : (tensor<1x6x144xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x3x6x16xbf16>)
  return
}

// -----

func.func @split_qkv_heads_sequence(%qkv: tensor<1x6x128xbf16>) {
  // expected-error @+1 {{do not split}}
  %r:3 = sinter.split_qkv_heads %qkv : (tensor<1x6x128xbf16>) -> (tensor<1x4x5x16xbf16>, tensor<1x2x5x16xbf16>, tensor<1x2x5x16xbf16>)
  return
}

// -----

func.func @split_qkv_heads_tables(%qkv: tensor<1x6x128xbf16>, %cos: tensor<1x1x5x16xbf16>) {
  // expected-error @+1 {{cos/sin 'tensor<1x1x5x16xbf16>' do not broadcast to 'tensor<1x4x6x16xbf16>'}}
  %r:3 = sinter.split_qkv_heads %qkv rope(%cos, %cos) : (tensor<1x6x128xbf16>, tensor<1x1x5x16xbf16>, tensor<1x1x5x16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  return
}

// -----

func.func @split_qkv_heads_one_table(%qkv: tensor<1x6x128xbf16>, %cos: tensor<1x1x6x16xbf16>) {
  // expected-error @+1 {{takes both rope tables or neither}}
  %r:3 = "sinter.split_qkv_heads"(%qkv, %cos) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0>}> : (tensor<1x6x128xbf16>, tensor<1x1x6x16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  return
}

// -----

func.func @decode_attention_key_mask_length(%q: tensor<1x4x1x16xbf16>, %k: tensor<1x2x8x16xbf16>, %pos: tensor<1xi64>, %mask: tensor<1x6xi64>) {
  // expected-error @+1 {{key_mask must be an integer [B, L] tensor}}
  %0 = sinter.decode_attention %q, %k, %k, %pos key_mask %mask {scale = 2.500000e-01 : f32} : (tensor<1x4x1x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1xi64>, tensor<1x6xi64>) -> tensor<1x4x1x16xbf16>
  return
}

// -----

func.func @decode_attention_key_mask_float(%q: tensor<1x4x1x16xbf16>, %k: tensor<1x2x8x16xbf16>, %pos: tensor<1xi64>, %mask: tensor<1x8xf32>) {
  // expected-error @+1 {{key_mask must be an integer [B, L] tensor}}
  %0 = sinter.decode_attention %q, %k, %k, %pos key_mask %mask {scale = 2.500000e-01 : f32} : (tensor<1x4x1x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1xi64>, tensor<1x8xf32>) -> tensor<1x4x1x16xbf16>
  return
}

// -----

func.func @decode_attention_negative_softcap(%q: tensor<1x4x1x16xbf16>, %k: tensor<1x2x8x16xbf16>, %pos: tensor<1xi64>) {
  // expected-error @+1 {{softcap must be finite and non-negative (0: none), got -5}}
  %0 = sinter.decode_attention %q, %k, %k, %pos {scale = 2.500000e-01 : f32, softcap = -5.0 : f32} : (tensor<1x4x1x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1xi64>) -> tensor<1x4x1x16xbf16>
  return
}

// -----

func.func @fused_attention_infinite_softcap(%q: tensor<1x2x3x16xbf16>) {
  // expected-error @+1 {{softcap must be finite and non-negative (0: none), got INF}}
  %0 = sinter.fused_attention %q, %q, %q {causal = true, scale = 2.500000e-01 : f32, softcap = 0x7F800000 : f32} : (tensor<1x2x3x16xbf16>, tensor<1x2x3x16xbf16>, tensor<1x2x3x16xbf16>) -> tensor<1x2x3x16xbf16>
  return
}

// -----

func.func @split_qkv_heads_one_norm(%qkv: tensor<1x6x128xbf16>, %w: tensor<16xbf16>) {
  // expected-error @+1 {{takes both norm weights and an epsilon, or none}}
  %r:3 = "sinter.split_qkv_heads"(%qkv, %w) <{operandSegmentSizes = array<i32: 1, 0, 0, 1, 0>, norm_epsilon = 1.0e-6 : f32}> : (tensor<1x6x128xbf16>, tensor<16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  return
}

// -----

func.func @split_qkv_heads_norm_in_attention_without_norm(%qkv: tensor<1x1x128xbf16>) {
  // expected-error @+1 {{norm_in_attention needs q/k norms and rope tables}}
  %r:3 = "sinter.split_qkv_heads"(%qkv) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, norm_in_attention}> : (tensor<1x1x128xbf16>) -> (tensor<1x4x1x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1x2x1x16xbf16>)
  return
}

// -----

func.func @split_qkv_heads_norm_no_epsilon(%qkv: tensor<1x6x128xbf16>, %w: tensor<16xbf16>) {
  // expected-error @+1 {{takes both norm weights and an epsilon, or none}}
  %r:3 = "sinter.split_qkv_heads"(%qkv, %w, %w) <{operandSegmentSizes = array<i32: 1, 0, 0, 1, 1>}> : (tensor<1x6x128xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  return
}

// -----

func.func @split_qkv_heads_norm_width(%qkv: tensor<1x6x128xbf16>, %w: tensor<16xbf16>, %k: tensor<48xbf16>) {
  // expected-error @+1 {{norm weight 'tensor<48xbf16>' must have D or heads * D elements of the heads' type or f32 for 'tensor<1x2x6x16xbf16>'}}
  %r:3 = "sinter.split_qkv_heads"(%qkv, %w, %k) <{operandSegmentSizes = array<i32: 1, 0, 0, 1, 1>, norm_epsilon = 1.0e-6 : f32}> : (tensor<1x6x128xbf16>, tensor<16xbf16>, tensor<48xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  return
}

// -----

func.func @split_qkv_heads_norm_f16_weight(%qkv: tensor<1x6x128xbf16>, %w: tensor<16xf16>) {
  // expected-error @+1 {{norm weight 'tensor<16xf16>' must have D or heads * D elements of the heads' type or f32}}
  %r:3 = "sinter.split_qkv_heads"(%qkv, %w, %w) <{operandSegmentSizes = array<i32: 1, 0, 0, 1, 1>, norm_epsilon = 1.0e-6 : f32}> : (tensor<1x6x128xbf16>, tensor<16xf16>, tensor<16xf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  return
}

// -----

func.func @split_qkv_heads_norm_mixed_types(%qkv: tensor<1x6x128xbf16>, %w: tensor<64xf32>, %k: tensor<32xbf16>) {
  // expected-error @+1 {{q and k norm weights must have one element type}}
  %r:3 = "sinter.split_qkv_heads"(%qkv, %w, %k) <{operandSegmentSizes = array<i32: 1, 0, 0, 1, 1>, norm_epsilon = 1.0e-6 : f32}> : (tensor<1x6x128xbf16>, tensor<64xf32>, tensor<32xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  return
}

// -----

func.func @rope_odd_rotary(%x: tensor<1x2x3x8xbf16>, %t: tensor<1x1x3x3xbf16>) -> tensor<1x2x3x8xbf16> {
  // expected-error @+1 {{cos/sin must rotate an even number of columns up to D, got 'tensor<1x1x3x3xbf16>'}}
  %y = sinter.rope %x, %t, %t : (tensor<1x2x3x8xbf16>, tensor<1x1x3x3xbf16>, tensor<1x1x3x3xbf16>) -> tensor<1x2x3x8xbf16>
  return %y : tensor<1x2x3x8xbf16>
}

// -----

func.func @rope_tables_wider_than_head(%x: tensor<1x2x3x8xbf16>, %t: tensor<1x1x3x10xbf16>) -> tensor<1x2x3x8xbf16> {
  // expected-error @+1 {{cos/sin must rotate an even number of columns up to D}}
  %y = sinter.rope %x, %t, %t : (tensor<1x2x3x8xbf16>, tensor<1x1x3x10xbf16>, tensor<1x1x3x10xbf16>) -> tensor<1x2x3x8xbf16>
  return %y : tensor<1x2x3x8xbf16>
}

// -----

func.func @rope_partial_tables_other_rows(%x: tensor<1x2x3x8xbf16>, %t: tensor<1x1x5x4xbf16>) -> tensor<1x2x3x8xbf16> {
  // expected-error @+1 {{cos/sin 'tensor<1x1x5x4xbf16>' do not broadcast to the input 'tensor<1x2x3x8xbf16>' (its first 4 columns)}}
  %y = sinter.rope %x, %t, %t : (tensor<1x2x3x8xbf16>, tensor<1x1x5x4xbf16>, tensor<1x1x5x4xbf16>) -> tensor<1x2x3x8xbf16>
  return %y : tensor<1x2x3x8xbf16>
}
