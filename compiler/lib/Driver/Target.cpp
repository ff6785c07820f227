#include "sinter/Compiler/Target.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <set>

namespace sinter {

bool parseTargetFile(const std::string &path, Target &target, std::string &error) {
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (!root.IsMap()) {
      error = path + ": a target description must be a mapping";
      return false;
    }
    static const std::set<std::string> keys = {
        "name", "arch", "sm_count", "shared_memory_per_block", "shared_memory_per_sm",
        "l2_bytes", "memory_bandwidth_gbps"};
    for (const auto &kv : root) {
      std::string key = kv.first.as<std::string>();
      if (!keys.count(key)) {
        error = path + ": unknown key '" + key + "'";
        return false;
      }
    }
    for (const std::string &key : keys)
      if (!root[key]) {
        error = path + ": missing key '" + key + "'";
        return false;
      }
    target.name = root["name"].as<std::string>();
    target.arch = root["arch"].as<std::string>();
    target.smCount = root["sm_count"].as<int64_t>();
    target.sharedMemoryPerBlock = root["shared_memory_per_block"].as<int64_t>();
    target.sharedMemoryPerSm = root["shared_memory_per_sm"].as<int64_t>();
    target.l2Bytes = root["l2_bytes"].as<int64_t>();
    target.memoryBandwidthGBps = root["memory_bandwidth_gbps"].as<double>();
    // The kernels' configuration functions take the sizes as 32-bit values.
    for (int64_t size : {target.smCount, target.sharedMemoryPerBlock, target.sharedMemoryPerSm,
                         target.l2Bytes})
      if (size <= 0 || size > INT32_MAX) {
        error = path + ": sizes must be positive and below 2^31";
        return false;
      }
    if (!(target.memoryBandwidthGBps > 0)) {
      error = path + ": memory_bandwidth_gbps must be positive";
      return false;
    }
    if (target.sharedMemoryPerSm < target.sharedMemoryPerBlock) {
      error = path + ": shared_memory_per_sm is below shared_memory_per_block";
      return false;
    }
    return true;
  } catch (const YAML::Exception &e) {
    error = path + ": " + e.what();
    return false;
  }
}

bool loadTarget(const std::string &targetsDir, const std::string &name, Target &target,
                std::string &error) {
  // A description of the user's own card: a file, not one of the shipped names.
  const std::string suffix = ".yaml";
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    if (FILE *f = fopen(name.c_str(), "r")) {
      fclose(f);
      return parseTargetFile(name, target, error);
    }
    error = "cannot read target description '" + name + "'";
    return false;
  }
  for (char c : name)
    if (!isalnum((unsigned char)c) && c != '_' && c != '-') {
      error = "invalid target name '" + name + "'";
      return false;
    }
  std::string path = targetsDir + "/" + name + ".yaml";
  if (FILE *f = fopen(path.c_str(), "r")) {
    fclose(f);
  } else {
    error = "unknown target '" + name + "' (no " + path + ")";
    return false;
  }
  return parseTargetFile(path, target, error);
}

} // namespace sinter
