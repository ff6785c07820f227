#!/usr/bin/env python3
"""W2 benchmark: the PEFT LoRA MLP (3584->256->256->3584, r=16) on a 1x4096x3584 fp32 input.

Run on the GPU machine from the repository root, with a built (or carried) `sinter`:

    python3 examples/bench/lora_mlp.py --sinter build/bin/sinter --out-dir /tmp/w2

In one process it: builds the PEFT model from the seed, exports it with
examples/export_lora_mlp.py, compiles it with Sinter twice (--precision=strict and tf32),
loads both .so files through examples/bench/sinter_ctypes.py, checks numerics against PEFT
fp32 on fresh random inputs, measures the card's ceilings (device-to-device copy bandwidth,
fp32 and TF32 matrix rates), and times every system the same way: CUDA events around
`--calls` back-to-back calls, median of `--reps` repetitions. Kernel counts come from the
PyTorch profiler for every system, Sinter included. Prints one table and writes it, with
the raw numbers, to OUT_DIR/lora_mlp.md and OUT_DIR/lora_mlp.json.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from bench_common import (copy_bandwidth, profile_kernels, rel_err, save_results,  # noqa: E402
                          time_calls)

STRICT_BOUND = 1e-5
TF32_BOUND = 5e-3


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sinter", default="build/bin/sinter", help="the sinter compiler binary")
    p.add_argument("--out-dir", default="/tmp/sinter-w2", help="where exports, .so files and results go")
    p.add_argument("--rows", type=int, default=4096, help="input rows (default 4096)")
    p.add_argument("--seed", type=int, default=0, help="model seed (default 0)")
    p.add_argument("--calls", type=int, default=50, help="back-to-back calls per repetition")
    p.add_argument("--reps", type=int, default=5, help="repetitions; the median is reported")
    p.add_argument("--checks", type=int, default=3, help="fresh random inputs for the numerics check")
    p.add_argument("--skip-compile-mode", action="store_true", help="skip torch.compile")
    return p.parse_args()


def measure_ceilings(torch):
    """Copy bandwidth (bytes read + written) and fp32 / TF32 matrix rates on this card."""
    bandwidth = copy_bandwidth(torch)
    m = 8192
    x = torch.randn(m, m, device="cuda")
    y = torch.randn(m, m, device="cuda")
    rates = {}
    for name, allow in (("fp32", False), ("tf32", True)):
        torch.backends.cuda.matmul.allow_tf32 = allow
        ms = time_calls(lambda: torch.mm(x, y), 5, 5, torch)
        rates[name] = 2 * m ** 3 / (ms * 1e-3)
    torch.backends.cuda.matmul.allow_tf32 = False
    return bandwidth, rates


def compile_model(sinter, onnx_path, so_path, precision):
    cmd = [sinter, "compile", onnx_path, "-o", so_path, f"--precision={precision}", "--timing"]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"sinter compile failed ({r.returncode}):\n{r.stderr}")
    print(r.stderr.strip())
    return time.time() - t0


def main():
    a = parse_args()
    import torch
    import export_lora_mlp

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(a.out_dir, exist_ok=True)
    dev = torch.cuda.get_device_name()
    print(f"device: {dev}, torch {torch.__version__}")

    onnx_path = os.path.join(a.out_dir, "lora_mlp.onnx")
    export_args = ["--rows", str(a.rows), "--seed", str(a.seed), "--out", onnx_path]
    t0 = time.time()
    export_lora_mlp.main(export_args)
    print(f"export: {time.time() - t0:.1f} s")
    compile_s = {}
    so = {}
    for precision in ("strict", "tf32"):
        so[precision] = os.path.join(a.out_dir, f"lora_mlp_{precision}.so")
        compile_s[precision] = compile_model(a.sinter, onnx_path, so[precision], precision)

    model, _ = export_lora_mlp.build_model(export_lora_mlp.parse_args(export_args))
    model = model.cuda().eval()
    inner = model.base_model.model

    import sinter_ctypes
    results = {"device": dev, "torch": torch.__version__, "rows": a.rows,
               "compile_seconds": compile_s}
    numerics = {}
    sinter_models = {p: sinter_ctypes.Model(so[p]) for p in so}
    contexts = {(p, mode): sinter_models[p].context(mode)
                for p in so for mode in ("direct", "graph")}
    gen = torch.Generator(device="cuda").manual_seed(1234)
    shape = (1, a.rows, 3584)
    with torch.no_grad():
        for (p, mode), ctx in contexts.items():
            worst = 0.0
            for _ in range(a.checks):
                x = torch.randn(shape, generator=gen, device="cuda")
                ref = inner(x)
                out = ctx.run([x])[0]
                torch.cuda.synchronize()
                worst = max(worst, rel_err(out, ref, torch))
            bound = STRICT_BOUND if p == "strict" else TF32_BOUND
            numerics[f"{p}/{mode}"] = {"rel_err": worst, "bound": bound, "ok": worst <= bound}
            print(f"numerics sinter {p} {mode}: rel err {worst:.2e} (bound {bound:.0e})"
                  f" {'OK' if worst <= bound else 'FAIL'}")
    results["numerics"] = numerics

    bandwidth, rates = measure_ceilings(torch)
    results["ceilings"] = {"copy_bytes_per_s": bandwidth, "fp32_flops": rates["fp32"],
                           "tf32_flops": rates["tf32"]}
    flops = 2 * a.rows * (3584 * 256 + 256 * 256 + 256 * 3584)
    io_bytes = 4 * a.rows * 3584 * 2
    floor_strict = max(flops / rates["fp32"], io_bytes / bandwidth) * 1e3
    floor_tf32 = max(flops / rates["tf32"], io_bytes / bandwidth) * 1e3
    print(f"ceilings: copy {bandwidth / 1e12:.2f} TB/s, fp32 {rates['fp32'] / 1e12:.1f} TFLOP/s, "
          f"tf32 {rates['tf32'] / 1e12:.1f} TFLOP/s; floors strict {floor_strict:.3f} ms, "
          f"tf32 {floor_tf32:.3f} ms")

    x = torch.randn(shape, generator=gen, device="cuda")
    with torch.no_grad():
        merged = torch.nn.Sequential(*[torch.nn.Linear(1, 1) for _ in range(3)]).cuda()
        for i, layer in enumerate(inner):
            w = layer.base_layer.weight + layer.scaling["default"] * (
                layer.lora_B["default"].weight @ layer.lora_A["default"].weight)
            merged[i].weight = torch.nn.Parameter(w.clone())
            merged[i].bias = torch.nn.Parameter(layer.base_layer.bias.clone())

    systems = []

    def add(name, fn, floor, precision):
        with torch.no_grad():
            ms = time_calls(fn, a.calls, a.reps, torch)
            kernels, _ = profile_kernels(fn, torch)
        systems.append({"system": name, "ms": ms, "kernels": kernels,
                        "floor_ms": floor, "precision": precision})
        print(f"{name:48s} {ms:8.4f} ms  {kernels:3d} kernels  {ms / floor:5.2f}x floor")

    add("PEFT eager, fp32", lambda: model(x), floor_strict, "fp32")
    if not a.skip_compile_mode:
        compiled = torch.compile(model, fullgraph=True)
        with torch.no_grad():
            compiled(x)
        add("torch.compile(fullgraph=True), fp32", lambda: compiled(x), floor_strict, "fp32")
    add("three merged linears, eager fp32", lambda: merged(x), floor_strict, "fp32")
    torch.backends.cuda.matmul.allow_tf32 = True
    add("three merged linears, eager TF32", lambda: merged(x), floor_tf32, "tf32")
    torch.backends.cuda.matmul.allow_tf32 = False
    for p in ("strict", "tf32"):
        for mode in ("direct", "graph"):
            ctx = contexts[(p, mode)]
            y = ctx.new_outputs()
            call = ctx.bind([x], y)
            add(f"Sinter --precision={p}, {mode}", call,
                floor_strict if p == "strict" else floor_tf32, p)
    results["systems"] = systems
    results["floors_ms"] = {"strict": floor_strict, "tf32": floor_tf32}

    lines = ["| system | ms / call | kernels | x floor |", "|---|---|---|---|"]
    for s in systems:
        lines.append(f"| {s['system']} | {s['ms']:.4f} | {s['kernels']} | "
                     f"{s['ms'] / s['floor_ms']:.2f} |")
    table = "\n".join(lines)
    print()
    print(table)
    save_results(a.out_dir, "lora_mlp", table, results)
    for c in contexts.values():
        c.close()
    for m in sinter_models.values():
        m.close()
    bad = [k for k, v in numerics.items() if not v["ok"]]
    if bad:
        print(f"numerics out of bounds: {bad}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
