// RUN: sinter-opt %s -split-input-file -verify-diagnostics --sinter-keep-last-logits | FileCheck %s

// The LM head (a linear with a norm prologue) reads the last position of each sequence; the
// entry's logits become [batch, 1, vocab]. A one-position entry (decode) is left alone.
// CHECK-LABEL: func.func @prefill
// CHECK-SAME: -> (tensor<2x1x32xbf16> {sinter.name = "logits"})
// CHECK: %[[LAST:.+]] = sinter.slice %arg0 {ends = array<i64: 2, 5, 8>, starts = array<i64: 0, 4, 0>, steps = array<i64: 1, 1, 1>} : (tensor<2x5x8xbf16>) -> tensor<2x1x8xbf16>
// CHECK: %[[LOGITS:.+]] = sinter.linear %[[LAST]], %{{.+}} norm %{{.+}} {norm_epsilon = {{.+}}} : (tensor<2x1x8xbf16>, tensor<8x32xbf16>, tensor<8xbf16>) -> tensor<2x1x32xbf16>
// CHECK: return %[[LOGITS]] : tensor<2x1x32xbf16>
// CHECK-LABEL: func.func @decode
// CHECK-NOT: sinter.slice
// CHECK: -> tensor<2x1x32xbf16>
func.func @prefill(%h: tensor<2x5x8xbf16> {sinter.name = "h"}) -> (tensor<2x5x32xbf16> {sinter.name = "logits"}) {
  %w = sinter.constant dense<1.0> : tensor<8x32xbf16>
  %n = sinter.constant dense<1.0> : tensor<8xbf16>
  %y = sinter.linear %h, %w norm %n {norm_epsilon = 1.0e-5 : f32} : (tensor<2x5x8xbf16>, tensor<8x32xbf16>, tensor<8xbf16>) -> tensor<2x5x32xbf16>
  return %y : tensor<2x5x32xbf16>
}
func.func @decode(%h: tensor<2x1x8xbf16> {sinter.name = "h"}) -> (tensor<2x1x32xbf16> {sinter.name = "logits"}) {
  %w = sinter.constant dense<1.0> : tensor<8x32xbf16>
  %y = sinter.linear %h, %w : (tensor<2x1x8xbf16>, tensor<8x32xbf16>) -> tensor<2x1x32xbf16>
  return %y : tensor<2x1x32xbf16>
}

// -----

// A soft-cap after the LM head (Gemma 2: tanh(x / c) * c) shrinks with it; the residual of the
// linear is sliced too. Other results keep their shapes.
// CHECK-LABEL: func.func @softcap
// CHECK-SAME: -> (tensor<1x4x8xf32> {sinter.name = "hidden"}, tensor<1x1x16xf32> {sinter.name = "logits"})
// CHECK-DAG: sinter.slice %arg0 {{.+}} -> tensor<1x1x8xf32>
// CHECK-DAG: sinter.slice %arg1 {{.+}} -> tensor<1x1x16xf32>
// CHECK: sinter.linear {{.+}} -> tensor<1x1x16xf32>
// CHECK: sinter.div {{.+}} -> tensor<1x1x16xf32>
// CHECK: sinter.unary "tanh" {{.+}} -> tensor<1x1x16xf32>
// CHECK: sinter.mul {{.+}} -> tensor<1x1x16xf32>
func.func @softcap(%h: tensor<1x4x8xf32> {sinter.name = "h"}, %r: tensor<1x4x16xf32> {sinter.name = "r"}) -> (tensor<1x4x8xf32> {sinter.name = "hidden"}, tensor<1x4x16xf32> {sinter.name = "logits"}) {
  %w = sinter.constant dense<1.0> : tensor<8x16xf32>
  %c = sinter.constant dense<30.0> : tensor<f32>
  %y = sinter.linear %h, %w residual %r : (tensor<1x4x8xf32>, tensor<8x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %d = sinter.div %y, %c : (tensor<1x4x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
  %t = sinter.unary "tanh" %d : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %m = sinter.mul %t, %c : (tensor<1x4x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
  return %h, %m : tensor<1x4x8xf32>, tensor<1x4x16xf32>
}

// -----

// expected-error @+1 {{--last-logits needs an entry with a 'logits' output [batch, seq, vocab]}}
module {
  func.func @mlp(%x: tensor<2x4xf32> {sinter.name = "x"}) -> (tensor<2x4xf32> {sinter.name = "y"}) {
    return %x : tensor<2x4xf32>
  }
}

// -----

// expected-error @+1 {{--last-logits: entry 'lm' does not compute its logits with a final linear over [batch, seq, hidden] (and elementwise ops after it)}}
func.func @lm(%x: tensor<1x3x8xf32> {sinter.name = "x"}) -> (tensor<1x3x8xf32> {sinter.name = "logits"}) {
  %y = sinter.add %x, %x : (tensor<1x3x8xf32>, tensor<1x3x8xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// The logits also feed another output: the linear cannot shrink.
// expected-error @+1 {{--last-logits: entry 'lm' does not compute its logits with a final linear}}
func.func @lm(%h: tensor<1x3x8xf32> {sinter.name = "h"}) -> (tensor<1x3x16xf32> {sinter.name = "logits"}, tensor<1x3x16xf32> {sinter.name = "copy"}) {
  %w = sinter.constant dense<1.0> : tensor<8x16xf32>
  %y = sinter.linear %h, %w : (tensor<1x3x8xf32>, tensor<8x16xf32>) -> tensor<1x3x16xf32>
  return %y, %y : tensor<1x3x16xf32>, tensor<1x3x16xf32>
}

// -----

// expected-error @+1 {{--last-logits: entry 'lm' has logits 'tensor<3x16xf32>', not float [batch, seq, vocab]}}
func.func @lm(%h: tensor<3x8xf32> {sinter.name = "h"}) -> (tensor<3x16xf32> {sinter.name = "logits"}) {
  %w = sinter.constant dense<1.0> : tensor<8x16xf32>
  %y = sinter.linear %h, %w : (tensor<3x8xf32>, tensor<8x16xf32>) -> tensor<3x16xf32>
  return %y : tensor<3x16xf32>
}
