// RUN: sinter-opt %s -split-input-file --sinter-fuse-attention-head-merge | FileCheck %s

// The transpose back to [B, S, heads, D] and the reshape to rows become the attention's
// merged_heads: its result is the reshape's.
// CHECK-LABEL: func.func @prompt
// CHECK: %[[A:.+]] = sinter.fused_attention %arg0, %arg1, %arg2 {causal = true, merged_heads, scale = 2.500000e-01 : f32} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16>
// CHECK-NOT: sinter.transpose
// CHECK-NOT: sinter.reshape
// CHECK: return %[[A]]
func.func @prompt(%q: tensor<1x4x6x16xbf16>, %k: tensor<1x2x6x16xbf16>, %v: tensor<1x2x6x16xbf16>) -> tensor<1x6x64xbf16> {
  %a = sinter.fused_attention %q, %k, %v {scale = 2.500000e-01 : f32, causal = true} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %t = sinter.transpose %a, [0, 2, 1, 3] : (tensor<1x4x6x16xbf16>) -> tensor<1x6x4x16xbf16>
  %s = sinter.constant dense<[1, 6, 64]> : tensor<3xi64>
  %r = sinter.reshape %t, %s : (tensor<1x6x4x16xbf16>, tensor<3xi64>) -> tensor<1x6x64xbf16>
  return %r : tensor<1x6x64xbf16>
}

// -----

// Decode attention too.
// CHECK-LABEL: func.func @decode
// CHECK: %[[A:.+]] = sinter.decode_attention %arg0, %arg1, %arg2, %arg3 {merged_heads, scale = 2.500000e-01 : f32} : ({{.+}}) -> tensor<1x1x64xbf16>
// CHECK: return %[[A]]
func.func @decode(%q: tensor<1x4x1x16xbf16>, %k: tensor<1x2x8x16xbf16>, %v: tensor<1x2x8x16xbf16>, %p: tensor<1xi64>) -> tensor<1x1x64xbf16> {
  %a = sinter.decode_attention %q, %k, %v, %p {scale = 2.500000e-01 : f32} : (tensor<1x4x1x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1xi64>) -> tensor<1x4x1x16xbf16>
  %t = sinter.transpose %a, [0, 2, 1, 3] : (tensor<1x4x1x16xbf16>) -> tensor<1x1x4x16xbf16>
  %s = sinter.constant dense<[1, 1, 64]> : tensor<3xi64>
  %r = sinter.reshape %t, %s : (tensor<1x1x4x16xbf16>, tensor<3xi64>) -> tensor<1x1x64xbf16>
  return %r : tensor<1x1x64xbf16>
}

// -----

// Negative: the heads themselves are also read, so the views stay.
// CHECK-LABEL: func.func @heads_read
// CHECK: sinter.fused_attention %arg0, %arg1, %arg2 {causal = true, scale = 2.500000e-01 : f32}
// CHECK: sinter.transpose
// CHECK: sinter.reshape
func.func @heads_read(%q: tensor<1x4x6x16xbf16>, %k: tensor<1x2x6x16xbf16>, %v: tensor<1x2x6x16xbf16>) -> (tensor<1x6x64xbf16>, tensor<1x4x6x16xbf16>) {
  %a = sinter.fused_attention %q, %k, %v {scale = 2.500000e-01 : f32, causal = true} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %t = sinter.transpose %a, [0, 2, 1, 3] : (tensor<1x4x6x16xbf16>) -> tensor<1x6x4x16xbf16>
  %s = sinter.constant dense<[1, 6, 64]> : tensor<3xi64>
  %r = sinter.reshape %t, %s : (tensor<1x6x4x16xbf16>, tensor<3xi64>) -> tensor<1x6x64xbf16>
  return %r, %a : tensor<1x6x64xbf16>, tensor<1x4x6x16xbf16>
}

// -----

// Negative: another permutation is not the head merge.
// CHECK-LABEL: func.func @other_perm
// CHECK-NOT: merged_heads
// CHECK: sinter.transpose %{{.+}}, [0, 1, 3, 2]
func.func @other_perm(%q: tensor<1x4x6x16xbf16>, %k: tensor<1x2x6x16xbf16>, %v: tensor<1x2x6x16xbf16>) -> tensor<1x4x96xbf16> {
  %a = sinter.fused_attention %q, %k, %v {scale = 2.500000e-01 : f32, causal = true} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>) -> tensor<1x4x6x16xbf16>
  %t = sinter.transpose %a, [0, 1, 3, 2] : (tensor<1x4x6x16xbf16>) -> tensor<1x4x16x6xbf16>
  %s = sinter.constant dense<[1, 4, 96]> : tensor<3xi64>
  %r = sinter.reshape %t, %s : (tensor<1x4x16x6xbf16>, tensor<3xi64>) -> tensor<1x4x96xbf16>
  return %r : tensor<1x4x96xbf16>
}
