#!/usr/bin/env python3
"""Runs a compiled fixture on the GPU and compares it with the reference the export saved.

    python3 examples/bench/check_fixture.py build/llama.so examples/fixtures/llama_tiny_l1_op18

STEM.input_ids.npy / STEM.attention_mask.npy (Llama) or STEM.input.npy (LoRA MLP) are the
inputs, STEM.logits.npy / STEM.output.npy the PyTorch outputs. Prints the relative L2 error
and, for logits, whether the top-1 token matches at every position; exits 1 past --bound.

A KV-cache model (entries "prefill" and "decode", fixtures from export_llama.py --kv-cache)
takes the stem of its prefill export and finds the decode one beside it:

    python3 examples/bench/check_fixture.py build/kv.so examples/fixtures/llama_tiny_kv

runs prefill on STEM_prefill.input_ids.npy, then the decode steps of STEM_decode.input_ids.npy
at STEM_decode.cache_position.npy, each compared with the saved logits; a library with a
"chunk" entry (export_llama.py --chunk) also runs prefill then the chunks of
STEM_chunk.input_ids.npy at STEM_chunk.cache_position.npy on a fresh cache. A library compiled
with --weights=external loads the weights file beside it (or --weights FILE; with
--allow-new-weights, a file of other values, e.g. another LoRA adapter's).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("so")
    p.add_argument("stem")
    p.add_argument("--bound", type=float, default=2e-2, help="max relative L2 error against "
                   "PyTorch's logits (fixtures without STEM.logits_exact.npy)")
    p.add_argument("--ratio", type=float, default=1.5,
                   help="with STEM.logits_exact.npy (the float64 evaluation of the same weights): "
                        "max ratio of Sinter's error to PyTorch's own, both against it (default 1.5)")
    p.add_argument("--weights", help="the weights file of a library compiled with "
                   "--weights=external (default: SO's stem + .safetensors, when it exists)")
    p.add_argument("--allow-new-weights", action="store_true",
                   help="accept a --weights file whose values differ from the compiled ones "
                        "(same names, dtypes and shapes): another adapter or checkpoint")
    a = p.parse_args()
    if a.weights is None:
        beside = os.path.splitext(a.so)[0] + ".safetensors"
        a.weights = beside if os.path.exists(beside) else None
    import numpy as np
    import torch
    import sinter_ctypes

    if os.path.exists(a.stem + "_prefill.input_ids.npy"):
        return check_kv(a, np, torch, sinter_ctypes)
    if os.path.exists(a.stem + ".input_ids.npy"):
        inputs = [np.load(a.stem + ".input_ids.npy"), np.load(a.stem + ".attention_mask.npy")]
        if os.path.exists(a.stem + ".position_ids.npy"):  # optimum's exports take them too
            inputs.append(np.load(a.stem + ".position_ids.npy"))
        ref = np.load(a.stem + ".logits.npy")
    else:
        inputs = [np.load(a.stem + ".input.npy")]
        ref = np.load(a.stem + ".output.npy")
    model = sinter_ctypes.Model(a.so, weights=a.weights, allow_new_values=a.allow_new_weights)
    ctx = model.context("direct")
    out = ctx.run([torch.from_numpy(x).cuda() for x in inputs])[0]
    torch.cuda.synchronize()
    got = out.float().cpu().numpy().reshape(ref.shape)
    err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
    top1 = bool((got.argmax(-1) == ref.argmax(-1)).all()) if ref.ndim == 3 else True
    exact_path = a.stem + ".logits_exact.npy"
    if os.path.exists(exact_path):
        exact = np.load(exact_path)
        if ref.ndim == 3:  # a padded position's logits are not defined by the model
            attended = inputs[1].astype(bool)
            got, ref, exact = got[attended], ref[attended], exact[attended]
        ok = check_against_exact(a, got, ref, exact, np)
    else:
        ok = err <= a.bound and top1
        print(f"{os.path.basename(a.so)}: rel err {err:.3e} (bound {a.bound:.0e}), "
              f"top-1 identical {top1}: {'OK' if ok else 'FAIL'}")
    ctx.close()
    model.close()
    return 0 if ok else 1


def check_against_exact(a, got, ref, exact, np):
    """The project's numerics rule: Sinter's relative error against the float64 evaluation of the
    same weights is at most RATIO x PyTorch's own error in the model's dtype; a top-1 token that
    differs from PyTorch's must be a near-tie of the exact logits (gap under 1 % of the logit
    scale, both among the exact top 3)."""
    def rel(x):
        return float(np.linalg.norm((x - exact).astype(np.float64)) /
                     np.linalg.norm(exact.astype(np.float64)))
    sinter_err, torch_err = rel(got), rel(ref)
    ratio = sinter_err / torch_err if torch_err else float("inf")
    rows_got = got.reshape(-1, got.shape[-1])
    rows_ref = ref.reshape(-1, ref.shape[-1])
    rows_exact = exact.reshape(-1, exact.shape[-1])
    mismatches, ties = 0, 0
    for g, r, e in zip(rows_got.argmax(-1), rows_ref.argmax(-1), rows_exact):
        if g == r:
            continue
        mismatches += 1
        scale = float(np.abs(e).max())
        top3 = set(int(i) for i in np.argsort(-e)[:3])
        ties += abs(float(e[g]) - float(e[r])) <= 0.01 * scale and {int(g), int(r)} <= top3
    ok = sinter_err <= a.ratio * torch_err and mismatches == ties
    print(f"{os.path.basename(a.so)}: rel err vs float64 {sinter_err:.3e}, PyTorch's "
          f"{torch_err:.3e}, ratio {ratio:.2f} (bound {a.ratio}); top-1 differs from PyTorch at "
          f"{mismatches}/{len(rows_got)} positions ({ties} near-ties); "
          f"top-1 identical {mismatches == 0}: {'OK' if ok else 'FAIL'}")
    return ok


def compare(name, got, ref, bound, np):
    got = got.reshape(ref.shape)
    err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
    top1 = bool((got.argmax(-1) == ref.argmax(-1)).all())
    ok = err <= bound and top1
    print(f"  {name}: rel err {err:.3e} (bound {bound:.0e}), top-1 identical {top1}")
    return ok


def check_kv(a, np, torch, sinter_ctypes):
    """Prefill, then decode step by step on the context's own cache. Each entry's inputs are
    read by name: STEM_prefill.NAME.npy, STEM_decode.NAME.npy with one row per step (the
    export_llama.py --kv-cache fixtures: input_ids and cache_position; an optimum with-past
    export compiled with --cache-length: also attention_mask and position_ids)."""
    ref = np.load(a.stem + "_prefill.logits.npy").astype(np.float32)
    step_ref = np.load(a.stem + "_decode.logits.npy").astype(np.float32)
    exact = None
    if os.path.exists(a.stem + "_prefill.logits_exact.npy"):
        exact = (np.load(a.stem + "_prefill.logits_exact.npy"),
                 np.load(a.stem + "_decode.logits_exact.npy"))
    model = sinter_ctypes.Model(a.so, weights=a.weights, allow_new_values=a.allow_new_weights)

    def inputs_of(entry, kind):
        names = [i.name for i in model.entry(entry).inputs]
        missing = [n for n in names if not os.path.exists(f"{a.stem}_{kind}.{n}.npy")]
        if missing:
            raise SystemExit(f"check_fixture.py: no {a.stem}_{kind}.NAME.npy for the {entry} "
                             f"entry's inputs {missing}")
        return [np.load(f"{a.stem}_{kind}.{n}.npy") for n in names]

    prefill_inputs = inputs_of("prefill", "prefill")
    step_inputs = inputs_of("decode", "decode")
    positions = np.load(a.stem + "_decode.cache_position.npy")
    chunk_ref = chunk_inputs = None
    if "chunk" in model.entries:
        if not os.path.exists(a.stem + "_chunk.logits.npy"):
            raise SystemExit(f"check_fixture.py: the library has a chunk entry but there is no "
                             f"{a.stem}_chunk.logits.npy")
        chunk_ref = np.load(a.stem + "_chunk.logits.npy").astype(np.float32)
        chunk_inputs = inputs_of("chunk", "chunk")
        chunk_positions = np.load(a.stem + "_chunk.cache_position.npy")
        if exact is not None:
            exact = exact + (np.load(a.stem + "_chunk.logits_exact.npy"),)
    ok = True
    for mode in ("direct", "graph"):
        ctx = model.context(mode)
        ctx.reset_state()
        out = ctx.run_entry("prefill", [torch.from_numpy(x).cuda() for x in prefill_inputs])[0]
        torch.cuda.synchronize()
        print(f"{os.path.basename(a.so)} ({mode}):")
        prefill = out.float().cpu().numpy()
        steps = []
        for i in range(step_ref.shape[0]):
            out = ctx.run_entry("decode", [torch.from_numpy(x[i]).cuda() for x in step_inputs])[0]
            torch.cuda.synchronize()
            steps.append(out.float().cpu().numpy())
        chunks = []
        if chunk_ref is not None:  # a fresh cache: the prompt, then the chunks after it
            ctx.reset_state()
            ctx.run_entry("prefill", [torch.from_numpy(x).cuda() for x in prefill_inputs])
            for i in range(chunk_ref.shape[0]):
                out = ctx.run_entry("chunk", [torch.from_numpy(x[i]).cuda() for x in chunk_inputs])[0]
                torch.cuda.synchronize()
                chunks.append(out.float().cpu().numpy())
        ctx.close()
        if exact is not None:
            # The project's rule over the prompt and every step together; a padded prompt
            # position's logits are not defined by the model.
            V = ref.shape[-1]
            kept = np.ones(prefill.size // V, dtype=bool)
            names = [i.name for i in model.entry("prefill").inputs]
            if "attention_mask" in names:
                kept = prefill_inputs[names.index("attention_mask")].reshape(-1).astype(bool)
            got_all = np.concatenate([prefill.reshape(-1, V)[kept]] +
                                     [x.reshape(-1, V) for x in steps + chunks])
            ref_all = np.concatenate([ref.reshape(-1, V)[kept], step_ref.reshape(-1, V)] +
                                     ([chunk_ref.reshape(-1, V)] if chunks else []))
            exact_all = np.concatenate([exact[0].reshape(-1, V)[kept]] +
                                       [e.reshape(-1, V) for e in exact[1:]])
            if chunks:
                # The chunks alone too: a wrong chunk entry must not hide among the steps.
                print("  chunks:", end=" ")
                ok &= check_against_exact(a, np.concatenate([x.reshape(-1, V) for x in chunks]),
                                          chunk_ref.reshape(-1, V), exact[-1].reshape(-1, V), np)
            ok &= check_against_exact(a, got_all, ref_all, exact_all, np)
            continue
        ok &= compare("prefill", prefill, ref, a.bound, np)
        for i, got in enumerate(steps):
            ok &= compare(f"decode at position {int(positions[i][0])}", got, step_ref[i],
                          a.bound, np)
        for i, got in enumerate(chunks):
            at = chunk_positions[i]
            ok &= compare(f"chunk at positions {int(at[0])}..{int(at[-1])}", got, chunk_ref[i],
                          a.bound, np)
    model.close()
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
