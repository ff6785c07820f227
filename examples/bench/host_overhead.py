#!/usr/bin/env python3
"""Host overhead: CPU microseconds per call for Sinter (direct and graph mode) next to PyTorch
eager, torch.compile and torch.compile(mode="reduce-overhead") on a comparable tiny model, all
in one run on the GPU machine.

    python3 examples/bench/host_overhead.py --bin build-example/host_overhead \\
        --model host_overhead_model.so --model lora_mlp_tiny.so --out-dir /tmp/host

Sinter is measured by the C++ program `host_overhead` (examples/bench/host_overhead.cpp, built
by examples/cpp/CMakeLists.txt), which calls sinter_run from C++ so no binding cost is counted.
PyTorch is measured the same way here: each batch times (time.perf_counter) the issue of
`calls` back-to-back calls without synchronizing, then synchronizes outside the timed region;
the median over the batches is reported, per call and per GPU kernel (kernels counted with the
PyTorch profiler, as examples/bench/lora_mlp.py does). The PyTorch model is the LoRA MLP tiny
fixture's architecture (64 -> 32 -> 32 -> 64, r = 8, 4 rows, fp32): three base linears plus
their LoRA branches, unmerged, as PEFT runs them.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True, help="the host_overhead C++ program")
    p.add_argument("--model", action="append", default=[], help="a Sinter model .so (repeatable)")
    p.add_argument("--out-dir", default="/tmp/sinter-host-overhead")
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--calls", type=int, default=20, help="PyTorch calls per batch")
    p.add_argument("--skip-torch", action="store_true")
    return p.parse_args()


def sinter_numbers(binary, so, batches):
    r = subprocess.run([binary, so, "--json", "--batches", str(batches)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{binary} {so} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def host_us_per_call(fn, calls, batches, torch):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        per_call.append((t1 - t0) * 1e6 / calls)
    return statistics.median(per_call), min(per_call)


def torch_numbers(calls, batches):
    import torch
    from bench_common import profile_kernels

    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False

    class LoraLinear(torch.nn.Module):
        def __init__(self, i, o, r=8, alpha=16.0):
            super().__init__()
            self.base = torch.nn.Linear(i, o)
            self.a = torch.nn.Linear(i, r, bias=False)
            self.b = torch.nn.Linear(r, o, bias=False)
            self.scale = alpha / r

        def forward(self, x):
            return self.base(x) + self.b(self.a(x)) * self.scale

    model = torch.nn.Sequential(LoraLinear(64, 32), LoraLinear(32, 32), LoraLinear(32, 64)).cuda().eval()
    x = torch.randn(1, 4, 64, device="cuda")
    rows = {}
    with torch.inference_mode():
        systems = [("PyTorch eager", model)]
        t = time.perf_counter()
        compiled = torch.compile(model, fullgraph=True)
        compiled(x)
        torch.cuda.synchronize()
        print(f"torch.compile: compiled in {time.perf_counter() - t:.1f} s", flush=True)
        systems.append(("torch.compile", compiled))
        t = time.perf_counter()
        graphed = torch.compile(model, fullgraph=True, mode="reduce-overhead")
        for _ in range(3):
            graphed(x)
        torch.cuda.synchronize()
        print(f"torch.compile(reduce-overhead): compiled in {time.perf_counter() - t:.1f} s", flush=True)
        systems.append(("torch.compile reduce-overhead", graphed))
        for name, fn in systems:
            kernels, _ = profile_kernels(lambda: fn(x), torch)
            med, best = host_us_per_call(lambda: fn(x), calls, batches, torch)
            rows[name] = {"kernels": kernels, "us_per_call": med, "us_per_call_min": best,
                          "us_per_kernel": med / max(kernels, 1)}
            print(f"{name}: {med:.2f} us per call (min {best:.2f}), {kernels} kernels, "
                  f"{med / max(kernels, 1):.2f} us per kernel", flush=True)
        rows["_versions"] = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
    return rows


def main():
    a = parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    result = {"sinter": [], "torch": {}}
    for so in a.model:
        n = sinter_numbers(a.bin, so, a.batches)
        result["sinter"].append(n)
        print(f"sinter {os.path.basename(so)}: {n['launches']} launches; direct "
              f"{n['direct_us_per_call']:.2f} us per call = {n['direct_us_per_launch']:.2f} us per "
              f"launch; graph {n['graph_us_per_call']:.2f} us per call", flush=True)
    if not a.skip_torch:
        result["torch"] = torch_numbers(a.calls, a.batches)
    lines = ["| system | model | kernels / launches | host us per call | host us per kernel |",
             "|---|---|---|---|---|"]
    for n in result["sinter"]:
        name = os.path.basename(n["model"])
        lines.append(f"| Sinter direct | {name} | {n['launches']} | {n['direct_us_per_call']:.2f} | "
                     f"{n['direct_us_per_launch']:.2f} |")
        lines.append(f"| Sinter graph | {name} | {n['launches']} | {n['graph_us_per_call']:.2f} | "
                     f"{n['graph_us_per_call'] / n['launches']:.2f} |")
    for name, r in result["torch"].items():
        if name.startswith("_"):
            continue
        lines.append(f"| {name} | LoRA MLP tiny (torch) | {r['kernels']} | {r['us_per_call']:.2f} | "
                     f"{r['us_per_kernel']:.2f} |")
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(a.out_dir, "host_overhead.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(a.out_dir, "host_overhead.md"), "w") as f:
        f.write(table + "\n")


if __name__ == "__main__":
    main()
