// RUN: sinter-opt %s -split-input-file --sinter-lower-to-launch -verify-diagnostics | FileCheck %s

// The sampler is one sample_tokens launch: [batch, rows, vocab, ids] and the logits type as
// parameters; its parameters and seen-token bits are state regions both entries share (the
// runtime finds ".sampling" by name); next_token is written into its output slot.
// CHECK-LABEL: func.func @prefill
// CHECK-DAG: launch.state ".sampling" {offset = [[P:[0-9]+]] : i64} : memref<10xi32>
// CHECK-DAG: launch.state ".sampling.seen" {offset = [[S:[0-9]+]] : i64} : memref<2x3xi32>
// CHECK: launch.kernel "sample_tokens"
// CHECK-SAME: params = [2, 5, 70, 5, "__nv_bfloat16"]
// CHECK-LABEL: func.func @decode
// CHECK-DAG: launch.state ".sampling" {offset = [[P]] : i64} : memref<10xi32>
// CHECK-DAG: launch.state ".sampling.seen" {offset = [[S]] : i64} : memref<2x3xi32>
// CHECK: launch.kernel "sample_tokens"
// CHECK-SAME: params = [2, 1, 70, 1, "float"]
func.func @prefill(%ids: tensor<2x5xi64> {sinter.name = "input_ids"}, %x: tensor<2x5x70xbf16> {sinter.name = "h"}) -> (tensor<2x5x70xbf16> {sinter.name = "logits"}, tensor<2x1xi64> {sinter.name = "next_token"}) {
  %next = sinter.sample_tokens %x, %ids : (tensor<2x5x70xbf16>, tensor<2x5xi64>) -> tensor<2x1xi64>
  return %x, %next : tensor<2x5x70xbf16>, tensor<2x1xi64>
}
func.func @decode(%ids: tensor<2x1xi64> {sinter.name = "input_ids"}, %x: tensor<2x1x70xf32> {sinter.name = "h"}) -> (tensor<2x1x70xf32> {sinter.name = "logits"}, tensor<2x1xi64> {sinter.name = "next_token"}) {
  %next = sinter.sample_tokens %x, %ids : (tensor<2x1x70xf32>, tensor<2x1xi64>) -> tensor<2x1xi64>
  return %x, %next : tensor<2x1x70xf32>, tensor<2x1xi64>
}

// -----

// Negative: the op's verifier.
func.func @bad_batch(%ids: tensor<3x1xi64>, %x: tensor<2x1x70xf32>) -> tensor<2x1xi64> {
  // expected-error @+1 {{input_ids has batch 3, logits 2}}
  %next = sinter.sample_tokens %x, %ids : (tensor<2x1x70xf32>, tensor<3x1xi64>) -> tensor<2x1xi64>
  return %next : tensor<2x1xi64>
}

// -----

// Negative: a vocabulary of one token has nothing to choose from.
func.func @one_token(%ids: tensor<1x1xi64>, %x: tensor<1x1x1xf32>) -> tensor<1x1xi64> {
  // expected-error @+1 {{no sample_tokens configuration for logits 'memref<1x1x1xf32>'}}
  %next = sinter.sample_tokens %x, %ids : (tensor<1x1x1xf32>, tensor<1x1xi64>) -> tensor<1x1xi64>
  return %next : tensor<1x1xi64>
}

// -----

// Negative: each block of the cluster holds an eighth of the row in shared memory; a
// vocabulary whose slice does not fit is refused at compile time.
func.func @huge_vocabulary(%ids: tensor<1x1xi64>, %x: tensor<1x1x600000xf32>) -> tensor<1x1xi64> {
  // expected-error @+1 {{no sample_tokens configuration for logits 'memref<1x1x600000xf32>'}}
  %next = sinter.sample_tokens %x, %ids : (tensor<1x1x600000xf32>, tensor<1x1xi64>) -> tensor<1x1xi64>
  return %next : tensor<1x1xi64>
}
