#!/usr/bin/env python3
"""Writes the emitter tests' models. generic_mix.onnx: ops that all go to the generic tier
(LayerNorm, GELU, transpose, softmax on a middle axis, concat, a gather at run-time indices,
ArgMax, a batched matmul of activations, f16 casts). generic_tiles.onnx: a transpose of the two
innermost dimensions added to another input (a tiled kernel); generic_tiles16.onnx: the same in
bf16, once with even and once with odd extents (64-wide tiles read and written in pairs). generic_rounded.onnx: tanh and
tanh-GELU with bf16, f16 and f32 results. generic_rope.onnx: Hugging Face's RoPE on an f16
input, once with f16 tables (each product and the sum rounded), once in OLMo 2's form
(x cast to f32, f32 tables, the sum cast back once) and once on the first half of each head
only (GPT-NeoX's partial rotary: 2-column tables, the other 2 columns passed through). Run from this folder; committed."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, H, B, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.INT64


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


rng = np.random.default_rng(0)
nodes = [
    helper.make_node("LayerNormalization", ["x", "w", "b"], ["ln"], axis=-1),
    helper.make_node("Gelu", ["ln"], ["g"]),
    helper.make_node("Transpose", ["g"], ["t"], perm=[0, 2, 1]),
    helper.make_node("Softmax", ["t"], ["s"], axis=1),
    helper.make_node("Concat", ["s", "t"], ["c"], axis=2),
    helper.make_node("Gather", ["c", "idx"], ["gt"], axis=1),
    helper.make_node("ArgMax", ["gt"], ["am"], axis=2, keepdims=0),
    helper.make_node("MatMul", ["x", "t"], ["mm"]),
    helper.make_node("Cast", ["mm"], ["half"], to=H),
]
inits = [numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "w"),
         numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b")]
g = helper.make_graph(nodes, "generic_mix", [vi("x", [2, 8, 16]), vi("idx", [3], I64)],
                      [vi("am", [2, 3], I64), vi("half", [2, 8, 8], H)], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
m.ir_version = 9
onnx.checker.check_model(m)
onnx.save(m, "generic_mix.onnx")

g = helper.make_graph([helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
                       helper.make_node("Add", ["t", "y"], ["z"])], "generic_tiles",
                      [vi("x", [3, 40, 70]), vi("y", [3, 70, 40])], [vi("z", [3, 70, 40])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
m.ir_version = 9
onnx.checker.check_model(m)
onnx.save(m, "generic_tiles.onnx")

g = helper.make_graph([helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
                       helper.make_node("Add", ["t", "y"], ["z"]),
                       helper.make_node("Transpose", ["odd_x"], ["odd_t"], perm=[0, 2, 1]),
                       helper.make_node("Add", ["odd_t", "odd_y"], ["odd_z"])],
                      "generic_tiles16",
                      [vi("x", [3, 70, 40], B), vi("y", [3, 40, 70], B),
                       vi("odd_x", [3, 69, 41], B), vi("odd_y", [3, 41, 69], B)],
                      [vi("z", [3, 40, 70], B), vi("odd_z", [3, 41, 69], B)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
m.ir_version = 9
onnx.checker.check_model(m)
onnx.save(m, "generic_tiles16.onnx")

nodes = [helper.make_node("Tanh", ["b"], ["tb"]),
         helper.make_node("Gelu", ["h"], ["gh"], approximate="tanh"),
         helper.make_node("Tanh", ["f"], ["tf"])]
g = helper.make_graph(nodes, "generic_rounded", [vi("b", [4, 64], B), vi("h", [4, 64], H),
                                                 vi("f", [4, 64])],
                      [vi("tb", [4, 64], B), vi("gh", [4, 64], H), vi("tf", [4, 64])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
m.ir_version = 9
onnx.checker.check_model(m)
onnx.save(m, "generic_rounded.onnx")

half = 2
cos = np.cos(np.arange(12, dtype=np.float32) / 7).reshape(1, 1, 3, 4)
sin = np.sin(np.arange(12, dtype=np.float32) / 7).reshape(1, 1, 3, 4)
starts_lo, ends_lo = np.array([0], np.int64), np.array([half], np.int64)
starts_hi, ends_hi = np.array([half], np.int64), np.array([4], np.int64)
axes = np.array([3], np.int64)


def rotate_half(x, prefix):
    return [helper.make_node("Slice", [x, "lo_s", "lo_e", "axes"], [prefix + "lo"]),
            helper.make_node("Slice", [x, "hi_s", "hi_e", "axes"], [prefix + "hi"]),
            helper.make_node("Neg", [prefix + "hi"], [prefix + "nhi"]),
            helper.make_node("Concat", [prefix + "nhi", prefix + "lo"], [prefix + "rot"], axis=3)]


nodes = rotate_half("x", "h_") + [
    helper.make_node("Mul", ["x", "cos16"], ["h_xc"]),
    helper.make_node("Mul", ["h_rot", "sin16"], ["h_xs"]),
    helper.make_node("Add", ["h_xc", "h_xs"], ["y16"]),
] + rotate_half("x", "f_") + [
    helper.make_node("Cast", ["x"], ["f_x"], to=F),
    helper.make_node("Cast", ["f_rot"], ["f_rotf"], to=F),
    helper.make_node("Mul", ["f_x", "cos32"], ["f_xc"]),
    helper.make_node("Mul", ["f_rotf", "sin32"], ["f_xs"]),
    helper.make_node("Add", ["f_xc", "f_xs"], ["f_y"]),
    helper.make_node("Cast", ["f_y"], ["y32"], to=H),
]
# Partial rotary: x[..., :2] rotated with 2-column tables, x[..., 2:] passed.
nodes += [
    helper.make_node("Slice", ["x", "lo_s", "lo_e", "axes"], ["p_x"]),
    helper.make_node("Slice", ["x", "hi_s", "hi_e", "axes"], ["p_pass"]),
    helper.make_node("Slice", ["p_x", "p0", "p1", "axes"], ["p_lo"]),
    helper.make_node("Slice", ["p_x", "p1", "lo_e", "axes"], ["p_hi"]),
    helper.make_node("Neg", ["p_hi"], ["p_nhi"]),
    helper.make_node("Concat", ["p_nhi", "p_lo"], ["p_rot"], axis=3),
    helper.make_node("Mul", ["p_x", "pcos"], ["p_xc"]),
    helper.make_node("Mul", ["p_rot", "psin"], ["p_xs"]),
    helper.make_node("Add", ["p_xc", "p_xs"], ["p_e"]),
    helper.make_node("Concat", ["p_e", "p_pass"], ["ypart"], axis=3),
]
inits = [numpy_helper.from_array(cos[..., :2].astype(np.float16), "pcos"),
         numpy_helper.from_array(sin[..., :2].astype(np.float16), "psin"),
         numpy_helper.from_array(np.array([0], np.int64), "p0"),
         numpy_helper.from_array(np.array([1], np.int64), "p1"),
         numpy_helper.from_array(cos.astype(np.float16), "cos16"),
         numpy_helper.from_array(sin.astype(np.float16), "sin16"),
         numpy_helper.from_array(cos, "cos32"), numpy_helper.from_array(sin, "sin32"),
         numpy_helper.from_array(starts_lo, "lo_s"), numpy_helper.from_array(ends_lo, "lo_e"),
         numpy_helper.from_array(starts_hi, "hi_s"), numpy_helper.from_array(ends_hi, "hi_e"),
         numpy_helper.from_array(axes, "axes")]
g = helper.make_graph(nodes, "generic_rope", [vi("x", [1, 2, 3, 4], H)],
                      [vi("y16", [1, 2, 3, 4], H), vi("y32", [1, 2, 3, 4], H),
                       vi("ypart", [1, 2, 3, 4], H)], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
m.ir_version = 9
onnx.checker.check_model(m)
onnx.save(m, "generic_rope.onnx")
