// RUN: sinter-opt %s -split-input-file --sinter-lower-to-launch --launch-plan-handoffs | FileCheck %s
// RUN: sinter-opt %s -split-input-file --sinter-lower-to-launch=weight-dtype=fp8 --launch-plan-handoffs | FileCheck %s --check-prefix=FP8

// Decode MLPs (one row): each gate/up launch hands its SwiGLU output to the down launch right
// after it through the context state (LinearHandoff): the pair's x and count are state
// buffers, the producer writes them, the consumer waits on them instead of
// griddepcontrol.wait and zeroes the next pair's (the last consumer the first pair's).
// CHECK: module attributes {launch.state_bytes = 6912 : i64
// CHECK-LABEL: func.func @three_mlps
// CHECK-DAG: %[[X0:.+]] = launch.state "three_mlps.linear_handoff.0.x" {{.*}}: memref<1x1024xbf16>
// CHECK-DAG: %[[C0:.+]] = launch.state "three_mlps.linear_handoff.0.count" {{.*}}: memref<1xi32>
// CHECK-DAG: %[[X1:.+]] = launch.state "three_mlps.linear_handoff.1.x" {{.*}}: memref<1x1024xbf16>
// CHECK-DAG: %[[C1:.+]] = launch.state "three_mlps.linear_handoff.1.count" {{.*}}: memref<1xi32>
// CHECK-DAG: %[[X2:.+]] = launch.state "three_mlps.linear_handoff.2.x" {{.*}}: memref<1x1024xbf16>
// CHECK-DAG: %[[C2:.+]] = launch.state "three_mlps.linear_handoff.2.count" {{.*}}: memref<1xi32>
// CHECK: launch.kernel "linear_small_m"(%arg0, %{{.+}}, %{{.+}}, %[[X0]], %[[C0]]) {{.*}}"sinter::kernels::LinearEpilogue::SILU_MUL_PAIRS", "__nv_bfloat16", "925353388u", 0, 0, 132, "__nv_bfloat16", "sinter::kernels::LinearHandoff::PRODUCER", 0, "__nv_bfloat16", 0]
// CHECK-SAME: writes = array<i64: 3, 4>
// CHECK: launch.kernel "linear_small_m"(%[[X0]], %{{.+}}, %arg0, %[[Y0:.+]], %[[C0]], %[[X1]], %[[C1]]) {{.*}}"sinter::kernels::LinearEpilogue::RESIDUAL", "__nv_bfloat16", "0u", 0, 0, 132, "__nv_bfloat16", "sinter::kernels::LinearHandoff::CONSUMER", 128, "__nv_bfloat16", 0]
// CHECK-SAME: writes = array<i64: 3, 5, 6>
// CHECK: launch.kernel "linear_small_m"(%[[Y0]], %{{.+}}, %{{.+}}, %[[X1]], %[[C1]]) {{.*}}LinearHandoff::PRODUCER", 0, "__nv_bfloat16", 0]
// CHECK: launch.kernel "linear_small_m"(%[[X1]], %{{.+}}, %[[Y0]], %[[Y1:.+]], %[[C1]], %[[X2]], %[[C2]]) {{.*}}LinearHandoff::CONSUMER", 128, "__nv_bfloat16", 0]
// CHECK: launch.kernel "linear_small_m"(%[[Y1]], %{{.+}}, %{{.+}}, %[[X2]], %[[C2]]) {{.*}}LinearHandoff::PRODUCER", 0, "__nv_bfloat16", 0]
// CHECK: launch.kernel "linear_small_m"(%[[X2]], %{{.+}}, %[[Y1]], %arg1, %[[C2]], %[[X0]], %[[C0]]) {{.*}}LinearHandoff::CONSUMER", 128, "__nv_bfloat16", 0]
func.func @three_mlps(%x: tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16> {
  %g0 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu0 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act0 = sinter.linear %x, %wgu0 norm %g0 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x1x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd0 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y0 = sinter.linear %act0, %wd0 residual %x : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu1 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act1 = sinter.linear %y0, %wgu1 norm %g1 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x1x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd1 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y1 = sinter.linear %act1, %wd1 residual %y0 : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  %g2 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu2 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act2 = sinter.linear %y1, %wgu2 norm %g2 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x1x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd2 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y2 = sinter.linear %act2, %wd2 residual %y1 : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  return %y2 : tensor<1x1x64xbf16>
}

// -----

// Negative: one pair alone keeps the plain launches (its consumer would have to zero its own
// buffers while other blocks still read them).
// CHECK-LABEL: func.func @one_mlp
// CHECK-NOT: launch.state
// CHECK-NOT: LinearHandoff::{{PRODUCER|CONSUMER}}
// CHECK: return
func.func @one_mlp(%x: tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16> {
  %g0 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu0 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act0 = sinter.linear %x, %wgu0 norm %g0 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x1x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd0 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y0 = sinter.linear %act0, %wd0 residual %x : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  return %y0 : tensor<1x1x64xbf16>
}

// -----

// Negative: six rows (prefill) are more than a handoff consumer stages.
// CHECK-LABEL: func.func @six_rows
// CHECK-NOT: LinearHandoff::{{PRODUCER|CONSUMER}}
// CHECK: return
func.func @six_rows(%x: tensor<1x6x64xbf16>) -> tensor<1x6x64xbf16> {
  %g0 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu0 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act0 = sinter.linear %x, %wgu0 norm %g0 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x6x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x6x1024xbf16>
  %wd0 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y0 = sinter.linear %act0, %wd0 residual %x : (tensor<1x6x1024xbf16>, tensor<1024x64xbf16>, tensor<1x6x64xbf16>) -> tensor<1x6x64xbf16>
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu1 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act1 = sinter.linear %y0, %wgu1 norm %g1 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x6x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x6x1024xbf16>
  %wd1 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y1 = sinter.linear %act1, %wd1 residual %y0 : (tensor<1x6x1024xbf16>, tensor<1024x64xbf16>, tensor<1x6x64xbf16>) -> tensor<1x6x64xbf16>
  return %y1 : tensor<1x6x64xbf16>
}

// -----

// Negative: a SwiGLU output that is also a model output has another reader than the down
// launch, so that pair keeps its plain launches (and alone, the other pair does too).
// CHECK-LABEL: func.func @act_is_an_output
// CHECK-NOT: LinearHandoff::{{PRODUCER|CONSUMER}}
// CHECK: return
func.func @act_is_an_output(%x: tensor<1x1x64xbf16>) -> (tensor<1x1x64xbf16>, tensor<1x1x1024xbf16>) {
  %g0 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu0 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act0 = sinter.linear %x, %wgu0 norm %g0 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x1x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd0 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y0 = sinter.linear %act0, %wd0 residual %x : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu1 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act1 = sinter.linear %y0, %wgu1 norm %g1 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x1x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd1 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y1 = sinter.linear %act1, %wd1 residual %y0 : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  return %y1, %act0 : tensor<1x1x64xbf16>, tensor<1x1x1024xbf16>
}

// -----

// Negative: a down projection with its own RMS normalization prologue stages x for the norm,
// not by the plain loads a handoff consumer checks, so both pairs keep the plain launches.
// CHECK-LABEL: func.func @normalized_down
// CHECK-NOT: LinearHandoff::{{PRODUCER|CONSUMER}}
// CHECK: return
func.func @normalized_down(%x: tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16> {
  %g0 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu0 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act0 = sinter.linear %x, %wgu0 norm %g0 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x1x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd0 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %nd0 = sinter.constant dense<1.0> : tensor<1024xbf16>
  %y0 = sinter.linear %act0, %wd0 residual %x norm %nd0 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>, tensor<1024xbf16>) -> tensor<1x1x64xbf16>
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu1 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act1 = sinter.linear %y0, %wgu1 norm %g1 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x1x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd1 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %nd1 = sinter.constant dense<1.0> : tensor<1024xbf16>
  %y1 = sinter.linear %act1, %wd1 residual %y0 norm %nd1 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>, tensor<1024xbf16>) -> tensor<1x1x64xbf16>
  return %y1 : tensor<1x1x64xbf16>
}

// -----

// Negative: another launch between the gate/up and the down launch (the consumer would wait on
// the data while the launch between still ran): neither pair hands over.
// CHECK-LABEL: func.func @launch_between
// CHECK-NOT: LinearHandoff::{{PRODUCER|CONSUMER}}
// CHECK: return
func.func @launch_between(%x: tensor<1x1x64xbf16>) -> (tensor<1x1x64xbf16>, tensor<1x1x64xbf16>) {
  %g0 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu0 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act0 = sinter.linear %x, %wgu0 norm %g0 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x1x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wz = sinter.constant dense<0.125> : tensor<64x64xbf16>
  %z = sinter.linear %x, %wz : (tensor<1x1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x1x64xbf16>
  %wd0 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y0 = sinter.linear %act0, %wd0 residual %x : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu1 = sinter.constant dense<0.5> : tensor<64x2048xbf16>
  %act1 = sinter.linear %y0, %wgu1 norm %g1 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 1024>} : (tensor<1x1x64xbf16>, tensor<64x2048xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd1 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y1 = sinter.linear %act1, %wd1 residual %y0 : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  return %y1, %z : tensor<1x1x64xbf16>, tensor<1x1x64xbf16>
}

// -----

// Decode MLPs hand over through the context state with fp8 weights too: the consumer waits for
// the producer's grid as fp8 weights tile it (linear_small_m_tiling with FP8_E4M3; which shapes
// qualify with fp8 weights is checked against launch_params.h in the unit test
// Fp8Lowering.LaunchesAndHandoffsFollowTheFp8Tiling).
// FP8-LABEL: func.func @fp8_handoff
// FP8: launch.kernel "linear_small_m"{{.*}} grid = array<i64: [[G:[0-9]+]], 1, 1>, params = [{{.*}}"sinter::kernels::LinearHandoff::PRODUCER", 0, "__nv_fp8_e4m3", 0]
// FP8: launch.kernel "linear_small_m"{{.*}}"sinter::kernels::LinearHandoff::CONSUMER", [[G]], "__nv_fp8_e4m3", 0]
// FP8: launch.kernel "linear_small_m"{{.*}}"sinter::kernels::LinearHandoff::PRODUCER", 0, "__nv_fp8_e4m3", 0]
// FP8: launch.kernel "linear_small_m"{{.*}}"sinter::kernels::LinearHandoff::CONSUMER", [[G]], "__nv_fp8_e4m3", 0]
func.func @fp8_handoff(%x: tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16> {
  %g0 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu0 = sinter.constant dense<0.5> : tensor<64x4096xbf16>
  %act0 = sinter.linear %x, %wgu0 norm %g0 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 2048>} : (tensor<1x1x64xbf16>, tensor<64x4096xbf16>, tensor<64xbf16>) -> tensor<1x1x2048xbf16>
  %wd0 = sinter.constant dense<0.25> : tensor<2048x64xbf16>
  %y0 = sinter.linear %act0, %wd0 residual %x : (tensor<1x1x2048xbf16>, tensor<2048x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  %g1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %wgu1 = sinter.constant dense<0.5> : tensor<64x4096xbf16>
  %act1 = sinter.linear %y0, %wgu1 norm %g1 {norm_epsilon = 9.99999974E-6 : f32, gate_up_columns = array<i64: 0, 2048>} : (tensor<1x1x64xbf16>, tensor<64x4096xbf16>, tensor<64xbf16>) -> tensor<1x1x2048xbf16>
  %wd1 = sinter.constant dense<0.25> : tensor<2048x64xbf16>
  %y1 = sinter.linear %act1, %wd1 residual %y0 : (tensor<1x1x2048xbf16>, tensor<2048x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  return %y1 : tensor<1x1x64xbf16>
}

// -----

// GPT-2's MLP (LayerNorm prologue, c_fc with its bias and GeLU, c_proj with its bias into the
// residual stream) hands the GeLU output over like a gate/up pair; the consumer waits for the
// LayerNorm launch's grid.
// CHECK-LABEL: func.func @gelu_mlps
// CHECK: launch.kernel "linear_small_m"{{.*}} grid = array<i64: [[G:[0-9]+]], 1, 1>, params = [{{.*}}"sinter::kernels::LinearPrologue::LAYER_NORM", "sinter::kernels::LinearEpilogue::GELU_TANH"{{.*}}"sinter::kernels::LinearHandoff::PRODUCER", 0,
// CHECK: launch.kernel "linear_small_m"{{.*}}"sinter::kernels::LinearEpilogue::BIAS_RESIDUAL"{{.*}}"sinter::kernels::LinearHandoff::CONSUMER", [[G]],
// CHECK: launch.kernel "linear_small_m"{{.*}}"sinter::kernels::LinearEpilogue::GELU_TANH"{{.*}}"sinter::kernels::LinearHandoff::PRODUCER", 0,
// CHECK: launch.kernel "linear_small_m"{{.*}}"sinter::kernels::LinearHandoff::CONSUMER", [[G]],
func.func @gelu_mlps(%x: tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16> {
  %s0 = sinter.constant dense<1.0> : tensor<64xbf16>
  %t0 = sinter.constant dense<0.5> : tensor<64xbf16>
  %wfc0 = sinter.constant dense<0.5> : tensor<64x1024xbf16>
  %bfc0 = sinter.constant dense<0.125> : tensor<1024xbf16>
  %act0 = sinter.linear %x, %wfc0 bias %bfc0 norm %s0 norm_bias %t0 {norm_epsilon = 9.99999974E-6 : f32, activation = "gelu_tanh"} : (tensor<1x1x64xbf16>, tensor<64x1024xbf16>, tensor<1024xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wp0 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %bp0 = sinter.constant dense<0.25> : tensor<64xbf16>
  %y0 = sinter.linear %act0, %wp0 bias %bp0 residual %x : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  %s1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %t1 = sinter.constant dense<0.5> : tensor<64xbf16>
  %wfc1 = sinter.constant dense<0.5> : tensor<64x1024xbf16>
  %bfc1 = sinter.constant dense<0.125> : tensor<1024xbf16>
  %act1 = sinter.linear %y0, %wfc1 bias %bfc1 norm %s1 norm_bias %t1 {norm_epsilon = 9.99999974E-6 : f32, activation = "gelu_tanh"} : (tensor<1x1x64xbf16>, tensor<64x1024xbf16>, tensor<1024xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wp1 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %bp1 = sinter.constant dense<0.25> : tensor<64xbf16>
  %y1 = sinter.linear %act1, %wp1 bias %bp1 residual %y0 : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  return %y1 : tensor<1x1x64xbf16>
}

// -----

// Negative: an up projection without an activation epilogue (a plain linear into a linear) is
// no MLP pair: both keep the plain launches.
// CHECK-LABEL: func.func @plain_chain
// CHECK-NOT: LinearHandoff::{{PRODUCER|CONSUMER}}
// CHECK: return
func.func @plain_chain(%x: tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16> {
  %s0 = sinter.constant dense<1.0> : tensor<64xbf16>
  %w0 = sinter.constant dense<0.5> : tensor<64x1024xbf16>
  %a0 = sinter.linear %x, %w0 norm %s0 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x1x64xbf16>, tensor<64x1024xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd0 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y0 = sinter.linear %a0, %wd0 residual %x : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  %s1 = sinter.constant dense<1.0> : tensor<64xbf16>
  %w1 = sinter.constant dense<0.5> : tensor<64x1024xbf16>
  %a1 = sinter.linear %y0, %w1 norm %s1 {norm_epsilon = 9.99999974E-6 : f32} : (tensor<1x1x64xbf16>, tensor<64x1024xbf16>, tensor<64xbf16>) -> tensor<1x1x1024xbf16>
  %wd1 = sinter.constant dense<0.25> : tensor<1024x64xbf16>
  %y1 = sinter.linear %a1, %wd1 residual %y0 : (tensor<1x1x1024xbf16>, tensor<1024x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x1x64xbf16>
  return %y1 : tensor<1x1x64xbf16>
}
