#!/usr/bin/env bash
# Fetches the CUTLASS / CuTe C++ headers the runtime's split-TF32 GEMM compiles against
# (runtime/src/gemm_split_tf32.cu) from PyPI's nvidia-cutlass wheel, which ships them under
# cutlass_library/source/include, into .deps/cutlass-<version>/include. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
version=4.2.0.0
dest=.deps/cutlass-$version
[ -f "$dest/include/cutlass/gemm/device/gemm.h" ] && exit 0
source scripts/python-venv-module.sh
echo "sinter: fetching the CUTLASS $version headers (nvidia-cutlass wheel)"
[ -x .deps/pip-venv/bin/pip ] || python3 -m venv .deps/pip-venv
rm -rf .deps/wheel
.deps/pip-venv/bin/pip download -q --disable-pip-version-check --no-deps \
  "nvidia-cutlass==$version" -d .deps/wheel
python3 - "$dest" .deps/wheel/nvidia_cutlass-"$version"-*.whl <<'PY'
import os, sys, zipfile
dest, wheel = sys.argv[1], sys.argv[2]
prefix = "cutlass_library/source/include/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            out = os.path.join(dest, "include", name[len(prefix):])
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with z.open(name) as src, open(out, "wb") as dst:
                dst.write(src.read())
PY
rm -rf .deps/wheel
test -f "$dest/include/cutlass/gemm/device/gemm.h"
