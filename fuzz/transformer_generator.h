// Chooses a valid transformer-style ONNX model from fuzz bytes: a sequence of building blocks
// (linears with or without bias, LoRA adapters on any subset of linears, shared and tied weights,
// residuals, RMSNorm and LayerNorm, RoPE (whole or partial), one QKV projection with each
// head's q, k and v side by side (GPT-NeoX), attention with or without masks and KV caches, SwiGLU
// and GeLU MLPs, generic-tier ops) with consistent shapes and dtypes by construction, written
// the way torch.onnx's dynamo exporter writes Hugging Face models.
#ifndef SINTER_FUZZ_TRANSFORMER_GENERATOR_H
#define SINTER_FUZZ_TRANSFORMER_GENERATOR_H

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sinter::fuzz {

struct GeneratedModel {
  std::string bytes; // a serialized ModelProto
  /// Shapes for the symbolic input dimensions (what `sinter compile --shape` would pass);
  /// deliberately incomplete now and then, which the compiler must refuse in one line.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Values for symbolic dimensions by name (what `--dim` would pass); now and then one the
  /// model does not have.
  std::map<std::string, int64_t> dimValues;
  /// One line: dtype, dimensions and the blocks, for reproducing a finding by hand.
  std::string summary;
};

GeneratedModel generateTransformer(FuzzedDataProvider &bytes);

} // namespace sinter::fuzz

#endif
