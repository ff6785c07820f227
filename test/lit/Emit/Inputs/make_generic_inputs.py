#!/usr/bin/env python3
"""Writes generic_mix.onnx: one model whose ops all go to the generic tier (LayerNorm, GELU,
transpose, softmax on a middle axis, concat, a gather at run-time indices, ArgMax, a batched
matmul of activations, f16 casts), for the emitter tests. Run from this folder; committed."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, H, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64


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
