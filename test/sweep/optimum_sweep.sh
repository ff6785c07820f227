#!/usr/bin/env bash
# Models users export with the ecosystem's standard exporter: a tiny random checkpoint per
# architecture (tiny_models.py), exported by `optimum-cli export onnx` with the task's default
# settings (fp32, dynamic axes), each .onnx compiled by Sinter with every symbolic dimension
# bound (--dim; batch 1, sequences of 8, images 32x32, audio 400 samples). Prints one line per
# exported file: OK with the launch count, or FAIL with the compiler's message. Compile only
# (no GPU). Numerics: optimum_numerics.py on the GPU machine, fold_numerics.py here.
#
#   OPTIMUM_PYTHON=venv/bin/python test/sweep/optimum_sweep.sh OUT [SINTER] [ARCH:TASK ...]
#
# OPTIMUM_PYTHON: a Python with optimum-onnx, transformers < 4.58 and torch.
# COMPILE_TO=source|launch|graph stops each compile at that phase (default binary: nvcc, the
# slow part on a small machine). ARCH: a hand-written tiny configuration of tiny_models.py or any
# Hugging Face model type (its default configuration shrunk); TASK: optimum-cli's --task.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
sinter=${2:-$here/../../build/bin/sinter}
shift $(( $# > 1 ? 2 : 1 ))
py=${OPTIMUM_PYTHON:-python3}
compile_to=${COMPILE_TO:-binary}
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(bert:feature-extraction roberta:feature-extraction
  distilbert:feature-extraction vit:image-classification deit:image-classification
  resnet:image-classification convnext:image-classification mobilenet_v2:image-classification
  wav2vec2:automatic-speech-recognition whisper:automatic-speech-recognition
  t5:text2text-generation gpt2:text-generation mistral:text-generation phi3:text-generation
  gemma:text-generation falcon:text-generation opt:text-generation bloom:text-generation
  clip:zero-shot-image-classification)
optimum_cli=$(dirname "$py")/optimum-cli
mkdir -p "$out"
status=0
for spec in "${specs[@]}"; do
  arch=${spec%%:*} task=${spec#*:} dir=$out/${arch}_${task}
  if [ ! -d "$dir/ckpt" ] && ! "$py" "$here/tiny_models.py" "$arch" "$dir/ckpt" "$task" >"$dir.make.log" 2>&1; then
    echo "$arch: FAIL making the checkpoint ($(tail -1 "$dir.make.log"))"; status=1; continue
  fi
  if [ ! -d "$dir/onnx" ] && ! "$optimum_cli" export onnx --model "$dir/ckpt" --task "$task" \
      "$dir/onnx" >"$dir.export.log" 2>&1; then
    echo "$arch: FAIL exporting ($(grep -iE 'error' "$dir.export.log" | tail -1 | cut -c1-200))"
    status=1; continue
  fi
  for f in "$dir"/onnx/*.onnx; do
    dims=$("$py" "$here/sweep_dims.py" "$f")
    so=${f%.onnx}.so
    if [ "$compile_to" != binary ]; then
      # shellcheck disable=SC2086
      if msg=$("$sinter" compile "$f" $dims --compile-to="$compile_to" -o "${f%.onnx}.$compile_to" 2>&1); then
        echo "$arch $(basename "$f"): OK ($compile_to)"
      else
        echo "$arch $(basename "$f"): FAIL ${msg:0:300}"; status=1
      fi
    # shellcheck disable=SC2086
    elif msg=$("$sinter" compile "$f" $dims -o "$so" 2>&1); then
      echo "$arch $(basename "$f"): OK, $("$sinter" inspect "$so" | grep -m1 launches)"
    else
      echo "$arch $(basename "$f"): FAIL ${msg:0:300}"; status=1
    fi
  done
done
exit $status
