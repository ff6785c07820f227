"""DeviceTensor and DLPack: capsule export/import without a GPU (host memory tensors with a
CPU device, and a host-memory stand-in for the CUDA runtime)."""
import ctypes
import gc
import struct
import unittest
import weakref

from tests._util import FakeRuntime, have
import sinter
from sinter import DeviceTensor, _cuda, _dlpack


def host_tensor(values, fmt, dtype, shape):
    """A DeviceTensor over a ctypes buffer with a CPU device (kDLCPU), owning the buffer."""
    raw = struct.pack(f"<{len(values)}{fmt}", *values)
    buf = ctypes.create_string_buffer(raw, len(raw))
    return DeviceTensor(ctypes.addressof(buf), shape, dtype, device=(_dlpack.KDL_CPU, 0),
                        owner=buf), buf


class Owner:
    """A weak-referenceable owner, to see when an export lets go of the memory."""

    def __init__(self, values):
        raw = struct.pack(f"<{len(values)}q", *values)
        self.buf = ctypes.create_string_buffer(raw, len(raw))


class CapsuleTest(unittest.TestCase):
    def setUp(self):
        gc.collect()
        self.exports_before = len(_dlpack._EXPORTS)

    def test_capsule_fields(self):
        t, _ = host_tensor([1, 2, 3, 4, 5, 6], "q", "int64", (2, 3))
        cap = t.__dlpack__()
        self.assertEqual(type(cap).__name__, "PyCapsule")
        self.assertEqual(_dlpack._capsule_is_valid_obj(cap, b"dltensor"), 1)
        m = _dlpack.DLManagedTensor.from_address(
            _dlpack._capsule_get_pointer_obj(cap, b"dltensor"))
        dl = m.dl_tensor
        self.assertEqual(dl.data, t.ptr)
        self.assertEqual((dl.device.device_type, dl.device.device_id), (1, 0))
        self.assertEqual(dl.ndim, 2)
        self.assertEqual((dl.dtype.code, dl.dtype.bits, dl.dtype.lanes), (0, 64, 1))
        self.assertEqual([dl.shape[0], dl.shape[1]], [2, 3])
        self.assertFalse(dl.strides)  # NULL: compact row-major
        self.assertEqual(dl.byte_offset, 0)
        self.assertTrue(m.deleter)
        self.assertEqual(len(_dlpack._EXPORTS), self.exports_before + 1)
        del cap, m, dl
        gc.collect()
        # Unconsumed: the capsule's destructor called the deleter.
        self.assertEqual(len(_dlpack._EXPORTS), self.exports_before)

    def test_owner_lives_until_released(self):
        o = Owner([7, 8])
        ref = weakref.ref(o)
        t = DeviceTensor(ctypes.addressof(o.buf), (2,), "int64", device=(1, 0), owner=o)
        cap = t.__dlpack__()
        del t, o
        gc.collect()
        self.assertIsNotNone(ref(), "the exported capsule must keep the memory's owner alive")
        del cap
        gc.collect()
        self.assertIsNone(ref(), "the owner must go once the capsule is gone")

    def test_deleter_called_by_consumer(self):
        o = Owner([1])
        ref = weakref.ref(o)
        cap = DeviceTensor(ctypes.addressof(o.buf), (1,), "int64", (1, 0), owner=o).__dlpack__()
        del o
        ptr = _dlpack._capsule_get_pointer_obj(cap, b"dltensor")
        m = _dlpack.DLManagedTensor.from_address(ptr)
        # What a consumer does: rename the capsule, later call the deleter.
        ctypes.pythonapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
        name = ctypes.c_char_p(b"used_dltensor")
        ctypes.pythonapi.PyCapsule_SetName(cap, name)
        del cap
        gc.collect()
        self.assertIsNotNone(ref(), "a consumed capsule leaves the release to the deleter")
        m.deleter(ptr)
        gc.collect()
        self.assertIsNone(ref())
        self.assertEqual(len(_dlpack._EXPORTS), self.exports_before)

    def test_import_own_capsule(self):
        t, _ = host_tensor([1.5, -2.0], "f", "float32", (1, 2))

        class Foreign:  # an object that only speaks DLPack
            def __dlpack__(self, stream=None):
                return t.__dlpack__(stream=stream)

            def __dlpack_device__(self):
                return t.__dlpack_device__()

        keep = []
        dl = _dlpack.dl_tensor(Foreign(), keep)
        self.assertEqual(dl.data, t.ptr)
        self.assertEqual((dl.dtype.code, dl.dtype.bits), (2, 32))
        self.assertEqual([dl.shape[i] for i in range(dl.ndim)], [1, 2])
        self.assertEqual(len(_dlpack._EXPORTS), self.exports_before + 1)
        del keep
        gc.collect()
        self.assertEqual(len(_dlpack._EXPORTS), self.exports_before)

    def test_refusals(self):
        t, _ = host_tensor([1], "q", "int64", (1,))
        with self.assertRaises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        with self.assertRaises(BufferError):
            t.__dlpack__(copy=True)
        with self.assertRaises(ValueError):
            DeviceTensor(0, (1,), "complex64")
        with self.assertRaises(TypeError):
            _dlpack.dl_tensor(object(), [])

    @unittest.skipIf(have("torch"), have("torch"))
    def test_torch_from_dlpack(self):
        import torch
        o = Owner([10, 20, 30, 40])
        ref = weakref.ref(o)
        t = DeviceTensor(ctypes.addressof(o.buf), (2, 2), "int64", (1, 0), owner=o)
        x = torch.from_dlpack(t)
        self.assertEqual(x.tolist(), [[10, 20], [30, 40]])
        self.assertEqual(x.data_ptr(), t.ptr)  # no copy
        x[0, 0] = 11
        self.assertEqual(struct.unpack("<q", o.buf.raw[:8])[0], 11)
        del t, o
        gc.collect()
        self.assertIsNotNone(ref())
        del x
        gc.collect()
        self.assertIsNone(ref(), "torch's release of the tensor must call the deleter")

    @unittest.skipIf(have("numpy"), have("numpy"))
    def test_numpy_from_dlpack(self):
        import numpy as np
        t, buf = host_tensor([1.0, 2.0, 3.0], "d", "float64", (3,))
        a = np.from_dlpack(t)
        self.assertEqual(a.tolist(), [1.0, 2.0, 3.0])
        self.assertEqual(a.__array_interface__["data"][0], t.ptr)
        del a
        gc.collect()
        self.assertEqual(len(_dlpack._EXPORTS), self.exports_before)


class DeviceTensorTest(unittest.TestCase):
    def setUp(self):
        self.saved = _cuda._RUNTIME
        _cuda._RUNTIME = self.rt = FakeRuntime()

    def tearDown(self):
        _cuda._RUNTIME = self.saved

    def test_empty_from_host_roundtrip(self):
        t = DeviceTensor.from_host(struct.pack("<4q", 1, -2, 3, 4), (2, 2), "int64")
        self.assertEqual(t.device, (2, 0))  # kDLCUDA
        self.assertEqual(t.nbytes, 32)
        self.assertEqual(t.tolist(), [[1, -2], [3, 4]])
        self.assertEqual(t.to_bytes(), struct.pack("<4q", 1, -2, 3, 4))
        self.assertIn("int64[2, 2]", repr(t))
        e = DeviceTensor.empty((3,), "float16")
        self.assertEqual((e.shape, e.dtype, e.nbytes), ((3,), "float16", 6))
        with self.assertRaises(ValueError):
            DeviceTensor.from_host(b"123", (1,), "int64")

    def test_freed_with_last_reference(self):
        t = DeviceTensor.empty((4,), "float32")
        cap = t.__dlpack__()
        del t
        gc.collect()
        self.assertEqual(self.rt.freed, 0)
        del cap
        gc.collect()
        self.assertEqual(self.rt.freed, 1)

    def test_stream_order_on_export(self):
        calls = []
        self.rt.order = lambda p, c: calls.append((p, c))
        t = DeviceTensor.empty((1,), "int64")
        t._stream = 5
        t.__dlpack__(stream=7)
        t.__dlpack__(stream=1)   # legacy default stream = handle 0
        t.__dlpack__(stream=-1)  # no synchronization asked
        t.__dlpack__(stream=5)   # same stream
        self.assertEqual(calls, [(5, 7), (5, 0)])


class CudartSearchTest(unittest.TestCase):
    def test_candidates(self):
        import os
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "lib64"))
            fake = os.path.join(d, "lib64", "libcudart.so.12")
            open(fake, "w").close()
            saved = os.environ.get("CUDA_HOME")
            os.environ["CUDA_HOME"] = d
            try:
                c = _cuda.candidates()
            finally:
                if saved is None:
                    del os.environ["CUDA_HOME"]
                else:
                    os.environ["CUDA_HOME"] = saved
        self.assertIn(fake, c)
        self.assertLess(c.index(fake), c.index("libcudart.so"))  # before the loader's search

    def test_missing_cudart_message(self):
        with self.assertRaises(sinter.SinterError) as cm:
            _cuda.CudaRuntime("/nonexistent/libcudart.so.99")
        self.assertIn("libcudart.so not found", str(cm.exception))
        self.assertEqual(cm.exception.status_name, "SINTER_NO_DEVICE")


if __name__ == "__main__":
    unittest.main()
