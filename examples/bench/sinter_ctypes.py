"""Compatibility shim: the ctypes binding now lives in the `sinter` Python package
(python/sinter, `pip install ./python`). Existing scripts keep importing sinter_ctypes: this
puts <repo>/python first on sys.path and re-exports everything of sinter._ctypes_api (the
private helpers too) and the package's public names (Model, Context, SinterError, ...)."""
import os
import sys

_PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "python")
if _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)

from sinter import *  # noqa: E402,F401,F403
from sinter import _ctypes_api  # noqa: E402

globals().update({k: v for k, v in vars(_ctypes_api).items() if not k.startswith("__")})
