#!/usr/bin/env bash
# The install works like a tool's: `cmake --install BUILD --prefix P` into a fresh prefix, then
#  1. the installed compiler takes every resource (targets, headers, kernels, runtime library)
#     from P (its --version lists them), so it keeps working with the build tree deleted;
#  2. it compiles a bundled fixture to a .so with --sample;
#  3. examples/cpp configures against the installed CMake package (find_package(Sinter
#     CONFIG), no path into the checkout) and its programs build.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

version=$("$prefix/bin/sinter" --version)
echo "$version"
for what in targets headers kernels runtime; do
  path=$(printf '%s\n' "$version" | sed -n "s/^  $what: //p")
  case "$path" in
    "$prefix"/*) [ -e "$path" ] || { echo "FAIL: $what at $path does not exist"; exit 1; } ;;
    *) echo "FAIL: the installed compiler takes its $what from $path, outside $prefix"; exit 1 ;;
  esac
done
for f in bin/sinter bin/sinter-run lib/libsinter_runtime.a include/sinter/sinter.h \
         include/sinter/sinter.hpp include/sinter/generator.hpp share/sinter/sinter_exports.map \
         share/sinter/targets/h200.yaml share/sinter/kernels/launch_params.h \
         lib/cmake/Sinter/SinterConfig.cmake lib/cmake/Sinter/SinterConfigVersion.cmake; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f is not installed"; exit 1; }
done

fixtures="$source/examples/fixtures"
"$prefix/bin/sinter" compile --sample prefill="$fixtures/llama_tiny_kv_prefill.onnx" \
  decode="$fixtures/llama_tiny_kv_decode.onnx" -o "$work/llama.so"
"$prefix/bin/sinter" inspect "$work/llama.so" >"$work/inspect.txt"
grep -q 'output "next_token"' "$work/inspect.txt" ||
  { echo "FAIL: the installed compiler's library has no next_token output"; exit 1; }

cmake -S "$source/examples/cpp" -B "$work/examples" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
grep -q "Sinter runtime headers: installed package at $prefix" "$work/configure.log" ||
  { cat "$work/configure.log"; echo "FAIL: examples/cpp did not use the installed package"; exit 1; }
cmake --build "$work/examples" --target sinter_example generate -j 2 >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; exit 1; }
echo "PASS: installed to a fresh prefix, compiled a fixture, built examples/cpp against the package"
