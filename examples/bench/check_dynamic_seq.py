#!/usr/bin/env python3
"""Prompt lengths chosen at compile time: export a small Llama with a dynamic sequence
dimension once, compile it with `--shape input_ids=1xL --shape attention_mask=1xL` for several
L, and check each .so against PyTorch on fresh random tokens (run on the GPU machine):

    python3 examples/bench/check_dynamic_seq.py --sinter build/bin/sinter --lengths 12 20 128

Prints, per length, the logit error of Sinter and of PyTorch bf16 eager against an fp32
PyTorch model with the same bf16 weights, and whether the top-1 tokens agree. Exits 1 when
Sinter's error is above 1.5x PyTorch bf16's.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from bench_common import rel_err  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sinter", default="build/bin/sinter")
    p.add_argument("--out-dir", default="/tmp/sinter-dynseq")
    p.add_argument("--lengths", type=int, nargs="+", default=[12, 20, 128])
    p.add_argument("--model-args", nargs="*",
                   default=["--layers", "2", "--hidden", "256", "--intermediate", "512",
                            "--heads", "8", "--kv-heads", "2", "--head-dim", "32",
                            "--vocab", "1024"],
                   help="export_llama.py flags for the model (default: a small 2-layer Llama)")
    a = p.parse_args()
    import torch
    import export_llama
    import sinter_ctypes

    os.makedirs(a.out_dir, exist_ok=True)
    onnx_path = os.path.join(a.out_dir, "llama_dynseq.onnx")
    export_args = a.model_args + ["--dynamic-seq", "--no-ort-check", "--out", onnx_path]
    if export_llama.main(export_args):
        return 1
    ea = export_llama.parse_args(export_args)
    cfg = export_llama.build_config(ea)
    model = export_llama.build_model(cfg, ea, "sdpa").cuda().eval()
    ref_model = export_llama.build_model(cfg, ea, "sdpa").float().cuda().eval()
    gen = torch.Generator(device="cuda").manual_seed(99)
    ok = True
    for length in a.lengths:
        so = os.path.join(a.out_dir, f"llama_seq{length}.so")
        r = subprocess.run([a.sinter, "compile", onnx_path, "-o", so,
                            f"--shape=input_ids=1x{length}", f"--shape=attention_mask=1x{length}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"seq {length}: sinter compile failed: {r.stderr.strip()}")
            ok = False
            continue
        m = sinter_ctypes.Model(so)
        ctx = m.context("direct")
        ids = torch.randint(0, cfg.vocab_size, (1, length), generator=gen, device="cuda")
        mask = torch.ones(1, length, dtype=torch.int64, device="cuda")
        with torch.no_grad():
            ref = ref_model(input_ids=ids, attention_mask=mask, use_cache=False).logits.float()
            eager = model(input_ids=ids, attention_mask=mask, use_cache=False).logits
        out = ctx.run([ids, mask])[0]
        torch.cuda.synchronize()
        e_s, e_t = rel_err(out, ref, torch), rel_err(eager, ref, torch)
        top1 = (out.float().argmax(-1) == ref.argmax(-1)).float().mean().item()
        top1_t = (eager.float().argmax(-1) == ref.argmax(-1)).float().mean().item()
        good = e_s <= 1.5 * e_t
        ok &= good
        print(f"seq {length}: {m.num_launches} launches; sinter {e_s:.3e}, torch bf16 "
              f"{e_t:.3e} (ratio {e_s / e_t:.2f}); top-1 agreement sinter {top1:.3f}, "
              f"torch bf16 {top1_t:.3f}: {'OK' if good else 'FAIL'}", flush=True)
        ctx.close()
        m.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
