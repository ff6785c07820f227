"""Sampling parameters: the ctypes struct layout and the Python-side argument checks."""
import ctypes
import math
import unittest

from tests._util import build_stub
import sinter
from sinter import SamplingParams, SinterArgumentError, SinterError, sampling_params


class LayoutTest(unittest.TestCase):
    def test_struct_layout(self):
        # uint32 struct_size, float temperature, int32 top_k, float top_p,
        # float repetition_penalty, (4 bytes padding), uint64 seed
        self.assertEqual(ctypes.sizeof(SamplingParams), 32)
        offsets = {name: getattr(SamplingParams, name).offset
                   for name, _ in SamplingParams._fields_}
        self.assertEqual(offsets, {"struct_size": 0, "temperature": 4, "top_k": 8, "top_p": 12,
                                   "repetition_penalty": 16, "seed": 24})

    def test_layout_matches_the_c_header(self):
        so, why = build_stub()
        if so is None:
            self.skipTest(why)
        lib = ctypes.CDLL(so)
        out = (ctypes.c_uint64 * 7)()
        lib.stub_sampling_layout(out)
        self.assertEqual(list(out), [32, 0, 4, 8, 12, 16, 24])

    def test_defaults(self):
        p = sampling_params()
        self.assertEqual((p.struct_size, p.temperature, p.top_k, p.top_p, p.repetition_penalty,
                          p.seed), (32, 0.0, 0, 1.0, 1.0, 0))
        p = sampling_params(temperature=0.5, top_k=40, top_p=0.25, repetition_penalty=1.5,
                            seed=2**64 - 1)
        self.assertEqual((p.temperature, p.top_k, p.top_p, p.repetition_penalty, p.seed),
                         (0.5, 40, 0.25, 1.5, 2**64 - 1))


class ValidationTest(unittest.TestCase):
    def bad(self, fragment, **kw):
        with self.assertRaises(ValueError) as cm:
            sampling_params(**kw)
        e = cm.exception
        self.assertIsInstance(e, SinterError)
        self.assertIsInstance(e, SinterArgumentError)
        self.assertEqual(e.status, 1)
        self.assertEqual(e.status_name, "SINTER_INVALID_ARGUMENT")
        self.assertIn(fragment, str(e))
        self.assertTrue(str(e).startswith("SINTER_INVALID_ARGUMENT: "), str(e))
        return str(e)

    def test_temperature(self):
        self.bad("temperature must be >= 0", temperature=-0.1)
        self.bad("temperature must be finite", temperature=math.inf)
        self.bad("temperature must be finite", temperature=math.nan)
        self.bad("temperature must be a number", temperature="hot")

    def test_top_k(self):
        self.bad("top_k must be in [0, ", top_k=-1)
        self.bad("top_k must be an integer", top_k=1.5)
        self.bad("top_k must be in [0, ", top_k=2**31)

    def test_top_p(self):
        for v in (0, 0.0, -0.5, 1.0001, 2):
            self.assertIn("(0, 1]", self.bad("top_p must be in (0, 1]", top_p=v))
        self.bad("top_p must be finite", top_p=math.nan)
        sampling_params(top_p=1)
        sampling_params(top_p=1e-6)

    def test_repetition_penalty(self):
        self.bad("repetition_penalty must be > 0", repetition_penalty=0)
        self.bad("repetition_penalty must be > 0", repetition_penalty=-1)
        self.bad("repetition_penalty must be finite", repetition_penalty=math.inf)

    def test_seed(self):
        self.bad("seed must be in [0, ", seed=-1)
        self.bad("seed must be in [0, ", seed=2**64)
        self.bad("seed must be an integer", seed=1.0)

    def test_public_names(self):
        for name in ("Model", "Context", "SinterError", "DeviceTensor", "Generator",
                     "TensorInfo", "Entry", "LaunchInfo"):
            self.assertTrue(hasattr(sinter, name), name)


if __name__ == "__main__":
    unittest.main()
