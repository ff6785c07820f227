#!/usr/bin/env bash
# Installs the Debian packages Sinter builds against (LLVM/MLIR 22, protobuf, yaml-cpp, CLI11,
# GoogleTest, ninja, header-only nlohmann-json and xxHash). The CUDA toolkit is expected at
# /usr/local/cuda (or $CUDA_HOME).
# --fuzz adds clang-22 with libFuzzer for scripts/fuzz-smoke.sh.
set -euo pipefail
packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools ninja-build cmake g++
          libgtest-dev libcli11-dev libyaml-cpp-dev libprotobuf-dev protobuf-compiler libonnx-dev
          libzstd-dev libdlpack-dev nlohmann-json3-dev libxxhash-dev python3)
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang-22 libclang-rt-22-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "sinter: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$cuda_home/bin/nvcc" ]; then
  echo "sinter: the CUDA toolkit (nvcc, cuBLASLt) is needed at $cuda_home; set CUDA_HOME" >&2
  exit 1
fi
"$(dirname "$0")/cutlass-headers.sh"
