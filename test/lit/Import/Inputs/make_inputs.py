#!/usr/bin/env python3
"""Writes the small hand-made ONNX files the importer's negative tests read.

Run from this folder: python3 make_inputs.py. The outputs are committed; rerun only to change
them. Each file isolates one error the importer must report.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, inits=(), opset=18, ir=10):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def external(name, location, shape=(4,)):
    t = raw_tensor(name, TensorProto.FLOAT, shape)  # no data: the shape may be huge
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(4 * int(np.prod(shape))))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def add_with(init):
    return model([helper.make_node("Add", ["x", init.name], ["y"], name="add")],
                 [vi("x", [4])], [vi("y", [4])], [init])


def raw_tensor(name, data_type, dims, raw=None):
    """A TensorProto as a hostile file may hold it: any dims, any data type, short data."""
    t = TensorProto()
    t.name, t.data_type = name, data_type
    t.dims.extend(dims)
    if raw is not None:
        t.raw_data = raw
    return t


def add(a, b, out, name="add"):
    return helper.make_node("Add", [a, b], [out], name=name)


def hostile():
    """Inputs of hostile.test: each breaks one rule the importer checks before allocating."""
    big = 1 << 40
    x4 = [vi("x", [4])]
    y4 = [vi("y", [4])]
    files = {
        # Shapes: int64 overflow, past 2^48 elements, negative, zero.
        "input_overflow": model([add("x", "x", "y")], [vi("x", [big, big])], [vi("y", [1])]),
        "input_huge": model([add("x", "x", "y")], [vi("x", [1 << 30, 1 << 30])], [vi("y", [1])]),
        "input_negative": model([add("x", "x", "y")], [vi("x", [-3, 2])], [vi("y", [1])]),
        "input_zero": model([add("x", "x", "y")], [vi("x", [0, 4])], [vi("y", [0, 4])]),
        "output_zero": model([helper.make_node("Identity", ["e"], ["y"], name="id")], [],
                             [vi("y", [0, 4])],
                             [raw_tensor("e", TensorProto.FLOAT, [0, 4], b"")]),
        "init_overflow": model([add("x", "w", "y")], x4, y4,
                               [raw_tensor("w", TensorProto.FLOAT, [big, big], b"\0" * 16)]),
        "init_negative": model([add("x", "w", "y")], x4, y4,
                               [raw_tensor("w", TensorProto.FLOAT, [4, -1], b"\0" * 16)]),
        "matmul_huge": model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                             [vi("a", [1 << 25, 1 << 20]), vi("b", [1 << 20, 1 << 25])],
                             [vi("y", [1])]),
        "reshape_overflow": model([helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
                                  x4, y4, [numpy_helper.from_array(
                                      np.array([big, big], np.int64), "s")]),
        "concat_overflow": model([helper.make_node("Concat", ["x", "x", "x"], ["y"], name="cat",
                                                   axis=0)],
                                 [vi("x", [1 << 47])], [vi("y", [1])]),
        # Huge declared sizes in a tiny file: no allocation before the check.
        "init_huge_typed": model([add("x", "w", "y")], x4, y4,
                                 [raw_tensor("w", TensorProto.FLOAT, [big])]),
        "init_wrap": model([add("x", "w", "y")], [vi("x", [4], TensorProto.INT64)], y4,
                           [raw_tensor("w", TensorProto.INT64, [1 << 61], b"")]),
        "init_short": model([add("x", "w", "y")], x4, y4,
                            [raw_tensor("w", TensorProto.FLOAT, [1 << 20], b"\0" * 16)]),
        "external_huge": add_with(external("w", "weights.bin", shape=(1 << 40,))),
        # Types.
        "dtype_mismatch": model([add("x", "w", "y")], x4, y4,
                                [numpy_helper.from_array(np.zeros(4, np.int64), "w")]),
        "unknown_dtype_init": model([add("x", "w", "y")], x4, y4,
                                    [raw_tensor("w", TensorProto.FLOAT8E5M2, [4], b"\0" * 4)]),
        "unknown_dtype_input": model([add("x", "x", "y")], [vi("x", [4], 17)], y4),
        "unknown_dtype_cast": model([helper.make_node("Cast", ["x"], ["y"], name="cast", to=17)],
                                    x4, y4),
        # Attributes of the wrong declared type: Cast's `to` as a FLOAT, Transpose's `perm` as
        # an INT.
        "attr_float_for_int": model([helper.make_node("Cast", ["x"], ["y"], name="cast",
                                                      to=1.0)], x4, y4),
        "attr_int_for_ints": model([helper.make_node("Transpose", ["x"], ["y"], name="t",
                                                     perm=0)], x4, y4),
        # Graph structure.
        "cycle": model([add("x", "c", "b", "a"), add("b", "x", "c", "b")], x4, [vi("c", [4])]),
        "unsorted": model([add("b", "x", "y", "second"), add("x", "x", "b", "first")], x4, y4),
        "undefined": model([add("x", "nowhere", "y")], x4, y4),
        "dup_node_output": model([add("x", "x", "y", "a1"), add("x", "x", "y", "a2")], x4, y4),
        "dup_init_output": model([add("x", "x", "w", "a1")], x4, [vi("w", [4])],
                                 [numpy_helper.from_array(np.zeros(4, np.float32), "w")]),
        "dup_init": model([add("x", "w", "y")], x4, y4,
                          [numpy_helper.from_array(np.zeros(4, np.float32), "w")] * 2),
        "dup_input": model([add("x", "x", "y")], [vi("x", [4]), vi("x", [4])], y4),
        "dup_graph_output": model([add("x", "x", "y")], x4, [vi("y", [4]), vi("y", [4])]),
        "missing_input": model([helper.make_node("Add", ["x"], ["y"], name="add")], x4, y4),
        "empty_input": model([helper.make_node("MatMul", ["x", ""], ["y"], name="mm")],
                             [vi("x", [4, 4])], y4),
        "no_output": model([helper.make_node("Add", ["x", "x"], [], name="add")], x4, y4),
        # A newline and a terminal escape in names the message quotes.
        "control_chars": model([helper.make_node("Foo\nBar", ["x"], ["y"],
                                                 name="evil\nname\x1b[31m")], x4, y4),
    }
    for name, m in files.items():
        onnx.save(m, f"hostile_{name}.onnx")


def newer_versions():
    """IR 14 / opset 28 (what onnx 1.23's helper writes), an IR version past Sinter's, an
    attribute no import reads, opset 24-27 Attention and Range attributes, and the errors of
    ops imported with them (Celu, Mean)."""
    onnx.save(model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                    [vi("x", [2])], [vi("y", [2])], opset=28, ir=14), "opset28_ir14.onnx")
    onnx.save(model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                    [vi("x", [2])], [vi("y", [2])], ir=15), "ir15.onnx")
    onnx.save(model([helper.make_node("Relu", ["x"], ["y"], name="relu", alpha=0.5)],
                    [vi("x", [2])], [vi("y", [2])]), "unread_attribute.onnx")
    q, kv = [1, 2, 4, 8], [1, 2, 4, 8]
    onnx.save(model([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="window",
                                      is_causal=1, left_window_size=1)],
                    [vi("q", q), vi("k", kv), vi("v", kv)], [vi("y", q)], opset=25, ir=14),
              "attention_window.onnx")
    onnx.save(model([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="window",
                                      left_window_size=-2)],
                    [vi("q", q), vi("k", kv), vi("v", kv)], [vi("y", q)], opset=25, ir=14),
              "attention_bad_window.onnx")
    # A scalar attn_mask (found by the import fuzzer: its last dimension was read unchecked).
    onnx.save(model([helper.make_node("Attention", ["q", "k", "v", "m"], ["y"], name="scalar_mask")],
                    [vi("q", q), vi("k", kv), vi("v", kv), vi("m", [])], [vi("y", q)], opset=23,
                    ir=14), "attention_scalar_mask.onnx")
    # Opset 24's nonpad_kv_seqlen: a per-sequence count of valid keys (2 sequences).
    q2, kv2 = [2, 2, 3, 8], [2, 2, 5, 8]
    onnx.save(model([helper.make_node("Attention", ["q", "k", "v", "", "", "", "n"], ["y"],
                                      name="nonpad", is_causal=1)],
                    [vi("q", q2), vi("k", kv2), vi("v", kv2), vi("n", [2], TensorProto.INT64)],
                    [vi("y", q2)], opset=24, ir=14), "attention_nonpad.onnx")
    onnx.save(model([helper.make_node("Attention", ["q", "k", "v", "", "", "", "n"], ["y"],
                                      name="nonpad")],
                    [vi("q", q2), vi("k", kv2), vi("v", kv2), vi("n", [2], TensorProto.INT32)],
                    [vi("y", q2)], opset=24, ir=14), "attention_nonpad_int32.onnx")
    # 16384 queries over 16385 keys: masks past 2^28 positions are not built as constants.
    q3, kv3 = [1, 1, 16384, 8], [1, 1, 16385, 8]
    onnx.save(model([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="window",
                                      left_window_size=4)],
                    [vi("q", q3), vi("k", kv3), vi("v", kv3)], [vi("y", q3)], opset=25, ir=14),
              "attention_window_too_large.onnx")
    onnx.save(model([helper.make_node("Attention", ["q", "k", "v", "", "", "", "n"], ["y"],
                                      name="nonpad")],
                    [vi("q", q3), vi("k", kv3), vi("v", kv3), vi("n", [1], TensorProto.INT64)],
                    [vi("y", q3)], opset=24, ir=14), "attention_nonpad_too_large.onnx")
    softmax_in = dict(inputs=[vi("q", q), vi("k", kv), vi("v", kv)], outputs=[vi("y", q)])
    # softmax_precision: double over f32 inputs (the softmax between casts), and a non-float.
    onnx.save(model([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="softmax_f64",
                                      softmax_precision=TensorProto.DOUBLE)],
                    opset=23, ir=14, **softmax_in), "attention_softmax_double.onnx")
    onnx.save(model([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="softmax_i64",
                                      softmax_precision=TensorProto.INT64)],
                    opset=23, ir=14, **softmax_in), "attention_softmax_int64.onnx")
    onnx.save(model([helper.make_node("Mean", ["x", "x"], ["y"], name="mean")],
                    [vi("x", [2], TensorProto.INT64)], [vi("y", [2], TensorProto.INT64)]),
              "mean_int.onnx")
    onnx.save(model([helper.make_node("Celu", ["x"], ["y"], name="celu", alpha=0.0)],
                    [vi("x", [2])], [vi("y", [2])]), "celu_zero_alpha.onnx")
    scalar = lambda name, v: numpy_helper.from_array(np.array(v, np.float16), name)
    onnx.save(model([helper.make_node("Range", ["s", "l", "d"], ["y"], name="range",
                                      stash_type=10)],
                    [], [vi("y", [4], TensorProto.FLOAT16)],
                    [scalar("s", 0), scalar("l", 4), scalar("d", 1)], opset=27, ir=14),
              "range_stash_f16.onnx")


def local_functions():
    """Model-local functions: attributes by reference with a default (attribute_proto), a
    function calling another, a recursive one, and a call with more inputs than declared."""
    F = TensorProto.FLOAT
    scale = helper.make_node("Constant", [], ["a"])
    ref = helper.make_attribute("value_float", 0.0)
    ref.ref_attr_name = "alpha"
    scale.attribute.append(ref)
    scaled_tanh = helper.make_function(
        "local", "ScaledTanh", ["x"], ["y"],
        [helper.make_node("Tanh", ["x"], ["t"]), scale, helper.make_node("Mul", ["t", "a"], ["y"])],
        [helper.make_opsetid("", 18)], attributes=[],
        attribute_protos=[helper.make_attribute("alpha", 2.0)])
    twice = helper.make_function(
        "local", "Twice", ["x"], ["y"],
        [helper.make_node("ScaledTanh", ["x"], ["m"], domain="local", alpha=0.5),
         helper.make_node("ScaledTanh", ["m"], ["y"], domain="local")],
        [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    opsets = [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]
    g = helper.make_graph(
        [helper.make_node("ScaledTanh", ["x"], ["a"], domain="local", name="call1"),
         helper.make_node("ScaledTanh", ["a"], ["b"], domain="local", name="call2", alpha=3.0),
         helper.make_node("Twice", ["b"], ["c"], domain="local", name="call3")],
        "g", [vi("x", [2, 3])], [vi("c", [2, 3])])
    onnx.save(helper.make_model(g, opset_imports=opsets, functions=[scaled_tanh, twice]),
              "local_functions.onnx")
    recursive = helper.make_function(
        "local", "Forever", ["x"], ["y"], [helper.make_node("Forever", ["x"], ["y"], domain="local")],
        opsets)
    g = helper.make_graph([helper.make_node("Forever", ["x"], ["y"], domain="local", name="rec")],
                          "g", [vi("x", [2])], [vi("y", [2])])
    onnx.save(helper.make_model(g, opset_imports=opsets, functions=[recursive]),
              "function_recursive.onnx")
    g = helper.make_graph([helper.make_node("Twice", ["x", "x"], ["y"], domain="local", name="two")],
                          "g", [vi("x", [2])], [vi("y", [2])])
    onnx.save(helper.make_model(g, opset_imports=opsets, functions=[scaled_tanh, twice]),
              "function_arity.onnx")
    # 30 levels, each calling the one below twice: 2^29 nodes once inlined.
    levels = [helper.make_function("local", "F0", ["x"], ["y"], [helper.make_node("Neg", ["x"], ["y"])],
                                   opsets)]
    for i in range(1, 30):
        levels.append(helper.make_function(
            "local", f"F{i}", ["x"], ["y"],
            [helper.make_node(f"F{i - 1}", ["x"], ["m"], domain="local"),
             helper.make_node(f"F{i - 1}", ["m"], ["y"], domain="local")], opsets))
    g = helper.make_graph([helper.make_node("F29", ["x"], ["y"], domain="local", name="bomb")],
                          "g", [vi("x", [2])], [vi("y", [2])])
    onnx.save(helper.make_model(g, opset_imports=opsets, functions=levels), "function_bomb.onnx")


def legacy_opsets():
    """Nodes of opsets 7-12 in their older forms (attributes that later became inputs,
    Softmax's flattening axis, Upsample, Resize-10), and one they cannot express."""
    F = TensorProto.FLOAT
    node = helper.make_node
    onnx.save(model([node("Unsqueeze", ["x"], ["u"], axes=[0]),
                     node("Squeeze", ["u"], ["s"], axes=[0]),
                     node("Pad", ["s"], ["p"], pads=[0, 1, 0, 1], value=2.0),
                     node("Slice", ["p"], ["c"], starts=[0, 1], ends=[2, 4], axes=[0, 1]),
                     node("Clip", ["c"], ["k"], min=-1.0, max=1.5),
                     node("TopK", ["k"], ["v", "i"], k=2, axis=1),
                     node("Dropout", ["v"], ["y"], ratio=0.3)],
                    [vi("x", [2, 3])], [vi("y", [2, 2]), vi("i", [2, 2], TensorProto.INT64)],
                    opset=9, ir=4), "legacy_attributes.onnx")
    onnx.save(model([node("Softmax", ["x"], ["y"], axis=1)], [vi("x", [2, 3, 4])],
                    [vi("y", [2, 3, 4])], opset=11, ir=6), "legacy_softmax.onnx")
    onnx.save(model([node("Upsample", ["x", "s"], ["y"], mode="nearest")], [vi("x", [1, 1, 2, 2])],
                    [vi("y", [1, 1, 4, 6])],
                    [numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "s")],
                    opset=9, ir=4), "legacy_upsample.onnx")
    # Scan-8: a batch of 2 sequences of 3 steps, the second scan input read backwards; then
    # sequence_lens known only at run time, and one shorter than the steps.
    body = helper.make_graph([node("Add", ["acc_in", "a"], ["sum"]), node("Mul", ["sum", "b"], ["acc_out"]),
                              node("Identity", ["acc_out"], ["each"])],
                             "body", [vi("acc_in", [2]), vi("a", [2]), vi("b", [2])],
                             [vi("acc_out", [2]), vi("each", [2])])
    scan_io = dict(outputs=[vi("acc", [2, 2]), vi("all", [2, 3, 2])])
    scan = lambda lens, name: node("Scan", [lens, "acc0", "a", "b"], ["acc", "all"], body=body,
                                   num_scan_inputs=2, directions=[0, 1], name=name)
    onnx.save(model([scan("", "scan8")], [vi("acc0", [2, 2]), vi("a", [2, 3, 2]), vi("b", [2, 3, 2])],
                    opset=8, ir=3, **scan_io), "legacy_scan.onnx")
    onnx.save(model([scan("lens", "scan8")], [vi("lens", [2], TensorProto.INT64), vi("acc0", [2, 2]),
                                             vi("a", [2, 3, 2]), vi("b", [2, 3, 2])],
                    opset=8, ir=3, **scan_io), "legacy_scan_runtime_lengths.onnx")
    onnx.save(model([scan("lens", "scan8")], [vi("acc0", [2, 2]), vi("a", [2, 3, 2]), vi("b", [2, 3, 2])],
                    inits=[numpy_helper.from_array(np.array([3, 2], np.int64), "lens")], opset=8, ir=3,
                    **scan_io), "legacy_scan_short.onnx")
    onnx.save(model([node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=0,
                          name="bn0")],
                    [vi("x", [2, 3, 4]), vi("s", [3, 4]), vi("b", [3, 4]), vi("m", [3, 4]),
                     vi("v", [3, 4])], [vi("y", [2, 3, 4])], opset=7, ir=3),
              "legacy_batchnorm_spatial.onnx")


def control_flow():
    """If, Loop and Scan: inlined and unrolled when their conditions and trip counts are known
    when compiling; the forms that are not."""
    F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
    node = helper.make_node
    then_g = helper.make_graph([node("Relu", ["x"], ["t"])], "then", [], [vi("t", [2, 3])])
    else_g = helper.make_graph([node("Neg", ["x"], ["e"])], "else", [], [vi("e", [2, 3])])
    onnx.save(model([node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                    [vi("c", [], B), vi("x", [2, 3])], [vi("y", [2, 3])]), "if_runtime.onnx")
    onnx.save(model([node("Shape", ["x"], ["s"]), node("Gather", ["s", "zero"], ["d"], axis=0),
                     node("Equal", ["d", "two"], ["c"]),
                     node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                    [vi("x", [2, 3])], [vi("y", [2, 3])],
                    [numpy_helper.from_array(np.array(0, np.int64), "zero"),
                     numpy_helper.from_array(np.array(2, np.int64), "two")]), "if_known.onnx")
    wide_g = helper.make_graph([node("Concat", ["x", "x"], ["w"], axis=0)], "wide", [],
                               [vi("w", [4, 3])])
    onnx.save(model([node("If", ["c"], ["y"], then_branch=wide_g, else_branch=else_g, name="if0")],
                    [vi("c", [], B), vi("x", [2, 3])], [vi("y", [2, 3])]), "if_shapes_differ.onnx")
    body = helper.make_graph(
        [node("Add", ["acc_in", "x"], ["acc_out"]), node("Identity", ["cond_in"], ["cond_out"]),
         node("Identity", ["acc_out"], ["each"])],
        "body", [vi("i", [], I64), vi("cond_in", [], B), vi("acc_in", [2, 3])],
        [vi("cond_out", [], B), vi("acc_out", [2, 3]), vi("each", [2, 3])])
    onnx.save(model([node("Loop", ["m", "", "x"], ["acc", "all"], body=body)],
                    [vi("x", [2, 3])], [vi("acc", [2, 3]), vi("all", [3, 2, 3])],
                    [numpy_helper.from_array(np.array(3, np.int64), "m")]), "loop_unrolled.onnx")
    onnx.save(model([node("Loop", ["m", "", "x"], ["acc", "all"], body=body, name="loop0")],
                    [vi("x", [2, 3]), vi("m", [], I64)], [vi("acc", [2, 3]), vi("all", [3, 2, 3])]),
              "loop_runtime_count.onnx")
    # Both branches name their values alike, as optimum's merged decoders do: each branch is
    # its own scope.
    same = [helper.make_graph([node(op, ["x"], ["t"]), node("Identity", ["t"], ["o"])], label, [],
                              [vi("o", [2, 3])]) for op, label in (("Relu", "then"), ("Neg", "else"))]
    onnx.save(model([node("If", ["c"], ["y"], then_branch=same[0], else_branch=same[1])],
                    [vi("c", [], B), vi("x", [2, 3])], [vi("y", [2, 3])]), "if_same_names.onnx")


def cache_and_recurrences():
    """TensorScatter (opset 24, a KV cache's update) and opset 27's CausalConvWithState and
    LinearAttention, with their errors."""
    node = helper.make_node
    I64 = TensorProto.INT64
    scatter_io = dict(inputs=[vi("past", [2, 3, 5, 4]), vi("update", [2, 3, 2, 4]), vi("at", [2], I64)],
                      outputs=[vi("present", [2, 3, 5, 4])])
    onnx.save(model([node("TensorScatter", ["past", "update", "at"], ["present"], name="cache_write",
                          mode="circular")], opset=24, ir=14, **scatter_io), "tensor_scatter.onnx")
    onnx.save(model([node("TensorScatter", ["past", "update", "at"], ["present"], name="cache_write",
                          axis=0)], opset=24, ir=14, **scatter_io), "tensor_scatter_axis0.onnx")
    conv_io = dict(inputs=[vi("x", [1, 4, 3]), vi("w", [4, 1, 3]), vi("b", [4]), vi("state", [1, 4, 2])],
                   outputs=[vi("y", [1, 4, 3]), vi("next", [1, 4, 2])])
    onnx.save(model([node("CausalConvWithState", ["x", "w", "b", "state"], ["y", "next"], name="conv",
                          activation="silu")], opset=27, ir=14, **conv_io), "causal_conv.onnx")
    onnx.save(model([node("CausalConvWithState", ["x", "w", "b", "state"], ["y", "next"], name="conv",
                          activation="relu")], opset=27, ir=14, **conv_io), "causal_conv_relu.onnx")
    # Gated delta rule, 4 query heads over 2 kv heads of size 8, 2 tokens, per-head decay.
    attention_in = [vi("q", [1, 2, 32]), vi("k", [1, 2, 16]), vi("v", [1, 2, 16]),
                    vi("s", [1, 2, 8, 8]), vi("g", [1, 2, 2]), vi("beta", [1, 2, 2])]
    attention_out = [vi("y", [1, 2, 32]), vi("s_next", [1, 2, 8, 8])]
    onnx.save(model([node("LinearAttention", ["q", "k", "v", "s", "g", "beta"], ["y", "s_next"],
                          name="mixer", q_num_heads=4, kv_num_heads=2)],
                    attention_in, attention_out, opset=27, ir=14), "linear_attention.onnx")
    onnx.save(model([node("LinearAttention", ["q", "k", "v", "s", "g"], ["y", "s_next"],
                          name="mixer", q_num_heads=4, kv_num_heads=2)],
                    attention_in[:5], attention_out, opset=27, ir=14),
              "linear_attention_no_beta.onnx")


def bit_casts():
    """BitCast (opset 26) between types of one width, and one of another width."""
    node = helper.make_node
    T = TensorProto
    onnx.save(model([node("BitCast", ["h"], ["hi"], name="half_bits", to=T.INT16),
                     node("BitCast", ["f"], ["fi"], name="float_bits", to=T.UINT32),
                     node("BitCast", ["b"], ["bf"], name="bool_bytes", to=T.UINT8)],
                    [vi("h", [3], T.FLOAT16), vi("f", [3]), vi("b", [3], T.BOOL)],
                    [vi("hi", [3], T.INT16), vi("fi", [3], T.UINT32), vi("bf", [3], T.UINT8)],
                    opset=26, ir=12), "bitcast.onnx")
    onnx.save(model([node("BitCast", ["f"], ["y"], name="narrower", to=T.INT16)], [vi("f", [3])],
                    [vi("y", [3], T.INT16)], opset=26, ir=12), "bitcast_width.onnx")


def non_zero():
    """NonZero of a constant mask (the positions it gives read through GatherND) and of a
    graph input, whose count is not known at compile time."""
    node = helper.make_node
    mask = numpy_helper.from_array(np.array([[1, 0, 2], [0, 3, 0]], np.float32), "mask")
    onnx.save(model([node("NonZero", ["mask"], ["where"], name="positions"),
                     node("Transpose", ["where"], ["rows"], perm=[1, 0]),
                     node("GatherND", ["x", "rows"], ["y"], name="picked")],
                    [vi("x", [2, 3])], [vi("y", [3])], [mask]), "non_zero.onnx")
    onnx.save(model([node("NonZero", ["x"], ["y"], name="data_dependent")],
                    [vi("x", [2, 3])], [vi("y", [2, None], TensorProto.INT64)]),
              "non_zero_input.onnx")
    padded_non_zero()


def routing(expert):
    """Hugging Face's mixture-of-experts loop for one expert: NonZero of the expert's
    [top_k, tokens] mask lists (slot, token) pairs; the listed tokens' rows are gathered,
    multiplied by the expert's weight and by their routing weight (GatherND at each (token,
    slot)), and scattered back with ScatterElements (index_add_). The conformance case
    (make_extra_node_tests.py) reads the pairs as torch.onnx writes them (split, flat index)."""
    node = helper.make_node
    e = str(expert)
    nodes = [
        node("Equal", ["selected", f"id{e}"], [f"hit{e}"]),
        node("Transpose", [f"hit{e}"], [f"mask{e}"], perm=[1, 0]),
        node("NonZero", [f"mask{e}"], [f"pairs{e}"], name=f"route{e}"),
        node("Gather", [f"pairs{e}", "zero"], [f"slot{e}"], axis=0),
        node("Gather", [f"pairs{e}", "one"], [f"token{e}"], axis=0),
        node("Gather", ["x", f"token{e}"], [f"rows{e}"], axis=0),
        node("MatMul", [f"rows{e}", f"w{e}"], [f"out{e}"]),
        # The routing weight at (token, slot): the pairs reordered, one tuple per column.
        node("Gather", [f"pairs{e}", "swap"], [f"token_slot{e}"], axis=0),
        node("Transpose", [f"token_slot{e}"], [f"tuples{e}"], perm=[1, 0]),
        node("GatherND", ["weights", f"tuples{e}"], [f"weight{e}"]),
        node("Unsqueeze", [f"weight{e}", "axis1"], [f"weight_col{e}"]),
        node("Mul", [f"out{e}", f"weight_col{e}"], [f"scaled{e}"]),
        node("Unsqueeze", [f"token{e}", "axis1"], [f"token_col{e}"]),
        node("Shape", [f"scaled{e}"], [f"scaled_shape{e}"]),
        node("Expand", [f"token_col{e}", f"scaled_shape{e}"], [f"targets{e}"]),
        node("ScatterElements", ["zeros", f"targets{e}", f"scaled{e}"], [f"part{e}"], axis=0,
             name=f"scatter{e}"),
    ]
    return nodes


def padded_non_zero():
    """NonZero of run-time inputs, padded to the input's element count: a two-expert routing
    block (3 tokens, top 2 of 2... of 3 experts: 2 used here) and the ways padding could leak."""
    node = helper.make_node
    rng = np.random.default_rng(3)
    init = lambda a, n: numpy_helper.from_array(a, n)
    inits = [init(np.array(0, np.int64), "zero"), init(np.array(1, np.int64), "one"),
             init(np.array([1], np.int64), "axis1"), init(np.array([1, 0], np.int64), "swap"),
             init(np.zeros((3, 4), np.float32), "zeros"),
             init(np.array(0, np.int64), "id0"), init(np.array(1, np.int64), "id1"),
             init(rng.standard_normal((4, 4)).astype(np.float32), "w0"),
             init(rng.standard_normal((4, 4)).astype(np.float32), "w1")]
    inputs = [vi("x", [3, 4]), vi("selected", [3, 2], TensorProto.INT64), vi("weights", [3, 2])]
    onnx.save(model(routing(0) + routing(1) + [node("Add", ["part0", "part1"], ["y"])],
                    inputs, [vi("y", [3, 4])], inits), "padded_non_zero.onnx")
    # Negative: the gathered rows summed over the listed tokens (their count is not known).
    onnx.save(model(routing(0)[:7] + [node("ReduceSum", ["out0"], ["y"], keepdims=0,
                                                   name="sum_rows")],
                    inputs, [vi("y", [4])], inits), "padded_non_zero_reduce.onnx")
    # Negative: the count read as a size.
    onnx.save(model(routing(0)[:5] + [
        node("Shape", ["token0"], ["count"]),
        node("Cast", ["count"], ["y"], to=TensorProto.FLOAT, name="count_as_float")],
        inputs, [vi("y", [1])], inits), "padded_non_zero_count.onnx")
    # Negative: the scatter's indices computed from the coordinates (a padded entry could
    # land on a real row).
    onnx.save(model(routing(0)[:15] + [
        node("Sub", ["targets0", "one"], ["shifted0"]),
        node("ScatterElements", ["zeros", "shifted0", "scaled0"], ["y"], axis=0,
             name="shifted_scatter")],
        inputs, [vi("y", [3, 4])], inits), "padded_non_zero_shifted.onnx")
    # Negative: a subgraph reading the padded coordinates (its results would carry padding
    # that the check does not follow out of the subgraph's scope).
    gathered = lambda n: helper.make_graph([node("Gather", ["d", "listed"], [n], axis=0)], n, [],
                                           [vi(n, None)])
    onnx.save(model([node("NonZero", ["x"], ["nz"]), node("Squeeze", ["nz", "zero1"], ["listed"]),
                     node("If", ["c"], ["y"], then_branch=gathered("t"), else_branch=gathered("e"),
                          name="choose"),
                     node("ReduceSum", ["y"], ["z"], keepdims=0)],
                    [vi("x", [4]), vi("d", [4]), vi("c", [], TensorProto.BOOL)], [vi("z", [])],
                    [init(np.array([0], np.int64), "zero1")]), "padded_non_zero_if.onnx")


def main():
    non_zero()
    control_flow()
    bit_casts()
    cache_and_recurrences()
    legacy_opsets()
    local_functions()
    onnx.save(model([helper.make_node("FooBar", ["x"], ["y"], name="mystery")],
                    [vi("x", [2])], [vi("y", [2])]), "unknown_op.onnx")
    onnx.save(model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                    [vi("x", [2])], [vi("y", [2])], opset=6, ir=3), "old_opset.onnx")
    onnx.save(model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                    [vi("x", ["batch", 2])], [vi("y", ["batch", 2])]), "dynamic_input.onnx")
    # A derived dimension written as a sum, as torch's exporter writes a with-past mask.
    onnx.save(model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                    [vi("x", ["batch", "past + seq"])], [vi("y", ["batch", "past + seq"])]),
              "dim_sum_input.onnx")
    onnx.save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                    [vi("x", [2, 3])], [vi("y", [2, 3])],
                    [numpy_helper.from_array(np.ones((4,), np.float32), "w")]), "bad_broadcast.onnx")
    onnx.save(add_with(external("w", "weights.bin")), "external_ok.onnx")
    with open("weights.bin", "wb") as f:
        f.write(np.arange(4, dtype=np.float32).tobytes())
    onnx.save(add_with(external("w", "missing.bin")), "external_missing.onnx")
    onnx.save(add_with(external("w", "../outside.bin")), "external_dotdot.onnx")
    onnx.save(add_with(external("w", "/etc/passwd")), "external_absolute.onnx")
    onnx.save(add_with(external("w", "link.bin")), "external_symlink.onnx")
    onnx.save(add_with(external("w", "weights.bin", shape=(1 << 20,))), "external_short.onnx")
    hostile()
    newer_versions()


if __name__ == "__main__":
    main()
