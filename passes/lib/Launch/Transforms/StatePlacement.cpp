#include "sinter/Passes/StatePlacement.h"

#include "sinter/Dialect/Launch/IR/LaunchOps.h"
#include "sinter/program.h" // SINTER_BUFFER_ALIGNMENT

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace {
} // namespace

LogicalResult sinter::placeStates(ModuleOp module) {
  llvm::StringMap<std::pair<MemRefType, int64_t>> placed;
  int64_t bytes = 0;
  MLIRContext *context = module.getContext();
  WalkResult result = module.walk([&](launch::StateOp state) {
    MemRefType type = state.getBuffer().getType();
    auto [it, added] = placed.try_emplace(state.getSymName(), type, bytes);
    if (added) {
      bytes += llvm::alignTo(launch::bufferBytes(type), SINTER_BUFFER_ALIGNMENT);
    } else if (it->second.first != type) {
      state.emitError("state '") << state.getSymName() << "' is " << type << " here but "
                                 << it->second.first << " elsewhere";
      return WalkResult::interrupt();
    }
    state.setOffsetAttr(IntegerAttr::get(IntegerType::get(context, 64), it->second.second));
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  module->setAttr("launch.state_bytes", IntegerAttr::get(IntegerType::get(context, 64), bytes));
  return success();
}
