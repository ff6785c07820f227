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

--with-past L exports text-generation-with-past instead (past_key_values.* in, present.* out)
and saves a generation reference for a cache of L positions: the prompt (stem
DIR/ref_DTYPE_prefill.*) and --steps greedy decode steps of PyTorch in that dtype
(DIR/ref_DTYPE_decode.*: per step input_ids, attention_mask [1, L] over the slots written,
position_ids and cache_position, and the logits with their float64 evaluation, the same
tokens fed). Compile with
    sinter compile DIR/model.onnx --cache-length L --dim batch_size=1 --dim sequence_length=SEQ
and check with examples/bench/check_fixture.py LIB.so DIR/ref_DTYPE.
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
    p.add_argument("--with-past", type=int, metavar="L", default=None,
                   help="export text-generation-with-past; references for a cache of L positions")
    p.add_argument("--steps", type=int, default=16,
                   help="with --with-past: greedy decode steps in the reference (default 16)")
    p.add_argument("--batch", type=int, default=1,
                   help="with --with-past: sequences in the reference; sequence b > 0 is "
                        "left-padded by b tokens, as batched generation pads (default 1)")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if a.batch < 1 or a.batch > a.seq:
        p.error(f"--batch must be 1..--seq ({a.seq}), got {a.batch}")
    if a.batch > 1 and a.with_past is None:
        p.error("--batch needs --with-past")
    import numpy as np
    import torch
    os.makedirs(a.out, exist_ok=True)
    model = build(a.arch, a.seed)
    ckpt = os.path.join(a.out, "checkpoint")
    model.save_pretrained(ckpt)
    onnx_dir = os.path.join(a.out, "onnx")
    shutil.rmtree(onnx_dir, ignore_errors=True)
    cli = shutil.which("optimum-cli") or os.path.join(os.path.dirname(sys.executable), "optimum-cli")
    task = "text-generation" if a.with_past is None else "text-generation-with-past"
    if a.with_past is not None and a.seq + a.steps > a.with_past:
        p.error(f"--seq {a.seq} + --steps {a.steps} do not fit a cache of {a.with_past}")
    subprocess.run([cli, "export", "onnx", "--model", ckpt, "--task", task, onnx_dir],
                   check=True)
    shutil.copy(os.path.join(onnx_dir, "model.onnx"), os.path.join(a.out, "model.onnx"))
    g = torch.Generator().manual_seed(a.seed + 1)
    ids = torch.randint(0, model.config.vocab_size, (a.batch, a.seq), generator=g)
    mask = torch.ones_like(ids)
    pos = torch.arange(a.seq).unsqueeze(0)
    for dtype in a.dtypes.split(","):
        dt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[dtype]
        m = copy.deepcopy(model).to(dt)
        exact = copy.deepcopy(m).to(torch.float64)
        if a.with_past is not None:
            save_generation(os.path.join(a.out, "ref_" + dtype), m, exact, ids, a.with_past,
                            a.steps, np, torch)
            continue
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


def save_generation(stem, m, exact, ids, cache_length, steps, np, torch):
    """PyTorch's greedy generation in m's dtype (DynamicCache), and the float64 model's logits
    with the same tokens fed, as the inputs of the compiled prefill and decode entries.
    Sequence b of the batch is left-padded by b tokens (mask 0, position ids as Hugging Face's
    generate() computes them: cumsum(mask) - 1, 1 where padded)."""
    from transformers import DynamicCache
    batch, seq = ids.shape
    mask = (torch.arange(seq)[None, :] >= torch.arange(batch)[:, None]).long()
    prompt_pos = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)

    def run(model, feed):
        cache = DynamicCache()
        with torch.no_grad():
            out = model(input_ids=ids, attention_mask=mask, position_ids=prompt_pos,
                        past_key_values=cache, use_cache=True)
            logits = [out.logits.float().numpy()]
            tokens = []
            step_mask = mask
            for j in range(steps):
                tok = out.logits[:, -1].float().argmax(-1) if feed is None else feed[j]
                tokens.append(tok)
                step_mask = torch.cat([step_mask, torch.ones(batch, 1, dtype=torch.int64)], 1)
                pos = prompt_pos[:, -1:] + 1 + j
                out = model(input_ids=tok.view(batch, 1), attention_mask=step_mask,
                            position_ids=pos, past_key_values=out.past_key_values,
                            use_cache=True)
                logits.append(out.logits.float().numpy())
        return tokens, logits

    tokens, logits = run(m, None)
    _, exact_logits = run(exact, tokens)
    np.save(stem + "_prefill.input_ids.npy", ids.numpy())
    np.save(stem + "_prefill.attention_mask.npy", mask.numpy())
    np.save(stem + "_prefill.position_ids.npy", prompt_pos.numpy())
    np.save(stem + "_prefill.logits.npy", logits[0])
    np.save(stem + "_prefill.logits_exact.npy", exact_logits[0])
    slots = np.arange(seq, seq + steps, dtype=np.int64)
    # The decode step's mask spans the cache: the prompt's, then ones up to the slot written.
    masks = np.zeros((steps, batch, cache_length), dtype=np.int64)
    masks[:, :, :seq] = mask.numpy()[None]
    for j, slot in enumerate(slots):
        masks[j, :, seq:slot + 1] = 1
    positions = prompt_pos.numpy()[None, :, -1:] + 1 + np.arange(steps)[:, None, None]
    np.save(stem + "_decode.input_ids.npy",
            np.stack([t.numpy() for t in tokens]).astype(np.int64).reshape(steps, batch, 1))
    np.save(stem + "_decode.attention_mask.npy", masks)
    np.save(stem + "_decode.position_ids.npy", positions.astype(np.int64))
    np.save(stem + "_decode.cache_position.npy", slots.reshape(steps, 1))
    np.save(stem + "_decode.logits.npy", np.stack(logits[1:]))
    np.save(stem + "_decode.logits_exact.npy", np.stack(exact_logits[1:]))


if __name__ == "__main__":
    sys.exit(main())
