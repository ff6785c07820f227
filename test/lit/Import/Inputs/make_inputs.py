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
    t = numpy_helper.from_array(np.zeros(shape, np.float32), name)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(4 * int(np.prod(shape))))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def add_with(init):
    return model([helper.make_node("Add", ["x", init.name], ["y"], name="add")],
                 [vi("x", [4])], [vi("y", [4])], [init])


def main():
    onnx.save(model([helper.make_node("FooBar", ["x"], ["y"], name="mystery")],
                    [vi("x", [2])], [vi("y", [2])]), "unknown_op.onnx")
    onnx.save(model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                    [vi("x", [2])], [vi("y", [2])], opset=7, ir=3), "old_opset.onnx")
    onnx.save(model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                    [vi("x", ["batch", 2])], [vi("y", ["batch", 2])]), "dynamic_input.onnx")
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


if __name__ == "__main__":
    main()
