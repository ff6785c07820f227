// RUN: sinter-opt %s -split-input-file --sinter-lower-to-launch | FileCheck %s

// A fused attention on 16-bit q/k/v is one flash_attention launch at every prompt length:
// grid (tiles of 64 queries, of 128 from 512 tokens at head sizes up to 64; q heads;
// sequences), 128 threads. (fp32 q/k/v under --activations=f32: attention_prefill,
// sinter-lower-to-launch-f32-activations.mlir.)

// CHECK-LABEL: func.func @long_prompt
// CHECK: launch.kernel "flash_attention"(%{{.+}}, %arg1, %{{.+}}) {args = array<i64: 0, 1, 2>, block = array<i64: 128, 1, 1>, grid = array<i64: 8, 4, 1>, params = [1024, 4, 2, 16, 0, 64, 96, 128, "1048576000u", "true", "true", "__nv_bfloat16", "__nv_bfloat16"]
func.func @long_prompt(%h: tensor<1x1024x64xbf16>, %mask: tensor<1x1024xi64>) -> tensor<1x1024x64xbf16> {
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %wqkv norm %g1 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x1024x64xbf16>, tensor<64x128xbf16>, tensor<64xbf16>) -> tensor<1x1024x128xbf16>
  %cos = sinter.constant dense<1.0> : tensor<1x1x1024x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x1024x16xbf16>
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) : (tensor<1x1024x128xbf16>, tensor<1x1x1024x16xbf16>, tensor<1x1x1024x16xbf16>) -> (tensor<1x4x1024x16xbf16>, tensor<1x2x1024x16xbf16>, tensor<1x2x1024x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x1024x16xbf16>, tensor<1x2x1024x16xbf16>, tensor<1x2x1024x16xbf16>, tensor<1x1024xi64>) -> tensor<1x1024x64xbf16>
  return %a3 : tensor<1x1024x64xbf16>
}

// -----

// Soft-capped scores (Gemma 2): the default tiling spelled (S 1024, D 16: 2 row tiles, 128-key
// tiles, no block minimum), then the cap's bits (50.0 = 1112014848).
// CHECK-LABEL: func.func @long_prompt_softcap
// CHECK: launch.kernel "flash_attention"({{.+}}params = [1024, 4, 2, 16, 0, 64, 96, 128, "1048576000u", "true", "true", "__nv_bfloat16", "__nv_bfloat16", 2, 128, 0, "1112014848u"]
func.func @long_prompt_softcap(%h: tensor<1x1024x64xbf16>, %mask: tensor<1x1024xi64>) -> tensor<1x1024x64xbf16> {
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %wqkv norm %g1 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x1024x64xbf16>, tensor<64x128xbf16>, tensor<64xbf16>) -> tensor<1x1024x128xbf16>
  %cos = sinter.constant dense<1.0> : tensor<1x1x1024x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x1024x16xbf16>
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) : (tensor<1x1024x128xbf16>, tensor<1x1x1024x16xbf16>, tensor<1x1x1024x16xbf16>) -> (tensor<1x4x1024x16xbf16>, tensor<1x2x1024x16xbf16>, tensor<1x2x1024x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads, softcap = 5.000000e+01 : f32} : (tensor<1x4x1024x16xbf16>, tensor<1x2x1024x16xbf16>, tensor<1x2x1024x16xbf16>, tensor<1x1024xi64>) -> tensor<1x1024x64xbf16>
  return %a3 : tensor<1x1024x64xbf16>
}

// -----

// CHECK-LABEL: func.func @prompt_of_6
// CHECK: launch.kernel "flash_attention"(%{{.+}}, %arg1, %{{.+}}) {args = array<i64: 0, 1, 2>, block = array<i64: 128, 1, 1>, grid = array<i64: 1, 4, 1>, params = [6, 4, 2, 16,
func.func @prompt_of_6(%h: tensor<1x6x64xbf16>, %mask: tensor<1x6xi64>) -> tensor<1x6x64xbf16> {
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %wqkv norm %g1 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64x128xbf16>, tensor<64xbf16>) -> tensor<1x6x128xbf16>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) : (tensor<1x6x128xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  return %a3 : tensor<1x6x64xbf16>
}

// -----

// Two sequences at the same positions: one [1, 1, S, D] table pair broadcast over the batch
// becomes [B * S, D] tables for the rows of the flattened batch, the sequence's rows repeated.
// CHECK-LABEL: func.func @batch_of_two
// CHECK: launch.weight "w0" {offset = 0 : i64, value = dense<{{\[\[}}0.000000e+00, {{.+}}], [2.500000e-01, {{.+}}], [0.000000e+00, {{.+}}], [2.500000e-01, {{.+}}]]> : tensor<4x16xbf16>} : memref<4x16xbf16>
// CHECK: launch.kernel "flash_attention"(%{{.+}}, %arg1, %{{.+}}) {args = array<i64: 0, 1, 2>, block = array<i64: 128, 1, 1>, grid = array<i64: 1, 4, 2>, params = [2, 4, 2, 16,
func.func @batch_of_two(%h: tensor<2x2x64xbf16>, %mask: tensor<2x2xi64>) -> tensor<2x2x64xbf16> {
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %wqkv norm %g1 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<2x2x64xbf16>, tensor<64x128xbf16>, tensor<64xbf16>) -> tensor<2x2x128xbf16>
  %cos = sinter.constant dense<[[[[0.000000, 0.015625, 0.031250, 0.046875, 0.062500, 0.078125, 0.093750, 0.109375, 0.125000, 0.140625, 0.156250, 0.171875, 0.187500, 0.203125, 0.218750, 0.234375], [0.250000, 0.265625, 0.281250, 0.296875, 0.312500, 0.328125, 0.343750, 0.359375, 0.375000, 0.390625, 0.406250, 0.421875, 0.437500, 0.453125, 0.468750, 0.484375]]]]> : tensor<1x1x2x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x2x16xbf16>
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) : (tensor<2x2x128xbf16>, tensor<1x1x2x16xbf16>, tensor<1x1x2x16xbf16>) -> (tensor<2x4x2x16xbf16>, tensor<2x2x2x16xbf16>, tensor<2x2x2x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<2x4x2x16xbf16>, tensor<2x2x2x16xbf16>, tensor<2x2x2x16xbf16>, tensor<2x2xi64>) -> tensor<2x2x64xbf16>
  return %a3 : tensor<2x2x64xbf16>
}

// -----

// q / k norms (Qwen3's, per head): the projection keeps its columns in order (no RoPE
// epilogue), then one qk_norm_rope launch normalizes and rotates q and k in place, one block
// per row and head (4 q + 2 k heads), before the attention reads the heads.
// CHECK-LABEL: func.func @qk_norm
// CHECK: launch.kernel "linear_small_m"{{.+}}params = [6, 128, 64, "sinter::kernels::LinearPrologue::RMS_NORM", "sinter::kernels::LinearEpilogue::NONE", "__nv_bfloat16", "925353388u", 0, 0,
// CHECK: launch.kernel "qk_norm_rope"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[QKV:.+]]) {args = array<i64: 0, 1, 2, 3, 4>, block = array<i64: 32, 1, 1>, grid = array<i64: 6, 6, 1>, params = [6, 128, 64, 32, 16, 16, 16, "true", "897988541u"]
// CHECK-NEXT: launch.kernel "flash_attention"(%[[QKV]],
func.func @qk_norm(%h: tensor<1x6x64xbf16>, %mask: tensor<1x6xi64>) -> tensor<1x6x64xbf16> {
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<16xbf16>
  %kw = sinter.constant dense<2.0> : tensor<16xbf16>
  %qkv = sinter.linear %h, %wqkv norm %g1 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64x128xbf16>, tensor<64xbf16>) -> tensor<1x6x128xbf16>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) norm(%qw, %kw) {norm_epsilon = 1.0e-6 : f32} : (tensor<1x6x128xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  return %a3 : tensor<1x6x64xbf16>
}

// -----

// OLMo 2's q / k norms over the whole projections with fp32 weights, and fp32 cos / sin: the
// kernel's optional weight and table types (float, float); the fp32 tables are weights of
// [rows, D] as the bf16 ones are.
// CHECK-LABEL: func.func @qk_norm_f32
// CHECK-DAG: launch.weight "{{.+}}" {{.+}} : tensor<64xf32>} : memref<64xf32>
// CHECK-DAG: launch.weight "{{.+}}" {{.+}} : tensor<6x16xf32>} : memref<6x16xf32>
// CHECK: launch.kernel "qk_norm_rope"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[QKV:.+]]) {args = array<i64: 0, 1, 2, 3, 4>, block = array<i64: 32, 1, 1>, grid = array<i64: 6, 2, 1>, params = [6, 128, 64, 32, 16, 64, 32, "true", "897988541u", "float", "float"]{{.*}} : memref<64xf32>, memref<32xf32>, memref<6x16xf32>, memref<6x16xf32>, memref<1x6x128xbf16>
// CHECK-NEXT: launch.kernel "flash_attention"(%[[QKV]],
func.func @qk_norm_f32(%h: tensor<1x6x64xbf16>, %mask: tensor<1x6xi64>) -> tensor<1x6x64xbf16> {
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qw = sinter.constant dense<1.5> : tensor<64xf32>
  %kw = sinter.constant dense<2.0> : tensor<32xf32>
  %qkv = sinter.linear %h, %wqkv : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xf32>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xf32>
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) norm(%qw, %kw) {norm_epsilon = 1.0e-6 : f32} : (tensor<1x6x128xbf16>, tensor<1x1x6x16xf32>, tensor<1x1x6x16xf32>, tensor<64xf32>, tensor<32xf32>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  return %a3 : tensor<1x6x64xbf16>
}

// -----

// Partial rotary (GPT-NeoX: the first 4 of each head's 16 columns rotate): the projection's
// RoPE epilogue takes the rotated width as its optional last parameter and [rows, 4] tables;
// past 16 rows the GEMM's rope_rows launch takes it the same way.
// CHECK-LABEL: func.func @partial_rotary
// CHECK: launch.kernel "linear_small_m"{{.+}}params = [6, 128, 64, "sinter::kernels::LinearPrologue::NONE", "sinter::kernels::LinearEpilogue::ROPE_PAIRS", "__nv_bfloat16", "0u", 96, 16, 132, "__nv_bfloat16", "sinter::kernels::LinearHandoff::NONE", 0, "__nv_bfloat16", 0, 4]{{.*}} : memref<1x6x64xbf16>, memref<128x64xbf16>, memref<6x4xbf16>, memref<6x4xbf16>, memref<1x6x128xbf16>
// CHECK-LABEL: func.func @partial_rotary_gemm
// CHECK: launch.gemm
// CHECK: launch.kernel "rope_rows"{{.+}}params = [24, 128, 96, 16, 4]
func.func @partial_rotary(%h: tensor<1x6x64xbf16>, %mask: tensor<1x6xi64>) -> tensor<1x6x64xbf16> {
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %wqkv : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x4xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x4xbf16>
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) : (tensor<1x6x128xbf16>, tensor<1x1x6x4xbf16>, tensor<1x1x6x4xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  return %a3 : tensor<1x6x64xbf16>
}
func.func @partial_rotary_gemm(%h: tensor<1x24x64xbf16>, %mask: tensor<1x24xi64>) -> tensor<1x24x64xbf16> {
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %wqkv : (tensor<1x24x64xbf16>, tensor<64x128xbf16>) -> tensor<1x24x128xbf16>
  %cos = sinter.constant dense<1.0> : tensor<1x1x24x4xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x24x4xbf16>
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) : (tensor<1x24x128xbf16>, tensor<1x1x24x4xbf16>, tensor<1x1x24x4xbf16>) -> (tensor<1x4x24x16xbf16>, tensor<1x2x24x16xbf16>, tensor<1x2x24x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x24x16xbf16>, tensor<1x2x24x16xbf16>, tensor<1x2x24x16xbf16>, tensor<1x24xi64>) -> tensor<1x24x64xbf16>
  return %a3 : tensor<1x24x64xbf16>
}
