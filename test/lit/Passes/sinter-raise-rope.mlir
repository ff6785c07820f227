// RUN: sinter-opt %s -split-input-file --sinter-raise-rope | FileCheck %s

// The Hugging Face apply_rotary_pos_emb: x * cos + rotate_half(x) * sin.
// CHECK-LABEL: func.func @rope
// CHECK-DAG: %[[COS:.+]] = sinter.constant dense<5.000000e-01> : tensor<1x1x3x4xbf16>
// CHECK-DAG: %[[SIN:.+]] = sinter.constant dense<2.500000e-01> : tensor<1x1x3x4xbf16>
// CHECK: %[[Y:.+]] = sinter.rope %arg0, %[[COS]], %[[SIN]] : (tensor<1x2x3x4xbf16>, tensor<1x1x3x4xbf16>, tensor<1x1x3x4xbf16>) -> tensor<1x2x3x4xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @rope(%x: tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16> {
  %cos = sinter.constant dense<0.5> : tensor<1x1x3x4xbf16>
  %sin = sinter.constant dense<0.25> : tensor<1x1x3x4xbf16>
  %xc = sinter.mul %x, %cos : (tensor<1x2x3x4xbf16>, tensor<1x1x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %lo = sinter.slice %x {ends = array<i64: 1, 2, 3, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x2xbf16>
  %hi = sinter.slice %x {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x2xbf16>
  %nhi = sinter.neg %hi : (tensor<1x2x3x2xbf16>) -> tensor<1x2x3x2xbf16>
  %rot = sinter.concat %nhi, %lo {axis = 3 : i64} : (tensor<1x2x3x2xbf16>, tensor<1x2x3x2xbf16>) -> tensor<1x2x3x4xbf16>
  %xs = sinter.mul %rot, %sin : (tensor<1x2x3x4xbf16>, tensor<1x1x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %y = sinter.add %xc, %xs : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  return %y : tensor<1x2x3x4xbf16>
}

// -----

// Every commutative op with its operands swapped.
// CHECK-LABEL: func.func @commuted
// CHECK: %[[Y:.+]] = sinter.rope %arg0, %{{.+}}, %{{.+}} : (tensor<2x1x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x1x2x2xf32>
// CHECK-NEXT: return %[[Y]]
func.func @commuted(%x: tensor<2x1x2x2xf32>) -> tensor<2x1x2x2xf32> {
  %cos = sinter.constant dense<[[1.0, 1.0], [0.5, 0.5]]> : tensor<2x2xf32>
  %sin = sinter.constant dense<[[0.0, 0.0], [0.8, 0.8]]> : tensor<2x2xf32>
  %xc = sinter.mul %cos, %x : (tensor<2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<2x1x2x2xf32>
  %lo = sinter.slice %x {ends = array<i64: 2, 1, 2, 1>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<2x1x2x2xf32>) -> tensor<2x1x2x1xf32>
  %hi = sinter.slice %x {ends = array<i64: 2, 1, 2, 2>, starts = array<i64: 0, 0, 0, 1>, steps = array<i64: 1, 1, 1, 1>} : (tensor<2x1x2x2xf32>) -> tensor<2x1x2x1xf32>
  %nhi = sinter.neg %hi : (tensor<2x1x2x1xf32>) -> tensor<2x1x2x1xf32>
  %rot = sinter.concat %nhi, %lo {axis = 3 : i64} : (tensor<2x1x2x1xf32>, tensor<2x1x2x1xf32>) -> tensor<2x1x2x2xf32>
  %xs = sinter.mul %sin, %rot : (tensor<2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<2x1x2x2xf32>
  %y = sinter.add %xs, %xc : (tensor<2x1x2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<2x1x2x2xf32>
  return %y : tensor<2x1x2x2xf32>
}

// -----

// Negative: concat(-x1, x2) rotates the other way (the GPT-J / interleaved conventions
// differ too), and x * cos must use the tensor that is rotated.
// CHECK-LABEL: func.func @not_rope
// CHECK-NOT: sinter.rope
// CHECK: sinter.concat
// CHECK: sinter.concat
func.func @not_rope(%x: tensor<1x1x2x4xf32>, %z: tensor<1x1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) {
  %cos = sinter.constant dense<0.5> : tensor<1x1x2x4xf32>
  %sin = sinter.constant dense<0.25> : tensor<1x1x2x4xf32>
  %lo = sinter.slice %x {ends = array<i64: 1, 1, 2, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x1x2x4xf32>) -> tensor<1x1x2x2xf32>
  %hi = sinter.slice %x {ends = array<i64: 1, 1, 2, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x1x2x4xf32>) -> tensor<1x1x2x2xf32>
  %nlo = sinter.neg %lo : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %rot0 = sinter.concat %nlo, %hi {axis = 3 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x4xf32>
  %xc = sinter.mul %x, %cos : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %xs0 = sinter.mul %rot0, %sin : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %y0 = sinter.add %xc, %xs0 : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %nhi = sinter.neg %hi : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %rot1 = sinter.concat %nhi, %lo {axis = 3 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x4xf32>
  %zc = sinter.mul %z, %cos : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %xs1 = sinter.mul %rot1, %sin : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %y1 = sinter.add %zc, %xs1 : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  return %y0, %y1 : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>
}

// -----

// Negative: tables computed at run time are not constants.
// CHECK-LABEL: func.func @runtime_tables
// CHECK-NOT: sinter.rope
// CHECK: sinter.add
func.func @runtime_tables(%x: tensor<1x1x2x4xf32>, %cos: tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32> {
  %sin = sinter.constant dense<0.25> : tensor<1x1x2x4xf32>
  %lo = sinter.slice %x {ends = array<i64: 1, 1, 2, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x1x2x4xf32>) -> tensor<1x1x2x2xf32>
  %hi = sinter.slice %x {ends = array<i64: 1, 1, 2, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x1x2x4xf32>) -> tensor<1x1x2x2xf32>
  %nhi = sinter.neg %hi : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %rot = sinter.concat %nhi, %lo {axis = 3 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x4xf32>
  %xc = sinter.mul %x, %cos : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %xs = sinter.mul %rot, %sin : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %y = sinter.add %xc, %xs : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  return %y : tensor<1x1x2x4xf32>
}

// -----

// OLMo 2's apply_rotary_pos_emb: x and rotate_half(x) cast to f32, f32 tables, the sum cast
// back: a rope of the bf16 x with the f32 tables (rotated in f32, rounded once).
// CHECK-LABEL: func.func @rope_f32
// CHECK: %[[Y:.+]] = sinter.rope %arg0, %{{.+}}, %{{.+}} : (tensor<1x2x3x4xbf16>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x2x3x4xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @rope_f32(%x: tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16> {
  %cos = sinter.constant dense<0.5> : tensor<1x1x3x4xf32>
  %sin = sinter.constant dense<0.25> : tensor<1x1x3x4xf32>
  %xf = sinter.cast %x : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xf32>
  %xc = sinter.mul %xf, %cos : (tensor<1x2x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x2x3x4xf32>
  %lo = sinter.slice %x {ends = array<i64: 1, 2, 3, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x2xbf16>
  %hi = sinter.slice %x {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x2xbf16>
  %nhi = sinter.neg %hi : (tensor<1x2x3x2xbf16>) -> tensor<1x2x3x2xbf16>
  %rot = sinter.concat %nhi, %lo {axis = 3 : i64} : (tensor<1x2x3x2xbf16>, tensor<1x2x3x2xbf16>) -> tensor<1x2x3x4xbf16>
  %rotf = sinter.cast %rot : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xf32>
  %xs = sinter.mul %sin, %rotf : (tensor<1x1x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %yf = sinter.add %xc, %xs : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %y = sinter.cast %yf : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xbf16>
  return %y : tensor<1x2x3x4xbf16>
}

// -----

// Negative: the f32 sum is used as it is (no single rounding back to x's type), and one
// where only x * cos is widened (rotate_half(x) * sin stays bf16 and is cast up afterwards).
// CHECK-LABEL: func.func @rope_f32_not_narrowed
// CHECK-NOT: sinter.rope
// CHECK: return
func.func @rope_f32_not_narrowed(%x: tensor<1x2x3x4xbf16>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xbf16>) {
  %cos = sinter.constant dense<0.5> : tensor<1x1x3x4xf32>
  %sin = sinter.constant dense<0.25> : tensor<1x1x3x4xf32>
  %sinb = sinter.constant dense<0.25> : tensor<1x1x3x4xbf16>
  %xf = sinter.cast %x : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xf32>
  %xc = sinter.mul %xf, %cos : (tensor<1x2x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x2x3x4xf32>
  %lo = sinter.slice %x {ends = array<i64: 1, 2, 3, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x2xbf16>
  %hi = sinter.slice %x {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x2xbf16>
  %nhi = sinter.neg %hi : (tensor<1x2x3x2xbf16>) -> tensor<1x2x3x2xbf16>
  %rot = sinter.concat %nhi, %lo {axis = 3 : i64} : (tensor<1x2x3x2xbf16>, tensor<1x2x3x2xbf16>) -> tensor<1x2x3x4xbf16>
  %rotf = sinter.cast %rot : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xf32>
  %xs = sinter.mul %rotf, %sin : (tensor<1x2x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x2x3x4xf32>
  %y0 = sinter.add %xc, %xs : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %xsb = sinter.mul %rot, %sinb : (tensor<1x2x3x4xbf16>, tensor<1x1x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %xsf = sinter.cast %xsb : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xf32>
  %y1f = sinter.add %xc, %xsf : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %y1 = sinter.cast %y1f : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xbf16>
  return %y0, %y1 : tensor<1x2x3x4xf32>, tensor<1x2x3x4xbf16>
}

// -----

// GPT-NeoX's partial rotary: the first R = 4 of 8 columns rotate (raised on their own first),
// the rest pass through: one rope of the whole head with 4-column tables.
// CHECK-LABEL: func.func @partial_rotary
// CHECK: %[[Y:.+]] = sinter.rope %arg0, %{{.+}}, %{{.+}} : (tensor<1x2x3x8xbf16>, tensor<1x1x3x4xbf16>, tensor<1x1x3x4xbf16>) -> tensor<1x2x3x8xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @partial_rotary(%x: tensor<1x2x3x8xbf16>) -> tensor<1x2x3x8xbf16> {
  %cos = sinter.constant dense<0.5> : tensor<1x1x3x4xbf16>
  %sin = sinter.constant dense<0.25> : tensor<1x1x3x4xbf16>
  %r = sinter.slice %x {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x8xbf16>) -> tensor<1x2x3x4xbf16>
  %p = sinter.slice %x {ends = array<i64: 1, 2, 3, 8>, starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x8xbf16>) -> tensor<1x2x3x4xbf16>
  %xc = sinter.mul %r, %cos : (tensor<1x2x3x4xbf16>, tensor<1x1x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %lo = sinter.slice %r {ends = array<i64: 1, 2, 3, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x2xbf16>
  %hi = sinter.slice %r {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x2xbf16>
  %nhi = sinter.neg %hi : (tensor<1x2x3x2xbf16>) -> tensor<1x2x3x2xbf16>
  %rot = sinter.concat %nhi, %lo {axis = 3 : i64} : (tensor<1x2x3x2xbf16>, tensor<1x2x3x2xbf16>) -> tensor<1x2x3x4xbf16>
  %xs = sinter.mul %rot, %sin : (tensor<1x2x3x4xbf16>, tensor<1x1x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %e = sinter.add %xc, %xs : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %y = sinter.concat %e, %p {axis = 3 : i64} : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x8xbf16>
  return %y : tensor<1x2x3x8xbf16>
}

// -----

// Negative: the passed part is not the rest of the same head (columns 5.. of x after the
// rotated 4, and another tensor's columns): the rotated slice stays a rope of its own.
// CHECK-LABEL: func.func @not_partial_rotary
// CHECK: %[[R:.+]] = sinter.rope %{{.+}} : (tensor<1x2x3x4xbf16>
// CHECK-NOT: sinter.rope
// CHECK: sinter.concat %[[R]]
// CHECK-NOT: sinter.rope
// CHECK: sinter.concat %[[R]]
func.func @not_partial_rotary(%x: tensor<1x2x3x8xbf16>, %z: tensor<1x2x3x8xbf16>) -> (tensor<1x2x3x7xbf16>, tensor<1x2x3x8xbf16>) {
  %cos = sinter.constant dense<0.5> : tensor<1x1x3x4xbf16>
  %sin = sinter.constant dense<0.25> : tensor<1x1x3x4xbf16>
  %r = sinter.slice %x {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x8xbf16>) -> tensor<1x2x3x4xbf16>
  %xc = sinter.mul %r, %cos : (tensor<1x2x3x4xbf16>, tensor<1x1x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %lo = sinter.slice %r {ends = array<i64: 1, 2, 3, 2>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x2xbf16>
  %hi = sinter.slice %r {ends = array<i64: 1, 2, 3, 4>, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3x2xbf16>
  %nhi = sinter.neg %hi : (tensor<1x2x3x2xbf16>) -> tensor<1x2x3x2xbf16>
  %rot = sinter.concat %nhi, %lo {axis = 3 : i64} : (tensor<1x2x3x2xbf16>, tensor<1x2x3x2xbf16>) -> tensor<1x2x3x4xbf16>
  %xs = sinter.mul %rot, %sin : (tensor<1x2x3x4xbf16>, tensor<1x1x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %e = sinter.add %xc, %xs : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  %p = sinter.slice %x {ends = array<i64: 1, 2, 3, 8>, starts = array<i64: 0, 0, 0, 5>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x8xbf16>) -> tensor<1x2x3x3xbf16>
  %y0 = sinter.concat %e, %p {axis = 3 : i64} : (tensor<1x2x3x4xbf16>, tensor<1x2x3x3xbf16>) -> tensor<1x2x3x7xbf16>
  %q = sinter.slice %z {ends = array<i64: 1, 2, 3, 8>, starts = array<i64: 0, 0, 0, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x8xbf16>) -> tensor<1x2x3x4xbf16>
  %y1 = sinter.concat %e, %q {axis = 3 : i64} : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x8xbf16>
  return %y0, %y1 : tensor<1x2x3x7xbf16>, tensor<1x2x3x8xbf16>
}
