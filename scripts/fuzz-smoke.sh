#!/usr/bin/env bash
# Builds the libFuzzer targets into build-fuzz/ (clang-22, ASan + UBSan, SINTER_ENABLE_FUZZERS)
# and runs each one for N seconds (default 60; all four at once) on its seed corpus:
#
#   sinter-onnx-import-fuzz  raw bytes as an ONNX model through the importer; seeds are the
#                            committed exports (examples/fixtures/*.onnx) and the importer's
#                            test inputs (test/lit/Import/Inputs/*.onnx, one model per op in ops/)
#   sinter-program-fuzz      a program table and weights through the runtime's load-time checks
#   sinter-weights-fuzz      raw bytes as a safetensors weights file through the weights loader;
#                            seeds in fuzz/corpus/weights
#   sinter-pipeline-fuzz     the bytes choose a valid transformer-style model and the compile
#                            flags; the model is compiled through every phase to source;
#                            seeds in fuzz/corpus/pipeline
#
# Exits non-zero when a fuzzer reports a crash, sanitizer error, leak, timeout or out-of-memory;
# the reproducer is written to build-fuzz/fuzz-artifacts/ and the log to build-fuzz/fuzz-logs/.
# Rerun one with: build-fuzz/bin/<fuzzer> <reproducer>
#
# Usage: scripts/fuzz-smoke.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${SINTER_FUZZ_SECONDS:-60}}"
jobs="${SINTER_JOBS:-2}"

scripts/install-deps.sh --fuzz
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
# The compilers only on the first configure: cmake stores them resolved (a path), sees the bare
# names of a later run as a change of compiler and resets the cache, dropping the options below.
compilers=()
[ -f build-fuzz/CMakeCache.txt ] || compilers=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${compilers[@]}" \
  -DSINTER_ENABLE_FUZZERS=ON -DSINTER_STATIC_TOOLS=OFF \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DSINTER_CUDA_HOME="$cuda_home" >/dev/null
cmake --build build-fuzz --parallel "$jobs" --target sinter-onnx-import-fuzz sinter-program-fuzz \
  sinter-weights-fuzz sinter-pipeline-fuzz

out=build-fuzz
rm -rf "$out/fuzz-corpus" "$out/fuzz-logs" "$out/fuzz-artifacts"
mkdir -p "$out/fuzz-corpus/onnx" "$out/fuzz-corpus/program" "$out/fuzz-corpus/weights" \
  "$out/fuzz-corpus/pipeline" \
  "$out/fuzz-artifacts" "$out/fuzz-logs"
cp examples/fixtures/*.onnx test/lit/Import/Inputs/*.onnx test/lit/Import/Inputs/ops/*.onnx "$out/fuzz-corpus/onnx/"
cp fuzz/corpus/weights/* "$out/fuzz-corpus/weights/"
cp fuzz/corpus/pipeline/* "$out/fuzz-corpus/pipeline/"
# Reproducers of bugs the fuzzers found once: replayed every run.
cp fuzz/regressions/onnx/* "$out/fuzz-corpus/onnx/" 2>/dev/null || true
cp fuzz/regressions/program/* "$out/fuzz-corpus/program/" 2>/dev/null || true
cp fuzz/regressions/weights/* "$out/fuzz-corpus/weights/" 2>/dev/null || true
cp fuzz/regressions/pipeline/* "$out/fuzz-corpus/pipeline/" 2>/dev/null || true

# -rss_limit_mb also caps single allocations (malloc_limit_mb defaults to it); -timeout is per
# input. Leaks are reported at exit of each input by LeakSanitizer (-detect_leaks=1).
common=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -detect_leaks=1
        -print_final_stats=1 -artifact_prefix="$out/fuzz-artifacts/")
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}${UBSAN_OPTIONS:+:}halt_on_error=1:print_stacktrace=1"

run() {
  local name="$1"
  shift
  echo "fuzz-smoke: $name for ${seconds}s"
  if "$out/bin/$name" "${common[@]}" "$@" >"$out/fuzz-logs/$name.log" 2>&1; then
    grep -E "^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)" \
      "$out/fuzz-logs/$name.log" | sed "s/^/fuzz-smoke: $name: /"
    return 0
  fi
  echo "fuzz-smoke: $name FAILED; the end of $out/fuzz-logs/$name.log:" >&2
  grep -vE "^(#[0-9]+|INFO:|MERGE|\s*\")" "$out/fuzz-logs/$name.log" | tail -40 >&2
  ls "$out/fuzz-artifacts/" >&2
  return 1
}

# All four at once: N seconds of wall time each.
run sinter-onnx-import-fuzz -dict=fuzz/onnx.dict "$out/fuzz-corpus/onnx" &
pids=($!)
run sinter-program-fuzz "$out/fuzz-corpus/program" &
pids+=($!)
run sinter-weights-fuzz "$out/fuzz-corpus/weights" &
pids+=($!)
run sinter-pipeline-fuzz "$out/fuzz-corpus/pipeline" &
pids+=($!)
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
[ "$status" -eq 0 ] && echo "fuzz-smoke: no crash, leak or timeout"
exit "$status"
