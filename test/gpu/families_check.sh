#!/usr/bin/env bash
# GPU check (issue 20): every export in DIR (from `examples/export_llama.py --arch ...
# --save-reference`, named ARCH_DTYPE_bBATCH.onnx) compiled with the carried compiler and run on
# its saved inputs; relative L2 error of the logits against PyTorch in the model's dtype (bound
# 2e-2 for bf16, 5e-3 for f16, 1e-4 for f32) and top-1 agreement. Prints one table row per model.
#
#   test/gpu/families_check.sh DIR [SINTER]    (carry build/bin/sinter, build/lib, build/share)
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=$1
sinter=${2:-build/bin/sinter}
work=${WORK:-/tmp/families}
mkdir -p "$work"
ls "$dir"/*.onnx | xargs -P "${JOBS:-16}" -I{} sh -c \
  'n=$(basename {} .onnx); "$0" compile {} -o "$1/$n.so" >"$1/$n.compile.log" 2>&1 || echo "compile failed: $n"' \
  "$sinter" "$work"
echo "| model | launches | rel. error vs PyTorch (same dtype) | result |"
echo "|---|---|---|---|"
status=0
for m in "$dir"/*.onnx; do
  n=$(basename "$m" .onnx)
  case $n in *_bf16_*) bound=2e-2 ;; *_f16_*) bound=5e-3 ;; *) bound=1e-4 ;; esac
  if [ ! -f "$work/$n.so" ]; then
    echo "| $n | — | — | compile failed: $(tail -1 "$work/$n.compile.log" | cut -c1-150) |"
    status=1
    continue
  fi
  launches=$("$sinter" inspect "$work/$n.so" --json 2>/dev/null | python3 -c \
    'import json,sys; d=json.load(sys.stdin); print(sum(len(e.get("launches", [])) for e in d.get("entries", [d])))' 2>/dev/null || echo "?")
  line=$(python3 examples/bench/check_fixture.py "$work/$n.so" "${m%.onnx}" --bound $bound 2>&1 | tail -1)
  case $line in *OK) result=OK ;; *) result=FAIL; status=1 ;; esac
  err=$(grep -o 'rel err [0-9.e+-]*' <<<"$line" | cut -d' ' -f3)
  top1=$(grep -o 'top-1 identical [A-Za-z]*' <<<"$line" | cut -d' ' -f3)
  echo "| $n | $launches | $err (bound $bound), top-1 identical $top1 | $result |"
done
exit $status
