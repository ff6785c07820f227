#!/bin/sh
# CPU tests of the sinter Python package (python/sinter) and of examples/export_llama.py
# --from-pretrained: plain unittest, no pytest. Uses $PYTHON (default python3). Tests whose
# packages (torch, transformers, onnxruntime, tokenizers, numpy) or tools (a C compiler for the
# stub model) are missing are skipped with the reason printed; none needs a GPU.
#
#   python/tests/run.sh                 PYTHON=/path/to/venv/bin/python python/tests/run.sh
set -eu
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" -m unittest discover -s tests -t . -v "$@"
