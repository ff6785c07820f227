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
  bool mergeLora = true;
  std::string target = "h200";
  std::string weights = "embedded";
  std::map<std::string, std::vector<int64_t>> shapes;
};

/// Parses a shape written as `1x128` (positive dimensions).
bool parseShape(const std::string &text, std::vector<int64_t> &shape, std::string &error);

/// Reads a YAML compile config into `config`. Unknown keys and bad values are errors.
bool loadConfigFile(const std::string &path, CompileConfig &config, std::string &error);

} // namespace sinter

#endif
