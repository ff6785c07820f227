// Import of reductions, normalization, softmax, masks and attention.
#include "NodeImporter.h"
#include "sinter/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::import {

void registerTensorImports(OpImportRegistry &) {}

} // namespace sinter::import
