#!/usr/bin/env bash
# Configures and builds Sinter into build/ (two jobs: the machines have two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
cmake -S . -B build -G Ninja -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DSINTER_CUDA_HOME="$cuda_home" ${SINTER_CMAKE_ARGS:-} >/dev/null
cmake --build build --parallel "${SINTER_JOBS:-2}"
