#!/usr/bin/env bash
# The flag matrix (test/flag_matrix/run_flag_matrix.py): every committed model compiled to
# source with build/bin/sinter under every combination of the compile flags; each compile must
# succeed or fail with one `sinter: error:` line. Needs a build (scripts/build.sh).
#
# Usage: scripts/flag-matrix.sh [run_flag_matrix.py options, e.g. --filter lora]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/onnx-venv.sh
"$venv/bin/python" test/flag_matrix/run_flag_matrix.py --sinter build/bin/sinter \
  --jobs "${SINTER_JOBS:-2}" "$@"
