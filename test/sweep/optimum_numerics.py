#!/usr/bin/env python3
"""GPU numerics of optimum_sweep.sh's libraries: each compiled .so beside its .onnx runs on
random inputs and is compared output by output with onnxruntime on the CPU (basic graph
optimizations only, so no approximate fusions), both in the export's fp32.

    python3 test/sweep/optimum_numerics.py [--tol 1e-4] SWEEP_OUT [...]

SWEEP_OUT: optimum_sweep.sh's output folder (ARCH/onnx/*.onnx with the .so next to each).
Inputs: ids in [3, 200) (the tiny vocabularies are 256), masks of ones, position ids counting
from 0, token types 0, floats from N(0, 1); the shapes are the library's (the sweep's --dim
bindings). An output passes when its relative L2 error against onnxruntime is at most --tol
(integer and bool outputs: equal). Prints one line per output, then the count; exit 1 on a
failure.
"""
import argparse
import glob
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
from sweep_dims import fixed_inputs  # noqa: E402


def make_input(info, rng):
    name, shape = info.name.lower(), info.shape
    if info.dtype in ("int64", "int32"):
        dtype = np.int64 if info.dtype == "int64" else np.int32
        if "mask" in name:
            return np.ones(shape, dtype)
        if "position" in name:
            return np.broadcast_to(np.arange(shape[-1], dtype=dtype), shape).copy()
        if "token_type" in name:
            return np.zeros(shape, dtype)
        return rng.integers(3, 200, size=shape).astype(dtype)
    if info.dtype == "bool":
        return np.ones(shape, np.bool_)
    if "mask" in name:
        return np.ones(shape, np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def compare(got, ref):
    if ref.dtype.kind in "biu":
        return (0.0 if np.array_equal(got, ref) else 1.0), "equal" if np.array_equal(got, ref) \
            else "differ"
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    if not np.all(np.isfinite(got)):
        return float("inf"), "non-finite values"
    denom = np.linalg.norm(ref)
    rel = np.linalg.norm(got - ref) / (denom if denom > 0 else 1.0)
    return rel, f"rel L2 {rel:.2e}, max abs {np.max(np.abs(got - ref)):.2e}"


def check(onnx_path, so_path, tol, rng, torch, sinter, ort):
    model = sinter.Model(so_path)
    feeds = {i.name: make_input(i, rng) for i in model.inputs}
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
    ort_names = [o.name for o in session.get_outputs()]
    ort_feeds = dict(feeds)
    for name, value in fixed_inputs(onnx_path).items():  # compiled in, not a library input
        ort_feeds[name] = np.array([value])
    refs = dict(zip(ort_names, session.run(None, ort_feeds)))
    with model.context("direct") as ctx:
        outs = ctx.run([torch.from_numpy(np.ascontiguousarray(feeds[i.name])).cuda()
                        for i in model.inputs])
    torch.cuda.synchronize()
    results = []
    for info, out in zip(model.outputs, outs):
        got = out.float().cpu().numpy() if out.is_floating_point() else out.cpu().numpy()
        if info.name not in refs:
            results.append((info.name, False, "not an onnxruntime output"))
            continue
        err, text = compare(got, refs[info.name])
        results.append((info.name, err <= tol, text))
    model.close()
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dirs", nargs="+", help="optimum_sweep.sh output folders")
    p.add_argument("--tol", type=float, default=1e-4, help="relative L2 bound (default 1e-4)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    import onnxruntime as ort
    import torch

    import sinter
    rng = np.random.default_rng(args.seed)
    passed = failed = 0
    for d in args.dirs:
        for onnx_path in sorted(glob.glob(os.path.join(d, "*", "onnx", "*.onnx"))):
            so_path = onnx_path[:-len(".onnx")] + ".so"
            label = os.path.relpath(onnx_path, d)
            if not os.path.exists(so_path):
                print(f"{label}: FAIL no library (did it compile?)")
                failed += 1
                continue
            try:
                results = check(onnx_path, so_path, args.tol, rng, torch, sinter, ort)
            except Exception as e:  # one broken model must not hide the others
                print(f"{label}: FAIL {type(e).__name__}: {str(e)[:300]}")
                failed += 1
                continue
            for name, ok, text in results:
                print(f"{label} {name}: {'ok  ' if ok else 'FAIL'} {text}")
                passed += ok
                failed += not ok
    print(f"{passed} of {passed + failed} outputs within {args.tol:g} of onnxruntime (CPU)")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
