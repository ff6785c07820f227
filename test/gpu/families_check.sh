#!/usr/bin/env bash
# GPU check (issue 20): every export in DIR (from families_export.sh, named
# ARCH_DTYPE_bBATCH.onnx, or ARCH_DTYPE_kv_{prefill,decode}.onnx with KV=1) compiled with the carried compiler and run on its saved inputs. Each
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
  stem=${m%.onnx}
  case $n in
    *_kv_decode|*_kv_chunk) continue ;;
    # A KV export: its graphs in one library, checked prefill then decode step by step (and
    # prefill then the chunks, with a chunk graph).
    *_kv_prefill) n=${n%_prefill}; stem=${stem%_prefill}
                  m="prefill=$m,decode=${m%_prefill.onnx}_decode.onnx"
                  [ -f "${stem}_chunk.onnx" ] && m="$m,chunk=${stem}_chunk.onnx" ;;
  esac
  jobs+=("$n $m $stem")
  case $n in
    *_f32_*)
      for d in bf16 f16; do
        other=${stem/_f32_/_${d}_}
        [ -f "$other.logits_exact.npy" ] || [ -f "${other}_decode.logits.npy" ] &&
          jobs+=("${n}_dtype_$d $m $other --dtype $d")
      done ;;
  esac
done
printf '%s\n' "${jobs[@]}" | xargs -P "${JOBS:-16}" -L1 sh -c \
  'sinter=$0 work=$1 n=$2 m=$3; shift 4
   [ -f "$work/$n.so" ] && exit 0
   "$sinter" compile $(echo "$m" | tr , " ") "$@" -o "$work/$n.so" >"$work/$n.compile.log" 2>&1 ||
     echo "compile failed: $n"' \
  "$sinter" "$work"
[ "${GPU:-1}" = 0 ] && exit 0
# The checks in parallel (each loads torch), the table in job order.
printf '%s\n' "${jobs[@]}" | xargs -P "${JOBS:-8}" -L1 sh -c \
  'work=$0 n=$1 stem=$3
   # KV references have no float64 logits: the bound on the error against PyTorch in the dtype
   # compared with (the fixtures without one use it; the rest apply the 1.5x rule).
   case $n in *_dtype_f16|*_f16_*) bound=5e-3 ;; *_dtype_bf16|*_bf16_*) bound=2e-2 ;; *) bound=1e-4 ;; esac
   [ -f "$work/$n.so" ] && python3 examples/bench/check_fixture.py "$work/$n.so" "$stem" \
     --bound $bound >"$work/$n.check.log" 2>&1' "$work"
echo "| model | flags | launches | Sinter's error vs float64 / PyTorch's (same dtype) | result |"
echo "|---|---|---|---|---|"
status=0
for job in "${jobs[@]}"; do
  read -r n m stem flags <<<"$job"
  if [ ! -f "$work/$n.so" ]; then
    echo "| $n | ${flags:-} | — | compile failed: $(tail -1 "$work/$n.compile.log" | cut -c1-150) | FAIL |"
    status=1
    continue
  fi
  launches=$("$sinter" inspect "$work/$n.so" --json 2>/dev/null | python3 -c \
    'import json,sys; print(" + ".join(str(len(e["launches"])) for e in json.load(sys.stdin)["entries"]))' \
    2>/dev/null || echo "?")
  line=$(tail -1 "$work/$n.check.log")
  case $line in *OK) result=OK ;; *) result=FAIL; status=1 ;; esac
  # A KV check ends in a verdict line; the ratio is on the line before (the CUDA-graph run).
  case $line in OK|FAIL) line=$(grep ratio "$work/$n.check.log" | tail -1) ;; esac
  echo "| $n | ${flags:-} | $launches | ${line#*: } | $result |"
done
exit $status
