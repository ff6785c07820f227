// RUN: sinter-opt %s -split-input-file --sinter-lower-to-launch | FileCheck %s

// 32 tokens are more rows than linear_small_m streams: the projections become library GEMMs
// and the fused ops their own launches — RMSNorm before, RoPE in place after the QKV GEMM,
// the attention reading the rotated buffer, SwiGLU after the gate/up GEMM.
// CHECK-LABEL: func.func @wide_block
// CHECK: launch.kernel "rms_norm"(%arg0, %{{.+}}, %[[N1:.+]]) {{.*}}params = [32, 64, "925353388u"]
// CHECK: launch.gemm %[[N1]], %{{.+}} -> %[[QKV:.+]] {k = 64 : i64, m = 32 : i64, n = 128 : i64, precision = "native"}
// CHECK: launch.kernel "rope_rows"(%{{.+}}, %{{.+}}, %[[QKV]]) {{.*}}params = [32, 128, 96, 16]
// CHECK: launch.kernel "attention_prefill"(%[[QKV]], %arg1, %[[ATT:.+]]) {{.*}}params = [32, 4, 2, 16, 0, 64, 96, 128,
// CHECK: launch.gemm %[[ATT]], %{{.+}} residual %arg0 -> %[[H:.+]] {k = 64 : i64, m = 32 : i64, n = 64 : i64, precision = "native"}
// CHECK: launch.kernel "rms_norm"(%[[H]], %{{.+}}, %[[N2:.+]])
// CHECK: launch.gemm %[[N2]], %{{.+}} -> %[[GU:.+]] {k = 64 : i64, m = 32 : i64, n = 256 : i64, precision = "native"}
// CHECK: launch.kernel "silu_mul"(%[[GU]], %arg2) {{.*}}params = [32, 128]
func.func @wide_block(%h: tensor<1x32x64xbf16>, %mask: tensor<1x32xi64>) -> tensor<1x32x128xbf16> {
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %wqkv norm %g1 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x32x64xbf16>, tensor<64x128xbf16>, tensor<64xbf16>) -> tensor<1x32x128xbf16>
  %q = sinter.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 32, 64>, steps = array<i64: 1, 1, 1>} : (tensor<1x32x128xbf16>) -> tensor<1x32x64xbf16>
  %k = sinter.slice %qkv {starts = array<i64: 0, 0, 64>, ends = array<i64: 1, 32, 96>, steps = array<i64: 1, 1, 1>} : (tensor<1x32x128xbf16>) -> tensor<1x32x32xbf16>
  %v = sinter.slice %qkv {starts = array<i64: 0, 0, 96>, ends = array<i64: 1, 32, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x32x128xbf16>) -> tensor<1x32x32xbf16>
  %shape = sinter.constant dense<[1, 32, -1, 16]> : tensor<4xi64>
  %q4 = sinter.reshape %q, %shape : (tensor<1x32x64xbf16>, tensor<4xi64>) -> tensor<1x32x4x16xbf16>
  %k4 = sinter.reshape %k, %shape : (tensor<1x32x32xbf16>, tensor<4xi64>) -> tensor<1x32x2x16xbf16>
  %v4 = sinter.reshape %v, %shape : (tensor<1x32x32xbf16>, tensor<4xi64>) -> tensor<1x32x2x16xbf16>
  %qt = sinter.transpose %q4, [0, 2, 1, 3] : (tensor<1x32x4x16xbf16>) -> tensor<1x4x32x16xbf16>
  %kt = sinter.transpose %k4, [0, 2, 1, 3] : (tensor<1x32x2x16xbf16>) -> tensor<1x2x32x16xbf16>
  %vt = sinter.transpose %v4, [0, 2, 1, 3] : (tensor<1x32x2x16xbf16>) -> tensor<1x2x32x16xbf16>
  %cos = sinter.constant dense<1.0> : tensor<1x1x32x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x32x16xbf16>
  %qr = sinter.rope %qt, %cos, %sin : (tensor<1x4x32x16xbf16>, tensor<1x1x32x16xbf16>, tensor<1x1x32x16xbf16>) -> tensor<1x4x32x16xbf16>
  %kr = sinter.rope %kt, %cos, %sin : (tensor<1x2x32x16xbf16>, tensor<1x1x32x16xbf16>, tensor<1x1x32x16xbf16>) -> tensor<1x2x32x16xbf16>
  %a = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true} : (tensor<1x4x32x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1x2x32x16xbf16>, tensor<1x32xi64>) -> tensor<1x4x32x16xbf16>
  %at = sinter.transpose %a, [0, 2, 1, 3] : (tensor<1x4x32x16xbf16>) -> tensor<1x32x4x16xbf16>
  %s3 = sinter.constant dense<[1, 32, 64]> : tensor<3xi64>
  %a3 = sinter.reshape %at, %s3 : (tensor<1x32x4x16xbf16>, tensor<3xi64>) -> tensor<1x32x64xbf16>
  %wo = sinter.constant dense<0.25> : tensor<64x64xbf16>
  %o = sinter.linear %a3, %wo residual %h : (tensor<1x32x64xbf16>, tensor<64x64xbf16>, tensor<1x32x64xbf16>) -> tensor<1x32x64xbf16>
  %g2 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu = sinter.constant dense<0.5> : tensor<64x256xbf16>
  %gu = sinter.linear %o, %wgu norm %g2 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x32x64xbf16>, tensor<64x256xbf16>, tensor<64xbf16>) -> tensor<1x32x256xbf16>
  %gate = sinter.slice %gu {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 32, 128>, steps = array<i64: 1, 1, 1>} : (tensor<1x32x256xbf16>) -> tensor<1x32x128xbf16>
  %up = sinter.slice %gu {starts = array<i64: 0, 0, 128>, ends = array<i64: 1, 32, 256>, steps = array<i64: 1, 1, 1>} : (tensor<1x32x256xbf16>) -> tensor<1x32x128xbf16>
  %y = sinter.silu_mul %gate, %up : (tensor<1x32x128xbf16>, tensor<1x32x128xbf16>) -> tensor<1x32x128xbf16>
  return %y : tensor<1x32x128xbf16>
}
