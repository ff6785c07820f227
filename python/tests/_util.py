"""Shared helpers of the sinter package's CPU tests (plain unittest, no pytest)."""
import atexit
import ctypes
import importlib.util
import itertools
import os
import shutil
import subprocess
import sys
import tempfile

TESTS = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(TESTS)
REPO = os.path.dirname(PYTHON_DIR)
if PYTHON_DIR not in sys.path:  # test the package in this checkout, installed or not
    sys.path.insert(0, PYTHON_DIR)


def have(*modules):
    """None when every module imports, else the reason to skip."""
    for m in modules:
        if importlib.util.find_spec(m) is None:
            return f"needs {m} (not importable by {sys.executable})"
    return None


class FakeRuntime:
    """sinter._cuda.CudaRuntime on host memory: device pointers are host pointers, copies are
    memmove, streams and events do nothing (the stub model runs synchronously)."""

    def __init__(self):
        self.blocks = {}
        self.ids = itertools.count(1)
        self.freed = 0

    def device(self):
        return 0

    def device_count(self):
        return 1

    def malloc(self, nbytes):
        b = ctypes.create_string_buffer(max(int(nbytes), 1) + 16)
        p = (ctypes.addressof(b) + 15) // 16 * 16
        self.blocks[p] = b
        return p

    def free(self, ptr):
        del self.blocks[ptr]
        self.freed += 1

    host_alloc = malloc
    free_host = free

    def memcpy(self, dst, src, nbytes, kind):
        ctypes.memmove(dst, src, nbytes)

    def memcpy_async(self, dst, src, nbytes, kind, stream):
        ctypes.memmove(dst, src, nbytes)

    def stream_create(self):
        return 1000 + next(self.ids)

    def event_create(self):
        return 2000 + next(self.ids)

    def stream_destroy(self, s):
        pass

    def stream_synchronize(self, s):
        pass

    def stream_wait_event(self, s, e):
        pass

    def event_record(self, e, s):
        pass

    def event_synchronize(self, e):
        pass

    def event_destroy(self, e):
        pass

    def order(self, producer, consumer):
        pass


_STUB = {}


def gpu_runtime():
    """(sinter._cuda.CudaRuntime, None) on a machine with a GPU, else (None, reason)."""
    from sinter import _cuda
    try:
        rt = _cuda.CudaRuntime()
    except Exception as e:
        return None, f"no CUDA runtime ({e})"
    if rt.device_count() < 1:
        return None, "no GPU (cudaGetDeviceCount found none)"
    return rt, None


def _nvcc():
    for c in (os.environ.get("NVCC"), shutil.which("nvcc"),
              os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc"),
              "/usr/local/cuda/bin/nvcc"):
        if c and os.path.isfile(c):
            return c
    return None


def build_stub(cuda=False):
    """(path of the stub model .so, None) or (None, reason to skip). cuda=True: the device
    memory variant (nvcc, -DSTUB_CUDA), only on a machine with a GPU."""
    key = "cuda" if cuda else "host"
    if key in _STUB:
        return _STUB[key]
    so, why = None, None
    if cuda:
        rt, why = gpu_runtime()
        cc = _nvcc() if rt is not None else None
        if rt is not None and cc is None:
            why = "no nvcc to build the CUDA stub model"
    else:
        cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or \
            shutil.which("clang")
        if not cc:
            why = "no C compiler (cc) to build the stub model"
    if cc:
        d = tempfile.mkdtemp(prefix="sinter_stub_")
        atexit.register(shutil.rmtree, d, True)  # the loaded .so stays mapped; the name goes
        out = os.path.join(d, "stub_model.so")
        inc = ["-I", os.path.join(REPO, "runtime", "include")]
        if os.environ.get("DLPACK_INCLUDE_DIR"):
            inc += ["-I", os.environ["DLPACK_INCLUDE_DIR"]]
        # Searched after the system headers: the real dlpack.h wins where it is installed.
        fallback = os.path.join(TESTS, "dlpack_fallback")
        src = os.path.join(TESTS, "stub_model.c")
        if cuda:
            cmd = [cc, "-shared", "-Xcompiler", "-fPIC", "-Xcompiler", f"-idirafter,{fallback}",
                   "-DSTUB_CUDA", *inc, src, "-o", out]
        else:
            cmd = [cc, "-shared", "-fPIC", "-std=c99", "-O1", "-idirafter", fallback, *inc, src,
                   "-o", out, "-lm"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            lines = r.stderr.strip().splitlines() or ["?"]
            err = next((ln for ln in lines if "error" in ln), lines[0])
            why = f"the stub model did not compile ({' '.join(cmd[:1])}): {err[:300]}"
        else:
            so = out
    _STUB[key] = (so, why)
    return so, why


def stub_next(token, pos, V, temperature=0.0, seed=0, counter=0):
    """The stub's token function (stub_model.c: stub_next)."""
    v = token * 31 + pos * 7 + 3
    if temperature > 0:
        v += (seed * 13 + counter * 5) % 1000
    return v % V


def expected_tokens(prompt, max_new, S, L, V, stop=(), temperature=0.0, seed=0, C=0):
    """What Generator.generate must return with the stub model, and the runs it makes:
    [(entry, token, position)] (the run's last token and position), entry 0 = prefill,
    1 = decode, 2 = chunk (of C tokens, when the stub has one)."""
    n = len(prompt)
    counter, runs = 0, []
    last_of_runs, fed = [], 0  # (entry, the last prompt index it takes)
    if n >= S:
        last_of_runs.append((0, S - 1))
        fed = S
    if C and n >= C:
        while n - fed >= C:
            fed += C
            last_of_runs.append((2, fed - 1))
        if fed < n:  # the last chunk ends at the prompt's end
            last_of_runs.append((2, n - 1))
            fed = n
    last_of_runs += [(1, i) for i in range(fed, n)]
    for entry, i in last_of_runs:
        tok = stub_next(prompt[i], i, V, temperature, seed, counter)
        runs.append((entry, prompt[i], i))
        counter += 1
    out = [tok]
    total = min(max_new, L - n + 1)
    for g in range(1, total):
        runs.append((1, tok, n + g - 1))
        tok = stub_next(tok, n + g - 1, V, temperature, seed, counter)
        counter += 1
        out.append(tok)
    prompt_runs = len(runs) - (len(out) - 1)
    for i, t in enumerate(out):
        if t in stop:
            return out[:i + 1], runs[:prompt_runs + i]
    return out, runs
