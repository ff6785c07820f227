#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test (lit + GoogleTest) through ctest.
# GPU tests skip with a reason where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "${SINTER_JOBS:-2}"
