#!/usr/bin/env python3
"""A tiny random Hugging Face causal LM exported by the ecosystem's standard exporter,
`optimum-cli export onnx` (task text-generation: input_ids, attention_mask and position_ids in,
logits out, fp32, dynamic batch and sequence), with a reference for check_fixture.py.

    python3 examples/optimum_export.py --arch llama --out DIR

needs optimum-onnx and transformers < 4.58 (pip install optimum-onnx "transformers<4.58").
Writes DIR/checkpoint (save_pretrained of the random model), DIR/model.onnx (+ its config), and
for each dtype in --dtypes the stem DIR/ref_DTYPE.*: the example inputs (batch 1, --seq tokens),
PyTorch's logits with the weights in that dtype, and the float64 evaluation of those weights
(check_fixture.py's reference). Compile with
    sinter compile DIR/model.onnx --dim batch_size=1 --dim sequence_length=SEQ [--dtype bf16]
and check the fp32 library against ref_f32, the --dtype bf16 one against ref_bf16.
"""
import argparse
import copy
import os
import shutil
import subprocess
import sys


def build(arch, seed):
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config
    common = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                  max_position_embeddings=128, tie_word_embeddings=True)
    if arch == "llama":
        cfg = LlamaConfig(head_dim=16, **common)
    elif arch == "qwen2":
        cfg = Qwen2Config(**common)
    else:
        raise SystemExit(f"optimum_export.py: unsupported --arch '{arch}' (llama, qwen2)")
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(cfg).eval()
    with torch.no_grad():  # random norms, so that a wrong weight cannot hide behind ones
        g = torch.Generator().manual_seed(seed + 2)
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
    return model


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", default="llama", help="llama or qwen2 (default llama)")
    p.add_argument("--seq", type=int, default=6, help="example prompt length (default 6)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtypes", default="f32,bf16", help="references to save (default f32,bf16)")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    import numpy as np
    import torch
    os.makedirs(a.out, exist_ok=True)
    model = build(a.arch, a.seed)
    ckpt = os.path.join(a.out, "checkpoint")
    model.save_pretrained(ckpt)
    onnx_dir = os.path.join(a.out, "onnx")
    shutil.rmtree(onnx_dir, ignore_errors=True)
    cli = shutil.which("optimum-cli") or os.path.join(os.path.dirname(sys.executable), "optimum-cli")
    subprocess.run([cli, "export", "onnx", "--model", ckpt, "--task", "text-generation",
                    onnx_dir], check=True)
    shutil.copy(os.path.join(onnx_dir, "model.onnx"), os.path.join(a.out, "model.onnx"))
    g = torch.Generator().manual_seed(a.seed + 1)
    ids = torch.randint(0, model.config.vocab_size, (1, a.seq), generator=g)
    mask = torch.ones_like(ids)
    pos = torch.arange(a.seq).unsqueeze(0)
    for dtype in a.dtypes.split(","):
        dt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[dtype]
        m = copy.deepcopy(model).to(dt)
        exact = copy.deepcopy(m).to(torch.float64)
        with torch.no_grad():
            ref = m(input_ids=ids, attention_mask=mask, position_ids=pos).logits.float().numpy()
            ex = exact(input_ids=ids, attention_mask=mask, position_ids=pos).logits.float().numpy()
        stem = os.path.join(a.out, "ref_" + dtype)
        np.save(stem + ".input_ids.npy", ids.numpy())
        np.save(stem + ".attention_mask.npy", mask.numpy())
        np.save(stem + ".position_ids.npy", pos.numpy())
        np.save(stem + ".logits.npy", ref)
        np.save(stem + ".logits_exact.npy", ex)
    print(f"[optimum_export] {a.out}/model.onnx and references {a.dtypes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
