// RUN: sinter-opt %s -split-input-file --sinter-fuse-qkv-heads | FileCheck %s

// The three head chains of a fused QKV projection, q and k rotated by one pair of tables,
// become one split_qkv_heads that the attention reads.
// CHECK-LABEL: func.func @prompt
// CHECK: %[[QKV:.+]] = sinter.linear
// CHECK-NOT: sinter.slice
// CHECK: %[[Q:.+]], %[[K:.+]], %[[V:.+]] = sinter.split_qkv_heads %[[QKV]] rope(%{{.+}}, %{{.+}}) : (tensor<1x6x128xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
// CHECK-NEXT: sinter.fused_attention %[[Q]], %[[K]], %[[V]]
// CHECK-NOT: sinter.rope
// CHECK-NOT: sinter.transpose
func.func @prompt(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// Without rotation the split has no tables.
// CHECK-LABEL: func.func @no_rope
// CHECK: sinter.split_qkv_heads %{{.+}} : (tensor<1x6x128xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
func.func @no_rope(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qt, %kt, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// A projection with a constant bias (Qwen2's): the kernel adds it before the rotation.
// CHECK-LABEL: func.func @bias
// CHECK: %[[QKV:.+]] = sinter.linear %arg0, %{{.+}} bias %{{.+}}
// CHECK: sinter.split_qkv_heads %[[QKV]] rope
// CHECK-NOT: sinter.rope
func.func @bias(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %b = sinter.constant dense<0.5> : tensor<128xbf16>
  %qkv = sinter.linear %h, %w bias %b : (tensor<1x6x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// Negative: a bias computed at run time cannot be put in the kernel's row order.
// CHECK-LABEL: func.func @runtime_bias
// CHECK-NOT: sinter.split_qkv_heads
// CHECK: sinter.rope
func.func @runtime_bias(%h: tensor<1x6x64xbf16>, %b: tensor<128xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %w bias %b : (tensor<1x6x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// Negative: v rotated too.
// CHECK-LABEL: func.func @v_rotated
// CHECK-NOT: sinter.split_qkv_heads
// CHECK: sinter.rope
func.func @v_rotated(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %vr = sinter.rope %vt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vr {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// Negative: k's columns come before q's.
// CHECK-LABEL: func.func @q_not_first
// CHECK-NOT: sinter.split_qkv_heads
// CHECK: sinter.slice
func.func @q_not_first(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 32>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 32>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// Negative: the projection is also an output.
// CHECK-LABEL: func.func @projection_returned
// CHECK-NOT: sinter.split_qkv_heads
// CHECK: sinter.slice
func.func @projection_returned(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>, tensor<1x6x128xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a, %qkv : tensor<1x6x64xbf16>, tensor<1x6x128xbf16>
}

// -----

// A decode step: q to decode_attention, k and v through the cache writes of the step. The
// tables are looked up at the position after the projection, so the split goes after them,
// before the first reader of a head. One sequence: the tables have a row per token already (no
// broadcast).
// CHECK-LABEL: func.func @decode
// CHECK-NOT: sinter.expand
// CHECK: %[[QKV:.+]] = sinter.linear
// CHECK: %[[COS:.+]] = sinter.gather
// CHECK: %[[SIN:.+]] = sinter.gather
// CHECK: %[[Q:.+]], %[[K:.+]], %[[V:.+]] = sinter.split_qkv_heads %[[QKV]] rope(%[[COS]], %[[SIN]])
// CHECK: %[[KC:.+]] = sinter.cache_write %arg1, %[[K]], %arg3
// CHECK: %[[VC:.+]] = sinter.cache_write %arg2, %[[V]], %arg3
// CHECK: sinter.decode_attention %[[Q]], %[[KC]], %[[VC]], %arg3
func.func @decode(%h: tensor<1x1x64xbf16>, %kc: tensor<1x2x8x16xbf16>, %vc: tensor<1x2x8x16xbf16>, %pos: tensor<1xi64>) -> tensor<1x1x64xbf16> {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x1x64xbf16>, tensor<64x128xbf16>) -> tensor<1x1x128xbf16>
  %shape = sinter.constant dense<[1, 1, -1, 16]> : tensor<4xi64>
  %ctab = sinter.constant dense<1.0> : tensor<8x1x1x16xbf16>
  %stab = sinter.constant dense<0.0> : tensor<8x1x1x16xbf16>
  %cos = sinter.gather %ctab, %pos {axis = 0 : i64} : (tensor<8x1x1x16xbf16>, tensor<1xi64>) -> tensor<1x1x1x16xbf16>
  %sin = sinter.gather %stab, %pos {axis = 0 : i64} : (tensor<8x1x1x16xbf16>, tensor<1xi64>) -> tensor<1x1x1x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 1, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x1x128xbf16>) -> tensor<1x1x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x1x64xbf16>, tensor<4xi64>) -> tensor<1x1x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x1x4x16xbf16>) -> tensor<1x4x1x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x1x16xbf16>, tensor<1x1x1x16xbf16>, tensor<1x1x1x16xbf16>) -> tensor<1x4x1x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 1, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x1x128xbf16>) -> tensor<1x1x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x1x32xbf16>, tensor<4xi64>) -> tensor<1x1x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x1x2x16xbf16>) -> tensor<1x2x1x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x1x16xbf16>, tensor<1x1x1x16xbf16>, tensor<1x1x1x16xbf16>) -> tensor<1x2x1x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 1, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x1x128xbf16>) -> tensor<1x1x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x1x32xbf16>, tensor<4xi64>) -> tensor<1x1x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x1x2x16xbf16>) -> tensor<1x2x1x16xbf16>
  %kn = sinter.cache_write %kc, %kr, %pos {axis = 2 : i64} : (tensor<1x2x8x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x8x16xbf16>
  %vn = sinter.cache_write %vc, %vt, %pos {axis = 2 : i64} : (tensor<1x2x8x16xbf16>, tensor<1x2x1x16xbf16>, tensor<1xi64>) -> tensor<1x2x8x16xbf16>
  %a = sinter.decode_attention %qr, %kn, %vn, %pos {scale = 2.500000e-01 : f32, merged_heads} : (tensor<1x4x1x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1xi64>) -> tensor<1x1x64xbf16>
  return %a : tensor<1x1x64xbf16>
}

// -----

// A decode step of two sequences at one position: the tables looked up there are one row that
// both sequences share, and the projection kernel reads a row per token, so each is broadcast
// to [2, 1, 1, 16] right after its lookup (once for every projection).
// CHECK-LABEL: func.func @decode_batch
// CHECK: %[[QKV:.+]] = sinter.linear
// CHECK: %[[COS:.+]] = sinter.gather
// CHECK: %[[COSB:.+]] = sinter.expand %[[COS]], %{{.+}} : (tensor<1x1x1x16xbf16>, tensor<4xi64>) -> tensor<2x1x1x16xbf16>
// CHECK: %[[SIN:.+]] = sinter.gather
// CHECK: %[[SINB:.+]] = sinter.expand %[[SIN]], %{{.+}} : (tensor<1x1x1x16xbf16>, tensor<4xi64>) -> tensor<2x1x1x16xbf16>
// CHECK: sinter.split_qkv_heads %[[QKV]] rope(%[[COSB]], %[[SINB]]) : (tensor<2x1x128xbf16>, tensor<2x1x1x16xbf16>, tensor<2x1x1x16xbf16>)
// CHECK: sinter.decode_attention
func.func @decode_batch(%h: tensor<2x1x64xbf16>, %kc: tensor<2x2x8x16xbf16>, %vc: tensor<2x2x8x16xbf16>, %pos: tensor<1xi64>) -> tensor<2x1x64xbf16> {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %w : (tensor<2x1x64xbf16>, tensor<64x128xbf16>) -> tensor<2x1x128xbf16>
  %shape = sinter.constant dense<[2, 1, -1, 16]> : tensor<4xi64>
  %ctab = sinter.constant dense<1.0> : tensor<8x1x1x16xbf16>
  %stab = sinter.constant dense<0.0> : tensor<8x1x1x16xbf16>
  %cos = sinter.gather %ctab, %pos {axis = 0 : i64} : (tensor<8x1x1x16xbf16>, tensor<1xi64>) -> tensor<1x1x1x16xbf16>
  %sin = sinter.gather %stab, %pos {axis = 0 : i64} : (tensor<8x1x1x16xbf16>, tensor<1xi64>) -> tensor<1x1x1x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 2, 1, 64>, steps = array<i64: 1, 1, 1>} : (tensor<2x1x128xbf16>) -> tensor<2x1x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<2x1x64xbf16>, tensor<4xi64>) -> tensor<2x1x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<2x1x4x16xbf16>) -> tensor<2x4x1x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<2x4x1x16xbf16>, tensor<1x1x1x16xbf16>, tensor<1x1x1x16xbf16>) -> tensor<2x4x1x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 2, 1, 96>, steps = array<i64: 1, 1, 1>} : (tensor<2x1x128xbf16>) -> tensor<2x1x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<2x1x32xbf16>, tensor<4xi64>) -> tensor<2x1x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<2x1x2x16xbf16>) -> tensor<2x2x1x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<2x2x1x16xbf16>, tensor<1x1x1x16xbf16>, tensor<1x1x1x16xbf16>) -> tensor<2x2x1x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 2, 1, 128>, steps = array<i64: 1, 1, 1>} : (tensor<2x1x128xbf16>) -> tensor<2x1x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<2x1x32xbf16>, tensor<4xi64>) -> tensor<2x1x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<2x1x2x16xbf16>) -> tensor<2x2x1x16xbf16>
  %kn = sinter.cache_write %kc, %kr, %pos {axis = 2 : i64} : (tensor<2x2x8x16xbf16>, tensor<2x2x1x16xbf16>, tensor<1xi64>) -> tensor<2x2x8x16xbf16>
  %vn = sinter.cache_write %vc, %vt, %pos {axis = 2 : i64} : (tensor<2x2x8x16xbf16>, tensor<2x2x1x16xbf16>, tensor<1xi64>) -> tensor<2x2x8x16xbf16>
  %a = sinter.decode_attention %qr, %kn, %vn, %pos {scale = 2.500000e-01 : f32, merged_heads} : (tensor<2x4x1x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<1xi64>) -> tensor<2x1x64xbf16>
  return %a : tensor<2x1x64xbf16>
}

// -----

// A batch prompt that writes its keys and values into caches of two sequences (a
// --cache-length library of a batched with-past export): the KV kernels address a batch of
// sequences at the same positions, so the split feeds the cache writes and the attention.
// CHECK-LABEL: func.func @batch_cache
// CHECK: %[[Q:.+]], %[[K:.+]], %[[V:.+]] = sinter.split_qkv_heads %{{.+}} : (tensor<2x6x128xbf16>)
// CHECK: sinter.cache_write %arg1, %[[K]]
// CHECK: sinter.cache_write %arg2, %[[V]]
// CHECK: sinter.fused_attention %[[Q]], %[[K]], %[[V]]
func.func @batch_cache(%h: tensor<2x6x64xbf16>, %kc: tensor<2x2x8x16xbf16>, %vc: tensor<2x2x8x16xbf16>) -> (tensor<2x6x64xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %w : (tensor<2x6x64xbf16>, tensor<64x128xbf16>) -> tensor<2x6x128xbf16>
  %shape = sinter.constant dense<[2, 6, -1, 16]> : tensor<4xi64>
  %pos = sinter.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 2, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<2x6x128xbf16>) -> tensor<2x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<2x6x64xbf16>, tensor<4xi64>) -> tensor<2x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<2x6x4x16xbf16>) -> tensor<2x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 2, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<2x6x128xbf16>) -> tensor<2x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<2x6x32xbf16>, tensor<4xi64>) -> tensor<2x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<2x6x2x16xbf16>) -> tensor<2x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 2, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<2x6x128xbf16>) -> tensor<2x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<2x6x32xbf16>, tensor<4xi64>) -> tensor<2x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<2x6x2x16xbf16>) -> tensor<2x2x6x16xbf16>
  %kn = sinter.cache_write %kc, %kt, %pos {axis = 2 : i64} : (tensor<2x2x8x16xbf16>, tensor<2x2x6x16xbf16>, tensor<6xi64>) -> tensor<2x2x8x16xbf16>
  %vn = sinter.cache_write %vc, %vt, %pos {axis = 2 : i64} : (tensor<2x2x8x16xbf16>, tensor<2x2x6x16xbf16>, tensor<6xi64>) -> tensor<2x2x8x16xbf16>
  %a = sinter.fused_attention %qt, %kt, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<2x4x6x16xbf16>, tensor<2x2x6x16xbf16>, tensor<2x2x6x16xbf16>) -> tensor<2x6x64xbf16>
  return %a, %kn, %vn : tensor<2x6x64xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>
}

// -----

// Qwen3's q_norm / k_norm: a norm per head between the reshape and the transpose, one epsilon;
// the split takes both weights and the norm ops go with the chains.
// CHECK-LABEL: func.func @qk_norm_per_head
// CHECK: %[[QW:.+]] = sinter.constant dense<1.500000e+00> : tensor<16xbf16>
// CHECK: %[[KW:.+]] = sinter.constant dense<2.000000e+00> : tensor<16xbf16>
// CHECK: %[[Q:.+]], %[[K:.+]], %[[V:.+]] = sinter.split_qkv_heads %{{.+}} rope(%{{.+}}, %{{.+}}) norm(%[[QW]], %[[KW]]) {norm_epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT: sinter.fused_attention %[[Q]], %[[K]], %[[V]]
// CHECK-NOT: sinter.rms_normalization
func.func @qk_norm_per_head(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<16xbf16>
  %kw = sinter.constant dense<2.0> : tensor<16xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qn = sinter.rms_normalization %q4, %qw {axis = 3 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x4x16xbf16>, tensor<16xbf16>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %qn, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kn = sinter.rms_normalization %k4, %kw {axis = 3 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x2x16xbf16>, tensor<16xbf16>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %kn, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// OLMo 2's norms over the whole q and k projections (between the slice and the reshape).
// CHECK-LABEL: func.func @qk_norm_projection
// CHECK: sinter.split_qkv_heads %{{.+}} rope(%{{.+}}, %{{.+}}) norm(%{{.+}}, %{{.+}}) {norm_epsilon = 9.99999997E-7 : f32} : (tensor<1x6x128xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<64xbf16>, tensor<32xbf16>)
// CHECK-NOT: sinter.rms_normalization
func.func @qk_norm_projection(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<64xbf16>
  %kw = sinter.constant dense<2.0> : tensor<32xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %qn = sinter.rms_normalization %q, %qw {axis = 2 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x64xbf16>, tensor<64xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %qn, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %kn = sinter.rms_normalization %k, %kw {axis = 2 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x32xbf16>, tensor<32xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %kn, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}


// -----

// OLMo 2 as exported: fp32 norm weights (the norm in fp32, its result cast back to bf16 once)
// and fp32 cos / sin tables. The casts go with the chains.
// CHECK-LABEL: func.func @qk_norm_projection_f32
// CHECK: sinter.split_qkv_heads %{{.+}} rope(%{{.+}}, %{{.+}}) norm(%{{.+}}, %{{.+}}) {norm_epsilon = 9.99999997E-7 : f32} : (tensor<1x6x128xbf16>, tensor<1x1x6x16xf32>, tensor<1x1x6x16xf32>, tensor<64xf32>, tensor<32xf32>)
// CHECK-NOT: sinter.rms_normalization
// CHECK-NOT: sinter.cast
func.func @qk_norm_projection_f32(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<64xf32>
  %kw = sinter.constant dense<2.0> : tensor<32xf32>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xf32>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xf32>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %qnf = sinter.rms_normalization %q, %qw {axis = 2 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x64xbf16>, tensor<64xf32>) -> tensor<1x6x64xf32>
  %qn = sinter.cast %qnf : (tensor<1x6x64xf32>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %qn, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %knf = sinter.rms_normalization %k, %kw {axis = 2 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x32xbf16>, tensor<32xf32>) -> tensor<1x6x32xf32>
  %kn = sinter.cast %knf : (tensor<1x6x32xf32>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %kn, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// Negative: fp32 tables without q / k norms (the projection's RoPE epilogue reads tables of
// the heads' type), and an fp32 norm on q with a bf16 one on k: left alone.
// CHECK-LABEL: func.func @f32_tables_no_norm
// CHECK-NOT: sinter.split_qkv_heads
// CHECK: sinter.rope
func.func @f32_tables_no_norm(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xf32>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xf32>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// CHECK-LABEL: func.func @qk_norm_mixed_weight_types
// CHECK-NOT: sinter.split_qkv_heads
// CHECK: sinter.rms_normalization
func.func @qk_norm_mixed_weight_types(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<64xf32>
  %kw = sinter.constant dense<2.0> : tensor<32xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %qnf = sinter.rms_normalization %q, %qw {axis = 2 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x64xbf16>, tensor<64xf32>) -> tensor<1x6x64xf32>
  %qn = sinter.cast %qnf : (tensor<1x6x64xf32>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %qn, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %kn = sinter.rms_normalization %k, %kw {axis = 2 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x32xbf16>, tensor<32xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %kn, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qt, %kt, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// Only q normalized: the kernels' norm takes q and k together, so nothing is folded.
// CHECK-LABEL: func.func @only_q_norm
// CHECK-NOT: split_qkv_heads
// CHECK: sinter.rms_normalization
func.func @only_q_norm(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<16xbf16>
  %kw = sinter.constant dense<2.0> : tensor<16xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qn = sinter.rms_normalization %q4, %qw {axis = 3 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x4x16xbf16>, tensor<16xbf16>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %qn, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// q and k norms with different epsilons: left alone.
// CHECK-LABEL: func.func @qk_norm_two_eps
// CHECK-NOT: split_qkv_heads
// CHECK: sinter.rms_normalization
func.func @qk_norm_two_eps(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<16xbf16>
  %kw = sinter.constant dense<2.0> : tensor<16xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qn = sinter.rms_normalization %q4, %qw {axis = 3 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x4x16xbf16>, tensor<16xbf16>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %qn, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kn = sinter.rms_normalization %k4, %kw {axis = 3 : i64, epsilon = 1.0e-5 : f32} : (tensor<1x6x2x16xbf16>, tensor<16xbf16>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %kn, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// A norm on v (no model has one): left alone.
// CHECK-LABEL: func.func @v_norm
// CHECK-NOT: split_qkv_heads
// CHECK: sinter.rms_normalization
func.func @v_norm(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<16xbf16>
  %kw = sinter.constant dense<2.0> : tensor<16xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qn = sinter.rms_normalization %q4, %qw {axis = 3 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x4x16xbf16>, tensor<16xbf16>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %qn, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kn = sinter.rms_normalization %k4, %kw {axis = 3 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x2x16xbf16>, tensor<16xbf16>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %kn, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vn = sinter.rms_normalization %v4, %kw {axis = 3 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x2x16xbf16>, tensor<16xbf16>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %vn, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}

// -----

// A norm over the last two axes (heads and head_dim): not the kernel's; left alone.
// CHECK-LABEL: func.func @qk_norm_not_last_axis
// CHECK-NOT: split_qkv_heads
// CHECK: sinter.rms_normalization
func.func @qk_norm_not_last_axis(%h: tensor<1x6x64xbf16>) -> (tensor<1x6x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<16xbf16>
  %kw = sinter.constant dense<2.0> : tensor<16xbf16>
  %qkv = sinter.linear %h, %w : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %shape = sinter.constant dense<[1, 6, -1, 16]> : tensor<4xi64>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 6, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x64xbf16>
  %q4 = sinter.reshape %q, %shape : (tensor<1x6x64xbf16>, tensor<4xi64>) -> tensor<1x6x4x16xbf16>
  %qn = sinter.rms_normalization %q4, %qw {axis = 2 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x4x16xbf16>, tensor<16xbf16>) -> tensor<1x6x4x16xbf16>
  %qt = sinter.transpose %qn, [0, 2, 1, 3] : (tensor<1x6x4x16xbf16>) -> tensor<1x4x6x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 6, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %kn = sinter.rms_normalization %k4, %kw {axis = 3 : i64, epsilon = 1.0e-6 : f32} : (tensor<1x6x2x16xbf16>, tensor<16xbf16>) -> tensor<1x6x2x16xbf16>
  %kt = sinter.transpose %kn, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> tensor<1x2x6x16xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 6, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x6x128xbf16>) -> tensor<1x6x32xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x6x32xbf16>, tensor<4xi64>) -> tensor<1x6x2x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x6x2x16xbf16>) -> tensor<1x2x6x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
  return %a : tensor<1x6x64xbf16>
}
