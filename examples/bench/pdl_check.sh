#!/usr/bin/env bash
# Programmatic dependent launch (PDL) check on the GPU machine, in one command:
#
#   examples/bench/pdl_check.sh MODEL.so[@WEIGHTS.safetensors] ...
#
# 1. The runtime unit tests, GPU ones included (PDL: a 32-kernel dependent chain in direct and
#    graph mode with PDL on and off; sinter run --pdl), when build-rt/unit is carried.
# 2. For every model: host_overhead --pdl both (direct and graph, SINTER_PDL=1 and 0: host us
#    per call and per launch, GPU ms per call over 100 back-to-back calls, outputs compared bit
#    for bit across the four configurations), then `sinter-run --pdl on|off --mode direct|graph`
#    (ms per call as `sinter run` reports it).
# 3. The host-overhead benchmark re-run on host_overhead_model.so (32 tiny kernels; default
#    settings, PDL on), the numbers of examples/bench/host_overhead_RESULTS.md, next to the
#    driver's own floor on this machine (--raw: empty kernel through cuLaunchKernel[Ex]); then
#    the same model with PDL on and off.
#
# Binaries (built on the CPU machine, carried): HOST_OVERHEAD (default
# build-rt/unit/cpp_example/host_overhead), SINTER_RUN (build-rt/runtime/sinter-run), BENCH_SO
# (build-rt/unit/host_overhead_model.so). Models must be compiled with this runtime
# (libsinter_runtime.a rebuilt) for PDL and the driver launch path to be in them.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HO=${HOST_OVERHEAD:-$ROOT/build-rt/unit/cpp_example/host_overhead}
SR=${SINTER_RUN:-$ROOT/build-rt/runtime/sinter-run}
BENCH_SO=${BENCH_SO:-$ROOT/build-rt/unit/host_overhead_model.so}
UNIT=$ROOT/build-rt/unit
status=0

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'

if [ -x "$UNIT/sinter_runtime_tests" ]; then
  echo "== runtime unit tests on the GPU (PDL chain, test models, sinter run --pdl, ...)"
  SINTER_TEST_MODEL_SO=$UNIT/test_model.so SINTER_TEST_MODEL_EXT_SO=$UNIT/test_model_ext.so \
  SINTER_TEST_GEMM_MODEL_SO=$UNIT/gemm_model.so SINTER_TEST_HOST_OVERHEAD_SO=$UNIT/host_overhead_model.so \
    "$UNIT/sinter_runtime_tests" --gtest_brief=1 2>&1 \
    | grep -vE 'Skipped$|needs a CUDA device|a CUDA device is present' | tail -30
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

for spec in "$@"; do
  so=${spec%%@*}
  wopt=()
  [ "$spec" != "$so" ] && wopt=(--weights "${spec#*@}")
  echo "== $so"
  "$HO" "$so" "${wopt[@]}" --pdl both --gpu-iters 100 --batches 100 || status=1
  for pdl in on off; do
    for mode in direct graph; do
      "$SR" "$so" "${wopt[@]}" --mode "$mode" --pdl "$pdl" --iterations 100 --warmup 20 \
        | grep '^mode ' | sed 's/^/  sinter run: /' || status=1
    done
  done
done

echo "== host-overhead benchmark: $(basename "$BENCH_SO")"
"$HO" "$BENCH_SO" --raw || status=1
"$HO" "$BENCH_SO" --pdl both --gpu-iters 100 || status=1
exit $status
