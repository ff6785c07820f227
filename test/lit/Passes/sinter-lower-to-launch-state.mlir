// RUN: sinter-opt %s -split-input-file --sinter-lower-to-launch -verify-diagnostics | FileCheck %s

// Entry points of one model share the weight blob: equal constants in two functions are
// one weight at one offset, counted once in the blob size.
// CHECK: module attributes {launch.state_bytes = 0 : i64, launch.weight_bytes = 512 : i64}
// CHECK-LABEL: func.func @prefill
// CHECK: launch.weight "w0" {offset = 0 : i64
// CHECK-LABEL: func.func @decode
// CHECK: launch.weight "w0" {offset = 0 : i64
// CHECK-NOT: launch.weight "w1"
func.func @prefill(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = sinter.constant dense<1.0> : tensor<8x16xf32>
  %y = sinter.linear %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
func.func @decode(%x: tensor<1x8xf32>) -> tensor<1x16xf32> {
  %w = sinter.constant dense<1.0> : tensor<8x16xf32>
  %y = sinter.linear %x, %w : (tensor<1x8xf32>, tensor<8x16xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}

// -----

// A cache write no fused-QKV kernel takes (rows from anywhere else, fp32 and batched caches)
// is one cache_rows_write launch into the state: [outer, rows, inner] around the axis.
// CHECK-LABEL: func.func @rows_not_projected
// CHECK: launch.kernel "cache_rows_write"
// CHECK-SAME: params = [2, 1, 4, 8, "__nv_bfloat16"]
// CHECK-LABEL: func.func @batched_f32
// CHECK: launch.kernel "cache_rows_write"
// CHECK-SAME: params = [6, 3, 4, 8, "float"]
func.func @rows_not_projected(%cache: tensor<1x2x8x4xbf16> {sinter.state = "cache"}, %pos: tensor<1xi64>, %x: tensor<2x8xf32>) -> (tensor<1x2x8x4xbf16> {sinter.state = "cache"}, tensor<2x4xf32>) {
  %rows = sinter.constant dense<1.0> : tensor<1x2x1x4xbf16>
  %w = sinter.cache_write %cache, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x4xbf16>, tensor<1x2x1x4xbf16>, tensor<1xi64>) -> tensor<1x2x8x4xbf16>
  %k = sinter.constant dense<1.0> : tensor<8x4xf32>
  %y = sinter.linear %x, %k : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %w, %y : tensor<1x2x8x4xbf16>, tensor<2x4xf32>
}
func.func @batched_f32(%cache: tensor<3x2x8x4xf32> {sinter.state = "batched"}, %rows: tensor<3x2x3x4xf32>, %pos: tensor<3xi64>) -> (tensor<3x2x8x4xf32> {sinter.state = "batched"}) {
  %w = sinter.cache_write %cache, %rows, %pos {axis = 2 : i64} : (tensor<3x2x8x4xf32>, tensor<3x2x3x4xf32>, tensor<3xi64>) -> tensor<3x2x8x4xf32>
  return %w : tensor<3x2x8x4xf32>
}

// -----

// Negative: an integer cache has no kernel.
func.func @integer_cache(%cache: tensor<1x2x8x4xi64> {sinter.state = "ids"}, %rows: tensor<1x2x1x4xi64>, %pos: tensor<1xi64>) -> (tensor<1x2x8x4xi64> {sinter.state = "ids"}) {
  // expected-error @+1 {{no cache_rows_write configuration for a 'tensor<1x2x8x4xi64>' cache written 1 rows at a time}}
  %w = sinter.cache_write %cache, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x4xi64>, tensor<1x2x1x4xi64>, tensor<1xi64>) -> tensor<1x2x8x4xi64>
  return %w : tensor<1x2x8x4xi64>
}

// -----

// Negative: a scatter of another layout (an ONNX ScatterND model whose input and output the
// cache-state pass paired) is not compiled as a cache.
func.func @not_a_kv_layout(%data: tensor<4x4x4xf32> {sinter.state = "data"}, %rows: tensor<2x4x4xf32>, %pos: tensor<2xi64>) -> (tensor<4x4x4xf32> {sinter.state = "data"}) {
  // expected-error @+1 {{a cache write needs a [batch, heads, length, head_dim] cache written along the length}}
  %w = sinter.cache_write %data, %rows, %pos {axis = 0 : i64} : (tensor<4x4x4xf32>, tensor<2x4x4xf32>, tensor<2xi64>) -> tensor<4x4x4xf32>
  return %w : tensor<4x4x4xf32>
}

// -----

// Negative: a state result must be the update of the argument of the same state.
func.func @wrong_state(%a: tensor<8x4xf32> {sinter.state = "a"}, %b: tensor<8x4xf32> {sinter.state = "b"}, %rows: tensor<1x4xf32>, %pos: tensor<1xi64>) -> (tensor<8x4xf32> {sinter.state = "a"}, tensor<8x4xf32> {sinter.state = "b"}) {
  %wa = sinter.cache_write %a, %rows, %pos {axis = 0 : i64} : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<1xi64>) -> tensor<8x4xf32>
  %wb = sinter.cache_write %b, %rows, %pos {axis = 0 : i64} : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<1xi64>) -> tensor<8x4xf32>
  // expected-error @+1 {{state result 0 ('a') is not the update of its own cache}}
  return %wb, %wa : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Negative: two entry points that disagree on the type of one state.
func.func @first(%c: tensor<8x4xf32> {sinter.state = "cache"}, %x: tensor<1x8xf32>) -> tensor<1x16xf32> {
  %w = sinter.constant dense<1.0> : tensor<8x16xf32>
  %y = sinter.linear %x, %w : (tensor<1x8xf32>, tensor<8x16xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}
// expected-error @+1 {{state 'cache' is 'memref<4x4xf32>' here but 'memref<8x4xf32>' elsewhere}}
func.func @second(%c: tensor<4x4xf32> {sinter.state = "cache"}, %x: tensor<1x8xf32>) -> tensor<1x16xf32> {
  %w = sinter.constant dense<1.0> : tensor<8x16xf32>
  %y = sinter.linear %x, %w : (tensor<1x8xf32>, tensor<8x16xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}

// -----

// Decode attention splits cover one round trip of the kernel's path: at D 256 (the scalar
// path, 32 keys a round trip) a 1024-slot cache with 4 kv heads takes 32-key splits, 128
// blocks, merged through records in the state; at D 64 (tensor cores, 4 warps of 32 keys)
// 128-key splits, 8 per kv head: one cluster each, merged on chip (no records, no counters).
// CHECK-LABEL: func.func @decode_split_d256
// CHECK: launch.state ".attention_decode.partials.66048"
// CHECK: launch.state ".attention_decode.counters.4"
// CHECK: launch.kernel "attention_decode"(
// CHECK-SAME: grid = array<i64: 4, 32, 1>
// CHECK-SAME: params = [8, 4, 256, 0, 2048, 3072, 4096, 1024, 32, "1031798784u", "false", 1]
// CHECK-LABEL: func.func @decode_split_d64
// CHECK-NOT: .attention_decode.partials
// CHECK: launch.kernel "attention_decode_clustered"({{[^)]*}}) {args = array<i64: 0, 1, 2, 3, 4, -1, -1, -1, -1, -1, -1, -1>
// CHECK-SAME: grid = array<i64: 4, 8, 1>
// CHECK-SAME: params = [8, 4, 64, 0, 512, 768, 1024, 1024, 128, "1040187392u", "false", 1]
// A batch of 8 at the same split: 256 blocks, more than one wave of the SMs; clusters would
// wait for whole free groups of SMs, so the splits merge through global memory.
// CHECK-LABEL: func.func @decode_split_d64_batch8
// CHECK: launch.state ".attention_decode.partials.33792"
// CHECK: launch.state ".attention_decode.counters.32"
// CHECK: launch.kernel "attention_decode"(
// CHECK-SAME: grid = array<i64: 4, 8, 8>
func.func @decode_split_d256(%x: tensor<1x1x64xbf16>, %pos: tensor<1xi64>, %kc: tensor<1x4x1024x256xbf16> {sinter.state = "k"}, %vc: tensor<1x4x1024x256xbf16> {sinter.state = "v"}) -> (tensor<1x1x2048xbf16>, tensor<1x4x1024x256xbf16> {sinter.state = "k"}, tensor<1x4x1024x256xbf16> {sinter.state = "v"}) {
  %w = sinter.constant dense<1.0> : tensor<64x4096xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x1x64xbf16>, tensor<64x4096xbf16>) -> tensor<1x1x4096xbf16>
  %q, %k, %v = sinter.split_qkv_heads %qkv : (tensor<1x1x4096xbf16>) -> (tensor<1x8x1x256xbf16>, tensor<1x4x1x256xbf16>, tensor<1x4x1x256xbf16>)
  %kw = sinter.cache_write %kc, %k, %pos {axis = 2 : i64} : (tensor<1x4x1024x256xbf16>, tensor<1x4x1x256xbf16>, tensor<1xi64>) -> tensor<1x4x1024x256xbf16>
  %vw = sinter.cache_write %vc, %v, %pos {axis = 2 : i64} : (tensor<1x4x1024x256xbf16>, tensor<1x4x1x256xbf16>, tensor<1xi64>) -> tensor<1x4x1024x256xbf16>
  %o = sinter.decode_attention %q, %kw, %vw, %pos {merged_heads, scale = 6.250000e-02 : f32} : (tensor<1x8x1x256xbf16>, tensor<1x4x1024x256xbf16>, tensor<1x4x1024x256xbf16>, tensor<1xi64>) -> tensor<1x1x2048xbf16>
  return %o, %kw, %vw : tensor<1x1x2048xbf16>, tensor<1x4x1024x256xbf16>, tensor<1x4x1024x256xbf16>
}
func.func @decode_split_d64(%x: tensor<1x1x64xbf16>, %pos: tensor<1xi64>, %kc: tensor<1x4x1024x64xbf16> {sinter.state = "k64"}, %vc: tensor<1x4x1024x64xbf16> {sinter.state = "v64"}) -> (tensor<1x1x512xbf16>, tensor<1x4x1024x64xbf16> {sinter.state = "k64"}, tensor<1x4x1024x64xbf16> {sinter.state = "v64"}) {
  %w = sinter.constant dense<1.0> : tensor<64x1024xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x1x64xbf16>, tensor<64x1024xbf16>) -> tensor<1x1x1024xbf16>
  %q, %k, %v = sinter.split_qkv_heads %qkv : (tensor<1x1x1024xbf16>) -> (tensor<1x8x1x64xbf16>, tensor<1x4x1x64xbf16>, tensor<1x4x1x64xbf16>)
  %kw = sinter.cache_write %kc, %k, %pos {axis = 2 : i64} : (tensor<1x4x1024x64xbf16>, tensor<1x4x1x64xbf16>, tensor<1xi64>) -> tensor<1x4x1024x64xbf16>
  %vw = sinter.cache_write %vc, %v, %pos {axis = 2 : i64} : (tensor<1x4x1024x64xbf16>, tensor<1x4x1x64xbf16>, tensor<1xi64>) -> tensor<1x4x1024x64xbf16>
  %o = sinter.decode_attention %q, %kw, %vw, %pos {merged_heads, scale = 1.250000e-01 : f32} : (tensor<1x8x1x64xbf16>, tensor<1x4x1024x64xbf16>, tensor<1x4x1024x64xbf16>, tensor<1xi64>) -> tensor<1x1x512xbf16>
  return %o, %kw, %vw : tensor<1x1x512xbf16>, tensor<1x4x1024x64xbf16>, tensor<1x4x1024x64xbf16>
}
func.func @decode_split_d64_batch8(%x: tensor<8x1x64xbf16>, %pos: tensor<1xi64>, %kc: tensor<8x4x1024x64xbf16> {sinter.state = "kb"}, %vc: tensor<8x4x1024x64xbf16> {sinter.state = "vb"}) -> (tensor<8x1x512xbf16>, tensor<8x4x1024x64xbf16> {sinter.state = "kb"}, tensor<8x4x1024x64xbf16> {sinter.state = "vb"}) {
  %w = sinter.constant dense<1.0> : tensor<64x1024xbf16>
  %qkv = sinter.linear %x, %w : (tensor<8x1x64xbf16>, tensor<64x1024xbf16>) -> tensor<8x1x1024xbf16>
  %q, %k, %v = sinter.split_qkv_heads %qkv : (tensor<8x1x1024xbf16>) -> (tensor<8x8x1x64xbf16>, tensor<8x4x1x64xbf16>, tensor<8x4x1x64xbf16>)
  %kw = sinter.cache_write %kc, %k, %pos {axis = 2 : i64} : (tensor<8x4x1024x64xbf16>, tensor<8x4x1x64xbf16>, tensor<1xi64>) -> tensor<8x4x1024x64xbf16>
  %vw = sinter.cache_write %vc, %v, %pos {axis = 2 : i64} : (tensor<8x4x1024x64xbf16>, tensor<8x4x1x64xbf16>, tensor<1xi64>) -> tensor<8x4x1024x64xbf16>
  %o = sinter.decode_attention %q, %kw, %vw, %pos {merged_heads, scale = 1.250000e-01 : f32} : (tensor<8x8x1x64xbf16>, tensor<8x4x1024x64xbf16>, tensor<8x4x1024x64xbf16>, tensor<1xi64>) -> tensor<8x1x512xbf16>
  return %o, %kw, %vw : tensor<8x1x512xbf16>, tensor<8x4x1024x64xbf16>, tensor<8x4x1024x64xbf16>
}

// -----

// Soft-capped decode attention (Gemma 2): the cap's bits follow the optional q/k-norm
// parameters, spelled at their defaults (50.0 = 1112014848).
// CHECK-LABEL: func.func @decode_softcap
// CHECK: launch.kernel "attention_decode"(
// CHECK-SAME: params = [8, 4, 256, 0, 2048, 3072, 4096, 1024, 32, "1031798784u", "false", 1, "false", "__nv_bfloat16", "__nv_bfloat16", "0u", "1112014848u"]
func.func @decode_softcap(%x: tensor<1x1x64xbf16>, %pos: tensor<1xi64>, %kc: tensor<1x4x1024x256xbf16> {sinter.state = "k"}, %vc: tensor<1x4x1024x256xbf16> {sinter.state = "v"}) -> (tensor<1x1x2048xbf16>, tensor<1x4x1024x256xbf16> {sinter.state = "k"}, tensor<1x4x1024x256xbf16> {sinter.state = "v"}) {
  %w = sinter.constant dense<1.0> : tensor<64x4096xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x1x64xbf16>, tensor<64x4096xbf16>) -> tensor<1x1x4096xbf16>
  %q, %k, %v = sinter.split_qkv_heads %qkv : (tensor<1x1x4096xbf16>) -> (tensor<1x8x1x256xbf16>, tensor<1x4x1x256xbf16>, tensor<1x4x1x256xbf16>)
  %kw = sinter.cache_write %kc, %k, %pos {axis = 2 : i64} : (tensor<1x4x1024x256xbf16>, tensor<1x4x1x256xbf16>, tensor<1xi64>) -> tensor<1x4x1024x256xbf16>
  %vw = sinter.cache_write %vc, %v, %pos {axis = 2 : i64} : (tensor<1x4x1024x256xbf16>, tensor<1x4x1x256xbf16>, tensor<1xi64>) -> tensor<1x4x1024x256xbf16>
  %o = sinter.decode_attention %q, %kw, %vw, %pos {merged_heads, scale = 6.250000e-02 : f32, softcap = 5.000000e+01 : f32} : (tensor<1x8x1x256xbf16>, tensor<1x4x1024x256xbf16>, tensor<1x4x1024x256xbf16>, tensor<1xi64>) -> tensor<1x1x2048xbf16>
  return %o, %kw, %vw : tensor<1x1x2048xbf16>, tensor<1x4x1024x256xbf16>, tensor<1x4x1024x256xbf16>
}

// -----

// A head split marked norm_in_attention (sinter-fuse-decode-qk-norm): no qk_norm_rope launch;
// attention_decode normalizes and rotates q and the new key itself, taking the norm weights,
// the tables and the epsilon (QK_NORM, NormT, TableT, NORM_EPS_BITS).
// CHECK-LABEL: func.func @decode_qk_norm_in_attention
// CHECK-NOT: qk_norm_rope
// CHECK: launch.kernel "attention_decode"({{[^)]*}}) {args = array<i64: 0, 1, 2, 3, 4, -1, -1, -1, 5, 6, 7, 8>
// CHECK-SAME: params = [4, 2, 16, 0, 64, 96, 128, 32, 32, "1048576000u", "false", 1, "true", "float", "__nv_bfloat16", "897988541u"]
// CHECK-NOT: qk_norm_rope
func.func @decode_qk_norm_in_attention(%x: tensor<1x1x64xbf16>, %pos: tensor<1xi64>, %cos: tensor<1x1x1x16xbf16>, %sin: tensor<1x1x1x16xbf16>, %kc: tensor<1x2x32x16xbf16> {sinter.state = "kq"}, %vc: tensor<1x2x32x16xbf16> {sinter.state = "vq"}) -> (tensor<1x1x64xbf16>, tensor<1x2x32x16xbf16> {sinter.state = "kq"}, tensor<1x2x32x16xbf16> {sinter.state = "vq"}) {
  %w = sinter.constant dense<1.0> : tensor<64x128xbf16>
  %wq = sinter.constant dense<1.5> : tensor<16xf32>
  %wk = sinter.constant dense<0.5> : tensor<16xf32>
  %qkv = sinter.linear %x, %w : (tensor<1x1x64xbf16>, tensor<64x128xbf16>) -> tensor<1x1x128xbf16>
  %q, %k, %v = sinter.split_qkv_heads %qkv rope(%cos, %sin) norm(%wq, %wk) {norm_epsilon = 1.0e-6 : f32, norm_in_attention} : (tensor<1x1x128xbf16>, tensor<1x1x1x16xbf16>, tensor<1x1x1x16xbf16>, tensor<16xf32>, tensor<16xf32>) -> (tensor<1x4x1x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1x2x1x16xbf16>)
  %kw = sinter.cache_write %kc, %k, %pos {axis = 2 : i64} : (tensor<1x2x32x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x32x16xbf16>
  %vw = sinter.cache_write %vc, %v, %pos {axis = 2 : i64} : (tensor<1x2x32x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x32x16xbf16>
  %o = sinter.decode_attention %q, %kw, %vw, %pos {merged_heads, scale = 2.500000e-01 : f32} : (tensor<1x4x1x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1xi64>) -> tensor<1x1x64xbf16>
  return %o, %kw, %vw : tensor<1x1x64xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>
}
