// RUN: sinter-opt %s -split-input-file -verify-diagnostics

func.func @unknown_function(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown 1-operand scalar function 'frobnicate'}}
  %y = sinter.unary "frobnicate" %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @float_only(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{'tanh' does not take 'i64' operands}}
  %y = sinter.unary "tanh" %x : (tensor<4xi64>) -> tensor<4xi64>
  return %y : tensor<4xi64>
}

// -----

func.func @predicate_type(%x: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'less' gives 'i1', not 'f32'}}
  %y = sinter.binary "less" %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @bad_broadcast(%x: tensor<4xf32>, %z: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand shapes are not broadcast-compatible}}
  %y = sinter.binary "min" %x, %z : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @reduce_kind(%x: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{unknown reduction kind 'median'}}
  %y = sinter.reduce "median" %x {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<1xf32>
  return %y : tensor<1xf32>
}

// -----

func.func @reduce_shape(%x: tensor<4x2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result shape [4] does not match the inferred shape [4x1]}}
  %y = sinter.reduce "sum" %x {axes = array<i64: 1>} : (tensor<4x2xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @arg_axis(%x: tensor<4xf32>) -> tensor<1xi64> {
  // expected-error @+1 {{axis 1 is out of range for a rank-1 input}}
  %y = sinter.arg_reduce "max" %x {axis = 1 : i64} : (tensor<4xf32>) -> tensor<1xi64>
  return %y : tensor<1xi64>
}

// -----

func.func @cumsum_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{axis -1 is out of range for a rank-1 input}}
  %y = sinter.cumulative %x {kind = "sum", axis = -1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @cumsum_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{result type must be the input's}}
  %y = sinter.cumulative %x {kind = "sum", axis = 0 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

func.func @cumulative_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kind must be "sum" or "prod", not "max"}}
  %y = sinter.cumulative %x {kind = "max", axis = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @cumsum_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{cannot accumulate i1}}
  %y = sinter.cumulative %x {kind = "sum", axis = 0 : i64} : (tensor<4xi1>) -> tensor<4xi1>
  return %y : tensor<4xi1>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x4xf32>, %w: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{scale and bias must be 'f32' and broadcast to the normalized dimensions}}
  %y = sinter.layer_normalization %x, %w {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @group_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{yielded types differ from the results}}
  %g = sinter.fusion_group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = sinter.cast %a : (tensor<4xf32>) -> tensor<4xf16>
    sinter.yield %c : tensor<4xf16>
  }
  return %g : tensor<4xf32>
}

// -----

func.func @consumer_prologue_not_a_residual_norm(%x: tensor<2x64xbf16>) -> tensor<2x64xbf16> {
  // expected-error @+1 {{marked in_consumer_prologue but not a post-norm and residual add}}
  %g = sinter.fusion_group(%x) attributes {in_consumer_prologue} : (tensor<2x64xbf16>) -> tensor<2x64xbf16> {
  ^bb0(%a: tensor<2x64xbf16>):
    %n = sinter.neg %a : (tensor<2x64xbf16>) -> tensor<2x64xbf16>
    sinter.yield %n : tensor<2x64xbf16>
  }
  return %g : tensor<2x64xbf16>
}
