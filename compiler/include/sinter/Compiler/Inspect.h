#ifndef SINTER_COMPILER_INSPECT_H
#define SINTER_COMPILER_INSPECT_H

#include <string>

namespace sinter {

/// Reads the description a compiled model carries in its `.sinter_meta` ELF section,
/// without loading (and so without running any code of) the library.
bool readInspectJson(const std::string &soPath, std::string &json, std::string &error);

/// Whether the description says the weights live outside the library (--weights=external).
bool describesExternalWeights(const std::string &json);

/// Renders the description as a human-readable report.
bool formatInspectReport(const std::string &json, std::string &report, std::string &error);

} // namespace sinter

#endif
