// RUN: sinter-opt %s -split-input-file --sinter-form-fusion-groups | FileCheck %s

// An elementwise chain with a broadcast operand is one group; the splat constant moves in.
// CHECK-LABEL: func.func @chain
// CHECK: %[[G:.+]] = sinter.fusion_group(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[C:.+]] = sinter.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[A:.+]] = sinter.add %[[X]], %[[B]]
// CHECK-NEXT: %[[M:.+]] = sinter.mul %[[A]], %[[C]]
// CHECK-NEXT: %[[T:.+]] = sinter.unary "tanh" %[[M]]
// CHECK-NEXT: sinter.yield %[[T]] : tensor<4x8xf32>
// CHECK: return %[[G]]
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = sinter.constant dense<2.0> : tensor<f32>
  %a = sinter.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %m = sinter.mul %a, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %t = sinter.unary "tanh" %m : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// A softmax with its prologue (a transpose, a scale) and an elementwise epilogue is one row
// kernel's group.
// CHECK-LABEL: func.func @softmax_group
// CHECK: sinter.fusion_group(%arg0)
// CHECK: sinter.transpose
// CHECK: sinter.mul
// CHECK: sinter.softmax
// CHECK: sinter.cast
// CHECK: sinter.yield
// CHECK-NOT: sinter.fusion_group
func.func @softmax_group(%x: tensor<8x4xf32>) -> tensor<4x8xf16> {
  %c = sinter.constant dense<0.5> : tensor<f32>
  %t = sinter.transpose %x, [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %m = sinter.mul %t, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %s = sinter.softmax %m {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = sinter.cast %s : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %h : tensor<4x8xf16>
}

// -----

// A running sum is a row operation: Hugging Face's position ids from a mask (cast, cumsum,
// subtract, select) are one group.
// CHECK-LABEL: func.func @cumsum_position_ids
// CHECK: sinter.fusion_group(%arg0)
// CHECK: sinter.cast
// CHECK: sinter.cumulative
// CHECK: sinter.sub
// CHECK: sinter.where
// CHECK: sinter.yield
// CHECK-NOT: sinter.fusion_group
func.func @cumsum_position_ids(%mask: tensor<2x6xi1>) -> tensor<2x6xi64> {
  %one = sinter.constant dense<1> : tensor<i64>
  %m = sinter.cast %mask : (tensor<2x6xi1>) -> tensor<2x6xi64>
  %c = sinter.cumulative %m {kind = "sum", axis = 1 : i64} : (tensor<2x6xi64>) -> tensor<2x6xi64>
  %p = sinter.sub %c, %one : (tensor<2x6xi64>, tensor<i64>) -> tensor<2x6xi64>
  %w = sinter.where %mask, %p, %one : (tensor<2x6xi1>, tensor<2x6xi64>, tensor<i64>) -> tensor<2x6xi64>
  return %w : tensor<2x6xi64>
}

// -----

// Negative: a running sum read at other indices (a transpose) ends its group: the generated
// kernel holds each sum only at its own element.
// CHECK-LABEL: func.func @cumsum_then_transpose
// CHECK: %[[SUMS:.+]] = sinter.fusion_group(%arg0)
// CHECK: sinter.cumulative
// CHECK: sinter.fusion_group(%[[SUMS]])
// CHECK: sinter.transpose
// CHECK-NOT: sinter.fusion_group
func.func @cumsum_then_transpose(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %c = sinter.cumulative %x {kind = "sum", axis = 1 : i64, reverse = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = sinter.transpose %c, [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

// -----

// Negative: two row operations never share a group: the mean of a decomposed LayerNorm is
// its own group, read by the variance's group (its prologue subtracts it).
// CHECK-LABEL: func.func @two_rows
// CHECK: %[[MEAN:.+]] = sinter.fusion_group(%arg0)
// CHECK: sinter.reduce_mean
// CHECK: sinter.fusion_group(%arg0, %[[MEAN]])
// CHECK: sinter.sub
// CHECK: sinter.mul
// CHECK: sinter.reduce_mean
// CHECK-NOT: sinter.fusion_group
func.func @two_rows(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %mean = sinter.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = sinter.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = sinter.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var = sinter.reduce_mean %sq {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %var : tensor<4x1xf32>
}

// -----

// A value read by two groups is computed once, in its own group.
// CHECK-LABEL: func.func @shared
// CHECK-COUNT-3: sinter.fusion_group
func.func @shared(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = sinter.unary "exp" %x : (tensor<16xf32>) -> tensor<16xf32>
  %a = sinter.neg %e : (tensor<16xf32>) -> tensor<16xf32>
  %b = sinter.sqrt %e : (tensor<16xf32>) -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// -----

// Negative: what the pattern kernels absorb stays outside groups: the slices of a linear's
// output and the SwiGLU they feed, and a view of a materialized value.
// CHECK-LABEL: func.func @pattern_adjacent
// CHECK-NOT: sinter.fusion_group
// CHECK: sinter.silu_mul
func.func @pattern_adjacent(%x: tensor<2x8xbf16>) -> tensor<4x2xbf16> {
  %w = sinter.constant dense<1.0> : tensor<8x8xbf16>
  %h = sinter.linear %x, %w : (tensor<2x8xbf16>, tensor<8x8xbf16>) -> tensor<2x8xbf16>
  %g = sinter.slice %h {ends = array<i64: 2, 4>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %u = sinter.slice %h {ends = array<i64: 2, 8>, starts = array<i64: 0, 4>, steps = array<i64: 1, 1>} : (tensor<2x8xbf16>) -> tensor<2x4xbf16>
  %s = sinter.silu_mul %g, %u : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %shape = sinter.constant dense<[4, 2]> : tensor<2xi64>
  %r = sinter.reshape %s, %shape : (tensor<2x4xbf16>, tensor<2xi64>) -> tensor<4x2xbf16>
  return %r : tensor<4x2xbf16>
}

// -----

// Gate and up slices of a linear that only a generated kernel reads (Gemma's GeLU gate) join
// that kernel's group and are read in place there: no copy launch of their own.
// CHECK-LABEL: func.func @slices_of_a_linear
// CHECK: %[[L:.+]] = sinter.linear
// CHECK-NEXT: %[[G:.+]] = sinter.fusion_group(%[[L]]) : (tensor<1x6x16xbf16>) -> tensor<1x6x8xbf16> {
// CHECK: sinter.slice
// CHECK: sinter.slice
// CHECK: sinter.unary "tanh"
// CHECK: sinter.yield
// CHECK-NOT: sinter.fusion_group
func.func @slices_of_a_linear(%x: tensor<1x6x8xbf16>) -> tensor<1x6x8xbf16> {
  %w = sinter.constant dense<0.5> : tensor<8x16xbf16>
  %gu = sinter.linear %x, %w : (tensor<1x6x8xbf16>, tensor<8x16xbf16>) -> tensor<1x6x16xbf16>
  %g = sinter.slice %gu {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 8>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x16xbf16>) -> tensor<1x6x8xbf16>
  %u = sinter.slice %gu {starts = array<i64: 0, 0, 8>, ends = array<i64: 1, 6, 16>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x16xbf16>) -> tensor<1x6x8xbf16>
  %t = sinter.unary "tanh" %g : (tensor<1x6x8xbf16>) -> tensor<1x6x8xbf16>
  %y = sinter.mul %t, %u : (tensor<1x6x8xbf16>, tensor<1x6x8xbf16>) -> tensor<1x6x8xbf16>
  return %y : tensor<1x6x8xbf16>
}

// -----

// A slice a pattern op reads as well (here the SwiGLU) stays the pattern's: the generated
// kernel reads its materialized value.
// CHECK-LABEL: func.func @slice_shared_with_a_pattern
// CHECK: %[[G:.+]] = sinter.slice
// CHECK: sinter.silu_mul %[[G]]
// CHECK: sinter.fusion_group(%[[G]]
func.func @slice_shared_with_a_pattern(%x: tensor<1x6x8xbf16>) -> (tensor<1x6x8xbf16>, tensor<1x6x8xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<8x16xbf16>
  %gu = sinter.linear %x, %w : (tensor<1x6x8xbf16>, tensor<8x16xbf16>) -> tensor<1x6x16xbf16>
  %g = sinter.slice %gu {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 8>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x16xbf16>) -> tensor<1x6x8xbf16>
  %u = sinter.slice %gu {starts = array<i64: 0, 0, 8>, ends = array<i64: 1, 6, 16>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x16xbf16>) -> tensor<1x6x8xbf16>
  %s = sinter.silu_mul %g, %u : (tensor<1x6x8xbf16>, tensor<1x6x8xbf16>) -> tensor<1x6x8xbf16>
  %t = sinter.unary "tanh" %g : (tensor<1x6x8xbf16>) -> tensor<1x6x8xbf16>
  return %s, %t : tensor<1x6x8xbf16>, tensor<1x6x8xbf16>
}

// -----

// A bf16 norm the rms_norm kernel would take, read only by a generated residual add (a
// post-norm in an fp32 export compiled with --dtype bf16): it joins the add's group, one
// launch instead of two.
// CHECK-LABEL: func.func @post_norm_residual
// CHECK: %[[L:.+]] = sinter.linear
// CHECK-NEXT: sinter.fusion_group(%[[L]], %arg0)
// CHECK: sinter.rms_normalization
// CHECK: sinter.add
// CHECK: sinter.yield
// CHECK-NOT: sinter.rms_normalization
func.func @post_norm_residual(%x: tensor<1x6x8xbf16>) -> tensor<1x6x8xbf16> {
  %w = sinter.constant dense<0.5> : tensor<8x8xbf16>
  %g = sinter.constant dense<1.5> : tensor<8xbf16>
  %o = sinter.linear %x, %w : (tensor<1x6x8xbf16>, tensor<8x8xbf16>) -> tensor<1x6x8xbf16>
  %n = sinter.rms_normalization %o, %g {axis = 2 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x8xbf16>, tensor<8xbf16>) -> tensor<1x6x8xbf16>
  %y = sinter.add %x, %n : (tensor<1x6x8xbf16>, tensor<1x6x8xbf16>) -> tensor<1x6x8xbf16>
  return %y : tensor<1x6x8xbf16>
}

// -----

// Negative: a norm a linear reads as well stays the kernel's (the generated add reads its
// materialized value).
// CHECK-LABEL: func.func @norm_shared_with_a_linear
// CHECK: %[[N:.+]] = sinter.rms_normalization
// CHECK: sinter.linear %[[N]]
// CHECK: sinter.fusion_group(%{{.+}}, %[[N]])
func.func @norm_shared_with_a_linear(%x: tensor<1x6x8xbf16>) -> (tensor<1x6x8xbf16>, tensor<1x6x8xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<8x8xbf16>
  %g = sinter.constant dense<1.5> : tensor<8xbf16>
  %n = sinter.rms_normalization %x, %g {axis = 2 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x8xbf16>, tensor<8xbf16>) -> tensor<1x6x8xbf16>
  %o = sinter.linear %n, %w : (tensor<1x6x8xbf16>, tensor<8x8xbf16>) -> tensor<1x6x8xbf16>
  %y = sinter.add %x, %n : (tensor<1x6x8xbf16>, tensor<1x6x8xbf16>) -> tensor<1x6x8xbf16>
  return %o, %y : tensor<1x6x8xbf16>, tensor<1x6x8xbf16>
}
