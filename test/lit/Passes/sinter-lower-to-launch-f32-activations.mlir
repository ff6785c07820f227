// RUN: sinter-opt %s -split-input-file --sinter-lower-to-launch="activations=f32" -verify-diagnostics | FileCheck %s
// RUN: not sinter-opt %s -split-input-file --sinter-lower-to-launch="activations=f16" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: activations must be model or f32, got 'f16'

// A 6-token Llama block from the embedding on: every activation buffer is f32 (weights stay
// bf16), each kernel is instantiated on fp32 activations, and the bf16 result becomes an
// f32 output.
// CHECK: module attributes {launch.activations = "f32"
// CHECK-LABEL: func.func @block
// CHECK-SAME: %arg2: memref<1x6x128xf32> {launch.output}
// CHECK: %[[H:.+]] = launch.alloc {{.*}}: memref<1x6x64xf32>
// CHECK: launch.kernel "embedding_gather"(%arg0, %{{.+}}, %[[H]]) {{.*}}params = [6, 64, 16, "__nv_bfloat16", "float"]
// CHECK: %[[QKV:.+]] = launch.alloc {{.*}}: memref<1x6x128xf32>
// CHECK: launch.kernel "linear_small_m"(%[[H]], {{.*}}, %[[QKV]]) {{.*}}"sinter::kernels::LinearEpilogue::ROPE_PAIRS", "float", "925353388u", 96, 16, 132, "float", "sinter::kernels::LinearHandoff::NONE", 0, "__nv_bfloat16", 0]
// CHECK: %[[ATT:.+]] = launch.alloc {{.*}}: memref<1x6x64xf32>
// CHECK: launch.kernel "attention_prefill"(%[[QKV]], %arg1, %[[ATT]]) {{.*}}params = [6, 4, 2, 16, 0, 64, 96, 128, "1048576000u", "true", "true", "float", "float"]
// CHECK: %[[O:.+]] = launch.alloc {{.*}}: memref<1x6x64xf32>
// CHECK: launch.kernel "linear_small_m"(%[[ATT]], %{{.+}}, %[[H]], %[[O]]) {{.*}}"sinter::kernels::LinearEpilogue::RESIDUAL", "float", "0u", 0, 0, 132, "float", "sinter::kernels::LinearHandoff::NONE", 0, "__nv_bfloat16", 0]
// CHECK: launch.kernel "linear_small_m"(%[[O]], %{{.+}}, %{{.+}}, %arg2) {{.*}}"sinter::kernels::LinearEpilogue::SILU_MUL_PAIRS", "float", "925353388u", 0, 0, 132, "float", "sinter::kernels::LinearHandoff::NONE", 0, "__nv_bfloat16", 0]
// CHECK: return
func.func @block(%ids: tensor<1x6xi64>, %mask: tensor<1x6xi64>) -> tensor<1x6x128xbf16> {
  %table = sinter.constant dense<0.5> : tensor<16x64xbf16>
  %h = sinter.gather %table, %ids {axis = 0 : i64} : (tensor<16x64xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wqkv = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %qkv = sinter.linear %h, %wqkv norm %g1 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64x128xbf16>, tensor<64xbf16>) -> tensor<1x6x128xbf16>
  %cos = sinter.constant dense<1.0> : tensor<1x1x6x16xbf16>
  %sin = sinter.constant dense<0.0> : tensor<1x1x6x16xbf16>
  %qr, %kr, %vt = sinter.split_qkv_heads %qkv rope(%cos, %sin) : (tensor<1x6x128xbf16>, tensor<1x1x6x16xbf16>, tensor<1x1x6x16xbf16>) -> (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>)
  %a3 = sinter.fused_attention %qr, %kr, %vt key_mask %mask {scale = 2.500000e-01 : f32, causal = true, merged_heads} : (tensor<1x4x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x2x6x16xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  %wo = sinter.constant dense<0.25> : tensor<64x64xbf16>
  %o = sinter.linear %a3, %wo residual %h : (tensor<1x6x64xbf16>, tensor<64x64xbf16>, tensor<1x6x64xbf16>) -> tensor<1x6x64xbf16>
  %g2 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu = sinter.constant dense<0.5> : tensor<64x256xbf16>
  %y = sinter.linear %o, %wgu norm %g2 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 128>} : (tensor<1x6x64xbf16>, tensor<64x256xbf16>, tensor<64xbf16>) -> tensor<1x6x128xbf16>
  return %y : tensor<1x6x128xbf16>
}

// -----

// 16 rows of K = 8192 fit only because each block has one tile: x streams through the per-warp
// ring (8 warps, 151 KiB of shared memory) instead of being staged whole (512 KiB).
// CHECK-LABEL: func.func @ring
// CHECK: launch.kernel "linear_small_m"({{.*}}block = array<i64: 256, 1, 1>{{.*}}params = [16, 64, 8192, "sinter::kernels::LinearPrologue::NONE", "sinter::kernels::LinearEpilogue::NONE", "float", "0u", 0, 0, 132, "float", "sinter::kernels::LinearHandoff::NONE", 0, "__nv_bfloat16", 0], shared_bytes = 151552
func.func @ring(%ids: tensor<1x16xi64>) -> tensor<1x16x64xbf16> {
  %table = sinter.constant dense<0.5> : tensor<16x8192xbf16>
  %h = sinter.gather %table, %ids {axis = 0 : i64} : (tensor<16x8192xbf16>, tensor<1x16xi64>) -> tensor<1x16x8192xbf16>
  %w = sinter.constant dense<0.5> : tensor<8192x64xbf16>
  %y = sinter.linear %h, %w : (tensor<1x16x8192xbf16>, tensor<8192x64xbf16>) -> tensor<1x16x64xbf16>
  return %y : tensor<1x16x64xbf16>
}

// -----

// 32 rows do not fit linear_small_m; the library GEMM path has no fp32-activation form.
func.func @wide_rows(%ids: tensor<1x32xi64>) -> tensor<1x32x64xbf16> {
  %table = sinter.constant dense<0.5> : tensor<16x64xbf16>
  %h = sinter.gather %table, %ids {axis = 0 : i64} : (tensor<16x64xbf16>, tensor<1x32xi64>) -> tensor<1x32x64xbf16>
  %w = sinter.constant dense<0.5> : tensor<64x64xbf16>
  // expected-error @+1 {{a linear on 32 rows of 64 (past linear_small_m) is not supported with --activations=f32}}
  %y = sinter.linear %h, %w : (tensor<1x32x64xbf16>, tensor<64x64xbf16>) -> tensor<1x32x64xbf16>
  return %y : tensor<1x32x64xbf16>
}

// -----

// A bf16 model input as the residual of an fp32 result.
func.func @bf16_residual(%ids: tensor<1x6xi64>, %r: tensor<1x6x64xbf16>) -> tensor<1x6x64xbf16> {
  %table = sinter.constant dense<0.5> : tensor<16x64xbf16>
  %h = sinter.gather %table, %ids {axis = 0 : i64} : (tensor<16x64xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  %w = sinter.constant dense<0.5> : tensor<64x64xbf16>
  // expected-error @+1 {{linear kernel: the residual is 'bf16' but the output is 'f32'}}
  %y = sinter.linear %h, %w residual %r : (tensor<1x6x64xbf16>, tensor<64x64xbf16>, tensor<1x6x64xbf16>) -> tensor<1x6x64xbf16>
  return %y : tensor<1x6x64xbf16>
}

// -----

// A normalization no linear absorbed runs as rms_norm, which has no fp32 form.
func.func @standalone_norm(%ids: tensor<1x6xi64>) -> tensor<1x6x64xbf16> {
  %table = sinter.constant dense<0.5> : tensor<16x64xbf16>
  %h = sinter.gather %table, %ids {axis = 0 : i64} : (tensor<16x64xbf16>, tensor<1x6xi64>) -> tensor<1x6x64xbf16>
  %g = sinter.constant dense<1.0> : tensor<64xbf16>
  // expected-error @+1 {{a standalone RMS normalization is not supported with --activations=f32}}
  %n = sinter.rms_normalization %h, %g {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<1x6x64xbf16>, tensor<64xbf16>) -> tensor<1x6x64xbf16>
  return %n : tensor<1x6x64xbf16>
}

// -----

// A bf16 linear whose weight is not a constant runs as a library GEMM, which has no fp32 form.
func.func @gemm(%x: tensor<2x8xbf16>, %w: tensor<8x4xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{a library GEMM on 2 rows is not supported with --activations=f32}}
  %y = sinter.linear %x, %w : (tensor<2x8xbf16>, tensor<8x4xbf16>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// -----

// Without bf16 values (an fp32 export) the option changes nothing: the library GEMM the bf16
// case refuses is lowered, and the module is not marked as widened.
// CHECK-NOT: launch.activations
// CHECK-LABEL: func.func @f32_model
// CHECK: launch.gemm
func.func @f32_model(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %y = sinter.linear %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// An input returned as it is: the outputs are fp32 under the option, so the output copy
// converts (it yielded bf16 into the fp32 output buffer: found by sinter-pipeline-fuzz).
// CHECK-LABEL: func.func @input_is_output
// CHECK: launch.generic
// CHECK: sinter.cast {{.*}} -> tensor<1x4x8xf32>
// CHECK: sinter.yield %{{.+}} : tensor<1x4x8xf32>
func.func @input_is_output(%x: tensor<1x4x8xbf16>) -> tensor<1x4x8xbf16> {
  return %x : tensor<1x4x8xbf16>
}
