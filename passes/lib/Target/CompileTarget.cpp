#include "sinter/Passes/CompileTarget.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace sinter {

void setCompileTarget(ModuleOp module, const CompileTarget &target) {
  Builder b(module.getContext());
  NamedAttribute fields[] = {
      b.getNamedAttr("name", b.getStringAttr(target.name)),
      b.getNamedAttr("arch", b.getStringAttr(target.arch)),
      b.getNamedAttr("sm_count", b.getI64IntegerAttr(target.smCount)),
      b.getNamedAttr("shared_memory_per_block", b.getI64IntegerAttr(target.sharedMemoryPerBlock)),
      b.getNamedAttr("shared_memory_per_sm", b.getI64IntegerAttr(target.sharedMemoryPerSm)),
      b.getNamedAttr("l2_bytes", b.getI64IntegerAttr(target.l2Bytes)),
  };
  module->setAttr(kTargetAttrName, b.getDictionaryAttr(fields));
}

FailureOr<CompileTarget> compileTargetOf(ModuleOp module) {
  CompileTarget target;
  Attribute attr = module->getAttr(kTargetAttrName);
  if (!attr)
    return target;
  auto dict = dyn_cast<DictionaryAttr>(attr);
  if (!dict)
    return module.emitError("'") << kTargetAttrName << "' must be a dictionary";
  auto text = [&](StringRef key, std::string &into) {
    auto value = dict.getAs<StringAttr>(key);
    if (value)
      into = value.getValue().str();
    return bool(value);
  };
  // Each size must fit the 32-bit fields the kernels' configuration functions take.
  auto size = [&](StringRef key, int64_t &into) {
    auto value = dict.getAs<IntegerAttr>(key);
    if (value)
      into = value.getInt();
    return value && into > 0 && into <= INT32_MAX;
  };
  for (NamedAttribute field : dict) {
    StringRef key = field.getName().getValue();
    bool ok = key == "name"                      ? text(key, target.name)
              : key == "arch"                    ? text(key, target.arch)
              : key == "sm_count"                ? size(key, target.smCount)
              : key == "shared_memory_per_block" ? size(key, target.sharedMemoryPerBlock)
              : key == "shared_memory_per_sm"    ? size(key, target.sharedMemoryPerSm)
              : key == "l2_bytes"                ? size(key, target.l2Bytes)
                                                 : false;
    if (!ok)
      return module.emitError("'")
             << kTargetAttrName << "' field '" << key
             << "' is unknown or out of range (name and arch are strings; sm_count, "
                "shared_memory_per_block, shared_memory_per_sm and l2_bytes positive 32-bit "
                "integers)";
  }
  if (target.sharedMemoryPerSm < target.sharedMemoryPerBlock)
    return module.emitError("'") << kTargetAttrName << "': shared_memory_per_sm ("
                                 << target.sharedMemoryPerSm << ") is below shared_memory_per_block ("
                                 << target.sharedMemoryPerBlock << ")";
  return target;
}

} // namespace sinter
