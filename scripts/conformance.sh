#!/usr/bin/env bash
# ONNX backend node tests in the source phase (test/conformance/run_node_tests.py): every node
# test at default-domain opsets 13-23 whose ops are all in the runner's scope is compiled to
# CUDA source with build/bin/sinter. Refusals are expected while the op coverage grows; the
# step fails when fewer than SINTER_CONFORMANCE_MIN_PASS tests reach source (the floor: raise it
# when coverage grows). onnx and numpy are pinned and go to a venv in build/conformance-venv.
# Results: build/conformance/summary.json, build/conformance/skipped.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
onnx_version=1.23.2
numpy_version=2.4.6
min_pass="${SINTER_CONFORMANCE_MIN_PASS:-673}"
venv=build/conformance-venv

if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  # Debian splits the venv module out of python3 (as scripts/install-deps.sh installs packages).
  echo "sinter: installing python3-venv"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-venv >/dev/null
fi
if ! "$venv/bin/python" -c "import numpy, onnx; assert onnx.__version__ == '$onnx_version'" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "onnx==$onnx_version" "numpy==$numpy_version"
fi
"$venv/bin/python" test/conformance/run_node_tests.py --phase source --jobs "${SINTER_JOBS:-2}" \
  --work build/conformance --json build/conformance/summary.json --quiet \
  --allow-failures --min-pass "$min_pass"
