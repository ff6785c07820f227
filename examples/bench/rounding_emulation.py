#!/usr/bin/env python3
"""Where bf16 rounding moves one Llama layer's logits, emulated on the CPU.

Builds the W1 model (examples/export_llama.py, 1 layer, seed 0), runs its forward pass in fp32
with bf16 rounding applied only at chosen points, and compares each variant with the exact fp32
pass (same bf16 weights) on fresh random prompts: mean relative L2 error of the logits and how
many positions change their top-1 token.

    python3 examples/bench/rounding_emulation.py --prompts 60

Variants: `bf16 graph` rounds where a bf16 graph rounds (norm outputs, q/k/v, attention output,
residual stream, SwiGLU output, logits); `f32 activations` rounds only the RoPE tables (bf16
constants of the graph), as `sinter compile --activations=f32` does; `logits only` rounds only
the logits: what any bf16-output implementation costs at least.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

VARIANTS = {
    "bf16 graph": {"rope", "norm1", "qkv", "attn", "h1", "norm2", "act", "h2", "normf", "logits"},
    "f32 activations, bf16 logits": {"rope", "logits"},
    "f32 activations": {"rope"},
    "logits only": {"logits"},
}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prompts", type=int, default=20)
    p.add_argument("--seq", type=int, default=6)
    p.add_argument("--seed", type=int, default=7, help="seed of the prompts")
    a = p.parse_args()
    import torch
    import export_llama

    ea = export_llama.parse_args(["--layers", "1", "--seq", str(a.seq), "--seed", "0",
                                  "--out", "unused.onnx"])
    cfg = export_llama.build_config(ea)
    model = export_llama.build_model(cfg, ea, "eager").float().eval()
    torch.set_grad_enabled(False)
    layer, table = model.model.layers[0], model.model.embed_tokens.weight
    heads, kv_heads, hd = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim

    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + cfg.rms_norm_eps) * w

    def forward(ids, points):
        r = lambda name, x: x.bfloat16().float() if name in points else x  # noqa: E731
        s = ids.shape[1]
        h0 = table[ids[0]]
        cos, sin = model.model.rotary_emb(h0[None], torch.arange(s)[None])
        cos, sin = r("rope", cos[0]), r("rope", sin[0])
        x = r("norm1", rms(h0, layer.input_layernorm.weight))
        att = layer.self_attn
        q = (x @ att.q_proj.weight.T).view(s, heads, hd).transpose(0, 1)
        k = (x @ att.k_proj.weight.T).view(s, kv_heads, hd).transpose(0, 1)
        v = (x @ att.v_proj.weight.T).view(s, kv_heads, hd).transpose(0, 1)

        def rope(t):
            return t * cos + torch.cat([-t[..., hd // 2:], t[..., :hd // 2]], -1) * sin
        q, k, v = r("qkv", rope(q)), r("qkv", rope(k)), r("qkv", v)
        k = k.repeat_interleave(heads // kv_heads, 0)
        v = v.repeat_interleave(heads // kv_heads, 0)
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd)
        scores = scores + torch.triu(torch.full((s, s), float("-inf")), 1)
        o = r("attn", (torch.softmax(scores, -1) @ v).transpose(0, 1).reshape(s, heads * hd))
        h1 = r("h1", h0 + o @ att.o_proj.weight.T)
        y = r("norm2", rms(h1, layer.post_attention_layernorm.weight))
        mlp = layer.mlp
        g, u = y @ mlp.gate_proj.weight.T, y @ mlp.up_proj.weight.T
        act = r("act", r("act", torch.nn.functional.silu(r("act", g))) * r("act", u))
        h2 = r("h2", h1 + act @ mlp.down_proj.weight.T)
        return r("logits", r("normf", rms(h2, model.model.norm.weight)) @ table.T)

    gen = torch.Generator().manual_seed(a.seed)
    totals = {name: [0.0, 0] for name in VARIANTS}
    for i in range(a.prompts):
        ids = torch.randint(0, cfg.vocab_size, (1, a.seq), generator=gen)
        ref = forward(ids, set())
        if i == 0:  # the emulation is the Hugging Face model when nothing is rounded
            hf = model(input_ids=ids, use_cache=False).logits[0]
            assert torch.allclose(ref, hf, rtol=1e-5, atol=1e-5), "emulation != HF fp32"
        top1 = ref.argmax(-1)
        for name, points in VARIANTS.items():
            out = forward(ids, points)
            totals[name][0] += ((out - ref).double().norm() / ref.double().norm()).item()
            totals[name][1] += int((out.argmax(-1) != top1).sum())
    n = a.prompts * a.seq
    print(f"{a.prompts} prompts x {a.seq} positions, against exact fp32 on the same weights")
    for name, (err, flips) in totals.items():
        print(f"  {name:30s} mean rel. error {err / a.prompts:.3e}   top-1 changed {flips}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
