#!/usr/bin/env bash
# Decode at each family's ~1-3B shape (issue 20's speed table), on the GPU machine:
# examples/bench/llama_decode.py at cache length L with random weights, per family. Exports and
# compiles run in parallel first (CPU work), then each family is timed alone. Writes
# OUT/<family>.log (the per-kernel table with --kernel-table) and prints each Sinter row.
#
#   examples/bench/family_decode.sh OUT [FAMILIES]
#
# Environment: SINTER (default build/bin/sinter), LAYERS (default 8: the ratio to the floor
# barely moves with the layer count, the export time does), L (default 1024), MODES (torch.compile
# modes, default none; "reduce-overhead" for the side-by-side table), ARGS (more llama_decode.py
# arguments, default "--kernel-table --skip-numerics"), REUSE=1 (keep the exports and libraries
# already in OUT: an A/B of compiler or kernel changes deletes OUT/*/*.so and runs again).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: family_decode.sh OUT [FAMILIES]}
families=${2:-"qwen25 qwen3 gemma2 olmo2 gpt2xl phi3 pythia phi2"}
sinter=${SINTER:-build/bin/sinter}
layers=${LAYERS:-8}
len=${L:-1024}
modes=${MODES:-none}
extra=${ARGS:-"--kernel-table --skip-numerics"}
reuse=${REUSE:+--reuse}
mkdir -p "$out"

# The shapes of Qwen2.5-1.5B, Qwen3-1.7B, Gemma 2 2B, OLMo 2 1B, GPT-2 XL, Phi-3-mini,
# Pythia-1.4B and Phi-2 (their Hugging Face configs), as export_llama.py flags.
declare -A shape=(
  [qwen25]="--arch qwen2 --hidden 1536 --intermediate 8960 --heads 12 --kv-heads 2 --head-dim 128 --vocab 151936 --rope-theta 1000000 --rope-scaling none --rms-norm-eps 1e-6 --max-position 32768"
  [qwen3]="--arch qwen3 --hidden 2048 --intermediate 6144 --heads 16 --kv-heads 8 --head-dim 128 --vocab 151936 --rope-theta 1000000 --rope-scaling none --rms-norm-eps 1e-6 --max-position 40960"
  [gemma2]="--arch gemma2 --hidden 2304 --intermediate 9216 --heads 8 --kv-heads 4 --head-dim 256 --vocab 256000 --rope-theta 10000 --rope-scaling none --rms-norm-eps 1e-6 --max-position 8192"
  [olmo2]="--arch olmo2 --hidden 2048 --intermediate 8192 --heads 16 --kv-heads 16 --head-dim 128 --vocab 100352 --rope-theta 500000 --rope-scaling none --rms-norm-eps 1e-6 --max-position 4096 --tie-embeddings false"
  [gpt2xl]="--arch gpt2 --hidden 1600 --intermediate 6400 --heads 25 --kv-heads 25 --head-dim 64 --vocab 50257 --max-position 1024"
  [phi3]="--arch phi3 --hidden 3072 --intermediate 8192 --heads 32 --kv-heads 32 --head-dim 96 --vocab 32064 --rope-theta 10000 --rope-scaling none --rms-norm-eps 1e-5 --max-position 4096 --tie-embeddings false"
  [pythia]="--arch gpt_neox --hidden 2048 --intermediate 8192 --heads 16 --kv-heads 16 --head-dim 128 --vocab 50304 --max-position 2048 --rope-theta 10000 --rope-scaling none --rms-norm-eps 1e-5"
  [phi2]="--arch phi --hidden 2560 --intermediate 10240 --heads 32 --kv-heads 32 --head-dim 80 --vocab 51200 --max-position 2048 --rope-theta 10000 --rope-scaling none --rms-norm-eps 1e-5"
)
# Gemma 2 exported with eager attention, which keeps the attention soft-cap that sdpa leaves out
# (not in the default list; its capped decode attention is raised to attention_decode
# {softcap}, sinter-raise-attention's raise-softcap).
shape[gemma2eager]="${shape[gemma2]} --attn eager"
for f in $families; do
  [ -n "${shape[$f]:-}" ] || { echo "unknown family '$f' (known: ${!shape[*]})" >&2; exit 2; }
done

run() { # family, then llama_decode.py arguments
  local f=$1; shift
  python3 examples/bench/llama_decode.py --sinter "$sinter" --out-dir "$out/$f" --layers "$layers" \
    --cache-lengths "$len" --export-args "${shape[$f]}" "$@"
}
for f in $families; do
  ( run "$f" $reuse --skip-timing --skip-numerics > "$out/${f}_build.log" 2>&1 || echo "$f: export or compile failed (see $out/${f}_build.log)" ) &
done
wait
for f in $families; do
  start=$(date +%s)
  # shellcheck disable=SC2086  # ARGS is a list of arguments
  run "$f" --reuse --compile-modes "$modes" $extra > "$out/$f.log" 2>&1
  echo "$f: rc=$? $(( $(date +%s) - start )) s"
  grep -E "^Sinter, CUDA graph|^PyTorch eager step as one|^torch.compile mode" "$out/$f.log"
done
