// RUN: sinter-opt %s -split-input-file --sinter-merge-parallel-linears | FileCheck %s
// RUN: sinter-opt %s -split-input-file --sinter-merge-parallel-linears -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Q, K and V read one input: one linear over the concatenated columns, then slices.
// CHECK-LABEL: func.func @qkv
// CHECK: %[[W:.+]] = sinter.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 3.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00, 3.000000e+00]]> : tensor<2x4xbf16>
// CHECK: %[[L:.+]] = sinter.linear %arg0, %[[W]] : (tensor<3x2xbf16>, tensor<2x4xbf16>) -> tensor<3x4xbf16>
// CHECK: %[[Q:.+]] = sinter.slice %[[L]] {ends = array<i64: 3, 1>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>}
// CHECK: %[[K:.+]] = sinter.slice %[[L]] {ends = array<i64: 3, 2>, starts = array<i64: 0, 1>, steps = array<i64: 1, 1>}
// CHECK: %[[V:.+]] = sinter.slice %[[L]] {ends = array<i64: 3, 4>, starts = array<i64: 0, 2>, steps = array<i64: 1, 1>}
// CHECK: return %[[Q]], %[[K]], %[[V]]
func.func @qkv(%x: tensor<3x2xbf16>) -> (tensor<3x1xbf16>, tensor<3x1xbf16>, tensor<3x2xbf16>) {
  %wq = sinter.constant dense<[[1.0], [1.0]]> : tensor<2x1xbf16>
  %wk = sinter.constant dense<[[2.0], [2.0]]> : tensor<2x1xbf16>
  %wv = sinter.constant dense<[[3.0, 3.0], [3.0, 3.0]]> : tensor<2x2xbf16>
  %q = sinter.linear %x, %wq : (tensor<3x2xbf16>, tensor<2x1xbf16>) -> tensor<3x1xbf16>
  %k = sinter.linear %x, %wk : (tensor<3x2xbf16>, tensor<2x1xbf16>) -> tensor<3x1xbf16>
  %v = sinter.linear %x, %wv : (tensor<3x2xbf16>, tensor<2x2xbf16>) -> tensor<3x2xbf16>
  return %q, %k, %v : tensor<3x1xbf16>, tensor<3x1xbf16>, tensor<3x2xbf16>
}

// -----

// Constant biases (Qwen2's q, k and v projections) are concatenated like the weights; a
// sibling without one adds zeros.
// CHECK-LABEL: func.func @biases
// CHECK: %[[B:.+]] = sinter.constant dense<[1.000000e+00, 2.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<4xf32>
// CHECK: sinter.linear %arg0, %{{.+}} bias %[[B]] : (tensor<3x2xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
// CHECK-COUNT-2: sinter.slice
func.func @biases(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %w = sinter.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = sinter.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %a = sinter.linear %x, %w bias %b : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %c = sinter.linear %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %a, %c : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// Negative: a sibling with a residual, or with a bias computed at run time, keeps its own
// launch; one left alone is not merged with nothing.
// CHECK-LABEL: func.func @epilogues
// CHECK-COUNT-3: sinter.linear
// CHECK-NOT: sinter.slice
func.func @epilogues(%x: tensor<3x2xf32>, %r: tensor<3x2xf32>, %rb: tensor<2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %w = sinter.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %a = sinter.linear %x, %w residual %r : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %b = sinter.linear %x, %w bias %rb : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %c = sinter.linear %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %a, %b, %c : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// Negative: linears reading different inputs stay apart.
// CHECK-LABEL: func.func @different_inputs
// CHECK-COUNT-2: sinter.linear
// CHECK-NOT: sinter.slice
func.func @different_inputs(%x: tensor<3x2xf32>, %y: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %w = sinter.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %a = sinter.linear %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c = sinter.linear %y, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %a, %c : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// The merged weight is located at its parts' constants (what `sinter inspect` lists as its
// sources); the merged linear at the linears.
// CHECK-LABEL: func.func @weight_sources
// LOC-LABEL: func.func @weight_sources
// LOC: sinter.constant dense<{{\[}}[1.000000e+00, 2.000000e+00]{{.*}} loc(#[[WLOC:loc[0-9]+]])
// LOC: sinter.linear {{.*}} loc(#[[LLOC:loc[0-9]+]])
// LOC: #[[WQ:loc[0-9]+]] = loc("wq")
// LOC: #[[WK:loc[0-9]+]] = loc("wk")
// LOC: #[[Q:loc[0-9]+]] = loc("q")
// LOC: #[[K:loc[0-9]+]] = loc("k")
// LOC: #[[WLOC]] = loc(fused[#[[WQ]], #[[WK]]])
// LOC: #[[LLOC]] = loc(fused[#[[Q]], #[[K]]])
func.func @weight_sources(%x: tensor<3x2xbf16>) -> (tensor<3x1xbf16>, tensor<3x1xbf16>) {
  %wq = sinter.constant dense<[[1.0], [1.0]]> : tensor<2x1xbf16> loc("wq")
  %wk = sinter.constant dense<[[2.0], [2.0]]> : tensor<2x1xbf16> loc("wk")
  %q = sinter.linear %x, %wq : (tensor<3x2xbf16>, tensor<2x1xbf16>) -> tensor<3x1xbf16> loc("q")
  %k = sinter.linear %x, %wk : (tensor<3x2xbf16>, tensor<2x1xbf16>) -> tensor<3x1xbf16> loc("k")
  return %q, %k : tensor<3x1xbf16>, tensor<3x1xbf16>
}

// -----

// An unmerged LoRA branch: the down projection is merged with its base linear, and its result
// (now a slice) is the input of the up projections, which merge in turn. This graph crashed the
// pass (it visited the erased down projection's result) under `sinter compile --no-merge-lora`.
// CHECK-LABEL: func.func @lora_chain
// CHECK: %[[XW:.+]] = sinter.linear %arg0, %{{.+}} : (tensor<3x2xbf16>, tensor<2x3xbf16>) -> tensor<3x3xbf16>
// CHECK: %[[Q:.+]] = sinter.slice %[[XW]] {ends = array<i64: 3, 2>, starts = array<i64: 0, 0>
// CHECK: %[[DOWN:.+]] = sinter.slice %[[XW]] {ends = array<i64: 3, 3>, starts = array<i64: 0, 2>
// CHECK: %[[UP:.+]] = sinter.linear %[[DOWN]], %{{.+}} : (tensor<3x1xbf16>, tensor<1x4xbf16>) -> tensor<3x4xbf16>
// CHECK: %[[B:.+]] = sinter.slice %[[UP]] {ends = array<i64: 3, 2>, starts = array<i64: 0, 0>
// CHECK: %[[C:.+]] = sinter.slice %[[UP]] {ends = array<i64: 3, 4>, starts = array<i64: 0, 2>
// CHECK: %[[Y:.+]] = sinter.add %[[Q]], %[[B]]
// CHECK: return %[[Y]], %[[C]]
func.func @lora_chain(%x: tensor<3x2xbf16>) -> (tensor<3x2xbf16>, tensor<3x2xbf16>) {
  %wq = sinter.constant dense<[[1.0, 0.5], [1.0, 0.5]]> : tensor<2x2xbf16>
  %wa = sinter.constant dense<[[2.0], [2.0]]> : tensor<2x1xbf16>
  %wb = sinter.constant dense<[[3.0, 1.0]]> : tensor<1x2xbf16>
  %wc = sinter.constant dense<[[4.0, 1.0]]> : tensor<1x2xbf16>
  %q = sinter.linear %x, %wq : (tensor<3x2xbf16>, tensor<2x2xbf16>) -> tensor<3x2xbf16>
  %a = sinter.linear %x, %wa : (tensor<3x2xbf16>, tensor<2x1xbf16>) -> tensor<3x1xbf16>
  %b = sinter.linear %a, %wb : (tensor<3x1xbf16>, tensor<1x2xbf16>) -> tensor<3x2xbf16>
  %c = sinter.linear %a, %wc : (tensor<3x1xbf16>, tensor<1x2xbf16>) -> tensor<3x2xbf16>
  %y = sinter.add %q, %b : (tensor<3x2xbf16>, tensor<3x2xbf16>) -> tensor<3x2xbf16>
  return %y, %c : tensor<3x2xbf16>, tensor<3x2xbf16>
}

// -----

// A parallel block (Phi's): q, k and v and the MLP's fc1 read one normalized input. fc1 feeds
// a GeLU, which its own launch applies as an epilogue: q, k and v merge, fc1 keeps its own
// linear. A GeGLU gate (the GeLU times a sibling, Gemma's) still merges with its up.
// CHECK-LABEL: func.func @parallel_block
// CHECK: %[[QKV:.+]] = sinter.linear %arg0, %{{.+}} : (tensor<1x6x64xbf16>, tensor<64x48xbf16>) -> tensor<1x6x48xbf16>
// CHECK: %[[FC:.+]] = sinter.linear %arg0, %{{.+}} : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
// CHECK: sinter.unary "gelu" %[[FC]]
// CHECK: %[[GU:.+]] = sinter.linear %arg1, %{{.+}} : (tensor<1x6x64xbf16>, tensor<64x256xbf16>) -> tensor<1x6x256xbf16>
func.func @parallel_block(%x: tensor<1x6x64xbf16>, %y: tensor<1x6x64xbf16>) -> (tensor<1x6x16xbf16>, tensor<1x6x16xbf16>, tensor<1x6x16xbf16>, tensor<1x6x128xbf16>, tensor<1x6x128xbf16>) {
  %wq = sinter.constant dense<0.5> : tensor<64x16xbf16>
  %wk = sinter.constant dense<0.25> : tensor<64x16xbf16>
  %wv = sinter.constant dense<0.125> : tensor<64x16xbf16>
  %wf = sinter.constant dense<1.0> : tensor<64x128xbf16>
  %q = sinter.linear %x, %wq : (tensor<1x6x64xbf16>, tensor<64x16xbf16>) -> tensor<1x6x16xbf16>
  %k = sinter.linear %x, %wk : (tensor<1x6x64xbf16>, tensor<64x16xbf16>) -> tensor<1x6x16xbf16>
  %v = sinter.linear %x, %wv : (tensor<1x6x64xbf16>, tensor<64x16xbf16>) -> tensor<1x6x16xbf16>
  %f = sinter.linear %x, %wf : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %g = sinter.unary "gelu" %f : (tensor<1x6x128xbf16>) -> tensor<1x6x128xbf16>
  %wg = sinter.constant dense<2.0> : tensor<64x128xbf16>
  %wu = sinter.constant dense<3.0> : tensor<64x128xbf16>
  %gate = sinter.linear %y, %wg : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %up = sinter.linear %y, %wu : (tensor<1x6x64xbf16>, tensor<64x128xbf16>) -> tensor<1x6x128xbf16>
  %act = sinter.unary "gelu_tanh" %gate : (tensor<1x6x128xbf16>) -> tensor<1x6x128xbf16>
  %h = sinter.mul %act, %up : (tensor<1x6x128xbf16>, tensor<1x6x128xbf16>) -> tensor<1x6x128xbf16>
  return %q, %k, %v, %g, %h : tensor<1x6x16xbf16>, tensor<1x6x16xbf16>, tensor<1x6x16xbf16>, tensor<1x6x128xbf16>, tensor<1x6x128xbf16>
}
