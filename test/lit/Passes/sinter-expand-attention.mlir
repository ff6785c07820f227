// RUN: sinter-opt %s -split-input-file --sinter-expand-attention | FileCheck %s
// RUN: sinter-opt %s -split-input-file --sinter-expand-attention=activations=f32 | FileCheck %s --check-prefix=F32
// RUN: not sinter-opt %s -split-input-file --sinter-expand-attention=activations=bf8 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: activations must be model or f32, got 'bf8'

// Attention no pattern raised, with grouped kv heads, a softcap and the causal mask: the kv
// heads are expanded (reshape, expand, reshape), the scores are a matmul scaled and
// soft-capped, masked with -inf, a softmax whose fully masked rows become zeros, and a
// matmul with the expanded values.
// CHECK-LABEL: func.func @plain
// CHECK: %[[KE:.+]] = sinter.expand %{{.+}} -> tensor<1x2x2x5x8xf32>
// CHECK: %[[KT:.+]] = sinter.transpose %{{.+}}, [0, 1, 3, 2] : (tensor<1x4x5x8xf32>) -> tensor<1x4x8x5xf32>
// CHECK: %[[S:.+]] = sinter.matmul %arg0, %[[KT]] : (tensor<1x4x3x8xf32>, tensor<1x4x8x5xf32>) -> tensor<1x4x3x5xf32>
// CHECK: sinter.unary "tanh"
// CHECK: %[[CAUSAL:.+]] = sinter.constant dense<{{\[\[}}true, false, false, false, false], [true, true, false, false, false], [true, true, true, false, false]]> : tensor<3x5xi1>
// CHECK: %[[M:.+]] = sinter.where %[[CAUSAL]]
// CHECK: %[[P:.+]] = sinter.softmax %[[M]] {axis = 3 : i64}
// CHECK: %[[NAN:.+]] = sinter.is_nan %[[P]]
// CHECK: %[[Z:.+]] = sinter.where %[[NAN]], %{{.+}}, %[[P]]
// CHECK: %[[Y:.+]] = sinter.matmul %[[Z]], %{{.+}} : (tensor<1x4x3x5xf32>, tensor<1x4x5x8xf32>) -> tensor<1x4x3x8xf32>
// CHECK: return %[[Y]]
func.func @plain(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32> {
  %y = sinter.attention %q, %k, %v {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, scale = 0.5 : f32, is_causal = true, softcap = 2.0 : f32} : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32>
  return %y : tensor<1x4x3x8xf32>
}

// -----

// A raised attention of two sequences whose operands are not the head split of one QKV
// projection goes back to primitives; its key mask selects the attended keys.
// CHECK-LABEL: func.func @batch_two
// CHECK-NOT: sinter.fused_attention
// CHECK: sinter.equal %arg3
// CHECK: sinter.unary "not"
// CHECK: sinter.softmax
func.func @batch_two(%q: tensor<2x2x3x4xbf16>, %k: tensor<2x2x3x4xbf16>, %v: tensor<2x2x3x4xbf16>, %mask: tensor<2x3xi64>) -> tensor<2x2x3x4xbf16> {
  %y = sinter.fused_attention %q, %k, %v key_mask %mask {causal = true, scale = 0.5 : f32} : (tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x3xi64>) -> tensor<2x2x3x4xbf16>
  return %y : tensor<2x2x3x4xbf16>
}

// -----

// Negative: the fused attention of a bf16 batch-1 head split of one QKV projection, merged
// back to [B, S, heads * D], is the kernels' and stays.
// CHECK-LABEL: func.func @kernel_takes
// CHECK: sinter.fused_attention
// CHECK-NOT: sinter.softmax
func.func @kernel_takes(%x: tensor<1x3x8xbf16>) -> tensor<1x3x8xbf16> {
  %w = sinter.constant dense<1.0> : tensor<8x24xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x3x8xbf16>, tensor<8x24xbf16>) -> tensor<1x3x24xbf16>
  %s4 = sinter.constant dense<[1, 3, 2, 4]> : tensor<4xi64>
  %q0 = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 3, 8>, steps = array<i64: 1, 1, 1>} : (tensor<1x3x24xbf16>) -> tensor<1x3x8xbf16>
  %k0 = sinter.slice %qkv {starts = array<i64: 0, 0, 8>, ends = array<i64: 1, 3, 16>, steps = array<i64: 1, 1, 1>} : (tensor<1x3x24xbf16>) -> tensor<1x3x8xbf16>
  %v0 = sinter.slice %qkv {starts = array<i64: 0, 0, 16>, ends = array<i64: 1, 3, 24>, steps = array<i64: 1, 1, 1>} : (tensor<1x3x24xbf16>) -> tensor<1x3x8xbf16>
  %q1 = sinter.reshape %q0, %s4 : (tensor<1x3x8xbf16>, tensor<4xi64>) -> tensor<1x3x2x4xbf16>
  %k1 = sinter.reshape %k0, %s4 : (tensor<1x3x8xbf16>, tensor<4xi64>) -> tensor<1x3x2x4xbf16>
  %v1 = sinter.reshape %v0, %s4 : (tensor<1x3x8xbf16>, tensor<4xi64>) -> tensor<1x3x2x4xbf16>
  %q = sinter.transpose %q1, [0, 2, 1, 3] : (tensor<1x3x2x4xbf16>) -> tensor<1x2x3x4xbf16>
  %k = sinter.transpose %k1, [0, 2, 1, 3] : (tensor<1x3x2x4xbf16>) -> tensor<1x2x3x4xbf16>
  %v = sinter.transpose %v1, [0, 2, 1, 3] : (tensor<1x3x2x4xbf16>) -> tensor<1x2x3x4xbf16>
  %o = sinter.fused_attention %q, %k, %v {causal = true, scale = 0.5 : f32} : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %t = sinter.transpose %o, [0, 2, 1, 3] : (tensor<1x2x3x4xbf16>) -> tensor<1x3x2x4xbf16>
  %s3 = sinter.constant dense<[1, 3, 8]> : tensor<3xi64>
  %r = sinter.reshape %t, %s3 : (tensor<1x3x2x4xbf16>, tensor<3xi64>) -> tensor<1x3x8xbf16>
  return %r : tensor<1x3x8xbf16>
}

// -----

// Negative: two sequences of bf16 heads flash_attention tiles (D 16), read from one QKV
// projection, stay for the tensor-core kernel, which takes a batch and its key mask. Under
// activations=f32 the projection is written in fp32, which that kernel does not read, and the
// attention goes back to primitives.
// CHECK-LABEL: func.func @batch_kernel_takes
// CHECK: sinter.fused_attention
// CHECK-NOT: sinter.softmax
// F32-LABEL: func.func @batch_kernel_takes
// F32-NOT: sinter.fused_attention
// F32: sinter.softmax
func.func @batch_kernel_takes(%x: tensor<2x3x32xbf16>, %mask: tensor<2x3xi64>) -> tensor<2x3x32xbf16> {
  %w = sinter.constant dense<1.0> : tensor<32x64xbf16>
  %qkv = sinter.linear %x, %w : (tensor<2x3x32xbf16>, tensor<32x64xbf16>) -> tensor<2x3x64xbf16>
  %sq = sinter.constant dense<[2, 3, 2, 16]> : tensor<4xi64>
  %skv = sinter.constant dense<[2, 3, 1, 16]> : tensor<4xi64>
  %q0 = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 2, 3, 32>, steps = array<i64: 1, 1, 1>} : (tensor<2x3x64xbf16>) -> tensor<2x3x32xbf16>
  %k0 = sinter.slice %qkv {starts = array<i64: 0, 0, 32>, ends = array<i64: 2, 3, 48>, steps = array<i64: 1, 1, 1>} : (tensor<2x3x64xbf16>) -> tensor<2x3x16xbf16>
  %v0 = sinter.slice %qkv {starts = array<i64: 0, 0, 48>, ends = array<i64: 2, 3, 64>, steps = array<i64: 1, 1, 1>} : (tensor<2x3x64xbf16>) -> tensor<2x3x16xbf16>
  %q1 = sinter.reshape %q0, %sq : (tensor<2x3x32xbf16>, tensor<4xi64>) -> tensor<2x3x2x16xbf16>
  %k1 = sinter.reshape %k0, %skv : (tensor<2x3x16xbf16>, tensor<4xi64>) -> tensor<2x3x1x16xbf16>
  %v1 = sinter.reshape %v0, %skv : (tensor<2x3x16xbf16>, tensor<4xi64>) -> tensor<2x3x1x16xbf16>
  %q = sinter.transpose %q1, [0, 2, 1, 3] : (tensor<2x3x2x16xbf16>) -> tensor<2x2x3x16xbf16>
  %k = sinter.transpose %k1, [0, 2, 1, 3] : (tensor<2x3x1x16xbf16>) -> tensor<2x1x3x16xbf16>
  %v = sinter.transpose %v1, [0, 2, 1, 3] : (tensor<2x3x1x16xbf16>) -> tensor<2x1x3x16xbf16>
  %o = sinter.fused_attention %q, %k, %v key_mask %mask {causal = true, scale = 0.25 : f32} : (tensor<2x2x3x16xbf16>, tensor<2x1x3x16xbf16>, tensor<2x1x3x16xbf16>, tensor<2x3xi64>) -> tensor<2x2x3x16xbf16>
  %t = sinter.transpose %o, [0, 2, 1, 3] : (tensor<2x2x3x16xbf16>) -> tensor<2x3x2x16xbf16>
  %s3 = sinter.constant dense<[2, 3, 32]> : tensor<3xi64>
  %r = sinter.reshape %t, %s3 : (tensor<2x3x2x16xbf16>, tensor<3xi64>) -> tensor<2x3x32xbf16>
  return %r : tensor<2x3x32xbf16>
}

// -----

// Two sequences with a head size flash_attention does not tile (D 4; the short-prompt kernel
// that would take it is per sequence) go back to primitives.
// CHECK-LABEL: func.func @batch_small_heads
// CHECK-NOT: sinter.fused_attention
// CHECK: sinter.softmax
func.func @batch_small_heads(%x: tensor<2x3x8xbf16>) -> tensor<2x3x8xbf16> {
  %w = sinter.constant dense<1.0> : tensor<8x24xbf16>
  %qkv = sinter.linear %x, %w : (tensor<2x3x8xbf16>, tensor<8x24xbf16>) -> tensor<2x3x24xbf16>
  %s4 = sinter.constant dense<[2, 3, 2, 4]> : tensor<4xi64>
  %q0 = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 2, 3, 8>, steps = array<i64: 1, 1, 1>} : (tensor<2x3x24xbf16>) -> tensor<2x3x8xbf16>
  %k0 = sinter.slice %qkv {starts = array<i64: 0, 0, 8>, ends = array<i64: 2, 3, 16>, steps = array<i64: 1, 1, 1>} : (tensor<2x3x24xbf16>) -> tensor<2x3x8xbf16>
  %v0 = sinter.slice %qkv {starts = array<i64: 0, 0, 16>, ends = array<i64: 2, 3, 24>, steps = array<i64: 1, 1, 1>} : (tensor<2x3x24xbf16>) -> tensor<2x3x8xbf16>
  %q1 = sinter.reshape %q0, %s4 : (tensor<2x3x8xbf16>, tensor<4xi64>) -> tensor<2x3x2x4xbf16>
  %k1 = sinter.reshape %k0, %s4 : (tensor<2x3x8xbf16>, tensor<4xi64>) -> tensor<2x3x2x4xbf16>
  %v1 = sinter.reshape %v0, %s4 : (tensor<2x3x8xbf16>, tensor<4xi64>) -> tensor<2x3x2x4xbf16>
  %q = sinter.transpose %q1, [0, 2, 1, 3] : (tensor<2x3x2x4xbf16>) -> tensor<2x2x3x4xbf16>
  %k = sinter.transpose %k1, [0, 2, 1, 3] : (tensor<2x3x2x4xbf16>) -> tensor<2x2x3x4xbf16>
  %v = sinter.transpose %v1, [0, 2, 1, 3] : (tensor<2x3x2x4xbf16>) -> tensor<2x2x3x4xbf16>
  %o = sinter.fused_attention %q, %k, %v {causal = true, scale = 0.5 : f32} : (tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>) -> tensor<2x2x3x4xbf16>
  %t = sinter.transpose %o, [0, 2, 1, 3] : (tensor<2x2x3x4xbf16>) -> tensor<2x3x2x4xbf16>
  %s3 = sinter.constant dense<[2, 3, 8]> : tensor<3xi64>
  %r = sinter.reshape %t, %s3 : (tensor<2x3x2x4xbf16>, tensor<3xi64>) -> tensor<2x3x8xbf16>
  return %r : tensor<2x3x8xbf16>
}

// -----

// One sequence of 2048 tokens: flash_attention's at bf16; under activations=f32 only the
// short-prompt kernel reads the fp32 projection, and a head's 2048 fp32 keys and values do not
// fit its shared memory, so the attention goes back to primitives.
// CHECK-LABEL: func.func @long_prompt
// CHECK: sinter.fused_attention
// F32-LABEL: func.func @long_prompt
// F32-NOT: sinter.fused_attention
// F32: sinter.softmax
func.func @long_prompt(%x: tensor<1x2048x64xbf16>) -> tensor<1x2048x64xbf16> {
  %w = sinter.constant dense<1.0> : tensor<64x192xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x2048x64xbf16>, tensor<64x192xbf16>) -> tensor<1x2048x192xbf16>
  %s4 = sinter.constant dense<[1, 2048, 1, 64]> : tensor<4xi64>
  %q0 = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 2048, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x2048x192xbf16>) -> tensor<1x2048x64xbf16>
  %k0 = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 2048, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x2048x192xbf16>) -> tensor<1x2048x64xbf16>
  %v0 = sinter.slice %qkv {starts = array<i64: 0, 0, 128>, ends = array<i64: 1, 2048, 192>, steps = array<i64: 1, 1, 1>} : (tensor<1x2048x192xbf16>) -> tensor<1x2048x64xbf16>
  %q1 = sinter.reshape %q0, %s4 : (tensor<1x2048x64xbf16>, tensor<4xi64>) -> tensor<1x2048x1x64xbf16>
  %k1 = sinter.reshape %k0, %s4 : (tensor<1x2048x64xbf16>, tensor<4xi64>) -> tensor<1x2048x1x64xbf16>
  %v1 = sinter.reshape %v0, %s4 : (tensor<1x2048x64xbf16>, tensor<4xi64>) -> tensor<1x2048x1x64xbf16>
  %q = sinter.transpose %q1, [0, 2, 1, 3] : (tensor<1x2048x1x64xbf16>) -> tensor<1x1x2048x64xbf16>
  %k = sinter.transpose %k1, [0, 2, 1, 3] : (tensor<1x2048x1x64xbf16>) -> tensor<1x1x2048x64xbf16>
  %v = sinter.transpose %v1, [0, 2, 1, 3] : (tensor<1x2048x1x64xbf16>) -> tensor<1x1x2048x64xbf16>
  %o = sinter.fused_attention %q, %k, %v {causal = true, scale = 0.125 : f32} : (tensor<1x1x2048x64xbf16>, tensor<1x1x2048x64xbf16>, tensor<1x1x2048x64xbf16>) -> tensor<1x1x2048x64xbf16>
  %t = sinter.transpose %o, [0, 2, 1, 3] : (tensor<1x1x2048x64xbf16>) -> tensor<1x2048x1x64xbf16>
  %s3 = sinter.constant dense<[1, 2048, 64]> : tensor<3xi64>
  %r = sinter.reshape %t, %s3 : (tensor<1x2048x1x64xbf16>, tensor<3xi64>) -> tensor<1x2048x64xbf16>
  return %r : tensor<1x2048x64xbf16>
}

// -----

// A projection with a bias computed at run time has no head split (the kernel takes a
// constant bias, Qwen2's, in its row order), so its attention goes back to primitives instead
// of reaching a kernel that cannot read its operands.
// CHECK-LABEL: func.func @biased_projection
// CHECK-NOT: sinter.fused_attention
// CHECK: sinter.softmax
func.func @biased_projection(%x: tensor<1x3x8xbf16>, %b: tensor<24xbf16>) -> tensor<1x3x8xbf16> {
  %w = sinter.constant dense<1.0> : tensor<8x24xbf16>
  %qkv = sinter.linear %x, %w bias %b : (tensor<1x3x8xbf16>, tensor<8x24xbf16>, tensor<24xbf16>) -> tensor<1x3x24xbf16>
  %s4 = sinter.constant dense<[1, 3, 2, 4]> : tensor<4xi64>
  %q0 = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 3, 8>, steps = array<i64: 1, 1, 1>} : (tensor<1x3x24xbf16>) -> tensor<1x3x8xbf16>
  %k0 = sinter.slice %qkv {starts = array<i64: 0, 0, 8>, ends = array<i64: 1, 3, 16>, steps = array<i64: 1, 1, 1>} : (tensor<1x3x24xbf16>) -> tensor<1x3x8xbf16>
  %v0 = sinter.slice %qkv {starts = array<i64: 0, 0, 16>, ends = array<i64: 1, 3, 24>, steps = array<i64: 1, 1, 1>} : (tensor<1x3x24xbf16>) -> tensor<1x3x8xbf16>
  %q1 = sinter.reshape %q0, %s4 : (tensor<1x3x8xbf16>, tensor<4xi64>) -> tensor<1x3x2x4xbf16>
  %k1 = sinter.reshape %k0, %s4 : (tensor<1x3x8xbf16>, tensor<4xi64>) -> tensor<1x3x2x4xbf16>
  %v1 = sinter.reshape %v0, %s4 : (tensor<1x3x8xbf16>, tensor<4xi64>) -> tensor<1x3x2x4xbf16>
  %q = sinter.transpose %q1, [0, 2, 1, 3] : (tensor<1x3x2x4xbf16>) -> tensor<1x2x3x4xbf16>
  %k = sinter.transpose %k1, [0, 2, 1, 3] : (tensor<1x3x2x4xbf16>) -> tensor<1x2x3x4xbf16>
  %v = sinter.transpose %v1, [0, 2, 1, 3] : (tensor<1x3x2x4xbf16>) -> tensor<1x2x3x4xbf16>
  %o = sinter.fused_attention %q, %k, %v {causal = true, scale = 0.5 : f32} : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %t = sinter.transpose %o, [0, 2, 1, 3] : (tensor<1x2x3x4xbf16>) -> tensor<1x3x2x4xbf16>
  %s3 = sinter.constant dense<[1, 3, 8]> : tensor<3xi64>
  %r = sinter.reshape %t, %s3 : (tensor<1x3x2x4xbf16>, tensor<3xi64>) -> tensor<1x3x8xbf16>
  return %r : tensor<1x3x8xbf16>
}

// -----

// Decode attention over an fp32 cache (no decode kernel): attention over the whole cache with
// the keys after the position masked (j <= position).
// CHECK-LABEL: func.func @decode_f32
// CHECK-NOT: sinter.decode_attention
// CHECK: %[[KEYS:.+]] = sinter.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
// CHECK: %[[LE:.+]] = sinter.less_or_equal %[[KEYS]], %arg4 : (tensor<8xi64>, tensor<1xi64>) -> tensor<8xi1>
// CHECK: %[[KEEP:.+]] = sinter.reshape %[[LE]], %{{.+}} : (tensor<8xi1>, tensor<4xi64>) -> tensor<1x1x1x8xi1>
// CHECK: sinter.matmul %arg0
// CHECK: sinter.where
// CHECK: sinter.softmax
// CHECK: sinter.matmul
func.func @decode_f32(%q: tensor<1x4x1x8xf32>, %kc: tensor<1x2x8x8xf32> {sinter.state = "k"}, %vc: tensor<1x2x8x8xf32> {sinter.state = "v"}, %rows: tensor<1x2x1x8xf32>, %pos: tensor<1xi64>) -> (tensor<1x4x1x8xf32>, tensor<1x2x8x8xf32> {sinter.state = "k"}, tensor<1x2x8x8xf32> {sinter.state = "v"}) {
  %k = sinter.cache_write %kc, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<1x2x1x8xf32>, tensor<1xi64>) -> tensor<1x2x8x8xf32>
  %v = sinter.cache_write %vc, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<1x2x1x8xf32>, tensor<1xi64>) -> tensor<1x2x8x8xf32>
  %y = sinter.decode_attention %q, %k, %v, %pos {scale = 0.25 : f32} : (tensor<1x4x1x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1xi64>) -> tensor<1x4x1x8xf32>
  return %y, %k, %v : tensor<1x4x1x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}

// -----

// Soft-capped decode attention over an fp32 cache: the cap goes into the primitives,
// 30 * tanh(scores / 30) before the mask.
// CHECK-LABEL: func.func @decode_f32_softcap
// CHECK-NOT: sinter.decode_attention
// CHECK: %[[S:.+]] = sinter.matmul %arg0
// CHECK: %[[SS:.+]] = sinter.mul %[[S]], %{{.+}} : (tensor<1x4x1x8xf32>, tensor<f32>)
// CHECK: %[[D:.+]] = sinter.mul %[[SS]], %{{.+}} : (tensor<1x4x1x8xf32>, tensor<f32>)
// CHECK: %[[T:.+]] = sinter.unary "tanh" %[[D]]
// CHECK: %[[C:.+]] = sinter.mul %[[T]], %{{.+}} : (tensor<1x4x1x8xf32>, tensor<f32>)
// CHECK: sinter.where %{{.+}}, %[[C]]
// CHECK: sinter.softmax
func.func @decode_f32_softcap(%q: tensor<1x4x1x8xf32>, %kc: tensor<1x2x8x8xf32> {sinter.state = "k"}, %vc: tensor<1x2x8x8xf32> {sinter.state = "v"}, %rows: tensor<1x2x1x8xf32>, %pos: tensor<1xi64>) -> (tensor<1x4x1x8xf32>, tensor<1x2x8x8xf32> {sinter.state = "k"}, tensor<1x2x8x8xf32> {sinter.state = "v"}) {
  %k = sinter.cache_write %kc, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<1x2x1x8xf32>, tensor<1xi64>) -> tensor<1x2x8x8xf32>
  %v = sinter.cache_write %vc, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<1x2x1x8xf32>, tensor<1xi64>) -> tensor<1x2x8x8xf32>
  %y = sinter.decode_attention %q, %k, %v, %pos {scale = 0.25 : f32, softcap = 30.0 : f32} : (tensor<1x4x1x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1xi64>) -> tensor<1x4x1x8xf32>
  return %y, %k, %v : tensor<1x4x1x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}

// -----

// With a key mask (a with-past export's attention_mask), the keys the mask keeps over the
// whole cache, not the ones up to the position.
// CHECK-LABEL: func.func @decode_f32_key_mask
// CHECK-NOT: sinter.decode_attention
// CHECK-NOT: sinter.less_or_equal
// CHECK: %[[EQ:.+]] = sinter.equal %arg5, %{{.+}} : (tensor<1x8xi64>, tensor<i64>) -> tensor<1x8xi1>
// CHECK: %[[NZ:.+]] = sinter.unary "not" %[[EQ]]
// CHECK: %[[KEEP:.+]] = sinter.reshape %[[NZ]], %{{.+}} : (tensor<1x8xi1>, tensor<4xi64>) -> tensor<1x1x1x8xi1>
// CHECK: sinter.matmul %arg0
// CHECK: sinter.where %[[KEEP]]
// CHECK: sinter.softmax
// CHECK: sinter.matmul
func.func @decode_f32_key_mask(%q: tensor<1x4x1x8xf32>, %kc: tensor<1x2x8x8xf32> {sinter.state = "k"}, %vc: tensor<1x2x8x8xf32> {sinter.state = "v"}, %rows: tensor<1x2x1x8xf32>, %pos: tensor<1xi64>, %am: tensor<1x8xi64>) -> (tensor<1x4x1x8xf32>, tensor<1x2x8x8xf32> {sinter.state = "k"}, tensor<1x2x8x8xf32> {sinter.state = "v"}) {
  %k = sinter.cache_write %kc, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<1x2x1x8xf32>, tensor<1xi64>) -> tensor<1x2x8x8xf32>
  %v = sinter.cache_write %vc, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<1x2x1x8xf32>, tensor<1xi64>) -> tensor<1x2x8x8xf32>
  %y = sinter.decode_attention %q, %k, %v, %pos key_mask %am {scale = 0.25 : f32} : (tensor<1x4x1x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1xi64>, tensor<1x8xi64>) -> tensor<1x4x1x8xf32>
  return %y, %k, %v : tensor<1x4x1x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}

// -----

// bf16 caches the decode kernel addresses, but q and the new rows are not the head split of
// one QKV projection (a QKV bias add or q/k norms in between): primitives too.
// CHECK-LABEL: func.func @decode_not_projected
// CHECK-NOT: sinter.decode_attention
// CHECK: sinter.softmax
func.func @decode_not_projected(%q: tensor<1x4x1x8xbf16>, %kc: tensor<1x2x8x8xbf16> {sinter.state = "k"}, %vc: tensor<1x2x8x8xbf16> {sinter.state = "v"}, %rows: tensor<1x2x1x8xbf16>, %pos: tensor<1xi64>) -> (tensor<1x4x1x8xbf16>, tensor<1x2x8x8xbf16> {sinter.state = "k"}, tensor<1x2x8x8xbf16> {sinter.state = "v"}) {
  %k = sinter.cache_write %kc, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x8xbf16>, tensor<1x2x1x8xbf16>, tensor<1xi64>) -> tensor<1x2x8x8xbf16>
  %v = sinter.cache_write %vc, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x8xbf16>, tensor<1x2x1x8xbf16>, tensor<1xi64>) -> tensor<1x2x8x8xbf16>
  %y = sinter.decode_attention %q, %k, %v, %pos {scale = 0.25 : f32} : (tensor<1x4x1x8xbf16>, tensor<1x2x8x8xbf16>, tensor<1x2x8x8xbf16>, tensor<1xi64>) -> tensor<1x4x1x8xbf16>
  return %y, %k, %v : tensor<1x4x1x8xbf16>, tensor<1x2x8x8xbf16>, tensor<1x2x8x8xbf16>
}

// -----

// Negative: decode attention of a bf16 batch-1 head split of one QKV projection over
// [1, heads, length, head_dim] caches written in the step is the decode kernel's and stays.
// CHECK-LABEL: func.func @decode_kernel_takes
// CHECK: sinter.decode_attention
// CHECK-NOT: sinter.softmax
func.func @decode_kernel_takes(%x: tensor<1x1x8xbf16>, %kc: tensor<1x1x8x4xbf16> {sinter.state = "k"}, %vc: tensor<1x1x8x4xbf16> {sinter.state = "v"}, %pos: tensor<1xi64>) -> (tensor<1x2x1x4xbf16>, tensor<1x1x8x4xbf16> {sinter.state = "k"}, tensor<1x1x8x4xbf16> {sinter.state = "v"}) {
  %w = sinter.constant dense<1.0> : tensor<8x16xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x1x8xbf16>, tensor<8x16xbf16>) -> tensor<1x1x16xbf16>
  %sq = sinter.constant dense<[1, 1, 2, 4]> : tensor<4xi64>
  %skv = sinter.constant dense<[1, 1, 1, 4]> : tensor<4xi64>
  %q0 = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 1, 8>, steps = array<i64: 1, 1, 1>} : (tensor<1x1x16xbf16>) -> tensor<1x1x8xbf16>
  %k0 = sinter.slice %qkv {starts = array<i64: 0, 0, 8>, ends = array<i64: 1, 1, 12>, steps = array<i64: 1, 1, 1>} : (tensor<1x1x16xbf16>) -> tensor<1x1x4xbf16>
  %v0 = sinter.slice %qkv {starts = array<i64: 0, 0, 12>, ends = array<i64: 1, 1, 16>, steps = array<i64: 1, 1, 1>} : (tensor<1x1x16xbf16>) -> tensor<1x1x4xbf16>
  %q1 = sinter.reshape %q0, %sq : (tensor<1x1x8xbf16>, tensor<4xi64>) -> tensor<1x1x2x4xbf16>
  %k1 = sinter.reshape %k0, %skv : (tensor<1x1x4xbf16>, tensor<4xi64>) -> tensor<1x1x1x4xbf16>
  %v1 = sinter.reshape %v0, %skv : (tensor<1x1x4xbf16>, tensor<4xi64>) -> tensor<1x1x1x4xbf16>
  %q = sinter.transpose %q1, [0, 2, 1, 3] : (tensor<1x1x2x4xbf16>) -> tensor<1x2x1x4xbf16>
  %kr = sinter.transpose %k1, [0, 2, 1, 3] : (tensor<1x1x1x4xbf16>) -> tensor<1x1x1x4xbf16>
  %vr = sinter.transpose %v1, [0, 2, 1, 3] : (tensor<1x1x1x4xbf16>) -> tensor<1x1x1x4xbf16>
  %k = sinter.cache_write %kc, %kr, %pos {axis = 2 : i64} : (tensor<1x1x8x4xbf16>, tensor<1x1x1x4xbf16>, tensor<1xi64>) -> tensor<1x1x8x4xbf16>
  %v = sinter.cache_write %vc, %vr, %pos {axis = 2 : i64} : (tensor<1x1x8x4xbf16>, tensor<1x1x1x4xbf16>, tensor<1xi64>) -> tensor<1x1x8x4xbf16>
  %y = sinter.decode_attention %q, %k, %v, %pos {scale = 0.5 : f32} : (tensor<1x2x1x4xbf16>, tensor<1x1x8x4xbf16>, tensor<1x1x8x4xbf16>, tensor<1xi64>) -> tensor<1x2x1x4xbf16>
  return %y, %k, %v : tensor<1x2x1x4xbf16>, tensor<1x1x8x4xbf16>, tensor<1x1x8x4xbf16>
}

// -----

// Soft-capped scores: only flash_attention caps them. At D 4 (which it does not tile; the
// uncapped attention would take attention_prefill) the capped attention goes to primitives with
// the tanh; at D 16 it stays for flash_attention, except under activations=f32.
// CHECK-LABEL: func.func @softcap_head_flash_does_not_tile
// CHECK-NOT: sinter.fused_attention
// CHECK: sinter.unary "tanh"
// CHECK: sinter.softmax
func.func @softcap_head_flash_does_not_tile(%x: tensor<1x3x8xbf16>) -> tensor<1x3x8xbf16> {
  %w = sinter.constant dense<1.0> : tensor<8x24xbf16>
  %qkv = sinter.linear %x, %w : (tensor<1x3x8xbf16>, tensor<8x24xbf16>) -> tensor<1x3x24xbf16>
  %s4 = sinter.constant dense<[1, 3, 2, 4]> : tensor<4xi64>
  %q0 = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 3, 8>, steps = array<i64: 1, 1, 1>} : (tensor<1x3x24xbf16>) -> tensor<1x3x8xbf16>
  %k0 = sinter.slice %qkv {starts = array<i64: 0, 0, 8>, ends = array<i64: 1, 3, 16>, steps = array<i64: 1, 1, 1>} : (tensor<1x3x24xbf16>) -> tensor<1x3x8xbf16>
  %v0 = sinter.slice %qkv {starts = array<i64: 0, 0, 16>, ends = array<i64: 1, 3, 24>, steps = array<i64: 1, 1, 1>} : (tensor<1x3x24xbf16>) -> tensor<1x3x8xbf16>
  %q1 = sinter.reshape %q0, %s4 : (tensor<1x3x8xbf16>, tensor<4xi64>) -> tensor<1x3x2x4xbf16>
  %k1 = sinter.reshape %k0, %s4 : (tensor<1x3x8xbf16>, tensor<4xi64>) -> tensor<1x3x2x4xbf16>
  %v1 = sinter.reshape %v0, %s4 : (tensor<1x3x8xbf16>, tensor<4xi64>) -> tensor<1x3x2x4xbf16>
  %q = sinter.transpose %q1, [0, 2, 1, 3] : (tensor<1x3x2x4xbf16>) -> tensor<1x2x3x4xbf16>
  %k = sinter.transpose %k1, [0, 2, 1, 3] : (tensor<1x3x2x4xbf16>) -> tensor<1x2x3x4xbf16>
  %v = sinter.transpose %v1, [0, 2, 1, 3] : (tensor<1x3x2x4xbf16>) -> tensor<1x2x3x4xbf16>
  %o = sinter.fused_attention %q, %k, %v {causal = true, scale = 0.5 : f32, softcap = 5.000000e+01 : f32} : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %t = sinter.transpose %o, [0, 2, 1, 3] : (tensor<1x2x3x4xbf16>) -> tensor<1x3x2x4xbf16>
  %s3 = sinter.constant dense<[1, 3, 8]> : tensor<3xi64>
  %r = sinter.reshape %t, %s3 : (tensor<1x3x2x4xbf16>, tensor<3xi64>) -> tensor<1x3x8xbf16>
  return %r : tensor<1x3x8xbf16>
}

// -----

// CHECK-LABEL: func.func @softcap_batch_kernel_takes
// CHECK: sinter.fused_attention {{.+}}softcap = 5.000000e+01
// CHECK-NOT: sinter.softmax
// F32-LABEL: func.func @softcap_batch_kernel_takes
// F32-NOT: sinter.fused_attention
// F32: sinter.unary "tanh"
// F32: sinter.softmax
func.func @softcap_batch_kernel_takes(%x: tensor<2x3x32xbf16>, %mask: tensor<2x3xi64>) -> tensor<2x3x32xbf16> {
  %w = sinter.constant dense<1.0> : tensor<32x64xbf16>
  %qkv = sinter.linear %x, %w : (tensor<2x3x32xbf16>, tensor<32x64xbf16>) -> tensor<2x3x64xbf16>
  %sq = sinter.constant dense<[2, 3, 2, 16]> : tensor<4xi64>
  %skv = sinter.constant dense<[2, 3, 1, 16]> : tensor<4xi64>
  %q0 = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 2, 3, 32>, steps = array<i64: 1, 1, 1>} : (tensor<2x3x64xbf16>) -> tensor<2x3x32xbf16>
  %k0 = sinter.slice %qkv {starts = array<i64: 0, 0, 32>, ends = array<i64: 2, 3, 48>, steps = array<i64: 1, 1, 1>} : (tensor<2x3x64xbf16>) -> tensor<2x3x16xbf16>
  %v0 = sinter.slice %qkv {starts = array<i64: 0, 0, 48>, ends = array<i64: 2, 3, 64>, steps = array<i64: 1, 1, 1>} : (tensor<2x3x64xbf16>) -> tensor<2x3x16xbf16>
  %q1 = sinter.reshape %q0, %sq : (tensor<2x3x32xbf16>, tensor<4xi64>) -> tensor<2x3x2x16xbf16>
  %k1 = sinter.reshape %k0, %skv : (tensor<2x3x16xbf16>, tensor<4xi64>) -> tensor<2x3x1x16xbf16>
  %v1 = sinter.reshape %v0, %skv : (tensor<2x3x16xbf16>, tensor<4xi64>) -> tensor<2x3x1x16xbf16>
  %q = sinter.transpose %q1, [0, 2, 1, 3] : (tensor<2x3x2x16xbf16>) -> tensor<2x2x3x16xbf16>
  %k = sinter.transpose %k1, [0, 2, 1, 3] : (tensor<2x3x1x16xbf16>) -> tensor<2x1x3x16xbf16>
  %v = sinter.transpose %v1, [0, 2, 1, 3] : (tensor<2x3x1x16xbf16>) -> tensor<2x1x3x16xbf16>
  %o = sinter.fused_attention %q, %k, %v key_mask %mask {causal = true, scale = 0.25 : f32, softcap = 5.000000e+01 : f32} : (tensor<2x2x3x16xbf16>, tensor<2x1x3x16xbf16>, tensor<2x1x3x16xbf16>, tensor<2x3xi64>) -> tensor<2x2x3x16xbf16>
  %t = sinter.transpose %o, [0, 2, 1, 3] : (tensor<2x2x3x16xbf16>) -> tensor<2x3x2x16xbf16>
  %s3 = sinter.constant dense<[2, 3, 32]> : tensor<3xi64>
  %r = sinter.reshape %t, %s3 : (tensor<2x3x2x16xbf16>, tensor<3xi64>) -> tensor<2x3x32xbf16>
  return %r : tensor<2x3x32xbf16>
}
