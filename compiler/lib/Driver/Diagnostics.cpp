#include "sinter/Compiler/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SetVector.h"

namespace sinter {
namespace {

void collectNames(mlir::Location loc, llvm::SetVector<llvm::StringRef> &names,
                  std::string &fileLocation) {
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc)) {
    names.insert(name.getName().getValue());
  } else if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc)) {
    for (mlir::Location part : fused.getLocations())
      collectNames(part, names, fileLocation);
  } else if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc)) {
    if (fileLocation.empty())
      fileLocation = (file.getFilename().getValue() + ":" + llvm::Twine(file.getLine()) + ":" +
                      llvm::Twine(file.getColumn()))
                         .str();
  } else if (auto callSite = mlir::dyn_cast<mlir::CallSiteLoc>(loc)) {
    collectNames(callSite.getCallee(), names, fileLocation);
  }
}

/// One line: a message that spans lines (a note folded in) keeps its first line.
std::string firstLine(const std::string &text) { return text.substr(0, text.find('\n')); }

} // namespace

std::string describeLocation(mlir::Location loc) {
  llvm::SetVector<llvm::StringRef> names;
  std::string fileLocation;
  collectNames(loc, names, fileLocation);
  if (names.empty())
    return fileLocation;
  std::string text = "node '" + names.front().str() + "'";
  if (names.size() > 1)
    text += " (and " + std::to_string(names.size() - 1) + " fused node" +
            (names.size() > 2 ? "s" : "") + ")";
  return text;
}

ErrorCollector::ErrorCollector(mlir::MLIRContext &context)
    : handler_(&context, [this](mlir::Diagnostic &diag) {
        if (diag.getSeverity() != mlir::DiagnosticSeverity::Error)
          return mlir::success(); // nothing reports warnings; keep them from stderr too
        std::string where = describeLocation(diag.getLocation());
        std::string message = diag.str();
        errors_.push_back(where.empty() ? message : where + ": " + message);
        return mlir::success();
      }) {}

std::string ErrorCollector::summary() const {
  if (errors_.empty())
    return "";
  std::string text = firstLine(errors_.front());
  if (errors_.size() > 1)
    text += " (and " + std::to_string(errors_.size() - 1) + " more error" +
            (errors_.size() > 2 ? "s" : "") + ")";
  return text;
}

} // namespace sinter
