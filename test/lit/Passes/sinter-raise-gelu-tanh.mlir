// RUN: sinter-opt %s -split-input-file --sinter-raise-gelu-tanh | FileCheck %s

// torch.onnx (dynamo, onnxscript's aten_gelu approximate="tanh") in bf16, as in Gemma's MLP:
// x * (0.5 * (1 + tanh(c * (x + 0.044715 * x^3)))), the constants rounded to bf16.
// CHECK-LABEL: func.func @dynamo_bf16
// CHECK: %[[G:.+]] = sinter.unary "gelu_tanh" %arg0 {{.*}}: (tensor<2x8xbf16>) -> tensor<2x8xbf16>
// CHECK-NEXT: %[[Y:.+]] = sinter.mul %[[G]], %arg1
// CHECK-NEXT: return %[[Y]]
func.func @dynamo_bf16(%x: tensor<2x8xbf16>, %u: tensor<2x8xbf16>) -> tensor<2x8xbf16> {
  %three = sinter.constant dense<3.0> : tensor<bf16>
  %coef = sinter.constant dense<0.044677734> : tensor<bf16>
  %c = sinter.constant dense<0.796875> : tensor<bf16>
  %one = sinter.constant dense<1.0> : tensor<bf16>
  %half = sinter.constant dense<0.5> : tensor<bf16>
  %cube = sinter.pow %x, %three : (tensor<2x8xbf16>, tensor<bf16>) -> tensor<2x8xbf16>
  %a = sinter.mul %coef, %cube : (tensor<bf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %b = sinter.add %x, %a : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %arg = sinter.mul %c, %b : (tensor<bf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %t = sinter.unary "tanh" %arg : (tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %d = sinter.add %t, %one : (tensor<2x8xbf16>, tensor<bf16>) -> tensor<2x8xbf16>
  %e = sinter.mul %half, %d : (tensor<bf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %gelu = sinter.mul %x, %e : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %y = sinter.mul %gelu, %u : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  return %y : tensor<2x8xbf16>
}

// -----

// HF's NewGELUActivation as the TorchScript exporter writes it in f32: (0.5 * x) * (1 + tanh(
// sqrt(2/pi) * (x + 0.044715 * (x * x * x)))), with 1 + tanh commuted.
// CHECK-LABEL: func.func @torchscript_f32
// CHECK: %[[G:.+]] = sinter.unary "gelu_tanh" %arg0 {{.*}}: (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %[[G]]
func.func @torchscript_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %coef = sinter.constant dense<0.044715> : tensor<f32>
  %c = sinter.constant dense<0.797884583> : tensor<f32>
  %one = sinter.constant dense<1.0> : tensor<f32>
  %half = sinter.constant dense<0.5> : tensor<f32>
  %sq = sinter.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %cube = sinter.mul %sq, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = sinter.mul %cube, %coef : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = sinter.add %a, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %arg = sinter.mul %b, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %t = sinter.unary "tanh" %arg : (tensor<4xf32>) -> tensor<4xf32>
  %d = sinter.add %one, %t : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %hx = sinter.mul %half, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %y = sinter.mul %hx, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Negative: the erf GeLU's constant (0.5 and 1 + tanh of x / sqrt(2)) is not the tanh form;
// a cubic coefficient off by 10 %; tanh of another tensor than the outer factor.
// CHECK-LABEL: func.func @not_gelu_tanh
// CHECK-NOT: "gelu_tanh"
// CHECK: return
func.func @not_gelu_tanh(%x: tensor<4xf32>, %z: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %three = sinter.constant dense<3.0> : tensor<f32>
  %coef = sinter.constant dense<0.044715> : tensor<f32>
  %bad_coef = sinter.constant dense<0.04> : tensor<f32>
  %c = sinter.constant dense<0.797884583> : tensor<f32>
  %rsqrt2 = sinter.constant dense<0.707106769> : tensor<f32>
  %one = sinter.constant dense<1.0> : tensor<f32>
  %half = sinter.constant dense<0.5> : tensor<f32>
  %s0 = sinter.mul %rsqrt2, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %t0 = sinter.unary "tanh" %s0 : (tensor<4xf32>) -> tensor<4xf32>
  %d0 = sinter.add %t0, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e0 = sinter.mul %half, %d0 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %y0 = sinter.mul %x, %e0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %cube = sinter.pow %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %a1 = sinter.mul %bad_coef, %cube : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %b1 = sinter.add %x, %a1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s1 = sinter.mul %c, %b1 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %t1 = sinter.unary "tanh" %s1 : (tensor<4xf32>) -> tensor<4xf32>
  %d1 = sinter.add %t1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e1 = sinter.mul %half, %d1 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %y1 = sinter.mul %x, %e1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a2 = sinter.mul %coef, %cube : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %b2 = sinter.add %x, %a2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s2 = sinter.mul %c, %b2 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %t2 = sinter.unary "tanh" %s2 : (tensor<4xf32>) -> tensor<4xf32>
  %d2 = sinter.add %t2, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e2 = sinter.mul %half, %d2 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %y2 = sinter.mul %z, %e2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y0, %y1, %y2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative, and quick: a chain of squares is a product of 2^k factors; the walk stops after
// a few terms instead of visiting them all.
// CHECK-LABEL: func.func @squares
// CHECK-NOT: "gelu_tanh"
// CHECK: return
func.func @squares(%x: tensor<4xf32>) -> tensor<4xf32> {
  %x1 = sinter.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x2 = sinter.mul %x1, %x1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x3 = sinter.mul %x2, %x2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x4 = sinter.mul %x3, %x3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x5 = sinter.mul %x4, %x4 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x6 = sinter.mul %x5, %x5 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x7 = sinter.mul %x6, %x6 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x8 = sinter.mul %x7, %x7 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x9 = sinter.mul %x8, %x8 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x10 = sinter.mul %x9, %x9 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x11 = sinter.mul %x10, %x10 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x12 = sinter.mul %x11, %x11 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x13 = sinter.mul %x12, %x12 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x14 = sinter.mul %x13, %x13 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x15 = sinter.mul %x14, %x14 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x16 = sinter.mul %x15, %x15 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x17 = sinter.mul %x16, %x16 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x18 = sinter.mul %x17, %x17 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x19 = sinter.mul %x18, %x18 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x20 = sinter.mul %x19, %x19 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x21 = sinter.mul %x20, %x20 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x22 = sinter.mul %x21, %x21 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x23 = sinter.mul %x22, %x22 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x24 = sinter.mul %x23, %x23 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x25 = sinter.mul %x24, %x24 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x26 = sinter.mul %x25, %x25 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x27 = sinter.mul %x26, %x26 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x28 = sinter.mul %x27, %x27 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x29 = sinter.mul %x28, %x28 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x30 = sinter.mul %x29, %x29 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x31 = sinter.mul %x30, %x30 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x32 = sinter.mul %x31, %x31 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %x32 : tensor<4xf32>
}

// -----

// The exact GeLU as torch.onnx (dynamo) writes GPT-NeoX's in bf16: x * (0.5 * (1 + erf(x /
// sqrt(2)))), and as x * 0.7071 inside the erf in f32: both become unary "gelu".
// CHECK-LABEL: func.func @gelu_erf
// CHECK: %[[G:.+]] = sinter.unary "gelu" %arg0 {{.*}}: (tensor<2x8xbf16>) -> tensor<2x8xbf16>
// CHECK: %[[H:.+]] = sinter.unary "gelu" %arg1 {{.*}}: (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %[[G]], %[[H]]
func.func @gelu_erf(%x: tensor<2x8xbf16>, %z: tensor<2x8xf32>) -> (tensor<2x8xbf16>, tensor<2x8xf32>) {
  %sqrt2 = sinter.constant dense<1.4140625> : tensor<bf16>
  %one = sinter.constant dense<1.0> : tensor<bf16>
  %half = sinter.constant dense<0.5> : tensor<bf16>
  %d = sinter.div %x, %sqrt2 : (tensor<2x8xbf16>, tensor<bf16>) -> tensor<2x8xbf16>
  %e = sinter.unary "erf" %d : (tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %a = sinter.add %e, %one : (tensor<2x8xbf16>, tensor<bf16>) -> tensor<2x8xbf16>
  %m = sinter.mul %a, %half : (tensor<2x8xbf16>, tensor<bf16>) -> tensor<2x8xbf16>
  %g = sinter.mul %x, %m : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %r = sinter.constant dense<0.70710678> : tensor<f32>
  %onef = sinter.constant dense<1.0> : tensor<f32>
  %halff = sinter.constant dense<0.5> : tensor<f32>
  %zs = sinter.mul %z, %r : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %ze = sinter.unary "erf" %zs : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %za = sinter.add %onef, %ze : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %zh = sinter.mul %halff, %z : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h = sinter.mul %zh, %za : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g, %h : tensor<2x8xbf16>, tensor<2x8xf32>
}

// -----

// Negative: erf of x / 2 (not sqrt(2)), and erf of another tensor than the one multiplied.
// CHECK-LABEL: func.func @not_gelu_erf
// CHECK-NOT: sinter.unary "gelu"
// CHECK: return
func.func @not_gelu_erf(%x: tensor<2x8xf32>, %w: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %two = sinter.constant dense<2.0> : tensor<f32>
  %r = sinter.constant dense<0.70710678> : tensor<f32>
  %one = sinter.constant dense<1.0> : tensor<f32>
  %half = sinter.constant dense<0.5> : tensor<f32>
  %d = sinter.div %x, %two : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = sinter.unary "erf" %d : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = sinter.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = sinter.mul %a, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %g = sinter.mul %x, %m : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %ws = sinter.mul %w, %r : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %we = sinter.unary "erf" %ws : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %wa = sinter.add %we, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %wm = sinter.mul %wa, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %h = sinter.mul %x, %wm : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g, %h : tensor<2x8xf32>, tensor<2x8xf32>
}
