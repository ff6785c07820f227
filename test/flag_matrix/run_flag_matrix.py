#!/usr/bin/env python3
"""The flag matrix: every committed model compiled to source under every combination of the
compile flags that applies to it. Each compile must succeed (exit 0) or fail with exactly one
line on stderr, `sinter: error: ...`, and exit 1. A crash (a signal or any other exit code),
an empty or multi-line error, or an "internal error" fails the run.

    python3 test/flag_matrix/run_flag_matrix.py [--sinter build/bin/sinter] [--jobs 2]

Models: examples/fixtures/*.onnx (the exports of examples/*.py) and the importer's test models
(test/lit/Import/Inputs/**/*.onnx: one model per supported op, and the hostile ones).
Flags: --precision {strict, tf32} x --activations {model, f32} x merge LoRA {yes, no} x
--weights {embedded, external} x --target {h200, h100} x --dtype {model, bf16, f16}: 96
combinations, all of which apply to
every model (each flag is accepted for any model; the ones that do not change a model's
compile are still run: they must not break it). A model with symbolic input dimensions is
compiled once more per combination with every symbolic dimension bound by --shape (the
dimensions read with the onnx package; 4 for each), and without, which must be refused in
one line. The language-model flags (--sample, --last-logits, both) are run once more per
--dtype with the other flags at their defaults (9 combinations; a model that is not a language
model must refuse them in one line), and so are --weight-dtype fp8, int4 and bf16 (9
combinations), fp8 and int4 each with each other flag's second value besides
--activations=f32, and fp8 and int4 with --activations=f32, which must be refused (10 more). Prints one line per model (how many combinations compiled, how many were refused and
the distinct reasons) and a total.
"""
import argparse
import glob
import itertools
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

FLAGS = [
    ("--precision=strict", "--precision=tf32"),
    ("--activations=model", "--activations=f32"),
    ("", "--no-merge-lora"),
    ("--weights=embedded", "--weights=external"),
    ("--target=h200", "--target=h100"),
    ("--dtype=model", "--dtype=bf16", "--dtype=f16"),
]

# Language-model flags, each set with every --dtype and the other flags at their defaults.
LM_FLAGS = [["--sample"], ["--last-logits"], ["--sample", "--last-logits"]]
LM_DTYPES = ["--dtype=model", "--dtype=bf16", "--dtype=f16"]

# --weight-dtype: each value with every --dtype, then fp8 and int4 with each other flag's
# second value.
QUANTIZED = ("--weight-dtype=fp8", "--weight-dtype=int4")
WEIGHT_DTYPE_FLAGS = [[w, dtype] for w in QUANTIZED + ("--weight-dtype=bf16",)
                      for dtype in LM_DTYPES] + \
    [[w, "--dtype=bf16", flag] for w in QUANTIZED for flag in
     ("--precision=tf32", "--no-merge-lora", "--weights=external", "--target=h100")] + \
    [[w, "--activations=f32"] for w in QUANTIZED]


def symbolic_shapes(path):
    """--shape arguments binding every symbolic input dimension to 4, or None when the model
    has none (or the onnx package is missing, or the file does not parse)."""
    try:
        import onnx
        model = onnx.load(path, load_external_data=False)
    except Exception:
        return None
    initializers = {t.name for t in model.graph.initializer}
    shapes = []
    for value in model.graph.input:
        if value.name in initializers or not value.type.HasField("tensor_type"):
            continue
        dims = value.type.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims) and dims:
            shape = "x".join(str(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0
                             else "4" for d in dims)
            shapes.append(f"--shape={value.name}={shape}")
    return shapes or None


def compile_once(sinter, model, flags, out_dir):
    out = os.path.join(out_dir, "model.cu")
    cmd = [sinter, "compile", model, "--compile-to=source", "-o", out] + [f for f in flags if f]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=out_dir)
    except subprocess.TimeoutExpired:
        return "bug", "timed out after 120 s", cmd
    err = p.stderr.strip("\n")
    if p.returncode == 0:
        return "ok", "", cmd
    lines = err.split("\n") if err else []
    if p.returncode != 1:
        return "bug", f"exit code {p.returncode}: {err[-400:]}", cmd
    if len(lines) != 1 or not lines[0].startswith("sinter: error: ") or \
            len(lines[0]) <= len("sinter: error: "):
        return "bug", f"not one error line ({len(lines)} lines): {err[-400:]}", cmd
    if "internal error" in lines[0]:
        return "bug", lines[0], cmd
    return "refused", lines[0][len("sinter: error: "):], cmd


def run_model(sinter, model, root):
    combos = [list(c) for c in itertools.product(*FLAGS)]
    combos += [lm + [dtype] for lm in LM_FLAGS for dtype in LM_DTYPES]
    combos += WEIGHT_DTYPE_FLAGS
    shapes = symbolic_shapes(model)
    if shapes:
        combos = [c + shapes for c in combos] + combos
    results = []
    with tempfile.TemporaryDirectory(dir=root) as out_dir:
        for flags in combos:
            results.append(compile_once(sinter, model, flags, out_dir))
    return model, results


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sinter", default="build/bin/sinter")
    p.add_argument("--jobs", type=int, default=int(os.environ.get("SINTER_JOBS", "2")))
    p.add_argument("--filter", default="", help="only models whose path contains this")
    a = p.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.chdir(repo)
    sinter = os.path.abspath(a.sinter)
    models = sorted(glob.glob("examples/fixtures/*.onnx")) + \
        sorted(glob.glob("test/lit/Import/Inputs/**/*.onnx", recursive=True))
    models = [m for m in models if a.filter in m]
    if not models:
        print("flag-matrix: no models", file=sys.stderr)
        return 2
    root = tempfile.mkdtemp(prefix="sinter-flag-matrix-")
    total = {"ok": 0, "refused": 0, "bug": 0}
    bugs = []
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for model, results in pool.map(lambda m: run_model(sinter, os.path.abspath(m), root),
                                       models):
            counts = {k: sum(1 for r in results if r[0] == k) for k in total}
            for k in total:
                total[k] += counts[k]
            reasons = sorted({r[1] for r in results if r[0] == "refused"})
            line = (f"flag-matrix: {os.path.relpath(model, repo)}: {counts['ok']} compiled, "
                    f"{counts['refused']} refused")
            if reasons:
                line += f" ({len(reasons)} reason{'s' if len(reasons) > 1 else ''}: " + \
                    " | ".join(r[:160] for r in reasons[:3]) + (" | ..." if len(reasons) > 3 else "") + ")"
            print(line)
            bugs += [(model, r) for r in results if r[0] == "bug"]
    os.rmdir(root)
    print(f"flag-matrix: {len(models)} models, {sum(total.values())} compiles: {total['ok']} "
          f"compiled, {total['refused']} refused in one line, {total['bug']} bugs")
    for model, (_, detail, cmd) in bugs[:20]:
        print(f"flag-matrix: BUG {os.path.relpath(model, repo)}: {detail}\n  {' '.join(cmd)}",
              file=sys.stderr)
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
