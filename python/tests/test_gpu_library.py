"""A real compiled library on the GPU: tensors in from torch, DeviceTensor and cupy (DLPack),
outputs without torch as DeviceTensor, torch.from_dlpack on them, and the sampling calls.

The library: $SINTER_TEST_KV_SO (a prefill/decode library of the committed fixture
examples/fixtures/llama_tiny_kv_f32_{prefill,decode}.onnx; compiled with `sinter compile
prefill=... decode=... -o X.so`, no GPU needed to compile), else compiled here with
$SINTER_BIN (default build/bin/sinter) when it exists. Skipped without a GPU or a library."""
import atexit
import ctypes
import os
import shutil
import subprocess
import tempfile
import unittest

from tests._util import REPO, gpu_runtime, have
import sinter
from sinter import DeviceTensor, _ctypes_api, _cuda

FIXTURE = os.path.join(REPO, "examples", "fixtures", "llama_tiny_kv_f32")


def library():
    so = os.environ.get("SINTER_TEST_KV_SO")
    if so:
        return (so, None) if os.path.isfile(so) else (None, f"SINTER_TEST_KV_SO={so}: no file")
    sinter_bin = os.environ.get("SINTER_BIN", os.path.join(REPO, "build", "bin", "sinter"))
    if not os.path.isfile(sinter_bin):
        return None, f"no library: set SINTER_TEST_KV_SO or build {sinter_bin}"
    tmp = tempfile.mkdtemp(prefix="sinter_gpu_lib_")
    atexit.register(shutil.rmtree, tmp, True)
    out = os.path.join(tmp, "kv_tiny.so")
    r = subprocess.run([sinter_bin, "compile", f"prefill={FIXTURE}_prefill.onnx",
                        f"decode={FIXTURE}_decode.onnx", "-o", out], capture_output=True,
                       text=True)
    if r.returncode:
        return None, f"compiling the fixture failed: {(r.stderr or r.stdout)[-300:]}"
    return out, None


class GpuLibraryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rt, why = gpu_runtime()
        if rt is None:
            raise unittest.SkipTest(why)
        cls.so, why = library()
        if cls.so is None:
            raise unittest.SkipTest(why)
        cls.saved_rt = _cuda._RUNTIME
        _cuda._RUNTIME = cls.rt = rt
        cls.model = sinter.Model(cls.so)

    @classmethod
    def tearDownClass(cls):
        cls.model.close()
        _cuda._RUNTIME = cls.saved_rt

    def ids(self):
        import struct
        try:
            import numpy as np
            ids = np.load(FIXTURE + "_prefill.input_ids.npy").astype("int64")
            return [int(x) for x in ids.reshape(-1)]
        except ImportError:
            return list(struct.unpack("<6q", open(FIXTURE + "_prefill.input_ids.npy", "rb")
                                      .read()[-48:]))

    def test_metadata(self):
        m = self.model
        self.assertEqual(m.entries, ["prefill", "decode"])
        names = [s.name for s in m.states if not s.name.startswith(".")]
        self.assertIn("past_key_0", names)
        self.assertEqual(m.states[0].shape[2], 32)  # the fixture's cache length
        self.assertIsInstance(m.has_sampler, bool)

    def run_device_tensors(self, ids):
        saved = list(_ctypes_api._TORCH)
        _ctypes_api._TORCH[:] = [None]  # as without torch
        try:
            with self.model.context("graph") as ctx:
                x = DeviceTensor.from_host((ctypes.c_int64 * len(ids))(*ids), (1, len(ids)),
                                           "int64")
                ctx.reset_state(stream=0)
                outs = ctx.run_entry("prefill", [x], stream=0)
                self.assertTrue(all(isinstance(o, DeviceTensor) for o in outs))
                logits = outs[0].tolist()
        finally:
            _ctypes_api._TORCH[:] = saved
        return outs, logits

    def test_device_tensors_without_torch(self):
        ids = self.ids()
        outs, logits = self.run_device_tensors(ids)
        if not have("numpy"):
            import numpy as np
            ref = np.load(FIXTURE + "_prefill.logits.npy")
            self.assertLess(float(np.max(np.abs(np.array(logits) - ref))), 1e-3)

    @unittest.skipIf(have("torch"), have("torch"))
    def test_torch_in_and_dlpack_out(self):
        import torch
        ids = self.ids()
        with self.model.context("direct") as ctx:
            ctx.reset_state()
            t_out = ctx.run_entry("prefill", [torch.tensor([ids], device="cuda")])
            torch.cuda.synchronize()
        outs, _ = self.run_device_tensors(ids)
        for o, t in zip(outs, t_out):
            x = torch.from_dlpack(o)  # zero-copy view of the DeviceTensor
            self.assertEqual(x.data_ptr(), o.ptr)
            self.assertTrue(torch.equal(x, t))
        # A DeviceTensor input next to torch outputs.
        x = DeviceTensor.from_host((ctypes.c_int64 * len(ids))(*ids), (1, len(ids)), "int64")
        with self.model.context("graph") as ctx:
            ctx.reset_state()
            got = ctx.run_entry("prefill", [x])
            torch.cuda.synchronize()
        self.assertTrue(torch.equal(got[0], t_out[0]))

    @unittest.skipIf(have("cupy"), have("cupy"))
    def test_cupy_in(self):
        import cupy
        ids = self.ids()
        outs, logits = self.run_device_tensors(ids)
        with self.model.context("direct") as ctx:
            ctx.reset_state(stream=0)
            got = ctx.run_entry("prefill", [cupy.asarray([ids], dtype=cupy.int64)],
                                outputs=[DeviceTensor.empty(o.shape, o.dtype)
                                         for o in self.model.entry("prefill").outputs],
                                stream=0)
            self.assertEqual(got[0].tolist(), logits)
            c = cupy.from_dlpack(got[0])
            self.assertEqual(c.tolist(), logits)

    def test_sampling_calls(self):
        with self.model.context() as ctx:
            if self.model.has_sampler:
                ctx.set_sampling(temperature=0.5, top_k=3, seed=1, stream=0)
            else:
                with self.assertRaises(sinter.SinterError) as cm:
                    ctx.set_sampling(temperature=0.5, stream=0)
                self.assertIn(cm.exception.status_name,
                              ("SINTER_ABI_MISMATCH", "SINTER_INVALID_ARGUMENT"))
                with self.assertRaises(sinter.SinterError) as cm:
                    sinter.Generator(self.model)
                self.assertIn("--sample", str(cm.exception))
            with self.assertRaises(ValueError):
                ctx.set_sampling(top_p=0.0, stream=0)


if __name__ == "__main__":
    unittest.main()
