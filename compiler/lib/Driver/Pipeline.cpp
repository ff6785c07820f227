#include "sinter/Compiler/Pipeline.h"

#include "sinter/Dialect/Graph/IR/GraphDialect.h"
#include "sinter/Dialect/Launch/IR/LaunchOps.h"
#include "sinter/Passes/CompileTarget.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace sinter {

std::optional<Phase> parsePhase(const std::string &name) {
  for (Phase p : {Phase::Import, Phase::Graph, Phase::Launch, Phase::Source, Phase::Binary})
    if (name == phaseName(p))
      return p;
  return std::nullopt;
}

const char *phaseName(Phase phase) {
  switch (phase) {
  case Phase::Import: return "import";
  case Phase::Graph: return "graph";
  case Phase::Launch: return "launch";
  case Phase::Source: return "source";
  case Phase::Binary: return "binary";
  }
  return "?";
}

LogicalResult runPasses(ModuleOp module, SmallVector<std::unique_ptr<Pass>> passes,
                        bool passTiming) {
  DefaultTimingManager timing;
  timing.setEnabled(passTiming);
  TimingScope root = timing.getRootScope();
  for (std::unique_ptr<Pass> &pass : passes) {
    std::string name = pass->getArgument().str();
    PassManager pm(module.getContext());
    pm.enableVerifier(false);
    if (passTiming)
      pm.enableTiming(root);
    pm.addPass(std::move(pass));
    if (failed(pm.run(module)))
      return failure();
    std::string firstProblem;
    {
      ScopedDiagnosticHandler quiet(module.getContext(), [&](Diagnostic &diag) {
        if (firstProblem.empty())
          firstProblem = diag.str();
        return success();
      });
      if (succeeded(verify(module)))
        continue;
    }
    return module.emitError("internal error: the IR does not verify after pass '")
           << name << "' (" << firstProblem << "); please report this with the model";
  }
  return success();
}

SmallVector<std::unique_ptr<Pass>> phasePasses(Phase phase, const CompileConfig &config,
                                               const Target &target) {
  SmallVector<std::unique_ptr<Pass>> passes;
  if (phase == Phase::Graph) {
    // Before the empty past of a prompt entry folds away with its concatenation.
    passes.push_back(createSinterFormPastCache());
    passes.push_back(createSinterFoldEmptyTensors());
    passes.push_back(createSinterExpandGemm());
    passes.push_back(createSinterFoldConstants());
    passes.push_back(createSinterFormLinear());
    if (config.mergeLora)
      passes.push_back(createSinterMergeLora());
    passes.push_back(createSinterFuseLinearEpilogue());
    passes.push_back(createSinterFormCacheState());
    // Raise the exported decompositions to the fused ops the kernels implement. Attention
    // first: a decode step's mask is read off its position before the position-only values
    // that remain (RoPE cos/sin) become tables the RoPE pattern accepts.
    passes.push_back(createSinterRaiseRmsNorm());
    passes.push_back(createSinterRaiseSiluMul());
    passes.push_back(createSinterRaiseGeluTanh());
    passes.push_back(createSinterRaiseAttention());
    passes.push_back(createCSEPass());
    passes.push_back(createSinterTabulatePosition());
    passes.push_back(createSinterRaiseRope());
    passes.push_back(createSinterDeinterleaveQkv());
    passes.push_back(createSinterFoldConstants());
    passes.push_back(createCSEPass());
    // --dtype narrows once the exported decompositions are raised (they match in fp32, where
    // the statistics of a norm and a softmax are computed) and the position math is tables.
    if (config.dtype != "model") {
      SinterNarrowFloatsOptions narrow;
      narrow.to = config.dtype;
      passes.push_back(createSinterNarrowFloats(narrow));
    }
    // Launch-shaping fusions last, once the graph holds only the ops they combine.
    passes.push_back(createSinterMergeParallelLinears());
    passes.push_back(createSinterFuseLinearPrologue());
    passes.push_back(createSinterFuseLinearSwiGLU());
    passes.push_back(createSinterFuseLinearActivation());
    // After the prologue fusion: the final norm is row-wise inside the LM head's linear.
    if (config.lastLogits)
      passes.push_back(createSinterKeepLastLogits());
    // Attention the kernels cannot take goes back to primitives, and whatever no pattern
    // claimed goes to the generic tier.
    SinterExpandAttentionOptions expandAttention;
    expandAttention.activations = config.activations;
    passes.push_back(createSinterExpandAttention(expandAttention));
    passes.push_back(createSinterFuseAttentionHeadMerge());
    passes.push_back(createSinterFuseQkvHeads());
    passes.push_back(createSinterFuseDecodeQkNorm());
    passes.push_back(createSinterFormFusionGroups());
    passes.push_back(createSinterFuseResidualNormPrologue());
    // After the fusion groups, so that no other graph pass has to know the sampler.
    if (config.sample)
      passes.push_back(createSinterAppendSampler());
  } else if (phase == Phase::Launch) {
    SinterLowerToLaunchOptions options;
    options.precision = config.precision;
    options.activations = config.activations;
    options.weightDtype = config.weightDtype;
    passes.push_back(createSinterLowerToLaunch(options));
    passes.push_back(createLaunchPlanHandoffs());
    passes.push_back(createLaunchCheckTarget());
    passes.push_back(createLaunchPlanArena());
  }
  return passes;
}

LogicalResult runPhase(ModuleOp module, Phase phase, const CompileConfig &config,
                       const Target &target, bool passTiming) {
  SmallVector<std::unique_ptr<Pass>> passes = phasePasses(phase, config, target);
  if (passes.empty())
    return module.emitError("phase '") << phaseName(phase) << "' has no passes";
  // Every pass that chooses for the GPU reads the target off the module.
  setCompileTarget(module, target);
  if (failed(runPasses(module, std::move(passes), passTiming)))
    return failure();
  return verifyPhase(module, phase);
}

LogicalResult verifyPhase(ModuleOp module, Phase phase) {
  StringRef expected = phase == Phase::Launch ? "launch" : "sinter";
  WalkResult result = module.walk([&](Operation *op) {
    if (isa<ModuleOp, func::FuncOp, func::ReturnOp>(op))
      return WalkResult::advance();
    // A generated kernel's body holds graph ops: what the kernel computes.
    if (isa<launch::GenericOp>(op->getParentOp()))
      return WalkResult::skip();
    if (op->getDialect() && op->getDialect()->getNamespace() == expected)
      return WalkResult::advance();
    op->emitError("'") << op->getName() << "' is left after the " << phaseName(phase)
                       << " phase";
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return failure();
  if (phase == Phase::Launch) {
    result = module.walk([&](launch::AllocOp alloc) {
      if (alloc.getOffset())
        return WalkResult::advance();
      alloc.emitError("buffer has no arena offset after the launch phase");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted() || !module->hasAttr("launch.arena_bytes"))
      return failure();
  }
  return success();
}

} // namespace sinter
