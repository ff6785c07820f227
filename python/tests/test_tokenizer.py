"""sinter.load_tokenizer: the file is named in every error."""
import os
import tempfile
import unittest

from tests._util import have
from sinter import load_tokenizer


class TokenizerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        p = os.path.join(self.dir.name, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def test_missing_file(self):
        p = os.path.join(self.dir.name, "absent.tokenizer.json")
        with self.assertRaises(ValueError) as cm:
            load_tokenizer(p)
        self.assertEqual(str(cm.exception), f"{p}: no such tokenizer file")

    @unittest.skipUnless(have("tokenizers"), "tokenizers is importable (this checks the "
                                             "message without it)")
    def test_without_tokenizers_package(self):
        p = self.write("t.json", "{}")
        with self.assertRaises(ImportError) as cm:
            load_tokenizer(p)
        self.assertIn("pip install tokenizers", str(cm.exception))
        self.assertIn(p, str(cm.exception))

    @unittest.skipIf(have("tokenizers"), have("tokenizers"))
    def test_not_json(self):
        p = self.write("bad.tokenizer.json", "{ this is not json")
        with self.assertRaises(ValueError) as cm:
            load_tokenizer(p)
        self.assertTrue(str(cm.exception).startswith(f"{p}: not a valid tokenizer.json ("),
                        str(cm.exception))
        self.assertNotIn("\n", str(cm.exception))

    @unittest.skipIf(have("tokenizers"), have("tokenizers"))
    def test_json_but_not_a_tokenizer(self):
        p = self.write("other.json", '{"model": {"type": "Nope"}}')
        with self.assertRaises(ValueError) as cm:
            load_tokenizer(p)
        self.assertIn(f"{p}: not a valid tokenizer.json", str(cm.exception))

    @unittest.skipIf(have("tokenizers"), have("tokenizers"))
    def test_valid(self):
        from tokenizers import Tokenizer, models, pre_tokenizers
        tok = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        p = os.path.join(self.dir.name, "ok.json")
        tok.save(p)
        t = load_tokenizer(p)
        self.assertEqual(t.encode("a b c").ids, [0, 1, 2])


if __name__ == "__main__":
    unittest.main()
