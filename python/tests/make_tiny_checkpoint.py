#!/usr/bin/env python3
"""Writes a tiny random Hugging Face checkpoint folder (save_pretrained) for the tests of
export_llama.py --from-pretrained and sinter.Generator: Llama (or another family) with 2 layers,
hidden 64, vocab 256, Llama 3 RoPE scaling, and a byte-level tokenizer.json (256 tokens, one
per byte: any text encodes). Needs torch, transformers and tokenizers.

    make_tiny_checkpoint.py DIR [--shard-size 100KB] [--dtype float32] [--arch llama]
"""
import argparse
import os
import sys


def byte_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def tiny_config(arch="llama", max_position=256):
    import transformers
    common = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=max_position,
                  rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=None,
                  eos_token_id=None, pad_token_id=None)
    if arch == "llama":
        rope = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
        # transformers 5 reads rope_parameters; 4.x reads rope_scaling (and would keep an
        # unknown rope_parameters as a plain attribute, silently unscaled).
        if int(transformers.__version__.split(".")[0]) >= 5:
            return transformers.LlamaConfig(head_dim=16, rope_parameters=dict(
                rope, rope_theta=10000.0), **common)
        return transformers.LlamaConfig(head_dim=16, rope_theta=10000.0, rope_scaling=rope,
                                        **common)
    cls = {"mistral": "MistralConfig", "qwen2": "Qwen2Config", "qwen3": "Qwen3Config"}[arch]
    return getattr(transformers, cls)(head_dim=16, **common)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--shard-size", default=None, help="save_pretrained max_shard_size")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--arch", default="llama", choices=["llama", "mistral", "qwen2", "qwen3"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-tokenizer", action="store_true")
    a = p.parse_args(argv)
    import torch
    from transformers import AutoModelForCausalLM
    torch.manual_seed(a.seed)
    model = AutoModelForCausalLM.from_config(tiny_config(a.arch))
    with torch.no_grad():  # norms away from 1 so that they matter
        g = torch.Generator().manual_seed(a.seed + 1)
        for name, prm in sorted(model.named_parameters()):
            if name.endswith("norm.weight"):
                prm.copy_(1 + 0.1 * torch.randn(prm.shape, generator=g))
    model = model.to(getattr(torch, a.dtype)).eval()
    kw = {"max_shard_size": a.shard_size} if a.shard_size else {}
    model.save_pretrained(a.out, safe_serialization=True, **kw)
    if not a.no_tokenizer:
        byte_tokenizer().save(os.path.join(a.out, "tokenizer.json"))
    print(f"make_tiny_checkpoint: {a.out}: {sorted(os.listdir(a.out))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
