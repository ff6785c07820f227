// RUN: sinter-opt %s -split-input-file --sinter-tabulate-position | FileCheck %s

// cos(position * freq) as RoPE computes it: a [8, 4] table (one row per cache slot) and a
// row lookup at the position; the trigonometry is gone.
// CHECK-LABEL: func.func @rope_angles
// CHECK-DAG: %[[TABLE:.+]] = sinter.constant dense<{{.+}}> : tensor<8x4xbf16>
// CHECK-DAG: %[[ROW:.+]] = sinter.gather %[[TABLE]], %arg2 {axis = 0 : i64} : (tensor<8x4xbf16>, tensor<1xi64>) -> tensor<1x4xbf16>
// CHECK-DAG: %[[COS:.+]] = sinter.reshape %[[ROW]], %{{.+}} : (tensor<1x4xbf16>, tensor<1xi64>) -> tensor<4xbf16>
// CHECK-NOT: sinter.cos
// CHECK: sinter.mul %arg1, %[[COS]]
func.func @rope_angles(%cache: tensor<1x2x8x4xbf16>, %x: tensor<4xbf16>, %pos: tensor<1xi64>) -> (tensor<1x2x8x4xbf16>, tensor<4xbf16>) {
  %rows = sinter.constant dense<1.0> : tensor<1x2x1x4xbf16>
  %w = sinter.cache_write %cache, %rows, %pos {axis = 2 : i64} : (tensor<1x2x8x4xbf16>, tensor<1x2x1x4xbf16>, tensor<1xi64>) -> tensor<1x2x8x4xbf16>
  %freq = sinter.constant dense<[1.0, 0.5, 0.25, 0.125]> : tensor<4xf32>
  %p = sinter.cast %pos : (tensor<1xi64>) -> tensor<1xf32>
  %a = sinter.mul %p, %freq : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = sinter.cos %a : (tensor<4xf32>) -> tensor<4xf32>
  %cb = sinter.cast %c : (tensor<4xf32>) -> tensor<4xbf16>
  %y = sinter.mul %x, %cb : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %w, %y : tensor<1x2x8x4xbf16>, tensor<4xbf16>
}

// -----

// The table's rows are the values at positions 0, 1, ...: here 2 * p + 1.
// CHECK-LABEL: func.func @table_rows
// CHECK: sinter.constant dense<{{\[}}[1.000000e+00], [3.000000e+00], [5.000000e+00], [7.000000e+00]]> : tensor<4x1xf32>
func.func @table_rows(%cache: tensor<4x2xf32>, %x: tensor<1xf32>, %pos: tensor<1xi64>) -> (tensor<4x2xf32>, tensor<1xf32>) {
  %rows = sinter.constant dense<1.0> : tensor<1x2xf32>
  %w = sinter.cache_write %cache, %rows, %pos {axis = 0 : i64} : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi64>) -> tensor<4x2xf32>
  %two = sinter.constant dense<2.0> : tensor<1xf32>
  %one = sinter.constant dense<1.0> : tensor<1xf32>
  %p = sinter.cast %pos : (tensor<1xi64>) -> tensor<1xf32>
  %a = sinter.mul %p, %two : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %b = sinter.add %a, %one : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %y = sinter.add %x, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  return %w, %y : tensor<4x2xf32>, tensor<1xf32>
}

// -----

// Negative: without a cache write the position's range is unknown; values that also read
// other run-time data are not functions of the position alone.
// CHECK-LABEL: func.func @no_cache
// CHECK-NOT: sinter.gather
// CHECK: sinter.cos
func.func @no_cache(%pos: tensor<1xi64>) -> tensor<1xf32> {
  %p = sinter.cast %pos : (tensor<1xi64>) -> tensor<1xf32>
  %c = sinter.cos %p : (tensor<1xf32>) -> tensor<1xf32>
  return %c : tensor<1xf32>
}

// -----

// CHECK-LABEL: func.func @mixed
// CHECK-NOT: sinter.gather
// CHECK: sinter.cos
func.func @mixed(%cache: tensor<4x2xf32>, %k: tensor<1xi64>, %pos: tensor<1xi64>) -> (tensor<4x2xf32>, tensor<1xf32>) {
  %rows = sinter.constant dense<1.0> : tensor<1x2xf32>
  %w = sinter.cache_write %cache, %rows, %pos {axis = 0 : i64} : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi64>) -> tensor<4x2xf32>
  %s = sinter.add %pos, %k : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %p = sinter.cast %s : (tensor<1xi64>) -> tensor<1xf32>
  %c = sinter.cos %p : (tensor<1xf32>) -> tensor<1xf32>
  return %w, %c : tensor<4x2xf32>, tensor<1xf32>
}

// -----

// Hugging Face's position_ids [batch, seq]: one table row per position below the longest token
// axis of the inputs (here the attention mask's 5), looked up at every element.
// CHECK-LABEL: func.func @position_ids
// CHECK-DAG: %[[TABLE:.+]] = sinter.constant dense<{{\[}}[1.000000e+00, 1.000000e+00], [3.000000e+00, 2.000000e+00], [5.000000e+00, 3.000000e+00], [7.000000e+00, 4.000000e+00], [9.000000e+00, 5.000000e+00]]> : tensor<5x2xf32>
// CHECK-DAG: %[[ROWS:.+]] = sinter.gather %[[TABLE]], %arg1 {axis = 0 : i64} : (tensor<5x2xf32>, tensor<2x3xi64>) -> tensor<2x3x2xf32>
// CHECK-DAG: %[[V:.+]] = sinter.reshape %[[ROWS]], %{{.+}} : (tensor<2x3x2xf32>, tensor<3xi64>) -> tensor<2x3x2xf32>
// CHECK: sinter.add %arg2, %[[V]]
func.func @position_ids(%mask: tensor<2x5xi64> {sinter.name = "attention_mask"}, %pos: tensor<2x3xi64> {sinter.name = "position_ids"}, %x: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  %scale = sinter.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %one = sinter.constant dense<1.0> : tensor<f32>
  %p = sinter.cast %pos : (tensor<2x3xi64>) -> tensor<2x3xf32>
  %u = sinter.unsqueeze %p {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  %a = sinter.mul %u, %scale : (tensor<2x3x1xf32>, tensor<2xf32>) -> tensor<2x3x2xf32>
  %b = sinter.add %a, %one : (tensor<2x3x2xf32>, tensor<f32>) -> tensor<2x3x2xf32>
  %y = sinter.add %x, %b : (tensor<2x3x2xf32>, tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  return %y : tensor<2x3x2xf32>
}

// -----

// Negative: a value that also depends on where an element sits (here its column), not on its
// position alone, is no table lookup; nor is an input of another name.
// CHECK-LABEL: func.func @element_dependent
// CHECK-NOT: sinter.gather
// CHECK: sinter.cos
func.func @element_dependent(%pos: tensor<1x3xi64> {sinter.name = "position_ids"}, %x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %col = sinter.constant dense<[[0.0, 1.0, 2.0]]> : tensor<1x3xf32>
  %p = sinter.cast %pos : (tensor<1x3xi64>) -> tensor<1x3xf32>
  %a = sinter.add %p, %col : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %c = sinter.cos %a : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %y = sinter.mul %x, %c : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// CHECK-LABEL: func.func @other_name
// CHECK-NOT: sinter.gather
// CHECK: sinter.cos
func.func @other_name(%ids: tensor<1x3xi64> {sinter.name = "input_ids"}, %x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %p = sinter.cast %ids : (tensor<1x3xi64>) -> tensor<1x3xf32>
  %c = sinter.cos %p : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %y = sinter.mul %x, %c : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}
