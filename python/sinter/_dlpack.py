"""DLPack: the C structs, tensors in (any object with __dlpack__) and out (DeviceTensor).

Tensors in: a torch tensor is described directly (data_ptr, shape, strides: no capsule, the
cheapest path); a DeviceTensor likewise; any other object with __dlpack__ (cupy, jax, ...) is
asked for a capsule, whose DLTensor is copied and the capsule kept (not consumed: its own
destructor releases it when the call's bindings are dropped).

Tensors out: DeviceTensor, a device buffer this package allocated (cudaMalloc through
libcudart) when torch is not there. It implements __dlpack__/__dlpack_device__ with a legacy
"dltensor" capsule: torch.from_dlpack(t), cupy.from_dlpack(t), ... take it without a copy, and
the memory is freed when the DeviceTensor and every tensor made from it are gone.
"""

import ctypes

from . import _cuda

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST = 1, 2, 3
MAX_NDIM = 8


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


# void (*deleter)(struct DLManagedTensor *self), declared with a void* argument (same ABI).
DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


# (DLPack code, bits) <-> dtype name (torch's names).
DTYPES = {
    (2, 32): "float32",
    (2, 16): "float16",
    (2, 64): "float64",
    (4, 16): "bfloat16",
    (0, 64): "int64",
    (0, 32): "int32",
    (0, 16): "int16",
    (0, 8): "int8",
    (1, 8): "uint8",
    (1, 16): "uint16",
    (1, 32): "uint32",
    (1, 64): "uint64",
    (6, 8): "bool",
    (10, 8): "float8_e4m3fn",
}
CODES = {name: key for key, name in DTYPES.items()}


def itemsize(dtype):
    return CODES[dtype][1] // 8


def _prod(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


# ---- capsules -------------------------------------------------------------------------------
# The name lives as long as the module (a capsule keeps the pointer, not a copy).
_CAPSULE_NAME = b"dltensor"
# PyCapsule_IsValid/GetPointer as plain C calls on a raw PyObject*: they only read the capsule,
# and the capsule destructor below must not touch the refcount of the object being freed.
_capsule_is_valid = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_get_pointer = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_CAPSULE_DESTRUCTOR_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 _CAPSULE_DESTRUCTOR_T)(("PyCapsule_New", ctypes.pythonapi))
# The same calls with Python-level error checking, for capsules we receive.
_capsule_is_valid_obj = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_get_pointer_obj = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))

# DLManagedTensor address -> (struct, shape array, owner): what an exported capsule keeps alive
# until its consumer calls the deleter (or the capsule dies unconsumed).
_EXPORTS = {}


def _release(address):
    entry = _EXPORTS.pop(address, None) if _EXPORTS is not None else None
    del entry  # drops the owner: the memory is freed once nothing else holds it


@DELETER
def _deleter(address):
    try:
        _release(address)
    except Exception:  # never raise into the consumer's C code
        pass


@_CAPSULE_DESTRUCTOR_T
def _capsule_destructor(capsule):
    try:
        # Still named "dltensor": nobody consumed it, so the deleter is ours to call. A consumer
        # renames it to "used_dltensor" and calls the deleter itself when done.
        if _capsule_is_valid(capsule, _CAPSULE_NAME):
            _release(_capsule_get_pointer(capsule, _CAPSULE_NAME))
    except Exception:
        pass


def export_capsule(ptr, shape, dtype, device, owner):
    """A "dltensor" capsule over `ptr` (compact row-major); `owner` is kept alive until the
    consumer's deleter runs."""
    m = DLManagedTensor()
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    code, bits = CODES[dtype]
    m.dl_tensor.data = ptr
    m.dl_tensor.device = DLDevice(*device)
    m.dl_tensor.ndim = ndim
    m.dl_tensor.dtype = DLDataType(code, bits, 1)
    m.dl_tensor.shape = shape_arr
    m.dl_tensor.strides = None  # compact row-major
    m.dl_tensor.byte_offset = 0
    m.manager_ctx = None
    m.deleter = _deleter
    address = ctypes.addressof(m)
    _EXPORTS[address] = (m, shape_arr, owner)
    try:
        return _capsule_new(address, _CAPSULE_NAME, _capsule_destructor)
    except BaseException:
        _EXPORTS.pop(address, None)
        raise


def import_capsule(obj, stream=None):
    """(DLTensor copy, capsule) of `obj`.__dlpack__(): keep the capsule as long as the DLTensor
    is used. `stream` (a cudaStream_t int) is passed to CUDA producers so that the data is
    ready on it (DLPack: 1 is the legacy default stream, which a 0 handle means)."""
    dev = None
    if hasattr(obj, "__dlpack_device__"):
        dev = tuple(obj.__dlpack_device__())
    kw = {}
    if dev is not None and dev[0] in (KDL_CUDA, KDL_CUDA_HOST) and stream is not None:
        kw["stream"] = int(stream) or 1
    try:
        cap = obj.__dlpack__(**kw)
    except TypeError:
        if not kw:
            raise
        cap = obj.__dlpack__()
    if not _capsule_is_valid_obj(cap, _CAPSULE_NAME):
        raise TypeError(f"{type(obj).__name__}.__dlpack__() returned no unconsumed 'dltensor' "
                        f"capsule")
    m = DLManagedTensor.from_address(_capsule_get_pointer_obj(cap, _CAPSULE_NAME))
    dl = DLTensor.from_buffer_copy(m.dl_tensor)
    if dl.byte_offset:
        dl.data = (dl.data or 0) + dl.byte_offset
        dl.byte_offset = 0
    return dl, cap


def _is_torch_tensor(t):
    return type(t).__module__.startswith("torch") and hasattr(t, "data_ptr") and \
        hasattr(t, "is_cuda")


def dl_tensor(t, keep, stream=None):
    """DLTensor describing `t` (torch tensor, DeviceTensor or any __dlpack__ object); `keep`
    collects what must outlive the DLTensor (shape arrays, capsules, the tensor itself)."""
    keep.append(t)
    if isinstance(t, DeviceTensor):
        return t._dltensor(keep)
    if _is_torch_tensor(t):
        shape = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
        keep.append(shape)
        dl = DLTensor()
        dl.data = t.data_ptr()
        dl.device = DLDevice(KDL_CUDA if t.is_cuda else KDL_CPU, t.device.index or 0)
        dl.ndim = t.dim()
        code, bits = CODES.get(str(t.dtype).replace("torch.", ""), (255, t.element_size() * 8))
        dl.dtype = DLDataType(code, bits, 1)
        dl.shape = shape
        if not t.is_contiguous():  # the runtime rejects these with a message naming the tensor
            strides = (ctypes.c_int64 * max(t.dim(), 1))(*t.stride())
            keep.append(strides)
            dl.strides = strides
        dl.byte_offset = 0  # data_ptr() already includes the storage offset
        return dl
    if hasattr(t, "__dlpack__"):
        dl, cap = import_capsule(t, stream)
        keep.append(cap)
        return dl
    raise TypeError(f"expected a tensor with __dlpack__ (torch, cupy, sinter.DeviceTensor, ...), "
                    f"got {type(t).__name__}")


class _Allocation:
    """Owns one cudaMalloc'd block; freed when the last reference goes."""

    def __init__(self, nbytes, runtime=None):
        self.rt = runtime or _cuda.runtime()
        self.ptr = self.rt.malloc(nbytes)
        self.nbytes = nbytes

    def __del__(self):
        ptr, self.ptr = getattr(self, "ptr", None), None
        if ptr:
            try:
                self.rt.free(ptr)
            except Exception:
                pass


class DeviceTensor:
    """A compact row-major tensor in device memory: what Context.run returns without torch.

        t = DeviceTensor.empty((1, 8), "int64")     # cudaMalloc (uninitialized)
        t = DeviceTensor.from_host(b"...", (2,), "int64")
        torch.from_dlpack(t); cupy.from_dlpack(t)  # zero-copy, keeps the memory alive
        t.to_bytes(); t.numpy(); t.tolist()        # copies to the host (waits for the stream)
    """

    __slots__ = ("ptr", "shape", "dtype", "device", "_owner", "_stream", "__weakref__")

    def __init__(self, ptr, shape, dtype, device=(KDL_CUDA, 0), owner=None, stream=None):
        if dtype not in CODES:
            raise ValueError(f"unsupported dtype {dtype!r} (supported: {', '.join(CODES)})")
        self.ptr = int(ptr or 0)
        self.shape = tuple(int(d) for d in shape)
        if len(self.shape) > MAX_NDIM or any(d < 0 for d in self.shape):
            raise ValueError(f"bad shape {self.shape}")
        self.dtype = dtype
        self.device = (int(device[0]), int(device[1]))
        self._owner = owner
        self._stream = stream  # where the last write was queued (for __dlpack__'s ordering)

    @classmethod
    def empty(cls, shape, dtype, runtime=None):
        rt = runtime or _cuda.runtime()
        n = _prod(shape) * itemsize(dtype)
        alloc = _Allocation(n, rt)
        return cls(alloc.ptr, shape, dtype, (KDL_CUDA, rt.device()), owner=alloc)

    @classmethod
    def from_host(cls, data, shape, dtype, runtime=None):
        """A new device tensor holding `data` (bytes-like, exactly the tensor's size)."""
        t = cls.empty(shape, dtype, runtime)
        buf = memoryview(data).cast("B")
        if buf.nbytes != t.nbytes:
            raise ValueError(f"{buf.nbytes} bytes for a {dtype}{list(t.shape)} tensor of "
                             f"{t.nbytes} bytes")
        src = (ctypes.c_char * max(buf.nbytes, 1)).from_buffer_copy(bytes(buf) or b"\0")
        t._rt().memcpy(t.ptr, ctypes.addressof(src), t.nbytes, _cuda.H2D)
        return t

    def _rt(self):
        owner = self._owner
        return owner.rt if isinstance(owner, _Allocation) else _cuda.runtime()

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return itemsize(self.dtype)

    def numel(self):
        return _prod(self.shape)

    @property
    def nbytes(self):
        return self.numel() * self.itemsize

    def data_ptr(self):
        return self.ptr

    def __repr__(self):
        kind = {KDL_CPU: "cpu", KDL_CUDA: "cuda", KDL_CUDA_HOST: "cuda_host"}.get(
            self.device[0], str(self.device[0]))
        return (f"DeviceTensor({self.dtype}{list(self.shape)}, {kind}:{self.device[1]}, "
                f"ptr=0x{self.ptr:x})")

    def _dltensor(self, keep):
        shape = (ctypes.c_int64 * max(self.ndim, 1))(*self.shape)
        keep.append(shape)
        dl = DLTensor()
        dl.data = self.ptr
        dl.device = DLDevice(*self.device)
        dl.ndim = self.ndim
        code, bits = CODES[self.dtype]
        dl.dtype = DLDataType(code, bits, 1)
        dl.shape = shape
        dl.strides = None
        dl.byte_offset = 0
        return dl

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(dl_device) != self.device:
            raise BufferError(f"DeviceTensor lives on {self.device}; no copy to {dl_device}")
        if copy:
            raise BufferError("DeviceTensor exports without a copy only (copy=True refused)")
        if self.device[0] == KDL_CUDA and stream is not None and stream != -1 and \
                self._stream is not None:
            # DLPack: 1 = legacy default stream (handle 0), 2 = per-thread default (handle 2).
            consumer = 0 if stream == 1 else int(stream)
            if consumer != self._stream:
                self._rt().order(self._stream, consumer)
        return export_capsule(self.ptr, self.shape, self.dtype, self.device, self)

    # ---- host copies (synchronous) ----------------------------------------------------------
    def to_bytes(self):
        n = self.nbytes
        buf = (ctypes.c_char * max(n, 1))()
        if self.device[0] == KDL_CPU:
            ctypes.memmove(buf, self.ptr, n)
        else:
            rt = self._rt()
            if self._stream is not None:
                rt.stream_synchronize(self._stream)
            rt.memcpy(ctypes.addressof(buf), self.ptr, n, _cuda.D2H)
        return bytes(buf[:n])

    def numpy(self):
        import numpy as np
        if self.dtype == "bfloat16":
            raise TypeError("numpy has no bfloat16: use torch.from_dlpack(t)")
        return np.frombuffer(self.to_bytes(), dtype=np.dtype(self.dtype)).reshape(self.shape)

    def tolist(self):
        import struct
        fmt = {"float32": "f", "float16": "e", "float64": "d", "int64": "q", "int32": "i",
               "int16": "h", "int8": "b", "uint8": "B", "bool": "?"}.get(self.dtype)
        if fmt is None:
            raise TypeError(f"tolist() does not convert {self.dtype}")
        flat = list(struct.unpack(f"<{self.numel()}{fmt}", self.to_bytes()))

        def nest(vals, shape):
            if not shape:
                return vals[0]
            if len(shape) == 1:
                return vals
            step = _prod(shape[1:])
            return [nest(vals[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
        return nest(flat, list(self.shape))
