#ifndef SINTER_COMPILER_CONFIG_H
#define SINTER_COMPILER_CONFIG_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sinter {

/// Everything that shapes one compilation; set from --config and then from flags.
struct CompileConfig {
  std::string precision = "strict"; // strict | tf32
  std::string activations = "model"; // model | f32
  /// model, or bf16 / f16: an fp32 model's weights, activations and float I/O in that type.
  std::string dtype = "model";
  /// model, or bf16 / fp8 / int4: the constant weights of the bf16 linears in that type (fp8:
  /// e4m3 with one fp32 scale per output row; int4: symmetric 4-bit integers with one fp32
  /// scale per output row and group of 128 k).
  std::string weightDtype = "model";
  bool mergeLora = true;
  /// --sample: language-model entries pick their next token on the device (next_token output).
  bool sample = false;
  /// --last-logits: prompt entries compute their logits at the last position only.
  bool lastLogits = false;
  /// --cache-length: a with-past export compiles to a prompt entry and a decode-step entry
  /// sharing in-place caches of this many positions (0: off).
  int64_t cacheLength = 0;
  std::string target = "h200";
  std::string weights = "embedded";
  std::map<std::string, std::vector<int64_t>> shapes;
  /// Values of the model's symbolic dimensions by name (`--dim seq=128`).
  std::map<std::string, int64_t> dims;
  /// Graph inputs fixed to values at compile time (`--input-value use_cache_branch=1`).
  std::map<std::string, std::vector<double>> inputValues;
};

/// The values `precision`, `activations`, `dtype` and `weight_dtype` accept (from --config and
/// from flags alike).
inline bool isPrecision(const std::string &s) { return s == "strict" || s == "tf32"; }
inline bool isActivations(const std::string &s) { return s == "model" || s == "f32"; }
inline bool isDtype(const std::string &s) { return s == "model" || s == "bf16" || s == "f16"; }
inline bool isWeightDtype(const std::string &s) {
  return s == "model" || s == "bf16" || s == "fp8" || s == "int4";
}

/// Parses a shape written as `1x128` (positive dimensions).
bool parseShape(const std::string &text, std::vector<int64_t> &shape, std::string &error);

/// Parses `NAME=N` (a positive value) as `--dim` and the config's `dims:` take it.
bool parseDim(const std::string &text, std::string &name, int64_t &value, std::string &error);

/// Parses `NAME=V[,V...]` (numbers, or true / false) as `--input-value` takes it.
bool parseInputValue(const std::string &text, std::string &name, std::vector<double> &values,
                     std::string &error);

/// Reads a YAML compile config into `config`. Unknown keys and bad values are errors.
bool loadConfigFile(const std::string &path, CompileConfig &config, std::string &error);

} // namespace sinter

#endif
