// RUN: sinter-opt %s -split-input-file -verify-diagnostics --sinter-append-sampler | FileCheck %s

// An entry with logits and input_ids gets a next_token result from the sampler; an entry
// without them (a helper function) is left alone.
// CHECK-LABEL: func.func @decode
// CHECK-SAME: -> (tensor<2x1x32xbf16> {sinter.name = "logits"}, tensor<2x1xi64> {sinter.name = "next_token"})
// CHECK: %[[NEXT:.+]] = sinter.sample_tokens %{{.+}}, %arg0 : (tensor<2x1x32xbf16>, tensor<2x1xi64>) -> tensor<2x1xi64>
// CHECK: return %{{.+}}, %[[NEXT]]
// CHECK-LABEL: func.func @other
// CHECK-SAME: -> (tensor<2xf32> {sinter.name = "y"})
// CHECK-NOT: sample_tokens
func.func @decode(%ids: tensor<2x1xi64> {sinter.name = "input_ids"}, %x: tensor<2x1x32xbf16> {sinter.name = "h"}) -> (tensor<2x1x32xbf16> {sinter.name = "logits"}) {
  %y = sinter.add %x, %x : (tensor<2x1x32xbf16>, tensor<2x1x32xbf16>) -> tensor<2x1x32xbf16>
  return %y : tensor<2x1x32xbf16>
}
func.func @other(%x: tensor<2xf32> {sinter.name = "x"}) -> (tensor<2xf32> {sinter.name = "y"}) {
  return %x : tensor<2xf32>
}

// -----

// No entry has both: the flag has nothing to do.
// expected-error @+1 {{--sample needs an entry with a 'logits' output [batch, seq, vocab] and an 'input_ids' input [batch, seq] of int64 token ids}}
module {
  func.func @mlp(%x: tensor<2x4xf32> {sinter.name = "x"}) -> (tensor<2x4xf32> {sinter.name = "logits"}) {
    return %x : tensor<2x4xf32>
  }
}

// -----

// expected-error @+1 {{--sample adds a 'next_token' output, and entry 'decode' already has one}}
func.func @decode(%ids: tensor<1x1xi64> {sinter.name = "input_ids"}, %x: tensor<1x1x8xf32> {sinter.name = "h"}) -> (tensor<1x1x8xf32> {sinter.name = "logits"}, tensor<1x1xi64> {sinter.name = "next_token"}) {
  return %x, %ids : tensor<1x1x8xf32>, tensor<1x1xi64>
}

// -----

// expected-error @+1 {{--sample: entry 'decode' has input_ids 'tensor<1x1xi32>', not int64 [1, seq]}}
func.func @decode(%ids: tensor<1x1xi32> {sinter.name = "input_ids"}, %x: tensor<1x1x8xf32> {sinter.name = "h"}) -> (tensor<1x1x8xf32> {sinter.name = "logits"}) {
  return %x : tensor<1x1x8xf32>
}

// -----

// expected-error @+1 {{--sample: entry 'decode' has logits 'tensor<1x8xf32>', not float [batch, seq, vocab]}}
func.func @decode(%ids: tensor<1x1xi64> {sinter.name = "input_ids"}, %x: tensor<1x8xf32> {sinter.name = "h"}) -> (tensor<1x8xf32> {sinter.name = "logits"}) {
  return %x : tensor<1x8xf32>
}
