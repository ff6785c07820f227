#!/usr/bin/env python3
"""Export a randomly initialised Hugging Face LlamaForCausalLM to ONNX (deterministic per seed).

Defaults reproduce the Llama 3.2 1B architecture (random weights, no download). Shapes are
static: input_ids [batch, seq] int64 and attention_mask [batch, seq] int64 -> logits
[batch, seq, vocab]. Weights are initialised in fp32 from --seed on the CPU and only then cast
to --dtype, so one seed gives bit-identical weights on any machine with the same torch.

Example (the tiny committed fixture):
  python3 examples/export_llama.py --layers 1 --hidden 64 --intermediate 128 --heads 4 \\
      --kv-heads 2 --head-dim 16 --vocab 256 --out examples/fixtures/llama_tiny_l1_op18.onnx

Writes PATH.onnx (+ PATH.onnx.data only when the model is larger than 1.5 GB) and a sidecar
PATH.json (config, seed, exporter details). Prints the op types (domain:op) of the graph.

With --kv-cache MAX, writes generation with a KV cache instead: a prefill graph (OUT) and a
decode graph (--decode-out, default OUT with .onnx -> .decode.onnx) of the same weights, the
caches as inputs past_key_i/past_value_i [1, kv_heads, MAX, head_dim] and outputs
present_key_i/present_value_i (updated out of place by index_copy: Transpose + ScatterND +
Transpose). Both are checked against Hugging Face's forward with a DynamicCache (prefill, then
--kv-check-steps teacher-forced decode steps) in PyTorch and, for --dtype f32, onnxruntime.
The tiny committed fixtures:
  python3 examples/export_llama.py --layers 2 --hidden 64 --intermediate 128 --heads 4 \\
      --kv-heads 2 --head-dim 16 --vocab 256 --seq 6 --kv-cache 32 --save-reference \\
      --out examples/fixtures/llama_tiny_kv_prefill.onnx \\
      --decode-out examples/fixtures/llama_tiny_kv_decode.onnx \\
      --dump examples/fixtures/llama_tiny_kv_prefill.dump.txt \\
      --decode-dump examples/fixtures/llama_tiny_kv_decode.dump.txt
"""
import argparse
import json
import os
import sys
import traceback

EXTERNAL_DATA_THRESHOLD = int(1.5 * 1024**3)


def str2bool(v):
    if isinstance(v, bool):
        return v
    if v.lower() in ("1", "true", "yes", "y", "on"):
        return True
    if v.lower() in ("0", "false", "no", "n", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected a boolean, got {v!r}")


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, default=None, help="num_hidden_layers (default 16)")
    p.add_argument("--hidden", type=int, default=None, help="hidden_size (default 2048)")
    p.add_argument("--intermediate", type=int, default=None,
                   help="intermediate_size of the SwiGLU MLP (default 8192)")
    p.add_argument("--heads", type=int, default=None, help="num_attention_heads (default 32)")
    p.add_argument("--kv-heads", type=int, default=None, help="num_key_value_heads (default 8)")
    p.add_argument("--head-dim", type=int, default=None, help="head_dim (default 64)")
    p.add_argument("--vocab", type=int, default=None, help="vocab_size (default 128256)")
    p.add_argument("--seq", type=int, default=6, help="static prompt length (default 6)")
    p.add_argument("--batch", type=int, default=1, help="static batch size (default 1)")
    p.add_argument("--pad", choices=["none", "left", "right"], default="none",
                   help="padding in the example attention_mask: sequence b of the batch has "
                        "min(b, seq - 1) masked positions on that side (default none; the "
                        "reference's logits at masked positions are not compared)")
    p.add_argument("--opset", type=int, default=18,
                   help="ONNX opset version (default 18; 23 is supported too)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed for the weights and the example input ids (default 0)")
    p.add_argument("--arch", choices=sorted(ARCHES), default=None,
                   help="model family with the same dimensions (default llama): llama, mistral, "
                        "qwen2 (QKV bias), qwen3 (q/k RMSNorm), phi3 (fused qkv and gate_up), "
                        "gemma (GeLU-tanh gate, (1+w) norm, embedding scale), gemma2 (+ soft-"
                        "capping, pre/post norms), olmo2 (post-norms, q/k norm), gpt2 (LayerNorm, "
                        "GeLU, biases, learned positions; --heads x --head-dim must equal "
                        "--hidden), gpt_neox (Pythia: LayerNorm, parallel attention and MLP, "
                        "GeLU, biases, a fused per-head-interleaved QKV, rotary on the first "
                        "quarter of each head; --heads x --head-dim must equal --hidden; "
                        "untied head by default), phi (Phi-1.5 / Phi-2: one LayerNorm for the "
                        "parallel attention and MLP, biased q/k/v, dense and LM head, GeLU-tanh, "
                        "rotary on 40%% of each head; untied head by default), stablelm "
                        "(StableLM 2: LayerNorm, SwiGLU, q/k/v biases, rotary on 25%% of each "
                        "head; untied head by default)")
    p.add_argument("--dtype", choices=["bf16", "f16", "f32"], default=None,
                   help="weight/activation dtype of the exported model (default bf16; with "
                        "--from-pretrained: the checkpoint's torch_dtype)")
    p.add_argument("--max-position", type=int, default=None,
                   help="max_position_embeddings (default 131072; gpt2: 1024)")
    p.add_argument("--rope-theta", type=float, default=None,
                   help="rope_theta (default 500000)")
    p.add_argument("--rope-scaling", choices=["llama3", "none"], default=None,
                   help="llama3: factor 32, low_freq_factor 1, high_freq_factor 4, "
                        "original_max_position_embeddings 8192 (default); none: plain RoPE")
    p.add_argument("--rms-norm-eps", type=float, default=None, help="rms_norm_eps (default 1e-5)")
    p.add_argument("--tie-embeddings", type=str2bool, nargs="?", const=True, default=None,
                   help="tie lm_head to embed_tokens like Llama 3.2 1B (default true, "
                        "gpt_neox false; "
                        "--tie-embeddings false to untie)")
    p.add_argument("--norm-init", choices=["random", "ones"], default=None,
                   help="RMSNorm weights: random = 1 + N(0, 0.1) from seed+2 (default; keeps "
                        "the norms distinct, since the exporter merges identical initializers), "
                        "ones = Hugging Face's init")
    p.add_argument("--attn", choices=["auto", "sdpa", "eager"], default="auto",
                   help="attention implementation: auto tries sdpa, then falls back to eager "
                        "if the export fails (default auto)")
    p.add_argument("--save-reference", action="store_true",
                   help="also write PATH.input_ids.npy, PATH.attention_mask.npy, "
                        "PATH.logits.npy (PyTorch's logits in the model's dtype, as float32) and "
                        "PATH.logits_exact.npy (the same weights evaluated in float64: the "
                        "reference both errors are measured against)")
    p.add_argument("--dump", metavar="TXT", default=None,
                   help="also write a node-by-node text dump of the exported graph to TXT")
    p.add_argument("--no-ort-check", action="store_true",
                   help="skip the onnxruntime-vs-PyTorch comparison (done by default for "
                        "models under 1.5 GB; bf16 models may be unsupported by ORT CPU)")
    p.add_argument("--keep-stack-traces", action="store_true",
                   help="keep the exporter's per-node pkg.torch.onnx.stack_trace metadata (holds "
                        "local file paths, so it is stripped by default to keep files identical "
                        "across machines; namespace/name_scopes/fx_node metadata is kept)")
    p.add_argument("--dynamic-seq", action="store_true",
                   help="export the sequence dimension of input_ids/attention_mask as dynamic "
                        "(the compiler then takes the length from --shape); default static")
    p.add_argument("--kv-cache", type=int, metavar="MAX", default=None,
                   help="export generation with a KV cache of MAX positions instead: two graphs, "
                        "prefill (OUT: input_ids [1, seq], past_key_i/past_value_i "
                        "[1, kv_heads, MAX, head_dim] -> logits [1, seq, vocab], present_key_i/"
                        "present_value_i; fills cache slots 0..seq-1) and decode (--decode-out: "
                        "input_ids [1, 1], cache_position [1], past_* -> logits [1, 1, vocab], "
                        "present_*; writes slot cache_position and attends to slots "
                        "0..cache_position). With --batch B the inputs, caches and logits "
                        "have B rows, every sequence at the same positions (with --no-ort-"
                        "check). Default off: the plain export")
    p.add_argument("--decode-out", metavar="PATH", default=None,
                   help="with --kv-cache: path of the decode graph (default: OUT with .onnx "
                        "replaced by .decode.onnx)")
    p.add_argument("--chunk", type=int, metavar="C", default=None,
                   help="with --kv-cache: also export a chunk graph (--chunk-out): input_ids "
                        "[B, C], cache_position [C] (C consecutive slots), past_* -> logits "
                        "[B, C, vocab], present_*; writes the C slots and each token attends to "
                        "the slots up to its own. A prompt of any length then runs as chunks "
                        "of C (prefill in ceil(n / C) runs, not one decode run a token)")
    p.add_argument("--chunk-out", metavar="PATH", default=None,
                   help="with --chunk: path of the chunk graph (default: OUT with .onnx "
                        "replaced by .chunk.onnx)")
    p.add_argument("--decode-dump", metavar="TXT", default=None,
                   help="with --kv-cache: node-by-node dump of the decode graph (--dump dumps "
                        "the prefill graph)")
    p.add_argument("--kv-check-steps", type=int, default=5,
                   help="with --kv-cache: greedy decode steps after the prefill in the "
                        "PyTorch/onnxruntime checks and --save-reference (default 5)")
    p.add_argument("--lora-targets", default=None, metavar="NAMES",
                   help="wrap the model with a PEFT LoRA adapter on these modules, comma-"
                        "separated (e.g. q_proj,v_proj,down_proj); exported unmerged, the way "
                        "PEFT runs it. Default: no adapter")
    p.add_argument("--lora-rank", type=int, default=8, help="LoRA r (default 8)")
    p.add_argument("--lora-alpha", type=float, default=16.0,
                   help="lora_alpha; the adapter scaling is alpha / r (default 16)")
    p.add_argument("--lora-seed", type=int, default=100,
                   help="seed of the adapter's weights (lora_A and lora_B, both from N(0, 0.05) "
                        "so the adapter changes the output); two seeds give two adapters of one "
                        "base model (default 100)")
    p.add_argument("--from-pretrained", metavar="DIR", default=None,
                   help="export a local Hugging Face checkpoint folder (config.json, "
                        "model.safetensors or sharded model-*.safetensors + "
                        "model.safetensors.index.json, optionally tokenizer.json) instead of a "
                        "random model: the family comes from config.json's model_type, the dtype "
                        "from its torch_dtype (unless --dtype), RoPE scaling, tied embeddings "
                        "etc. from the config; the shape flags (--layers, --hidden, ...) are "
                        "refused. A tokenizer.json is copied to OUT_STEM.tokenizer.json")
    p.add_argument("--out", required=True, help="output path, PATH.onnx")
    a = p.parse_args(argv)
    if a.from_pretrained is not None:
        given = [flag for flag, dest in SHAPE_FLAGS if getattr(a, dest) is not None]
        if given:
            p.error(f"{', '.join(given)}: --from-pretrained takes the model's shape and family "
                    f"from DIR/config.json; drop {'this flag' if len(given) == 1 else 'these flags'}")
        try:
            check_pretrained_dir(a)
        except CheckpointError as e:
            fail(e)
    else:
        # GPT-2 keeps a [max_position, max_position] causal-mask buffer per layer: Llama's
        # 131072 would need 17 GB per layer, so it gets GPT-2's own 1024.
        if a.arch == "gpt2" and a.max_position is None:
            a.max_position = 1024
        if a.arch in ("gpt_neox", "phi", "stablelm") and a.tie_embeddings is None:
            a.tie_embeddings = False  # Pythia's embed_out and Phi's lm_head are their own
        for dest, default in FLAG_DEFAULTS.items():
            if getattr(a, dest) is None:
                setattr(a, dest, default)
    if a.lora_targets and a.kv_cache is not None:
        p.error("--lora-targets exports the plain graph only (no --kv-cache)")
    if a.kv_cache is not None:
        if a.batch != 1 and (not a.no_ort_check or a.save_reference or a.pad != "none"):
            p.error("--kv-cache with --batch > 1 exports B sequences of one length at the same "
                    "positions, unchecked: pass --no-ort-check, and neither --save-reference "
                    "nor --pad (the checks and references compare one sequence)")
        if a.dynamic_seq:
            p.error("--kv-cache and --dynamic-seq do not combine")
        if a.kv_cache < a.seq + 1:
            p.error(f"--kv-cache {a.kv_cache} leaves no room to decode after --seq {a.seq}")
        if a.seq + a.kv_check_steps > a.kv_cache:
            a.kv_check_steps = a.kv_cache - a.seq
        if a.chunk_out is not None and a.chunk is None:
            p.error("--chunk-out names the chunk graph of --chunk C: give --chunk")
        if a.chunk is not None and not 2 <= a.chunk <= a.kv_cache - a.seq:
            p.error(f"--chunk {a.chunk}: a chunk is 2 to {a.kv_cache - a.seq} tokens (the "
                    f"cache's {a.kv_cache} slots after the --seq {a.seq} prompt; one token is "
                    f"the decode graph)")
    elif a.chunk is not None or a.chunk_out is not None:
        p.error("--chunk and --chunk-out need --kv-cache")
    return a


# Per family: the transformers config class and how our flags map onto its fields.
ARCHES = {"llama", "mistral", "qwen2", "qwen3", "phi3", "gemma", "gemma2", "olmo2", "gpt2",
          "gpt_neox", "phi", "stablelm"}

# Flags that describe the model (refused with --from-pretrained) and their defaults: they
# default to None in the parser so that one given explicitly can be told from a default.
SHAPE_FLAGS = [("--arch", "arch"), ("--layers", "layers"), ("--hidden", "hidden"),
               ("--intermediate", "intermediate"), ("--heads", "heads"),
               ("--kv-heads", "kv_heads"), ("--head-dim", "head_dim"), ("--vocab", "vocab"),
               ("--max-position", "max_position"), ("--rope-theta", "rope_theta"),
               ("--rope-scaling", "rope_scaling"), ("--rms-norm-eps", "rms_norm_eps"),
               ("--tie-embeddings", "tie_embeddings"), ("--norm-init", "norm_init")]
FLAG_DEFAULTS = {"arch": "llama", "layers": 16, "hidden": 2048, "intermediate": 8192,
                 "heads": 32, "kv_heads": 8, "head_dim": 64, "vocab": 128256,
                 "max_position": 131072, "rope_theta": 500000.0, "rope_scaling": "llama3",
                 "rms_norm_eps": 1e-5, "tie_embeddings": True, "norm_init": "random",
                 "dtype": "bf16"}
PROG = "export_llama.py"


class CheckpointError(Exception):
    """A --from-pretrained folder that cannot be exported: printed as one line, exit 1."""


def fail(msg):
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    sys.exit(1)


# config.json's torch_dtype (transformers 4.x; "dtype" in 5.x) -> --dtype
_CONFIG_DTYPES = {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}


def _read_json(path, what="not valid JSON"):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(f"{path}: {what}: {e}") from None
    except OSError as e:
        raise CheckpointError(f"{path}: cannot read: {e.strerror or e}") from None


def _check_safetensors(path):
    """The header of a safetensors file: 8-byte little-endian length, then that much JSON."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError(f"{path}: not a safetensors file ({size} bytes, shorter "
                                      f"than its 8-byte header length)")
            n = int.from_bytes(head, "little")
            if n > size - 8:
                raise CheckpointError(f"{path}: not a safetensors file (header length {n} "
                                      f"exceeds the file's {size - 8} bytes after it)")
            header = f.read(n)
    except OSError as e:
        raise CheckpointError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        meta = json.loads(header.decode("utf-8"))
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
    except (UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(f"{path}: not a safetensors file (header: {e})") from None


def check_pretrained_dir(a):
    """Checks --from-pretrained DIR before anything heavy is imported and fills the flags that
    describe the model from its config.json (arch, dtype unless given, vocab, tied
    embeddings). Raises CheckpointError naming the file and what is wrong."""
    d = a.from_pretrained
    if not os.path.exists(d):
        raise CheckpointError(f"{d}: no such directory")
    if not os.path.isdir(d):
        raise CheckpointError(f"{d}: not a directory (--from-pretrained takes a Hugging Face "
                              f"checkpoint folder)")
    cfg_path = os.path.join(d, "config.json")
    if not os.path.isfile(cfg_path):
        raise CheckpointError(f"{cfg_path}: not found (a Hugging Face checkpoint folder holds "
                              f"config.json)")
    cfg = _read_json(cfg_path)
    if not isinstance(cfg, dict):
        raise CheckpointError(f"{cfg_path}: not a JSON object")
    mt = cfg.get("model_type")
    if mt not in ARCHES:
        raise CheckpointError(f"{cfg_path}: model_type {mt!r} is not supported (supported: "
                              f"{', '.join(sorted(ARCHES))})")
    a.arch = mt
    if a.dtype is None:
        td = cfg.get("torch_dtype", cfg.get("dtype"))
        if td is None:
            a.dtype = "f32"  # what from_pretrained loads without one
        elif td in _CONFIG_DTYPES:
            a.dtype = _CONFIG_DTYPES[td]
        else:
            raise CheckpointError(f"{cfg_path}: torch_dtype {td!r} is not supported (supported: "
                                  f"{', '.join(sorted(_CONFIG_DTYPES))}); pass --dtype")
    vocab = cfg.get("vocab_size")
    if not isinstance(vocab, int) or vocab < 1:
        raise CheckpointError(f"{cfg_path}: vocab_size {vocab!r} is not a positive integer")
    a.vocab = vocab
    a.tie_embeddings = bool(cfg.get("tie_word_embeddings", True))
    a.norm_init = "checkpoint"
    # Weights, in the order transformers looks for them.
    single = os.path.join(d, "model.safetensors")
    index = os.path.join(d, "model.safetensors.index.json")
    bin_single = os.path.join(d, "pytorch_model.bin")
    bin_index = os.path.join(d, "pytorch_model.bin.index.json")
    if os.path.isfile(single):
        _check_safetensors(single)
    elif os.path.isfile(index) or os.path.isfile(bin_index):
        idx_path = index if os.path.isfile(index) else bin_index
        idx = _read_json(idx_path)
        wm = idx.get("weight_map") if isinstance(idx, dict) else None
        if not isinstance(wm, dict) or not wm:
            raise CheckpointError(f"{idx_path}: no weight_map (an index maps tensor names to "
                                  f"shard files)")
        shards = sorted(set(str(v) for v in wm.values()))
        missing = [s_ for s_ in shards if not os.path.isfile(os.path.join(d, s_))]
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise CheckpointError(f"{idx_path}: shard '{missing[0]}' listed there is missing "
                                  f"from {d}{more}")
        if idx_path == index:
            for s_ in shards:
                _check_safetensors(os.path.join(d, s_))
    elif not os.path.isfile(bin_single):
        raise CheckpointError(f"{d}: no weights file (looked for model.safetensors, "
                              f"model.safetensors.index.json, pytorch_model.bin, "
                              f"pytorch_model.bin.index.json)")
    tok = os.path.join(d, "tokenizer.json")
    a.tokenizer_json = None
    if os.path.isfile(tok):
        try:
            from tokenizers import Tokenizer
        except ImportError:
            _read_json(tok)  # no tokenizers package: at least it must be JSON
        else:
            try:
                Tokenizer.from_file(tok)
            except Exception as e:
                msg = str(e).strip().splitlines()
                raise CheckpointError(f"{tok}: not a valid tokenizer "
                                      f"({msg[0] if msg else type(e).__name__})") from None
        a.tokenizer_json = tok


def copy_tokenizer(a, out):
    """--from-pretrained: DIR/tokenizer.json -> OUT_STEM.tokenizer.json (where the sinter Python
    module looks for it beside a library compiled to OUT_STEM.so). Returns its name or None."""
    if not getattr(a, "tokenizer_json", None):
        return None
    import shutil
    dst = (out[:-5] if out.endswith(".onnx") else out) + ".tokenizer.json"
    shutil.copyfile(a.tokenizer_json, dst)
    print(f"[export_llama] tokenizer: {dst}")
    return os.path.basename(dst)


def sidecar_argv(a):
    """vars(a) for the sidecar; the --from-pretrained keys only when it was given (so the
    sidecars of random-weight exports stay as they were)."""
    v = dict(vars(a))
    if not a.from_pretrained:
        v.pop("from_pretrained", None)
        v.pop("tokenizer_json", None)
    if a.chunk is None:  # likewise --chunk
        v.pop("chunk", None)
        v.pop("chunk_out", None)
    return v


def model_description(model, a):
    src = (f"from_pretrained {os.path.basename(os.path.normpath(a.from_pretrained))}"
           if a.from_pretrained else "random init")
    return f"{type(model).__name__} ({src})" + (
        f" + PEFT LoRA r={a.lora_rank} alpha={a.lora_alpha} on {a.lora_targets} "
        f"(seed {a.lora_seed})" if a.lora_targets else "")


def init_description(a):
    if a.from_pretrained:
        return (f"weights of the checkpoint {os.path.basename(os.path.normpath(a.from_pretrained))}"
                f" loaded by AutoModelForCausalLM.from_pretrained in {a.dtype}")
    return "fp32 init on CPU after torch.manual_seed(seed), then cast to dtype"


def build_family_config(a):
    """Config of a non-Llama family with the dimensions of the flags (plain RoPE)."""
    import transformers
    common = dict(vocab_size=a.vocab, hidden_size=a.hidden, intermediate_size=a.intermediate,
                  num_hidden_layers=a.layers, num_attention_heads=a.heads,
                  num_key_value_heads=a.kv_heads, max_position_embeddings=a.max_position,
                  rms_norm_eps=a.rms_norm_eps, tie_word_embeddings=a.tie_embeddings,
                  use_cache=False, attention_dropout=0.0, rope_theta=a.rope_theta)
    # The LayerNorm families' configs take the same fields, the epsilon as layer_norm_eps.
    layer_norm_common = {k: v for k, v in common.items() if k != "rms_norm_eps"}
    layer_norm_common["layer_norm_eps"] = a.rms_norm_eps
    if a.arch == "gpt2":
        return transformers.GPT2Config(
            vocab_size=a.vocab, n_positions=a.max_position, n_embd=a.hidden, n_layer=a.layers,
            n_head=a.heads, n_inner=a.intermediate, activation_function="gelu_new",
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False,
            tie_word_embeddings=a.tie_embeddings)
    if a.arch == "gpt_neox":
        # Pythia's layout: parallel residual, exact GeLU, RoPE on the first quarter of a head.
        return transformers.GPTNeoXConfig(
            vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
            num_attention_heads=a.heads, intermediate_size=a.intermediate,
            rotary_pct=0.25, rotary_emb_base=a.rope_theta,
            max_position_embeddings=a.max_position, layer_norm_eps=a.rms_norm_eps,
            use_parallel_residual=True, hidden_act="gelu", attention_dropout=0.0,
            hidden_dropout=0.0, tie_word_embeddings=a.tie_embeddings, use_cache=False)
    if a.arch == "phi":
        # Phi-2's layout: a parallel block on one LayerNorm, 40% partial rotary, gelu_new.
        return transformers.PhiConfig(
            **layer_norm_common, partial_rotary_factor=0.4, hidden_act="gelu_new",
            resid_pdrop=0.0, embd_pdrop=0.0)
    if a.arch == "stablelm":
        # StableLM 2 1.6B's layout: sequential residuals, LayerNorms, 25% partial rotary.
        return transformers.StableLmConfig(
            **layer_norm_common, partial_rotary_factor=0.25, use_qkv_bias=True,
            use_parallel_residual=False, hidden_act="silu", hidden_dropout=0.0)
    cls = {"mistral": "MistralConfig", "qwen2": "Qwen2Config", "qwen3": "Qwen3Config",
           "phi3": "Phi3Config", "gemma": "GemmaConfig", "gemma2": "Gemma2Config",
           "olmo2": "Olmo2Config"}[a.arch]
    extra = {}
    if a.arch in ("mistral", "qwen2", "qwen3", "gemma", "gemma2"):
        extra["head_dim"] = a.head_dim
    if a.arch in ("mistral", "qwen2", "qwen3"):
        extra["sliding_window"] = None
    if a.arch == "phi3":
        extra.update(pad_token_id=None, resid_pdrop=0.0, embd_pdrop=0.0)
    if a.arch in ("gemma", "gemma2"):
        extra["hidden_activation"] = "gelu_pytorch_tanh"
    if a.arch == "gemma2":
        extra.update(final_logit_softcapping=30.0, attn_logit_softcapping=50.0,
                     query_pre_attn_scalar=a.head_dim, sliding_window=4096)
    return getattr(transformers, cls)(**common, **extra)


def note_dropped_softcap(cfg, attn):
    """Hugging Face's sdpa attention takes no soft-cap: a Gemma 2 config's
    attn_logit_softcapping is then left out of the traced graph and of every PyTorch reference
    built with the same attention. Says so on stderr; returns whether it did."""
    cap = getattr(cfg, "attn_logit_softcapping", None)
    if attn != "sdpa" or not cap:
        return False
    print(f"[export_llama] note: attn_implementation=sdpa leaves out attn_logit_softcapping={cap}"
          " (this export and a PyTorch reference with sdpa attend without the soft-cap);"
          " --attn eager keeps it", file=sys.stderr)
    return True


def build_config(a):
    if a.from_pretrained:
        from transformers import AutoConfig
        try:
            return AutoConfig.from_pretrained(a.from_pretrained, local_files_only=True)
        except Exception as e:
            lines = str(e).strip().splitlines()
            raise CheckpointError(f"{os.path.join(a.from_pretrained, 'config.json')}: "
                                  f"{type(e).__name__}: {lines[0] if lines else ''}") from None
    if a.arch != "llama":
        return build_family_config(a)
    from transformers import LlamaConfig
    rope = {"rope_type": "default", "rope_theta": a.rope_theta}
    if a.rope_scaling == "llama3":
        rope = {"rope_type": "llama3", "rope_theta": a.rope_theta, "factor": 32.0,
                "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192}
    kw = dict(
        vocab_size=a.vocab, hidden_size=a.hidden, intermediate_size=a.intermediate,
        num_hidden_layers=a.layers, num_attention_heads=a.heads,
        num_key_value_heads=a.kv_heads, head_dim=a.head_dim, hidden_act="silu",
        max_position_embeddings=a.max_position, initializer_range=0.02,
        rms_norm_eps=a.rms_norm_eps, use_cache=False, tie_word_embeddings=a.tie_embeddings,
        attention_bias=False, attention_dropout=0.0, mlp_bias=False,
        bos_token_id=128000 if a.vocab > 128001 else None,
        eos_token_id=128001 if a.vocab > 128001 else None, pad_token_id=None)
    import transformers
    if int(transformers.__version__.split(".")[0]) >= 5:
        return LlamaConfig(rope_parameters=rope, **kw)
    # transformers 4.x reads rope_theta and rope_scaling; it would keep rope_parameters as an
    # unknown attribute and build plain RoPE.
    legacy = dict(rope)
    theta = legacy.pop("rope_theta")
    return LlamaConfig(rope_theta=theta,
                       rope_scaling=legacy if a.rope_scaling == "llama3" else None, **kw)


def make_wrapper(model):
    import torch

    class Wrapper(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          use_cache=False).logits

    return Wrapper(model).eval()


def exact_logits(model, ids, mask):
    """The model's own (dtype-rounded) weights evaluated in float64: the reference against which
    both PyTorch's error in the model's dtype and Sinter's are measured."""
    import copy
    import torch
    exact = copy.deepcopy(model).to(torch.float64)
    with torch.no_grad():
        return make_wrapper(exact)(ids, mask).numpy()


def load_pretrained(a, attn):
    """--from-pretrained: the checkpoint's own weights and config, in --dtype."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM
    dt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[a.dtype]
    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    kw = {"dtype": dt} if (major, minor) >= (4, 56) else {"torch_dtype": dt}
    try:
        model = AutoModelForCausalLM.from_pretrained(
            a.from_pretrained, local_files_only=True, attn_implementation=attn, **kw)
    except Exception as e:
        lines = str(e).strip().splitlines()
        raise CheckpointError(f"{a.from_pretrained}: cannot load the checkpoint: "
                              f"{type(e).__name__}: {lines[0] if lines else ''}") from None
    model.config._attn_implementation = attn
    if a.lora_targets:
        model = add_lora(model, a)
    return model.to(dt).eval()


def build_model(cfg, a, attn):
    import torch
    from transformers import AutoModelForCausalLM
    if a.from_pretrained:
        return load_pretrained(a, attn)
    torch.manual_seed(a.seed)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        try:
            cfg._attn_implementation = attn
        except Exception:
            pass
        with torch.device("cpu"):
            model = AutoModelForCausalLM.from_config(cfg)  # fp32 init from the global CPU RNG
    finally:
        torch.set_default_dtype(prev)
    model.config._attn_implementation = attn
    if a.norm_init == "random":
        g = torch.Generator().manual_seed(a.seed + 2)
        with torch.no_grad():
            for name, p in sorted(model.named_parameters()):
                if name.endswith("norm.weight") or (".ln_" in name and name.endswith(".weight")):
                    # Gemma's norms scale by (1 + w): their weights start near 0, not 1.
                    centre = 0.0 if a.arch in ("gemma", "gemma2") else 1.0
                    p.copy_(centre + 0.1 * torch.randn(p.shape, generator=g, dtype=torch.float32))
                elif name.endswith(".bias"):  # zero at init: random so that biases matter
                    p.copy_(0.02 * torch.randn(p.shape, generator=g, dtype=torch.float32))
    if a.tie_embeddings:
        model.tie_weights()
        assert (model.get_output_embeddings().weight.data_ptr() ==
                model.get_input_embeddings().weight.data_ptr())
    if a.lora_targets:
        model = add_lora(model, a)
    dt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[a.dtype]
    model = model.to(dt).eval()
    return model


def add_lora(model, a):
    """PEFT LoRA on --lora-targets, weights from --lora-seed (the base weights are unchanged)."""
    import torch
    from peft import LoraConfig, get_peft_model
    cfg = LoraConfig(r=a.lora_rank, lora_alpha=a.lora_alpha, lora_dropout=0.0, bias="none",
                     target_modules=a.lora_targets.split(","))
    model = get_peft_model(model, cfg)
    g = torch.Generator().manual_seed(a.lora_seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if "lora_A" in name or "lora_B" in name:
                p.copy_(0.05 * torch.randn(p.shape, generator=g, dtype=torch.float32))
    return model


def example_inputs(a):
    import torch
    g = torch.Generator().manual_seed(a.seed + 1)
    ids = torch.randint(0, a.vocab, (a.batch, a.seq), generator=g, dtype=torch.int64)
    mask = torch.ones(a.batch, a.seq, dtype=torch.int64)
    for b in range(a.batch):
        pad = min(b, a.seq - 1) if a.pad != "none" else 0
        if pad:
            mask[b, :pad] = 0 if a.pad == "left" else 1
            mask[b, a.seq - pad:] = 0 if a.pad == "right" else 1
    return ids, mask


def weights_digest(model):
    import hashlib
    import torch
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().contiguous().view(torch.uint8).numpy().tobytes()
                 if t.dtype == torch.bfloat16 else t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def strip_stack_traces(model_proto):
    """Drop per-node stack traces (machine-specific paths); keep the other metadata."""
    def walk(g):
        for n in g.node:
            keep = [(p.key, p.value) for p in n.metadata_props
                    if p.key != "pkg.torch.onnx.stack_trace"]
            del n.metadata_props[:]
            for k, v in keep:
                n.metadata_props.add(key=k, value=v)
            n.doc_string = ""
            for at in n.attribute:
                if at.g is not None and at.g.node:
                    walk(at.g)
                for sg in at.graphs:
                    walk(sg)
    walk(model_proto.graph)
    for f in model_proto.functions:
        for n in f.node:
            n.doc_string = ""


def op_types(model_proto):
    ops = set()

    def walk(g):
        for n in g.node:
            ops.add(f"{n.domain or 'ai.onnx'}:{n.op_type}")
            for at in n.attribute:
                if at.g is not None and at.g.node:
                    walk(at.g)
                for sg in at.graphs:
                    walk(sg)
    walk(model_proto.graph)
    return sorted(ops)


def dump_onnx(model_proto, path, max_vals=8):
    """Node-by-node listing: inputs/outputs, attributes, initializers, value_info."""
    import numpy as np
    from onnx import helper, numpy_helper, TensorProto

    def tname(elem):
        return TensorProto.DataType.Name(elem)

    def vi_str(v):
        t = v.type.tensor_type
        dims = [d.dim_param if d.dim_param else (str(d.dim_value) if d.HasField("dim_value")
                                                  else "?") for d in t.shape.dim]
        shape = "[" + ",".join(dims) + "]" if t.HasField("shape") else "<no shape>"
        return f"{v.name}: {tname(t.elem_type)}{shape}"

    def tensor_str(t):
        s = f"{tname(t.data_type)}{list(t.dims)}"
        try:
            arr = numpy_helper.to_array(t)
            if arr.size <= max_vals:
                s += f" = {arr.tolist()}"
        except Exception as e:  # external data etc.
            s += f" (<{type(e).__name__}>)"
        return s

    def attr_str(at):
        v = helper.get_attribute_value(at)
        if at.type == at.TENSOR:
            return f"{at.name}={tensor_str(at.t)}"
        if at.type == at.GRAPH:
            return f"{at.name}=<graph {at.g.name} {len(at.g.node)} nodes>"
        if isinstance(v, bytes):
            v = v.decode(errors="replace")
        if isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [x.decode(errors="replace") for x in v]
        return f"{at.name}={v}"

    m = model_proto
    g = m.graph
    lines = []
    lines.append(f"ir_version={m.ir_version} producer={m.producer_name} {m.producer_version}")
    lines.append("opset_import: " + ", ".join(f"{o.domain or 'ai.onnx'}={o.version}"
                                               for o in m.opset_import))
    lines.append(f"graph {g.name}: {len(g.node)} nodes, {len(g.initializer)} initializers, "
                 f"{len(g.value_info)} value_info")
    lines.append("op types: " + ", ".join(op_types(m)))
    lines.append("")
    lines.append("== inputs")
    lines += ["  " + vi_str(v) for v in g.input]
    lines.append("== outputs")
    lines += ["  " + vi_str(v) for v in g.output]
    lines.append("== initializers")
    total = 0
    for t in g.initializer:
        n = int(np.prod(t.dims)) if len(t.dims) else 1
        total += n
        ext = " (external)" if t.data_location == TensorProto.EXTERNAL else ""
        lines.append(f"  {t.name}: {tensor_str(t)}{ext}")
    lines.append(f"  total elements: {total}")
    if m.functions:
        lines.append("== functions")
        for f in m.functions:
            lines.append(f"  {f.domain}:{f.name} ({len(f.node)} nodes)")
    lines.append("== nodes")
    for i, n in enumerate(g.node):
        dom = n.domain or "ai.onnx"
        lines.append(f"  [{i}] {dom}:{n.op_type} name={n.name}")
        lines.append(f"       in : {list(n.input)}")
        lines.append(f"       out: {list(n.output)}")
        for at in n.attribute:
            lines.append(f"       attr {attr_str(at)}")
        meta = {p.key: p.value for p in n.metadata_props}
        if "pkg.torch.onnx.fx_node" in meta:
            lines.append(f"       fx : {meta['pkg.torch.onnx.fx_node'][:300]}")
        if "pkg.torch.onnx.name_scopes" in meta:
            lines.append(f"       scope: {meta['pkg.torch.onnx.name_scopes']}")
    lines.append("== value_info")
    lines += ["  " + vi_str(v) for v in g.value_info]
    non_static = [v.name for v in list(g.value_info) + list(g.input) + list(g.output)
                  if (not v.type.tensor_type.HasField("shape")) or any(
                      d.dim_param or not d.HasField("dim_value")
                      for d in v.type.tensor_type.shape.dim)]
    lines.append(f"== non-static value_info/io entries: {len(non_static)} {non_static[:20]}")
    produced = {o for n in g.node for o in n.output}
    missing = [o for o in produced if o and o not in {v.name for v in g.value_info}
               and o not in {v.name for v in g.output}]
    lines.append(f"== node outputs without value_info: {len(missing)} {sorted(missing)[:20]}")
    text = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    return len(text)


def export_once(wrapper, ids, mask, a):
    import torch
    kw = {}
    if getattr(a, "dynamic_seq", False):
        seq = torch.export.Dim("seq", min=2, max=4096)
        kw["dynamic_shapes"] = {"input_ids": {1: seq}, "attention_mask": {1: seq}}
    prog = torch.onnx.export(
        wrapper, (ids, mask), dynamo=True, opset_version=a.opset,
        input_names=["input_ids", "attention_mask"], output_names=["logits"],
        external_data=False, optimize=True, verbose=False, **kw)
    return prog


def save_export(prog, out, use_ext, keep_stack_traces):
    """Saves an ONNXProgram to `out` (initializers in OUT.data when use_ext, else inline),
    stack traces stripped unless kept; returns (ModelProto as saved, checker verdict)."""
    import onnx
    if use_ext:
        prog.save(out, external_data=True)
        if not keep_stack_traces:
            mp = onnx.load(out, load_external_data=False)
            strip_stack_traces(mp)
            onnx.save(mp, out, save_as_external_data=False)  # initializers stay external
    else:
        # Single self-contained file: materialise everything inline.
        prog.save(out, external_data=False)
        mp = onnx.load(out, load_external_data=True)
        if not keep_stack_traces:
            strip_stack_traces(mp)
        onnx.save(mp, out, save_as_external_data=False)
    mp = onnx.load(out, load_external_data=not use_ext)
    try:
        onnx.checker.check_model(out if use_ext else mp)
        checker = "ok"
    except Exception as e:
        checker = f"{type(e).__name__}: {e}"[:500]
    return mp, checker


# ---- --kv-cache: prefill + decode graphs with the KV caches as inputs/outputs ----------------

def kv_names(n_layers):
    """(past names, present names), interleaved per layer: key_0, value_0, key_1, ..."""
    past, present = [], []
    for i in range(n_layers):
        past += [f"past_key_{i}", f"past_value_{i}"]
        present += [f"present_key_{i}", f"present_value_{i}"]
    return past, present


def kv_cache_shape(cfg, max_len, batch=1):
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    kv_heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads  # GPT-2: MHA
    return [batch, kv_heads, max_len, head_dim]


def zero_caches(cfg, max_len, dtype, device="cpu", batch=1):
    import torch
    shape = kv_cache_shape(cfg, max_len, batch)
    return [torch.zeros(shape, dtype=dtype, device=device)
            for _ in range(2 * cfg.num_hidden_layers)]


class _IndexCopyCache:
    """The smallest object Hugging Face's attention accepts as past_key_values: update() writes
    the new keys/values into this layer's cache tensors out of place (index_copy along the
    sequence axis: Transpose + ScatterND + Transpose in ONNX) and keeps the results."""

    def __init__(self, caches, positions, return_fresh):
        self.caches = list(caches)
        self.positions = positions
        self.return_fresh = return_fresh
        self.out = [None] * len(self.caches)

    def update(self, key_states, value_states, layer_idx, *args, **kwargs):
        kc = self.caches[2 * layer_idx].index_copy(2, self.positions, key_states)
        vc = self.caches[2 * layer_idx + 1].index_copy(2, self.positions, value_states)
        self.out[2 * layer_idx], self.out[2 * layer_idx + 1] = kc, vc
        # Prefill attends over the fresh keys/values only (HF's causal sdpa path); decode over
        # the whole updated cache under the position mask.
        return (key_states, value_states) if self.return_fresh else (kc, vc)


def _embed(m, input_ids, position_ids):
    """The token embeddings as the model's own forward computes them (Gemma scales them by
    sqrt(hidden_size), rounded to the model's dtype; GPT-2 adds its learned positions)."""
    import torch
    if m.config.model_type == "gpt2":
        return m.transformer.wte(input_ids) + m.transformer.wpe(position_ids)
    if m.config.model_type == "gpt_neox":
        return m.gpt_neox.embed_in(input_ids)
    x = m.model.embed_tokens(input_ids)
    # transformers >= 5 scales inside Gemma's embedding module (an `embed_scale` buffer); 4.x
    # in the model's forward.
    if m.config.model_type in ("gemma", "gemma2") and not hasattr(m.model.embed_tokens,
                                                                   "embed_scale"):
        x = x * torch.tensor(m.config.hidden_size ** 0.5, dtype=x.dtype)
    return x


def _run_layers(m, x, position_ids, mask, cache):
    import torch
    if m.config.model_type == "gpt2":  # learned positions (in _embed), LayerNorm blocks
        for block in m.transformer.h:
            x = block(x, past_key_values=cache, cache_position=position_ids[0],
                      attention_mask=mask)
            if isinstance(x, tuple):
                x = x[0]
        return m.lm_head(m.transformer.ln_f(x))
    if m.config.model_type == "gpt_neox":  # its layers take the cache as layer_past
        pe = m.gpt_neox.rotary_emb(x, position_ids)
        for layer in m.gpt_neox.layers:
            x = layer(x, attention_mask=mask, position_embeddings=pe, layer_past=cache)
            if isinstance(x, tuple):
                x = x[0]
        # The head by the generic accessor: `embed_out` in older transformers, `lm_head` later.
        return m.get_output_embeddings()(m.gpt_neox.final_layer_norm(x))
    mm = m.model
    pe = mm.rotary_emb(x, position_ids)
    for layer in mm.layers:
        x = layer(x, attention_mask=mask, position_embeddings=pe, past_key_values=cache)
        if isinstance(x, tuple):  # older transformers return (hidden_states, ...)
            x = x[0]
    final_norm = mm.final_layernorm if m.config.model_type == "phi" else mm.norm
    logits = m.lm_head(final_norm(x))
    cap = getattr(m.config, "final_logit_softcapping", None)
    if cap:  # Gemma 2
        logits = torch.tanh(logits / cap) * cap
    return logits


def make_kv_wrappers(model, max_len, seq):
    """(prefill, decode) modules over `model`'s own Hugging Face submodules.

    prefill(input_ids [B, seq], *past) -> (logits [B, seq, V], *present): positions 0..seq-1,
        written to cache slots 0..seq-1, causal attention over the fresh keys/values.
    decode(input_ids [B, 1], cache_position [1], *past) -> (logits [B, 1, V], *present): writes
        slot cache_position, attends to slots 0..cache_position.
    past/present are interleaved per layer (key_0, value_0, key_1, ...), [B, kv heads, max_len,
    head_dim]: the B sequences share the positions (--batch, unpadded)."""
    import torch

    class Prefill(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, *past):
            positions = torch.arange(seq, dtype=torch.int64, device=input_ids.device)
            x = _embed(self.m, input_ids, positions.unsqueeze(0))
            cache = _IndexCopyCache(past, positions, return_fresh=True)
            # attention_mask=None: HF's sdpa path takes its causal form (is_causal=True); eager
            # attention (Gemma 2 under transformers >= 5 refuses sdpa) needs the mask spelled.
            mask = None
            if getattr(self.m.config, "_attn_implementation", "sdpa") == "eager":
                mask = torch.where(positions[None, :] <= positions[:, None], 0.0,
                                   torch.finfo(x.dtype).min).to(x.dtype)[None, None]
            logits = _run_layers(self.m, x, positions.unsqueeze(0), mask, cache)
            return (logits, *cache.out)

    class Decode(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, cache_position, *past):
            x = _embed(self.m, input_ids, cache_position.unsqueeze(0))
            keys = torch.arange(max_len, dtype=torch.int64, device=input_ids.device)
            mask = torch.where(keys[None, :] <= cache_position[:, None], 0.0,
                               torch.finfo(x.dtype).min).to(x.dtype)[None, None]
            cache = _IndexCopyCache(past, cache_position, return_fresh=False)
            logits = _run_layers(self.m, x, cache_position.unsqueeze(0), mask, cache)
            return (logits, *cache.out)

    return Prefill(model).eval(), Decode(model).eval()


def hf_generate_reference(model, prompt, steps, tokens=None):
    """Hugging Face's own forward with a DynamicCache: `steps` decode steps after `prompt`,
    feeding `tokens` (teacher forcing) or, when None, the greedy ones. Returns (prefill logits
    [1, S, V], [decode logits [1, 1, V]] * steps, tokens [steps]); tokens[j] is fed at step j
    (greedy: tokens[0] = argmax of the prefill's last row)."""
    import torch
    from transformers import DynamicCache
    try:
        cache = DynamicCache(config=model.config)
    except TypeError:
        cache = DynamicCache()
    with torch.no_grad():
        out = model(input_ids=prompt, past_key_values=cache, use_cache=True)
        prefill = out.logits
        cache = out.past_key_values
        tok = prefill[0, -1].float().argmax()
        fed = []
        decode = []
        for j in range(steps):
            if tokens is not None:
                tok = torch.tensor(int(tokens[j]))
            fed.append(int(tok))
            out = model(input_ids=tok.view(1, 1), past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            decode.append(out.logits)
            tok = out.logits[0, -1].float().argmax()
    return prefill, decode, fed


def hf_chunk_reference(model, prompt, chunks):
    """Hugging Face's forward with a DynamicCache: the prompt, then each chunk [1, C] after it.
    Returns [chunk logits [1, C, V]]."""
    import torch
    from transformers import DynamicCache
    try:
        cache = DynamicCache(config=model.config)
    except TypeError:
        cache = DynamicCache()
    out = []
    with torch.no_grad():
        cache = model(input_ids=prompt, past_key_values=cache, use_cache=True).past_key_values
        for c in chunks:
            r = model(input_ids=c, past_key_values=cache, use_cache=True)
            cache = r.past_key_values
            out.append(r.logits)
    return out


def chunk_generate(run_prefill, run_chunk, prompt, chunks, caches):
    """The prompt through prefill, then each chunk [B, C] at the next C positions through
    run_chunk(ids, positions [C], caches): [chunk logits] as float32 numpy."""
    import numpy as np
    outs = run_prefill(prompt, caches)
    caches, pos, got = list(outs[1:]), prompt.shape[1], []
    for c in chunks:
        outs = run_chunk(c, np.arange(pos, pos + c.shape[1], dtype=np.int64), caches)
        got.append(np.asarray(outs[0], dtype=np.float32))
        caches, pos = list(outs[1:]), pos + c.shape[1]
    return got


def kv_generate(run_prefill, run_decode, prompt, tokens, caches):
    """Teacher-forced generation through prefill/decode callables (numpy or torch in, the
    graphs' outputs back): returns (prefill logits, [decode logits]) as float32 numpy."""
    import numpy as np
    seq = prompt.shape[1]
    outs = run_prefill(prompt, caches)
    prefill, caches = np.asarray(outs[0], dtype=np.float32), list(outs[1:])
    decode = []
    for j, t in enumerate(tokens):
        ids = np.array([[t]], dtype=np.int64)
        pos = np.array([seq + j], dtype=np.int64)
        outs = run_decode(ids, pos, caches)
        decode.append(np.asarray(outs[0], dtype=np.float32))
        caches = list(outs[1:])
    return prefill, decode


def _max_diffs(got, ref):
    import numpy as np
    pre = float(np.max(np.abs(got[0] - ref[0])))
    dec = [float(np.max(np.abs(g - r))) for g, r in zip(got[1], ref[1])]
    return pre, dec


def _fmt_diffs(pre, dec):
    return f"prefill {pre:.3e}, decode [{', '.join(f'{d:.3e}' for d in dec)}]"


def main_kv(a, cfg):
    """--kv-cache: writes the prefill graph to OUT and the decode graph to --decode-out."""
    import numpy as np
    import torch
    import transformers

    out = a.out
    dec_out = a.decode_out or ((out[:-5] if out.endswith(".onnx") else out) + ".decode.onnx")
    chunk_out = None
    if a.chunk:
        chunk_out = a.chunk_out or ((out[:-5] if out.endswith(".onnx") else out) + ".chunk.onnx")
    for p_ in (out, dec_out, chunk_out or out):
        os.makedirs(os.path.dirname(os.path.abspath(p_)), exist_ok=True)
    max_len, seq = a.kv_cache, a.seq
    ids, _ = example_inputs(a)
    attn = "sdpa" if a.attn == "auto" else a.attn
    model = build_model(cfg, a, attn)
    note_dropped_softcap(cfg, attn)
    dt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[a.dtype]
    prefill, decode = make_kv_wrappers(model, max_len, seq)
    past, present = kv_names(cfg.num_hidden_layers)
    caches = zero_caches(cfg, max_len, dt, batch=a.batch)
    cache_shape = kv_cache_shape(cfg, max_len, a.batch)
    n_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    use_ext = n_bytes > EXTERNAL_DATA_THRESHOLD

    # --chunk: the decode module at C positions (its mask and cache writes take any count);
    # the checks run chunk_count chunks of random tokens after the prompt.
    chunk_count = min(2, (max_len - seq) // a.chunk) if a.chunk else 0
    gc = torch.Generator().manual_seed(a.seed + 5)
    chunks = [torch.randint(0, a.vocab, (a.batch, a.chunk), generator=gc, dtype=torch.int64)
              for _ in range(chunk_count)]
    graph_specs = [
        ("prefill", out, prefill, (ids, *caches), ["input_ids"] + past, [a.batch, seq]),
        ("decode", dec_out, decode,
         (ids[:, :1].clone(), torch.tensor([seq], dtype=torch.int64), *caches),
         ["input_ids", "cache_position"] + past, [a.batch, 1])]
    if a.chunk:
        graph_specs.append(
            ("chunk", chunk_out, decode,
             (chunks[0], torch.arange(seq, seq + a.chunk, dtype=torch.int64), *caches),
             ["input_ids", "cache_position"] + past, [a.batch, a.chunk]))
    graphs = {}
    with torch.no_grad():
        for name, path, mod, args, in_names, out_shape in graph_specs:
            try:
                prog = torch.onnx.export(
                    mod, args, dynamo=True, opset_version=a.opset, input_names=in_names,
                    output_names=["logits"] + present, external_data=False, optimize=True,
                    verbose=False)
            except Exception:
                print(f"[export_llama] {name} export (attn={attn}) failed:", file=sys.stderr)
                traceback.print_exc()
                return 1
            mp, checker = save_export(prog, path, use_ext, a.keep_stack_traces)
            ops = op_types(mp)
            print(f"[export_llama] {name} {path}: attn={attn} opset={a.opset} dtype={a.dtype} "
                  f"max_cache={max_len} bytes={os.path.getsize(path)} external_data={use_ext} "
                  f"checker={checker}")
            print(f"[export_llama] {name} op types ({len(ops)}): {' '.join(ops)}")
            graphs[name] = {"path": path, "mp": mp, "checker": checker, "ops": ops,
                            "inputs": in_names, "ids_shape": out_shape}
            del prog

    # Checks: the wrappers (PyTorch) and the graphs (onnxruntime) against Hugging Face's own
    # forward with a DynamicCache, teacher-forced on the reference's greedy tokens.
    # Random (not greedy) decode tokens: a random tiny model's greedy output tends to repeat
    # one token, which would leave the cache rows indistinguishable but for RoPE.
    steps = a.kv_check_steps
    g = torch.Generator().manual_seed(a.seed + 3)
    tokens = torch.randint(0, a.vocab, (steps,), generator=g, dtype=torch.int64).tolist()
    torch_check, ort_result, ref, ref_chunks = "skipped", "skipped", None, None
    if not a.no_ort_check and not use_ext:
        ref_pre, ref_dec, tokens = hf_generate_reference(model, ids, steps, tokens)
        ref = (ref_pre.float().numpy(), [d.float().numpy() for d in ref_dec])

        def t_prefill(p_, c):
            with torch.no_grad():
                return [o.float().numpy() if i == 0 else o
                        for i, o in enumerate(prefill(torch.as_tensor(p_), *c))]

        def t_decode(i_, pos, c):
            with torch.no_grad():
                return [o.float().numpy() if i == 0 else o for i, o in
                        enumerate(decode(torch.as_tensor(i_), torch.as_tensor(pos), *c))]

        got = kv_generate(t_prefill, t_decode, ids.numpy(), tokens, zero_caches(cfg, max_len, dt))
        pre_diff, dec_diffs = _max_diffs(got, ref)
        torch_check = "max_abs_diff " + _fmt_diffs(pre_diff, dec_diffs)
        print(f"[export_llama] wrappers (torch) vs HF DynamicCache, decode tokens {tokens}: "
              f"{torch_check}")
        # The wrappers run Hugging Face's own modules: the prefill matches exactly and a decode
        # step within a few ulps (families_export.sh's tiny bf16 models: up to 0.7 % of the
        # logits' magnitude). More means the wrappers compute another model (transformers 5
        # moved Gemma's embedding scale into the embedding module: 8.5 %): the export is wrong.
        scale = max(float(np.max(np.abs(ref[0]))), 1e-30)
        bound = (1e-4 if a.dtype == "f32" else 3e-2) * scale
        if max([pre_diff, *dec_diffs]) > bound:
            raise SystemExit(f"[export_llama] error: the export wrappers differ from Hugging "
                             f"Face's forward by more than {bound:.3e} ({torch_check}); the "
                             f"graphs would not be this model")
        if chunks:
            ref_chunks = [c.float().numpy() for c in hf_chunk_reference(model, ids, chunks)]
            got = chunk_generate(t_prefill, t_decode, ids.numpy(), [c.numpy() for c in chunks],
                                 zero_caches(cfg, max_len, dt))
            chunk_diffs = [float(np.max(np.abs(g_ - r_))) for g_, r_ in zip(got, ref_chunks)]
            chunk_check = "max_abs_diff " + ", ".join(f"{d:.3e}" for d in chunk_diffs)
            torch_check += f"; chunks of {a.chunk}: {chunk_check}"
            print(f"[export_llama] chunk wrapper (torch) vs HF DynamicCache, {chunk_count} "
                  f"chunks of {a.chunk} after the prompt: {chunk_check}")
            if max(chunk_diffs) > bound:
                raise SystemExit(f"[export_llama] error: the chunk wrapper differs from Hugging "
                                 f"Face's forward by more than {bound:.3e} ({chunk_check})")
        try:
            import onnxruntime as ort
            provs = [p_ for p_ in ("CUDAExecutionProvider", "CPUExecutionProvider")
                     if p_ in ort.get_available_providers()]
            s_pre = ort.InferenceSession(out, providers=provs)
            s_dec = ort.InferenceSession(dec_out, providers=provs)
            np_dt = np.float32 if a.dtype == "f32" else None

            def o_prefill(p_, c):
                return s_pre.run(None, {"input_ids": p_, **dict(zip(past, c))})

            def o_decode(i_, pos, c):
                return s_dec.run(None, {"input_ids": i_, "cache_position": pos,
                                        **dict(zip(past, c))})

            if np_dt is None:
                raise RuntimeError("bf16 graphs: numpy has no bfloat16 to feed the caches "
                                   "(export with --dtype f32 for this check)")
            got = kv_generate(o_prefill, o_decode, ids.numpy(), tokens,
                              [c.numpy() for c in zero_caches(cfg, max_len, dt)])
            ort_result = f"{provs[0]}: max_abs_diff " + _fmt_diffs(*_max_diffs(got, ref))
            if chunks:
                s_chunk = ort.InferenceSession(chunk_out, providers=provs)

                def o_chunk(i_, pos, c):
                    return s_chunk.run(None, {"input_ids": i_, "cache_position": pos,
                                              **dict(zip(past, c))})

                got = chunk_generate(o_prefill, o_chunk, ids.numpy(),
                                     [c.numpy() for c in chunks],
                                     [c.numpy() for c in zero_caches(cfg, max_len, dt)])
                ort_result += ", chunks [" + ", ".join(
                    f"{float(np.max(np.abs(g_ - r_))):.3e}" for g_, r_ in zip(got, ref_chunks)) + "]"
            ort_result += f" (ref max |x| {float(np.max(np.abs(ref[0]))):.3e})"
        except Exception as e:
            ort_result = f"failed: {type(e).__name__}: {str(e)[:300]}"
        print(f"[export_llama] onnxruntime vs HF DynamicCache: {ort_result}")

    ref_files = {}
    if a.save_reference:
        if ref is None:
            ref_pre, ref_dec, tokens = hf_generate_reference(model, ids, steps, tokens)
            ref = (ref_pre.float().numpy(), [d.float().numpy() for d in ref_dec])
        pstem = out[:-5] if out.endswith(".onnx") else out
        dstem = dec_out[:-5] if dec_out.endswith(".onnx") else dec_out
        arrays = {
            pstem + ".input_ids.npy": ids.numpy(),
            pstem + ".logits.npy": ref[0].astype(np.float32),
            dstem + ".input_ids.npy": np.array(tokens, dtype=np.int64).reshape(-1, 1, 1),
            dstem + ".cache_position.npy":
                np.arange(seq, seq + len(tokens), dtype=np.int64).reshape(-1, 1),
            dstem + ".logits.npy": np.stack(ref[1]).astype(np.float32),
        }
        # The same weights evaluated in float64 on the same tokens: the reference of the 1.5x
        # rule (check_fixture.py).
        import copy
        exact_pre, exact_dec, _ = hf_generate_reference(
            copy.deepcopy(model).to(torch.float64), ids, steps, tokens)
        arrays[pstem + ".logits_exact.npy"] = exact_pre.float().numpy()
        arrays[dstem + ".logits_exact.npy"] = np.stack(
            [d.float().numpy() for d in exact_dec]).astype(np.float32)
        if chunks:
            cstem = chunk_out[:-5] if chunk_out.endswith(".onnx") else chunk_out
            if ref_chunks is None:
                ref_chunks = [c.float().numpy() for c in hf_chunk_reference(model, ids, chunks)]
            exact_chunks = hf_chunk_reference(copy.deepcopy(model).to(torch.float64), ids, chunks)
            arrays[cstem + ".input_ids.npy"] = torch.stack(chunks).numpy()
            arrays[cstem + ".cache_position.npy"] = np.arange(
                seq, seq + chunk_count * a.chunk, dtype=np.int64).reshape(chunk_count, a.chunk)
            arrays[cstem + ".logits.npy"] = np.stack(ref_chunks).astype(np.float32)
            arrays[cstem + ".logits_exact.npy"] = np.stack(
                [c.float().numpy() for c in exact_chunks]).astype(np.float32)
        for path, arr in arrays.items():
            np.save(path, arr)
            ref_files[os.path.basename(path)] = list(arr.shape)
    for name, dump in (("prefill", a.dump), ("decode", a.decode_dump)):
        if dump:
            n = dump_onnx(graphs[name]["mp"], dump)
            print(f"[export_llama] {name} dump: {dump} ({n} bytes)")

    import onnx
    tok_name = copy_tokenizer(a, out)
    cache_io = {n: cache_shape + [a.dtype] for n in past}
    cache_out = {n: cache_shape + [a.dtype] for n in present}
    for name in graphs:
        g = graphs[name]
        inputs = {"input_ids": g["ids_shape"] + ["int64"]}
        if name != "prefill":
            inputs["cache_position"] = [g["ids_shape"][1], "int64"]
        inputs.update(cache_io)
        side = {
            "model": model_description(model, a),
            "graph": name,
            "kv_cache": {
                "max_len": max_len, "layers": cfg.num_hidden_layers, "shape": cache_shape,
                "dtype": a.dtype, "prefill": os.path.basename(out),
                "decode": os.path.basename(dec_out),
                **({"chunk": os.path.basename(chunk_out)} if chunk_out else {}),
                "state_pairs": dict(zip(past, present)),
                "semantics": "prefill: positions 0..seq-1 written to cache slots 0..seq-1, "
                             "causal attention over the prompt; decode: writes slot "
                             "cache_position, attends to slots 0..cache_position" +
                             ("; chunk: writes the slots cache_position[0..C), each token "
                              "attends to the slots up to its own" if chunk_out else ""),
            },
            "seed": a.seed, "input_ids_seed": a.seed + 1, "dtype": a.dtype,
            "init": init_description(a),
            "norm_init": a.norm_init,
            "batch": a.batch, "seq": seq, "opset": a.opset,
            "attn_implementation": attn,
            "attn_errors": {},
            "external_data": os.path.basename(g["path"]) + ".data" if use_ext else None,
            "param_bytes": n_bytes,
            "weights_sha256": weights_digest(model),
            "op_types": g["ops"],
            "onnx_checker": g["checker"],
            "torch_wrapper_check": torch_check,
            "onnxruntime_check": ort_result,
            "check_steps": steps,
            "check_decode_tokens": tokens,
            "check_decode_tokens_seed": a.seed + 3,
            "reference_files": ref_files,
            "inputs": inputs,
            "outputs": {"logits": g["ids_shape"] + [a.vocab, a.dtype], **cache_out},
            "example_input_ids": ids.tolist(),
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                         "onnx": onnx.__version__},
            "config": cfg.to_dict(),
            "argv": {k: (os.path.basename(os.path.normpath(v)) if k in (
                "out", "dump", "decode_out", "decode_dump", "from_pretrained", "tokenizer_json",
                "chunk_out")
                and v else v) for k, v in sidecar_argv(a).items()},
        }
        if tok_name:
            side["tokenizer"] = tok_name
        stem = g["path"][:-5] if g["path"].endswith(".onnx") else g["path"]
        with open(stem + ".json", "w") as f:
            json.dump(side, f, indent=1, sort_keys=True, default=str)
    return 0


def main(argv=None):
    a = parse_args(argv)
    try:
        return _main(a)
    except CheckpointError as e:
        fail(e)


def _main(a):
    import numpy as np
    import torch
    import onnx
    import transformers

    out = a.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    cfg = build_config(a)
    if a.kv_cache is not None:
        return main_kv(a, cfg)
    ids, mask = example_inputs(a)

    attempts = ["sdpa", "eager"] if a.attn == "auto" else [a.attn]
    prog, used, errors, model = None, None, {}, None
    for attn in attempts:
        try:
            model = build_model(cfg, a, attn)
            wrapper = make_wrapper(model)
            with torch.no_grad():
                prog = export_once(wrapper, ids, mask, a)
            used = attn
            break
        except CheckpointError:
            raise
        except Exception as e:
            errors[attn] = f"{type(e).__name__}: {e}"[:2000]
            print(f"[export_llama] export with attn_implementation={attn} failed:",
                  file=sys.stderr)
            traceback.print_exc()
    if prog is None:
        print("[export_llama] all export attempts failed", file=sys.stderr)
        return 1
    note_dropped_softcap(cfg, used)

    n_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    use_ext = n_bytes > EXTERNAL_DATA_THRESHOLD
    data_name = os.path.basename(out) + ".data"
    mp, checker = save_export(prog, out, use_ext, a.keep_stack_traces)
    ops = op_types(mp)
    print(f"[export_llama] {out}: attn={used} opset={a.opset} dtype={a.dtype} "
          f"bytes={os.path.getsize(out)} external_data={use_ext} checker={checker}")
    print("[export_llama] op types (%d): %s" % (len(ops), " ".join(ops)))

    with torch.no_grad():
        ref = make_wrapper(model)(ids, mask).float().numpy()
    ort_result = "skipped"
    if not a.no_ort_check and not use_ext:
        try:
            import onnxruntime as ort
            provs = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider")
                     if p in ort.get_available_providers()]
            sess = ort.InferenceSession(out, providers=provs)
            got = sess.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})[0]
            got = np.asarray(got, dtype=np.float32)
            diff = float(np.max(np.abs(got - ref)))
            ort_result = (f"{provs[0]}: max_abs_diff={diff:.3e} "
                          f"(ref max |x| {float(np.max(np.abs(ref))):.3e})")
        except Exception as e:
            ort_result = f"failed: {type(e).__name__}: {str(e)[:300]}"
        print(f"[export_llama] onnxruntime vs torch: {ort_result}")
    if a.save_reference:
        stem = out[:-5] if out.endswith(".onnx") else out
        np.save(stem + ".input_ids.npy", ids.numpy())
        np.save(stem + ".attention_mask.npy", mask.numpy())
        np.save(stem + ".logits.npy", ref.astype(np.float32))
        np.save(stem + ".logits_exact.npy", exact_logits(model, ids, mask).astype(np.float32))
    if a.dump:
        n = dump_onnx(mp, a.dump)
        print(f"[export_llama] dump: {a.dump} ({n} bytes)")

    tok_name = copy_tokenizer(a, out)
    side = {
        "model": model_description(model, a),
        "seed": a.seed,
        "input_ids_seed": a.seed + 1,
        "dtype": a.dtype,
        "init": init_description(a),
        "norm_init": a.norm_init,
        "batch": a.batch, "seq": a.seq, "opset": a.opset,
        "attn_implementation": used,
        "attn_errors": errors,
        "external_data": data_name if use_ext else None,
        "param_bytes": n_bytes,
        "weights_sha256": weights_digest(model),
        "op_types": ops,
        "onnx_checker": checker,
        "onnxruntime_check": ort_result,
        "inputs": {"input_ids": [a.batch, a.seq, "int64"],
                   "attention_mask": [a.batch, a.seq, "int64"]},
        "outputs": {"logits": [a.batch, a.seq, a.vocab, a.dtype]},
        "example_input_ids": ids.tolist(),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "onnx": onnx.__version__},
        "config": cfg.to_dict(),
        "argv": {k: (os.path.basename(os.path.normpath(v)) if k in (
            "out", "dump", "from_pretrained", "tokenizer_json") and v else v)
            for k, v in sidecar_argv(a).items()},
    }
    if tok_name:
        side["tokenizer"] = tok_name
    stem = out[:-5] if out.endswith(".onnx") else out
    with open(stem + ".json", "w") as f:
        json.dump(side, f, indent=1, sort_keys=True, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
