// RUN: sinter-opt %s -split-input-file --sinter-fuse-decode-qk-norm | FileCheck %s

// Qwen3's decode step: per-head q/k norms, then RoPE of the whole head, q read by the decode
// attention alone and k only written into the cache it reads: marked for the attention kernel
// to apply (sinter-lower-to-launch-state.mlir checks the launch).
// CHECK-LABEL: func.func @qwen3_step
// CHECK: sinter.split_qkv_heads %{{.*}} rope(%{{.*}}, %{{.*}}) norm(%{{.*}}, %{{.*}}) {norm_epsilon = 9.99999997E-7 : f32, norm_in_attention}
func.func @qwen3_step(%x: tensor<1x1x64xbf16>, %pos: tensor<1xi64>, %cos: tensor<1x1x1x16xbf16>, %sin: tensor<1x1x1x16xbf16>, %kc: tensor<1x2x32x16xbf16> {sinter.state = "k"}, %vc: tensor<1x2x32x16xbf16> {sinter.state = "v"}) -> (tensor<1x1x64xbf16>, tensor<1x2x32x16xbf16> {sinter.state = "k"}, tensor<1x2x32x16xbf16> {sinter.state = "v"}) {
  %w = sinter.constant dense<1.0> : tensor<64x128xbf16>
  %wq = sinter.constant dense<1.5> : tensor<16xbf16>
  %wk = sinter.constant dense<0.5> : tensor<16xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x1x64xbf16>, tensor<64x128xbf16>) -> tensor<1x1x128xbf16>
  %q, %k, %v = sinter.split_qkv_heads %qkv rope(%cos, %sin) norm(%wq, %wk) {norm_epsilon = 1.0e-6 : f32} : (tensor<1x1x128xbf16>, tensor<1x1x1x16xbf16>, tensor<1x1x1x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> (tensor<1x4x1x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1x2x1x16xbf16>)
  %kw = sinter.cache_write %kc, %k, %pos {axis = 2 : i64} : (tensor<1x2x32x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x32x16xbf16>
  %vw = sinter.cache_write %vc, %v, %pos {axis = 2 : i64} : (tensor<1x2x32x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x32x16xbf16>
  %o = sinter.decode_attention %q, %kw, %vw, %pos {merged_heads, scale = 2.500000e-01 : f32} : (tensor<1x4x1x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1xi64>) -> tensor<1x1x64xbf16>
  return %o, %kw, %vw : tensor<1x1x64xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>
}

// -----

// Negative: a norm over the whole projection (OLMo 2: one weight of all the heads' columns)
// needs every head: not marked (it stays a qk_norm_rope launch).
// CHECK-LABEL: func.func @olmo2_step
// CHECK-NOT: norm_in_attention
func.func @olmo2_step(%x: tensor<1x1x64xbf16>, %pos: tensor<1xi64>, %cos: tensor<1x1x1x16xbf16>, %sin: tensor<1x1x1x16xbf16>, %kc: tensor<1x2x32x16xbf16> {sinter.state = "k"}, %vc: tensor<1x2x32x16xbf16> {sinter.state = "v"}) -> (tensor<1x1x64xbf16>, tensor<1x2x32x16xbf16> {sinter.state = "k"}, tensor<1x2x32x16xbf16> {sinter.state = "v"}) {
  %w = sinter.constant dense<1.0> : tensor<64x128xbf16>
  %wq = sinter.constant dense<1.5> : tensor<64xbf16>
  %wk = sinter.constant dense<0.5> : tensor<32xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x1x64xbf16>, tensor<64x128xbf16>) -> tensor<1x1x128xbf16>
  %q, %k, %v = sinter.split_qkv_heads %qkv rope(%cos, %sin) norm(%wq, %wk) {norm_epsilon = 1.0e-6 : f32} : (tensor<1x1x128xbf16>, tensor<1x1x1x16xbf16>, tensor<1x1x1x16xbf16>, tensor<64xbf16>, tensor<32xbf16>) -> (tensor<1x4x1x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1x2x1x16xbf16>)
  %kw = sinter.cache_write %kc, %k, %pos {axis = 2 : i64} : (tensor<1x2x32x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x32x16xbf16>
  %vw = sinter.cache_write %vc, %v, %pos {axis = 2 : i64} : (tensor<1x2x32x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x32x16xbf16>
  %o = sinter.decode_attention %q, %kw, %vw, %pos {merged_heads, scale = 2.500000e-01 : f32} : (tensor<1x4x1x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1xi64>) -> tensor<1x1x64xbf16>
  return %o, %kw, %vw : tensor<1x1x64xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>
}

// -----

// Negative: partial rotary (tables of 8 of the 16 columns) is not what the kernel rotates.
// CHECK-LABEL: func.func @partial_rotary
// CHECK-NOT: norm_in_attention
func.func @partial_rotary(%x: tensor<1x1x64xbf16>, %pos: tensor<1xi64>, %cos: tensor<1x1x1x8xbf16>, %sin: tensor<1x1x1x8xbf16>, %kc: tensor<1x2x32x16xbf16> {sinter.state = "k"}, %vc: tensor<1x2x32x16xbf16> {sinter.state = "v"}) -> (tensor<1x1x64xbf16>, tensor<1x2x32x16xbf16> {sinter.state = "k"}, tensor<1x2x32x16xbf16> {sinter.state = "v"}) {
  %w = sinter.constant dense<1.0> : tensor<64x128xbf16>
  %wq = sinter.constant dense<1.5> : tensor<16xbf16>
  %wk = sinter.constant dense<0.5> : tensor<16xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x1x64xbf16>, tensor<64x128xbf16>) -> tensor<1x1x128xbf16>
  %q, %k, %v = sinter.split_qkv_heads %qkv rope(%cos, %sin) norm(%wq, %wk) {norm_epsilon = 1.0e-6 : f32} : (tensor<1x1x128xbf16>, tensor<1x1x1x8xbf16>, tensor<1x1x1x8xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> (tensor<1x4x1x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1x2x1x16xbf16>)
  %kw = sinter.cache_write %kc, %k, %pos {axis = 2 : i64} : (tensor<1x2x32x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x32x16xbf16>
  %vw = sinter.cache_write %vc, %v, %pos {axis = 2 : i64} : (tensor<1x2x32x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x32x16xbf16>
  %o = sinter.decode_attention %q, %kw, %vw, %pos {merged_heads, scale = 2.500000e-01 : f32} : (tensor<1x4x1x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1xi64>) -> tensor<1x1x64xbf16>
  return %o, %kw, %vw : tensor<1x1x64xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>
}

// -----

// Negative: the normalized q is read by something else too (here returned): it must exist.
// CHECK-LABEL: func.func @q_read_twice
// CHECK-NOT: norm_in_attention
func.func @q_read_twice(%x: tensor<1x1x64xbf16>, %pos: tensor<1xi64>, %cos: tensor<1x1x1x16xbf16>, %sin: tensor<1x1x1x16xbf16>, %kc: tensor<1x2x32x16xbf16> {sinter.state = "k"}, %vc: tensor<1x2x32x16xbf16> {sinter.state = "v"}) -> (tensor<1x1x64xbf16>, tensor<1x4x1x16xbf16>, tensor<1x2x32x16xbf16> {sinter.state = "k"}, tensor<1x2x32x16xbf16> {sinter.state = "v"}) {
  %w = sinter.constant dense<1.0> : tensor<64x128xbf16>
  %wq = sinter.constant dense<1.5> : tensor<16xbf16>
  %wk = sinter.constant dense<0.5> : tensor<16xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x1x64xbf16>, tensor<64x128xbf16>) -> tensor<1x1x128xbf16>
  %q, %k, %v = sinter.split_qkv_heads %qkv rope(%cos, %sin) norm(%wq, %wk) {norm_epsilon = 1.0e-6 : f32} : (tensor<1x1x128xbf16>, tensor<1x1x1x16xbf16>, tensor<1x1x1x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> (tensor<1x4x1x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1x2x1x16xbf16>)
  %kw = sinter.cache_write %kc, %k, %pos {axis = 2 : i64} : (tensor<1x2x32x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x32x16xbf16>
  %vw = sinter.cache_write %vc, %v, %pos {axis = 2 : i64} : (tensor<1x2x32x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x32x16xbf16>
  %o = sinter.decode_attention %q, %kw, %vw, %pos {merged_heads, scale = 2.500000e-01 : f32} : (tensor<1x4x1x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1xi64>) -> tensor<1x1x64xbf16>
  return %o, %q, %kw, %vw : tensor<1x1x64xbf16>, tensor<1x4x1x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>
}
