// RUN: sinter-opt %s -split-input-file -verify-diagnostics --sinter-narrow-floats | FileCheck %s
// RUN: sinter-opt %s -split-input-file -verify-diagnostics --sinter-narrow-floats="to=f16" | FileCheck %s --check-prefix=F16
// RUN: not sinter-opt %s -split-input-file --sinter-narrow-floats="to=f8" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: sinter-narrow-floats: 'to' must be bf16 or f16, got 'f8'

// The data path (argument, weight, linear) narrows with the signature; a table computed from
// an integer input stays fp32 and is cast where the data path reads it.
// CHECK-LABEL: func.func @data_path
// CHECK-SAME: (%arg0: tensor<2x4xbf16>, %arg1: tensor<2x1xi64>) -> tensor<2x4xbf16>
// CHECK-DAG: %[[W:.+]] = sinter.constant dense<{{.+}}> : tensor<4x4xbf16>
// CHECK-DAG: %[[P:.+]] = sinter.cast %arg1 : (tensor<2x1xi64>) -> tensor<2x1xf32>
// CHECK: %[[ANGLE:.+]] = sinter.mul %[[P]], %{{.+}} : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
// CHECK: %[[NARROW:.+]] = sinter.cast %[[ANGLE]] : (tensor<2x1xf32>) -> tensor<2x1xbf16>
// CHECK: %[[Y:.+]] = sinter.linear %arg0, %[[W]] : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
// CHECK: %[[Z:.+]] = sinter.mul %[[Y]], %[[NARROW]] : (tensor<2x4xbf16>, tensor<2x1xbf16>) -> tensor<2x4xbf16>
// CHECK: return %[[Z]]
// F16-LABEL: func.func @data_path
// F16-SAME: (%arg0: tensor<2x4xf16>, %arg1: tensor<2x1xi64>) -> tensor<2x4xf16>
func.func @data_path(%x: tensor<2x4xf32>, %pos: tensor<2x1xi64>) -> tensor<2x4xf32> {
  %w = sinter.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]> : tensor<4x4xf32>
  %freq = sinter.constant dense<0.5> : tensor<f32>
  %p = sinter.cast %pos : (tensor<2x1xi64>) -> tensor<2x1xf32>
  %angle = sinter.mul %p, %freq : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %y = sinter.linear %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %z = sinter.mul %y, %angle : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}

// -----

// An embedding lookup starts the data path; an additive mask of the fp32 minimum saturates at
// the narrow type's largest finite value instead of becoming -inf.
// CHECK-LABEL: func.func @saturate
// CHECK-SAME: (%arg0: tensor<3xi64>) -> tensor<3x2xbf16>
// CHECK-DAG: sinter.constant dense<-3.389530e+38> : tensor<2xbf16>
// CHECK-DAG: sinter.constant dense<{{.+}}> : tensor<8x2xbf16>
// CHECK-NOT: f32
// F16-LABEL: func.func @saturate
// F16: sinter.constant dense<-6.550400e+04> : tensor<2xf16>
func.func @saturate(%ids: tensor<3xi64>) -> tensor<3x2xf32> {
  %table = sinter.constant dense<1.5> : tensor<8x2xf32>
  %mask = sinter.constant dense<-3.40282347e+38> : tensor<2xf32>
  %e = sinter.gather %table, %ids {axis = 0 : i64} : (tensor<8x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  %y = sinter.add %e, %mask : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Negative: a function with no data path (integer inputs, no weights) keeps its fp32 values.
// CHECK-LABEL: func.func @index_math_only
// CHECK-SAME: (%arg0: tensor<4xi64>) -> tensor<4xf32>
// CHECK: sinter.mul {{.+}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
func.func @index_math_only(%pos: tensor<4xi64>) -> tensor<4xf32> {
  %s = sinter.constant dense<0.25> : tensor<f32>
  %p = sinter.cast %pos : (tensor<4xi64>) -> tensor<4xf32>
  %y = sinter.mul %p, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Negative: other float types are left alone (a bf16 model is not re-typed by to=f16).
// CHECK-LABEL: func.func @already_narrow
// CHECK-SAME: (%arg0: tensor<2x2xbf16>) -> tensor<2x2xbf16>
// F16-LABEL: func.func @already_narrow
// F16-SAME: (%arg0: tensor<2x2xbf16>) -> tensor<2x2xbf16>
// F16: sinter.linear %arg0, %{{.+}} : (tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
func.func @already_narrow(%x: tensor<2x2xbf16>) -> tensor<2x2xbf16> {
  %w = sinter.constant dense<1.0> : tensor<2x2xbf16>
  %y = sinter.linear %x, %w : (tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
  return %y : tensor<2x2xbf16>
}

// -----

// A bitcast keeps the bits it reads: fp32 data reaches it through a cast back to f32, and its
// result stays off the data path (the add reads it through a cast to bf16).
// CHECK-LABEL: func.func @bitcast
// CHECK: %[[WIDE:.+]] = sinter.cast %arg0 : (tensor<2xbf16>) -> tensor<2xf32>
// CHECK: %[[BITS:.+]] = sinter.bitcast %[[WIDE]] : (tensor<2xf32>) -> tensor<2xi32>
// CHECK: %[[BACK:.+]] = sinter.bitcast %[[BITS]] : (tensor<2xi32>) -> tensor<2xf32>
// CHECK: %[[NARROW:.+]] = sinter.cast %[[BACK]] : (tensor<2xf32>) -> tensor<2xbf16>
// CHECK: sinter.add %arg0, %[[NARROW]] : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
func.func @bitcast(%x: tensor<2xf32>) -> tensor<2xf32> {
  %i = sinter.bitcast %x : (tensor<2xf32>) -> tensor<2xi32>
  %f = sinter.bitcast %i : (tensor<2xi32>) -> tensor<2xf32>
  %y = sinter.add %x, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// Negative: after fusion groups are formed (a pass order the pipeline never uses) the pass
// refuses, naming the group, instead of leaving its body in the old type.
func.func @after_fusion_groups(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{sinter-narrow-floats runs before fusion groups are formed}}
  %y = sinter.fusion_group(%x) : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    %n = sinter.unary "tanh" %a : (tensor<2xf32>) -> tensor<2xf32>
    sinter.yield %n : tensor<2xf32>
  }
  return %y : tensor<2xf32>
}
