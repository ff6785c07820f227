// RUN: sinter-opt %s -split-input-file --sinter-fuse-linear-activation | FileCheck %s

// GPT-2's MLP: c_fc (a biased bf16 linear) then gelu_new, raised to unary "gelu_tanh".
// CHECK-LABEL: func.func @gelu_after_linear
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{[^ ]+}} bias %{{[^ ]+}} {activation = "gelu_tanh"} : (tensor<1x6x64xbf16>, tensor<64x256xbf16>, tensor<256xbf16>) -> tensor<1x6x256xbf16>
// CHECK-NOT: sinter.unary
// CHECK: return %[[Y]]
func.func @gelu_after_linear(%x: tensor<1x6x64xbf16>) -> tensor<1x6x256xbf16> {
  %w = sinter.constant dense<0.5> : tensor<64x256xbf16>
  %b = sinter.constant dense<0.25> : tensor<256xbf16>
  %h = sinter.linear %x, %w bias %b : (tensor<1x6x64xbf16>, tensor<64x256xbf16>, tensor<256xbf16>) -> tensor<1x6x256xbf16>
  %g = sinter.unary "gelu_tanh" %h : (tensor<1x6x256xbf16>) -> tensor<1x6x256xbf16>
  return %g : tensor<1x6x256xbf16>
}

// -----

// GPT-NeoX's MLP: dense_h_to_4h then the exact GeLU (unary "gelu"): the same epilogue fusion.
// CHECK-LABEL: func.func @exact_gelu_after_linear
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %{{[^ ]+}} bias %{{[^ ]+}} {activation = "gelu"}
// CHECK-NOT: sinter.unary
// CHECK: return %[[Y]]
func.func @exact_gelu_after_linear(%x: tensor<1x6x64xbf16>) -> tensor<1x6x256xbf16> {
  %w = sinter.constant dense<0.5> : tensor<64x256xbf16>
  %b = sinter.constant dense<0.25> : tensor<256xbf16>
  %h = sinter.linear %x, %w bias %b : (tensor<1x6x64xbf16>, tensor<64x256xbf16>, tensor<256xbf16>) -> tensor<1x6x256xbf16>
  %g = sinter.unary "gelu" %h : (tensor<1x6x256xbf16>) -> tensor<1x6x256xbf16>
  return %g : tensor<1x6x256xbf16>
}

// -----

// Negative: an f32 linear (the library GEMM's, no epilogue), a linear with another user, a
// linear adding a residual, and another function stay as they are.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: activation
// CHECK-COUNT-4: sinter.unary
func.func @not_fused(%x: tensor<2x64xf32>, %y: tensor<2x64xbf16>, %r: tensor<2x64xbf16>)
    -> (tensor<2x64xf32>, tensor<2x64xbf16>, tensor<2x64xbf16>, tensor<2x64xbf16>, tensor<2x64xbf16>) {
  %w = sinter.constant dense<0.5> : tensor<64x64xf32>
  %wb = sinter.constant dense<0.5> : tensor<64x64xbf16>
  %a = sinter.linear %x, %w : (tensor<2x64xf32>, tensor<64x64xf32>) -> tensor<2x64xf32>
  %ga = sinter.unary "gelu_tanh" %a : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %b = sinter.linear %y, %wb : (tensor<2x64xbf16>, tensor<64x64xbf16>) -> tensor<2x64xbf16>
  %gb = sinter.unary "gelu_tanh" %b : (tensor<2x64xbf16>) -> tensor<2x64xbf16>
  %c = sinter.linear %y, %wb residual %r : (tensor<2x64xbf16>, tensor<64x64xbf16>, tensor<2x64xbf16>) -> tensor<2x64xbf16>
  %gc = sinter.unary "gelu_tanh" %c : (tensor<2x64xbf16>) -> tensor<2x64xbf16>
  %d = sinter.linear %r, %wb : (tensor<2x64xbf16>, tensor<64x64xbf16>) -> tensor<2x64xbf16>
  %gd = sinter.unary "tanh" %d : (tensor<2x64xbf16>) -> tensor<2x64xbf16>
  return %ga, %gb, %b, %gc, %gd : tensor<2x64xf32>, tensor<2x64xbf16>, tensor<2x64xbf16>, tensor<2x64xbf16>, tensor<2x64xbf16>
}
