#!/usr/bin/env bash
# Exports the family matrix that families_check.sh compiles and checks on the GPU machine (issue
# 20): every --arch × dtype × batch as a 2-layer tiny model with its inputs, PyTorch's logits in
# the model's dtype and the float64 reference (export_llama.py --save-reference). Batches above 1
# are left-padded as in batched generation (sequence b has b masked leading positions). Runs on the
# build machine: it needs torch, transformers and onnxscript (PYTHON, default python3).
#
# With KV=1, exports prefill + decode graphs with a 32-entry KV cache instead (batch 1; every
# family), ARCH_DTYPE_kv_{prefill,decode}.onnx, checked against Hugging Face's own forward with
# a DynamicCache, and a chunk graph of CHUNK tokens (default 8; CHUNK=0: none),
# ARCH_DTYPE_kv_chunk.onnx, checked on two chunks after the prompt.
#
#   [KV=1] test/gpu/families_export.sh OUTDIR [ARCHS] [DTYPES] [BATCHES]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
archs=${2:-"llama mistral qwen2 qwen3 phi3 gemma gemma2 olmo2 gpt2 gpt_neox phi stablelm"}
dtypes=${3:-"bf16 f16 f32"}
batches=${4:-"1 4"}
python=${PYTHON:-python3}
mkdir -p "$out"
jobs=()
for arch in $archs; do
  for dtype in $dtypes; do
    for batch in $batches; do
      kv=2
      [ "$arch" = gpt2 ] || [ "$arch" = gpt_neox ] && kv=4  # no grouped-query attention
      jobs+=("$arch $dtype $batch $kv")
    done
  done
done
export_one() {
  local arch=$1 dtype=$2 batch=$3 kv=$4
  if [ "${KV:-0}" = 1 ]; then
    local stem="$out/${arch}_${dtype}_kv"
    [ "$batch" != 1 ] || [ -f "${stem}_decode.logits.npy" ] && return 0
    "$python" "$here/examples/export_llama.py" --arch "$arch" --dtype "$dtype" \
      --layers 2 --hidden 64 --intermediate 128 --heads 4 --kv-heads "$kv" --head-dim 16 \
      --vocab 256 --max-position 64 --seq 6 --kv-cache 32 --save-reference \
      --out "${stem}_prefill.onnx" --decode-out "${stem}_decode.onnx" \
      ${CHUNK:+--chunk "$CHUNK" --chunk-out "${stem}_chunk.onnx"} >"$stem.export.log" 2>&1 ||
      echo "export failed: $stem (see $stem.export.log)"
    return 0
  fi
  local stem="$out/${arch}_${dtype}_b${batch}" pad=none
  [ "$batch" -gt 1 ] && pad=left
  [ -f "$stem.logits_exact.npy" ] && return 0
  "$python" "$here/examples/export_llama.py" --arch "$arch" --dtype "$dtype" --batch "$batch" --pad $pad \
    --layers 2 --hidden 64 --intermediate 128 --heads 4 --kv-heads "$kv" --head-dim 16 \
    --vocab 256 --max-position 64 --seq 6 --save-reference --no-ort-check \
    --out "$stem.onnx" >"$stem.export.log" 2>&1 || echo "export failed: $stem (see $stem.export.log)"
}
export -f export_one
[ "${CHUNK:-8}" = 0 ] && CHUNK= || CHUNK=${CHUNK:-8}
export out here python KV CHUNK
printf '%s\n' "${jobs[@]}" | xargs -P "${JOBS:-2}" -L1 bash -c 'export_one "$@"' _
ls "$out"/*.onnx | wc -l
