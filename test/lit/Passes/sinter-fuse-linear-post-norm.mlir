// RUN: sinter-opt %s -split-input-file --sinter-fuse-linear-post-norm | FileCheck %s

// Gemma 2's post-attention norm: o_proj, then residual + cast(rms_normalization(., (1 + w)
// in f32)) becomes the linear's RESIDUAL_POST_NORM epilogue.
// CHECK-LABEL: func.func @post_norm_after_linear
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{[^ ]+}} residual %arg1 post_norm %{{[^ ]+}} {post_norm_epsilon = 9.99999997E-7 : f32} : (tensor<1x1x64xbf16>, tensor<64x64xbf16>, tensor<1x1x64xbf16>, tensor<64xf32>) -> tensor<1x1x64xbf16>
// CHECK-NOT: sinter.rms_normalization
// CHECK-NOT: sinter.add
// CHECK: return %[[Y]]
func.func @post_norm_after_linear(%x: tensor<1x1x64xbf16>, %r: tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16> {
  %w = sinter.constant dense<0.5> : tensor<64x64xbf16>
  %s = sinter.constant dense<1.25> : tensor<64xf32>
  %p = sinter.linear %x, %w : (tensor<1x1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x1x64xbf16>
  %n = sinter.rms_normalization %p, %s {axis = 2 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x1x64xbf16>, tensor<64xf32>) -> tensor<1x1x64xf32>
  %c = sinter.cast %n : (tensor<1x1x64xf32>) -> tensor<1x1x64xbf16>
  %h = sinter.add %r, %c : (tensor<1x1x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  return %h : tensor<1x1x64xbf16>
}

// -----

// The norm on the left of the add, 16 rows (the most the kernel takes).
// CHECK-LABEL: func.func @norm_first
// CHECK: sinter.linear %arg0, %{{[^ ]+}} residual %arg1 post_norm
// CHECK-NOT: sinter.add
func.func @norm_first(%x: tensor<16x64xbf16>, %r: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  %w = sinter.constant dense<0.5> : tensor<64x32xbf16>
  %s = sinter.constant dense<1.25> : tensor<32xf32>
  %p = sinter.linear %x, %w : (tensor<16x64xbf16>, tensor<64x32xbf16>) -> tensor<16x32xbf16>
  %n = sinter.rms_normalization %p, %s {axis = 1 : i64, epsilon = 1.0e-6 : f32} : (tensor<16x32xbf16>, tensor<32xf32>) -> tensor<16x32xf32>
  %c = sinter.cast %n : (tensor<16x32xf32>) -> tensor<16x32xbf16>
  %h = sinter.add %c, %r : (tensor<16x32xbf16>, tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %h : tensor<16x32xbf16>
}

// -----

// Negative: 17 rows (past linear_small_m), a biased linear, a product read twice, a norm
// whose bf16 weight rounds the normalized row first (Llama's form), and N = 40 (not whole
// 16-row tiles) keep the generated norm.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: post_norm
// CHECK-COUNT-5: sinter.rms_normalization
func.func @not_fused(%x17: tensor<17x64xbf16>, %r17: tensor<17x32xbf16>, %x: tensor<2x64xbf16>,
                     %r: tensor<2x32xbf16>, %r40: tensor<2x40xbf16>)
    -> (tensor<17x32xbf16>, tensor<2x32xbf16>, tensor<2x32xbf16>, tensor<2x32xbf16>, tensor<2x32xbf16>, tensor<2x40xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x32xbf16>
  %w40 = sinter.constant dense<0.5> : tensor<64x40xbf16>
  %b = sinter.constant dense<0.5> : tensor<32xbf16>
  %s = sinter.constant dense<1.25> : tensor<32xf32>
  %s40 = sinter.constant dense<1.25> : tensor<40xf32>
  %sb = sinter.constant dense<1.25> : tensor<32xbf16>
  %p0 = sinter.linear %x17, %w : (tensor<17x64xbf16>, tensor<64x32xbf16>) -> tensor<17x32xbf16>
  %n0 = sinter.rms_normalization %p0, %s {axis = 1 : i64, epsilon = 1.0e-6 : f32} : (tensor<17x32xbf16>, tensor<32xf32>) -> tensor<17x32xf32>
  %c0 = sinter.cast %n0 : (tensor<17x32xf32>) -> tensor<17x32xbf16>
  %h0 = sinter.add %r17, %c0 : (tensor<17x32xbf16>, tensor<17x32xbf16>) -> tensor<17x32xbf16>
  %p1 = sinter.linear %x, %w bias %b : (tensor<2x64xbf16>, tensor<64x32xbf16>, tensor<32xbf16>) -> tensor<2x32xbf16>
  %n1 = sinter.rms_normalization %p1, %s {axis = 1 : i64, epsilon = 1.0e-6 : f32} : (tensor<2x32xbf16>, tensor<32xf32>) -> tensor<2x32xf32>
  %c1 = sinter.cast %n1 : (tensor<2x32xf32>) -> tensor<2x32xbf16>
  %h1 = sinter.add %r, %c1 : (tensor<2x32xbf16>, tensor<2x32xbf16>) -> tensor<2x32xbf16>
  %p2 = sinter.linear %x, %w : (tensor<2x64xbf16>, tensor<64x32xbf16>) -> tensor<2x32xbf16>
  %n2 = sinter.rms_normalization %p2, %s {axis = 1 : i64, epsilon = 1.0e-6 : f32} : (tensor<2x32xbf16>, tensor<32xf32>) -> tensor<2x32xf32>
  %c2 = sinter.cast %n2 : (tensor<2x32xf32>) -> tensor<2x32xbf16>
  %h2 = sinter.add %r, %c2 : (tensor<2x32xbf16>, tensor<2x32xbf16>) -> tensor<2x32xbf16>
  %p3 = sinter.linear %x, %w : (tensor<2x64xbf16>, tensor<64x32xbf16>) -> tensor<2x32xbf16>
  %n3 = sinter.rms_normalization %p3, %sb {axis = 1 : i64, epsilon = 1.0e-6 : f32} : (tensor<2x32xbf16>, tensor<32xbf16>) -> tensor<2x32xbf16>
  %h3 = sinter.add %r, %n3 : (tensor<2x32xbf16>, tensor<2x32xbf16>) -> tensor<2x32xbf16>
  %p4 = sinter.linear %x, %w40 : (tensor<2x64xbf16>, tensor<64x40xbf16>) -> tensor<2x40xbf16>
  %n4 = sinter.rms_normalization %p4, %s40 {axis = 1 : i64, epsilon = 1.0e-6 : f32} : (tensor<2x40xbf16>, tensor<40xf32>) -> tensor<2x40xf32>
  %c4 = sinter.cast %n4 : (tensor<2x40xf32>) -> tensor<2x40xbf16>
  %h4 = sinter.add %r40, %c4 : (tensor<2x40xbf16>, tensor<2x40xbf16>) -> tensor<2x40xbf16>
  return %h0, %h1, %h2, %p2, %h3, %h4 : tensor<17x32xbf16>, tensor<2x32xbf16>, tensor<2x32xbf16>, tensor<2x32xbf16>, tensor<2x32xbf16>, tensor<2x40xbf16>
}
