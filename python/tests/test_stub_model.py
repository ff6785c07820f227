"""Model, Context and Generator against a stand-in library (stub_model.c: the sinter ABI 1.4
without CUDA, built with the system C compiler) and a host-memory CUDA runtime: the ctypes
marshalling, set_sampling, DeviceTensor outputs without torch, and the generation loop (prefill
or not, prompt tokens through decode, fed-back tokens, stop ids, max_new_tokens, a full cache,
streaming). Skipped when no C compiler or dlpack.h is found. The Gpu* classes repeat the
checks with the stub built by nvcc on device memory and the real CUDA runtime (pinned memory,
async copies, events): skipped without a GPU."""
import ctypes
import os
import shutil
import tempfile
import unittest

from tests._util import FakeRuntime, build_stub, expected_tokens, gpu_runtime, have
import sinter
from sinter import DeviceTensor, _ctypes_api, _cuda

S, L, V = 4, 12, 50


class StubCase(unittest.TestCase):
    sampler = True
    cuda = False

    def setUp(self):
        so, why = build_stub(cuda=self.cuda)
        if so is None:
            self.skipTest(why)
        self.saved_rt, self.saved_torch = _cuda._RUNTIME, list(_ctypes_api._TORCH)
        _cuda._RUNTIME = self.rt = gpu_runtime()[0] if self.cuda else FakeRuntime()
        _ctypes_api._TORCH[:] = [None]  # as without torch: DeviceTensor outputs, stream 0
        self.dir = tempfile.mkdtemp(prefix="sinter_stub_test_")
        # A copy per test: each dlopen of one path would share the stub's configuration.
        self.so = os.path.join(self.dir, "model.so")
        shutil.copyfile(so, self.so)
        self.lib = ctypes.CDLL(self.so)
        self.lib.stub_configure(int(self.sampler), S, L, V)
        self.lib.stub_trace.restype = ctypes.c_uint32
        self.lib.stub_trace.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32]
        self.lib.stub_get_sampling.argtypes = [ctypes.c_void_p,
                                               ctypes.POINTER(sinter.SamplingParams)]

    def tearDown(self):
        _cuda._RUNTIME = self.saved_rt
        _ctypes_api._TORCH[:] = self.saved_torch
        shutil.rmtree(self.dir, ignore_errors=True)

    def trace(self, ctx):
        buf = (ctypes.c_int64 * (3 * 4096))()
        n = self.lib.stub_trace(ctx._handle, buf, 4096)
        return [tuple(buf[3 * i:3 * i + 3]) for i in range(n)]


class ModelApiTest(StubCase):
    def test_metadata(self):
        m = sinter.Model(self.so)
        self.assertEqual(m.abi_version, (1, 4))
        self.assertEqual(m.entries, ["prefill", "decode"])
        self.assertEqual(m.inputs, [sinter.TensorInfo("input_ids", "int64", (1, S))])
        self.assertEqual([o.name for o in m.outputs], ["logits", "next_token"])
        dec = m.entry("decode")
        self.assertEqual([(i.name, i.dtype, i.shape) for i in dec.inputs],
                         [("input_ids", "int64", (1, 1)), ("cache_position", "int64", (1,))])
        self.assertEqual(dec.outputs[0], sinter.TensorInfo("logits", "float32", (1, 1, V)))
        self.assertEqual(m.states[0], sinter.TensorInfo("past_key_0", "float32", (1, 2, L, 4)))
        self.assertEqual(m.states[1].name, ".scratch")
        self.assertTrue(m.has_sampler)
        with self.assertRaises(sinter.SinterError):
            m.entry("nope")
        m.close()

    def test_set_sampling_reaches_the_library(self):
        with sinter.Model(self.so) as m:
            ctx = m.context("graph")
            got = sinter.SamplingParams()
            self.lib.stub_get_sampling(ctx._handle, ctypes.byref(got))
            self.assertEqual((got.struct_size, got.temperature, got.top_k, got.top_p,
                              got.repetition_penalty, got.seed), (32, 0.0, 0, 1.0, 1.0, 0))
            ctx.set_sampling(temperature=0.75, top_k=7, top_p=0.5, repetition_penalty=1.25,
                             seed=2**63 + 5)
            self.lib.stub_get_sampling(ctx._handle, ctypes.byref(got))
            self.assertEqual((got.struct_size, got.temperature, got.top_k, got.top_p,
                              got.repetition_penalty, got.seed),
                             (32, 0.75, 7, 0.5, 1.25, 2**63 + 5))
            with self.assertRaises(ValueError) as cm:
                ctx.set_sampling(top_p=0)
            self.assertIn("top_p", str(cm.exception))
            # The library's own check, past the Python one: SinterError with its message.
            bad = sinter.SamplingParams(32, 0.0, -3, 1.0, 1.0, 0)
            with self.assertRaises(sinter.SinterError) as cm:
                m._check(m._lib.sinter_context_set_sampling(ctx._handle, ctypes.byref(bad), None))
            self.assertEqual(cm.exception.status_name, "SINTER_INVALID_ARGUMENT")
            self.assertIn("top_k", str(cm.exception))
            ctx.close()

    def test_run_without_torch_gives_device_tensors(self):
        with sinter.Model(self.so) as m, m.context() as ctx:
            ids = DeviceTensor.from_host((ctypes.c_int64 * S)(5, 6, 7, 8), (1, S), "int64")
            logits, tok = ctx.run([ids])
            self.assertIsInstance(logits, DeviceTensor)
            self.assertEqual((logits.shape, logits.dtype), ((1, S, V), "float32"))
            self.assertEqual(tok.tolist(), [[(8 * 31 + (S - 1) * 7 + 3) % V]])
            pos = DeviceTensor.from_host((ctypes.c_int64 * 1)(S), (1,), "int64")
            _, tok2 = ctx.run_entry("decode", {"input_ids": tok, "cache_position": pos})
            t = tok.tolist()[0][0]
            self.assertEqual(tok2.tolist(), [[(t * 31 + S * 7 + 3) % V]])
            # bind_entry with the same buffer as input_ids and next_token: the device feeds itself
            t2 = tok2.tolist()[0][0]
            call = ctx.bind_entry("decode", [tok2, pos],
                                  [DeviceTensor.empty((1, 1, V), "float32"), tok2])
            call()
            self.assertEqual(self.trace(ctx), [(0, 8, S - 1), (1, t, S), (1, t2, S)])
            self.assertEqual(tok2.tolist(), [[(t2 * 31 + S * 7 + 3) % V]])


class NoSamplerTest(StubCase):
    sampler = False

    def test_refused(self):
        with sinter.Model(self.so) as m:
            self.assertFalse(m.has_sampler)
            with m.context() as ctx, self.assertRaises(sinter.SinterError) as cm:
                ctx.set_sampling(temperature=1.0)
            self.assertIn("no sampler", str(cm.exception))
            with self.assertRaises(sinter.SinterError) as cm:
                sinter.Generator(m)
            self.assertIn("--sample", str(cm.exception))


class GeneratorTest(StubCase):
    def gen(self, **kw):
        g = sinter.Generator(self.so, **kw)
        self.addCleanup(g.close)
        return g

    chunk = 0  # the stub's chunk entry length (0: none)

    def setUp(self):
        super().setUp()
        if self.chunk:
            self.lib.stub_configure_chunk(self.chunk)

    def check(self, g, prompt, max_new=8, **kw):
        before = len(self.trace(g.ctx))
        got = g.generate(prompt, max_new_tokens=max_new, **kw)
        want, runs = expected_tokens(prompt, max_new, S, L, V, stop=set(kw.get("stop", ())),
                                     temperature=kw.get("temperature", 0.0),
                                     seed=kw.get("seed", 0), C=self.chunk)
        self.assertEqual(got, want, f"prompt {prompt}")
        # Every expected run happened in order (runs queued past a stop id may follow).
        self.assertEqual(self.trace(g.ctx)[before:before + len(runs)], runs)
        self.assertEqual(g.last_ids, want)
        return got

    def test_shape_and_defaults(self):
        g = self.gen()
        self.assertEqual((g.prefill_len, g.cache_len, g.vocab_size), (S, L, V))
        self.assertIsNone(g.tokenizer)

    def test_prompt_longer_than_prefill(self):
        g = self.gen()
        self.check(g, [1, 2, 3, 4, 5, 6], max_new=5)
        runs = self.trace(g.ctx)
        self.assertEqual(runs[0], (0, 4, S - 1))       # prefill of the first S tokens
        self.assertEqual(runs[1:3], [(1, 5, 4), (1, 6, 5)])  # the rest through decode
        st = g.last_stats
        self.assertEqual((st.prompt_tokens, st.new_tokens, st.prefill_tokens, st.stop_reason),
                         (6, 5, S, "max_new_tokens"))

    def test_prompt_of_prefill_length(self):
        g = self.gen(mode="direct")
        self.check(g, [9, 8, 7, 6], max_new=5)

    def test_prompt_shorter_than_prefill(self):
        g = self.gen()
        self.check(g, [3, 1], max_new=6)
        runs = self.trace(g.ctx)
        self.assertTrue(all(r[0] == 1 for r in runs))  # no prefill
        self.assertEqual(g.last_stats.prefill_tokens, 0)

    def test_cache_full(self):
        g = self.gen()
        out = self.check(g, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], max_new=50)
        self.assertEqual(len(out), L - 10 + 1)
        self.assertEqual(g.last_stats.stop_reason, "cache_full")
        out = self.check(g, list(range(1, L + 1)), max_new=5)  # a full prompt: one token
        self.assertEqual(len(out), 1)
        with self.assertRaises(ValueError) as cm:
            g.generate(list(range(L + 1)))
        self.assertIn(f"the KV cache holds {L}", str(cm.exception))

    def test_stop_ids(self):
        g = self.gen()
        free, _ = expected_tokens([1, 2, 3, 4, 5], 10, S, L, V)
        stop = free[3]
        got = self.check(g, [1, 2, 3, 4, 5], max_new=10, stop=[stop])
        self.assertEqual(got[-1], stop)
        self.assertEqual(g.last_stats.stop_reason, "stop")

    def test_stream(self):
        g = self.gen()
        want, _ = expected_tokens([4, 4, 4, 4, 4], 6, S, L, V)
        it = g.generate([4, 4, 4, 4, 4], max_new_tokens=6, stream=True)
        self.assertEqual(next(it), want[0])
        self.assertEqual(list(it), want[1:])
        # An abandoned stream ends when the next generation starts.
        it = g.generate([1, 2], max_new_tokens=6, stream=True)
        next(it)
        self.check(g, [2, 3, 4, 5, 6])
        self.assertEqual(list(it), [])

    def test_sampling_seed(self):
        g = self.gen()
        a = self.check(g, [1, 2, 3, 4, 5], temperature=0.8, seed=3)
        b = self.check(g, [1, 2, 3, 4, 5], temperature=0.8, seed=3)
        self.assertEqual(a, b)
        self.assertNotEqual(a, self.check(g, [1, 2, 3, 4, 5], temperature=0.8, seed=4))

    def test_argument_errors(self):
        g = self.gen()
        for kw, frag in (({"top_p": 1.5}, "top_p"), ({"temperature": -1}, "temperature"),
                         ({"top_k": -2}, "top_k"), ({"max_new_tokens": -1}, "max_new_tokens")):
            with self.assertRaises(ValueError) as cm:
                g.generate([1, 2], **kw)
            self.assertIn(frag, str(cm.exception))
        with self.assertRaises(ValueError):
            g.generate([])
        with self.assertRaises(ValueError) as cm:
            g.generate([V])
        self.assertIn("outside the vocabulary", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            g.generate("text without a tokenizer")
        self.assertIn("tokenizer", str(cm.exception))
        self.assertEqual(g.generate([1], max_new_tokens=0), [])

    def test_closed(self):
        g = sinter.Generator(self.so)
        g.close()
        g.close()
        with self.assertRaises(sinter.SinterError):
            g.generate([1])
        if not self.cuda:
            self.assertEqual(self.rt.blocks, {})  # every buffer freed

    @unittest.skipIf(have("tokenizers"), have("tokenizers"))
    def test_text(self):
        from tokenizers import Tokenizer, models, pre_tokenizers
        vocab = {f"w{i}": i for i in range(V)}
        tok = Tokenizer(models.WordLevel(vocab, unk_token="w0"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        path = os.path.join(self.dir, "model.tokenizer.json")  # beside model.so: found alone
        tok.save(path)
        g = self.gen()
        self.assertIsNotNone(g.tokenizer)
        prompt = "w1 w2 w3 w4 w5"
        want, _ = expected_tokens([1, 2, 3, 4, 5], 6, S, L, V)
        self.assertEqual(g.generate(prompt, max_new_tokens=6), tok.decode(want))
        pieces = list(g.generate(prompt, max_new_tokens=6, stream=True))
        self.assertEqual("".join(pieces), tok.decode(want))
        self.assertEqual(g.last_ids, want)
        # stop as a token string
        got = g.generate(prompt, max_new_tokens=6, stop=[f"w{want[2]}"])
        self.assertEqual(got, tok.decode(want[:3]))
        with open(path, "w") as f:
            f.write("{ not json")
        with self.assertRaises(ValueError) as cm:
            sinter.Generator(self.so)
        self.assertIn(path, str(cm.exception))


class PlanPromptTest(unittest.TestCase):
    """The prompt plan itself (the same rule as sinter::plan_prompt, tested in C++ too)."""

    def test_plans(self):
        plan = sinter.plan_prompt
        self.assertEqual(plan(3, 0, 0), [("decode", 0, 1), ("decode", 1, 1), ("decode", 2, 1)])
        self.assertEqual(plan(5, 4, 0), [("prefill", 0, 4), ("decode", 4, 1)])
        self.assertEqual(plan(11, 4, 3), [("prefill", 0, 4), ("chunk", 4, 3), ("chunk", 7, 3),
                                          ("chunk", 8, 3)])
        self.assertEqual(plan(10, 4, 3), [("prefill", 0, 4), ("chunk", 4, 3), ("chunk", 7, 3)])
        self.assertEqual(plan(5, 4, 3), [("prefill", 0, 4), ("chunk", 2, 3)])
        self.assertEqual(plan(2, 4, 3), [("decode", 0, 1), ("decode", 1, 1)])
        self.assertEqual(plan(3, 4, 3), [("chunk", 0, 3)])
        self.assertEqual(plan(7, 0, 3), [("chunk", 0, 3), ("chunk", 3, 3), ("chunk", 4, 3)])
        for n in range(1, 40):
            for S in (0, 1, 4, 9):
                for C in (0, 2, 3, 8):
                    runs = plan(n, S, C)
                    covered = set()
                    for entry, start, count in runs:
                        self.assertLessEqual(start, len(covered))  # no slot left unwritten
                        self.assertLessEqual(start + count, n)
                        covered |= set(range(start, start + count))
                    self.assertEqual(covered, set(range(n)))
                    self.assertEqual(runs[-1][1] + runs[-1][2], n)  # ends at the last token


class GeneratorChunkTest(GeneratorTest):
    """The generator with a chunk entry of 3 tokens (prefill 4, cache 12)."""
    chunk = 3

    def test_shape_and_defaults(self):
        g = self.gen()
        self.assertEqual((g.prefill_len, g.chunk_len, g.cache_len), (S, 3, L))

    def test_prompt_longer_than_prefill(self):
        g = self.gen()
        self.check(g, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], max_new=2)
        runs = self.trace(g.ctx)
        # prefill [0, 4), chunks [4, 7) and [7, 10), then [8, 11) ending at the prompt's end
        self.assertEqual(runs[:4], [(0, 4, 3), (2, 7, 6), (2, 10, 9), (2, 11, 10)])
        st = g.last_stats
        self.assertEqual((st.prefill_tokens, st.chunk_runs), (S, 3))

    def test_prompt_shorter_than_prefill(self):
        g = self.gen()
        self.check(g, [3, 1, 2], max_new=4)  # one chunk at slot 0, no prefill
        self.assertEqual(self.trace(g.ctx)[0], (2, 2, 2))
        self.assertEqual((g.last_stats.prefill_tokens, g.last_stats.chunk_runs), (0, 1))
        self.check(g, [3, 1], max_new=4)     # shorter than a chunk: decode
        self.assertEqual(g.last_stats.chunk_runs, 0)


class GpuModelApiTest(ModelApiTest):
    cuda = True


class GpuGeneratorTest(GeneratorTest):
    cuda = True


class GpuGeneratorChunkTest(GeneratorChunkTest):
    cuda = True


if __name__ == "__main__":
    unittest.main()
