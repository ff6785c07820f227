"""Sinter: run models compiled by `sinter compile` (a .so with the C ABI in
runtime/include/sinter/sinter.h) from Python, through ctypes.

    import sinter
    model = sinter.Model("model.so")            # weights="w.safetensors" for --weights=external
    ctx = model.context("graph")                # or "direct"
    outs = ctx.run([x])                         # tensors in: torch, cupy, any __dlpack__ object
    gen = sinter.Generator("llama.so")          # a library compiled with --sample
    print(gen.generate("Once upon a time", max_new_tokens=32))

No dependencies at install; torch, numpy and tokenizers are used when present (imported
lazily). Without torch, outputs are sinter.DeviceTensor (DLPack, cudaMalloc'd through
libcudart found by ctypes).
"""

from ._ctypes_api import (ABI_MAJOR, MODE_DIRECT, MODE_GRAPH, Context, Entry,  # noqa: F401
                          LaunchInfo, Model, SamplingParams, TensorInfo, sampling_params)
from ._dlpack import DeviceTensor  # noqa: F401
from ._errors import STATUS_NAMES, SinterArgumentError, SinterError  # noqa: F401
from .generate import GenerationStats, Generator, load_tokenizer, plan_prompt  # noqa: F401

__version__ = "0.1.0"

__all__ = ["ABI_MAJOR", "MODE_DIRECT", "MODE_GRAPH", "Context", "DeviceTensor", "Entry",
           "GenerationStats", "Generator", "LaunchInfo", "Model", "STATUS_NAMES",
           "SamplingParams", "SinterArgumentError", "SinterError", "TensorInfo",
           "load_tokenizer", "plan_prompt", "sampling_params"]
