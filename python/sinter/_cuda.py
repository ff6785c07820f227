"""The few CUDA runtime calls the package makes itself (device buffers without torch, pinned
host staging, streams and events for generation), through ctypes on libcudart.

A compiled model carries its own (static) CUDA runtime; both talk to the same device through the
driver's primary context, so pointers and streams pass between them. libcudart is looked for in
this order: $SINTER_CUDART (a path), one already loaded into the process (by torch, cupy, ...),
$CUDA_HOME/lib64 (and $CUDA_PATH), /usr/local/cuda/lib64, the nvidia-cuda-runtime wheel
(site-packages/nvidia/*/lib), torch/lib, then the loader's own search.
"""

import ctypes
import glob
import os
import sys

from ._errors import SinterError

H2D, D2H, D2D = 1, 2, 3  # cudaMemcpyKind
_STREAM_NON_BLOCKING = 0x1
_EVENT_DISABLE_TIMING = 0x2
_HOST_ALLOC_DEFAULT = 0

_P = ctypes.c_void_p
_SZ = ctypes.c_size_t
_SIGNATURES = {
    "cudaGetErrorString": (ctypes.c_char_p, [ctypes.c_int]),
    "cudaGetDevice": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int)]),
    "cudaGetDeviceCount": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int)]),
    "cudaMalloc": (ctypes.c_int, [ctypes.POINTER(_P), _SZ]),
    "cudaFree": (ctypes.c_int, [_P]),
    "cudaHostAlloc": (ctypes.c_int, [ctypes.POINTER(_P), _SZ, ctypes.c_uint]),
    "cudaFreeHost": (ctypes.c_int, [_P]),
    "cudaMemcpy": (ctypes.c_int, [_P, _P, _SZ, ctypes.c_int]),
    "cudaMemcpyAsync": (ctypes.c_int, [_P, _P, _SZ, ctypes.c_int, _P]),
    "cudaStreamCreateWithFlags": (ctypes.c_int, [ctypes.POINTER(_P), ctypes.c_uint]),
    "cudaStreamDestroy": (ctypes.c_int, [_P]),
    "cudaStreamSynchronize": (ctypes.c_int, [_P]),
    "cudaStreamWaitEvent": (ctypes.c_int, [_P, _P, ctypes.c_uint]),
    "cudaEventCreateWithFlags": (ctypes.c_int, [ctypes.POINTER(_P), ctypes.c_uint]),
    "cudaEventRecord": (ctypes.c_int, [_P, _P]),
    "cudaEventSynchronize": (ctypes.c_int, [_P]),
    "cudaEventDestroy": (ctypes.c_int, [_P]),
}


def _loaded_cudart():
    """Path of a libcudart.so already mapped into this process, if any (Linux)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if line.strip() else ""
                if os.path.basename(path).startswith("libcudart.so"):
                    return path
    except OSError:
        pass
    return None


def candidates():
    """Paths and names tried for libcudart, in order."""
    out = []
    if os.environ.get("SINTER_CUDART"):
        out.append(os.environ["SINTER_CUDART"])
    loaded = _loaded_cudart()
    if loaded:
        out.append(loaded)
    dirs = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs += [os.path.join(os.environ[var], "lib64"), os.path.join(os.environ[var], "lib")]
    dirs.append("/usr/local/cuda/lib64")
    roots = []
    for p in sys.path:
        if p and os.path.isdir(os.path.join(p, "nvidia")):
            roots.append(p)
    for root in roots:
        dirs += sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib")))
    for p in sys.path:
        if p and os.path.isdir(os.path.join(p, "torch", "lib")):
            dirs.append(os.path.join(p, "torch", "lib"))
    for d in dirs:
        found = sorted(glob.glob(os.path.join(d, "libcudart.so*")), key=lambda s: (len(s), s))
        out += found
    out += ["libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"]
    seen, uniq = set(), []
    for c in out:
        if c not in seen:
            seen.add(c)
            uniq.append(c)
    return uniq


class CudaError(SinterError):
    def __init__(self, call, code, text):
        self.code = code
        super().__init__(4 if code == 2 else 3, f"{call} failed: {text} ({code})")


class CudaRuntime:
    """ctypes wrapper of libcudart: only what the package uses. Pointers and handles are ints."""

    def __init__(self, path=None):
        tried = []
        self.lib = None
        for c in ([path] if path else candidates()):
            try:
                self.lib = ctypes.CDLL(c)
                self.path = c
                break
            except OSError as e:
                tried.append(f"{c} ({str(e).split(':')[-1].strip()})")
        if self.lib is None:
            raise SinterError(2, "libcudart.so not found (tried " + ", ".join(tried[:8]) +
                              "); set CUDA_HOME, SINTER_CUDART, or pip install "
                              "nvidia-cuda-runtime")
        for name, (res, args) in _SIGNATURES.items():
            fn = getattr(self.lib, name)
            fn.restype, fn.argtypes = res, args

    def _check(self, call, code):
        if code != 0:
            text = self.lib.cudaGetErrorString(code)
            raise CudaError(call, code, text.decode(errors="replace") if text else "?")

    def device(self):
        d = ctypes.c_int()
        self._check("cudaGetDevice", self.lib.cudaGetDevice(ctypes.byref(d)))
        return d.value

    def device_count(self):
        n = ctypes.c_int()
        code = self.lib.cudaGetDeviceCount(ctypes.byref(n))
        return n.value if code == 0 else 0

    def malloc(self, nbytes):
        p = _P()
        self._check("cudaMalloc", self.lib.cudaMalloc(ctypes.byref(p), max(int(nbytes), 1)))
        return p.value

    def free(self, ptr):
        self._check("cudaFree", self.lib.cudaFree(_P(ptr)))

    def host_alloc(self, nbytes):
        p = _P()
        self._check("cudaHostAlloc", self.lib.cudaHostAlloc(ctypes.byref(p), max(int(nbytes), 1),
                                                            _HOST_ALLOC_DEFAULT))
        return p.value

    def free_host(self, ptr):
        self._check("cudaFreeHost", self.lib.cudaFreeHost(_P(ptr)))

    def memcpy(self, dst, src, nbytes, kind):
        self._check("cudaMemcpy", self.lib.cudaMemcpy(_P(dst), _P(src), nbytes, kind))

    def memcpy_async(self, dst, src, nbytes, kind, stream):
        self._check("cudaMemcpyAsync",
                    self.lib.cudaMemcpyAsync(_P(dst), _P(src), nbytes, kind, _P(stream)))

    def stream_create(self):
        s = _P()
        self._check("cudaStreamCreateWithFlags",
                    self.lib.cudaStreamCreateWithFlags(ctypes.byref(s), _STREAM_NON_BLOCKING))
        return s.value

    def stream_destroy(self, stream):
        self._check("cudaStreamDestroy", self.lib.cudaStreamDestroy(_P(stream)))

    def stream_synchronize(self, stream):
        self._check("cudaStreamSynchronize", self.lib.cudaStreamSynchronize(_P(stream)))

    def stream_wait_event(self, stream, event):
        self._check("cudaStreamWaitEvent", self.lib.cudaStreamWaitEvent(_P(stream), _P(event), 0))

    def event_create(self):
        e = _P()
        self._check("cudaEventCreateWithFlags",
                    self.lib.cudaEventCreateWithFlags(ctypes.byref(e), _EVENT_DISABLE_TIMING))
        return e.value

    def event_record(self, event, stream):
        self._check("cudaEventRecord", self.lib.cudaEventRecord(_P(event), _P(stream)))

    def event_synchronize(self, event):
        self._check("cudaEventSynchronize", self.lib.cudaEventSynchronize(_P(event)))

    def event_destroy(self, event):
        self._check("cudaEventDestroy", self.lib.cudaEventDestroy(_P(event)))

    def order(self, producer, consumer):
        """Makes stream `consumer` wait for the work queued so far on stream `producer`."""
        if producer == consumer:
            return
        e = self.event_create()
        try:
            self.event_record(e, producer)
            self.stream_wait_event(consumer, e)
        finally:
            self.event_destroy(e)  # released once the wait is satisfied


_RUNTIME = None


def runtime():
    """The process's CudaRuntime (loaded at the first call). Tests may assign _RUNTIME."""
    global _RUNTIME
    if _RUNTIME is None:
        _RUNTIME = CudaRuntime()
    return _RUNTIME
