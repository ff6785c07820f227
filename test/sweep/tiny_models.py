#!/usr/bin/env python3
"""Saves a tiny random Hugging Face model of one architecture (save_pretrained), for
optimum_sweep.sh to export with optimum-cli and compile with Sinter. Hidden size 64, 2 layers,
vocabularies of 256, images of 32x32: each export is a few MB.

    python3 test/sweep/tiny_models.py ARCH OUT_DIR      (ARCH: one of ARCHES below)
"""
import sys

import torch
import transformers as T

torch.manual_seed(0)
small = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
cfgs = {
 "bert": (lambda: T.BertConfig(vocab_size=256, max_position_embeddings=64, **small), T.BertModel),
 "roberta": (lambda: T.RobertaConfig(vocab_size=256, max_position_embeddings=80, **small), T.RobertaModel),
 "distilbert": (lambda: T.DistilBertConfig(vocab_size=256, dim=64, n_layers=2, n_heads=4, hidden_dim=128, max_position_embeddings=64), T.DistilBertModel),
 "vit": (lambda: T.ViTConfig(image_size=32, patch_size=8, **small), T.ViTForImageClassification),
 "deit": (lambda: T.DeiTConfig(image_size=32, patch_size=8, **small), T.DeiTForImageClassification),
 "resnet": (lambda: T.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10), T.ResNetForImageClassification),
 "convnext": (lambda: T.ConvNextConfig(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2, image_size=32), T.ConvNextForImageClassification),
 "mobilenet_v2": (lambda: T.MobileNetV2Config(image_size=32, depth_multiplier=0.35), T.MobileNetV2ForImageClassification),
 "wav2vec2": (lambda: T.Wav2Vec2Config(vocab_size=32, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, **small), T.Wav2Vec2ForCTC),
 "whisper": (lambda: T.WhisperConfig(vocab_size=256, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=16, max_source_positions=1500, max_target_positions=32, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, suppress_tokens=[], begin_suppress_tokens=[]), T.WhisperForConditionalGeneration),
 "t5": (lambda: T.T5Config(vocab_size=256, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, decoder_start_token_id=0), T.T5ForConditionalGeneration),
 "gpt2": (lambda: T.GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=64), T.GPT2LMHeadModel),
 "mistral": (lambda: T.MistralConfig(vocab_size=256, num_key_value_heads=2, max_position_embeddings=64, **small), T.MistralForCausalLM),
 "phi3": (lambda: T.Phi3Config(vocab_size=256, num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0, **small), T.Phi3ForCausalLM),
 "gemma": (lambda: T.GemmaConfig(vocab_size=256, num_key_value_heads=2, head_dim=16, max_position_embeddings=64, **small), T.GemmaForCausalLM),
 "falcon": (lambda: T.FalconConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, new_decoder_architecture=False, multi_query=True, parallel_attn=True, bias=False, alibi=False), T.FalconForCausalLM),
 "opt": (lambda: T.OPTConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, ffn_dim=128, max_position_embeddings=64, word_embed_proj_dim=64), T.OPTForCausalLM),
 "bloom": (lambda: T.BloomConfig(vocab_size=256, hidden_size=64, n_layer=2, n_head=4), T.BloomForCausalLM),
 "clip": (lambda: T.CLIPConfig(text_config=dict(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, max_position_embeddings=32), vision_config=dict(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128), projection_dim=32), T.CLIPModel),
}
ARCHES = sorted(cfgs)

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in cfgs:
        sys.exit(__doc__ + "ARCH: " + " ".join(ARCHES))
    arch, out = sys.argv[1], sys.argv[2]
    make, cls = cfgs[arch]
    cls(make()).eval().save_pretrained(out)
    print("saved", arch, "to", out)
