// RUN: sinter-opt %s -split-input-file --sinter-fuse-residual-norm-prologue | FileCheck %s
// RUN: sinter-opt %s -split-input-file --sinter-fuse-residual-norm-prologue --sinter-lower-to-launch | FileCheck %s --check-prefix=LAUNCH

// Gemma 2's post-attention norm and residual add, then the pre-feedforward norm in the MLP's
// linear: the group is marked, and its sum, which the down projection's residual reads
// later, is written by the linear's launch (block 0) instead of a launch of its own.
// CHECK-LABEL: func.func @post_norm_before_pre_norm
// CHECK: sinter.fusion_group(%arg0, %{{[^,]+}}, %arg1) attributes {in_consumer_prologue}
// CHECK: sinter.linear
// LAUNCH-LABEL: func.func @post_norm_before_pre_norm
// LAUNCH-NOT: launch.generic
// The post-norm's weight (1.5) first, the pre-norm's (0.75) last:
// LAUNCH: %[[NW:.+]] = launch.weight "w{{[0-9]+}}.residual_norm" {offset = {{[0-9]+}} : i64, value = dense<"0x0000C03F{{(0000C03F)+}}{{(0000403F)+}}"> : tensor<2x64xf32>} : memref<2x64xf32>
// LAUNCH-NOT: launch.generic
// LAUNCH: launch.kernel "linear_small_m"(%arg0, %{{[^,]+}}, %[[NW]], %{{[^,]+}}, %arg1, %[[SUM:[^)]+]]) {args = array<i64: 0, 1, 2, -1, -1, -1, -1, 3, -1, -1, -1, -1, -1, 4, 5>, {{.*}}params = [2, 128, 64, "sinter::kernels::LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT", "sinter::kernels::LinearEpilogue::NONE", {{.*}}writes = array<i64: 3, 5>
// LAUNCH: launch.kernel "linear_small_m"({{.*}}%[[SUM]]{{.*}}"sinter::kernels::LinearEpilogue::RESIDUAL"
// LAUNCH-NOT: launch.generic
func.func @post_norm_before_pre_norm(%y: tensor<2x64xbf16>, %h: tensor<2x64xbf16>) -> tensor<2x64xbf16> {
  %post = sinter.constant dense<1.5> : tensor<64xf32>
  %pre = sinter.constant dense<0.75> : tensor<64xf32>
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %wd = sinter.constant dense<0.25> : tensor<128x64xbf16>
  %s = sinter.fusion_group(%y, %post, %h) : (tensor<2x64xbf16>, tensor<64xf32>, tensor<2x64xbf16>) -> tensor<2x64xbf16> {
  ^bb0(%a: tensor<2x64xbf16>, %b: tensor<64xf32>, %c: tensor<2x64xbf16>):
    %n = sinter.rms_normalization %a, %b {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x64xbf16>, tensor<64xf32>) -> tensor<2x64xf32>
    %r = sinter.cast %n : (tensor<2x64xf32>) -> tensor<2x64xbf16>
    %t = sinter.add %c, %r : (tensor<2x64xbf16>, tensor<2x64xbf16>) -> tensor<2x64xbf16>
    sinter.yield %t : tensor<2x64xbf16>
  }
  %u = sinter.linear %s, %w norm %pre {norm_epsilon = 9.99999997E-7 : f32} : (tensor<2x64xbf16>, tensor<64x128xbf16>, tensor<64xf32>) -> tensor<2x128xbf16>
  %o = sinter.linear %u, %wd residual %s : (tensor<2x128xbf16>, tensor<128x64xbf16>, tensor<2x64xbf16>) -> tensor<2x64xbf16>
  return %o : tensor<2x64xbf16>
}

// -----

// The final norm in the LM head, the sum read by nothing else: no sum written (add order
// swapped).
// CHECK-LABEL: func.func @final_norm
// CHECK: attributes {in_consumer_prologue}
// LAUNCH-LABEL: func.func @final_norm
// LAUNCH-NOT: launch.generic
// LAUNCH: launch.kernel "linear_small_m"{{.*}}args = array<i64: 0, 1, 2, -1, -1, -1, -1, 3, -1, -1, -1, -1, -1, 4, -1>{{.*}}RESIDUAL_RMS_NORM_FP32_WEIGHT
func.func @final_norm(%y: tensor<1x1x64xbf16>, %h: tensor<1x1x64xbf16>) -> tensor<1x1x256xbf16> {
  %post = sinter.constant dense<1.5> : tensor<64xf32>
  %pre = sinter.constant dense<0.75> : tensor<64xf32>
  %w = sinter.constant dense<0.5> : tensor<64x256xbf16>
  %s = sinter.fusion_group(%y, %post, %h) : (tensor<1x1x64xbf16>, tensor<64xf32>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16> {
  ^bb0(%a: tensor<1x1x64xbf16>, %b: tensor<64xf32>, %c: tensor<1x1x64xbf16>):
    %n = sinter.rms_normalization %a, %b {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<1x1x64xbf16>, tensor<64xf32>) -> tensor<1x1x64xf32>
    %r = sinter.cast %n : (tensor<1x1x64xf32>) -> tensor<1x1x64xbf16>
    %t = sinter.add %r, %c : (tensor<1x1x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
    sinter.yield %t : tensor<1x1x64xbf16>
  }
  %l = sinter.linear %s, %w norm %pre {norm_epsilon = 9.99999997E-7 : f32} : (tensor<1x1x64xbf16>, tensor<64x256xbf16>, tensor<64xf32>) -> tensor<1x1x256xbf16>
  return %l : tensor<1x1x256xbf16>
}

// -----

// Negative: the pre-norm's epsilon differs; a user of the sum before the linear; a bf16
// pre-norm weight (Llama's rounding, not the kernel's); more rows than linear_small_m takes;
// a group that adds something else. Each keeps its generated launch.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: in_consumer_prologue
// LAUNCH-LABEL: func.func @not_fused
// LAUNCH-COUNT-5: launch.generic
// LAUNCH-NOT: RESIDUAL_RMS_NORM_FP32_WEIGHT
func.func @not_fused(%y: tensor<2x64xbf16>, %h: tensor<2x64xbf16>, %big: tensor<32x64xbf16>)
    -> (tensor<2x128xbf16>, tensor<2x64xbf16>, tensor<2x128xbf16>, tensor<2x128xbf16>, tensor<32x128xbf16>, tensor<2x128xbf16>) {
  %post = sinter.constant dense<1.5> : tensor<64xf32>
  %pre = sinter.constant dense<0.75> : tensor<64xf32>
  %preb = sinter.constant dense<0.75> : tensor<64xbf16>
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %s1 = sinter.fusion_group(%y, %post, %h) : (tensor<2x64xbf16>, tensor<64xf32>, tensor<2x64xbf16>) -> tensor<2x64xbf16> {
  ^bb0(%a: tensor<2x64xbf16>, %b: tensor<64xf32>, %c: tensor<2x64xbf16>):
    %n = sinter.rms_normalization %a, %b {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x64xbf16>, tensor<64xf32>) -> tensor<2x64xf32>
    %r = sinter.cast %n : (tensor<2x64xf32>) -> tensor<2x64xbf16>
    %t = sinter.add %c, %r : (tensor<2x64xbf16>, tensor<2x64xbf16>) -> tensor<2x64xbf16>
    sinter.yield %t : tensor<2x64xbf16>
  }
  %l1 = sinter.linear %s1, %w norm %pre {norm_epsilon = 9.99999974E-6 : f32} : (tensor<2x64xbf16>, tensor<64x128xbf16>, tensor<64xf32>) -> tensor<2x128xbf16>
  %s2 = sinter.fusion_group(%y, %post, %h) : (tensor<2x64xbf16>, tensor<64xf32>, tensor<2x64xbf16>) -> tensor<2x64xbf16> {
  ^bb0(%a: tensor<2x64xbf16>, %b: tensor<64xf32>, %c: tensor<2x64xbf16>):
    %n = sinter.rms_normalization %a, %b {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x64xbf16>, tensor<64xf32>) -> tensor<2x64xf32>
    %r = sinter.cast %n : (tensor<2x64xf32>) -> tensor<2x64xbf16>
    %t = sinter.add %r, %c : (tensor<2x64xbf16>, tensor<2x64xbf16>) -> tensor<2x64xbf16>
    sinter.yield %t : tensor<2x64xbf16>
  }
  %early = sinter.add %s2, %h : (tensor<2x64xbf16>, tensor<2x64xbf16>) -> tensor<2x64xbf16>
  %l2 = sinter.linear %s2, %w norm %pre {norm_epsilon = 9.99999997E-7 : f32} : (tensor<2x64xbf16>, tensor<64x128xbf16>, tensor<64xf32>) -> tensor<2x128xbf16>
  %l3 = sinter.linear %s2, %w norm %preb {norm_epsilon = 9.99999997E-7 : f32} : (tensor<2x64xbf16>, tensor<64x128xbf16>, tensor<64xbf16>) -> tensor<2x128xbf16>
  %s4 = sinter.fusion_group(%big, %post, %big) : (tensor<32x64xbf16>, tensor<64xf32>, tensor<32x64xbf16>) -> tensor<32x64xbf16> {
  ^bb0(%a: tensor<32x64xbf16>, %b: tensor<64xf32>, %c: tensor<32x64xbf16>):
    %n = sinter.rms_normalization %a, %b {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<32x64xbf16>, tensor<64xf32>) -> tensor<32x64xf32>
    %r = sinter.cast %n : (tensor<32x64xf32>) -> tensor<32x64xbf16>
    %t = sinter.add %c, %r : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x64xbf16>
    sinter.yield %t : tensor<32x64xbf16>
  }
  %l4 = sinter.linear %s4, %w norm %pre {norm_epsilon = 9.99999997E-7 : f32} : (tensor<32x64xbf16>, tensor<64x128xbf16>, tensor<64xf32>) -> tensor<32x128xbf16>
  %s5 = sinter.fusion_group(%y, %post, %h) : (tensor<2x64xbf16>, tensor<64xf32>, tensor<2x64xbf16>) -> tensor<2x64xbf16> {
  ^bb0(%a: tensor<2x64xbf16>, %b: tensor<64xf32>, %c: tensor<2x64xbf16>):
    %n = sinter.rms_normalization %a, %b {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x64xbf16>, tensor<64xf32>) -> tensor<2x64xf32>
    %r = sinter.cast %n : (tensor<2x64xf32>) -> tensor<2x64xbf16>
    %t = sinter.mul %c, %r : (tensor<2x64xbf16>, tensor<2x64xbf16>) -> tensor<2x64xbf16>
    sinter.yield %t : tensor<2x64xbf16>
  }
  %l5 = sinter.linear %s5, %w norm %pre {norm_epsilon = 9.99999997E-7 : f32} : (tensor<2x64xbf16>, tensor<64x128xbf16>, tensor<64xf32>) -> tensor<2x128xbf16>
  return %l1, %early, %l2, %l3, %l4, %l5 : tensor<2x128xbf16>, tensor<2x64xbf16>, tensor<2x128xbf16>, tensor<2x128xbf16>, tensor<32x128xbf16>, tensor<2x128xbf16>
}

// -----

// A marked group whose linear the kernel does not take (32 rows: a library GEMM after an
// rms_norm launch) is lowered where it is first read: its own launch right before them, its
// result read by the later add too. (The pass would not mark it; the lowering must not rely
// on that.)
// CHECK-LABEL: func.func @marked_past_the_kernel
// LAUNCH-LABEL: func.func @marked_past_the_kernel
// LAUNCH: launch.generic(%arg0, %{{[^,]+}}, %arg1) -> (%[[S:[^)]+]])
// LAUNCH: sinter.rms_normalization
// LAUNCH: launch.kernel "rms_norm"(%[[S]],
// LAUNCH: launch.gemm
// LAUNCH: launch.generic(%[[S]], %arg1)
// LAUNCH-NOT: RESIDUAL_RMS_NORM_FP32_WEIGHT
func.func @marked_past_the_kernel(%y: tensor<32x64xbf16>, %h: tensor<32x64xbf16>) -> (tensor<32x128xbf16>, tensor<32x64xbf16>) {
  %post = sinter.constant dense<1.5> : tensor<64xf32>
  %pre = sinter.constant dense<0.75> : tensor<64xf32>
  %w = sinter.constant dense<0.5> : tensor<64x128xbf16>
  %s = sinter.fusion_group(%y, %post, %h) attributes {in_consumer_prologue} : (tensor<32x64xbf16>, tensor<64xf32>, tensor<32x64xbf16>) -> tensor<32x64xbf16> {
  ^bb0(%a: tensor<32x64xbf16>, %b: tensor<64xf32>, %c: tensor<32x64xbf16>):
    %n = sinter.rms_normalization %a, %b {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<32x64xbf16>, tensor<64xf32>) -> tensor<32x64xf32>
    %r = sinter.cast %n : (tensor<32x64xf32>) -> tensor<32x64xbf16>
    %t = sinter.add %c, %r : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x64xbf16>
    sinter.yield %t : tensor<32x64xbf16>
  }
  %l = sinter.linear %s, %w norm %pre {norm_epsilon = 9.99999997E-7 : f32} : (tensor<32x64xbf16>, tensor<64x128xbf16>, tensor<64xf32>) -> tensor<32x128xbf16>
  %e = sinter.add %s, %h : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x64xbf16>
  return %l, %e : tensor<32x128xbf16>, tensor<32x64xbf16>
}
