#!/usr/bin/env python3
"""Writes Sinter's own node tests in the ONNX backend layout (DIR/node/<test>/model.onnx and
test_data_set_0/{input,output}_K.pb), for what the ONNX suite leaves out. CumSum (the suite
has two tests in a dtype Sinter takes, both tiny): rows longer than one warp and than one
block, both directions, exclusive sums, an axis that is not the last, f16, and the position
ids Hugging Face models compute from an attention mask (Cast -> CumSum -> Sub -> Where, one
generated kernel). ScatterND (the suite's indices are constants): indices given at run time,
repeated, negative, with each reduction, and element tuples. Expected outputs come from numpy
in float64.

    python3 test/conformance/make_extra_node_tests.py DIR
    python3 test/conformance/run_node_tests.py --from-testdata DIR --phase binary ...
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 18


def cumsum(x, axis, exclusive=False, reverse=False):
    y = np.flip(x, axis) if reverse else x
    s = np.cumsum(y.astype(np.float64) if x.dtype.kind == "f" else y.astype(np.int64), axis=axis)
    if exclusive:
        s = s - (y.astype(s.dtype))
    return np.flip(s, axis) if reverse else s


def write(root, name, nodes, inputs, outputs, inits=()):
    """inputs / outputs: (name, array) pairs; the arrays give the value infos' types."""
    def info(n, a):
        return helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)

    graph = helper.make_graph(nodes, name, [info(n, a) for n, a in inputs],
                              [info(n, a) for n, a in outputs], list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    test = Path(root) / "node" / name
    data = test / "test_data_set_0"
    data.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(test / "model.onnx"))
    for kind, pairs in (("input", inputs), ("output", outputs)):
        for k, (n, a) in enumerate(pairs):
            (data / f"{kind}_{k}.pb").write_bytes(numpy_helper.from_array(a, n).SerializeToString())


def axis_init(value):
    return numpy_helper.from_array(np.array(value, np.int64), "axis")


def cumsum_case(root, name, x, axis, exclusive=0, reverse=0):
    y = cumsum(x, axis, exclusive, reverse).astype(x.dtype)
    write(root, name, [helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive,
                                        reverse=reverse)],
          [("x", x)], [("y", y)], [axis_init(axis)])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    rng = np.random.default_rng(2026)
    uniform = lambda *shape: rng.random(shape, dtype=np.float32)
    # Rows of one warp's chunks, of a 512-thread row (cross-warp sums), and of 1024 threads
    # with 69 chunks each (the running sums outgrow the registers).
    cumsum_case(root, "test_sinter_cumsum_int32_two_chunks_exclusive",
                rng.integers(-50, 50, (3, 40), dtype=np.int32), 1, exclusive=1)
    cumsum_case(root, "test_sinter_cumsum_f32_3000", uniform(4, 3000), 1)
    cumsum_case(root, "test_sinter_cumsum_f32_3000_reverse", uniform(4, 3000), -1, reverse=1)
    cumsum_case(root, "test_sinter_cumsum_f32_70000_reverse_exclusive", uniform(2, 70000), 1,
                exclusive=1, reverse=1)
    cumsum_case(root, "test_sinter_cumsum_int64_axis0_reverse",
                rng.integers(-1000, 1000, (37, 5), dtype=np.int64), 0, reverse=1)
    cumsum_case(root, "test_sinter_cumsum_f16", uniform(8, 100).astype(np.float16), 1)
    # position_ids = mask.cumsum(-1) - 1, with 1 where the mask is 0 (left padding).
    lengths = [300, 211, 1]
    mask = np.zeros((len(lengths), 300), bool)
    for row, n in enumerate(lengths):
        mask[row, 300 - n:] = True
    positions = np.cumsum(mask.astype(np.int64), axis=1) - 1
    positions = np.where(mask, positions, 1)
    write(root, "test_sinter_cumsum_position_ids",
          [helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.INT64),
           helper.make_node("CumSum", ["m", "axis"], ["c"]),
           helper.make_node("Sub", ["c", "one"], ["p"]),
           helper.make_node("Where", ["mask", "p", "one"], ["position_ids"])],
          [("mask", mask)], [("position_ids", positions)],
          [axis_init(1), numpy_helper.from_array(np.array(1, np.int64), "one")])
    # ScatterND with indices given at run time: repeated tuples combined in order, a whole
    # [4, 6, 8] input rewritten into its output (no KV cache), element tuples.
    for reduction, dtype in (("add", np.float32), ("mul", np.float32), ("max", np.int64),
                             ("min", np.float16), ("none", np.float32)):
        data = (rng.random((5, 4, 6)) * 4 - 2).astype(dtype)
        indices = np.array([[[1], [3]], [[1], [-1]], [[0], [3]]], np.int64)  # 1 and 3 twice
        updates = (rng.random((3, 2, 4, 6)) * 4 - 2).astype(dtype)
        if reduction == "none":  # repeated tuples' order is unspecified without a reduction
            indices = np.array([[[1], [3]], [[4], [0]], [[2], [-2]]], np.int64)
        expected = data.astype(np.float64) if dtype != np.int64 else data.copy()
        for t in np.ndindex(indices.shape[:-1]):
            row = int(indices[t][0]) % data.shape[0]
            u = updates[t]
            expected[row] = {"add": lambda a: a + u, "mul": lambda a: a * u,
                             "max": lambda a: np.maximum(a, u), "min": lambda a: np.minimum(a, u),
                             "none": lambda a: u}[reduction](expected[row])
        write(root, f"test_sinter_scatternd_runtime_indices_{reduction}",
              [helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"],
                                reduction=reduction)],
              [("data", data), ("indices", indices), ("updates", updates)],
              [("y", expected.astype(dtype))])
    data = uniform(3, 4)
    indices = np.array([[0, 1], [2, 3], [0, 1]], np.int64)
    updates = np.array([5, 7, 11], np.float32)
    expected = data.copy()
    for (r, c), u in zip(indices, updates):
        expected[r, c] *= u
    write(root, "test_sinter_scatternd_element_tuples_mul",
          [helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"], reduction="mul")],
          [("data", data), ("indices", indices), ("updates", updates)], [("y", expected)])
    print(f"wrote Sinter's node tests under {root}/node")


if __name__ == "__main__":
    main()
