// Which up -> down pairs of an MLP's linear_small_m launches (gate/up with SwiGLU or GeGLU, or
// an up projection with its GeLU: GPT-2's c_fc, GPT-NeoX's dense_h_to_4h) hand x over through
// the context state instead of the down launch's griddepcontrol.wait (LinearHandoff in
// launch_params.h; see Passes.td). The release after the up launch's last block is the longest
// launch boundary of a decode step; with the handoff the down launch starts on the data itself.
#include "sinter/Dialect/Launch/IR/KernelRegistry.h"
#include "sinter/Dialect/Launch/IR/LaunchOps.h"
#include "sinter/Passes/CompileTarget.h"
#include "sinter/Passes/Passes.h"
#include "sinter/Passes/StatePlacement.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "launch_params.h"

#include <string>

namespace sinter {
#define GEN_PASS_DEF_LAUNCHPLANHANDOFFS
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter;
namespace kn = sinter::kernels;

namespace {

constexpr llvm::StringLiteral kLinear = "linear_small_m";
constexpr llvm::StringLiteral kBF16 = "__nv_bfloat16";
constexpr llvm::StringLiteral kEnumPrefix = "sinter::kernels::";

int64_t intParam(launch::KernelOp op, StringRef name) {
  auto attr = dyn_cast_or_null<IntegerAttr>(op.getParam(name));
  return attr ? attr.getInt() : -1;
}

StringRef textParam(launch::KernelOp op, StringRef name) {
  auto attr = dyn_cast_or_null<StringAttr>(op.getParam(name));
  return attr ? attr.getValue() : StringRef();
}

bool isLinear(launch::KernelOp op) { return op && op.getKernelTemplate() == kLinear; }

kn::LinearWeights weightsOf(launch::KernelOp op) {
  StringRef wt = textParam(op, "WT");
  for (kn::LinearWeights w : {kn::LinearWeights::FP8_E4M3, kn::LinearWeights::INT4})
    if (wt == kn::kLinearWeightTypeNames[int(w)])
      return w;
  return kn::LinearWeights::BF16;
}

kn::LinearPrologue prologueOf(launch::KernelOp op) {
  StringRef pro = textParam(op, "PRO");
  for (kn::LinearPrologue p :
       {kn::LinearPrologue::RMS_NORM, kn::LinearPrologue::RMS_NORM_FP32_WEIGHT,
        kn::LinearPrologue::LAYER_NORM, kn::LinearPrologue::RESIDUAL_RMS_NORM_FP32_WEIGHT})
    if (pro == kn::kLinearPrologueNames[int(p)])
      return p;
  return kn::LinearPrologue::NONE;
}

/// The launch after `op` in its block, skipping buffer definitions (weights, state, arena
/// allocations), which are no launches.
launch::KernelOp nextKernel(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (isa<launch::WeightOp, launch::StateOp, launch::AllocOp>(next))
      continue;
    return dyn_cast<launch::KernelOp>(next);
  }
  return {};
}

struct Pair {
  launch::KernelOp up, down;
  int64_t rows, columns, producerBlocks;
};

/// Whether `op`'s epilogue is an MLP's activation: the gate pairs, or a GeLU of the product.
bool mlpActivation(launch::KernelOp op) {
  StringRef epi = textParam(op, "EPI");
  for (kn::LinearEpilogue e :
       {kn::LinearEpilogue::SILU_MUL_PAIRS, kn::LinearEpilogue::GELU_TANH_MUL_PAIRS,
        kn::LinearEpilogue::GELU_TANH, kn::LinearEpilogue::GELU})
    if (epi == kn::kLinearEpilogueNames[int(e)])
      return true;
  return false;
}

/// `up` (an MLP's up projection with its activation, any prologue) and the launch right after
/// it, when that one is a down projection that can wait on `up`'s handoff: it reads `up`'s
/// output as x and nothing else does, one decode row, bf16 activations, x staged by plain loads
/// (linear_small_m_handoff_consumer_supported).
std::optional<Pair> handoffPair(launch::KernelOp up, kn::SharedMemoryLimits sharedMemory) {
  if (!isLinear(up) || !mlpActivation(up) ||
      textParam(up, "HANDOFF") != "sinter::kernels::LinearHandoff::NONE" ||
      textParam(up, "OutT") != kBF16 || textParam(up, "XT") != kBF16)
    return std::nullopt;
  launch::KernelOp down = nextKernel(up);
  Value x = up.getArgument("out");
  if (!isLinear(down) || !x || !x.getDefiningOp<launch::AllocOp>() || down.getArgument("x") != x ||
      textParam(down, "HANDOFF") != "sinter::kernels::LinearHandoff::NONE" ||
      textParam(down, "XT") != kBF16 || prologueOf(down) != kn::LinearPrologue::NONE)
    return std::nullopt;
  if (llvm::any_of(x.getUsers(), [&](Operation *user) { return user != up && user != down; }) ||
      llvm::count(down.getArgumentValues(), x) != 1)
    return std::nullopt;
  // The consumer waits for x alone: a residual sum the producer writes (block 0, see
  // RESIDUAL_RMS_NORM_FP32_WEIGHT) may still be on its way.
  if (Value sum = up.getArgument("residual_sum");
      sum && llvm::is_contained(down.getArgumentValues(), sum))
    return std::nullopt;
  int64_t m = intParam(up, "M"), upRows = intParam(up, "N_ROWS"), upK = intParam(up, "K");
  int64_t downRows = intParam(down, "N_ROWS"), k = intParam(down, "K");
  int64_t sms = intParam(down, "NUM_SMS");
  if (intParam(down, "M") != m || m < 0 || sms <= 0 ||
      !kn::linear_small_m_handoff_consumer_supported(m, downRows, k, kn::LinearPrologue::NONE, sms,
                                                     weightsOf(down), sharedMemory))
    return std::nullopt;
  int64_t blocks = kn::linear_small_m_tiling(m, upRows, upK, prologueOf(up),
                                             intParam(up, "NUM_SMS"), 2, weightsOf(up),
                                             sharedMemory)
                       .grid;
  return Pair{up, down, m, k, blocks};
}

/// `op` with the arguments in `replace` (registry name -> buffer), HANDOFF = `role` with
/// HANDOFF_BLOCKS = `blocks`, and the arguments named in `alsoWritten` written too.
void rewriteLaunch(launch::KernelOp op, ArrayRef<std::pair<StringRef, Value>> replace,
                   StringRef role, int64_t blocks, ArrayRef<StringRef> alsoWritten) {
  const launch::KernelTemplate *t = launch::lookupKernelTemplate(op.getKernelTemplate());
  SmallVector<Value> args = op.getArgumentValues();
  SmallVector<unsigned> written = op.getWrittenArguments();
  auto argIndex = [&](StringRef name) { return *t->argIndex(name); };
  for (auto [name, value] : replace)
    args[argIndex(name)] = value;
  for (StringRef name : alsoWritten)
    written.push_back(argIndex(name));
  OpBuilder builder(op);
  SmallVector<Attribute> params(op.getParams().begin(), op.getParams().end());
  auto paramIndex = [&](StringRef name) { return *t->paramIndex(name); };
  params[paramIndex("HANDOFF")] =
      builder.getStringAttr((kEnumPrefix + "LinearHandoff::" + role).str());
  params[paramIndex("HANDOFF_BLOCKS")] = builder.getI64IntegerAttr(blocks);
  launch::KernelOp::createWithArguments(builder, op.getLoc(), op.getKernelTemplate(),
                                        builder.getArrayAttr(params), args, op.getGrid(),
                                        op.getBlock(), op.getSharedBytes(), written);
  op.erase();
}

struct PlanHandoffsPass : sinter::impl::LaunchPlanHandoffsBase<PlanHandoffsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CompileTarget> target = compileTargetOf(module);
    if (failed(target))
      return signalPassFailure();
    kn::SharedMemoryLimits sharedMemory{uint32_t(target->sharedMemoryPerBlock),
                                        uint32_t(target->sharedMemoryPerSm)};
    bool added = false;
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      added |= planFunction(func, sharedMemory);
    if (added && failed(placeStates(module)))
      signalPassFailure();
  }

  /// Each consumer zeroes the next pair's buffers and the last consumer the first's, so a
  /// function needs at least two pairs; with fewer it keeps the plain launches.
  bool planFunction(func::FuncOp func, kn::SharedMemoryLimits sharedMemory) {
    SmallVector<Pair> pairs;
    func.walk([&](launch::KernelOp op) {
      if (std::optional<Pair> pair = handoffPair(op, sharedMemory))
        pairs.push_back(*pair);
    });
    if (pairs.size() < 2)
      return false;
    // The pairs' buffers go after the function's other state, in pair order.
    Block &entry = func.getBody().front();
    OpBuilder builder(&entry, entry.begin());
    for (Operation &op : entry)
      if (isa<launch::StateOp>(op))
        builder.setInsertionPointAfter(&op);
    std::string prefix = (func.getName() + ".linear_handoff.").str();
    SmallVector<std::pair<Value, Value>> buffers; // x, count
    for (auto [i, pair] : llvm::enumerate(pairs)) {
      std::string name = prefix + std::to_string(i);
      Location loc = pair.up.getLoc();
      auto x = launch::StateOp::create(
          builder, loc, MemRefType::get({pair.rows, pair.columns}, builder.getBF16Type()),
          name + ".x", IntegerAttr());
      auto count = launch::StateOp::create(builder, loc, MemRefType::get({1}, builder.getI32Type()),
                                           name + ".count", IntegerAttr());
      buffers.push_back({x, count});
    }
    for (auto [i, pair] : llvm::enumerate(pairs)) {
      auto [x, count] = buffers[i];
      auto [nextX, nextCount] = buffers[(i + 1) % buffers.size()];
      Operation *alloc = pair.up.getArgument("out").getDefiningOp();
      rewriteLaunch(pair.up, {{"out", x}, {"handoff_count", count}}, "PRODUCER", 0,
                    {"handoff_count"});
      rewriteLaunch(
          pair.down,
          {{"x", x}, {"handoff_count", count}, {"reset_x", nextX}, {"reset_count", nextCount}},
          "CONSUMER", pair.producerBlocks, {"reset_x", "reset_count"});
      alloc->erase();
    }
    return true;
  }
};

} // namespace
