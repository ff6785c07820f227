#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/
# (SINTER_ENABLE_SANITIZERS=ON: compiler, tools, runtime archive, tests; Debian's LLVM/MLIR
# libraries stay uninstrumented) and runs the whole ctest suite but the GPU kernel tests (nvcc
# programs the sanitizers do not instrument; the normal build runs them). Fails on any failing
# test and on any sanitizer report, including reports from processes whose exit code a test
# ignores or inverts (`not sinter ...`): reports abort the process and are also written to
# build-asan/sanitizer-logs/, which must stay empty.
#
# Model .so files built during the tests link the instrumented runtime archive; they load into
# the sanitized processes that use them here (sinter run, the unit tests), not into plain ones.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
jobs="${SINTER_JOBS:-2}"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSINTER_ENABLE_SANITIZERS=ON -DSINTER_STATIC_TOOLS=OFF -DSINTER_GPU_TESTS=OFF \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DSINTER_CUDA_HOME="$cuda_home" >/dev/null
cmake --build build-asan --parallel "$jobs"

logs="$PWD/build-asan/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:check_initialization_order=1:strict_init_order=1:log_path=$logs/asan"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"
status=0
ctest --test-dir build-asan --output-on-failure --parallel "$jobs" || status=1
reports=$(find "$logs" -type f | wc -l)
if [ "$reports" -ne 0 ]; then
  echo "sanitize: $reports sanitizer report(s):" >&2
  for f in "$logs"/*; do
    echo "--- $f" >&2
    head -60 "$f" >&2
  done
  status=1
fi
[ "$status" -eq 0 ] && echo "sanitize: all tests pass with zero ASan/UBSan/LSan reports"
exit "$status"
