#!/usr/bin/env python3
"""Generic-tier kernels on large tensors: bytes moved over the device copy bandwidth.

Builds small ONNX graphs (elementwise chains with a broadcast operand in f32 and bf16, a
softmax, a LayerNormalization, 2-D transposes in f32 and bf16, a batched transpose of the two
innermost dimensions plus a bias), compiles each with `sinter`, checks the output
against PyTorch, and times Sinter (CUDA graph), PyTorch eager and torch.compile on the same
inputs. Bytes = every input read once + every output written once; the floor is bytes over
the device-to-device copy bandwidth measured in the same run.

    python3 examples/bench/generic_bandwidth.py --sinter build/bin/sinter --out-dir /tmp/gb
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402
from sinter_ctypes import Model  # noqa: E402

ROWS, COLS = 16384, 1024  # 16 M elements: 64 MB in f32, 32 MB in bf16


def graph(name, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    return m


def vi(name, shape, t):
    return helper.make_tensor_value_info(name, t, shape)


def cases(torch):
    F, B = TensorProto.FLOAT, TensorProto.BFLOAT16
    f32, bf16 = torch.float32, torch.bfloat16
    out = []
    for dt, tdt, rows in ((F, f32, ROWS), (B, bf16, 2 * ROWS)):
        shape = [rows, COLS]
        scale = ([numpy_helper.from_array(np.array(0.5, np.float32), "s")] if dt == F else
                 [helper.make_tensor("s", B, [], [0.5])])
        model = graph("affine", [helper.make_node("Mul", ["x", "s"], ["a"]),
                                 helper.make_node("Add", ["a", "b"], ["y"])],
                      [vi("x", shape, dt), vi("b", [COLS], dt)], [vi("y", shape, dt)], scale)
        out.append((f"elementwise x*s+b {tdt}".replace("torch.", ""), model,
                    lambda x, b: x * 0.5 + b, [shape, [COLS]], tdt))
        model = graph("chain", [helper.make_node("Mul", ["x", "s"], ["a"]),
                                helper.make_node("Add", ["a", "b"], ["c"]),
                                helper.make_node("Tanh", ["c"], ["y"])],
                      [vi("x", shape, dt), vi("b", [COLS], dt)], [vi("y", shape, dt)],
                      [numpy_helper.from_array(np.array(0.5, np.float32), "s")] if dt == F else
                      [helper.make_tensor("s", B, [], [0.5])])
        out.append((f"elementwise tanh(x*s+b) {tdt}".replace("torch.", ""), model,
                    lambda x, b: torch.tanh(x * 0.5 + b), [shape, [COLS]], tdt))
    shape = [ROWS, COLS]
    out.append(("softmax (last axis) float32", graph(
        "softmax", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
        [vi("x", shape, F)], [vi("y", shape, F)]),
        lambda x: torch.softmax(x, -1), [shape], f32))
    out.append(("layer norm (last axis) float32", graph(
        "layernorm", [helper.make_node("LayerNormalization", ["x", "w", "b"], ["y"], axis=-1)],
        [vi("x", shape, F), vi("w", [COLS], F), vi("b", [COLS], F)], [vi("y", shape, F)]),
        lambda x, w, b: torch.nn.functional.layer_norm(x, (COLS,), w, b), [shape, [COLS], [COLS]], f32))
    out.append(("transpose float32", graph(
        "transpose", [helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])],
        [vi("x", shape, F)], [vi("y", shape[::-1], F)]),
        lambda x: x.t().contiguous(), [shape], f32))
    wide = [2 * ROWS, COLS]
    out.append(("transpose bfloat16", graph(
        "transpose_bf16", [helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])],
        [vi("x", wide, B)], [vi("y", wide[::-1], B)]),
        lambda x: x.t().contiguous(), [wide], bf16))
    batched = [ROWS // COLS, COLS, COLS]
    out.append(("batched transpose (0, 2, 1) + bias float32", graph(
        "transpose_batched", [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
                              helper.make_node("Add", ["t", "b"], ["y"])],
        [vi("x", batched, F), vi("b", [COLS], F)], [vi("y", batched, F)]),
        lambda x, b: x.transpose(1, 2) + b, [batched, [COLS]], f32))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sinter", default="build/bin/sinter")
    ap.add_argument("--out-dir", default="build-generic-bench")
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args()
    import torch
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(0)
    bandwidth = bench_common.copy_bandwidth(torch)
    rows, data = [], []
    for name, model, ref_fn, shapes, dtype in cases(torch):
        stem = os.path.join(args.out_dir, model.graph.name + "_" + str(dtype).split(".")[-1])
        onnx.save(model, stem + ".onnx")
        subprocess.run([args.sinter, "compile", stem + ".onnx", "-o", stem + ".so"], check=True)
        inputs = [torch.randn(s, device="cuda", dtype=dtype) for s in shapes]
        sinter = Model(stem + ".so")
        ctx = sinter.context("graph")
        ref = ref_fn(*inputs)
        out = torch.empty(ref.shape, dtype=ref.dtype, device=ref.device)  # row-major
        call = ctx.bind(inputs, [out])
        call()
        torch.cuda.synchronize()
        err = (out.float() - ref.float()).abs().max().item()
        nbytes = sum(t.numel() * t.element_size() for t in inputs) + out.numel() * out.element_size()
        floor_ms = nbytes / bandwidth * 1e3
        t_sinter = bench_common.time_calls(call, args.calls, 5, torch)
        t_eager = bench_common.time_calls(lambda: ref_fn(*inputs), args.calls, 5, torch)
        compiled = torch.compile(ref_fn)
        t_compile = bench_common.time_calls(lambda: compiled(*inputs), args.calls, 5, torch)
        row = dict(case=name, mbytes=nbytes / 1e6, floor_ms=floor_ms, sinter_ms=t_sinter,
                   eager_ms=t_eager, compile_ms=t_compile, max_abs_err=err,
                   sinter_of_copy=floor_ms / t_sinter)
        data.append(row)
        rows.append(f"| {name} | {nbytes / 1e6:.0f} | {floor_ms:.4f} | {t_eager:.4f} | "
                    f"{t_compile:.4f} | **{t_sinter:.4f}** | **{100 * floor_ms / t_sinter:.1f} %** | {err:.2e} |")
        print(rows[-1], flush=True)
        ctx.close()
        sinter.close()
    table = (f"Copy bandwidth {bandwidth / 1e12:.2f} TB/s (read + write).\n\n"
             "| kernel | MB moved | floor ms | eager ms | torch.compile ms | Sinter ms | Sinter % of copy | max abs err |\n"
             "|---|---|---|---|---|---|---|---|\n" + "\n".join(rows))
    print(table)
    bench_common.save_results(args.out_dir, "generic_bandwidth", table,
                              dict(copy_bandwidth=bandwidth, cases=data))


if __name__ == "__main__":
    main()
