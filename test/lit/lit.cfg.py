import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Sinter"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "check_inspect.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.sinter_obj_root, "test", "lit")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.sinter_tools_dir, append_path=True)

config.substitutions.append(("%fixtures", config.sinter_fixtures_dir))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%sinter_bin", os.path.join(config.sinter_tools_dir, "sinter")))

# %limit_vm caps a test's virtual memory at 4 GiB, so that allocating a size a hostile file only
# declares fails the test. ASan reserves terabytes of address space, so a sanitized build caps
# each allocation instead (and ASan reports any attempt past it).
if getattr(config, "sinter_sanitizers", False):
    config.available_features.add("asan")
    config.substitutions.append(("%limit_vm", ""))
    asan = config.environment.get("ASAN_OPTIONS", "")
    config.environment["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "max_allocation_size_mb=4096"
else:
    config.substitutions.append(("%limit_vm", "ulimit -v 4194304;"))

tools = [ToolSubst("sinter-opt", unresolved="fatal"), ToolSubst("sinter", unresolved="ignore")]
llvm_config.add_tool_substitutions(tools, [config.sinter_tools_dir])

# GPU-only tests declare REQUIRES: gpu; tests of the no-GPU error paths UNSUPPORTED: gpu.
import shutil
import subprocess
try:
    has_gpu = shutil.which("nvidia-smi") is not None and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0
except Exception:
    has_gpu = False
if has_gpu:
    config.available_features.add("gpu")
if shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"):
    config.available_features.add("nvcc")
