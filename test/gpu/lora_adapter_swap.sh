#!/usr/bin/env bash
# GPU test (issue 24): a Llama with a PEFT LoRA adapter on q_proj, v_proj and down_proj
# (examples/fixtures/llama_tiny_lora_{a,b}: one base model, adapters of seeds 100 and 101),
# compiled with the adapter merged (default) and unmerged (--no-merge-lora), each with
# --weights=external:
#   1. adapter A's library with its own weights matches PyTorch with adapter A;
#   2. adapter A's library with adapter B's weights file (--allow-new-weights, no recompile)
#      matches PyTorch with adapter B.
# Also the embedded-weights libraries of A in both modes. Needs nvcc, torch and a GPU.
#
#   test/gpu/lora_adapter_swap.sh [SINTER]     (carry build/bin/sinter, build/lib, build/share)
set -euo pipefail
cd "$(dirname "$0")/../.."
sinter=${1:-build/bin/sinter}
# ctest runs this everywhere (label gpu): exit 77 (skipped) where it cannot run.
if ! python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "lora-swap: skipped: needs torch with a CUDA device"
  exit 77
fi
work=${WORK:-/tmp/lora-swap}
rm -rf "$work" && mkdir -p "$work"
fixtures=examples/fixtures
status=0
check() { # LABEL SO STEM [check_fixture options]
  local label=$1
  shift
  if python3 examples/bench/check_fixture.py "$@"; then
    echo "lora-swap: PASS $label"
  else
    echo "lora-swap: FAIL $label"
    status=1
  fi
}
for mode in merged unmerged; do
  flag=()
  [ "$mode" = unmerged ] && flag=(--no-merge-lora)
  for adapter in a b; do
    "$sinter" compile "$fixtures/llama_tiny_lora_$adapter.onnx" "${flag[@]}" --weights=external \
      -o "$work/${mode}_$adapter.so"
  done
  "$sinter" compile "$fixtures/llama_tiny_lora_a.onnx" "${flag[@]}" -o "$work/${mode}_a_embedded.so"
  check "$mode: adapter A, embedded weights" "$work/${mode}_a_embedded.so" "$fixtures/llama_tiny_lora_a"
  check "$mode: adapter A, its weights file" "$work/${mode}_a.so" "$fixtures/llama_tiny_lora_a"
  check "$mode: adapter A's library, adapter B's weights file" "$work/${mode}_a.so" \
    "$fixtures/llama_tiny_lora_b" --weights "$work/${mode}_b.safetensors" --allow-new-weights
  # Without --allow-new-weights the library must refuse B's values.
  if python3 examples/bench/check_fixture.py "$work/${mode}_a.so" "$fixtures/llama_tiny_lora_b" \
      --weights "$work/${mode}_b.safetensors" >"$work/refuse.log" 2>&1; then
    echo "lora-swap: FAIL $mode: adapter B's weights were accepted without --allow-new-weights"
    status=1
  else
    echo "lora-swap: PASS $mode: adapter B's weights refused without --allow-new-weights ($(grep -o 'SINTER_[A-Z_]*' "$work/refuse.log" | head -1))"
  fi
done
[ $status -eq 0 ] && echo "lora-swap: all passed" || echo "lora-swap: FAILED"
exit $status
