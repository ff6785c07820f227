// Which gate/up -> down pairs of linear_small_m launches hand x over through the context state
// instead of the down launch's griddepcontrol.wait (LinearHandoff in launch_params.h). The
// release after the gate/up launch's last block is the longest launch boundary of a decode
// step; with the handoff the down launch starts on the data itself (decode_chain_bench: -1.0 %
// per step at position 127, RESULTS.md).
//
// A pair qualifies when the down linear's input is the SwiGLU output of the gate/up linear
// (silu_mul_pairs) and nothing else, both take linear_small_m, the down launch is a handoff
// consumer (linear_small_m_handoff_consumer_supported: one decode row, x staged by plain loads),
// and only constants come between them. Each consumer zeroes the next pair's buffers and the
// last consumer the first's, so a function needs at least two pairs; with fewer it keeps the
// plain launches.
#include "LaunchLowering.h"

#include "launch_params.h"

using namespace mlir;
using namespace sinter;
namespace kn = sinter::kernels;

namespace {

/// Whether only constants lie between `up` and `down` in their block.
bool adjacent(graph::LinearOp up, graph::LinearOp down) {
  if (up->getBlock() != down->getBlock() || !up->isBeforeInBlock(down))
    return false;
  for (Operation *op = up->getNextNode(); op && op != down.getOperation(); op = op->getNextNode())
    if (!isa<graph::ConstantOp>(op))
      return false;
  return true;
}

} // namespace

void FunctionLowering::planHandoffs() {
  if (f32Activations)
    return;
  struct Candidate {
    graph::LinearOp up, down;
    int64_t m, k, producerBlocks;
  };
  SmallVector<Candidate> found;
  for (Operation &op : func.getBody().front().without_terminator()) {
    auto up = dyn_cast<graph::LinearOp>(&op);
    if (!up || !wantsKernel(up))
      continue;
    if (!up.getSiluMulPairs())
      continue;
    auto down = dyn_cast_or_null<graph::LinearOp>(singleUser(up.getResult()));
    if (!down || down.getInput() != up.getResult() || !wantsKernel(down) ||
        down.getNormWeight() || !adjacent(up, down) || !up.getType().getElementType().isBF16())
      continue;
    auto [m, k1] = linearRows(up);
    auto [m2, k2] = linearRows(down);
    if (m2 != m)
      continue;
    int64_t n1 = up.getWeight().getType().getDimSize(1);
    int64_t n2 = down.getWeight().getType().getDimSize(1);
    auto prologue = up.getNormWeight() ? kn::LinearPrologue::RMS_NORM : kn::LinearPrologue::NONE;
    // Each launch reads its weight as lowerLinearKernel stores it (kernelWeights: with int4
    // a K the int4 layout does not take keeps bf16), and the consumer waits for the producer's
    // grid as the producer's weights tile it. int4 consumers never qualify (their weights are
    // not staged in shared memory), so int4 MLPs keep the plain launches.
    const kn::LinearWeights upWeights = kernelWeights(k1), downWeights = kernelWeights(k2);
    if (!kn::linear_small_m_supported(m, n1, k1, prologue, kn::LinearEpilogue::SILU_MUL_PAIRS, 0,
                                      0, 2, smCount, upWeights, weightGroup(upWeights)) ||
        !kn::linear_small_m_handoff_consumer_supported(m, n2, k2, kn::LinearPrologue::NONE,
                                                       smCount, downWeights))
      continue;
    found.push_back(
        {up, down, m, k2,
         kn::linear_small_m_tiling(m, n1, k1, prologue, smCount, 2, upWeights).grid});
  }
  if (found.size() < 2)
    return;
  std::string prefix = (func.getName() + ".linear_handoff.").str();
  SmallVector<HandoffPair> pairs(found.size());
  for (auto [i, c] : llvm::enumerate(found)) {
    std::string name = prefix + std::to_string(i);
    pairs[i].producerBlocks = c.producerBlocks;
    pairs[i].x = stateBuffer(c.up.getLoc(), name + ".x",
                             MemRefType::get({c.m, c.k}, builder.getBF16Type()));
    pairs[i].count = stateBuffer(c.up.getLoc(), name + ".count",
                                 MemRefType::get({1}, builder.getI32Type()));
  }
  for (auto [i, c] : llvm::enumerate(found)) {
    const HandoffPair &next = pairs[(i + 1) % pairs.size()];
    pairs[i].resetX = next.x;
    pairs[i].resetCount = next.count;
    producerOf[c.up] = pairs[i];
    consumerOf[c.down] = pairs[i];
  }
}
