#!/usr/bin/env bash
# ONNX backend node tests in the source phase (test/conformance/run_node_tests.py): every node
# test at default-domain opsets 7-28 whose ops are all in the runner's scope is compiled to
# CUDA source with build/bin/sinter. Refusals are expected while the op coverage grows; the
# step fails when fewer than SINTER_CONFORMANCE_MIN_PASS tests reach source (the floor: raise it
# when coverage grows). onnx and numpy are pinned and go to a venv in build/conformance-venv.
# Results: build/conformance/summary.json, build/conformance/skipped.txt. Then Sinter's own node
# tests (test/conformance/make_extra_node_tests.py) in the same phase: every one must compile.
# Last, both sets in the fold phase (every input an initializer; the host folds each import
# and the folded outputs must equal the expected ones): no mismatch allowed, at least
# SINTER_FOLD_MIN_PASS of the suite's tests fold, and the extra tests' do not fail. Then the
# suite's tests converted down to opsets 11 and 9 (onnx's version converter; onnxruntime's
# outputs on the converted models are the expected ones), in the fold phase: the opset 7-12
# import path (LegacyForms.cpp), no mismatch allowed.
set -euo pipefail
cd "$(dirname "$0")/.."
min_pass="${SINTER_CONFORMANCE_MIN_PASS:-1572}"
source scripts/onnx-venv.sh
"$venv/bin/python" test/conformance/run_node_tests.py --phase source --jobs "${SINTER_JOBS:-2}" \
  --work build/conformance --json build/conformance/summary.json --quiet \
  --allow-failures --min-pass "$min_pass"
rm -rf build/conformance-extra
"$venv/bin/python" test/conformance/make_extra_node_tests.py build/conformance-extra/cases
"$venv/bin/python" test/conformance/run_node_tests.py --phase source --jobs "${SINTER_JOBS:-2}" \
  --from-testdata build/conformance-extra/cases --work build/conformance-extra/work \
  --json build/conformance-extra/summary.json --quiet \
  --min-pass "$(ls build/conformance-extra/cases/node | wc -l)"
"$venv/bin/python" test/conformance/run_node_tests.py --phase fold --jobs "${SINTER_JOBS:-2}" \
  --work build/conformance-fold --json build/conformance-fold/summary.json --quiet \
  --allow-failures --min-pass "${SINTER_FOLD_MIN_PASS:-1554}"
no_mismatch() {
  "$venv/bin/python" - "$1" <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
bad = sorted(n for n, r in tests.items() if r["status"] == "FAIL")
for n in bad:
    print(f"fold mismatch: {n}: {tests[n]['detail']}")
sys.exit(1 if bad else 0)
PY
}
no_mismatch build/conformance-fold/summary.json
"$venv/bin/python" test/conformance/run_node_tests.py --phase fold --jobs "${SINTER_JOBS:-2}" \
  --from-testdata build/conformance-extra/cases --work build/conformance-extra/fold \
  --json build/conformance-extra/fold.json --quiet
# The mixture-of-experts cases again with their NonZero results padded although the host knows
# them (every input is an initializer here): the host folds the padded form (gathers clamp the
# padding, scatters skip it) and it must still give onnxruntime's outputs.
SINTER_PAD_CONSTANT_NONZERO=1 "$venv/bin/python" test/conformance/run_node_tests.py --phase fold \
  --jobs "${SINTER_JOBS:-2}" --from-testdata build/conformance-extra/cases --filter moe_routing_padded \
  --work build/conformance-extra/fold-padded --json build/conformance-extra/fold-padded.json \
  --quiet --min-pass 2
for opset in 11 9; do
  floor=$([ "$opset" = 11 ] && echo 170 || echo 100)
  "$venv/bin/python" test/conformance/run_node_tests.py --phase fold --jobs "${SINTER_JOBS:-2}" \
    --downgrade-to "$opset" --work "build/conformance-opset$opset" \
    --json "build/conformance-opset$opset/summary.json" --quiet --allow-failures --min-pass "$floor"
  no_mismatch "build/conformance-opset$opset/summary.json"
done
