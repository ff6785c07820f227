#!/usr/bin/env bash
# GPU check (issue 20): every export in DIR (from `examples/export_llama.py --arch ...
# --save-reference`, named ARCH_DTYPE_bBATCH.onnx) compiled with the carried compiler and run on
# its saved inputs (families_export.sh makes them). Sinter's relative L2 error of the logits
# against the float64 evaluation of the same weights must be at most 1.5x PyTorch's own in the
# model's dtype, and a top-1 token that differs from PyTorch's must be a near-tie
# (check_fixture.py). Prints one table row per model.
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
echo "| model | launches | Sinter's error vs float64 / PyTorch's (same dtype) | result |"
echo "|---|---|---|---|"
status=0
for m in "$dir"/*.onnx; do
  n=$(basename "$m" .onnx)
  if [ ! -f "$work/$n.so" ]; then
    echo "| $n | — | — | compile failed: $(tail -1 "$work/$n.compile.log" | cut -c1-150) |"
    status=1
    continue
  fi
  launches=$("$sinter" inspect "$work/$n.so" --json 2>/dev/null | python3 -c \
    'import json,sys; print(len(json.load(sys.stdin)["launches"]))' 2>/dev/null || echo "?")
  line=$(python3 examples/bench/check_fixture.py "$work/$n.so" "${m%.onnx}" 2>&1 | tail -1)
  case $line in *OK) result=OK ;; *) result=FAIL; status=1 ;; esac
  echo "| $n | $launches | ${line#*: } | $result |"
done
exit $status
