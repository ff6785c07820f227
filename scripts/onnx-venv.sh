# Sourced by scripts/conformance.sh and scripts/flag-matrix.sh: makes build/conformance-venv,
# a venv with pinned onnx, numpy and onnxruntime (the reference for node tests converted to
# older opsets), and sets $venv to it.
onnx_version=1.23.2
numpy_version=2.4.6
onnxruntime_version=1.32.0
venv=build/conformance-venv

source scripts/python-venv-module.sh
if ! "$venv/bin/python" -c "import numpy, onnx, onnxruntime
assert onnx.__version__ == '$onnx_version' and onnxruntime.__version__ == '$onnxruntime_version'" \
    2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "onnx==$onnx_version" \
    "numpy==$numpy_version" "onnxruntime==$onnxruntime_version"
fi
