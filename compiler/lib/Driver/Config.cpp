#include "sinter/Compiler/Config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <set>

namespace sinter {

bool parseShape(const std::string &text, std::vector<int64_t> &shape, std::string &error) {
  shape.clear();
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('x', pos);
    std::string part = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    char *stop = nullptr;
    long long v = part.empty() ? 0 : std::strtoll(part.c_str(), &stop, 10);
    if (part.empty() || *stop != 0 || v <= 0 || v > (1ll << 40)) {
      error = "invalid shape '" + text + "' (expected positive dimensions like 1x128)";
      return false;
    }
    shape.push_back(v);
    if (end == std::string::npos)
      break;
    pos = end + 1;
  }
  return true;
}

bool parseDim(const std::string &text, std::string &name, int64_t &value, std::string &error) {
  size_t eq = text.find('=');
  std::vector<int64_t> parsed;
  if (eq == std::string::npos || eq == 0 ||
      !parseShape(text.substr(eq + 1), parsed, error) || parsed.size() != 1) {
    error = "--dim must be NAME=N with a positive N, got '" + text + "'";
    return false;
  }
  name = text.substr(0, eq);
  value = parsed.front();
  return true;
}

bool parseInputValue(const std::string &text, std::string &name, std::vector<double> &values,
                     std::string &error) {
  size_t eq = text.find('=');
  error = "--input-value must be NAME=V[,V...] with numbers, true or false, got '" + text + "'";
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return false;
  name = text.substr(0, eq);
  values.clear();
  std::string rest = text.substr(eq + 1);
  for (size_t start = 0; start <= rest.size();) {
    size_t comma = rest.find(',', start);
    std::string item =
        rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item == "true" || item == "false") {
      values.push_back(item == "true" ? 1.0 : 0.0);
    } else {
      char *end = nullptr;
      double v = std::strtod(item.c_str(), &end);
      if (item.empty() || end != item.c_str() + item.size())
        return false;
      values.push_back(v);
    }
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  error.clear();
  return true;
}

bool loadConfigFile(const std::string &path, CompileConfig &config, std::string &error) {
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (root.IsNull())
      return true;
    if (!root.IsMap()) {
      error = path + ": the config must be a mapping";
      return false;
    }
    for (const auto &kv : root) {
      std::string key = kv.first.as<std::string>();
      const YAML::Node &value = kv.second;
      if (key == "precision") {
        config.precision = value.as<std::string>();
        if (!isPrecision(config.precision)) {
          error = path + ": precision must be strict or tf32";
          return false;
        }
      } else if (key == "activations") {
        config.activations = value.as<std::string>();
        if (!isActivations(config.activations)) {
          error = path + ": activations must be model or f32";
          return false;
        }
      } else if (key == "dtype") {
        config.dtype = value.as<std::string>();
        if (!isDtype(config.dtype)) {
          error = path + ": dtype must be model, bf16 or f16";
          return false;
        }
      } else if (key == "weight_dtype") {
        config.weightDtype = value.as<std::string>();
        if (!isWeightDtype(config.weightDtype)) {
          error = path + ": weight_dtype must be model, bf16, fp8 or int4";
          return false;
        }
      } else if (key == "merge_lora") {
        config.mergeLora = value.as<bool>();
      } else if (key == "sample") {
        config.sample = value.as<bool>();
      } else if (key == "last_logits") {
        config.lastLogits = value.as<bool>();
      } else if (key == "cache_length") {
        config.cacheLength = value.as<int64_t>();
        if (config.cacheLength < 2) {
          error = path + ": cache_length must be at least 2 (a prompt token and one decoded)";
          return false;
        }
      } else if (key == "target") {
        config.target = value.as<std::string>();
      } else if (key == "weights") {
        config.weights = value.as<std::string>();
        if (config.weights != "embedded" && config.weights != "external") {
          error = path + ": weights must be 'embedded' or 'external'";
          return false;
        }
      } else if (key == "shapes") {
        if (!value.IsMap()) {
          error = path + ": shapes must map input names to shapes like 1x128";
          return false;
        }
        for (const auto &s : value) {
          std::vector<int64_t> shape;
          if (!parseShape(s.second.as<std::string>(), shape, error)) {
            error = path + ": " + error;
            return false;
          }
          config.shapes[s.first.as<std::string>()] = shape;
        }
      } else if (key == "dims") {
        if (!value.IsMap()) {
          error = path + ": dims must map dimension names to positive values like seq: 128";
          return false;
        }
        for (const auto &d : value) {
          std::string name;
          int64_t dim = 0;
          if (!parseDim(d.first.as<std::string>() + "=" + d.second.as<std::string>(), name, dim,
                        error)) {
            error = path + ": " + error;
            return false;
          }
          config.dims[name] = dim;
        }
      } else if (key == "input_values") {
        if (!value.IsMap()) {
          error = path + ": input_values must map input names to a value or a list of values "
                         "like use_cache_branch: true";
          return false;
        }
        for (const auto &entry : value) {
          std::string text = entry.first.as<std::string>() + "=";
          if (entry.second.IsSequence()) {
            for (size_t i = 0; i < entry.second.size(); ++i)
              text += (i ? "," : "") + entry.second[i].as<std::string>();
          } else {
            text += entry.second.as<std::string>();
          }
          std::string name;
          std::vector<double> values;
          if (!parseInputValue(text, name, values, error)) {
            error = path + ": " + error;
            return false;
          }
          config.inputValues[name] = values;
        }
      } else {
        error = path + ": unknown key '" + key + "'";
        return false;
      }
    }
    return true;
  } catch (const YAML::Exception &e) {
    error = path + ": " + e.what();
    return false;
  }
}

} // namespace sinter
