#!/usr/bin/env python3
"""Writes the small models of quantized weights the importer's tests read: ops/DequantizeLinear
and ops/MatMulNBits (ops-to-launch.test compiles them through the launch phase) and one model
per layout the importer refuses (quantized.test).

Run from this folder: python3 make_quantized_inputs.py. The outputs are committed.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def save(path, nodes, inputs, outputs, inits=(), opset=18, microsoft=False):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset)]
    if microsoft:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    m = helper.make_model(g, opset_imports=opsets)
    m.ir_version = 10 if opset >= 21 else 9
    if not microsoft:
        onnx.checker.check_model(m)
    onnx.save(m, path)


def arr(name, a):
    return numpy_helper.from_array(a, name)


rng = np.random.default_rng(7)
wq = rng.integers(-128, 128, (16, 8)).astype(np.int8)
scale = np.full(8, 0.01, np.float32)
dq = [helper.make_node("DequantizeLinear", ["wq", "s"], ["w"], axis=1, name="dq"),
      helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
os.makedirs("ops", exist_ok=True)
save("ops/DequantizeLinear.onnx", dq, [vi("x", [2, 16])], [vi("y", [2, 8])],
     [arr("wq", wq), arr("s", scale)])


def nbits(path, k=64, n=8, bits=4, block=32, extra_inputs=(), inits=(), name="mnb", **attrs):
    blocks = -(-k // block)
    b = rng.integers(0, 256, (n, blocks, block * bits // 8)).astype(np.uint8)
    s = np.full(n * blocks, 0.05, np.float32)
    node = helper.make_node("MatMulNBits", ["x", "B", "scales", *extra_inputs], ["y"],
                            domain="com.microsoft", name=name, K=k, N=n, bits=bits,
                            block_size=block, **attrs)
    save(path, [node], [vi("x", [3, k])], [vi("y", [3, n])],
         [arr("B", b), arr("scales", s), *inits], microsoft=True)


nbits("ops/MatMulNBits.onnx")
# Refused layouts and inputs.
save("quant_dq_activation.onnx", [helper.make_node("DequantizeLinear", ["xq", "s"], ["y"], name="dq")],
     [vi("xq", [4], TensorProto.INT8)], [vi("y", [4])], [arr("s", np.array(0.5, np.float32))])
save("quant_dq_bad_axis_scale.onnx", dq, [vi("x", [2, 16])], [vi("y", [2, 8])],
     [arr("wq", wq), arr("s", np.full(5, 0.01, np.float32))])
save("quant_dq_bad_blocks.onnx",
     [helper.make_node("DequantizeLinear", ["wq", "s"], ["w"], axis=0, block_size=4, name="dq"),
      helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
     [vi("x", [2, 16])], [vi("y", [2, 8])], [arr("wq", wq), arr("s", np.full((3, 8), 0.01, np.float32))],
     opset=21)
nbits("quant_nbits_bits3.onnx", bits=3, block=32)
nbits("quant_nbits_block8.onnx", block=8)
nbits("quant_nbits_gidx_packed_zp.onnx", extra_inputs=["zp", "g"],
      inits=[arr("zp", np.zeros(8, np.uint8)), arr("g", (np.arange(64) // 32).astype(np.int32))])
nbits("quant_nbits_bad_zp.onnx", extra_inputs=["zp"], inits=[arr("zp", np.zeros(5, np.uint8))])
save("quant_ms_unknown.onnx", [helper.make_node("FusedGemm", ["x", "x"], ["y"], domain="com.microsoft",
                                                name="fg")],
     [vi("x", [4, 4])], [vi("y", [4, 4])], microsoft=True)
save("quant_u8_other_reader.onnx",
     [helper.make_node("Cast", ["u"], ["c"], to=F, name="cast"),
      helper.make_node("Add", ["x", "c"], ["y"], name="add")],
     [vi("x", [4])], [vi("y", [4])], [arr("u", np.arange(4, dtype=np.uint8))])
