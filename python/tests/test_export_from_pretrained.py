"""examples/export_llama.py --from-pretrained: one-line errors for bad checkpoint folders (no
torch needed: the folder is checked before anything heavy is imported), and a tiny checkpoint
exported (single file and sharded, plain and --kv-cache) and compared with onnxruntime against
the Hugging Face model loaded from the folder (needs torch, transformers, onnxruntime,
onnxscript, tokenizers)."""
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

from tests._util import REPO, TESTS, have

SCRIPT = os.path.join(REPO, "examples", "export_llama.py")
SUPPORTED = ("gemma, gemma2, gpt2, gpt_neox, llama, mistral, olmo2, phi, phi3, qwen2, qwen3, "
             "stablelm")
EMPTY_SAFETENSORS = struct.pack("<Q", 2) + b"{}"


def run_export(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          cwd=REPO)


def load_script():
    spec = importlib.util.spec_from_file_location("export_llama_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class SoftcapNoteTest(unittest.TestCase):
    """sdpa attention drops Gemma 2's attention soft-cap: the export says so (no torch needed)."""

    def note(self, attn, **config):
        import contextlib
        import io
        import types
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            said = load_script().note_dropped_softcap(types.SimpleNamespace(**config), attn)
        return said, err.getvalue()

    def test_sdpa_with_softcap(self):
        said, err = self.note("sdpa", attn_logit_softcapping=50.0)
        self.assertTrue(said)
        self.assertIn("attn_logit_softcapping=50.0", err)
        self.assertIn("--attn eager", err)

    def test_eager_or_no_softcap_is_quiet(self):
        self.assertEqual(self.note("eager", attn_logit_softcapping=50.0), (False, ""))
        self.assertEqual(self.note("sdpa", attn_logit_softcapping=None), (False, ""))
        self.assertEqual(self.note("sdpa"), (False, ""))


class BadCheckpointTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sinter_fp_")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.out = os.path.join(self.tmp, "out", "m.onnx")

    def folder(self, config=None, files=None):
        d = os.path.join(self.tmp, "ckpt")
        os.makedirs(d, exist_ok=True)
        if config is not None:
            with open(os.path.join(d, "config.json"), "w") as f:
                f.write(config if isinstance(config, str) else json.dumps(config))
        for name, data in (files or {}).items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data if isinstance(data, bytes) else data.encode())
        return d

    def expect_error(self, d, pattern, *extra):
        r = run_export("--from-pretrained", d, "--out", self.out, *extra)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(lines), 1, f"one line expected, got:\n{r.stderr}")
        self.assertNotIn("Traceback", r.stderr)
        self.assertTrue(lines[0].startswith("export_llama.py: error: "), lines[0])
        self.assertRegex(lines[0], pattern)
        self.assertFalse(os.path.exists(self.out))
        return lines[0]

    def cfg(self, **kw):
        c = {"model_type": "llama", "vocab_size": 256, "torch_dtype": "float32"}
        c.update(kw)
        return c

    def test_missing_dir(self):
        d = os.path.join(self.tmp, "nope")
        line = self.expect_error(d, "no such directory")
        self.assertEqual(line, f"export_llama.py: error: {d}: no such directory")

    def test_not_a_dir(self):
        p = os.path.join(self.tmp, "file")
        open(p, "w").close()
        self.expect_error(p, re.escape(p) + ": not a directory")

    def test_no_config(self):
        d = self.folder(files={"model.safetensors": EMPTY_SAFETENSORS})
        self.expect_error(d, re.escape(os.path.join(d, "config.json")) + ": not found")

    def test_config_not_json(self):
        d = self.folder("{ model_type: llama", {"model.safetensors": EMPTY_SAFETENSORS})
        self.expect_error(d, re.escape(os.path.join(d, "config.json")) + ": not valid JSON: ")

    def test_unsupported_model_type(self):
        d = self.folder(self.cfg(model_type="bert"), {"model.safetensors": EMPTY_SAFETENSORS})
        line = self.expect_error(d, "model_type 'bert' is not supported")
        self.assertEqual(line, f"export_llama.py: error: {os.path.join(d, 'config.json')}: "
                               f"model_type 'bert' is not supported (supported: {SUPPORTED})")

    def test_missing_shard(self):
        index = {"metadata": {}, "weight_map": {
            "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
        d = self.folder(self.cfg(), {"model.safetensors.index.json": json.dumps(index),
                                     "model-00001-of-00002.safetensors": EMPTY_SAFETENSORS})
        line = self.expect_error(d, "shard 'model-00002-of-00002.safetensors' listed there is "
                                    "missing")
        self.assertIn(os.path.join(d, "model.safetensors.index.json") + ": ", line)

    def test_index_not_json(self):
        d = self.folder(self.cfg(), {"model.safetensors.index.json": "[oops"})
        self.expect_error(d, re.escape(os.path.join(d, "model.safetensors.index.json")) +
                          ": not valid JSON")

    def test_no_weights(self):
        d = self.folder(self.cfg())
        self.expect_error(d, re.escape(d) + ": no weights file")

    def test_truncated_safetensors(self):
        d = self.folder(self.cfg(), {"model.safetensors": struct.pack("<Q", 1000) + b"{}"})
        self.expect_error(d, re.escape(os.path.join(d, "model.safetensors")) +
                          ": not a safetensors file")

    def test_bad_tokenizer(self):
        d = self.folder(self.cfg(), {"model.safetensors": EMPTY_SAFETENSORS,
                                     "tokenizer.json": "{ not a tokenizer"})
        # With the tokenizers package: it does not parse; without: not even JSON.
        self.expect_error(d, re.escape(os.path.join(d, "tokenizer.json")) +
                          ": (not a valid tokenizer|not valid JSON)")

    def test_unsupported_dtype(self):
        d = self.folder(self.cfg(torch_dtype="float64"), {"model.safetensors": EMPTY_SAFETENSORS})
        self.expect_error(d, "torch_dtype 'float64' is not supported")

    def test_shape_flags_refused(self):
        d = self.folder(self.cfg(), {"model.safetensors": EMPTY_SAFETENSORS})
        r = run_export("--from-pretrained", d, "--out", self.out, "--layers", "3", "--arch",
                       "qwen2")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--arch, --layers: --from-pretrained takes the model's shape and family "
                      "from DIR/config.json", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_flags_from_config(self):
        mod = load_script()
        d = self.folder(self.cfg(model_type="qwen3", torch_dtype="bfloat16", vocab_size=300,
                                 tie_word_embeddings=False),
                        {"model.safetensors": EMPTY_SAFETENSORS})
        a = mod.parse_args(["--from-pretrained", d, "--out", self.out])
        self.assertEqual((a.arch, a.dtype, a.vocab, a.tie_embeddings), ("qwen3", "bf16", 300,
                                                                         False))
        self.assertIsNone(a.layers)
        a = mod.parse_args(["--from-pretrained", d, "--out", self.out, "--dtype", "f32"])
        self.assertEqual(a.dtype, "f32")
        # transformers 5 writes "dtype"
        d2 = os.path.join(self.tmp, "v5")
        os.makedirs(d2)
        with open(os.path.join(d2, "config.json"), "w") as f:
            json.dump({"model_type": "mistral", "vocab_size": 10, "dtype": "float16"}, f)
        with open(os.path.join(d2, "model.safetensors"), "wb") as f:
            f.write(EMPTY_SAFETENSORS)
        a = mod.parse_args(["--from-pretrained", d2, "--out", self.out])
        self.assertEqual((a.arch, a.dtype), ("mistral", "f16"))
        # Without --from-pretrained the defaults are the script's as before.
        a = mod.parse_args(["--out", self.out])
        self.assertEqual((a.arch, a.dtype, a.layers, a.vocab, a.tie_embeddings, a.norm_init),
                         ("llama", "bf16", 16, 128256, True, "random"))


class KvBatchArgumentsTest(unittest.TestCase):
    """--kv-cache --batch B > 1 exports B unpadded sequences without the one-sequence checks:
    refused in one line unless --no-ort-check is given, and with --save-reference or --pad."""

    def expect_refused(self, *extra):
        r = run_export("--kv-cache", "32", "--batch", "2", "--out", "/tmp/unused.onnx", *extra)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertIn("--kv-cache with --batch > 1 exports B sequences of one length", r.stderr)

    def test_needs_no_ort_check(self):
        self.expect_refused()

    def test_no_reference(self):
        self.expect_refused("--no-ort-check", "--save-reference")

    def test_no_padding(self):
        self.expect_refused("--no-ort-check", "--pad", "left")


class ChunkArgumentsTest(unittest.TestCase):
    """--chunk C: a chunk graph beside prefill and decode; one line and exit 2 without
    --kv-cache, or with a C that is not 2 .. the cache slots after the prompt."""

    def expect_refused(self, message, *args):
        r = run_export("--out", "/tmp/unused.onnx", *args)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertIn(message, r.stderr)

    def test_needs_kv_cache(self):
        self.expect_refused("--chunk and --chunk-out need --kv-cache", "--chunk", "4")
        self.expect_refused("--chunk and --chunk-out need --kv-cache", "--chunk-out", "c.onnx")
        self.expect_refused("--chunk-out names the chunk graph of --chunk C", "--kv-cache", "32",
                            "--chunk-out", "c.onnx")

    def test_chunk_length(self):
        for c in ("1", "27"):
            self.expect_refused(f"--chunk {c}: a chunk is 2 to 26 tokens (the cache's 32 slots "
                                f"after the --seq 6 prompt", "--kv-cache", "32", "--chunk", c)


_NEEDS = have("torch", "transformers", "onnxruntime", "onnxscript", "onnx", "tokenizers",
              "numpy")


@unittest.skipIf(_NEEDS, _NEEDS)
class FromPretrainedExportTest(unittest.TestCase):
    """A tiny Llama (2 layers, hidden 64, vocab 256, Llama 3 RoPE scaling, untied) saved with
    save_pretrained, exported, and the ONNX run by onnxruntime against the HF model."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sinter_fp_pos_")
        mk = os.path.join(TESTS, "make_tiny_checkpoint.py")
        for name, extra in (("single", []), ("sharded", ["--shard-size", "100KB"])):
            r = subprocess.run([sys.executable, mk, os.path.join(cls.tmp, name), *extra],
                               capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError(f"make_tiny_checkpoint failed:\n{r.stdout}\n{r.stderr}")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def hf(self, name):
        from transformers import AutoModelForCausalLM
        return AutoModelForCausalLM.from_pretrained(os.path.join(self.tmp, name),
                                                    local_files_only=True).eval()

    def test_plain_export(self):
        import numpy as np
        import onnxruntime as ort
        import torch
        d = os.path.join(self.tmp, "single")
        out = os.path.join(self.tmp, "plain", "m.onnx")
        r = run_export("--from-pretrained", d, "--seq", "7", "--save-reference", "--out", out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        m = re.search(r"onnxruntime vs torch: \w+: max_abs_diff=(\S+)", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        self.assertLess(float(m.group(1)), 1e-4)
        stem = out[:-5]
        ids = np.load(stem + ".input_ids.npy")
        mask = np.load(stem + ".attention_mask.npy")
        self.assertEqual(ids.shape, (1, 7))
        sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
        got = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        with torch.no_grad():
            ref = self.hf("single")(input_ids=torch.from_numpy(ids),
                                    attention_mask=torch.from_numpy(mask)).logits.numpy()
        self.assertEqual(got.shape, (1, 7, 256))
        self.assertLess(float(np.max(np.abs(got - ref))), 1e-4)
        self.assertLess(float(np.max(np.abs(np.load(stem + ".logits.npy") - ref))), 1e-5)
        self.assertTrue(os.path.exists(stem + ".logits_exact.npy"))
        # tokenizer copied beside the output, named in the sidecar
        with open(os.path.join(d, "tokenizer.json"), "rb") as a, \
                open(stem + ".tokenizer.json", "rb") as b:
            self.assertEqual(a.read(), b.read())
        with open(stem + ".json") as f:
            side = json.load(f)
        self.assertEqual(side["tokenizer"], "m.tokenizer.json")
        self.assertEqual(side["dtype"], "f32")
        self.assertIn("from_pretrained single", side["model"])
        rope = side["config"].get("rope_scaling") or side["config"].get("rope_parameters")
        self.assertEqual(rope["rope_type"], "llama3")

    def test_sharded_kv_export(self):
        import numpy as np
        import onnxruntime as ort
        import torch
        d = os.path.join(self.tmp, "sharded")
        self.assertTrue(os.path.exists(os.path.join(d, "model.safetensors.index.json")))
        out = os.path.join(self.tmp, "kv", "m_prefill.onnx")
        dec = os.path.join(self.tmp, "kv", "m_decode.onnx")
        r = run_export("--from-pretrained", d, "--seq", "4", "--kv-cache", "16",
                       "--save-reference", "--out", out, "--decode-out", dec)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        m = re.search(r"onnxruntime vs HF DynamicCache: \w+: max_abs_diff prefill (\S+), "
                      r"decode \[([^\]]*)\]", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        diffs = [float(m.group(1))] + [float(x) for x in m.group(2).split(",")]
        self.assertLess(max(diffs), 1e-4, r.stdout)
        for f in ("m_prefill.logits.npy", "m_prefill.logits_exact.npy", "m_decode.logits.npy",
                  "m_decode.input_ids.npy", "m_decode.cache_position.npy",
                  "m_prefill.tokenizer.json"):
            self.assertTrue(os.path.exists(os.path.join(self.tmp, "kv", f)), f)
        # The prefill graph on its own inputs, against the HF model loaded from the folder.
        ids = np.load(out[:-5] + ".input_ids.npy")
        sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
        feeds = {"input_ids": ids}
        for i in sess.get_inputs()[1:]:
            feeds[i.name] = np.zeros(i.shape, dtype=np.float32)
        got = sess.run(None, feeds)[0]
        with torch.no_grad():
            ref = self.hf("sharded")(input_ids=torch.from_numpy(ids)).logits.numpy()
        self.assertLess(float(np.max(np.abs(got - ref))), 1e-4)


if __name__ == "__main__":
    unittest.main()
