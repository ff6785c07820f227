#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test:
#   1. lit + GoogleTest through ctest on the normal build (GPU tests skip with a reason where
#      no GPU is present), then the ONNX backend node tests compiled to source
#      (scripts/conformance.sh: at least a floor of them must reach source), and the flag
#      matrix: every committed model under every combination of compile flags
#      (scripts/flag-matrix.sh);
#   2. the same suite built with ASan + UBSan (scripts/sanitize.sh), zero reports allowed;
#   3. a libFuzzer smoke run of the importer, program-check, weights-loader and pipeline fuzzers
#      (scripts/fuzz-smoke.sh, 60 s each).
# `scripts/test.sh --quick` runs step 1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "${SINTER_JOBS:-2}"
scripts/conformance.sh
scripts/flag-matrix.sh
if [ "${1:-}" != "--quick" ]; then
  scripts/sanitize.sh
  scripts/fuzz-smoke.sh "${SINTER_FUZZ_SECONDS:-60}"
fi
