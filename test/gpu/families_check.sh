#!/usr/bin/env bash
# GPU check (issue 20): every export in DIR (from families_export.sh, named
# ARCH_DTYPE_bBATCH.onnx) compiled with the carried compiler and run on its saved inputs. Each
# fp32 export is also compiled with --dtype bf16 and --dtype f16 and checked against the export of
# the same weights in that dtype. Sinter's relative L2 error of the logits against the float64
# evaluation of the same weights must be at most 1.5x PyTorch's own in the model's dtype, and a
# top-1 token that differs from PyTorch's must be a near-tie (check_fixture.py). Prints one
# table row per compiled library. Libraries already in WORK are reused (compile them on the build
# machine with GPU=0 to save GPU time, then carry WORK).
#
#   test/gpu/families_check.sh DIR [SINTER]    (carry build/bin/sinter, build/lib, build/share)
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=$1
sinter=${2:-build/bin/sinter}
work=${WORK:-/tmp/families}
mkdir -p "$work"
# One line per library: NAME ONNX STEM [FLAGS...]
jobs=()
for m in "$dir"/*.onnx; do
  n=$(basename "$m" .onnx)
  jobs+=("$n $m ${m%.onnx}")
  case $n in
    *_f32_*)
      for d in bf16 f16; do
        stem=$dir/${n/_f32_/_${d}_}
        [ -f "$stem.logits_exact.npy" ] && jobs+=("${n}_dtype_$d $m $stem --dtype $d")
      done ;;
  esac
done
printf '%s\n' "${jobs[@]}" | xargs -P "${JOBS:-16}" -L1 sh -c \
  'sinter=$0 work=$1 n=$2 m=$3; shift 4
   [ -f "$work/$n.so" ] && exit 0
   "$sinter" compile "$m" "$@" -o "$work/$n.so" >"$work/$n.compile.log" 2>&1 || echo "compile failed: $n"' \
  "$sinter" "$work"
[ "${GPU:-1}" = 0 ] && exit 0
# The checks in parallel (each loads torch), the table in job order.
printf '%s\n' "${jobs[@]}" | xargs -P "${JOBS:-8}" -L1 sh -c \
  'work=$0 n=$1 stem=$3
   [ -f "$work/$n.so" ] && python3 examples/bench/check_fixture.py "$work/$n.so" "$stem" \
     >"$work/$n.check.log" 2>&1' "$work"
echo "| model | flags | launches | Sinter's error vs float64 / PyTorch's (same dtype) | result |"
echo "|---|---|---|---|---|"
status=0
for job in "${jobs[@]}"; do
  read -r n m stem flags <<<"$job"
  if [ ! -f "$work/$n.so" ]; then
    echo "| $(basename "$m" .onnx) | ${flags:-} | — | compile failed: $(tail -1 "$work/$n.compile.log" | cut -c1-150) | FAIL |"
    status=1
    continue
  fi
  launches=$("$sinter" inspect "$work/$n.so" --json 2>/dev/null | python3 -c \
    'import json,sys; print(len(json.load(sys.stdin)["launches"]))' 2>/dev/null || echo "?")
  line=$(tail -1 "$work/$n.check.log")
  case $line in *OK) result=OK ;; *) result=FAIL; status=1 ;; esac
  echo "| $(basename "$m" .onnx) | ${flags:-} | $launches | ${line#*: } | $result |"
done
exit $status
