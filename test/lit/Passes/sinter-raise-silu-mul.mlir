// RUN: sinter-opt %s -split-input-file --sinter-raise-silu-mul | FileCheck %s

// The Llama MLP: act_fn(gate_proj(x)) * up_proj(x) with act_fn = SiLU.
// CHECK-LABEL: func.func @silu_mul
// CHECK: %[[Y:.+]] = sinter.silu_mul %arg0, %arg1 : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @silu_mul(%g: tensor<2x8xbf16>, %u: tensor<2x8xbf16>) -> tensor<2x8xbf16> {
  %s = sinter.sigmoid %g : (tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %silu = sinter.mul %g, %s : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %y = sinter.mul %silu, %u : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  return %y : tensor<2x8xbf16>
}

// -----

// Both products commuted.
// CHECK-LABEL: func.func @commuted
// CHECK: %[[Y:.+]] = sinter.silu_mul %arg0, %arg1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @commuted(%g: tensor<3xf32>, %u: tensor<3xf32>) -> tensor<3xf32> {
  %s = sinter.sigmoid %g : (tensor<3xf32>) -> tensor<3xf32>
  %silu = sinter.mul %s, %g : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = sinter.mul %u, %silu : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Negative: sigmoid of another tensor is not SiLU, and a broadcast up operand does not fit
// the elementwise op.
// CHECK-LABEL: func.func @not_silu_mul
// CHECK-NOT: sinter.silu_mul
// CHECK: sinter.mul
func.func @not_silu_mul(%g: tensor<2x3xf32>, %h: tensor<2x3xf32>, %u: tensor<1x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %sh = sinter.sigmoid %h : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %a = sinter.mul %g, %sh : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %y0 = sinter.mul %a, %g : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %sg = sinter.sigmoid %g : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %silu = sinter.mul %g, %sg : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %y1 = sinter.mul %silu, %u : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y0, %y1 : tensor<2x3xf32>, tensor<2x3xf32>
}
