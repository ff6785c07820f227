#!/usr/bin/env bash
# GPU check (issue 23): from a Hugging Face checkpoint folder to generated text.
#   1. (any machine) a tiny random checkpoint (python/tests/make_tiny_checkpoint.py: Llama, 2
#      layers, hidden 64, vocab 256, Llama 3 RoPE scaling, a byte-level tokenizer.json, f32),
#      exported with examples/export_llama.py --from-pretrained --kv-cache 64 --seq 8 and
#      compiled with `sinter compile --sample prefill=... decode=...` into WORK/tiny.so (its
#      tokenizer beside it as WORK/tiny.tokenizer.json). Files already in WORK are reused: run
#      with GPU=0 on the build machine, then carry WORK (an ignored folder, e.g. build-generate).
#   2. (GPU) greedy tokens of sinter.Generator (graph and direct mode) equal Hugging Face's
#      model.generate(do_sample=False, max_new_tokens=32) for prompts longer than, as long as
#      and shorter than the prefill length (a divergence must be a near-tie of HF's logits);
#      streaming gives the same tokens; a text prompt through the tokenizer gives HF's text;
#      `sinter generate X.so --prompt-ids 1,2,3 --max-new-tokens 32` prints HF's tokens on its
#      `tokens:` line; a sampled run (temperature, top-k, top-p, repetition penalty) twice with
#      one seed gives identical tokens, in graph and direct mode alike.
#   3. (GPU) WORK/tiny_chunk.so, the same model with a chunk entry of 4 tokens (export --chunk 4):
#      greedy tokens equal HF's for prompts of 5 to 30 tokens (prefill, chunks ending at the
#      prompt's end, decode for what is shorter than a chunk), in graph and direct mode, and
#      `sinter generate` reports the chunk runs.
# Prints one PASS/FAIL line per check; exit 0 when all pass, 1 if one fails, 77 (skipped)
# where phase 2 cannot run (no torch with a CUDA device).
#
#   [GPU=0] [WORK=DIR] [PYTHON=python3] test/gpu/generate_check.sh [SINTER]
#                                        (carry build/bin/sinter, build/lib, build/share, WORK)
set -uo pipefail
cd "$(dirname "$0")/../.."
sinter=${1:-build/bin/sinter}
python=${PYTHON:-python3}
work=${WORK:-/tmp/generate_check}
mkdir -p "$work"
say() { echo "generate-check: $*"; }
die() { say "FAIL $1"; [ -n "${2:-}" ] && tail -20 "$2"; exit 1; }

# ---- phase 1: checkpoint, export, compile ----------------------------------------------------
if [ ! -f "$work/ckpt/config.json" ]; then
  "$python" python/tests/make_tiny_checkpoint.py "$work/ckpt" >"$work/checkpoint.log" 2>&1 ||
    die "make_tiny_checkpoint" "$work/checkpoint.log"
fi
if [ ! -f "$work/tiny_chunk.onnx" ]; then
  "$python" examples/export_llama.py --from-pretrained "$work/ckpt" --kv-cache 64 --seq 8 \
    --out "$work/tiny_prefill.onnx" --decode-out "$work/tiny_decode.onnx" \
    --chunk 4 --chunk-out "$work/tiny_chunk.onnx" \
    >"$work/export.log" 2>&1 || die "export --from-pretrained" "$work/export.log"
  grep -h "onnxruntime vs" "$work/export.log"
fi
if [ ! -f "$work/tiny.so" ]; then
  "$sinter" compile --sample prefill="$work/tiny_prefill.onnx" decode="$work/tiny_decode.onnx" \
    -o "$work/tiny.so" >"$work/compile.log" 2>&1 || die "sinter compile --sample" "$work/compile.log"
fi
if [ ! -f "$work/tiny_chunk.so" ]; then
  "$sinter" compile --sample prefill="$work/tiny_prefill.onnx" decode="$work/tiny_decode.onnx" \
    chunk="$work/tiny_chunk.onnx" -o "$work/tiny_chunk.so" >"$work/compile_chunk.log" 2>&1 ||
    die "sinter compile --sample with a chunk entry" "$work/compile_chunk.log"
fi
cp "$work/tiny_prefill.tokenizer.json" "$work/tiny.tokenizer.json" ||
  die "the export wrote no tokenizer"
say "compiled $work/tiny.so"
[ "${GPU:-1}" = 0 ] && exit 0

# ---- phase 2: generation on the GPU ----------------------------------------------------------
if ! "$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  say "skipped: needs torch with a CUDA device"
  exit 77
fi
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" "$python" - "$work" "$sinter" <<'PY'
import subprocess
import sys

import torch
from transformers import AutoModelForCausalLM

import sinter

work, sinter_bin = sys.argv[1], sys.argv[2]
so, ckpt = f"{work}/tiny.so", f"{work}/ckpt"
N = 32
failures = []


def report(ok, label, detail=""):
    print(f"generate-check: {'PASS' if ok else 'FAIL'} {label}{': ' + detail if detail else ''}",
          flush=True)
    if not ok:
        failures.append(label)


hf = AutoModelForCausalLM.from_pretrained(ckpt, local_files_only=True,
                                          dtype=torch.float32).eval()


def hf_greedy(ids, n=N):
    with torch.no_grad():
        out = hf.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids),
                          dtype=torch.int64), do_sample=False, max_new_tokens=n,
                          pad_token_id=0)
    return out[0, len(ids):].tolist()


def same_or_near_tie(ids, got, want):
    """'' when equal; else where they part, and whether HF's logits call it a near-tie (then
    what follows may differ: only the prefix up to it is checked)."""
    if got == want:
        return True, ""
    k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    if k >= min(len(got), len(want)):
        return False, f"lengths {len(got)} vs {len(want)}"
    with torch.no_grad():
        logits = hf(torch.tensor([ids + want[:k]])).logits[0, -1].float()
    gap = float(logits[want[k]] - logits[got[k]])
    scale = float(logits.abs().max())
    near = gap <= 1e-4 * max(scale, 1.0)
    return near, (f"part at step {k} (sinter {got[k]}, HF {want[k]}, logit gap {gap:.2e} of "
                  f"{scale:.2e}: {'near-tie' if near else 'not a tie'})")


prompts = {"longer than prefill (13)": [5, 17, 42, 99, 3, 250, 7, 64, 128, 1, 33, 200, 11],
           "prefill length (8)": [9, 8, 7, 6, 5, 4, 3, 2],
           "shorter than prefill (5)": [77, 1, 150, 20, 2]}
gens = {m: sinter.Generator(so, mode=m) for m in ("graph", "direct")}
report(gens["graph"].model.has_sampler and gens["graph"].prefill_len == 8 and
       gens["graph"].cache_len == 64, "library shape",
       f"prefill {gens['graph'].prefill_len}, cache {gens['graph'].cache_len}")
for label, ids in prompts.items():
    want = hf_greedy(ids)
    for mode, g in gens.items():
        got = g.generate(ids, max_new_tokens=N)
        ok, why = same_or_near_tie(ids, got, want)
        st = g.last_stats
        report(ok, f"greedy {mode}, prompt {label}",
               why or f"{len(got)} tokens = HF, {st.tokens_per_s:.0f} tokens/s")
    streamed = list(gens["graph"].generate(ids, max_new_tokens=N, stream=True))
    report(streamed == gens["graph"].generate(ids, max_new_tokens=N), f"stream, prompt {label}")

g = gens["graph"]
text = "Hello, Sinter! "
if g.tokenizer is None:
    report(False, "tokenizer", f"{work}/tiny.tokenizer.json not found beside the library")
else:
    ids = g.tokenizer.encode(text).ids
    want = g.tokenizer.decode(hf_greedy(ids, 16), skip_special_tokens=True)
    got = g.generate(text, max_new_tokens=16)
    report(got == want, "text prompt", f"{got!r} vs HF {want!r}")
    report("".join(g.generate(text, max_new_tokens=16, stream=True)) == got, "text stream")

# the CLI
want = hf_greedy([1, 2, 3])
r = subprocess.run([sinter_bin, "generate", so, "--prompt-ids", "1,2,3", "--max-new-tokens",
                    str(N)], capture_output=True, text=True)
line = next((l for l in r.stdout.splitlines() if l.startswith("tokens:")), None)
if r.returncode or line is None:
    report(False, "sinter generate", f"exit {r.returncode}: {(r.stderr or r.stdout)[-300:]}")
else:
    cli = [int(t) for t in line[len("tokens:"):].replace(",", " ").split()]
    ok, why = same_or_near_tie([1, 2, 3], cli, want)
    report(ok, "sinter generate --prompt-ids 1,2,3", why or f"{len(cli)} tokens = HF")
    report(cli == g.generate([1, 2, 3], max_new_tokens=N), "sinter generate = Generator")

# sampling: the same seed gives the same tokens, run after run and in both modes
ids = prompts["longer than prefill (13)"]
kw = dict(max_new_tokens=N, temperature=0.8, top_k=40, top_p=0.9, repetition_penalty=1.2,
          seed=1234)
runs = {m: [gens[m].generate(ids, **kw) for _ in range(2)] for m in gens}
report(runs["graph"][0] == runs["graph"][1], "sampled twice, graph", str(runs["graph"][0][:8]))
report(runs["direct"][0] == runs["direct"][1], "sampled twice, direct")
report(runs["graph"][0] == runs["direct"][0], "sampled graph = direct")
other = gens["graph"].generate(ids, **dict(kw, seed=99))
print(f"generate-check: (another seed: {'differs' if other != runs['graph'][0] else 'same'})")
report(runs["graph"][0] != hf_greedy(ids) or other != runs["graph"][0],
       "sampling is not greedy")
for g in gens.values():
    g.close()

# a chunk entry: the prompt through prefill and chunks of 4 (the last ending at its end)
chunked = {m: sinter.Generator(f"{work}/tiny_chunk.so", mode=m) for m in ("graph", "direct")}
report(chunked["graph"].chunk_len == 4, "chunk library shape", f"chunk {chunked['graph'].chunk_len}")
for n in (3, 5, 8, 11, 13, 16, 30):
    ids = [(37 * i + 11) % 256 for i in range(n)]
    want = hf_greedy(ids)
    for mode, g in chunked.items():
        got = g.generate(ids, max_new_tokens=N)
        ok, why = same_or_near_tie(ids, got, want)
        st = g.last_stats
        plan = sinter.plan_prompt(n, 8, 4)
        runs = sum(1 for r in plan if r[0] == "chunk")
        report(ok and st.chunk_runs == runs, f"chunked greedy {mode}, prompt of {n}",
               why or f"{len(got)} tokens = HF, {st.chunk_runs} chunk runs")
r = subprocess.run([sinter_bin, "generate", f"{work}/tiny_chunk.so", "--prompt-ids",
                    ",".join(str(t) for t in range(1, 14)), "--max-new-tokens", "8"],
                   capture_output=True, text=True)
report(r.returncode == 0 and "through prefill, 2 chunk runs of 4" in r.stdout,
       "sinter generate reports the chunk runs", (r.stdout or r.stderr).strip()[-200:])
line = next((l for l in r.stdout.splitlines() if l.startswith("tokens:")), "")
report(line[len("tokens:"):].strip() == ",".join(
    str(t) for t in chunked["graph"].generate(list(range(1, 14)), max_new_tokens=8)),
       "sinter generate = Generator, chunked")
for g in chunked.values():
    g.close()
print(f"generate-check: {'all passed' if not failures else 'FAILED: ' + ', '.join(failures)}")
sys.exit(1 if failures else 0)
PY
