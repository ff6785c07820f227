// Attention written as graph primitives: the products go to the library GEMM and the rest to
// generated kernels. Shared by sinter-expand-attention (attention no kernel takes) and the
// importer (an Attention node whose intermediate scores are an output).
#ifndef SINTER_DIALECT_GRAPH_IR_ATTENTIONEXPANSION_H
#define SINTER_DIALECT_GRAPH_IR_ATTENTIONEXPANSION_H

#include "mlir/IR/Builders.h"

namespace sinter::graph {

/// The values of one expansion, each [B, Hq, Sq, ...] in the query's type.
struct AttentionExpansion {
  mlir::Value scores;        // q @ kE^T * scale, soft-capped when asked
  mlir::Value maskedScores;  // scores with the masks applied (-inf where masked)
  mlir::Value probabilities; // their softmax; a fully masked row gives zeros
  mlir::Value output;        // probabilities @ vE
};

/// softmax(q @ kE^T * scale [softcap] [masked] [causal]) @ vE on 4-D [B, H, S, D] operands,
/// kE and vE the grouped-query expansions of k and v (query head h reads kv head
/// h / (hq / hkv)). `keep` (i1, broadcasting to the scores) selects the attended keys; `bias`
/// (the scores' type) is added; `causal` masks key j > query i; `softcap` > 0 maps the scaled
/// scores through softcap * tanh(s / softcap) before the masks. A `softmaxType` other than the
/// query's (ONNX Attention's softmax_precision) takes the softmax in that type, between casts.
AttentionExpansion expandAttention(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value q,
                                   mlir::Value k, mlir::Value v, int64_t hq, int64_t hkv,
                                   float scale, bool causal, mlir::Value keep, mlir::Value bias,
                                   float softcap = 0.0f, mlir::Type softmaxType = {});

} // namespace sinter::graph

#endif
