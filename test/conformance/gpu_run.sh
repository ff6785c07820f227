#!/usr/bin/env bash
# ONNX node tests, binary phase, on the GPU machine (torch, onnx, numpy and nvcc are there):
# compiles every selected test to a .so with the carried compiler, runs each on its data sets
# and compares with the expected outputs. Results go to $OUT: conformance.txt (every line),
# conformance.json (summary + per-test results), skipped.txt.
#
#   test/conformance/gpu_run.sh [SINTER] [run_node_tests.py options, e.g. --filter REGEX]
#
# SINTER (default build/bin/sinter) must sit in a build or install tree: ../lib/libsinter_runtime.a
# and ../share/sinter/ beside its bin/ folder. Carry those three paths, e.g. with the device tool:
#   carry ["build/bin/sinter", "build/lib/libsinter_runtime.a", "build/share"]
#   command "test/conformance/gpu_run.sh"
# (or a snapshot of them under .carry/sinter/{bin,lib,share}: gpu_run.sh .carry/sinter/bin/sinter).
set -uo pipefail
cd "$(dirname "$0")/../.."
sinter=build/bin/sinter
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then sinter=$1; shift; fi
out=${OUT:-/tmp/conformance-out}
mkdir -p "$out"
root=$(dirname "$(dirname "$sinter")")
for need in "$sinter" "$root/lib/libsinter_runtime.a" "$root/share/sinter"; do
  [ -e "$need" ] || { echo "gpu_run.sh: $need is missing (carry it)" >&2; exit 2; }
done
chmod +x "$sinter" 2>/dev/null || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
python3 -c 'import onnx, torch; print("onnx", onnx.__version__, "torch", torch.__version__)'
python3 test/conformance/run_node_tests.py --phase binary --sinter "$sinter" --jobs "${JOBS:-16}" \
  --work /tmp/conformance-work --json "$out/conformance.json" --skip-list "$out/skipped.txt" \
  --allow-failures "$@" >"$out/conformance.txt" 2>&1
status=$?
# The tail the device tool shows: run failures (numerics), then the summary.
grep '^FAIL ' "$out/conformance.txt" | cut -c1-300 | head -60
if grep -q '^== ONNX node tests' "$out/conformance.txt"; then
  sed -n '/^== ONNX node tests/,$p' "$out/conformance.txt"
else
  tail -20 "$out/conformance.txt"
fi
exit $status
