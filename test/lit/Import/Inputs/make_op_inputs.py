#!/usr/bin/env python3
"""Writes one small ONNX model per importable op into ops/ (opset 18 unless the op needs
another): the lit test ops-to-launch.test compiles each through the launch phase.

Run from this folder: python3 make_op_inputs.py. The outputs are committed.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, H, I64, BOOL = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64, TensorProto.BOOL


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def save(name, nodes, inputs, outputs, inits=(), opset=18):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join("ops", name + ".onnx"))


def ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def unary(op, t=F, out_t=None, **attrs):
    save(op, [helper.make_node(op, ["x"], ["y"], **attrs)], [vi("x", [3, 5], t)],
         [vi("y", [3, 5], out_t or t)])


def binary(op, t=F, out_t=None, **attrs):
    save(op, [helper.make_node(op, ["a", "b"], ["y"], **attrs)], [vi("a", [3, 5], t), vi("b", [5], t)],
         [vi("y", [3, 5], out_t or t)])


os.makedirs("ops", exist_ok=True)
for op in ["Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Sin", "Cos", "Tanh", "Sigmoid", "Erf",
           "Relu", "Softplus", "HardSigmoid", "HardSwish", "Sign", "Floor", "Ceil", "Round"]:
    unary(op)
unary("LeakyRelu", alpha=0.2)
unary("Elu", alpha=0.5)
for op in ["Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softsign",
           "Mish"]:
    unary(op)
unary("Selu", alpha=1.5, gamma=2.0)
unary("Celu", alpha=0.5)
unary("ThresholdedRelu", alpha=0.25)
unary("Shrink", lambd=0.3, bias=0.1)
save("Swish", [helper.make_node("Swish", ["x"], ["y"], alpha=0.5)], [vi("x", [3, 5])],
     [vi("y", [3, 5])], opset=24)
for op in ["Sum", "Mean"]:
    save(op, [helper.make_node(op, ["a", "b", "c"], ["y"])],
         [vi("a", [3, 5]), vi("b", [5]), vi("c", [3, 1])], [vi("y", [3, 5])])
save("Gelu", [helper.make_node("Gelu", ["x"], ["y"], approximate="tanh")], [vi("x", [3, 5])],
     [vi("y", [3, 5])], opset=20)
unary("Not", BOOL)
unary("IsNaN", F, BOOL)
unary("IsInf", F, BOOL)
for op in ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]:
    binary(op)
binary("Mod", I64)
save("ModFloat", [helper.make_node("Mod", ["a", "b"], ["y"], fmod=1)], [vi("a", [3, 5]), vi("b", [5])],
     [vi("y", [3, 5])])
for op in ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]:
    binary(op, F, BOOL)
for op in ["And", "Or", "Xor"]:
    binary(op, BOOL)
save("Where", [helper.make_node("Where", ["c", "a", "b"], ["y"])],
     [vi("c", [3, 1], BOOL), vi("a", [3, 5]), vi("b", [5])], [vi("y", [3, 5])])
save("Clip", [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], [vi("x", [3, 5])], [vi("y", [3, 5])],
     [numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
      numpy_helper.from_array(np.array(0.5, np.float32), "hi")])
save("Cast", [helper.make_node("Cast", ["x"], ["y"], to=H)], [vi("x", [3, 5])], [vi("y", [3, 5], H)])
save("CastLike", [helper.make_node("CastLike", ["x", "t"], ["y"])], [vi("x", [3, 5]), vi("t", [1], H)],
     [vi("y", [3, 5], H)])
for op, kind in [("ReduceSum", 0), ("ReduceMean", 0), ("ReduceMax", 0), ("ReduceMin", 0), ("ReduceProd", 0),
                 ("ReduceL1", 0), ("ReduceL2", 0), ("ReduceSumSquare", 0), ("ReduceLogSumExp", 0)]:
    save(op, [helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)], [vi("x", [3, 5, 4])],
         [vi("y", [3, 4])], [ints("axes", [1])])
for op in ["ArgMax", "ArgMin"]:
    save(op, [helper.make_node(op, ["x"], ["y"], axis=1)], [vi("x", [3, 5])], [vi("y", [3, 1], I64)])
save("CumSum", [helper.make_node("CumSum", ["x", "a"], ["y"], exclusive=1, reverse=1)], [vi("x", [3, 5])],
     [vi("y", [3, 5])], [ints("a", [1])])
save("CumProd", [helper.make_node("CumProd", ["x", "a"], ["y"], exclusive=1)], [vi("x", [3, 5])],
     [vi("y", [3, 5])], [ints("a", [1])], opset=26)
save("ScatterND", [helper.make_node("ScatterND", ["x", "i", "u"], ["y"])],
     [vi("x", [4, 3]), vi("i", [2, 1], I64), vi("u", [2, 3])], [vi("y", [4, 3])])
save("ScatterNDMax", [helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="max")],
     [vi("x", [4, 3]), vi("i", [2, 2], I64), vi("u", [2])], [vi("y", [4, 3])])
save("Softmax", [helper.make_node("Softmax", ["x"], ["y"], axis=1)], [vi("x", [2, 6, 4])], [vi("y", [2, 6, 4])])
save("LogSoftmax", [helper.make_node("LogSoftmax", ["x"], ["y"])], [vi("x", [2, 6])], [vi("y", [2, 6])])
save("LayerNormalization", [helper.make_node("LayerNormalization", ["x", "w", "b"], ["y"])],
     [vi("x", [2, 3, 8]), vi("w", [8]), vi("b", [8])], [vi("y", [2, 3, 8])])
save("RMSNormalization", [helper.make_node("RMSNormalization", ["x", "w"], ["y"])],
     [vi("x", [2, 3, 8]), vi("w", [8])], [vi("y", [2, 3, 8])], opset=23)
save("Transpose", [helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], [vi("x", [2, 3, 4])],
     [vi("y", [4, 2, 3])])
save("Reshape", [helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", [2, 3, 4])], [vi("y", [6, 4])],
     [ints("s", [6, 4])])
save("Flatten", [helper.make_node("Flatten", ["x"], ["y"], axis=2)], [vi("x", [2, 3, 4])], [vi("y", [6, 4])])
save("Squeeze", [helper.make_node("Squeeze", ["x", "a"], ["y"])], [vi("x", [2, 1, 4])], [vi("y", [2, 4])],
     [ints("a", [1])])
save("Unsqueeze", [helper.make_node("Unsqueeze", ["x", "a"], ["y"])], [vi("x", [2, 4])], [vi("y", [2, 1, 4])],
     [ints("a", [1])])
save("Slice", [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])], [vi("x", [4, 6])],
     [vi("y", [4, 2])], [ints("s", [5]), ints("e", [0]), ints("a", [1]), ints("st", [-2])])
save("Concat", [helper.make_node("Concat", ["a", "b"], ["y"], axis=1)], [vi("a", [2, 3]), vi("b", [2, 4])],
     [vi("y", [2, 7])])
save("Split", [helper.make_node("Split", ["x", "s"], ["y", "z"], axis=1)], [vi("x", [2, 6])],
     [vi("y", [2, 2]), vi("z", [2, 4])], [ints("s", [2, 4])])
save("Gather", [helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], [vi("x", [3, 5]), vi("i", [2, 2], I64)],
     [vi("y", [3, 2, 2])])
save("GatherND", [helper.make_node("GatherND", ["x", "i"], ["y"])], [vi("x", [3, 5]), vi("i", [4, 2], I64)],
     [vi("y", [4])])
save("Expand", [helper.make_node("Expand", ["x", "s"], ["y"])], [vi("x", [3, 1])], [vi("y", [2, 3, 4])],
     [ints("s", [2, 3, 4])])
save("Tile", [helper.make_node("Tile", ["x", "r"], ["y"])], [vi("x", [2, 3])], [vi("y", [4, 3])],
     [ints("r", [2, 1])])
save("Trilu", [helper.make_node("Trilu", ["x"], ["y"], upper=0)], [vi("x", [4, 4])], [vi("y", [4, 4])])
save("Identity", [helper.make_node("Identity", ["x"], ["y"])], [vi("x", [4])], [vi("y", [4])])
save("Dropout", [helper.make_node("Dropout", ["x"], ["y"])], [vi("x", [4])], [vi("y", [4])])
save("MatMul", [helper.make_node("MatMul", ["a", "b"], ["y"])], [vi("a", [2, 3, 4]), vi("b", [2, 4, 5])],
     [vi("y", [2, 3, 5])])
save("Gemm", [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
     [vi("a", [3, 4]), vi("b", [5, 4]), vi("c", [5])], [vi("y", [3, 5])])
save("Range", [helper.make_node("Range", ["s", "l", "d"], ["r"]), helper.make_node("Add", ["x", "r"], ["y"])],
     [vi("x", [4])], [vi("y", [4])],
     [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("s", 1.0), ("l", 5.0), ("d", 1.0))])
save("Size", [helper.make_node("Size", ["x"], ["n"]), helper.make_node("Cast", ["n"], ["f"], to=F),
              helper.make_node("Mul", ["x", "f"], ["y"])], [vi("x", [4])], [vi("y", [4])])
save("Attention", [helper.make_node("Attention", ["q", "k", "v"], ["y"])],
     [vi("q", [1, 2, 3, 4]), vi("k", [1, 2, 3, 4]), vi("v", [1, 2, 3, 4])], [vi("y", [1, 2, 3, 4])], opset=23)
save("AttentionPast", [helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "k2", "v2"],
                                       is_causal=1, softcap=2.0, q_num_heads=4, kv_num_heads=2)],
     [vi("q", [1, 3, 16]), vi("k", [1, 3, 8]), vi("v", [1, 3, 8]), vi("pk", [1, 2, 5, 4]),
      vi("pv", [1, 2, 5, 4])],
     [vi("y", [1, 3, 16]), vi("k2", [1, 2, 8, 4]), vi("v2", [1, 2, 8, 4])], opset=23)
save("AttentionScores", [helper.make_node("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"],
                                         qk_matmul_output_mode=2)],
     [vi("q", [1, 2, 3, 4]), vi("k", [1, 2, 5, 4]), vi("v", [1, 2, 5, 4]), vi("m", [3, 5], BOOL)],
     [vi("y", [1, 2, 3, 4]), vi("qk", [1, 2, 3, 5])], opset=23)
save("GatherElements", [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
     [vi("x", [3, 5]), vi("i", [3, 2], I64)], [vi("y", [3, 2])])
save("ReduceMaxBool", [helper.make_node("ReduceMax", ["x", "a"], ["y"])], [vi("x", [3, 5], BOOL)],
     [vi("y", [3, 1], BOOL)], [ints("a", [1])])
# any / all over no elements: false / true (empty-bool-reductions.test).
for op in ["ReduceMax", "ReduceMin"]:
    save(op + "BoolEmpty", [helper.make_node(op, ["x", "a"], ["y"])], [vi("x", [2, 0, 4], BOOL)],
         [vi("y", [2, 1, 4], BOOL)], [ints("a", [1])])
save("Pad", [helper.make_node("Pad", ["x", "p", "v"], ["y"])], [vi("x", [3, 4])], [vi("y", [4, 7])],
     [ints("p", [1, 2, 0, 1]), numpy_helper.from_array(np.array(1.5, np.float32), "v")])
# Conv: padding, strides, groups, bias (the window table, the appended zero and a grouped
# product); a 1x1 without a window table.
save("Conv", [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=2, strides=[2, 1],
                               pads=[1, 0, 1, 2])],
     [vi("x", [2, 4, 5, 6]), vi("w", [6, 2, 3, 3]), vi("b", [6])], [vi("y", [2, 6, 3, 6])])
save("Conv1x1", [helper.make_node("Conv", ["x", "w"], ["y"])],
     [vi("x", [1, 8, 4, 4]), vi("w", [3, 8, 1, 1])], [vi("y", [1, 3, 4, 4])])
save("MaxPool", [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1], ceil_mode=1)],
     [vi("x", [1, 2, 6, 6])], [vi("y", [1, 2, 4, 4])])
save("AveragePool", [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2],
                                      pads=[1, 0], count_include_pad=1)],
     [vi("x", [2, 3, 5])], [vi("y", [2, 3, 5])], opset=19)
save("GlobalAveragePool", [helper.make_node("GlobalAveragePool", ["x"], ["y"])],
     [vi("x", [2, 3, 4, 5])], [vi("y", [2, 3, 1, 1])])
save("MaxPoolIndices", [helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2])],
     [vi("x", [2, 3, 4, 4])], [vi("y", [2, 3, 3, 3]), vi("i", [2, 3, 3, 3], I64)])
save("GlobalMaxPool", [helper.make_node("GlobalMaxPool", ["x"], ["y"])],
     [vi("x", [2, 3, 4, 5])], [vi("y", [2, 3, 1, 1])])
save("BatchNormalization", [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
     [vi("x", [2, 3, 4, 4]), vi("s", [3]), vi("b", [3]), vi("m", [3]), vi("v", [3])],
     [vi("y", [2, 3, 4, 4])])
save("InstanceNormalization", [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"])],
     [vi("x", [2, 3, 4, 4]), vi("s", [3]), vi("b", [3])], [vi("y", [2, 3, 4, 4])])
save("GroupNormalization", [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                             num_groups=2)],
     [vi("x", [2, 4, 3, 3]), vi("s", [4]), vi("b", [4])], [vi("y", [2, 4, 3, 3])], opset=21)
save("RotaryEmbedding", [helper.make_node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"],
                                          interleaved=1, rotary_embedding_dim=4)],
     [vi("x", [1, 2, 3, 8]), vi("c", [16, 2]), vi("s", [16, 2]), vi("p", [1, 3], I64)],
     [vi("y", [1, 2, 3, 8])], opset=23)
def floats(name, values):
    return numpy_helper.from_array(np.array(values, np.float32), name)


save("ResizeLinear", [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")],
     [vi("x", [1, 2, 3, 4])], [vi("y", [1, 2, 6, 8])], [floats("s", [1, 1, 2, 2])])
save("ResizeNearest", [helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="nearest",
                                        coordinate_transformation_mode="asymmetric")],
     [vi("x", [1, 2, 3, 4], I64)], [vi("y", [1, 2, 6, 2], I64)], [ints("z", [1, 2, 6, 2])])
save("ConvTranspose", [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2],
                                        pads=[1, 1, 1, 1], output_padding=[1, 1])],
     [vi("x", [1, 2, 3, 3]), vi("w", [2, 3, 3, 3]), vi("b", [3])], [vi("y", [1, 3, 6, 6])])
save("ReduceLogSum", [helper.make_node("ReduceLogSum", ["x", "a"], ["y"])], [vi("x", [3, 5])],
     [vi("y", [3, 1])], [ints("a", [1])])
save("LpNormalization", [helper.make_node("LpNormalization", ["x"], ["y"], p=1)], [vi("x", [3, 5])],
     [vi("y", [3, 5])])
save("LpPool", [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=3)],
     [vi("x", [1, 2, 4, 4])], [vi("y", [1, 2, 3, 3])])
save("SpaceToDepth", [helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)],
     [vi("x", [1, 2, 4, 6])], [vi("y", [1, 8, 2, 3])])
save("DepthToSpace", [helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD")],
     [vi("x", [1, 8, 2, 3])], [vi("y", [1, 2, 4, 6])])
save("OneHot", [helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=0)],
     [vi("i", [2, 3], I64), vi("v", [2])], [vi("y", [5, 2, 3])], [ints("d", 5)])
save("Hardmax", [helper.make_node("Hardmax", ["x"], ["y"], axis=0)], [vi("x", [3, 5])],
     [vi("y", [3, 5])])
save("Einsum", [helper.make_node("Einsum", ["a", "b"], ["y"], equation="...ij,...jk->...ik")],
     [vi("a", [2, 1, 3, 4]), vi("b", [5, 4, 2])], [vi("y", [2, 5, 3, 2])])
save("TopK", [helper.make_node("TopK", ["x", "k"], ["v", "i"])], [vi("x", [4, 8])],
     [vi("v", [4, 2]), vi("i", [4, 2], I64)], [ints("k", [2])])
save("TopKUint64", [helper.make_node("TopK", ["x", "k"], ["v", "i"])], [vi("x", [3, 4], TensorProto.UINT64)],
     [vi("v", [3, 2], TensorProto.UINT64), vi("i", [3, 2], I64)], [ints("k", [2])])
save("PadReflect", [helper.make_node("Pad", ["x", "p", "", "a"], ["y"], mode="reflect")], [vi("x", [3, 4])],
     [vi("y", [3, 6])], [ints("p", [1, 1]), ints("a", [1])])
U8, I8, U16, I16, U32, U64, F64 = (TensorProto.UINT8, TensorProto.INT8, TensorProto.UINT16,
                                   TensorProto.INT16, TensorProto.UINT32, TensorProto.UINT64,
                                   TensorProto.DOUBLE)
save("PRelu", [helper.make_node("PRelu", ["x", "s"], ["y"])], [vi("x", [2, 3, 4]), vi("s", [3, 1])],
     [vi("y", [2, 3, 4])])
unary("BitwiseNot", U16)
binary("BitwiseAnd", I16)
binary("BitwiseOr", U32)
binary("BitwiseXor", I8)
binary("BitShift", U64, direction="RIGHT")
save("MaxPoolUint8", [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 1, 1])],
     [vi("x", [1, 2, 3, 3], U8)], [vi("y", [1, 2, 4, 4], U8)])
save("QuantizeLinear", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)],
     [vi("x", [2, 3, 4]), vi("s", [3]), vi("z", [3], I8)], [vi("y", [2, 3, 4], I8)])
save("QuantizeLinearBlocked", [helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1,
                                                block_size=2)],
     [vi("x", [2, 4]), vi("s", [2, 2])], [vi("y", [2, 4], U8)], opset=21)
save("DequantizeLinearActivation", [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"])],
     [vi("x", [2, 3], U8), vi("s", []), vi("z", [], U8)], [vi("y", [2, 3])])
save("MatMulInteger", [helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])],
     [vi("a", [4, 8], U8), vi("b", [8, 3], I8), vi("za", [4], U8), vi("zb", [3], I8)],
     [vi("y", [4, 3], TensorProto.INT32)])
save("QLinearMatMul", [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
     [vi("a", [4, 8], U8), vi("sa", []), vi("za", [], U8), vi("b", [8, 3], I8), vi("sb", [3]),
      vi("zb", [3], I8), vi("sy", []), vi("zy", [], I8)], [vi("y", [4, 3], I8)])
save("DynamicQuantizeLinear", [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])],
     [vi("x", [3, 5])], [vi("y", [3, 5], U8), vi("s", []), vi("z", [], U8)])
save("DFT", [helper.make_node("DFT", ["x", "", "a"], ["y"], onesided=1)], [vi("x", [2, 8, 1])],
     [vi("y", [2, 5, 2])], [ints("a", 1)], opset=20)
save("STFT", [helper.make_node("STFT", ["x", "s", "w"], ["y"])], [vi("x", [1, 32, 1]), vi("w", [8])],
     [vi("y", [1, 7, 5, 2])], [ints("s", 4)], opset=17)
save("MelWeightMatrix", [helper.make_node("MelWeightMatrix", ["b", "n", "r", "lo", "hi"], ["y"])], [],
     [vi("y", [5, 4])], [ints("b", 4), ints("n", 8), ints("r", 8000),
                         numpy_helper.from_array(np.array(0, np.float32), "lo"),
                         numpy_helper.from_array(np.array(4000, np.float32), "hi")], opset=17)
save("GridSample", [helper.make_node("GridSample", ["x", "g"], ["y"], mode="cubic", padding_mode="reflection")],
     [vi("x", [1, 2, 4, 5]), vi("g", [1, 3, 3, 2])], [vi("y", [1, 2, 3, 3])], opset=20)
save("AffineGrid", [helper.make_node("AffineGrid", ["t", "s"], ["y"], align_corners=1)], [vi("t", [2, 2, 3])],
     [vi("y", [2, 4, 5, 2])], [ints("s", [2, 3, 4, 5])], opset=20)
save("RangeOneElement", [helper.make_node("Range", ["a", "b", "c"], ["y"])], [], [vi("y", [4], I64)],
     [ints("a", [1]), ints("b", [9]), ints("c", 2)])
# One-element Range bounds give compile-time axes (onnx 1.23.1's RMSNormalization function).
save("RangeOneElementAxes", [helper.make_node("Range", ["a", "b", "c"], ["axes"]),
                             helper.make_node("ReduceMean", ["x", "axes"], ["y"])],
     [vi("x", [2, 3, 4])], [vi("y", [2, 1, 1])], [ints("a", [1]), ints("b", [3]), ints("c", [1])])
save("MaxUnpool", [helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
     [vi("x", [1, 2, 2, 2]), vi("i", [1, 2, 2, 2], I64)], [vi("y", [1, 2, 5, 5])], [ints("s", [1, 2, 5, 5])])
save("Col2Im", [helper.make_node("Col2Im", ["x", "im", "bl"], ["y"], strides=[2, 1], pads=[1, 0, 1, 0])],
     [vi("x", [2, 12, 9])], [vi("y", [2, 3, 5, 4])], [ints("im", [5, 4]), ints("bl", [2, 2])])
save("ConvInteger", [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1])],
     [vi("x", [1, 2, 4, 4], U8), vi("w", [3, 2, 3, 3], U8), vi("xz", [], U8), vi("wz", [3], U8)],
     [vi("y", [1, 3, 4, 4], TensorProto.INT32)])
save("QLinearConv", [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"])],
     [vi("x", [1, 2, 4, 4], U8), vi("xs", []), vi("xz", [], U8), vi("w", [3, 2, 3, 3], I8), vi("ws", [3]),
      vi("wz", [3], I8), vi("ys", []), vi("yz", [], U8), vi("b", [3], TensorProto.INT32)],
     [vi("y", [1, 3, 2, 2], U8)])
save("GemmDouble", [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)], [vi("x", [4, 8], F64)],
     [vi("y", [4, 3], F64)], [numpy_helper.from_array(np.linspace(-1, 1, 24).reshape(3, 8), "w"),
                              numpy_helper.from_array(np.array([0.5, -0.5, 2.0]), "b")])
save("MatMulDouble", [helper.make_node("MatMul", ["a", "b"], ["y"])], [vi("a", [2, 4, 8], F64),
                                                                       vi("b", [2, 8, 3], F64)],
     [vi("y", [2, 4, 3], F64)])
for cell, gates in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
    outs = ["y", "h"] + (["c"] if cell == "LSTM" else [])
    save(cell, [helper.make_node(cell, ["x", "w", "r", "b", "lens"], outs, hidden_size=4,
                                 direction="bidirectional")],
         [vi("x", [3, 2, 5]), vi("w", [2, gates * 4, 5]), vi("r", [2, gates * 4, 4]),
          vi("b", [2, 8 * gates]), vi("lens", [2], TensorProto.INT32)],
         [vi("y", [3, 2, 2, 4]), vi("h", [2, 2, 4])] + ([vi("c", [2, 2, 4])] if cell == "LSTM" else []))
save("ScatterElements", [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1,
                                          reduction="add")],
     [vi("x", [3, 5]), vi("i", [3, 2], I64), vi("u", [3, 2])], [vi("y", [3, 5])])
save("ReverseSequence", [helper.make_node("ReverseSequence", ["x", "lens"], ["y"], time_axis=1,
                                          batch_axis=0)],
     [vi("x", [3, 5, 2]), vi("lens", [3], I64)], [vi("y", [3, 5, 2])])
save("CenterCropPad", [helper.make_node("CenterCropPad", ["x", "s"], ["y"], axes=[-2, -1])],
     [vi("x", [2, 5, 4])], [vi("y", [2, 3, 7])], [ints("s", [3, 7])])
save("EyeLike", [helper.make_node("EyeLike", ["x"], ["e"], k=1, dtype=TensorProto.INT32),
                 helper.make_node("Cast", ["e"], ["c"], to=F), helper.make_node("Add", ["x", "c"], ["y"])],
     [vi("x", [3, 4])], [vi("y", [3, 4])])
save("HannWindow", [helper.make_node("HannWindow", ["n"], ["w"]), helper.make_node("Mul", ["x", "w"], ["y"])],
     [vi("x", [2, 8])], [vi("y", [2, 8])], [numpy_helper.from_array(np.array(8, np.int64), "n")])
save("MeanVarianceNormalization", [helper.make_node("MeanVarianceNormalization", ["x"], ["y"])],
     [vi("x", [2, 3, 4, 5])], [vi("y", [2, 3, 4, 5])])
save("LRN", [helper.make_node("LRN", ["x"], ["y"], size=3)], [vi("x", [2, 6, 3, 3])], [vi("y", [2, 6, 3, 3])])
save("SwiGLU", [helper.make_node("SwiGLU", ["a", "b"], ["y"], alpha=1.702)], [vi("a", [3, 8]), vi("b", [3, 8])],
     [vi("y", [3, 8])], opset=28)
save("NegativeLogLikelihoodLoss", [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"],
                                                    ignore_index=1)],
     [vi("x", [3, 5, 2]), vi("t", [3, 2], I64), vi("w", [5])], [vi("y", [])])
save("SoftmaxCrossEntropyLoss", [helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y", "p"],
                                                  reduction="none")],
     [vi("x", [3, 5]), vi("t", [3], I64)], [vi("y", [3]), vi("p", [3, 5])])
save("CastUint8Double", [helper.make_node("Cast", ["x"], ["y"], to=F64)], [vi("x", [3, 5], U8)],
     [vi("y", [3, 5], F64)])

# Negative inputs (not in ops/): out-of-scope ops and bad attributes of the new ops.
def save_negative(name, nodes, inputs, outputs, inits=(), opset=18):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    onnx.save(m, name + ".onnx")


save_negative("roialign_out_of_scope", [helper.make_node("RoiAlign", ["x", "r", "i"], ["y"], name="roi0")],
              [vi("x", [1, 1, 3, 3]), vi("r", [2, 4]), vi("i", [2], I64)], [vi("y", [2, 1, 1, 1])])
save_negative("gridsample_bad_mode", [helper.make_node("GridSample", ["x", "g"], ["y"], mode="bilinear",
                                                       name="grid1")],
              [vi("x", [1, 1, 3, 3]), vi("g", [1, 2, 2, 2])], [vi("y", [1, 1, 2, 2])], opset=20)
save_negative("gridsample_grid_shape", [helper.make_node("GridSample", ["x", "g"], ["y"], name="grid2")],
              [vi("x", [1, 1, 3, 3]), vi("g", [1, 2, 2, 3])], [vi("y", [1, 1, 2, 2])], opset=20)
save_negative("convtranspose_bad_weight", [helper.make_node("ConvTranspose", ["x", "w"], ["y"],
                                                            name="deconv_w")],
              [vi("x", [1, 2, 4, 4]), vi("w", [3, 1, 3, 3])], [vi("y", [1, 1, 6, 6])])
conv_io = dict(inputs=[vi("x", [1, 4, 5, 5]), vi("w", [6, 2, 3, 3])], outputs=[vi("y", [1, 6, 3, 3])])
save_negative("conv_bad_group", [helper.make_node("Conv", ["x", "w"], ["y"], group=3, name="conv_g")],
              **conv_io)
save_negative("conv_bad_auto_pad", [helper.make_node("Conv", ["x", "w"], ["y"], group=2,
                                                     auto_pad="SAME", name="conv_ap")], **conv_io)
save_negative("conv_kernel_shape", [helper.make_node("Conv", ["x", "w"], ["y"], group=2,
                                                     kernel_shape=[3, 2], name="conv_ks")], **conv_io)
save_negative("conv_window_too_large", [helper.make_node("Conv", ["x", "w"], ["y"], group=2,
                                                         dilations=[3, 1], name="conv_dil")],
              **conv_io)
save_negative("conv_pads_and_auto_pad",
              [helper.make_node("Conv", ["x", "w"], ["y"], group=2, auto_pad="VALID",
                                pads=[1, 1, 1, 1], name="conv_pp")], **conv_io)
save_negative("conv_table_too_large",
              [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], name="conv_big")],
              [vi("x", [1, 1, 4096, 4096]), vi("w", [1, 1, 3, 3])], [vi("y", [1, 1, 4096, 4096])])
save_negative("bitshift_direction", [helper.make_node("BitShift", ["a", "b"], ["y"], direction="UP",
                                                      name="shift0")],
              [vi("a", [2], U8), vi("b", [2], U8)], [vi("y", [2], U8)])
save_negative("bitwise_float", [helper.make_node("BitwiseAnd", ["a", "b"], ["y"], name="and0")],
              [vi("a", [2]), vi("b", [2])], [vi("y", [2])])
save_negative("quantize_int32", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"],
                                                  name="quant0")],
              [vi("x", [2]), vi("s", []), vi("z", [], TensorProto.INT32)],
              [vi("y", [2], TensorProto.INT32)])
save_negative("quantize_bad_axis_scale", [helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=0,
                                                           name="quant1")],
              [vi("x", [2, 3]), vi("s", [3])], [vi("y", [2, 3], U8)])
save_negative("lstm_bad_activation", [helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=2,
                                                       activations=["Sigmoid", "Gelu", "Tanh"],
                                                       name="lstm0")],
              [vi("x", [2, 1, 3]), vi("w", [1, 8, 3]), vi("r", [1, 8, 2])], [vi("y", [2, 1, 1, 2])])
save_negative("gru_too_many_steps", [helper.make_node("GRU", ["x", "w", "r"], ["y"], hidden_size=2,
                                                      direction="bidirectional", name="gru0")],
              [vi("x", [3000, 1, 3]), vi("w", [2, 6, 3]), vi("r", [2, 6, 2])],
              [vi("y", [3000, 2, 1, 2])])
save_negative("reversesequence_axes", [helper.make_node("ReverseSequence", ["x", "l"], ["y"], time_axis=2,
                                                        name="rev0")],
              [vi("x", [2, 3, 4]), vi("l", [3], I64)], [vi("y", [2, 3, 4])])
save_negative("scatterelements_rank", [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"],
                                                        name="scatter1")],
              [vi("x", [4, 3]), vi("i", [2], I64), vi("u", [2])], [vi("y", [4, 3])])
save_negative("window_size_input", [helper.make_node("HannWindow", ["n"], ["y"], name="hann0")],
              [vi("n", [], I64)], [vi("y", [8])])
save_negative("nll_bad_reduction", [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"],
                                                      reduction="max", name="nll0")],
              [vi("x", [3, 5]), vi("t", [3], I64)], [vi("y", [])])
save_negative("maxpool_storage_order", [helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2],
                                                         storage_order=2, name="pool_i")],
              [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 3, 3]), vi("i", [1, 1, 3, 3], I64)])
save_negative("pool_no_kernel", [helper.make_node("AveragePool", ["x"], ["y"], name="pool_k")],
              [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 3, 3])])
save_negative("pool_ceil_auto_pad", [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                                                      ceil_mode=1, auto_pad="SAME_UPPER",
                                                      name="pool_c")],
              [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 4, 4])])
save_negative("batchnorm_training", [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                                                      ["y"], training_mode=1, name="bn_t")],
              [vi("x", [2, 3]), vi("s", [3]), vi("b", [3]), vi("m", [3]), vi("v", [3])],
              [vi("y", [2, 3])])
save_negative("batchnorm_bad_scale", [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                                                       ["y"], name="bn_s")],
              [vi("x", [2, 3]), vi("s", [4]), vi("b", [3]), vi("m", [3]), vi("v", [3])],
              [vi("y", [2, 3])])
save_negative("groupnorm_groups", [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                                    num_groups=3, name="gn_g")],
              [vi("x", [1, 4, 2, 2]), vi("s", [4]), vi("b", [4])], [vi("y", [1, 4, 2, 2])],
              opset=21)
save_negative("rotary_odd_dim", [helper.make_node("RotaryEmbedding", ["x", "c", "s"], ["y"],
                                                  rotary_embedding_dim=3, name="rope")],
              [vi("x", [1, 2, 3, 8]), vi("c", [1, 3, 1]), vi("s", [1, 3, 1])],
              [vi("y", [1, 2, 3, 8])], opset=23)
save_negative("resize_runtime_scales", [helper.make_node("Resize", ["x", "", "s"], ["y"], name="rs")],
              [vi("x", [1, 1, 2, 2]), vi("s", [4])], [vi("y", [1, 1, 4, 4])])
save_negative("resize_bad_mode", [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="bilinear",
                                                   name="rm")],
              [vi("x", [1, 1, 2, 2])], [vi("y", [1, 1, 4, 4])], [floats("s", [1, 1, 2, 2])])
save_negative("depthtospace_channels", [helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2,
                                                         name="d2s")],
              [vi("x", [1, 6, 2, 2])], [vi("y", [1, 1, 4, 4])])
save_negative("onehot_runtime_depth", [helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="oh")],
              [vi("i", [3], I64), vi("d", [], I64), vi("v", [2])], [vi("y", [3, 4])])
save_negative("einsum_bad_term", [helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jkl->ik",
                                                   name="es")],
              [vi("a", [2, 3]), vi("b", [3, 4])], [vi("y", [2, 4])])
save_negative("topk_too_large", [helper.make_node("TopK", ["x", "k"], ["v", "i"], name="tk")],
              [vi("x", [2, 100])], [vi("v", [2, 65]), vi("i", [2, 65], I64)], [ints("k", [65])])
save_negative("conv_int", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_i")],
              [vi("x", [1, 1, 4, 4], I64), vi("w", [1, 1, 3, 3], I64)], [vi("y", [1, 1, 2, 2], I64)])
save_negative("split_bad_sizes", [helper.make_node("Split", ["x", "s"], ["y", "z"], axis=1, name="split0")],
              [vi("x", [2, 6])], [vi("y", [2, 2]), vi("z", [2, 3])], [ints("s", [2, 3])])
save_negative("gelu_bad_approximate", [helper.make_node("Gelu", ["x"], ["y"], approximate="erf", name="gelu0")],
              [vi("x", [4])], [vi("y", [4])], opset=20)
save_negative("reduce_axis_range", [helper.make_node("ReduceMax", ["x", "a"], ["y"], name="rmax")],
              [vi("x", [2, 3])], [vi("y", [2, 1])], [ints("a", [5])])
save_negative("pad_bad_mode", [helper.make_node("Pad", ["x", "p"], ["y"], mode="mirror", name="pad0")],
              [vi("x", [4])], [vi("y", [6])], [ints("p", [1, 1])])
save_negative("tile_overflow", [helper.make_node("Tile", ["x", "r"], ["y"], name="tile0")],
              [vi("x", [4, 4])], [vi("y", [4, 4])], [ints("r", [1 << 62, 4])])
save_negative("pad_overflow", [helper.make_node("Pad", ["x", "p"], ["y"], name="pad1")],
              [vi("x", [4])], [vi("y", [4])], [ints("p", [(1 << 63) - 1, (1 << 63) - 1])])
save_negative("split_overflow", [helper.make_node("Split", ["x", "s"], ["y", "z"], axis=0, name="split1")],
              [vi("x", [4])], [vi("y", [4]), vi("z", [4])], [ints("s", [(1 << 63) - 1, 5])])
save_negative("matmul_int", [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm0")],
              [vi("a", [2, 3], I64), vi("b", [3, 4], I64)], [vi("y", [2, 4], I64)])
save_negative("dropout_training", [helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")],
              [vi("x", [4])], [vi("y", [4])],
              [numpy_helper.from_array(np.array(0.5, np.float32), "r"),
               numpy_helper.from_array(np.array(True), "t")])
save_negative("matmulinteger_zero_point_shape", [helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"],
                                                                 name="mmi0")],
              [vi("a", [4, 8], U8), vi("b", [8, 3], U8), vi("za", [8], U8)], [vi("y", [4, 3], TensorProto.INT32)])
save_negative("matmulinteger_float", [helper.make_node("MatMulInteger", ["a", "b"], ["y"], name="mmi1")],
              [vi("a", [4, 8]), vi("b", [8, 3], U8)], [vi("y", [4, 3], TensorProto.INT32)])
save_negative("qlinearmatmul_scale_shape", [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb",
                                                                            "sy", "zy"], ["y"], name="qmm0")],
              [vi("a", [4, 8], U8), vi("sa", [4]), vi("za", [], U8), vi("b", [8, 3], U8), vi("sb", []),
               vi("zb", [], U8), vi("sy", []), vi("zy", [], U8)], [vi("y", [4, 3], U8)])
save_negative("dynamicquantize_half", [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"],
                                                        name="dql0")],
              [vi("x", [3, 5], H)], [vi("y", [3, 5], U8), vi("s", [], H), vi("z", [], U8)])
save_negative("dft_axis_complex", [helper.make_node("DFT", ["x", "", "a"], ["y"], name="dft0")],
              [vi("x", [2, 8, 2])], [vi("y", [2, 8, 2])], [ints("a", 2)], opset=20)
save_negative("dft_parts", [helper.make_node("DFT", ["x"], ["y"], name="dft1")],
              [vi("x", [2, 8, 3])], [vi("y", [2, 8, 2])], opset=20)
save_negative("dft_table_too_large", [helper.make_node("DFT", ["x", "n", "a"], ["y"], name="dft2")],
              [vi("x", [1, 8192, 1])], [vi("y", [1, 8192, 2])], [ints("n", 8192), ints("a", 1)], opset=20)
save_negative("stft_frame_too_long", [helper.make_node("STFT", ["x", "s", "", "l"], ["y"], name="stft0")],
              [vi("x", [1, 16, 1])], [vi("y", [1, 1, 17, 2])], [ints("s", 4), ints("l", 32)], opset=17)
save_negative("affinegrid_theta_shape", [helper.make_node("AffineGrid", ["t", "s"], ["y"], name="affine0")],
              [vi("t", [2, 3, 4])], [vi("y", [2, 4, 5, 2])], [ints("s", [2, 3, 4, 5])], opset=20)
save_negative("col2im_blocks", [helper.make_node("Col2Im", ["x", "im", "bl"], ["y"], name="col0")],
              [vi("x", [1, 8, 10])], [vi("y", [1, 2, 4, 4])], [ints("im", [4, 4]), ints("bl", [2, 2])])
save_negative("maxunpool_output_shape", [helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2],
                                                          name="unpool0")],
              [vi("x", [1, 1, 3]), vi("i", [1, 1, 3], I64)], [vi("y", [1, 1, 3])], [ints("s", [1, 1, 3])])
save_negative("qlinearconv_scale", [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                                                      ["y"], name="qconv0")],
              [vi("x", [1, 2, 4, 4], U8), vi("xs", []), vi("xz", [], U8), vi("w", [3, 2, 3, 3], U8), vi("ws", [2]),
               vi("wz", [], U8), vi("ys", []), vi("yz", [], U8)], [vi("y", [1, 3, 2, 2], U8)])
save_negative("cumsum_axis_range", [helper.make_node("CumSum", ["x", "a"], ["y"], name="cumsum0")],
              [vi("x", [2, 3])], [vi("y", [2, 3])], [ints("a", [2])])
save_negative("cumsum_axis_input", [helper.make_node("CumSum", ["x", "a"], ["y"], name="cumsum1")],
              [vi("x", [2, 3]), vi("a", [], I64)], [vi("y", [2, 3])])
save_negative("scatternd_bad_reduction", [helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="mean",
                                                           name="scatter0")],
              [vi("x", [4, 3]), vi("i", [2, 1], I64), vi("u", [2, 3])], [vi("y", [4, 3])])
