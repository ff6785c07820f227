#!/usr/bin/env bash
# GPU check (issue 20): an optimum with-past export (examples/fixtures/optimum_llama_past.onnx)
# compiled with --cache-length 32 --sample generates PyTorch's greedy tokens: the prompt of the
# fixture's reference (6 tokens) and 16 new tokens, through sinter.Generator (graph and direct
# mode, the attention mask and positions fed by the generator) and `sinter generate`, against
# the tokens PyTorch picked in the same dtype (the fixture's decode input_ids). fp32 and
# --dtype bf16. Compiles into WORK first (needs nvcc); REUSE=1 takes the libraries already
# there: compile on the build machine with GPU=0, carry WORK, run with REUSE=1 on the GPU.
# Prints one PASS/FAIL line per check; exit 0 when all pass, 1 if one fails, 77 (skipped)
# where the second phase cannot run (no torch with a CUDA device).
#
#   [GPU=0] [REUSE=1] [WORK=DIR] test/gpu/with_past_generate.sh [SINTER]
set -uo pipefail
cd "$(dirname "$0")/../.."
sinter=${1:-build/bin/sinter}
work=${WORK:-/tmp/with_past_generate}
fixture=examples/fixtures/optimum_llama_past
mkdir -p "$work"
# ctest runs this everywhere (label gpu): exit 77 (skipped) where it cannot run.
if [ "${GPU:-1}" != 0 ] &&
   ! python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "with-past-generate: SKIP (needs torch with a CUDA device)"
  exit 77
fi
for dtype in f32 bf16; do
  [ "${REUSE:-0}" = 1 ] && [ -f "$work/$dtype.so" ] && continue
  extra=(); [ "$dtype" = bf16 ] && extra=(--dtype bf16)
  "$sinter" compile "$fixture.onnx" --cache-length 32 --dim batch_size=1 --dim sequence_length=6 \
    --sample "${extra[@]}" -o "$work/$dtype.so" || { echo "with-past-generate: FAIL compile $dtype"; exit 1; }
done
[ "${GPU:-1}" = 0 ] && { echo "with-past-generate: compiled into $work"; exit 0; }
python3 - "$sinter" "$work" "$fixture" <<'PY'
import os, subprocess, sys
sys.path.insert(0, "python")
sinter_bin, work, fixture = sys.argv[1:]
try:
    import numpy as np
    import torch
    assert torch.cuda.is_available()
except Exception as e:
    print(f"with-past-generate: SKIP (needs torch with a CUDA device: {e})")
    sys.exit(77)
import sinter
failed = 0
def report(ok, what, detail=""):
    global failed
    failed += not ok
    print(f"with-past-generate: {'PASS' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else ""))
for dtype in ("f32", "bf16"):
    so = os.path.join(work, dtype + ".so")
    prompt = [int(t) for t in np.load(f"{fixture}_{dtype}_prefill.input_ids.npy")[0]]
    want = [int(t) for t in np.load(f"{fixture}_{dtype}_decode.input_ids.npy").reshape(-1)]
    for mode in ("graph", "direct"):
        with sinter.Generator(so, mode=mode) as g:
            got = g.generate(prompt, max_new_tokens=len(want))
            report(got == want, f"{dtype} Generator ({mode}), prompt 6 + {len(want)} tokens",
                   "" if got == want else f"{got} vs PyTorch {want}")
            short = g.generate(prompt[:4], max_new_tokens=4)  # shorter than the prefill: decode only
            report(len(short) == 4, f"{dtype} Generator ({mode}), a 4-token prompt through decode")
    r = subprocess.run([sinter_bin, "generate", so, "--prompt-ids", ",".join(map(str, prompt)),
                        "--max-new-tokens", str(len(want))], capture_output=True, text=True)
    line = next((l for l in r.stdout.splitlines() if l.startswith("tokens:")), None)
    cli = [int(t) for t in line[len("tokens:"):].replace(",", " ").split()] if line else None
    report(cli == want, f"{dtype} sinter generate",
           "" if cli == want else f"exit {r.returncode}: {cli} {(r.stderr or '')[-300:]}")
sys.exit(1 if failed else 0)
PY
