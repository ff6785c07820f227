#!/usr/bin/env bash
# The main job on the bundled example: compile the PEFT LoRA MLP fixture to one .so, describe
# it, and run it when a GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
out="${1:-build/lora_mlp_tiny.so}"
build/bin/sinter compile examples/fixtures/lora_mlp_tiny.onnx -o "$out" --timing
build/bin/sinter inspect "$out"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  build/bin/sinter run "$out" --iterations 100
else
  echo "sinter: no GPU here; $out is ready to run on one (sinter run $out)"
fi
