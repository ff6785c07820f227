#!/usr/bin/env python3
"""Checks --weight-dtype int4 end to end on a one-layer Llama (GPU machine).

1. Reads the compiled library's int4 tensors back from --weights=external, decodes them by
   the layout launch_params.h documents, and matches every kernel row against the reference
   model's linears quantized as llama_decode.int4_dequantized does (exact fp32 equality).
2. Exports the same model with its linears already dequantized (bf16), compiles that in bf16
   and compares Sinter int4 (external and embedded weights) with Sinter bf16 on the
   dequantized weights and both with PyTorch, against the fp32 reference.

    python3 examples/bench/check_int4_weights.py [OUT_DIR]      (SKIP_ROWS=1 skips step 1)
"""
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402


def block_k(p):
    byte = p // 2
    lane = byte // 16
    word = (byte % 16) // 4
    nib = 2 * (byte % 4) + p % 2
    run = 2 * nib if nib < 4 else 2 * (nib - 4) + 1
    return 64 * (word // 2) + 32 * (word % 2) + 8 * lane + run


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    dt = {"U8": np.uint8, "F32": np.float32, "BF16": np.uint16}

    def get(name):
        e = header[name]
        a, z = e["data_offsets"]
        return np.frombuffer(raw[base + a: base + z], dt[e["dtype"]]).reshape(e["shape"])
    return header, get


def decode_int4(q, s):
    n, half_k = q.shape
    k = half_k * 2
    codes = np.zeros((n, k), np.int64)
    order = [block_k(p) for p in range(128)]
    for blk in range(0, k, 128):
        for p in range(128):
            byte = q[:, (blk + p) // 2]
            codes[:, blk + order[p]] = (byte >> (4 * (p % 2))) & 15
    group = k // s.shape[1]
    deq = np.repeat(s, group, axis=1) * (codes - 8).astype(np.float32)
    return deq.astype(np.float32) + np.float32(0)  # -0.0 -> 0.0


def main():
    import torch
    import export_llama
    from llama_decode import int4_dequantized
    from bench_common import rel_err
    import sinter_ctypes

    out_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/int4chk"
    sinter = "build/bin/sinter"
    os.makedirs(out_dir, exist_ok=True)
    onnx_path = os.path.join(out_dir, "l1.onnx")
    args = ["--layers", "1", "--seq", "6", "--opset", "18", "--seed", "0", "--no-ort-check",
            "--out", onnx_path]
    assert export_llama.main(args) == 0
    so = os.path.join(out_dir, "l1_int4.so")
    subprocess.run([sinter, "compile", onnx_path, "-o", so, "--weights=external",
                    "--weight-dtype=int4"], check=True)
    ea = export_llama.parse_args(args)
    cfg = export_llama.build_config(ea)
    ref_model = export_llama.build_model(cfg, ea, "sdpa").float().eval()
    q32 = int4_dequantized(ref_model, torch.float32, torch)
    rows = {}
    for name, mod in q32.named_modules():
        if isinstance(mod, torch.nn.Linear):
            w = mod.weight.detach().cpu().numpy().astype(np.float32) + np.float32(0)  # no -0
            for i in range(w.shape[0]):
                rows.setdefault(w[i].tobytes(), []).append((name, i))
    orig = {}
    for name, mod in ref_model.named_modules():
        if isinstance(mod, torch.nn.Linear):
            orig[name] = mod.weight.detach().cpu().numpy().astype(np.float32)
    header, get = read_safetensors(so[:-3] + ".safetensors")
    ok = True
    for name in sorted(header):
        if not name.endswith(".int4") or os.environ.get("SKIP_ROWS"):
            continue
        deq = decode_int4(get(name), get(name + "_scale"))
        hits = [rows.get(deq[i].tobytes()) for i in range(deq.shape[0])]
        matched = sum(h is not None for h in hits)
        srcs = sorted({h[0][0] for h in hits if h})
        print(f"{name} {deq.shape}: {matched}/{deq.shape[0]} rows equal a reference row; "
              f"from {srcs}", flush=True)
        ok &= matched == deq.shape[0]
        if matched < deq.shape[0]:
            bad = [i for i, h in enumerate(hits) if h is None][:3]
            for i in bad:
                # the nearest original row by correlation
                best = None
                for lname, w in orig.items():
                    if w.shape[1] != deq.shape[1]:
                        continue
                    c = w @ deq[i]
                    j = int(np.argmax(c))
                    score = c[j] / (np.linalg.norm(w[j]) * np.linalg.norm(deq[i]) + 1e-30)
                    if best is None or score > best[0]:
                        best = (score, lname, j)
                score, lname, j = best
                ref_row = q32.get_submodule(lname).weight[j].detach().cpu().numpy()
                diff = np.abs(ref_row - deq[i])
                print(f"  row {i}: nearest {lname}[{j}] corr {score:.4f}; |diff| max "
                      f"{diff.max():.3e}, {int((diff > 0).sum())}/{diff.size} differ", flush=True)

    # 2. the dequantized model exported and compiled in bf16
    orig_build = export_llama.build_model

    def dequantized_build(cfg_, a_, attn):
        m = orig_build(cfg_, a_, attn)
        return int4_dequantized(m.float(), torch.bfloat16, torch)
    export_llama.build_model = dequantized_build
    deq_onnx = os.path.join(out_dir, "l1_deq.onnx")
    assert export_llama.main(args[:-1] + [deq_onnx]) == 0
    export_llama.build_model = orig_build
    deq_so = os.path.join(out_dir, "l1_deq.so")
    subprocess.run([sinter, "compile", deq_onnx, "-o", deq_so], check=True)
    emb_so = os.path.join(out_dir, "l1_int4_embedded.so")
    subprocess.run([sinter, "compile", onnx_path, "-o", emb_so, "--weight-dtype=int4"], check=True)
    m_emb = sinter_ctypes.Model(emb_so).context("direct")
    m_int4 = sinter_ctypes.Model(so, weights=so[:-3] + ".safetensors").context("direct")
    m_deq = sinter_ctypes.Model(deq_so).context("direct")
    q32 = q32.cuda()
    q16 = int4_dequantized(ref_model, torch.bfloat16, torch).cuda()
    gen = torch.Generator(device="cuda").manual_seed(4321)
    with torch.no_grad():
        for _ in range(3):
            ids = torch.randint(0, cfg.vocab_size, (1, 6), generator=gen, device="cuda")
            mask = torch.ones(1, 6, dtype=torch.int64, device="cuda")
            ref = q32(input_ids=ids, attention_mask=mask, use_cache=False).logits.float()
            t16 = q16(input_ids=ids, attention_mask=mask, use_cache=False).logits
            a = m_int4.run([ids, mask])[0].clone()
            b = m_deq.run([ids, mask])[0].clone()
            c = m_emb.run([ids, mask])[0].clone()
            torch.cuda.synchronize()
            ok &= rel_err(a, ref, torch) <= 1.5 * rel_err(t16, ref, torch)
            ok &= rel_err(c, ref, torch) <= 1.5 * rel_err(t16, ref, torch)
            print(f"vs fp32 ref: torch bf16 {rel_err(t16, ref, torch):.3e}, sinter int4 "
                  f"{rel_err(a, ref, torch):.3e}, sinter bf16 on dequantized "
                  f"{rel_err(b, ref, torch):.3e}, sinter int4 embedded {rel_err(c, ref, torch):.3e}"
                  f"; sinter int4 vs sinter deq "
                  f"{rel_err(a, b.float(), torch):.3e}", flush=True)
    print("ok" if ok else "FAILED", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
