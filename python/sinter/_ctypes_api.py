"""ctypes binding for a Sinter model .so (C ABI 1.x).

    from sinter import Model
    model = Model("llama.so")                  # dlopen + sinter_model_load
    model = Model("llama.so", weights="llama.safetensors")   # external weights (ABI 1.1)
    model = Model("llama.so", weights="tuned.safetensors", allow_new_values=True)  # new checkpoint
    print(model.inputs, model.outputs)         # [TensorInfo(name, dtype, shape), ...]
    ctx = model.context("graph")               # or "direct"
    outs = ctx.run([x])                        # torch CUDA tensors in, new outputs back
    ctx.run({"x": x}, outputs=[y])             # or by name, into caller-owned outputs
    call = ctx.bind([x], [y]); call()          # prebuilt DLTensor arrays: lowest host overhead
    model.launches                             # [LaunchInfo(kind, label, sources), ...] (1.1)
    ctx.profile([x], [y])                      # GPU ms per launch, one synchronous run (1.1)
    ctx.close(); model.close()

Tensors in are torch tensors or any object with __dlpack__ (cupy, sinter.DeviceTensor, ...).
Outputs that run() allocates are torch CUDA tensors when torch is importable, else
sinter.DeviceTensor (torch.from_dlpack(out) works on either).

Entry points and state (ABI 1.2; a 1.1 library shows one entry, "main", and no state):

    model.entries                              # ["prefill", "decode"]
    model.entry("decode")                      # Entry(index, name, inputs, outputs, num_launches)
    model.state_bytes                          # bytes of KV cache etc. each context holds
    ctx.reset_state()                          # zero the context's state (on the stream)
    logits, = ctx.run_entry("prefill", [ids])  # like run(), for one entry
    call = ctx.bind_entry("decode", [tok, pos], [logits]); call()
    model.states                               # [TensorInfo] of the state regions (1.3)

Sampling inside the program (ABI 1.4, a library compiled with `sinter compile --sample`):

    model.has_sampler                          # True: entries have a next_token output
    ctx.set_sampling(temperature=0.7, top_k=50, top_p=0.9, repetition_penalty=1.1, seed=1)

For timing, use bind() with fixed buffers: in graph mode a changed I/O address costs a graph
update (cheap for kernel nodes, a re-capture for each GEMM touching it), and run() allocates
fresh outputs unless given some.

Every non-OK status raises SinterError carrying the status name and sinter_last_error().
Runs are enqueued on torch's current CUDA stream (or `stream=`: a torch/cupy stream or a
cudaStream_t as int; without torch the default is the legacy default stream) and are not
synchronized. torch is imported lazily, so loading and querying a model works without it.
"""

import ctypes
import math
import operator
import os
from typing import NamedTuple

from ._dlpack import (CODES as _CODES, DTYPES as _DTYPES, KDL_CPU, KDL_CUDA,  # noqa: F401
                      MAX_NDIM, DeviceTensor, DLDataType, DLDevice, DLManagedTensor, DLTensor)
from ._dlpack import dl_tensor as _dl_tensor_any
from ._errors import STATUS_NAMES, SinterArgumentError, SinterError  # noqa: F401

ABI_MAJOR = 1
MODE_DIRECT, MODE_GRAPH = 0, 1


class TensorDesc(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", DLDataType),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_NDIM),
    ]


class ContextOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("mode", ctypes.c_int)]


class ModelLoadOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("weights_path", ctypes.c_char_p),
                ("allow_new_values", ctypes.c_int)]


class SamplingParams(ctypes.Structure):
    """sinter_sampling_params (ABI 1.4); C layout: 4 bytes of padding before seed, 32 bytes."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("temperature", ctypes.c_float),
                ("top_k", ctypes.c_int32), ("top_p", ctypes.c_float),
                ("repetition_penalty", ctypes.c_float), ("seed", ctypes.c_uint64)]


def sampling_params(temperature=0.0, top_k=0, top_p=1.0, repetition_penalty=1.0, seed=0):
    """Checked SamplingParams; raises SinterArgumentError (a ValueError) naming the parameter
    for what the library refuses with SINTER_INVALID_ARGUMENT."""
    def real(name, v):
        if isinstance(v, bool):
            raise SinterArgumentError(f"{name} must be a number, got {v!r}")
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise SinterArgumentError(f"{name} must be a number, got {v!r}") from None
        if not math.isfinite(f):
            raise SinterArgumentError(f"{name} must be finite, got {v!r}")
        return f

    def integer(name, v, lo, hi):
        try:
            if isinstance(v, bool):
                raise TypeError
            i = operator.index(v)
        except TypeError:
            raise SinterArgumentError(f"{name} must be an integer, got {v!r}") from None
        if not lo <= i <= hi:
            raise SinterArgumentError(f"{name} must be in [{lo}, {hi}], got {i}")
        return i

    t = real("temperature", temperature)
    if t < 0:
        raise SinterArgumentError(f"temperature must be >= 0 (0: greedy), got {temperature!r}")
    k = integer("top_k", top_k, 0, 2**31 - 1)
    p = real("top_p", top_p)
    if not 0.0 < p <= 1.0:
        raise SinterArgumentError(f"top_p must be in (0, 1] (1: off), got {top_p!r}")
    r = real("repetition_penalty", repetition_penalty)
    if r <= 0:
        raise SinterArgumentError(f"repetition_penalty must be > 0 (1: off), got "
                                  f"{repetition_penalty!r}")
    sd = integer("seed", seed, 0, 2**64 - 1)
    return SamplingParams(ctypes.sizeof(SamplingParams), t, k, p, r, sd)


class LaunchInfoC(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_char_p), ("label", ctypes.c_char_p), ("sources", ctypes.c_char_p)]


class LaunchInfo(NamedTuple):
    kind: str  # "gemm" or "kernel"
    label: str
    sources: tuple  # ONNX node names


class TensorInfo(NamedTuple):
    name: str
    dtype: str  # torch dtype name: "float32", "bfloat16", "int64", ...
    shape: tuple


class Entry(NamedTuple):
    index: int
    name: str
    inputs: list  # [TensorInfo]
    outputs: list  # [TensorInfo]
    num_launches: int


_P = ctypes.c_void_p
_U32 = ctypes.c_uint32
_SIGNATURES = {
    "sinter_abi_version": (_U32, []),
    "sinter_last_error": (ctypes.c_char_p, []),
    "sinter_build_info": (ctypes.c_char_p, []),
    "sinter_model_load": (ctypes.c_int, [_U32, ctypes.POINTER(_P)]),
    "sinter_model_destroy": (ctypes.c_int, [_P]),
    "sinter_model_num_inputs": (_U32, [_P]),
    "sinter_model_num_outputs": (_U32, [_P]),
    "sinter_model_num_launches": (_U32, [_P]),
    "sinter_model_arena_bytes": (ctypes.c_uint64, [_P]),
    "sinter_model_input_info": (ctypes.c_int, [_P, _U32, ctypes.POINTER(TensorDesc)]),
    "sinter_model_output_info": (ctypes.c_int, [_P, _U32, ctypes.POINTER(TensorDesc)]),
    "sinter_context_create": (ctypes.c_int, [_P, ctypes.POINTER(ContextOptions), ctypes.POINTER(_P)]),
    "sinter_context_destroy": (ctypes.c_int, [_P]),
    "sinter_run": (ctypes.c_int, [_P, ctypes.POINTER(DLTensor), _U32, ctypes.POINTER(DLTensor), _U32, _P]),
}


# ABI 1.1 to 1.4 additions: bound when present, so 1.0 libraries still load.
_OPTIONAL = {
    # 1.4: sampling in the program
    "sinter_model_has_sampler": (ctypes.c_int, [_P]),
    "sinter_context_set_sampling": (ctypes.c_int, [_P, ctypes.POINTER(SamplingParams), _P]),
    # 1.3: state regions
    "sinter_model_num_states": (_U32, [_P]),
    "sinter_model_state_info": (ctypes.c_int, [_P, _U32, ctypes.POINTER(TensorDesc)]),
    # 1.2: entry points and context state
    "sinter_model_num_entries": (_U32, [_P]),
    "sinter_model_entry_name": (ctypes.c_char_p, [_P, _U32]),
    "sinter_model_find_entry": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(_U32)]),
    "sinter_model_entry_num_inputs": (_U32, [_P, _U32]),
    "sinter_model_entry_num_outputs": (_U32, [_P, _U32]),
    "sinter_model_entry_input_info": (ctypes.c_int, [_P, _U32, _U32, ctypes.POINTER(TensorDesc)]),
    "sinter_model_entry_output_info": (ctypes.c_int, [_P, _U32, _U32, ctypes.POINTER(TensorDesc)]),
    "sinter_model_entry_num_launches": (_U32, [_P, _U32]),
    "sinter_model_state_bytes": (ctypes.c_uint64, [_P]),
    "sinter_run_entry": (ctypes.c_int, [_P, _U32, ctypes.POINTER(DLTensor), _U32, ctypes.POINTER(DLTensor), _U32,
                                        _P]),
    "sinter_context_reset_state": (ctypes.c_int, [_P, _P]),
    # 1.1
    "sinter_model_load_v2": (ctypes.c_int, [_U32, ctypes.POINTER(ModelLoadOptions), ctypes.POINTER(_P)]),
    "sinter_weights_external": (ctypes.c_int, []),
    "sinter_model_num_weights": (_U32, [_P]),
    "sinter_model_launch_info": (ctypes.c_int, [_P, _U32, ctypes.POINTER(LaunchInfoC)]),
    "sinter_context_profile": (ctypes.c_int, [_P, ctypes.POINTER(DLTensor), _U32, ctypes.POINTER(DLTensor), _U32,
                                              _P, ctypes.POINTER(ctypes.c_float), _U32]),
}


def _open(path):
    # RTLD_LOCAL: each model .so carries its own runtime; ctypes never dlcloses it.
    lib = ctypes.CDLL(os.path.abspath(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
    for name, (res, args) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise SinterError(5, f"'{path}' is not a sinter model library (no {name})") from None
        fn.restype, fn.argtypes = res, args
    for name, (res, args) in _OPTIONAL.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype, fn.argtypes = res, args
    return lib


def _need(lib, name, abi="1.1"):
    fn = getattr(lib, name, None)
    if fn is None:
        raise SinterError(5, f"{name} needs a library with sinter ABI {abi} or later")
    return fn


def _has(lib, name):
    return getattr(lib, name, None) is not None


class Model:
    """A loaded model: code and weights on the current CUDA device, shared by its contexts."""

    def __init__(self, path, weights=None, allow_new_values=False):
        """weights: a safetensors file (required for a library compiled with
        --weights=external); allow_new_values: accept a checkpoint whose values differ from
        those compiled (same names, dtypes, shapes)."""
        self.path = path
        self._lib = _open(path)
        abi = self._lib.sinter_abi_version()
        if abi >> 16 != ABI_MAJOR:
            raise SinterError(5, f"'{path}' has ABI {abi >> 16}.{abi & 0xFFFF}, need {ABI_MAJOR}.x")
        handle = _P()
        if weights is None:
            self._check(self._lib.sinter_model_load(ABI_MAJOR, ctypes.byref(handle)))
        else:
            opts = ModelLoadOptions(ctypes.sizeof(ModelLoadOptions), os.fsencode(weights), int(allow_new_values))
            load = _need(self._lib, "sinter_model_load_v2")
            self._check(load(ABI_MAJOR, ctypes.byref(opts), ctypes.byref(handle)))
        self._handle = handle
        self.inputs = [self._info(self._lib.sinter_model_input_info, i)
                       for i in range(self._lib.sinter_model_num_inputs(handle))]
        self.outputs = [self._info(self._lib.sinter_model_output_info, i)
                        for i in range(self._lib.sinter_model_num_outputs(handle))]
        self._entries = self._load_entries()

    def _load_entries(self):
        lib, h = self._lib, self._handle
        if not _has(lib, "sinter_model_num_entries"):  # ABI 1.0/1.1: one entry
            return [Entry(0, "main", self.inputs, self.outputs, lib.sinter_model_num_launches(h))]
        entries = []
        for e in range(lib.sinter_model_num_entries(h)):
            name = lib.sinter_model_entry_name(h, e)
            if name is None:
                self._check(8)
            ins = [self._entry_info(lib.sinter_model_entry_input_info, e, i)
                   for i in range(lib.sinter_model_entry_num_inputs(h, e))]
            outs = [self._entry_info(lib.sinter_model_entry_output_info, e, i)
                    for i in range(lib.sinter_model_entry_num_outputs(h, e))]
            entries.append(Entry(e, name.decode(), ins, outs, lib.sinter_model_entry_num_launches(h, e)))
        return entries

    def _check(self, status):
        if status != 0:
            raise SinterError(status, self._lib.sinter_last_error().decode(errors="replace"))

    @staticmethod
    def _desc(d):
        key = (d.dtype.code, d.dtype.bits)
        return TensorInfo(d.name.decode(), _DTYPES.get(key, f"dl{key}"), tuple(d.shape[: d.ndim]))

    def _info(self, fn, index):
        d = TensorDesc()
        self._check(fn(self._handle, index, ctypes.byref(d)))
        return self._desc(d)

    def _entry_info(self, fn, entry, index):
        d = TensorDesc()
        self._check(fn(self._handle, entry, index, ctypes.byref(d)))
        return self._desc(d)

    @property
    def entries(self):
        """Entry point names, in index order ("main" alone for an ABI 1.0/1.1 library)."""
        return [e.name for e in self._entries]

    def entry(self, entry):
        """Entry(index, name, inputs, outputs, num_launches) by name or index."""
        if isinstance(entry, Entry):
            entry = entry.index
        if isinstance(entry, str):
            for e in self._entries:
                if e.name == entry:
                    return e
            raise SinterError(1, f"no entry '{entry}' (entries: {', '.join(self.entries)})")
        if not 0 <= int(entry) < len(self._entries):
            raise SinterError(1, f"entry index {entry} out of range ({len(self._entries)} entries)")
        return self._entries[int(entry)]

    @property
    def states(self):
        """The state regions, [TensorInfo(name, dtype, shape)] (ABI 1.3; [] before): one per KV
        cache, named after the input it replaces ("past_key_0": [batch, kv heads, cache length,
        head dim]), and compiler scratch (names starting with '.')."""
        lib = self._lib
        if not _has(lib, "sinter_model_num_states"):
            return []
        return [self._info(lib.sinter_model_state_info, i)
                for i in range(lib.sinter_model_num_states(self._handle))]

    @property
    def has_sampler(self):
        """True for a library compiled with --sample (ABI 1.4): entries with logits and
        input_ids have a next_token output drawn in the program."""
        fn = getattr(self._lib, "sinter_model_has_sampler", None)
        return bool(fn(self._handle)) if fn is not None else False

    @property
    def state_bytes(self):
        """Bytes of state (KV caches) each context holds; 0 without state or before ABI 1.2."""
        fn = getattr(self._lib, "sinter_model_state_bytes", None)
        return int(fn(self._handle)) if fn is not None else 0

    @property
    def abi_version(self):
        abi = self._lib.sinter_abi_version()
        return (abi >> 16, abi & 0xFFFF)

    @property
    def num_launches(self):
        return self._lib.sinter_model_num_launches(self._handle)

    @property
    def weights_external(self):
        fn = getattr(self._lib, "sinter_weights_external", None)
        return bool(fn()) if fn is not None else False

    @property
    def launches(self):
        fn = _need(self._lib, "sinter_model_launch_info")
        out = []
        for i in range(self.num_launches):
            li = LaunchInfoC()
            self._check(fn(self._handle, i, ctypes.byref(li)))
            src = li.sources.decode()
            out.append(LaunchInfo(li.kind.decode(), li.label.decode(), tuple(src.split(",")) if src else ()))
        return out

    @property
    def arena_bytes(self):
        return self._lib.sinter_model_arena_bytes(self._handle)

    @property
    def build_info(self):
        return self._lib.sinter_build_info().decode()

    def context(self, mode="direct"):
        return Context(self, mode)

    def close(self):
        """Frees the model; raises SinterError (SINTER_BUSY) while contexts are open."""
        if self._handle:
            self._check(self._lib.sinter_model_destroy(self._handle))
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _dl_tensor(t, keep, stream=None):
    """DLTensor describing `t` (a torch tensor, DeviceTensor or any object with __dlpack__);
    `keep` collects what must outlive it (ctypes arrays, DLPack capsules)."""
    return _dl_tensor_any(t, keep, stream)


_TORCH = []


def _torch():
    """torch, or None when it is not importable (imported at the first need)."""
    if not _TORCH:
        try:
            import torch
        except ImportError:
            torch = None
        _TORCH.append(torch)
    return _TORCH[0]


def _stream_handle(stream):
    """cudaStream_t (int) of `stream`: None = torch's current stream (the legacy default stream
    0 without torch), a torch.cuda.Stream, a cupy stream (.ptr), or an int handle."""
    if stream is None:
        torch = _torch()
        return torch.cuda.current_stream().cuda_stream if torch is not None else 0
    for attr in ("cuda_stream", "ptr", "handle"):
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h
    return int(stream or 0)


class Context:
    """Activation arena + prebuilt launches (+ CUDA graph in "graph" mode). One thread at a time."""

    def __init__(self, model, mode="direct"):
        if mode not in ("direct", "graph"):
            raise ValueError(f"mode must be 'direct' or 'graph', got {mode!r}")
        self.model = model  # keeps the model alive
        self.mode = mode
        opts = ContextOptions(ctypes.sizeof(ContextOptions), MODE_GRAPH if mode == "graph" else MODE_DIRECT)
        handle = _P()
        model._check(model._lib.sinter_context_create(model._handle, ctypes.byref(opts), ctypes.byref(handle)))
        self._handle = handle

    def _order(self, tensors, infos, what):
        if isinstance(tensors, dict):
            missing = [i.name for i in infos if i.name not in tensors]
            if missing:
                raise ValueError(f"missing {what}: {missing}")
            return [tensors[i.name] for i in infos]
        return list(tensors)

    def new_outputs(self, entry=None):
        """Fresh CUDA tensors for the outputs of `entry` (default: entry 0 / the model's):
        torch tensors when torch is importable, else sinter.DeviceTensor."""
        infos = self.model.outputs if entry is None else self.model.entry(entry).outputs
        torch = _torch()
        if torch is None:
            return [DeviceTensor.empty(o.shape, o.dtype) for o in infos]
        return [torch.empty(o.shape, dtype=getattr(torch, o.dtype), device="cuda") for o in infos]

    def bind(self, inputs, outputs, stream=None):
        """Returns a no-argument callable that runs with prebuilt DLTensor arrays."""
        return self._bind(None, inputs, outputs, stream)

    def bind_entry(self, entry, inputs, outputs=None, stream=None):
        """bind() for entry `entry` (name or index); outputs allocated when not given (then
        reachable as call.outputs)."""
        return self._bind(self.model.entry(entry), inputs, outputs, stream)

    def _bind(self, entry, inputs, outputs, stream):
        in_infos = self.model.inputs if entry is None else entry.inputs
        out_infos = self.model.outputs if entry is None else entry.outputs
        if outputs is None:
            outputs = self.new_outputs(None if entry is None else entry.index)
        inputs = self._order(inputs, in_infos, "inputs")
        outputs = self._order(outputs, out_infos, "outputs")
        handle_int = _stream_handle(stream)
        keep = [inputs, outputs]
        ins = (DLTensor * max(len(inputs), 1))(*[_dl_tensor(t, keep, handle_int) for t in inputs])
        outs = (DLTensor * max(len(outputs), 1))(*[_dl_tensor(t, keep, handle_int)
                                                   for t in outputs])
        for t in outputs:
            if isinstance(t, DeviceTensor):
                t._stream = handle_int  # its data is written there (ordering for __dlpack__)
        stream = _P(handle_int)
        check, handle = self.model._check, self._handle
        n_in, n_out = len(inputs), len(outputs)
        lib = self.model._lib
        if entry is None or not _has(lib, "sinter_run_entry"):
            # ABI 1.0/1.1 (entry 0 is the only one) or the plain single-entry call.
            run = lib.sinter_run

            def call():
                check(run(handle, ins, n_in, outs, n_out, stream))
        else:
            run_entry, index = lib.sinter_run_entry, entry.index

            def call():
                check(run_entry(handle, index, ins, n_in, outs, n_out, stream))

        call.keep = (keep, ins, outs)
        call.outputs = outputs
        return call

    def run_entry(self, entry, inputs, outputs=None, stream=None):
        """run() for entry `entry` (name or index): enqueues one run, returns the outputs."""
        call = self.bind_entry(entry, inputs, outputs, stream)
        call()
        return call.outputs

    def reset_state(self, stream=None):
        """Zeroes the context's state (every KV cache) on `stream` (default: torch's current
        stream), ordered with the runs queued there. A no-op for a library without state."""
        fn = getattr(self.model._lib, "sinter_context_reset_state", None)
        if fn is None:
            return
        self.model._check(fn(self._handle, _P(_stream_handle(stream))))

    def set_sampling(self, temperature=0.0, top_k=0, top_p=1.0, repetition_penalty=1.0, seed=0,
                     stream=None):
        """Sets the in-program sampler's parameters (ABI 1.4, a library compiled with --sample)
        on `stream`, ordered with the runs queued there; restarts its draw counter. temperature
        0 is greedy; top_k 0 and top_p 1 are off; repetition_penalty 1 is off; the same seed
        gives the same tokens in direct and graph mode. Raises SinterArgumentError (a
        ValueError) for a value the library would refuse."""
        params = sampling_params(temperature, top_k, top_p, repetition_penalty, seed)
        fn = _need(self.model._lib, "sinter_context_set_sampling", "1.4")
        self.model._check(fn(self._handle, ctypes.byref(params), _P(_stream_handle(stream))))

    def profile(self, inputs, outputs=None, stream=None):
        """One synchronous run with events between launches: GPU milliseconds per launch."""
        outputs = self.new_outputs() if outputs is None else self._order(outputs, self.model.outputs, "outputs")
        inputs = self._order(inputs, self.model.inputs, "inputs")
        stream = _stream_handle(stream)
        keep = [inputs, outputs]
        ins = (DLTensor * max(len(inputs), 1))(*[_dl_tensor(t, keep, stream) for t in inputs])
        outs = (DLTensor * max(len(outputs), 1))(*[_dl_tensor(t, keep, stream) for t in outputs])
        n = self.model.num_launches
        ms = (ctypes.c_float * max(n, 1))()
        fn = _need(self.model._lib, "sinter_context_profile")
        self.model._check(fn(self._handle, ins, len(inputs), outs, len(outputs), _P(stream), ms, n))
        return list(ms[:n])

    def run(self, inputs, outputs=None, stream=None):
        """Enqueues one run; returns the output tensors (allocated when not given)."""
        outputs = self.new_outputs() if outputs is None else self._order(outputs, self.model.outputs, "outputs")
        self.bind(inputs, outputs, stream)()
        return outputs

    def close(self):
        if self._handle:
            self.model._check(self.model._lib.sinter_context_destroy(self._handle))
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
