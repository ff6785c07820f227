#!/usr/bin/env python3
"""W3 benchmark: Llama 3.2 1B greedy generation with the KV cache inside the Sinter context.

Run on the GPU machine from the repository root, with a built (or carried) `sinter`:

    python3 examples/bench/llama_decode.py --sinter build/bin/sinter --out-dir /tmp/w3

In one process: exports the model (examples/export_llama.py --kv-cache MAX, MAX = the largest
--cache-lengths, random weights from --seed, Llama 3.2 1B shape with --layers layers) as a
prefill and a decode graph, compiles both into one .so (`sinter compile prefill=P decode=D`),
loads it (examples/bench/sinter_ctypes.py, ABI 1.2 entries and state) and then

(a) numerics: greedy generation of --steps tokens from a random --prompt-len prompt. Reference:
    the Hugging Face model in bf16 on the GPU, greedy, with a StaticCache; Sinter: reset_state,
    prefill, argmax of the last row, then the decode entry step by step with input_ids and
    cache_position as fixed device tensors updated in place (argmax on the GPU, no host sync
    per token). Reports how many steps produce identical tokens; the logits of every step are
    compared (relative L2 error) against an fp32 copy of the same bf16 weights, both that
    reference and PyTorch bf16 teacher-forced on Sinter's tokens: Sinter's error must stay
    within 1.5x PyTorch bf16's up to the first token that differs (or at every step), and a
    differing token must be a near-tie of the fp32 reference or the fp32 reference's argmax.
(b) timing at each --cache-lengths L: ms per decode token with the cache filled to position
    L-1: Sinter (decode entry at cache_position L-1, direct and CUDA graph mode, fixed bound
    buffers), PyTorch eager with StaticCache(max_cache_len=L), that eager step captured as one
    CUDA graph, torch.compile of the step (--compile-modes), all timed the same way (CUDA events
    around back-to-back calls, median of repetitions; bench_common.time_calls); the floor =
    (weight bytes + KV bytes read at that position + logits) / measured copy bandwidth, and each
    system's % of bandwidth (floor / time). Also the end-to-end greedy loop's tokens/s.

Writes OUT_DIR/llama_decode.{md,json} (rewritten after every measured row, so a run cut short
keeps what it measured). A failing PyTorch variant is a "failed" row, not a crash.

The PyTorch StaticCache step at a fixed position: Hugging Face 5.x keeps the write position in
each cache layer's `cumulative_length` tensor and advances it in the forward; the timed step
undoes that with one torch._foreach_add_(lengths, -1) (one extra small kernel per step, counted
in PyTorch's time), so every call is the step at position L-1.

Long steps are separable: --skip-timing (export, compile, numerics), --skip-numerics, --reuse
(keep an existing export / .so in --out-dir), --compile-modes none. On a machine with a
10-minute limit per command, e.g. (an --out-dir inside the ignored build-* folders survives
between calls to the same machine):

    python3 examples/bench/llama_decode.py --sinter build/bin/sinter --out-dir build-w3 --skip-timing
    python3 examples/bench/llama_decode.py --sinter build/bin/sinter --out-dir build-w3 --reuse \\
        --skip-numerics

--batch B (B > 1) exports B sequences of one length that share the positions (export_llama.py
--kv-cache --batch B): the numerics are then one decode step per cache length, each sequence's
logits against the fp32 reference beside PyTorch bf16's (the greedy loop compares one
sequence), and the floor counts B sequences' KV bytes and logits.

A small model for a quick check of the whole script (2 layers, 256-token vocabulary):

    python3 examples/bench/llama_decode.py --sinter build/bin/sinter --out-dir build-w3tiny \\
        --layers 2 --weights embedded --cache-lengths 16,32 --steps 20 \\
        --export-args "--hidden 64 --intermediate 128 --heads 4 --kv-heads 2 --head-dim 16 --vocab 256"
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from bench_common import (copy_bandwidth, kernel_timeline, near_tie, profile_kernels,  # noqa: E402
                          rel_err, short_kernel_name,
                          save_results, time_calls)

EXPORT_SCRIPT = os.path.join(os.path.dirname(HERE), "export_llama.py")
RESULT_NAME = "llama_decode"


# --sample rows: (label, sinter set_sampling arguments).
SAMPLING_ROWS = [
    ("greedy", {}),
    ("T 0.8, top-k 50, top-p 0.9, rep. 1.1",
     {"temperature": 0.8, "top_k": 50, "top_p": 0.9, "repetition_penalty": 1.1, "seed": 1}),
    ("T 0.8, top-k 50, top-p 0.9", {"temperature": 0.8, "top_k": 50, "top_p": 0.9, "seed": 1}),
    ("T 0.8, top-p 0.9", {"temperature": 0.8, "top_p": 0.9, "seed": 1}),
]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sinter", default="build/bin/sinter", help="the sinter binary")
    p.add_argument("--out-dir", default="/tmp/sinter-w3")
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--opset", type=int, default=18)
    p.add_argument("--weights", choices=["embedded", "external"], default="external",
                   help="how the .so carries its weights (external: OUT.safetensors beside it)")
    p.add_argument("--steps", type=int, default=64, help="tokens generated greedily")
    p.add_argument("--prompt-len", type=int, default=6)
    p.add_argument("--batch", type=int, default=1,
                   help="sequences per decode step, all at the same position (default 1)")
    p.add_argument("--cache-lengths", default="128,1024",
                   help="comma-separated cache lengths L timed at position L-1; the largest is "
                        "the compiled cache size")
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--compile-modes", default="default,reduce-overhead",
                   help="torch.compile modes timed on the decode step, comma-separated "
                        "(e.g. default,reduce-overhead,max-autotune-no-cudagraphs), or none")
    p.add_argument("--sample", action="store_true",
                   help="also compile the model with --sample and time its decode step with the "
                        "sampler greedy and sampling (temperature 0.8 with top-k 50, top-p 0.9 "
                        "and repetition penalty 1.1; without the penalty; top-p alone), CUDA "
                        "graph mode, in the same run")
    p.add_argument("--fp8", action="store_true",
                   help="also compile the model with --weight-dtype fp8: its greedy tokens and "
                        "logits against PyTorch with the same dequantized weights (fp32 and "
                        "bf16), the quantization error against the bf16 model, and its decode "
                        "step timed against its own floor (fp8 weight + scale bytes)")
    p.add_argument("--int4", action="store_true",
                   help="the same as --fp8 for --weight-dtype int4 (symmetric 4-bit weights, an "
                        "fp32 scale per row and group of 128 k)")
    p.add_argument("--skip-timing", action="store_true", help="numerics only")
    p.add_argument("--kernel-table", action="store_true",
                   help="after each Sinter row, its kernels' critical-path time per step "
                        "(bench_common.kernel_timeline)")
    p.add_argument("--skip-numerics", action="store_true", help="timing only")
    p.add_argument("--reuse", action="store_true",
                   help="reuse the ONNX export and the .so in --out-dir when present")
    p.add_argument("--export-args", default="",
                   help="extra arguments for export_llama.py (e.g. '--hidden 256 --vocab 512' "
                        "for a small model)")
    a = p.parse_args(argv)
    a.cache_lengths = sorted({int(x) for x in a.cache_lengths.split(",") if x.strip()})
    a.compile_modes = [] if a.compile_modes.strip().lower() in ("", "none") else [
        m.strip() for m in a.compile_modes.split(",") if m.strip()]
    if not a.cache_lengths:
        p.error("--cache-lengths is empty")
    if min(a.cache_lengths) <= a.prompt_len:
        p.error(f"every cache length must exceed --prompt-len {a.prompt_len}")
    if a.steps < 1:
        p.error("--steps must be >= 1")
    if a.batch < 1:
        p.error("--batch must be >= 1")
    if a.batch > 1 and (a.sample or a.fp8 or a.int4):
        p.error("--batch > 1 times the bf16 step only (no --sample, --fp8 or --int4)")
    a.max_cache = max(max(a.cache_lengths), a.prompt_len + a.steps)
    return a


def export_argv(a, prefill_path, decode_path):
    """export_llama.py arguments for the prefill/decode pair (also parsed here to rebuild the
    same model in PyTorch)."""
    return (["--layers", str(a.layers), "--seq", str(a.prompt_len), "--opset", str(a.opset),
             "--seed", str(a.seed), "--kv-cache", str(a.max_cache), "--no-ort-check",
             "--out", prefill_path, "--decode-out", decode_path] +
            (["--batch", str(a.batch)] if a.batch > 1 else []) + a.export_args.split())


def run_export(a, prefill_path, decode_path):
    side = prefill_path[:-5] + ".json"
    if a.reuse and all(os.path.exists(p) for p in (prefill_path, decode_path, side)):
        with open(side) as f:
            sidecar = json.load(f)
        kv, argv = sidecar.get("kv_cache", {}), sidecar.get("argv", {})
        if kv.get("max_len") == a.max_cache and argv.get("layers") == a.layers and \
                argv.get("seq") == a.prompt_len and argv.get("seed") == a.seed and \
                sidecar.get("batch", 1) == a.batch:
            print(f"export: reusing {prefill_path}, {decode_path}", flush=True)
            return 0.0
    cmd = [sys.executable, EXPORT_SCRIPT] + export_argv(a, prefill_path, decode_path)
    print("export:", " ".join(cmd), flush=True)
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.time() - t0
    for line in (r.stdout + r.stderr).splitlines():
        if line.startswith("[export_llama]") or r.returncode:
            print("  " + line[:400])
    if r.returncode:
        raise RuntimeError(f"export_llama.py failed ({r.returncode})")
    print(f"export: {dt:.1f} s", flush=True)
    return dt


def run_compile(a, prefill_path, decode_path, so_path, extra=()):
    if a.reuse and os.path.exists(so_path):
        print(f"compile: reusing {so_path}", flush=True)
        return None
    cmd = [a.sinter, "compile", f"prefill={prefill_path}", f"decode={decode_path}", "-o", so_path,
           "--timing", f"--weights={a.weights}", *extra]
    print("compile:", " ".join(cmd), flush=True)
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.time() - t0
    if r.stdout.strip():
        print(r.stdout.strip()[-4000:])
    if r.stderr.strip():
        print(r.stderr.strip()[-4000:])
    if r.returncode != 0:
        raise RuntimeError(f"sinter compile failed ({r.returncode})")
    print(f"compile: {dt:.1f} s, .so {os.path.getsize(so_path) / 1e6:.1f} MB", flush=True)
    return dt


def inspect_so(a, so_path):
    try:
        r = subprocess.run([a.sinter, "inspect", so_path, "--json"], capture_output=True, text=True)
        return json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr.strip()[:500]}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"[:500]}


def unique_param_bytes(model):
    """Bytes of the model's parameters, tied tensors counted once (the decode step reads the
    tied embedding/LM head table once, in the LM head)."""
    seen, n = set(), 0
    for p in model.parameters():
        if p.data_ptr() in seen:
            continue
        seen.add(p.data_ptr())
        n += p.numel() * p.element_size()
    return n


def quantized_step_bytes(model, torch, linear_bytes):
    """Bytes a decode step reads from the weights of a quantized library: each linear weight
    (the LM head, tied or not, included) as linear_bytes(p) says (None: as it is), other
    parameters (norms) as they are; the embedding table, of which the step gathers one row,
    not at all."""
    linear = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Linear)}
    embedding = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    seen, n = set(), 0
    for p in model.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        q = linear_bytes(p) if id(p) in linear else None
        if q is not None:
            n += q
        elif id(p) not in embedding:
            n += p.numel() * p.element_size()
    return n


def fp8_step_bytes(model, torch):
    """--weight-dtype fp8: one byte a weight plus an fp32 scale per output row."""
    return quantized_step_bytes(model, torch, lambda p: p.numel() + p.shape[0] * 4)


def fp8_dequantized(model, dtype, torch):
    """A copy of `model` in `dtype` whose linear weights (the LM head included, untied from the
    embedding, which --weight-dtype fp8 keeps in bf16) are what the fp8 library computes with:
    per output row scale = max|w| / 448, w ~= scale * e4m3(w / scale)."""
    m = copy.deepcopy(model).to(dtype)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.Linear):
                w = mod.weight.detach().float().cpu()  # see int4_dequantized
                amax = w.abs().amax(dim=1, keepdim=True)
                scale = torch.where(amax > 0, amax / torch.tensor(448.0), torch.ones_like(amax))
                q = (w / scale).to(torch.float8_e4m3fn).float()
                mod.weight = torch.nn.Parameter((q * scale).to(dtype).to(mod.weight.device),
                                                requires_grad=False)
    return m.eval()


def int4_step_bytes(model, torch):
    """--weight-dtype int4: half a byte a weight plus an fp32 scale per row and group of 128 k
    (a linear whose K is not a multiple of 128 stays bf16)."""
    return quantized_step_bytes(
        model, torch,
        lambda p: p.numel() // 2 + p.numel() // 128 * 4 if p.shape[1] % 128 == 0 else None)


def int4_dequantized(model, dtype, torch):
    """fp8_dequantized for --weight-dtype int4: per row and group of 128 k, scale = max|w| / 7
    (1 for an all-zero group), w ~= scale * clamp(round_half_even(w / scale), -8, 7).

    Computed on the CPU, with a tensor divisor: PyTorch's CUDA kernels divide by a Python
    scalar as a multiplication by its reciprocal, so amax / 7.0 there is off by an ulp in half
    the groups and codes at exact ties (common with bf16 weights) flip by one step, about 0.1 %
    of them: enough to make a reference 4x off an exact quantization."""
    m = copy.deepcopy(model).to(dtype)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.Linear) and mod.weight.shape[1] % 128 == 0:
                w = mod.weight.detach().float().cpu()
                g = w.reshape(w.shape[0], -1, 128)
                amax = g.abs().amax(dim=2, keepdim=True)
                scale = torch.where(amax > 0, amax / torch.tensor(7.0), torch.ones_like(amax))
                q = torch.clamp(torch.round(g / scale), -8, 7)
                mod.weight = torch.nn.Parameter(
                    (q * scale).reshape(w.shape).to(dtype).to(mod.weight.device),
                    requires_grad=False)
    return m.eval()


QUANTIZED = {"fp8": (fp8_step_bytes, fp8_dequantized), "int4": (int4_step_bytes, int4_dequantized)}


def kv_bytes_per_position(cfg, dtype_bytes=2):
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    kv_heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads  # GPT-2: MHA
    return 2 * cfg.num_hidden_layers * kv_heads * head_dim * dtype_bytes


# ---- PyTorch references ------------------------------------------------------------------------

def new_static_cache(cfg, max_len):
    from transformers import StaticCache
    return StaticCache(config=cfg, max_cache_len=max_len)


def torch_greedy(model, prompt, steps, max_len):
    """Hugging Face model, greedy, StaticCache: (tokens [steps] list, logits [steps, V] float).

    A manual loop over the model's forward, not generate(): transformers 5.17 ignores
    cache_implementation="static" there, and generate() given a StaticCache compiles the forward
    itself (on the 2-layer test model that hit a device-side assert, fatal to the process)."""
    import torch
    cache = new_static_cache(model.config, max_len)
    rows, toks = [], []
    with torch.no_grad():
        out = model(input_ids=prompt, past_key_values=cache, use_cache=True)
        row = out.logits[0, -1]
        for j in range(steps):
            rows.append(row.float())
            tok = row.argmax()
            toks.append(tok)
            if j + 1 < steps:
                out = model(input_ids=tok.view(1, 1), past_key_values=cache, use_cache=True)
                row = out.logits[0, -1]
    return [int(t) for t in torch.stack(toks).tolist()], torch.stack(rows)


def torch_teacher_forced(model, prompt, tokens):
    """Logits rows [len(tokens), V] (float) predicting tokens[j] when tokens[:j] are fed after the
    prompt, through Hugging Face's forward with a DynamicCache; and the prefill logits [S, V]."""
    import torch
    from transformers import DynamicCache
    try:
        cache = DynamicCache(config=model.config)
    except TypeError:
        cache = DynamicCache()
    dev = prompt.device
    rows = []
    with torch.no_grad():
        out = model(input_ids=prompt, past_key_values=cache, use_cache=True)
        prefill = out.logits[0].float()
        rows.append(out.logits[0, -1].float())
        for t in tokens[:-1]:
            out = model(input_ids=torch.tensor([[t]], device=dev), past_key_values=out.past_key_values,
                        use_cache=True)
            rows.append(out.logits[0, -1].float())
    return torch.stack(rows), prefill


def make_torch_step(model, cfg, prompt, L):
    """(step, cache, tok): `step()` is one Hugging Face decode step at position L-1 on a
    StaticCache(max_cache_len=L) filled by a prefill of `prompt`; returns the logits."""
    import torch
    cache = new_static_cache(cfg, L)
    with torch.no_grad():
        model(input_ids=prompt, past_key_values=cache, use_cache=True)  # lazy init + prefill
    lengths = [layer.cumulative_length for layer in cache.layers]
    for t in lengths:
        t.fill_(L - 1)
    tok = prompt[:, -1:].clone()

    def step():
        logits = model(input_ids=tok, past_key_values=cache, use_cache=True).logits
        torch._foreach_add_(lengths, -1)  # the forward advanced each layer to L; back to L-1
        return logits

    return step, cache, tok


def batch_step_numerics(ctx, model, ref_model, cfg, prompt, L, torch):
    """--batch > 1: one decode step at position L-1 after a prefill of `prompt` [B, S], each
    sequence fed its prompt's last token, in Sinter, PyTorch bf16 and PyTorch fp32 on the same
    weights (StaticCache: the slots between the prompt and L-1 are zeros in every system).
    Per sequence: the relative error of the logits against fp32, Sinter's and PyTorch bf16's,
    and whether the top-1 tokens agree."""
    dec = ctx.model.entry("decode")
    tok = prompt[:, -1:].clone()
    pos = torch.full((1,), L - 1, dtype=torch.int64, device="cuda")
    out = [torch.empty(o.shape, dtype=getattr(torch, o.dtype), device="cuda") for o in dec.outputs]
    ctx.reset_state()
    ctx.run_entry("prefill", [prompt], [
        torch.empty(o.shape, dtype=getattr(torch, o.dtype), device="cuda")
        for o in ctx.model.entry("prefill").outputs])
    ctx.bind_entry("decode", {"input_ids": tok, "cache_position": pos}, out)()
    torch.cuda.synchronize()
    got = out[0].float().reshape(prompt.shape[0], -1)
    with torch.no_grad():
        t16 = make_torch_step(model, cfg, prompt, L)[0]().float().reshape(got.shape)
        t32 = make_torch_step(ref_model, cfg, prompt, L)[0]().float().reshape(got.shape)
    rows = []
    for b in range(got.shape[0]):
        es, et = rel_err(got[b], t32[b], torch), rel_err(t16[b], t32[b], torch)
        top = int(got[b].argmax())
        rows.append({"sinter_rel_err": es, "torch_bf16_rel_err": et, "ratio": es / et,
                     "top1_equal_fp32": top == int(t32[b].argmax()),
                     "top1_equal_torch_bf16": top == int(t16[b].argmax())})
    worst = max(r["ratio"] for r in rows)
    return {"L": L, "sequences": rows, "max_ratio": worst, "ok": worst <= 1.5}


def cuda_graph_of(fn, torch):
    """Captures fn() as one CUDA graph; returns its replay."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    torch.cuda.synchronize()
    return g.replay


# ---- Sinter ------------------------------------------------------------------------------------

def _torch_dtype(torch, name):
    return getattr(torch, name)


class SinterGreedy:
    """Greedy generation through a context's "prefill" and "decode" entries, all on the device:
    the argmax writes the next token id straight into the decode entry's bound input_ids buffer
    and cache_position is incremented in place (no host sync per token). The buffers and bound
    calls are made once, so graph mode keeps its captured graphs across generations."""

    def __init__(self, ctx, steps, device, stream=None):
        import torch
        self.ctx, self.steps, self.stream = ctx, steps, stream
        pre_e, dec_e = ctx.model.entry("prefill"), ctx.model.entry("decode")
        (pre_ids,) = [i for i in pre_e.inputs if i.name == "input_ids"]
        self.prompt = torch.zeros(pre_ids.shape, dtype=torch.int64, device=device)
        self.pre_out = [torch.empty(o.shape, dtype=_torch_dtype(torch, o.dtype), device=device)
                        for o in pre_e.outputs]
        info = {i.name: i for i in dec_e.inputs}
        self.ids = torch.zeros(info["input_ids"].shape, dtype=torch.int64, device=device)
        self.pos = torch.zeros(info["cache_position"].shape, dtype=torch.int64, device=device)
        lo = dec_e.outputs[0]
        self.logits = torch.empty(lo.shape, dtype=_torch_dtype(torch, lo.dtype), device=device)
        self.prefill = ctx.bind_entry("prefill", [self.prompt], self.pre_out, stream=stream)
        self.decode = ctx.bind_entry("decode", {"input_ids": self.ids, "cache_position": self.pos},
                                     [self.logits], stream=stream)
        self.tokens = torch.empty(steps, dtype=torch.int64, device=device)
        self.rows = torch.empty(steps, self.logits.shape[-1], dtype=torch.float32, device=device)

    def __call__(self, prompt, keep_logits=True):
        """Enqueues one generation from `prompt` [1, S]; returns (tokens [steps] int64, logits
        rows [steps, V] float32 or None, prefill logits [S, V]), device tensors owned by this
        object (overwritten by the next call)."""
        import torch
        self.prompt.copy_(prompt)
        self.pos.fill_(self.prompt.shape[-1])
        ids_flat, v = self.ids.view(-1), self.logits.shape[-1]
        self.ctx.reset_state(stream=self.stream)
        self.prefill()
        last = self.pre_out[0].view(-1, v)[-1:]
        torch.argmax(last, dim=-1, out=ids_flat)
        self.tokens[0:1].copy_(ids_flat)
        if keep_logits:
            self.rows[0].copy_(last[0])
        row = self.logits.view(-1, v)[-1:]
        for j in range(1, self.steps):
            self.decode()
            torch.argmax(row, dim=-1, out=ids_flat)
            self.tokens[j:j + 1].copy_(ids_flat)
            self.pos.add_(1)
            if keep_logits:
                self.rows[j].copy_(row[0])
        return self.tokens, self.rows if keep_logits else None, self.pre_out[0].view(-1, v)


def compare_numerics(sinter_tokens, sinter_rows, sinter_prefill, torch_tokens, ref32, ref16,
                     ref32_prefill, ref16_prefill, torch):
    """Token agreement and per-step relative errors (Sinter and PyTorch bf16 vs fp32)."""
    n = len(sinter_tokens)
    first = next((j for j in range(n) if sinter_tokens[j] != torch_tokens[j]), None)
    same = sum(1 for s, t in zip(sinter_tokens, torch_tokens) if s == t)
    per_step = []
    for j in range(n):
        es = rel_err(sinter_rows[j], ref32[j], torch)
        et = rel_err(ref16[j], ref32[j], torch)
        per_step.append({"step": j, "sinter_rel_err": es, "torch_bf16_rel_err": et,
                         "ratio": es / et if et else float("inf"),
                         "sinter_token": sinter_tokens[j],
                         "fp32_argmax": int(ref32[j].argmax()),
                         "torch_bf16_tf_argmax": int(ref16[j].argmax())})
    upto = n if first is None else first + 1
    worst = max(per_step[:upto], key=lambda r: r["ratio"])
    pre_s = rel_err(sinter_prefill, ref32_prefill, torch)
    pre_t = rel_err(ref16_prefill, ref32_prefill, torch)
    res = {"steps": n, "identical_tokens": first is None,
           "leading_identical_steps": n if first is None else first,
           "equal_token_count": same, "first_mismatch": None,
           "prefill_rel_err": {"sinter": pre_s, "torch_bf16": pre_t,
                               "ratio": pre_s / pre_t if pre_t else float("inf")},
           "max_ratio_up_to_first_mismatch": worst["ratio"], "worst_step": worst["step"],
           "max_ratio_all_steps": max(r["ratio"] for r in per_step),
           "per_step": per_step}
    if first is not None:
        res["first_mismatch"] = {"step": first, "sinter_token": sinter_tokens[first],
                                 "torch_bf16_token": torch_tokens[first],
                                 **near_tie(ref32[first], sinter_tokens[first],
                                            torch_tokens[first], torch)}
    # A first mismatch passes when it is a near-tie, or when Sinter's token is the fp32
    # reference's argmax there (the reference runs on Sinter's prefix): then PyTorch bf16 is the
    # one that leaves the fp32 reference (with quantized weights the two part on logit gaps
    # just past near_tie's 1 % of the scale).
    if first is not None:
        res["first_mismatch"]["sinter_is_fp32_argmax"] = (
            sinter_tokens[first] == res["first_mismatch"]["fp32_argmax"])
    res["ok"] = bool(worst["ratio"] <= 1.5 and res["prefill_rel_err"]["ratio"] <= 1.5 and (
        first is None or res["first_mismatch"]["near_tie"] or
        res["first_mismatch"]["sinter_is_fp32_argmax"]))
    return res


# ---- results table -----------------------------------------------------------------------------

def format_table(rows):
    lines = ["| cache length L | system | ms / token | tokens/s | kernels | % of bandwidth |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("ms") is None:
            lines.append(f"| {r['L']} | {r['system']} | failed: {r.get('error', '?')[:120]} "
                         f"| | | |")
            continue
        k = r.get("kernels")
        lines.append(f"| {r['L']} | {r['system']} | {r['ms']:.4f} | {1e3 / r['ms']:.0f} | "
                     f"{'' if k is None else k} | {r['pct_bandwidth']:.1f} % |")
    return "\n".join(lines)


def print_kernel_table(groups):
    total = sum(g[2] for g in groups)
    print(f"  {'kernel':70s} {'n':>4s} {'critical us':>11s} {'summed us':>10s}")
    for name, n, crit, summed in groups:
        print(f"  {name[:70]:70s} {n:4d} {crit:11.1f} {summed:10.1f}")
    print(f"  {'total':70s} {'':4s} {total:11.1f}", flush=True)


def main(argv=None):
    a = parse_args(argv)
    import torch
    import export_llama

    os.makedirs(a.out_dir, exist_ok=True)
    dev = torch.cuda.get_device_name()
    print(f"device: {dev}, torch {torch.__version__}", flush=True)
    stem = os.path.join(a.out_dir, f"llama_kv_l{a.layers}")
    prefill_path, decode_path, so_path = stem + "_prefill.onnx", stem + "_decode.onnx", stem + ".so"
    result = {"device": dev, "torch": torch.__version__, "layers": a.layers,
              "prompt_len": a.prompt_len, "steps": a.steps, "max_cache": a.max_cache,
              "cache_lengths": a.cache_lengths, "weights": a.weights, "systems": []}

    def save(table=""):
        save_results(a.out_dir, RESULT_NAME, table, result)

    result["export_seconds"] = run_export(a, prefill_path, decode_path)
    result["compile_seconds"] = run_compile(a, prefill_path, decode_path, so_path)
    desc = inspect_so(a, so_path)
    # scalars (weight/state/arena bytes, ABI, target) and the state list; not the launch lists
    result["inspect"] = {k: v for k, v in desc.items()
                         if k in ("states", "error") or not isinstance(v, (list, dict))}

    ea = export_llama.parse_args(export_argv(a, prefill_path, decode_path))
    cfg = export_llama.build_config(ea)
    t0 = time.time()
    # The export's attention (--export-args "--attn eager" keeps Gemma 2's soft-cap, which sdpa
    # leaves out), so that the references compute what the export does.
    model_cpu = export_llama.build_model(cfg, ea, "sdpa" if ea.attn == "auto" else ea.attn)
    ref_model = copy.deepcopy(model_cpu).float().cuda().eval()  # fp32 copy of the bf16 weights
    model = model_cpu.cuda().eval()
    print(f"PyTorch models: {time.time() - t0:.1f} s", flush=True)
    weight_bytes = unique_param_bytes(model)
    kv_pos_bytes = kv_bytes_per_position(cfg)
    result.update(weight_bytes=weight_bytes, kv_bytes_per_position=kv_pos_bytes)

    import sinter_ctypes
    weights = so_path[:-3] + ".safetensors" if a.weights == "external" else None
    t0 = time.time()
    sm = sinter_ctypes.Model(so_path, weights=weights)
    print(f"model load: {time.time() - t0:.1f} s; entries {sm.entries}; state "
          f"{sm.state_bytes / 1e6:.1f} MB (KV caches {kv_pos_bytes * a.max_cache / 1e6:.1f} MB; "
          f"the rest is kernel scratch)",
          flush=True)
    for e in sm.entries:
        info = sm.entry(e)
        print(f"  entry {info.index} {info.name}: {info.num_launches} launches; inputs "
              f"{[(i.name, i.dtype, i.shape) for i in info.inputs]} outputs "
              f"{[(o.name, o.dtype, o.shape) for o in info.outputs]}", flush=True)
    dec_launches = sm.entry("decode").num_launches
    result.update(entries=sm.entries, state_bytes=sm.state_bytes,
                  launches_per_token=dec_launches,
                  prefill_launches=sm.entry("prefill").num_launches)
    print(f"Sinter launches per decode token: {dec_launches}", flush=True)
    contexts = {mode: sm.context(mode) for mode in ("graph", "direct")}
    greedy = {mode: SinterGreedy(ctx, a.steps, "cuda") for mode, ctx in contexts.items()}
    gen = torch.Generator(device="cuda").manual_seed(4321)
    prompt = torch.randint(0, cfg.vocab_size, (a.batch, a.prompt_len), generator=gen,
                           device="cuda")
    result["prompt"] = prompt.tolist() if a.batch > 1 else prompt[0].tolist()
    result["batch"] = a.batch
    ok = True

    # (a) numerics ------------------------------------------------------------------------------
    if a.batch > 1 and not a.skip_numerics:
        result["numerics"] = []
        for L in a.cache_lengths:
            try:
                c = batch_step_numerics(contexts["graph"], model, ref_model, cfg, prompt, L,
                                        torch)
                ok &= c["ok"]
                seqs = c["sequences"]
                print(f"numerics, batch {a.batch}, one step at position {L - 1}: max ratio "
                      f"{c['max_ratio']:.2f} (Sinter rel err "
                      f"{max(r['sinter_rel_err'] for r in seqs):.3e}, PyTorch bf16 "
                      f"{max(r['torch_bf16_rel_err'] for r in seqs):.3e}); top-1 equal to fp32 "
                      f"{sum(r['top1_equal_fp32'] for r in seqs)}/{len(seqs)}, to PyTorch bf16 "
                      f"{sum(r['top1_equal_torch_bf16'] for r in seqs)}/{len(seqs)}; ok {c['ok']}",
                      flush=True)
            except Exception as e:
                traceback.print_exc()
                c = {"L": L, "error": f"{type(e).__name__}: {e}"[:1000]}
                ok = False
            result["numerics"].append(c)
        save()
    elif not a.skip_numerics:
        try:
            t_tokens, _ = torch_greedy(model, prompt, a.steps, a.max_cache)
            print(f"PyTorch bf16 (StaticCache) tokens: {t_tokens}", flush=True)
            num = {"torch_bf16_tokens": t_tokens, "modes": {}}
            for mode, run in greedy.items():
                s_tok, s_rows, s_pre = run(prompt)
                s_rows, s_pre = s_rows.clone(), s_pre.clone()
                s_tokens = s_tok.tolist()
                print(f"Sinter {mode} tokens:              {s_tokens}", flush=True)
                ref32, ref32_pre = torch_teacher_forced(ref_model, prompt, s_tokens)
                ref16, ref16_pre = torch_teacher_forced(model, prompt, s_tokens)
                c = compare_numerics(s_tokens, s_rows, s_pre, t_tokens, ref32, ref16, ref32_pre,
                                     ref16_pre, torch)
                c["sinter_tokens"] = s_tokens
                num["modes"][mode] = c
                ok &= c["ok"]
                fm = c["first_mismatch"]
                print(f"numerics {mode}: {c['equal_token_count']}/{a.steps} tokens equal, "
                      f"{c['leading_identical_steps']} leading; prefill rel err "
                      f"{c['prefill_rel_err']['sinter']:.3e} vs torch bf16 "
                      f"{c['prefill_rel_err']['torch_bf16']:.3e}; max ratio up to the first "
                      f"mismatch {c['max_ratio_up_to_first_mismatch']:.2f} (step "
                      f"{c['worst_step']}), all steps {c['max_ratio_all_steps']:.2f}; "
                      f"first mismatch {fm}; ok {c['ok']}", flush=True)
            g, d = num["modes"].get("graph"), num["modes"].get("direct")
            if g and d:
                num["graph_equals_direct"] = g["sinter_tokens"] == d["sinter_tokens"]
            result["numerics"] = num
        except Exception as e:
            traceback.print_exc()
            result["numerics"] = {"error": f"{type(e).__name__}: {e}"[:1000]}
            ok = False
        save()
    quantized = {}  # --fp8 / --int4: name -> {"ctx", "bytes"}
    for qname in [q for q in QUANTIZED if getattr(a, q)]:
        step_bytes, dequantized = QUANTIZED[qname]
        q_so = stem + f"_{qname}.so"
        result[f"compile_seconds_{qname}"] = run_compile(a, prefill_path, decode_path, q_so,
                                                         ["--weight-dtype", qname])
        q_model = sinter_ctypes.Model(
            q_so, weights=q_so[:-3] + ".safetensors" if a.weights == "external" else None)
        quantized[qname] = {"ctx": q_model.context("graph"), "bytes": step_bytes(model, torch)}
        result[f"{qname}_step_weight_bytes"] = quantized[qname]["bytes"]
        if not a.skip_numerics:
            try:
                q32 = dequantized(ref_model, torch.float32, torch)
                q16 = dequantized(ref_model, torch.bfloat16, torch)
                q_tokens, _ = torch_greedy(q16, prompt, a.steps, a.max_cache)
                s_tok, s_rows, s_pre = SinterGreedy(quantized[qname]["ctx"], a.steps, "cuda")(prompt)
                s_tokens = s_tok.tolist()
                ref32, ref32_pre = torch_teacher_forced(q32, prompt, s_tokens)
                ref16, ref16_pre = torch_teacher_forced(q16, prompt, s_tokens)
                c = compare_numerics(s_tokens, s_rows.clone(), s_pre.clone(), q_tokens, ref32,
                                     ref16, ref32_pre, ref16_pre, torch)
                # The quantization itself: the quantized reference against the bf16 model's
                # fp32 reference, on the same tokens.
                b32, b32_pre = torch_teacher_forced(ref_model, prompt, s_tokens)
                c["quantization_rel_err"] = {
                    "prefill": rel_err(ref32_pre, b32_pre, torch),
                    "decode": rel_err(ref32, b32, torch)}
                c["bf16_model_tokens_equal"] = sum(
                    x == y for x, y in zip(s_tokens, result.get("numerics", {}).get(
                        "torch_bf16_tokens", [])))
                c["sinter_tokens"] = s_tokens
                result[f"numerics_{qname}"] = c
                ok &= c["ok"]
                print(f"numerics {qname}: {c['equal_token_count']}/{a.steps} tokens equal to "
                      f"PyTorch bf16 with the dequantized weights, {c['leading_identical_steps']} "
                      f"leading; prefill rel err {c['prefill_rel_err']['sinter']:.3e} vs torch "
                      f"bf16 {c['prefill_rel_err']['torch_bf16']:.3e}; max ratio up to the first "
                      f"mismatch {c['max_ratio_up_to_first_mismatch']:.2f}, all steps "
                      f"{c['max_ratio_all_steps']:.2f}; first mismatch {c['first_mismatch']}; "
                      f"quantization error (fp32 refs, {qname} vs bf16 weights) prefill "
                      f"{c['quantization_rel_err']['prefill']:.3e} decode "
                      f"{c['quantization_rel_err']['decode']:.3e}; tokens equal to the bf16 "
                      f"model's greedy {c['bf16_model_tokens_equal']}/{a.steps}; ok {c['ok']}",
                      flush=True)
                del q32, q16
            except Exception as e:
                traceback.print_exc()
                result[f"numerics_{qname}"] = {"error": f"{type(e).__name__}: {e}"[:1000]}
                ok = False
            save()
    del ref_model
    torch.cuda.empty_cache()

    # end-to-end greedy loop, tokens/s -----------------------------------------------------------
    e2e = {}
    for mode, run in greedy.items() if a.batch == 1 else ():
        try:
            run(prompt, keep_logits=False)  # warm-up (graph mode: captures both entries)
            torch.cuda.synchronize()
            start, stop = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            start.record()
            run(prompt, keep_logits=False)
            stop.record()
            stop.synchronize()
            ms = start.elapsed_time(stop)
            # decode only: the same loop minus one prefill (timed alone)
            pre_ms = time_calls(run.prefill, 20, 3, torch)
            e2e[mode] = {"total_ms": ms, "prefill_ms": pre_ms,
                         "tokens_per_s": a.steps / ms * 1e3,
                         "decode_tokens_per_s": (a.steps - 1) / max(ms - pre_ms, 1e-9) * 1e3
                         if a.steps > 1 else None}
            print(f"end-to-end greedy, Sinter {mode}: {a.steps} tokens in {ms:.2f} ms "
                  f"({e2e[mode]['tokens_per_s']:.0f} tokens/s incl. prefill {pre_ms:.3f} ms; "
                  f"decode {e2e[mode]['decode_tokens_per_s'] or 0:.0f} tokens/s)", flush=True)
        except Exception as e:
            traceback.print_exc()
            e2e[mode] = {"error": f"{type(e).__name__}: {e}"[:500]}
    result["end_to_end"] = e2e
    save()
    if a.skip_timing:
        for c in contexts.values():
            c.close()
        sm.close()
        return 0 if ok else 1

    # (b) timing --------------------------------------------------------------------------------
    sample_ctx = None
    if a.sample:
        sample_so = stem + "_sample.so"
        result["compile_seconds_sample"] = run_compile(a, prefill_path, decode_path, sample_so,
                                                       ["--sample"])
        sample_model = sinter_ctypes.Model(
            sample_so, weights=sample_so[:-3] + ".safetensors" if a.weights == "external" else None)
        sample_ctx = sample_model.context("graph")
    bandwidth = copy_bandwidth(torch)
    result["copy_bytes_per_s"] = bandwidth
    logits_bytes = cfg.vocab_size * 2 * a.batch
    print(f"copy bandwidth {bandwidth / 1e12:.2f} TB/s; weights {weight_bytes / 1e6:.1f} MB, "
          f"KV {kv_pos_bytes / 1e3:.1f} kB per position", flush=True)
    rows = result["systems"]

    for L in a.cache_lengths:
        floor_bytes = weight_bytes + kv_pos_bytes * L * a.batch + logits_bytes
        floor_ms = floor_bytes / bandwidth * 1e3
        result.setdefault("floor_ms", {})[str(L)] = floor_ms
        print(f"\n== cache length {L}: position {L - 1}, floor {floor_ms:.4f} ms "
              f"({floor_bytes / 1e6:.1f} MB)", flush=True)

        def add(name, make, L=L, floor_ms=floor_ms):
            row = {"L": L, "system": name}
            try:
                with torch.no_grad():
                    fn = make()
                    ms = time_calls(fn, a.calls, a.reps, torch)
                    try:
                        kernels, gpu_ms = profile_kernels(fn, torch)
                    except Exception:
                        kernels, gpu_ms = None, None
                    if a.kernel_table and name.startswith("Sinter"):
                        print_kernel_table(kernel_timeline(fn, torch, short_kernel_name))
                row.update(ms=ms, kernels=kernels, gpu_ms=gpu_ms,
                           pct_bandwidth=100.0 * floor_ms / ms, x_floor=ms / floor_ms)
                print(f"{name:58s} {ms:8.4f} ms  {kernels} kernels  "
                      f"{100.0 * floor_ms / ms:5.1f} % of bandwidth", flush=True)
            except Exception as e:
                traceback.print_exc()
                row.update(ms=None, error=f"{type(e).__name__}: {e}".replace("\n", " ")[:500])
                print(f"{name:58s} failed: {row['error'][:200]}", flush=True)
            rows.append(row)
            torch.cuda.synchronize()
            save(format_table(rows))

        def bind_decode(ctx, sampling=None):
            """The decode step at position L-1 after a prefill, on fixed buffers; with
            `sampling`, the sampler's parameters are set first (a --sample library)."""
            dec = ctx.model.entry("decode")
            info = {i.name: i for i in dec.inputs}
            ids = torch.randint(0, cfg.vocab_size, info["input_ids"].shape, generator=gen,
                                device="cuda")
            pos = torch.full(info["cache_position"].shape, L - 1, dtype=torch.int64,
                             device="cuda")
            out = [torch.empty(o.shape, dtype=getattr(torch, o.dtype), device="cuda")
                   for o in dec.outputs]
            ctx.reset_state()
            if sampling is not None:
                ctx.set_sampling(**sampling)
            ctx.run_entry("prefill", [prompt], [
                torch.empty(o.shape, dtype=getattr(torch, o.dtype), device="cuda")
                for o in ctx.model.entry("prefill").outputs])
            return ctx.bind_entry("decode", {"input_ids": ids, "cache_position": pos}, out)

        for mode, ctx in contexts.items():
            add(f"Sinter, {'CUDA graph' if mode == 'graph' else 'direct launches'}",
                lambda ctx=ctx: bind_decode(ctx))
        for qname, q in quantized.items():
            q_floor = (q["bytes"] + kv_pos_bytes * L + logits_bytes) / bandwidth * 1e3
            result.setdefault(f"{qname}_floor_ms", {})[str(L)] = q_floor
            print(f"{qname} floor {q_floor:.4f} ms", flush=True)
            add(f"Sinter --weight-dtype {qname}, CUDA graph (% of its own floor)",
                lambda q=q: bind_decode(q["ctx"]), floor_ms=q_floor)

        # --sample: the same decode step with the sampler at its end (next_token output).
        for label, params in SAMPLING_ROWS if sample_ctx else ():
            make_sampled = lambda params=params: bind_decode(sample_ctx, params)
            add(f"Sinter + sampler ({label}), CUDA graph", make_sampled)

        def make_eager():
            step, _, _ = make_torch_step(model, cfg, prompt, L)
            return step

        add("PyTorch eager, StaticCache", make_eager)

        def make_graph():
            step, _, _ = make_torch_step(model, cfg, prompt, L)
            return cuda_graph_of(step, torch)

        add("PyTorch eager step as one CUDA graph", make_graph)

        for cmode in a.compile_modes:
            def make_compiled(cmode=cmode):
                step, _, _ = make_torch_step(model, cfg, prompt, L)
                torch._dynamo.reset()
                compiled = torch.compile(step, mode=None if cmode == "default" else cmode)
                t0 = time.time()
                for _ in range(3):
                    compiled()
                torch.cuda.synchronize()
                print(f"  torch.compile mode={cmode}: compiled and warmed in "
                      f"{time.time() - t0:.1f} s", flush=True)
                return compiled

            add(f'torch.compile mode="{cmode}"', make_compiled)

        torch.cuda.empty_cache()

    table = format_table(rows)
    notes = [f"Sinter launches per decode token: {dec_launches}; end-to-end greedy ({a.steps} "
             f"tokens, prompt {a.prompt_len}): " + ", ".join(
                 f"{m} {v['tokens_per_s']:.0f} tokens/s" for m, v in e2e.items()
                 if "tokens_per_s" in v),
             f"Copy bandwidth {bandwidth / 1e12:.2f} TB/s; floor per step = (weights "
             f"{weight_bytes / 1e6:.1f} MB + KV {kv_pos_bytes / 1e3:.1f} kB x L"
             f"{f' x {a.batch} sequences' if a.batch > 1 else ''} + logits) / "
             f"bandwidth: " + ", ".join(f"L={L} {ms:.4f} ms" for L, ms in
                                       result["floor_ms"].items())]
    numerics = result.get("numerics") or {}
    for c in numerics if isinstance(numerics, list) else ():  # --batch: one step per L
        if "max_ratio" in c:
            notes.append(f"Numerics, batch {a.batch}, one step at position {c['L'] - 1}: max "
                         f"error ratio vs PyTorch bf16 {c['max_ratio']:.2f}; top-1 equal to "
                         f"fp32 {sum(r['top1_equal_fp32'] for r in c['sequences'])}/{a.batch}")
    for mode, c in (numerics.get("modes", {}) if isinstance(numerics, dict) else {}).items():
        notes.append(f"Numerics ({mode}): {c['equal_token_count']}/{c['steps']} tokens equal to "
                     f"PyTorch bf16, {c['leading_identical_steps']} leading; max error ratio vs "
                     f"PyTorch bf16 up to the first mismatch {c['max_ratio_up_to_first_mismatch']:.2f}"
                     f"; first mismatch {c['first_mismatch']}; ok {c['ok']}")
    table += "\n\n" + "\n\n".join(notes)
    print("\n" + table)
    save(table)
    for c in contexts.values():
        c.close()
    sm.close()
    if not ok:
        print("numerics out of bounds")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
