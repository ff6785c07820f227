// RUN: sinter-opt %s -split-input-file --sinter-merge-lora | FileCheck %s
// RUN: sinter-opt %s -split-input-file --sinter-merge-lora -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// W' = W + s * A @ B: I + 2 * (ones[2x1] @ [[0.5, 0.25]]) = [[2, 0.5], [1, 1.5]].
// CHECK-LABEL: func.func @merge
// CHECK: %[[W:.+]] = sinter.constant dense<{{\[}}[2.000000e+00, 5.000000e-01], [1.000000e+00, 1.500000e+00]]> : tensor<2x2xf32>
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %[[W]] bias %{{.+}} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: return %[[Y]]
func.func @merge(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = sinter.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %b = sinter.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %a = sinter.constant dense<1.0> : tensor<2x1xf32>
  %bb = sinter.constant dense<[[0.5, 0.25]]> : tensor<1x2xf32>
  %s = sinter.constant dense<2.0> : tensor<f32>
  %base = sinter.linear %x, %w bias %b : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %down = sinter.linear %x, %a : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  %up = sinter.linear %down, %bb : (tensor<3x1xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  %scaled = sinter.mul %s, %up : (tensor<f32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y = sinter.add %scaled, %base : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Without a scale (alpha == r) the branch merges with s = 1; bf16 weights are merged in fp32
// and rounded once.
// CHECK-LABEL: func.func @merge_bf16_unscaled
// CHECK: sinter.constant dense<1.500000e+00> : tensor<2x2xbf16>
// CHECK: sinter.linear %arg0, %{{[^,]+}} : (tensor<1x2xbf16>, tensor<2x2xbf16>) -> tensor<1x2xbf16>
func.func @merge_bf16_unscaled(%x: tensor<1x2xbf16>) -> tensor<1x2xbf16> {
  %w = sinter.constant dense<1.0> : tensor<2x2xbf16>
  %a = sinter.constant dense<1.0> : tensor<2x1xbf16>
  %bb = sinter.constant dense<0.5> : tensor<1x2xbf16>
  %base = sinter.linear %x, %w : (tensor<1x2xbf16>, tensor<2x2xbf16>) -> tensor<1x2xbf16>
  %down = sinter.linear %x, %a : (tensor<1x2xbf16>, tensor<2x1xbf16>) -> tensor<1x1xbf16>
  %up = sinter.linear %down, %bb : (tensor<1x1xbf16>, tensor<1x2xbf16>) -> tensor<1x2xbf16>
  %y = sinter.add %base, %up : (tensor<1x2xbf16>, tensor<1x2xbf16>) -> tensor<1x2xbf16>
  return %y : tensor<1x2xbf16>
}

// -----

// Negative: the adapter reads another input than the base layer.
// CHECK-LABEL: func.func @different_inputs
// CHECK-COUNT-3: sinter.linear
// CHECK: sinter.add
func.func @different_inputs(%x: tensor<1x2xf32>, %z: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = sinter.constant dense<1.0> : tensor<2x2xf32>
  %a = sinter.constant dense<1.0> : tensor<2x1xf32>
  %bb = sinter.constant dense<0.5> : tensor<1x2xf32>
  %base = sinter.linear %x, %w : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %down = sinter.linear %z, %a : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %up = sinter.linear %down, %bb : (tensor<1x1xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %y = sinter.add %base, %up : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// Negative: the adapter's intermediate is used elsewhere, so it must stay computed.
// CHECK-LABEL: func.func @shared_down
// CHECK-COUNT-3: sinter.linear
// CHECK: sinter.add
func.func @shared_down(%x: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x1xf32>) {
  %w = sinter.constant dense<1.0> : tensor<2x2xf32>
  %a = sinter.constant dense<1.0> : tensor<2x1xf32>
  %bb = sinter.constant dense<0.5> : tensor<1x2xf32>
  %base = sinter.linear %x, %w : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %down = sinter.linear %x, %a : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %up = sinter.linear %down, %bb : (tensor<1x1xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %y = sinter.add %base, %up : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  return %y, %down : tensor<1x2xf32>, tensor<1x1xf32>
}

// -----

// Negative: a non-scalar multiplier is not a LoRA scale.
// CHECK-LABEL: func.func @vector_scale
// CHECK: sinter.mul
// CHECK: sinter.add
func.func @vector_scale(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = sinter.constant dense<1.0> : tensor<2x2xf32>
  %a = sinter.constant dense<1.0> : tensor<2x1xf32>
  %bb = sinter.constant dense<0.5> : tensor<1x2xf32>
  %s = sinter.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %base = sinter.linear %x, %w : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %down = sinter.linear %x, %a : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %up = sinter.linear %down, %bb : (tensor<1x1xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %m = sinter.mul %up, %s : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %y = sinter.add %base, %m : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// The merged weight is located at the base weight and both adapter weights (what `sinter
// inspect` lists as its sources).
// CHECK-LABEL: func.func @weight_sources
// LOC-LABEL: func.func @weight_sources
// LOC: sinter.constant dense<1.500000e+00> {{.*}} loc(#[[WLOC:loc[0-9]+]])
// LOC: #[[W:loc[0-9]+]] = loc("base.weight")
// LOC: #[[A:loc[0-9]+]] = loc("lora_A.weight")
// LOC: #[[B:loc[0-9]+]] = loc("lora_B.weight")
// LOC: #[[WLOC]] = loc(fused[#[[W]], #[[A]], #[[B]]])
func.func @weight_sources(%x: tensor<1x2xbf16>) -> tensor<1x2xbf16> {
  %w = sinter.constant dense<1.0> : tensor<2x2xbf16> loc("base.weight")
  %a = sinter.constant dense<1.0> : tensor<2x1xbf16> loc("lora_A.weight")
  %bb = sinter.constant dense<0.5> : tensor<1x2xbf16> loc("lora_B.weight")
  %base = sinter.linear %x, %w : (tensor<1x2xbf16>, tensor<2x2xbf16>) -> tensor<1x2xbf16>
  %down = sinter.linear %x, %a : (tensor<1x2xbf16>, tensor<2x1xbf16>) -> tensor<1x1xbf16>
  %up = sinter.linear %down, %bb : (tensor<1x1xbf16>, tensor<1x2xbf16>) -> tensor<1x2xbf16>
  %y = sinter.add %base, %up : (tensor<1x2xbf16>, tensor<1x2xbf16>) -> tensor<1x2xbf16>
  return %y : tensor<1x2xbf16>
}

// -----

// Negative: an integer sum with a multiple (index arithmetic, as in a mixture-of-experts
// router's flat positions) is no adapter branch; reading its integer factor as a float scale
// crashed the pass.
// CHECK-LABEL: func.func @integer_multiple
// CHECK: sinter.mul
// CHECK: sinter.add
func.func @integer_multiple(%x: tensor<4xi64>, %y: tensor<4xi64>) -> tensor<4xi64> {
  %k = sinter.constant dense<2> : tensor<i64>
  %m = sinter.mul %y, %k : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  %s = sinter.add %x, %m : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %s : tensor<4xi64>
}
