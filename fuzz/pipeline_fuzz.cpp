// libFuzzer target: the fuzz bytes choose a valid transformer-style model (built in memory as
// ONNX by transformer_generator.cpp) and the compile flags, and the model is compiled through
// every phase to CUDA source, as `sinter compile --compile-to=source` would.
//
// Every input must compile or fail with one-line messages. A crash, a sanitizer report, a leak,
// a timeout, a failure without a message, a multi-line message, or an "internal error" (among
// them IR that does not verify after a pass: runPhase verifies after each one) is a bug.
//
// SINTER_FUZZ_PRINT=1 prints each input's model summary, flags and outcome;
// SINTER_FUZZ_SAVE_MODEL=PATH writes the (last) generated model to PATH, to replay a finding
// with `sinter compile` by hand.
#include "transformer_generator.h"

#include "sinter/Compiler/Config.h"
#include "sinter/Compiler/Diagnostics.h"
#include "sinter/Compiler/Emitter.h"
#include "sinter/Compiler/OnnxImporter.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/Compiler/Target.h"
#include "sinter/Dialect/Graph/IR/GraphDialect.h"
#include "sinter/Dialect/Launch/IR/LaunchDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void bug(const char *what, const std::string &detail, const std::string &summary) {
  std::fprintf(stderr, "sinter-pipeline-fuzz: %s: %s\n  model:%s\n", what, detail.c_str(),
               summary.c_str());
  std::abort();
}

std::string flagsOf(const sinter::CompileConfig &config) {
  return "--precision=" + config.precision + " --activations=" + config.activations +
         " --dtype=" + config.dtype +
         " --weights=" + config.weights + " --target=" + config.target +
         (config.mergeLora ? "" : " --no-merge-lora") + (config.sample ? " --sample" : "") +
         (config.lastLogits ? " --last-logits" : "") +
         (config.weightDtype != "model" ? " --weight-dtype=" + config.weightDtype : "");
}

/// Each message the compiler reported must be one non-empty line and not an internal error.
void checkMessages(const std::vector<std::string> &messages, const std::string &summary) {
  if (messages.empty())
    bug("a phase failed without a message", "", summary);
  for (const std::string &m : messages) {
    if (m.empty())
      bug("empty error message", "", summary);
    if (m.find('\n') != std::string::npos)
      bug("multi-line error message", m, summary);
    if (m.find("internal error") != std::string::npos)
      bug("compiler bug", m, summary);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider bytes(data, size);
  sinter::CompileConfig config;
  config.mergeLora = bytes.ConsumeIntegralInRange(0, 2) != 0;
  config.precision = bytes.ConsumeBool() ? "strict" : "tf32";
  config.activations = bytes.ConsumeIntegralInRange(0, 2) == 0 ? "f32" : "model";
  config.weights = bytes.ConsumeBool() ? "embedded" : "external";
  config.target = bytes.ConsumeIntegralInRange(0, 3) == 0 ? "h100" : "h200";
  // Now and then the graph phase's passes run in an order (and subset) chosen by the bytes, so
  // that each pass meets graphs its predecessors did not prepare: its input contract must hold
  // on any valid graph (leave it unchanged or report a located error).
  bool scrambled = bytes.ConsumeIntegralInRange(0, 7) == 0;
  uint64_t passChoice = bytes.ConsumeIntegral<uint64_t>();
  sinter::fuzz::GeneratedModel model = sinter::fuzz::generateTransformer(bytes);
  // Read after the model so that the corpus from before --dtype keeps its meaning (no bytes
  // left: the model's own dtype).
  int dtypeChoice = bytes.ConsumeIntegralInRange(0, 3);
  config.dtype = dtypeChoice == 1 ? "bf16" : dtypeChoice == 2 ? "f16" : "model";
  // Likewise the language-model flags (no bytes left: off).
  config.sample = bytes.ConsumeIntegralInRange(0, 3) == 1;
  config.lastLogits = bytes.ConsumeIntegralInRange(0, 3) == 1;
  // And fp8 weights, else int4 weights from one more byte, so that the corpus from before int4
  // keeps its meaning (no bytes left: the model's weights).
  config.weightDtype = bytes.ConsumeIntegralInRange(0, 3) == 1   ? "fp8"
                       : bytes.ConsumeIntegralInRange(0, 3) == 1 ? "int4"
                                                                 : "model";
  config.shapes = model.inputShapes;
  config.dims = model.dimValues;
  std::string summary = model.summary + "\n  flags: " + flagsOf(config);

  static const bool print = std::getenv("SINTER_FUZZ_PRINT") != nullptr;
  if (const char *path = std::getenv("SINTER_FUZZ_SAVE_MODEL"))
    std::ofstream(path, std::ios::binary) << model.bytes;

  sinter::Target target;
  std::string error;
  if (!sinter::loadTarget(SINTER_TARGETS_DIR, config.target, target, error))
    bug("setup", error, summary);

  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<sinter::graph::GraphDialect, sinter::launch::LaunchDialect,
                      mlir::func::FuncDialect, mlir::memref::MemRefDialect>();
  sinter::ErrorCollector errors(context); // what `sinter compile` would print
  auto report = [&](const std::string &outcome) {
    if (print)
      std::fprintf(stderr, "model:%s\n  %s\n", summary.c_str(), outcome.c_str());
  };

  sinter::ImportOptions options;
  options.inputShapes = config.shapes;
  options.dimValues = config.dims;
  auto module = sinter::importOnnxBuffer(context, model.bytes, "", options, error, "fuzz.onnx");
  if (!module) {
    checkMessages({error}, summary);
    report("import: " + error);
    return 0;
  }
  if (mlir::failed(mlir::verify(*module)))
    bug("imported IR does not verify", "", summary);
  for (sinter::Phase phase : {sinter::Phase::Graph, sinter::Phase::Launch}) {
    if (phase == sinter::Phase::Graph && scrambled) {
      auto passes = sinter::phasePasses(phase, config, target);
      llvm::SmallVector<std::unique_ptr<mlir::Pass>> chosen;
      std::string order;
      while (!passes.empty() && passChoice != 0) {
        // passes.size() + 1 choices: run one of the remaining passes next, or drop the first.
        size_t index = passChoice % (passes.size() + 1);
        passChoice /= passes.size() + 1;
        if (index < passes.size()) {
          order += " " + passes[index]->getArgument().str();
          chosen.push_back(std::move(passes[index]));
        } else {
          index = 0;
        }
        passes.erase(passes.begin() + index);
      }
      summary += "\n  graph passes:" + order;
      if (mlir::succeeded(sinter::runPasses(*module, std::move(chosen))))
        continue;
    } else if (mlir::succeeded(sinter::runPhase(*module, phase, config, target))) {
      continue;
    }
    checkMessages(errors.errors(), summary);
    report(std::string(sinter::phaseName(phase)) + ": " + errors.summary());
    return 0;
  }
  sinter::EmittedProgram program;
  if (mlir::failed(sinter::emitProgram(*module, target, "fuzz.onnx", config.weights == "external",
                                       program))) {
    checkMessages(errors.errors(), summary);
    report("source: " + errors.summary());
    return 0;
  }
  if (program.source.empty())
    bug("the source phase succeeded with no source", "", summary);
  report("compiled: " + std::to_string(program.source.size()) + " bytes of source");
  return 0;
}
