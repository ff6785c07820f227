#include "sinter/Dialect/Launch/IR/KernelRegistry.h"

namespace sinter::launch {
namespace {

using P = ParamKind;
using R = ArgRole;

// Kept in the template parameter order of runtime/kernels/<name>.cuh.
const KernelParam kLinearSmallMParams[] = {
    {"M", P::Int},
    {"N_ROWS", P::Int},
    {"K", P::Int},
    {"PRO", P::Enum, "sinter::kernels::LinearPrologue::"},
    {"EPI", P::Enum, "sinter::kernels::LinearEpilogue::"},
    {"OutT", P::Type},
    {"EPS_BITS", P::FloatBits},
    {"ROPE_ROWS", P::Int},
    {"HEAD_DIM", P::Int},
    {"NUM_SMS", P::Int},
    {"XT", P::Type},
    {"HANDOFF", P::Enum, "sinter::kernels::LinearHandoff::"},
    {"HANDOFF_BLOCKS", P::Int},
    {"WT", P::Type},
    {"W_GROUP", P::Int}, // int4 weights: the group size; 0 for bf16 and fp8
    {"ROTARY_DIM", P::Int}, // optional: ROPE_PAIRS' rotated columns of a head (partial rotary)
};
const KernelArg kLinearSmallMArgs[] = {
    {"x", R::In},
    {"weight", R::In},
    {"norm_weight", R::Optional},
    {"bias", R::Optional},
    {"residual", R::Optional},
    {"cos", R::Optional},
    {"sin", R::Optional},
    {"out", R::Out},
    {"handoff_count", R::OptionalOut},
    {"reset_x", R::OptionalOut},
    {"reset_count", R::OptionalOut},
    {"w_scale", R::Optional}, // fp8 weights: one fp32 scale per weight row; int4: per row and group
    {"w_zero", R::Optional},  // int4 weights: uint8 zero points per row and group (null: symmetric)
    // RESIDUAL_RMS_NORM_FP32_WEIGHT: the residual stream the post-normalized x is added to,
    // and (when others read it) that sum, written by block 0.
    {"prologue_residual", R::Optional},
    {"residual_sum", R::OptionalOut},
};

const KernelParam kEmbeddingGatherParams[] = {
    {"M", P::Int}, {"D", P::Int}, {"VOCAB", P::Int}, {"T", P::Type}, {"OutT", P::Type}};
const KernelArg kEmbeddingGatherArgs[] = {{"ids", R::In}, {"table", R::In}, {"out", R::Out}};

const KernelArg kAttentionPrefillArgs[] = {
    {"qkv", R::In}, {"key_mask", R::Optional}, {"out", R::Out}};

// flash_attention's; attention_prefill takes the first kAttentionPrefillParamCount. The tiling
// and the scores' soft-cap, cap * tanh(s / cap) (0: none), are optional.
constexpr unsigned kAttentionPrefillParamCount = 13;
const KernelParam kFlashAttentionParams[] = {
    {"S", P::Int},
    {"HQ", P::Int},
    {"HKV", P::Int},
    {"D", P::Int},
    {"Q_OFF", P::Int},
    {"K_OFF", P::Int},
    {"V_OFF", P::Int},
    {"ROW_STRIDE", P::Int},
    {"SCALE_BITS", P::FloatBits},
    {"CAUSAL", P::Bool},
    {"PADDING_MASK", P::Bool},
    {"T", P::Type},
    {"OutT", P::Type},
    {"ROW_TILES", P::Int},
    {"KEY_TILE", P::Int},
    {"MIN_BLOCKS_PER_SM", P::Int},
    {"SOFTCAP_BITS", P::FloatBits},
};

const KernelParam kAttentionDecodeParams[] = {
    {"HQ", P::Int},         {"HKV", P::Int},
    {"D", P::Int},          {"Q_OFF", P::Int},
    {"K_OFF", P::Int},      {"V_OFF", P::Int},
    {"ROW_STRIDE", P::Int}, {"MAX_LEN", P::Int},
    {"SPLIT", P::Int},      {"SCALE_BITS", P::FloatBits},
    {"KEY_MASK", P::Bool},  {"BATCH", P::Int},
    // Optional: q/k norms and RoPE in the kernel (a split marked norm_in_attention).
    {"QK_NORM", P::Bool},   {"NormT", P::Type},
    {"TableT", P::Type},    {"NORM_EPS_BITS", P::FloatBits},
    // Optional: scores soft-capped as cap * tanh(s / cap) (0: none).
    {"SOFTCAP_BITS", P::FloatBits},
};
const KernelArg kAttentionDecodeArgs[] = {
    {"qkv", R::In},
    {"position", R::In},
    {"k_cache", R::InOut},
    {"v_cache", R::InOut},
    {"out", R::Out},
    {"partials", R::OptionalOut},
    {"counters", R::OptionalOut},
    {"key_mask", R::Optional},
    {"q_norm", R::Optional},
    {"k_norm", R::Optional},
    {"cos", R::Optional},
    {"sin", R::Optional},
};

const KernelParam kRmsNormParams[] = {
    {"M", P::Int}, {"D", P::Int}, {"EPS_BITS", P::FloatBits}, {"WT", P::Type}};
const KernelArg kRmsNormArgs[] = {{"x", R::In}, {"weight", R::In}, {"out", R::Out}};

const KernelParam kRopeRowsParams[] = {
    {"M", P::Int},        {"ROW_STRIDE", P::Int}, {"ROPE_COLS", P::Int}, {"HEAD_DIM", P::Int},
    {"ROTARY_DIM", P::Int}}; // optional: the rotated columns of a head (partial rotary)
const KernelArg kRopeRowsArgs[] = {{"cos", R::In}, {"sin", R::In}, {"rows", R::InOut}};

const KernelParam kQkNormRopeParams[] = {
    {"M", P::Int},      {"ROW_STRIDE", P::Int}, {"Q_COLS", P::Int}, {"K_COLS", P::Int},
    {"HEAD_DIM", P::Int}, {"Q_SPAN", P::Int},   {"K_SPAN", P::Int}, {"ROPE", P::Bool},
    {"EPS_BITS", P::FloatBits},
    {"WT", P::Type},      // the norm weights' type (optional: bf16)
    {"TableT", P::Type}}; // cos / sin's (optional: bf16)
const KernelArg kQkNormRopeArgs[] = {{"q_weight", R::In},
                                     {"k_weight", R::In},
                                     {"cos", R::Optional},
                                     {"sin", R::Optional},
                                     {"rows", R::InOut}};

const KernelParam kGateMulParams[] = {
    {"M", P::Int}, {"N", P::Int}, {"ACT", P::Enum, "sinter::kernels::GateActivation::"}};
const KernelArg kGateMulArgs[] = {{"gate_up", R::In}, {"out", R::Out}};

const KernelParam kKvCacheWriteParams[] = {
    {"N", P::Int},     {"HKV", P::Int},        {"D", P::Int},       {"K_OFF", P::Int},
    {"V_OFF", P::Int}, {"ROW_STRIDE", P::Int}, {"MAX_LEN", P::Int},     {"BATCH", P::Int},
};
const KernelArg kKvCacheWriteArgs[] = {
    {"qkv", R::In}, {"positions", R::In}, {"k_cache", R::InOut}, {"v_cache", R::InOut}};

const KernelParam kCacheRowsWriteParams[] = {
    {"OUTER", P::Int}, {"ROWS", P::Int}, {"INNER", P::Int}, {"MAX_LEN", P::Int}, {"T", P::Type}};
const KernelArg kCacheRowsWriteArgs[] = {
    {"rows", R::In}, {"positions", R::In}, {"cache", R::InOut}};

const KernelParam kSampleTokensParams[] = {
    {"BATCH", P::Int}, {"ROWS", P::Int}, {"VOCAB", P::Int}, {"IDS_LEN", P::Int}, {"T", P::Type}};
const KernelArg kSampleTokensArgs[] = {{"logits", R::In},
                                       {"input_ids", R::In},
                                       {"sampling", R::InOut},
                                       {"seen", R::InOut},
                                       {"next_token", R::Out}};

const KernelTemplate kTemplates[] = {
    // Every launch spells all 15 parameters (HANDOFF, HANDOFF_BLOCKS, WT and W_GROUP too).
    {"linear_small_m", kLinearSmallMParams, 15, kLinearSmallMArgs},
    {"embedding_gather", kEmbeddingGatherParams, 4, kEmbeddingGatherArgs},
    {"attention_prefill",
     llvm::ArrayRef<KernelParam>(kFlashAttentionParams, kAttentionPrefillParamCount), 11,
     kAttentionPrefillArgs},
    // attention_prefill's arguments: prompts of any length, 16-bit q/k/v, on tensor cores.
    {"flash_attention", kFlashAttentionParams, 11, kAttentionPrefillArgs},
    {"attention_decode", kAttentionDecodeParams, 12, kAttentionDecodeArgs},
    // Same parameters and arguments: the splits of a kv head merged inside a cluster.
    {"attention_decode_clustered", kAttentionDecodeParams, 12, kAttentionDecodeArgs},
    {"rms_norm", kRmsNormParams, 3, kRmsNormArgs},
    {"rope_rows", kRopeRowsParams, 4, kRopeRowsArgs},
    {"qk_norm_rope", kQkNormRopeParams, 9, kQkNormRopeArgs},
    {"gate_mul", kGateMulParams, 2, kGateMulArgs},
    {"kv_cache_write", kKvCacheWriteParams, 8, kKvCacheWriteArgs},
    {"cache_rows_write", kCacheRowsWriteParams, 5, kCacheRowsWriteArgs},
    {"sample_tokens", kSampleTokensParams, 5, kSampleTokensArgs},
};

} // namespace

template <typename Entry>
static std::optional<unsigned> indexByName(llvm::ArrayRef<Entry> entries, llvm::StringRef name) {
  for (auto [i, e] : llvm::enumerate(entries))
    if (e.name == name)
      return i;
  return std::nullopt;
}

std::optional<unsigned> KernelTemplate::paramIndex(llvm::StringRef name) const {
  return indexByName(params, name);
}

std::optional<unsigned> KernelTemplate::argIndex(llvm::StringRef name) const {
  return indexByName(args, name);
}

const KernelTemplate *lookupKernelTemplate(llvm::StringRef name) {
  for (const KernelTemplate &t : kTemplates)
    if (t.name == name)
      return &t;
  return nullptr;
}

llvm::ArrayRef<KernelTemplate> kernelTemplates() { return kTemplates; }

} // namespace sinter::launch
