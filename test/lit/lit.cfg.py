import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Sinter"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.sinter_obj_root, "test", "lit")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.sinter_tools_dir, append_path=True)

config.substitutions.append(("%fixtures", config.sinter_fixtures_dir))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

tools = [ToolSubst("sinter-opt", unresolved="fatal"), ToolSubst("sinter", unresolved="ignore")]
llvm_config.add_tool_substitutions(tools, [config.sinter_tools_dir])
