#!/usr/bin/env bash
# compute-sanitizer over compiled models, on the GPU machine: runs every .so under DIR (or each
# .so given) once through sinter-run — random inputs, so integer inputs are token-id-like values
# in [0, 100) that are out of range for most gathers, which is the hostile case — and reports
# each model whose run the tool flags. The conformance runner leaves its .so files under
# /tmp/conformance-work, so the usual call follows test/conformance/gpu_run.sh:
#
#   test/conformance/memcheck.sh build/bin/sinter-run /tmp/conformance-work
#
# Environment: TOOL (memcheck; racecheck, initcheck and synccheck work too), JOBS (16),
# OUT (where memcheck.txt goes; default /tmp/memcheck-out). Exit 0 only when every run is clean.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 SINTER_RUN (DIR | MODEL.so)..." >&2
  exit 2
fi
runner=$1
shift
tool=${TOOL:-memcheck}
out=${OUT:-/tmp/memcheck-out}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "memcheck.sh: compute-sanitizer not found" >&2; exit 2; }
[ -x "$runner" ] || chmod +x "$runner" 2>/dev/null || { echo "memcheck.sh: $runner is not executable" >&2; exit 2; }
mkdir -p "$out/logs"
list=$out/models.txt
for arg in "$@"; do
  if [ -d "$arg" ]; then find "$arg" -name '*.so' -type f; else echo "$arg"; fi
done | sort >"$list"
count=$(wc -l <"$list")
echo "$tool over $count models with $runner ($("$sanitizer" --version | grep -o 'Version.*' | head -1))"

check_one() { # one model: CLEAN, ERRORS or RUN-FAILED, and its log
  local so=$1 log
  log=$out/logs/$(echo "$so" | tr '/' '_').log
  "$sanitizer" --tool "$tool" --error-exitcode 86 --print-limit 20 \
    "$runner" "$so" --iterations 1 --warmup 0 >"$log" 2>&1
  case $? in
    0) echo "CLEAN $so" ;;
    86) echo "ERRORS $so: $(grep -m1 -E '^========= (Invalid|Uninitialized|Race|Barrier|Program hit|Error)' "$log" | cut -c1-200)" ;;
    *) echo "RUN-FAILED $so: $(grep -v '^=========' "$log" | grep -m1 -i 'error\|fail' | cut -c1-200)" ;;
  esac
}
export -f check_one
export sanitizer runner tool out
# Unsorted first, so a run cut short by a time limit still leaves its lines.
xargs -a "$list" -P "${JOBS:-16}" -I{} bash -c 'check_one "$@"' _ {} >"$out/$tool.unsorted"
sort "$out/$tool.unsorted" >"$out/$tool.txt" && rm -f "$out/$tool.unsorted"
clean=$(grep -c '^CLEAN ' "$out/$tool.txt")
flagged=$(grep -c '^ERRORS ' "$out/$tool.txt")
failed=$(grep -c '^RUN-FAILED ' "$out/$tool.txt")
grep -v '^CLEAN ' "$out/$tool.txt" | head -40
echo "== $tool: $clean of $count clean, $flagged flagged, $failed runs failed (lines in $out/$tool.txt)"
[ "$clean" -eq "$count" ]
