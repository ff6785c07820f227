#!/usr/bin/env python3
"""Saves a tiny random Hugging Face model of one architecture (save_pretrained), for
optimum_sweep.sh to export with optimum-cli and compile with Sinter. Hidden size 64, 2 layers,
vocabularies of 256, images of 32x32: each export is a few MB.

    python3 test/sweep/tiny_models.py ARCH OUT_DIR [TASK]

ARCH: one of the hand-written configurations below, or any other Hugging Face model type, which
gets its default configuration shrunk by the generic size table (SHRINK) and the Auto class of
TASK (default: feature-extraction).
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
 # Model types whose shrunk default configuration does not export (per-stage lists, windows
 # wider than the shrunk feature maps, backbones from timm, unshrunk sub-configurations).
 "swin": (lambda: T.SwinConfig(image_size=64, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4, num_labels=10), T.SwinForImageClassification),
 "swinv2": (lambda: T.Swinv2Config(image_size=64, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4, num_labels=10), T.Swinv2ForImageClassification),
 "dinov2": (lambda: T.Dinov2Config(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2, num_labels=10), T.Dinov2ForImageClassification),
 "levit": (lambda: T.LevitConfig(image_size=32, hidden_sizes=[32, 48, 64], num_attention_heads=[2, 3, 4], depths=[1, 1, 1], key_dim=[8, 8, 8], mlp_ratio=[2, 2, 2], attention_ratio=[2, 2, 2], down_ops=[["Subsample", 8, 32 // 8, 4, 2, 2], ["Subsample", 8, 48 // 8, 4, 2, 2]], num_labels=10), T.LevitForImageClassification),
 "convnextv2": (lambda: T.ConvNextV2Config(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2, image_size=64, num_labels=10), T.ConvNextV2ForImageClassification),
 "detr": (lambda: T.DetrConfig(use_timm_backbone=False, use_pretrained_backbone=False, backbone=None, backbone_config=T.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], out_features=["stage2"]), d_model=64, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, num_queries=10, num_labels=5), T.DetrForObjectDetection),
 "dpt": (lambda: T.DPTConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=4, num_attention_heads=4, intermediate_size=128, backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[16, 32, 64, 64], fusion_hidden_size=32, is_hybrid=False), T.DPTForDepthEstimation),
 "siglip": (lambda: T.SiglipConfig(text_config=dict(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, max_position_embeddings=32), vision_config=dict(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)), T.SiglipModel),
 "owlvit": (lambda: T.OwlViTConfig(text_config=dict(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, max_position_embeddings=16), vision_config=dict(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128), projection_dim=64), T.OwlViTForObjectDetection),
 "patchtst": (lambda: T.PatchTSTConfig(num_input_channels=2, context_length=8, patch_length=4, patch_stride=4, prediction_length=4, d_model=32, num_attention_heads=4, num_hidden_layers=2, ffn_dim=64), T.PatchTSTForPrediction),
 "patchtsmixer": (lambda: T.PatchTSMixerConfig(num_input_channels=2, context_length=8, patch_length=4, patch_stride=4, prediction_length=4, d_model=16, num_layers=2), T.PatchTSMixerForPrediction),
 "hiera": (lambda: T.HieraConfig(image_size=[32, 32], embed_dim=16, depths=[1, 1, 1, 1], num_heads=[1, 1, 2, 2], masked_unit_size=[8, 8], num_labels=10), T.HieraForImageClassification),
 "swin2sr": (lambda: T.Swin2SRConfig(image_size=32, patch_size=1, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4, upscale=2), T.Swin2SRForImageSuperResolution),
 "clip": (lambda: T.CLIPConfig(text_config=dict(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, max_position_embeddings=32), vision_config=dict(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128), projection_dim=32), T.CLIPModel),
}
ARCHES = sorted(cfgs)
# Model types whose optimum export reads the checkpoint's image processor (its dummy inputs
# take their size from it).
PROCESSORS = {
    "dinov2": lambda: T.BitImageProcessor(size={"shortest_edge": 32},
                                          crop_size={"height": 32, "width": 32}),
}

# Size attributes of Hugging Face configurations, set wherever a default configuration has them:
# every model type names its widths, depths and vocabularies its own way.
SHRINK = dict(
    hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
    num_key_value_heads=2, vocab_size=256, max_position_embeddings=128, head_dim=16,
    d_model=64, d_ff=128, d_kv=16, num_layers=2, num_heads=4, num_decoder_layers=2,
    encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
    encoder_ffn_dim=128, decoder_ffn_dim=128, n_embd=64, n_layer=2, n_head=4, n_inner=128,
    n_positions=128, n_ctx=128, ffn_dim=128, dim=64, n_layers=2, n_heads=4, emb_dim=64,
    embedding_size=64, image_size=32, patch_size=8, num_channels=3,
    moe_intermediate_size=64, num_experts=4, num_local_experts=4, num_experts_per_tok=2,
    n_routed_experts=4, first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=32,
    qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16, sliding_window=64,
    rotary_dim=8, partial_rotary_factor=0.5, decoder_start_token_id=0, pad_token_id=0, bos_token_id=1, eos_token_id=2)
TASK_CLASS = {
    "feature-extraction": "AutoModel", "text-generation": "AutoModelForCausalLM",
    "text-classification": "AutoModelForSequenceClassification",
    "token-classification": "AutoModelForTokenClassification",
    "question-answering": "AutoModelForQuestionAnswering",
    "multiple-choice": "AutoModelForMultipleChoice", "fill-mask": "AutoModelForMaskedLM",
    "image-classification": "AutoModelForImageClassification",
    "semantic-segmentation": "AutoModelForSemanticSegmentation",
    "object-detection": "AutoModelForObjectDetection",
    "depth-estimation": "AutoModelForDepthEstimation",
    "audio-classification": "AutoModelForAudioClassification",
    "automatic-speech-recognition": "AutoModelForCTC",
    "text2text-generation": "AutoModelForSeq2SeqLM", "zero-shot-image-classification": "AutoModel",
    "zero-shot-object-detection": "AutoModelForZeroShotObjectDetection",
    "image-to-image": "AutoModelForImageToImage",
}


def shrunk_config(model_type):
    """The model type's default configuration with every size attribute it has from SHRINK,
    passed to its constructor (which derives per-layer lists and the like from them)."""
    default = T.AutoConfig.for_model(model_type).to_dict()
    kwargs = shrunk(default)
    for sub in ("text_config", "vision_config", "audio_config", "encoder", "decoder"):
        if isinstance(default.get(sub), dict):
            kwargs[sub] = {**default[sub], **shrunk(default[sub])}
    return T.AutoConfig.for_model(model_type, **kwargs)


def shrunk(default):
    # Only where the default has the same kind of value: hierarchical vision models give
    # per-stage lists where flat ones give one number.
    kwargs = {key: value for key, value in SHRINK.items()
              if key in default and (default[key] is None or type(default[key]) is type(value))}
    if "attention_types" in default:  # GPT-Neo: one global and one local layer
        kwargs["attention_types"] = [[["global", "local"], 1]]
    return kwargs


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__ + "hand-written: " + " ".join(ARCHES))
    arch, out = sys.argv[1], sys.argv[2]
    task = sys.argv[3] if len(sys.argv) == 4 else "feature-extraction"
    if arch in cfgs:
        make, cls = cfgs[arch]
        model = cls(make())
    else:
        model = getattr(T, TASK_CLASS[task.replace("-with-past", "")]).from_config(
            shrunk_config(arch))
    model.eval().save_pretrained(out)
    if arch in PROCESSORS:
        PROCESSORS[arch]().save_pretrained(out)
    print("saved", arch, "to", out)
