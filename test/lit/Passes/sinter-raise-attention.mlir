// RUN: sinter-opt %s -split-input-file --sinter-raise-attention=raise-softcap=false | FileCheck %s
// RUN: sinter-opt %s -split-input-file --sinter-raise-attention | FileCheck %s --check-prefix=CAP

// The opset-18 export of Llama attention (4 query heads over 2 kv heads): GQA expansion,
// k transposed through a 3-D reshape, both sides pre-scaled, an additive mask built from
// attention_mask and a causal constant, softmax with a NaN guard.
// CHECK-LABEL: func.func @opset18
// CHECK-NEXT: %[[O:.+]] = sinter.fused_attention %arg0, %arg1, %arg2 key_mask %arg3 {causal = true, scale = 2.500000e-01 : f32} : (tensor<1x4x3x2xbf16>, tensor<1x2x3x2xbf16>, tensor<1x2x3x2xbf16>, tensor<1x3xi64>) -> tensor<1x4x3x2xbf16>
// CHECK-NEXT: return %[[O]]
func.func @opset18(%q: tensor<1x4x3x2xbf16>, %k: tensor<1x2x3x2xbf16>, %v: tensor<1x2x3x2xbf16>, %am: tensor<1x3xi64>) -> tensor<1x4x3x2xbf16> {
  %causal = sinter.constant dense<[[[[true, false, false], [true, true, false], [true, true, true]]]]> : tensor<1x1x3x3xi1>
  %idx = sinter.constant dense<[[[[[0, 0], [0, 1], [0, 2]]]]]> : tensor<1x1x1x3x2xi64>
  %e5 = sinter.constant dense<[1, 2, 2, 3, 2]> : tensor<5xi64>
  %s4 = sinter.constant dense<[1, 4, 3, 2]> : tensor<4xi64>
  %s3 = sinter.constant dense<[4, 3, 2]> : tensor<3xi64>
  %s4t = sinter.constant dense<[1, 4, 2, 3]> : tensor<4xi64>
  %half = sinter.constant dense<5.000000e-01> : tensor<bf16>
  %zero = sinter.constant dense<0.000000e+00> : tensor<bf16>
  %big = sinter.constant dense<-3.389530e+38> : tensor<bf16>
  %b = sinter.cast %am : (tensor<1x3xi64>) -> tensor<1x3xi1>
  %g = sinter.gather_nd %b, %idx : (tensor<1x3xi1>, tensor<1x1x1x3x2xi64>) -> tensor<1x1x1x3xi1>
  %m = sinter.and %g, %causal : (tensor<1x1x1x3xi1>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x3xi1>
  %ku = sinter.unsqueeze %k {axes = array<i64: 2>} : (tensor<1x2x3x2xbf16>) -> tensor<1x2x1x3x2xbf16>
  %ke = sinter.expand %ku, %e5 : (tensor<1x2x1x3x2xbf16>, tensor<5xi64>) -> tensor<1x2x2x3x2xbf16>
  %vu = sinter.unsqueeze %v {axes = array<i64: 2>} : (tensor<1x2x3x2xbf16>) -> tensor<1x2x1x3x2xbf16>
  %ve = sinter.expand %vu, %e5 : (tensor<1x2x1x3x2xbf16>, tensor<5xi64>) -> tensor<1x2x2x3x2xbf16>
  %vr = sinter.reshape %ve, %s4 : (tensor<1x2x2x3x2xbf16>, tensor<4xi64>) -> tensor<1x4x3x2xbf16>
  %kr = sinter.reshape %ke, %s3 : (tensor<1x2x2x3x2xbf16>, tensor<3xi64>) -> tensor<4x3x2xbf16>
  %kt = sinter.transpose %kr, [0, 2, 1] : (tensor<4x3x2xbf16>) -> tensor<4x2x3xbf16>
  %ktr = sinter.reshape %kt, %s4t : (tensor<4x2x3xbf16>, tensor<4xi64>) -> tensor<1x4x2x3xbf16>
  %qs = sinter.mul %q, %half : (tensor<1x4x3x2xbf16>, tensor<bf16>) -> tensor<1x4x3x2xbf16>
  %ks = sinter.mul %ktr, %half : (tensor<1x4x2x3xbf16>, tensor<bf16>) -> tensor<1x4x2x3xbf16>
  %madd = sinter.where %m, %zero, %big : (tensor<1x1x3x3xi1>, tensor<bf16>, tensor<bf16>) -> tensor<1x1x3x3xbf16>
  %sc = sinter.matmul %qs, %ks : (tensor<1x4x3x2xbf16>, tensor<1x4x2x3xbf16>) -> tensor<1x4x3x3xbf16>
  %logits = sinter.add %sc, %madd : (tensor<1x4x3x3xbf16>, tensor<1x1x3x3xbf16>) -> tensor<1x4x3x3xbf16>
  %p = sinter.softmax %logits {axis = 3 : i64} : (tensor<1x4x3x3xbf16>) -> tensor<1x4x3x3xbf16>
  %nan = sinter.is_nan %p : (tensor<1x4x3x3xbf16>) -> tensor<1x4x3x3xi1>
  %pz = sinter.where %nan, %zero, %p : (tensor<1x4x3x3xi1>, tensor<bf16>, tensor<1x4x3x3xbf16>) -> tensor<1x4x3x3xbf16>
  %o = sinter.matmul %pz, %vr : (tensor<1x4x3x3xbf16>, tensor<1x4x3x2xbf16>) -> tensor<1x4x3x2xbf16>
  return %o : tensor<1x4x3x2xbf16>
}

// -----

// The opset-23 export: ONNX Attention on expanded k/v with a boolean mask.
// CHECK-LABEL: func.func @opset23
// CHECK-NEXT: %[[O:.+]] = sinter.fused_attention %arg0, %arg1, %arg2 key_mask %arg3 {causal = true, scale = 0.707106769 : f32} : (tensor<1x4x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x3xi64>) -> tensor<1x4x3x2xf32>
// CHECK-NEXT: return %[[O]]
func.func @opset23(%q: tensor<1x4x3x2xf32>, %k: tensor<1x2x3x2xf32>, %v: tensor<1x2x3x2xf32>, %am: tensor<1x3xi64>) -> tensor<1x4x3x2xf32> {
  %causal = sinter.constant dense<[[[[true, false, false], [true, true, false], [true, true, true]]]]> : tensor<1x1x3x3xi1>
  %idx = sinter.constant dense<[[[[[0, 0], [0, 1], [0, 2]]]]]> : tensor<1x1x1x3x2xi64>
  %e5 = sinter.constant dense<[1, 2, 2, 3, 2]> : tensor<5xi64>
  %s4 = sinter.constant dense<[1, 4, 3, 2]> : tensor<4xi64>
  %b = sinter.cast %am : (tensor<1x3xi64>) -> tensor<1x3xi1>
  %g = sinter.gather_nd %b, %idx : (tensor<1x3xi1>, tensor<1x1x1x3x2xi64>) -> tensor<1x1x1x3xi1>
  %m = sinter.and %g, %causal : (tensor<1x1x1x3xi1>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x3xi1>
  %ku = sinter.unsqueeze %k {axes = array<i64: 2>} : (tensor<1x2x3x2xf32>) -> tensor<1x2x1x3x2xf32>
  %ke = sinter.expand %ku, %e5 : (tensor<1x2x1x3x2xf32>, tensor<5xi64>) -> tensor<1x2x2x3x2xf32>
  %kr = sinter.reshape %ke, %s4 : (tensor<1x2x2x3x2xf32>, tensor<4xi64>) -> tensor<1x4x3x2xf32>
  %vu = sinter.unsqueeze %v {axes = array<i64: 2>} : (tensor<1x2x3x2xf32>) -> tensor<1x2x1x3x2xf32>
  %ve = sinter.expand %vu, %e5 : (tensor<1x2x1x3x2xf32>, tensor<5xi64>) -> tensor<1x2x2x3x2xf32>
  %vr = sinter.reshape %ve, %s4 : (tensor<1x2x2x3x2xf32>, tensor<4xi64>) -> tensor<1x4x3x2xf32>
  %o = sinter.attention %q, %kr, %vr, mask %m {kv_num_heads = 4 : i64, q_num_heads = 4 : i64, scale = 0.707106769 : f32} : (tensor<1x4x3x2xf32>, tensor<1x4x3x2xf32>, tensor<1x4x3x2xf32>, tensor<1x1x3x3xi1>) -> tensor<1x4x3x2xf32>
  return %o : tensor<1x4x3x2xf32>
}

// -----

// Two batches, a padding mask without causality (boolean, [B, 1, 1, S]); is_causal on the
// op with its own grouped kv heads and the same mask; and is_causal alone.
// CHECK-LABEL: func.func @padding_batch2
// CHECK: sinter.fused_attention %arg0, %arg1, %arg1 key_mask %arg2 {causal = false, scale = 1.000000e+00 : f32}
// CHECK: sinter.fused_attention %arg0, %arg3, %arg3 key_mask %arg2 {causal = true, scale = 5.000000e-01 : f32}
// CHECK: sinter.fused_attention %arg0, %arg3, %arg3 {causal = true, scale = 5.000000e-01 : f32}
// CHECK-NOT: sinter.attention
func.func @padding_batch2(%q: tensor<2x2x3x2xf32>, %k: tensor<2x2x3x2xf32>, %am: tensor<2x3xi64>, %k1: tensor<2x1x3x2xf32>)
    -> (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>) {
  %b = sinter.cast %am : (tensor<2x3xi64>) -> tensor<2x3xi1>
  %m = sinter.unsqueeze %b {axes = array<i64: 1, 2>} : (tensor<2x3xi1>) -> tensor<2x1x1x3xi1>
  %o0 = sinter.attention %q, %k, %k, mask %m {kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 1.0 : f32} : (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x1x1x3xi1>) -> tensor<2x2x3x2xf32>
  %o1 = sinter.attention %q, %k1, %k1, mask %m {is_causal = true, kv_num_heads = 1 : i64, q_num_heads = 2 : i64, scale = 0.5 : f32} : (tensor<2x2x3x2xf32>, tensor<2x1x3x2xf32>, tensor<2x1x3x2xf32>, tensor<2x1x1x3xi1>) -> tensor<2x2x3x2xf32>
  %o2 = sinter.attention %q, %k1, %k1 {is_causal = true, kv_num_heads = 1 : i64, q_num_heads = 2 : i64, scale = 0.5 : f32} : (tensor<2x2x3x2xf32>, tensor<2x1x3x2xf32>, tensor<2x1x3x2xf32>) -> tensor<2x2x3x2xf32>
  return %o0, %o1, %o2 : tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>
}

// -----

// A mask that reads attention_mask without depending on it (x == x) is causal only: no
// key_mask. An additive causal constant works too.
// CHECK-LABEL: func.func @causal_only
// CHECK: sinter.fused_attention %arg0, %arg1, %arg1 {causal = true, scale = 1.000000e+00 : f32}
// CHECK: sinter.fused_attention %arg0, %arg1, %arg1 {causal = true, scale = 1.000000e+00 : f32}
// CHECK-NOT: sinter.attention
func.func @causal_only(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x3x2xf32>, %am: tensor<1x3xi64>)
    -> (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) {
  %causal = sinter.constant dense<[[[[true, false, false], [true, true, false], [true, true, true]]]]> : tensor<1x1x3x3xi1>
  %additive = sinter.constant dense<[[0.0, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %same = sinter.equal %am, %am : (tensor<1x3xi64>, tensor<1x3xi64>) -> tensor<1x3xi1>
  %m = sinter.and %same, %causal : (tensor<1x3xi1>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x3xi1>
  %o0 = sinter.attention %q, %k, %k, mask %m {kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 1.0 : f32} : (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x2xf32>
  %o1 = sinter.attention %q, %k, %k, mask %additive {kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 1.0 : f32} : (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<3x3xf32>) -> tensor<1x1x3x2xf32>
  return %o0, %o1 : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>
}

// -----

// Negative masks: a sliding window (query i sees keys i-1..i), padding read from the
// reversed attention_mask, the inverted select, and a mask reading two arguments.
// CHECK-LABEL: func.func @other_masks
// CHECK-NOT: sinter.fused_attention
// CHECK-COUNT-4: sinter.attention
func.func @other_masks(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x3x2xf32>, %am: tensor<1x3xi64>, %am2: tensor<1x3xi64>)
    -> (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) {
  %window = sinter.constant dense<[[[[true, false, false], [true, true, false], [false, true, true]]]]> : tensor<1x1x3x3xi1>
  %causal = sinter.constant dense<[[[[true, false, false], [true, true, false], [true, true, true]]]]> : tensor<1x1x3x3xi1>
  %zero = sinter.constant dense<0.0> : tensor<f32>
  %big = sinter.constant dense<-3.0e38> : tensor<f32>
  %b = sinter.cast %am : (tensor<1x3xi64>) -> tensor<1x3xi1>
  %m0 = sinter.and %b, %window : (tensor<1x3xi1>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x3xi1>
  %o0 = sinter.attention %q, %k, %k, mask %m0 {kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 1.0 : f32} : (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x2xf32>
  %rev = sinter.slice %b {ends = array<i64: 1, -1>, starts = array<i64: 0, 2>, steps = array<i64: 1, -1>} : (tensor<1x3xi1>) -> tensor<1x3xi1>
  %m1 = sinter.and %rev, %causal : (tensor<1x3xi1>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x3xi1>
  %o1 = sinter.attention %q, %k, %k, mask %m1 {kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 1.0 : f32} : (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x2xf32>
  %m = sinter.and %b, %causal : (tensor<1x3xi1>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x3xi1>
  %inv = sinter.where %m, %big, %zero : (tensor<1x1x3x3xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x3x3xf32>
  %o2 = sinter.attention %q, %k, %k, mask %inv {kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 1.0 : f32} : (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x2xf32>
  %b2 = sinter.cast %am2 : (tensor<1x3xi64>) -> tensor<1x3xi1>
  %both = sinter.and %b, %b2 : (tensor<1x3xi1>, tensor<1x3xi1>) -> tensor<1x3xi1>
  %m3 = sinter.and %both, %causal : (tensor<1x3xi1>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x3xi1>
  %o3 = sinter.attention %q, %k, %k, mask %m3 {kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 1.0 : f32} : (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x3xi1>) -> tensor<1x1x3x2xf32>
  return %o0, %o1, %o2, %o3 : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>
}

// -----

// Negative decompositions: softmax over the wrong axis; k and v expanded differently (v's
// heads interleaved by an unsqueeze at axis 1, so query head h would read kv head h % 2).
// CHECK-LABEL: func.func @not_attention
// CHECK-NOT: sinter.fused_attention
// CHECK: sinter.softmax
// CHECK: sinter.softmax
func.func @not_attention(%q: tensor<1x2x2x2xf32>, %k: tensor<1x2x2x2xf32>, %k1: tensor<1x1x2x2xf32>, %v: tensor<1x2x2x2xf32>)
    -> (tensor<1x2x2x2xf32>, tensor<1x4x2x2xf32>) {
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %sc = sinter.matmul %q, %kt : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %p = sinter.softmax %sc {axis = 2 : i64} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %o0 = sinter.matmul %p, %k : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %e5 = sinter.constant dense<[1, 2, 2, 2, 2]> : tensor<5xi64>
  %s4 = sinter.constant dense<[1, 4, 2, 2]> : tensor<4xi64>
  %ku = sinter.unsqueeze %v {axes = array<i64: 2>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x2x2xf32>
  %ke = sinter.expand %ku, %e5 : (tensor<1x2x1x2x2xf32>, tensor<5xi64>) -> tensor<1x2x2x2x2xf32>
  %kr = sinter.reshape %ke, %s4 : (tensor<1x2x2x2x2xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %krt = sinter.transpose %kr, [0, 1, 3, 2] : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %vu = sinter.unsqueeze %v {axes = array<i64: 1>} : (tensor<1x2x2x2xf32>) -> tensor<1x1x2x2x2xf32>
  %ve = sinter.expand %vu, %e5 : (tensor<1x1x2x2x2xf32>, tensor<5xi64>) -> tensor<1x2x2x2x2xf32>
  %vr = sinter.reshape %ve, %s4 : (tensor<1x2x2x2x2xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %q4 = sinter.concat %q, %q {axis = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x4x2x2xf32>
  %sc1 = sinter.matmul %q4, %krt : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %p1 = sinter.softmax %sc1 {axis = 3 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %o1 = sinter.matmul %p1, %vr : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %o0, %o1 : tensor<1x2x2x2xf32>, tensor<1x4x2x2xf32>
}

// -----

// One query over a cache written in the same step, masked to the keys up to the written
// position: decode_attention, bounded by the position instead of masked.
// CHECK-LABEL: func.func @decode
// CHECK: %[[K:.+]] = sinter.cache_write %arg1, %arg3, %arg5
// CHECK: %[[V:.+]] = sinter.cache_write %arg2, %arg4, %arg5
// CHECK: %[[O:.+]] = sinter.decode_attention %arg0, %[[K]], %[[V]], %arg5 {scale = 5.000000e-01 : f32}
// CHECK-NOT: sinter.softmax
// CHECK: return %[[O]]
func.func @decode(%q: tensor<1x1x1x4xf32>, %kc: tensor<1x1x8x4xf32>, %vc: tensor<1x1x8x4xf32>, %kn: tensor<1x1x1x4xf32>, %vn: tensor<1x1x1x4xf32>, %pos: tensor<1xi64>) -> tensor<1x1x1x4xf32> {
  %k = sinter.cache_write %kc, %kn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %v = sinter.cache_write %vc, %vn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %keys = sinter.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  %zero = sinter.constant dense<0.0> : tensor<f32>
  %ninf = sinter.constant dense<0xFF800000> : tensor<f32>
  %le = sinter.less_or_equal %keys, %pos : (tensor<8xi64>, tensor<1xi64>) -> tensor<8xi1>
  %mask = sinter.where %le, %zero, %ninf : (tensor<8xi1>, tensor<f32>, tensor<f32>) -> tensor<8xf32>
  %half = sinter.constant dense<0.5> : tensor<f32>
  %qs = sinter.mul %q, %half : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<1x1x1x4xf32>
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x1x8x4xf32>) -> tensor<1x1x4x8xf32>
  %s = sinter.matmul %qs, %kt : (tensor<1x1x1x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x1x8xf32>
  %sm = sinter.add %s, %mask : (tensor<1x1x1x8xf32>, tensor<8xf32>) -> tensor<1x1x1x8xf32>
  %p = sinter.softmax %sm {axis = 3 : i64} : (tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  %o = sinter.matmul %p, %v : (tensor<1x1x1x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x1x4xf32>
  return %o : tensor<1x1x1x4xf32>
}

// -----

// Negative: keys strictly before the position (the new key masked out) is not what
// decode_attention computes; the graph stays as it is.
// CHECK-LABEL: func.func @decode_strict_mask
// CHECK-NOT: sinter.decode_attention
// CHECK: sinter.softmax
func.func @decode_strict_mask(%q: tensor<1x1x1x4xf32>, %kc: tensor<1x1x8x4xf32>, %vc: tensor<1x1x8x4xf32>, %kn: tensor<1x1x1x4xf32>, %vn: tensor<1x1x1x4xf32>, %pos: tensor<1xi64>) -> tensor<1x1x1x4xf32> {
  %k = sinter.cache_write %kc, %kn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %v = sinter.cache_write %vc, %vn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %keys = sinter.constant dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi64>
  %zero = sinter.constant dense<0.0> : tensor<f32>
  %ninf = sinter.constant dense<0xFF800000> : tensor<f32>
  %le = sinter.less_or_equal %keys, %pos : (tensor<8xi64>, tensor<1xi64>) -> tensor<8xi1>
  %mask = sinter.where %le, %zero, %ninf : (tensor<8xi1>, tensor<f32>, tensor<f32>) -> tensor<8xf32>
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x1x8x4xf32>) -> tensor<1x1x4x8xf32>
  %s = sinter.matmul %q, %kt : (tensor<1x1x1x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x1x8xf32>
  %sm = sinter.add %s, %mask : (tensor<1x1x1x8xf32>, tensor<8xf32>) -> tensor<1x1x1x8xf32>
  %p = sinter.softmax %sm {axis = 3 : i64} : (tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  %o = sinter.matmul %p, %v : (tensor<1x1x1x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x1x4xf32>
  return %o : tensor<1x1x1x4xf32>
}

// -----

// A with-past export's decode step: the mask is the [B, L] attention_mask input over the whole
// cache (attend where it is not 0), not tied to the position: decode_attention with that
// input as its key_mask.
// CHECK-LABEL: func.func @decode_key_mask
// CHECK: %[[K:.+]] = sinter.cache_write %arg1, %arg3, %arg5
// CHECK: %[[V:.+]] = sinter.cache_write %arg2, %arg4, %arg5
// CHECK: %[[O:.+]] = sinter.decode_attention %arg0, %[[K]], %[[V]], %arg5 key_mask %arg6 {scale = 1.000000e+00 : f32}
// CHECK-NOT: sinter.softmax
// CHECK: return %[[O]]
func.func @decode_key_mask(%q: tensor<1x1x1x4xf32>, %kc: tensor<1x1x8x4xf32>, %vc: tensor<1x1x8x4xf32>, %kn: tensor<1x1x1x4xf32>, %vn: tensor<1x1x1x4xf32>, %pos: tensor<1xi64>, %am: tensor<1x8xi64>) -> tensor<1x1x1x4xf32> {
  %k = sinter.cache_write %kc, %kn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %v = sinter.cache_write %vc, %vn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %zero = sinter.constant dense<0.0> : tensor<f32>
  %ninf = sinter.constant dense<0xFF800000> : tensor<f32>
  %shape = sinter.constant dense<[1, 1, 1, 8]> : tensor<4xi64>
  %keep = sinter.cast %am : (tensor<1x8xi64>) -> tensor<1x8xi1>
  %keep4 = sinter.reshape %keep, %shape : (tensor<1x8xi1>, tensor<4xi64>) -> tensor<1x1x1x8xi1>
  %mask = sinter.where %keep4, %zero, %ninf : (tensor<1x1x1x8xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x1x8xf32>
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x1x8x4xf32>) -> tensor<1x1x4x8xf32>
  %s = sinter.matmul %q, %kt : (tensor<1x1x1x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x1x8xf32>
  %sm = sinter.add %s, %mask : (tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  %p = sinter.softmax %sm {axis = 3 : i64} : (tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  %o = sinter.matmul %p, %v : (tensor<1x1x1x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x1x4xf32>
  return %o : tensor<1x1x1x4xf32>
}

// -----

// Negative: a mask that attends where the input is 0 is neither a key mask nor bound to the
// position; the graph stays as it is.
// CHECK-LABEL: func.func @decode_inverted_key_mask
// CHECK-NOT: sinter.decode_attention
// CHECK: sinter.softmax
func.func @decode_inverted_key_mask(%q: tensor<1x1x1x4xf32>, %kc: tensor<1x1x8x4xf32>, %vc: tensor<1x1x8x4xf32>, %kn: tensor<1x1x1x4xf32>, %vn: tensor<1x1x1x4xf32>, %pos: tensor<1xi64>, %am: tensor<1x8xi64>) -> tensor<1x1x1x4xf32> {
  %k = sinter.cache_write %kc, %kn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %v = sinter.cache_write %vc, %vn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %zero = sinter.constant dense<0.0> : tensor<f32>
  %ninf = sinter.constant dense<0xFF800000> : tensor<f32>
  %shape = sinter.constant dense<[1, 1, 1, 8]> : tensor<4xi64>
  %keep = sinter.cast %am : (tensor<1x8xi64>) -> tensor<1x8xi1>
  %keep4 = sinter.reshape %keep, %shape : (tensor<1x8xi1>, tensor<4xi64>) -> tensor<1x1x1x8xi1>
  %mask = sinter.where %keep4, %ninf, %zero : (tensor<1x1x1x8xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x1x8xf32>
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x1x8x4xf32>) -> tensor<1x1x4x8xf32>
  %s = sinter.matmul %q, %kt : (tensor<1x1x1x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x1x8xf32>
  %sm = sinter.add %s, %mask : (tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  %p = sinter.softmax %sm {axis = 3 : i64} : (tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  %o = sinter.matmul %p, %v : (tensor<1x1x1x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x1x4xf32>
  return %o : tensor<1x1x1x4xf32>
}

// -----

// Only what an attention kernel takes is raised: 16-bit with a head size that is a multiple
// of 16 (flash_attention, any length), or keys that fit attention_prefill's shared memory.
// A 4096-token head of 24 (bf16) or of 32 (f32) fits neither: it stays for the generic tier.
// CHECK-LABEL: func.func @kernel_limits
// CHECK: sinter.fused_attention %arg0, %arg0, %arg0 {causal = true, scale = 1.250000e-01 : f32} : (tensor<1x1x4096x32xbf16>
// CHECK: sinter.attention %arg1, %arg1, %arg1
// CHECK: sinter.attention %arg2, %arg2, %arg2
// CHECK-NOT: sinter.fused_attention
func.func @kernel_limits(%a: tensor<1x1x4096x32xbf16>, %b: tensor<1x1x4096x24xbf16>, %c: tensor<1x1x4096x32xf32>)
    -> (tensor<1x1x4096x32xbf16>, tensor<1x1x4096x24xbf16>, tensor<1x1x4096x32xf32>) {
  %o0 = sinter.attention %a, %a, %a {is_causal = true, kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 0.125 : f32} : (tensor<1x1x4096x32xbf16>, tensor<1x1x4096x32xbf16>, tensor<1x1x4096x32xbf16>) -> tensor<1x1x4096x32xbf16>
  %o1 = sinter.attention %b, %b, %b {is_causal = true, kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 0.125 : f32} : (tensor<1x1x4096x24xbf16>, tensor<1x1x4096x24xbf16>, tensor<1x1x4096x24xbf16>) -> tensor<1x1x4096x24xbf16>
  %o2 = sinter.attention %c, %c, %c {is_causal = true, kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 0.125 : f32} : (tensor<1x1x4096x32xf32>, tensor<1x1x4096x32xf32>, tensor<1x1x4096x32xf32>) -> tensor<1x1x4096x32xf32>
  return %o0, %o1, %o2 : tensor<1x1x4096x32xbf16>, tensor<1x1x4096x24xbf16>, tensor<1x1x4096x32xf32>
}

// -----

// Which attention kernel takes a shape depends on the module's target: an fp32 head of 256
// keys (135 KiB of keys and values in shared memory) fits a block of the H200 ...
// CHECK-LABEL: func.func @fp32_256_keys
// CHECK: sinter.fused_attention
func.func @fp32_256_keys(%q: tensor<1x1x256x64xf32>, %k: tensor<1x1x256x64xf32>) -> tensor<1x1x256x64xf32> {
  %o = sinter.attention %q, %k, %k {is_causal = true, kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 0.125 : f32} : (tensor<1x1x256x64xf32>, tensor<1x1x256x64xf32>, tensor<1x1x256x64xf32>) -> tensor<1x1x256x64xf32>
  return %o : tensor<1x1x256x64xf32>
}

// -----

// ... but not one of a target with 48 KiB a block: the attention stays for the generic tier.
// CHECK-LABEL: func.func @fp32_256_keys_small_target
// CHECK-NOT: sinter.fused_attention
// CHECK: sinter.attention
module attributes {sinter.target = {name = "small", shared_memory_per_block = 49152 : i64, shared_memory_per_sm = 65536 : i64}} {
func.func @fp32_256_keys_small_target(%q: tensor<1x1x256x64xf32>, %k: tensor<1x1x256x64xf32>) -> tensor<1x1x256x64xf32> {
  %o = sinter.attention %q, %k, %k {is_causal = true, kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 0.125 : f32} : (tensor<1x1x256x64xf32>, tensor<1x1x256x64xf32>, tensor<1x1x256x64xf32>) -> tensor<1x1x256x64xf32>
  return %o : tensor<1x1x256x64xf32>
}
}

// -----

// Above 2^20 mask elements the probe reads sampled rows, columns and diagonals of the mask
// through per-op index rules (2048^2 here; built from a range, as exports past the folders'
// limit are). Causal with key padding from the argument.
// CHECK-LABEL: func.func @long_causal_padding
// CHECK-NEXT: %[[O:.+]] = sinter.fused_attention %arg0, %arg1, %arg1 key_mask %arg2 {causal = true, scale = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @long_causal_padding(%q: tensor<1x2x2048x64xbf16>, %k: tensor<1x2x2048x64xbf16>, %am: tensor<1x2048xi64>) -> tensor<1x2x2048x64xbf16> {
  %c0 = sinter.constant dense<0> : tensor<i64>
  %cs = sinter.constant dense<2048> : tensor<i64>
  %c1 = sinter.constant dense<1> : tensor<i64>
  %r = sinter.range %c0, %cs, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2048xi64>
  %ri = sinter.unsqueeze %r {axes = array<i64: 1>} : (tensor<2048xi64>) -> tensor<2048x1xi64>
  %rj = sinter.unsqueeze %r {axes = array<i64: 0>} : (tensor<2048xi64>) -> tensor<1x2048xi64>
  %causal = sinter.less_or_equal %rj, %ri : (tensor<1x2048xi64>, tensor<2048x1xi64>) -> tensor<2048x2048xi1>
  %b = sinter.cast %am : (tensor<1x2048xi64>) -> tensor<1x2048xi1>
  %bu = sinter.unsqueeze %b {axes = array<i64: 1, 2>} : (tensor<1x2048xi1>) -> tensor<1x1x1x2048xi1>
  %m = sinter.and %bu, %causal : (tensor<1x1x1x2048xi1>, tensor<2048x2048xi1>) -> tensor<1x1x2048x2048xi1>
  %o = sinter.attention %q, %k, %k, mask %m {kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 0.125 : f32} : (tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>, tensor<1x1x2048x2048xi1>) -> tensor<1x2x2048x64xbf16>
  return %o : tensor<1x2x2048x64xbf16>
}

// -----

// Sampled masks that are not causal-plus-padding stay: a sliding window of 2047 keys (it
// differs from causal at one element, the last row's first key), and key flags read one
// position late.
// CHECK-LABEL: func.func @long_other_masks
// CHECK-NOT: sinter.fused_attention
// CHECK: sinter.attention
// CHECK: sinter.attention
func.func @long_other_masks(%q: tensor<1x2x2048x64xbf16>, %k: tensor<1x2x2048x64xbf16>, %am: tensor<1x2048xi64>) -> (tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>) {
  %c0 = sinter.constant dense<0> : tensor<i64>
  %cs = sinter.constant dense<2048> : tensor<i64>
  %c1 = sinter.constant dense<1> : tensor<i64>
  %window = sinter.constant dense<2047> : tensor<i64>
  %r = sinter.range %c0, %cs, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2048xi64>
  %ri = sinter.unsqueeze %r {axes = array<i64: 1>} : (tensor<2048xi64>) -> tensor<2048x1xi64>
  %rj = sinter.unsqueeze %r {axes = array<i64: 0>} : (tensor<2048xi64>) -> tensor<1x2048xi64>
  %causal = sinter.less_or_equal %rj, %ri : (tensor<1x2048xi64>, tensor<2048x1xi64>) -> tensor<2048x2048xi1>
  %distance = sinter.sub %ri, %rj : (tensor<2048x1xi64>, tensor<1x2048xi64>) -> tensor<2048x2048xi64>
  %near = sinter.binary "less" %distance, %window : (tensor<2048x2048xi64>, tensor<i64>) -> tensor<2048x2048xi1>
  %sliding = sinter.and %causal, %near : (tensor<2048x2048xi1>, tensor<2048x2048xi1>) -> tensor<2048x2048xi1>
  %b = sinter.cast %am : (tensor<1x2048xi64>) -> tensor<1x2048xi1>
  %bu = sinter.unsqueeze %b {axes = array<i64: 1, 2>} : (tensor<1x2048xi1>) -> tensor<1x1x1x2048xi1>
  %m0 = sinter.and %bu, %sliding : (tensor<1x1x1x2048xi1>, tensor<2048x2048xi1>) -> tensor<1x1x2048x2048xi1>
  %o0 = sinter.attention %q, %k, %k, mask %m0 {kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 0.125 : f32} : (tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>, tensor<1x1x2048x2048xi1>) -> tensor<1x2x2048x64xbf16>
  %head = sinter.slice %b {starts = array<i64: 0, 0>, ends = array<i64: 1, 1>, steps = array<i64: 1, 1>} : (tensor<1x2048xi1>) -> tensor<1x1xi1>
  %rest = sinter.slice %b {starts = array<i64: 0, 0>, ends = array<i64: 1, 2047>, steps = array<i64: 1, 1>} : (tensor<1x2048xi1>) -> tensor<1x2047xi1>
  %late = sinter.concat %head, %rest {axis = 1 : i64} : (tensor<1x1xi1>, tensor<1x2047xi1>) -> tensor<1x2048xi1>
  %lu = sinter.unsqueeze %late {axes = array<i64: 1, 2>} : (tensor<1x2048xi1>) -> tensor<1x1x1x2048xi1>
  %m1 = sinter.and %lu, %causal : (tensor<1x1x1x2048xi1>, tensor<2048x2048xi1>) -> tensor<1x1x2048x2048xi1>
  %o1 = sinter.attention %q, %k, %k, mask %m1 {kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 0.125 : f32} : (tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>, tensor<1x1x2048x2048xi1>) -> tensor<1x2x2048x64xbf16>
  return %o0, %o1 : tensor<1x2x2048x64xbf16>, tensor<1x2x2048x64xbf16>
}

// -----

// GPT-2's decomposition: the scores scaled after the product, then where(attend, s, -inf)
// with a boolean causal mask; the NaN guard after the softmax.
// CHECK-LABEL: func.func @where_masked
// CHECK: %[[O:.+]] = sinter.fused_attention %arg0, %arg1, %arg2 {causal = true, scale = 2.500000e-01 : f32}
// CHECK-NOT: sinter.softmax
// CHECK: return %[[O]]
func.func @where_masked(%q: tensor<1x2x3x4xbf16>, %k: tensor<1x2x3x4xbf16>, %v: tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16> {
  %causal = sinter.constant dense<[[true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
  %quarter = sinter.constant dense<2.500000e-01> : tensor<bf16>
  %ninf = sinter.constant dense<0xFF80> : tensor<bf16>
  %zero = sinter.constant dense<0.000000e+00> : tensor<bf16>
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x2x3x4xbf16>) -> tensor<1x2x4x3xbf16>
  %s = sinter.matmul %q, %kt : (tensor<1x2x3x4xbf16>, tensor<1x2x4x3xbf16>) -> tensor<1x2x3x3xbf16>
  %ss = sinter.mul %s, %quarter : (tensor<1x2x3x3xbf16>, tensor<bf16>) -> tensor<1x2x3x3xbf16>
  %sm = sinter.where %causal, %ss, %ninf : (tensor<3x3xi1>, tensor<1x2x3x3xbf16>, tensor<bf16>) -> tensor<1x2x3x3xbf16>
  %p = sinter.softmax %sm {axis = 3 : i64} : (tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %nan = sinter.is_nan %p : (tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xi1>
  %pz = sinter.where %nan, %zero, %p : (tensor<1x2x3x3xi1>, tensor<bf16>, tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %o = sinter.matmul %pz, %v : (tensor<1x2x3x3xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  return %o : tensor<1x2x3x4xbf16>
}

// -----

// The same form in a decode step: one query over a cache written in the step, the boolean
// mask bound to the position; the scale on both the scores and q.
// CHECK-LABEL: func.func @where_masked_decode
// CHECK: %[[K:.+]] = sinter.cache_write %arg1, %arg3, %arg5
// CHECK: %[[V:.+]] = sinter.cache_write %arg2, %arg4, %arg5
// CHECK: %[[O:.+]] = sinter.decode_attention %arg0, %[[K]], %[[V]], %arg5 {scale = 2.500000e-01 : f32}
// CHECK: return %[[O]]
func.func @where_masked_decode(%q: tensor<1x1x1x4xf32>, %kc: tensor<1x1x8x4xf32>, %vc: tensor<1x1x8x4xf32>, %kn: tensor<1x1x1x4xf32>, %vn: tensor<1x1x1x4xf32>, %pos: tensor<1xi64>) -> tensor<1x1x1x4xf32> {
  %k = sinter.cache_write %kc, %kn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %v = sinter.cache_write %vc, %vn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %keys = sinter.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>
  %shape = sinter.constant dense<[1, 1, 1, 8]> : tensor<4xi64>
  %lowest = sinter.constant dense<-3.40282347E+38> : tensor<f32>
  %half = sinter.constant dense<0.5> : tensor<f32>
  %le = sinter.less_or_equal %keys, %pos : (tensor<1x8xi64>, tensor<1xi64>) -> tensor<1x8xi1>
  %mask = sinter.reshape %le, %shape : (tensor<1x8xi1>, tensor<4xi64>) -> tensor<1x1x1x8xi1>
  %qs = sinter.mul %q, %half : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<1x1x1x4xf32>
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x1x8x4xf32>) -> tensor<1x1x4x8xf32>
  %s = sinter.matmul %qs, %kt : (tensor<1x1x1x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x1x8xf32>
  %ss = sinter.mul %half, %s : (tensor<f32>, tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  %sm = sinter.where %mask, %ss, %lowest : (tensor<1x1x1x8xi1>, tensor<1x1x1x8xf32>, tensor<f32>) -> tensor<1x1x1x8xf32>
  %p = sinter.softmax %sm {axis = 3 : i64} : (tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  %o = sinter.matmul %p, %v : (tensor<1x1x1x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x1x4xf32>
  return %o : tensor<1x1x1x4xf32>
}

// -----

// Negative: a where whose fill is not a masked score (0: the masked keys would still count),
// and the inverted select (the scores in the other branch: true would mean masked).
// CHECK-LABEL: func.func @where_not_a_mask
// CHECK-NOT: sinter.fused_attention
// CHECK-COUNT-2: sinter.softmax
func.func @where_not_a_mask(%q: tensor<1x2x3x4xbf16>, %k: tensor<1x2x3x4xbf16>, %v: tensor<1x2x3x4xbf16>) -> (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) {
  %causal = sinter.constant dense<[[true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
  %ninf = sinter.constant dense<0xFF80> : tensor<bf16>
  %zero = sinter.constant dense<0.000000e+00> : tensor<bf16>
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x2x3x4xbf16>) -> tensor<1x2x4x3xbf16>
  %s = sinter.matmul %q, %kt : (tensor<1x2x3x4xbf16>, tensor<1x2x4x3xbf16>) -> tensor<1x2x3x3xbf16>
  %s0 = sinter.where %causal, %s, %zero : (tensor<3x3xi1>, tensor<1x2x3x3xbf16>, tensor<bf16>) -> tensor<1x2x3x3xbf16>
  %p0 = sinter.softmax %s0 {axis = 3 : i64} : (tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %o0 = sinter.matmul %p0, %v : (tensor<1x2x3x3xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %s1 = sinter.where %causal, %ninf, %s : (tensor<3x3xi1>, tensor<bf16>, tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %p1 = sinter.softmax %s1 {axis = 3 : i64} : (tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %o1 = sinter.matmul %p1, %v : (tensor<1x2x3x3xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  return %o0, %o1 : tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>
}

// -----

// Gemma 2's eager export of a decode step (bf16, softmax in fp32 between casts): the scaled
// scores soft-capped as 50 * tanh(s * 0.5 / 50) before the mask. With raise-softcap (the
// default): decode_attention with the cap and the scale inside it; without, the primitives stay.
// CHECK-LABEL: func.func @decode_softcap
// CHECK-NOT: sinter.decode_attention
// CHECK: sinter.unary "tanh"
// CAP-LABEL: func.func @decode_softcap
// CAP: %[[K:.+]] = sinter.cache_write %arg1, %arg3, %arg5
// CAP: %[[V:.+]] = sinter.cache_write %arg2, %arg4, %arg5
// CAP: %[[O:.+]] = sinter.decode_attention %arg0, %[[K]], %[[V]], %arg5 {scale = 5.000000e-01 : f32, softcap = 5.000000e+01 : f32}
// CAP-NOT: sinter.unary
// CAP-NOT: sinter.softmax
// CAP: return %[[O]]
func.func @decode_softcap(%q: tensor<1x2x1x4xbf16>, %kc: tensor<1x1x8x4xbf16>, %vc: tensor<1x1x8x4xbf16>, %kn: tensor<1x1x1x4xbf16>, %vn: tensor<1x1x1x4xbf16>, %pos: tensor<1xi64>) -> tensor<1x2x1x4xbf16> {
  %k = sinter.cache_write %kc, %kn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xbf16>, tensor<1x1x1x4xbf16>, tensor<1xi64>) -> tensor<1x1x8x4xbf16>
  %v = sinter.cache_write %vc, %vn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xbf16>, tensor<1x1x1x4xbf16>, tensor<1xi64>) -> tensor<1x1x8x4xbf16>
  %keys = sinter.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  %zero = sinter.constant dense<0.0> : tensor<bf16>
  %ninf = sinter.constant dense<0xFF80> : tensor<bf16>
  %le = sinter.less_or_equal %keys, %pos : (tensor<8xi64>, tensor<1xi64>) -> tensor<8xi1>
  %mask = sinter.where %le, %zero, %ninf : (tensor<8xi1>, tensor<bf16>, tensor<bf16>) -> tensor<8xbf16>
  %e5 = sinter.constant dense<[1, 1, 2, 8, 4]> : tensor<5xi64>
  %s4 = sinter.constant dense<[1, 2, 8, 4]> : tensor<4xi64>
  %ku = sinter.unsqueeze %k {axes = array<i64: 2>} : (tensor<1x1x8x4xbf16>) -> tensor<1x1x1x8x4xbf16>
  %ke = sinter.expand %ku, %e5 : (tensor<1x1x1x8x4xbf16>, tensor<5xi64>) -> tensor<1x1x2x8x4xbf16>
  %kr = sinter.reshape %ke, %s4 : (tensor<1x1x2x8x4xbf16>, tensor<4xi64>) -> tensor<1x2x8x4xbf16>
  %vu = sinter.unsqueeze %v {axes = array<i64: 2>} : (tensor<1x1x8x4xbf16>) -> tensor<1x1x1x8x4xbf16>
  %ve = sinter.expand %vu, %e5 : (tensor<1x1x1x8x4xbf16>, tensor<5xi64>) -> tensor<1x1x2x8x4xbf16>
  %vr = sinter.reshape %ve, %s4 : (tensor<1x1x2x8x4xbf16>, tensor<4xi64>) -> tensor<1x2x8x4xbf16>
  %kt = sinter.transpose %kr, [0, 1, 3, 2] : (tensor<1x2x8x4xbf16>) -> tensor<1x2x4x8xbf16>
  %s = sinter.matmul %q, %kt : (tensor<1x2x1x4xbf16>, tensor<1x2x4x8xbf16>) -> tensor<1x2x1x8xbf16>
  %half = sinter.constant dense<0.5> : tensor<bf16>
  %ss = sinter.mul %s, %half : (tensor<1x2x1x8xbf16>, tensor<bf16>) -> tensor<1x2x1x8xbf16>
  %capd = sinter.constant dense<50.0> : tensor<bf16>
  %capm = sinter.constant dense<50.0> : tensor<bf16>
  %d = sinter.div %ss, %capd : (tensor<1x2x1x8xbf16>, tensor<bf16>) -> tensor<1x2x1x8xbf16>
  %t = sinter.unary "tanh" %d : (tensor<1x2x1x8xbf16>) -> tensor<1x2x1x8xbf16>
  %c = sinter.mul %t, %capm : (tensor<1x2x1x8xbf16>, tensor<bf16>) -> tensor<1x2x1x8xbf16>
  %sm = sinter.add %c, %mask : (tensor<1x2x1x8xbf16>, tensor<8xbf16>) -> tensor<1x2x1x8xbf16>
  %w = sinter.cast %sm : (tensor<1x2x1x8xbf16>) -> tensor<1x2x1x8xf32>
  %pf = sinter.softmax %w {axis = 3 : i64} : (tensor<1x2x1x8xf32>) -> tensor<1x2x1x8xf32>
  %p = sinter.cast %pf : (tensor<1x2x1x8xf32>) -> tensor<1x2x1x8xbf16>
  %o = sinter.matmul %p, %vr : (tensor<1x2x1x8xbf16>, tensor<1x2x8x4xbf16>) -> tensor<1x2x1x4xbf16>
  return %o : tensor<1x2x1x4xbf16>
}

// -----

// A cap written as different constants outside and inside the tanh is still a soft-cap:
// 20 * tanh(s * 0.5 / 40) = 20 * tanh((0.5 * 20 / 40) * s / 20), scale 0.25, cap 20.
// CAP-LABEL: func.func @decode_softcap_rescaled
// CAP: sinter.decode_attention %arg0, %{{.+}}, %{{.+}}, %arg5 {scale = 2.500000e-01 : f32, softcap = 2.000000e+01 : f32}
func.func @decode_softcap_rescaled(%q: tensor<1x2x1x4xf32>, %kc: tensor<1x1x8x4xf32>, %vc: tensor<1x1x8x4xf32>, %kn: tensor<1x1x1x4xf32>, %vn: tensor<1x1x1x4xf32>, %pos: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  %k = sinter.cache_write %kc, %kn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %v = sinter.cache_write %vc, %vn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %keys = sinter.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  %zero = sinter.constant dense<0.0> : tensor<f32>
  %ninf = sinter.constant dense<0xFF800000> : tensor<f32>
  %le = sinter.less_or_equal %keys, %pos : (tensor<8xi64>, tensor<1xi64>) -> tensor<8xi1>
  %mask = sinter.where %le, %zero, %ninf : (tensor<8xi1>, tensor<f32>, tensor<f32>) -> tensor<8xf32>
  %e5 = sinter.constant dense<[1, 1, 2, 8, 4]> : tensor<5xi64>
  %s4 = sinter.constant dense<[1, 2, 8, 4]> : tensor<4xi64>
  %ku = sinter.unsqueeze %k {axes = array<i64: 2>} : (tensor<1x1x8x4xf32>) -> tensor<1x1x1x8x4xf32>
  %ke = sinter.expand %ku, %e5 : (tensor<1x1x1x8x4xf32>, tensor<5xi64>) -> tensor<1x1x2x8x4xf32>
  %kr = sinter.reshape %ke, %s4 : (tensor<1x1x2x8x4xf32>, tensor<4xi64>) -> tensor<1x2x8x4xf32>
  %vu = sinter.unsqueeze %v {axes = array<i64: 2>} : (tensor<1x1x8x4xf32>) -> tensor<1x1x1x8x4xf32>
  %ve = sinter.expand %vu, %e5 : (tensor<1x1x1x8x4xf32>, tensor<5xi64>) -> tensor<1x1x2x8x4xf32>
  %vr = sinter.reshape %ve, %s4 : (tensor<1x1x2x8x4xf32>, tensor<4xi64>) -> tensor<1x2x8x4xf32>
  %kt = sinter.transpose %kr, [0, 1, 3, 2] : (tensor<1x2x8x4xf32>) -> tensor<1x2x4x8xf32>
  %s = sinter.matmul %q, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x1x8xf32>
  %half = sinter.constant dense<0.5> : tensor<f32>
  %ss = sinter.mul %s, %half : (tensor<1x2x1x8xf32>, tensor<f32>) -> tensor<1x2x1x8xf32>
  %capd = sinter.constant dense<40.0> : tensor<f32>
  %capm = sinter.constant dense<20.0> : tensor<f32>
  %d = sinter.div %ss, %capd : (tensor<1x2x1x8xf32>, tensor<f32>) -> tensor<1x2x1x8xf32>
  %t = sinter.unary "tanh" %d : (tensor<1x2x1x8xf32>) -> tensor<1x2x1x8xf32>
  %c = sinter.mul %t, %capm : (tensor<1x2x1x8xf32>, tensor<f32>) -> tensor<1x2x1x8xf32>
  %sm = sinter.add %c, %mask : (tensor<1x2x1x8xf32>, tensor<8xf32>) -> tensor<1x2x1x8xf32>
  %p = sinter.softmax %sm {axis = 3 : i64} : (tensor<1x2x1x8xf32>) -> tensor<1x2x1x8xf32>
  %o = sinter.matmul %p, %vr : (tensor<1x2x1x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x1x4xf32>
  return %o : tensor<1x2x1x4xf32>
}

// -----

// Negative: a negative factor outside the tanh is no cap, and another function than tanh
// is no soft-cap; both stay as primitives.
// CAP-LABEL: func.func @decode_negative_cap
// CAP-NOT: sinter.decode_attention
// CAP: sinter.unary "tanh"
func.func @decode_negative_cap(%q: tensor<1x2x1x4xf32>, %kc: tensor<1x1x8x4xf32>, %vc: tensor<1x1x8x4xf32>, %kn: tensor<1x1x1x4xf32>, %vn: tensor<1x1x1x4xf32>, %pos: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  %k = sinter.cache_write %kc, %kn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %v = sinter.cache_write %vc, %vn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %keys = sinter.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  %zero = sinter.constant dense<0.0> : tensor<f32>
  %ninf = sinter.constant dense<0xFF800000> : tensor<f32>
  %le = sinter.less_or_equal %keys, %pos : (tensor<8xi64>, tensor<1xi64>) -> tensor<8xi1>
  %mask = sinter.where %le, %zero, %ninf : (tensor<8xi1>, tensor<f32>, tensor<f32>) -> tensor<8xf32>
  %e5 = sinter.constant dense<[1, 1, 2, 8, 4]> : tensor<5xi64>
  %s4 = sinter.constant dense<[1, 2, 8, 4]> : tensor<4xi64>
  %ku = sinter.unsqueeze %k {axes = array<i64: 2>} : (tensor<1x1x8x4xf32>) -> tensor<1x1x1x8x4xf32>
  %ke = sinter.expand %ku, %e5 : (tensor<1x1x1x8x4xf32>, tensor<5xi64>) -> tensor<1x1x2x8x4xf32>
  %kr = sinter.reshape %ke, %s4 : (tensor<1x1x2x8x4xf32>, tensor<4xi64>) -> tensor<1x2x8x4xf32>
  %vu = sinter.unsqueeze %v {axes = array<i64: 2>} : (tensor<1x1x8x4xf32>) -> tensor<1x1x1x8x4xf32>
  %ve = sinter.expand %vu, %e5 : (tensor<1x1x1x8x4xf32>, tensor<5xi64>) -> tensor<1x1x2x8x4xf32>
  %vr = sinter.reshape %ve, %s4 : (tensor<1x1x2x8x4xf32>, tensor<4xi64>) -> tensor<1x2x8x4xf32>
  %kt = sinter.transpose %kr, [0, 1, 3, 2] : (tensor<1x2x8x4xf32>) -> tensor<1x2x4x8xf32>
  %s = sinter.matmul %q, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x1x8xf32>
  %half = sinter.constant dense<0.5> : tensor<f32>
  %ss = sinter.mul %s, %half : (tensor<1x2x1x8xf32>, tensor<f32>) -> tensor<1x2x1x8xf32>
  %capd = sinter.constant dense<50.0> : tensor<f32>
  %capm = sinter.constant dense<-50.0> : tensor<f32>
  %d = sinter.div %ss, %capd : (tensor<1x2x1x8xf32>, tensor<f32>) -> tensor<1x2x1x8xf32>
  %t = sinter.unary "tanh" %d : (tensor<1x2x1x8xf32>) -> tensor<1x2x1x8xf32>
  %c = sinter.mul %t, %capm : (tensor<1x2x1x8xf32>, tensor<f32>) -> tensor<1x2x1x8xf32>
  %sm = sinter.add %c, %mask : (tensor<1x2x1x8xf32>, tensor<8xf32>) -> tensor<1x2x1x8xf32>
  %p = sinter.softmax %sm {axis = 3 : i64} : (tensor<1x2x1x8xf32>) -> tensor<1x2x1x8xf32>
  %o = sinter.matmul %p, %vr : (tensor<1x2x1x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x1x4xf32>
  return %o : tensor<1x2x1x4xf32>
}

// -----

// CAP-LABEL: func.func @decode_erf_cap
// CAP-NOT: sinter.decode_attention
// CAP: sinter.unary "erf"
func.func @decode_erf_cap(%q: tensor<1x2x1x4xf32>, %kc: tensor<1x1x8x4xf32>, %vc: tensor<1x1x8x4xf32>, %kn: tensor<1x1x1x4xf32>, %vn: tensor<1x1x1x4xf32>, %pos: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  %k = sinter.cache_write %kc, %kn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %v = sinter.cache_write %vc, %vn, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %keys = sinter.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  %zero = sinter.constant dense<0.0> : tensor<f32>
  %ninf = sinter.constant dense<0xFF800000> : tensor<f32>
  %le = sinter.less_or_equal %keys, %pos : (tensor<8xi64>, tensor<1xi64>) -> tensor<8xi1>
  %mask = sinter.where %le, %zero, %ninf : (tensor<8xi1>, tensor<f32>, tensor<f32>) -> tensor<8xf32>
  %e5 = sinter.constant dense<[1, 1, 2, 8, 4]> : tensor<5xi64>
  %s4 = sinter.constant dense<[1, 2, 8, 4]> : tensor<4xi64>
  %ku = sinter.unsqueeze %k {axes = array<i64: 2>} : (tensor<1x1x8x4xf32>) -> tensor<1x1x1x8x4xf32>
  %ke = sinter.expand %ku, %e5 : (tensor<1x1x1x8x4xf32>, tensor<5xi64>) -> tensor<1x1x2x8x4xf32>
  %kr = sinter.reshape %ke, %s4 : (tensor<1x1x2x8x4xf32>, tensor<4xi64>) -> tensor<1x2x8x4xf32>
  %vu = sinter.unsqueeze %v {axes = array<i64: 2>} : (tensor<1x1x8x4xf32>) -> tensor<1x1x1x8x4xf32>
  %ve = sinter.expand %vu, %e5 : (tensor<1x1x1x8x4xf32>, tensor<5xi64>) -> tensor<1x1x2x8x4xf32>
  %vr = sinter.reshape %ve, %s4 : (tensor<1x1x2x8x4xf32>, tensor<4xi64>) -> tensor<1x2x8x4xf32>
  %kt = sinter.transpose %kr, [0, 1, 3, 2] : (tensor<1x2x8x4xf32>) -> tensor<1x2x4x8xf32>
  %s = sinter.matmul %q, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x1x8xf32>
  %half = sinter.constant dense<0.5> : tensor<f32>
  %ss = sinter.mul %s, %half : (tensor<1x2x1x8xf32>, tensor<f32>) -> tensor<1x2x1x8xf32>
  %capd = sinter.constant dense<50.0> : tensor<f32>
  %capm = sinter.constant dense<50.0> : tensor<f32>
  %d = sinter.div %ss, %capd : (tensor<1x2x1x8xf32>, tensor<f32>) -> tensor<1x2x1x8xf32>
  %t = sinter.unary "erf" %d : (tensor<1x2x1x8xf32>) -> tensor<1x2x1x8xf32>
  %c = sinter.mul %t, %capm : (tensor<1x2x1x8xf32>, tensor<f32>) -> tensor<1x2x1x8xf32>
  %sm = sinter.add %c, %mask : (tensor<1x2x1x8xf32>, tensor<8xf32>) -> tensor<1x2x1x8xf32>
  %p = sinter.softmax %sm {axis = 3 : i64} : (tensor<1x2x1x8xf32>) -> tensor<1x2x1x8xf32>
  %o = sinter.matmul %p, %vr : (tensor<1x2x1x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x1x4xf32>
  return %o : tensor<1x2x1x4xf32>
}

// -----

// Negative: soft-capped prompt attention with a head size flash_attention does not tile (the
// only prompt kernel that caps) stays as primitives, as does the opset-23 op with a softcap.
// CAP-LABEL: func.func @prefill_softcap
// CAP-NOT: sinter.fused_attention
// CAP: sinter.unary "tanh"
// CAP-NOT: sinter.fused_attention
// CAP: sinter.attention
func.func @prefill_softcap(%q: tensor<1x2x3x4xbf16>, %k: tensor<1x2x3x4xbf16>, %v: tensor<1x2x3x4xbf16>) -> (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) {
  %causal = sinter.constant dense<[[0.0, 0xFF80, 0xFF80], [0.0, 0.0, 0xFF80], [0.0, 0.0, 0.0]]> : tensor<3x3xbf16>
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x2x3x4xbf16>) -> tensor<1x2x4x3xbf16>
  %s = sinter.matmul %q, %kt : (tensor<1x2x3x4xbf16>, tensor<1x2x4x3xbf16>) -> tensor<1x2x3x3xbf16>
  %half = sinter.constant dense<0.5> : tensor<bf16>
  %cap = sinter.constant dense<50.0> : tensor<bf16>
  %ss = sinter.mul %s, %half : (tensor<1x2x3x3xbf16>, tensor<bf16>) -> tensor<1x2x3x3xbf16>
  %d = sinter.div %ss, %cap : (tensor<1x2x3x3xbf16>, tensor<bf16>) -> tensor<1x2x3x3xbf16>
  %t = sinter.unary "tanh" %d : (tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %c = sinter.mul %t, %cap : (tensor<1x2x3x3xbf16>, tensor<bf16>) -> tensor<1x2x3x3xbf16>
  %sm = sinter.add %c, %causal : (tensor<1x2x3x3xbf16>, tensor<3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %p = sinter.softmax %sm {axis = 3 : i64} : (tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %o = sinter.matmul %p, %v : (tensor<1x2x3x3xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %o23 = sinter.attention %q, %k, %v {is_causal = true, kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 0.5 : f32, softcap = 50.0 : f32} : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  return %o, %o23 : tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>
}

// -----

// An eager export's prompt attention (bf16, no soft-cap): the softmax in fp32 between casts
// is the fused attention's; a cast pair that is not a widening and its narrowing back stays.
// CHECK-LABEL: func.func @eager_fp32_softmax
// CHECK: %[[S:.+]] = sinter.softmax %{{.+}} {axis = 3 : i64} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK: %[[O:.+]] = sinter.fused_attention %arg0, %arg1, %arg2 {causal = true, scale = 5.000000e-01 : f32}
// CHECK: sinter.cast %[[S]] : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf16>
// CHECK: return %[[O]]
func.func @eager_fp32_softmax(%q: tensor<1x2x3x4xbf16>, %k: tensor<1x2x3x4xbf16>, %v: tensor<1x2x3x4xbf16>, %v16: tensor<1x2x3x4xf16>) -> (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xf16>) {
  %causal = sinter.constant dense<[[0.0, 0xFF80, 0xFF80], [0.0, 0.0, 0xFF80], [0.0, 0.0, 0.0]]> : tensor<3x3xbf16>
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x2x3x4xbf16>) -> tensor<1x2x4x3xbf16>
  %s = sinter.matmul %q, %kt : (tensor<1x2x3x4xbf16>, tensor<1x2x4x3xbf16>) -> tensor<1x2x3x3xbf16>
  %half = sinter.constant dense<0.5> : tensor<bf16>
  %ss = sinter.mul %s, %half : (tensor<1x2x3x3xbf16>, tensor<bf16>) -> tensor<1x2x3x3xbf16>
  %sm = sinter.add %ss, %causal : (tensor<1x2x3x3xbf16>, tensor<3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %w = sinter.cast %sm : (tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xf32>
  %pf = sinter.softmax %w {axis = 3 : i64} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %p = sinter.cast %pf : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xbf16>
  %o = sinter.matmul %p, %v : (tensor<1x2x3x3xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %p16 = sinter.cast %pf : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf16>
  %o16 = sinter.matmul %p16, %v16 : (tensor<1x2x3x3xf16>, tensor<1x2x3x4xf16>) -> tensor<1x2x3x4xf16>
  return %o, %o16 : tensor<1x2x3x4xbf16>, tensor<1x2x3x4xf16>
}

// -----

// Soft-capped prompt attention flash_attention takes (bf16, D 16): with raise-softcap the
// decomposed form and the opset-23 op become fused_attention {softcap}.
// CHECK-LABEL: func.func @prefill_softcap_flash
// CHECK-NOT: sinter.fused_attention
// CAP-LABEL: func.func @prefill_softcap_flash
// CAP: sinter.fused_attention %arg0, %arg1, %arg2 {causal = true, scale = 2.500000e-01 : f32, softcap = 5.000000e+01 : f32}
// CAP: sinter.fused_attention %arg0, %arg1, %arg2 {causal = true, scale = 2.500000e-01 : f32, softcap = 3.000000e+01 : f32}
// CAP-NOT: sinter.unary
func.func @prefill_softcap_flash(%q: tensor<1x2x3x16xbf16>, %k: tensor<1x2x3x16xbf16>, %v: tensor<1x2x3x16xbf16>) -> (tensor<1x2x3x16xbf16>, tensor<1x2x3x16xbf16>) {
  %causal = sinter.constant dense<[[0.0, 0xFF80, 0xFF80], [0.0, 0.0, 0xFF80], [0.0, 0.0, 0.0]]> : tensor<3x3xbf16>
  %kt = sinter.transpose %k, [0, 1, 3, 2] : (tensor<1x2x3x16xbf16>) -> tensor<1x2x16x3xbf16>
  %s = sinter.matmul %q, %kt : (tensor<1x2x3x16xbf16>, tensor<1x2x16x3xbf16>) -> tensor<1x2x3x3xbf16>
  %quarter = sinter.constant dense<0.25> : tensor<bf16>
  %cap = sinter.constant dense<50.0> : tensor<bf16>
  %ss = sinter.mul %s, %quarter : (tensor<1x2x3x3xbf16>, tensor<bf16>) -> tensor<1x2x3x3xbf16>
  %d = sinter.div %ss, %cap : (tensor<1x2x3x3xbf16>, tensor<bf16>) -> tensor<1x2x3x3xbf16>
  %t = sinter.unary "tanh" %d : (tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %c = sinter.mul %t, %cap : (tensor<1x2x3x3xbf16>, tensor<bf16>) -> tensor<1x2x3x3xbf16>
  %sm = sinter.add %c, %causal : (tensor<1x2x3x3xbf16>, tensor<3x3xbf16>) -> tensor<1x2x3x3xbf16>
  %w = sinter.cast %sm : (tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xf32>
  %pf = sinter.softmax %w {axis = 3 : i64} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %p = sinter.cast %pf : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xbf16>
  %o = sinter.matmul %p, %v : (tensor<1x2x3x3xbf16>, tensor<1x2x3x16xbf16>) -> tensor<1x2x3x16xbf16>
  %o23 = sinter.attention %q, %k, %v {is_causal = true, kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 0.25 : f32, softcap = 30.0 : f32} : (tensor<1x2x3x16xbf16>, tensor<1x2x3x16xbf16>, tensor<1x2x3x16xbf16>) -> tensor<1x2x3x16xbf16>
  return %o, %o23 : tensor<1x2x3x16xbf16>, tensor<1x2x3x16xbf16>
}
