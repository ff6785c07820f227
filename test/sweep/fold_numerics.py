#!/usr/bin/env python3
"""Numerics of whole exported models without a GPU: each .onnx gets random inputs (the rules of
optimum_numerics.py, shapes from sweep_dims.py), every input is made an initializer, and Sinter
compiles the model to the graph phase with --print-constants, so the host folds every import;
the folded outputs are compared with onnxruntime's on the CPU (basic graph optimizations only).
This checks the importer's decompositions and the host folders on real exports, not the CUDA
kernels (optimum_numerics.py does that on the GPU machine).

    python3 test/sweep/fold_numerics.py [--tol 1e-4] [--sinter build/bin/sinter] MODEL.onnx|DIR ...

DIR: every */onnx/*.onnx under it (optimum_sweep.sh's output) or every onnx/*.onnx (one
architecture's folder of it). Prints one line per output (or
one per model that does not fold: SKIP naming the op the host cannot evaluate), then the counts;
exit 1 when an output differs or a compile fails.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from folded_outputs import folded_outputs  # noqa: E402
from optimum_numerics import compare, make_input  # noqa: E402
from sweep_dims import bindings  # noqa: E402

NUMPY_OF_ONNX = {onnx.TensorProto.FLOAT: "float32", onnx.TensorProto.INT64: "int64",
                 onnx.TensorProto.INT32: "int32", onnx.TensorProto.BOOL: "bool",
                 onnx.TensorProto.FLOAT16: "float16", onnx.TensorProto.DOUBLE: "float64"}


class InputInfo:
    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, shape


def dim_value(name, dims):
    """A bound dimension, or an exporter's sum of bound ones ("past_sequence_length +
    sequence_length")."""
    if name in dims:
        return dims[name]
    return sum(dims[term.strip()] for term in name.split("+"))


def model_inputs(model, dims):
    init = {i.name for i in model.graph.initializer}
    infos = []
    for vi in model.graph.input:
        if vi.name in init:
            continue
        t = vi.type.tensor_type
        if t.elem_type not in NUMPY_OF_ONNX:
            raise ValueError(f"input {vi.name}: element type {t.elem_type} not generated")
        shape = tuple(d.dim_value if d.HasField("dim_value") else dim_value(d.dim_param, dims)
                      for d in t.shape.dim)
        infos.append(InputInfo(vi.name, NUMPY_OF_ONNX[t.elem_type], shape))
    return infos


def check(path, sinter, tol, rng, work):
    import onnxruntime as ort
    model = onnx.load(path)
    feeds = {}
    for info in model_inputs(model, bindings(path)):
        value = make_input(info, rng)
        feeds[info.name] = value.astype(info.dtype) if info.dtype == "float16" else value
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    refs = session.run(None, feeds)
    names = [o.name for o in session.get_outputs()]

    for name, value in feeds.items():
        model.graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
    kept = [vi for vi in model.graph.input if vi.name not in feeds]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    const_path = os.path.join(work, "model.onnx")
    graph_path = os.path.join(work, "graph.mlir")
    onnx.save(model, const_path)
    proc = subprocess.run([sinter, "compile", const_path, "--compile-to=graph",
                           "--print-constants", "-o", graph_path],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return [("", "FAIL", "compile: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:300])]
    got, why = folded_outputs(open(graph_path).read())
    if got is None:
        return [("", "SKIP", f"does not fold on the host: {why}")]
    results = []
    for name, (_, value), ref in zip(names, got, refs):
        if value.shape != ref.shape:
            results.append((name, "FAIL", f"shape {value.shape}, onnxruntime {ref.shape}"))
            continue
        if value.size == 0:
            results.append((name, "ok", "empty, as onnxruntime's"))
            continue
        err, text = compare(value, ref)
        results.append((name, "ok" if err <= tol else "FAIL", text))
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", help=".onnx files or optimum_sweep.sh output folders")
    p.add_argument("--tol", type=float, default=1e-4, help="relative L2 bound (default 1e-4)")
    p.add_argument("--sinter", default=os.path.join(HERE, "..", "..", "build", "bin", "sinter"))
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    models = []
    for path in args.paths:
        if os.path.isdir(path):  # a sweep's output, or one architecture's folder of it
            models += sorted(glob.glob(os.path.join(path, "*", "onnx", "*.onnx")) +
                             glob.glob(os.path.join(path, "onnx", "*.onnx")))
        else:
            models.append(path)
    counts = {"ok": 0, "FAIL": 0, "SKIP": 0}
    for path in models:
        label = os.path.relpath(path, os.path.dirname(args.paths[0].rstrip("/")))
        with tempfile.TemporaryDirectory() as work:
            try:
                results = check(path, args.sinter, args.tol, rng, work)
            except Exception as e:  # one broken model must not hide the others
                results = [("", "FAIL", f"{type(e).__name__}: {str(e)[:300]}")]
        for name, status, text in results:
            print(f"{label} {name}: {status} {text}".replace("  ", " "), flush=True)
            counts[status] += 1
    print(f"{counts['ok']} outputs within {args.tol:g} of onnxruntime (CPU), "
          f"{counts['FAIL']} failed, {counts['SKIP']} models did not fold")
    return 0 if counts["FAIL"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
