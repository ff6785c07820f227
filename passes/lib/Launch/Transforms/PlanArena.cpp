#include "sinter/Dialect/Launch/IR/LaunchOps.h"
#include "sinter/Passes/Passes.h"
#include "sinter/program.h" // SINTER_BUFFER_ALIGNMENT

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace sinter {
#define GEN_PASS_DEF_LAUNCHPLANARENA
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter;

namespace {


struct Interval {
  launch::AllocOp alloc;
  int64_t first, last, bytes, offset = -1;
};

/// First fit by decreasing size: each buffer takes the lowest offset where it overlaps no
/// buffer already placed whose live range intersects its own.
int64_t place(std::vector<Interval> &intervals) {
  std::vector<Interval *> order;
  for (Interval &i : intervals)
    order.push_back(&i);
  std::stable_sort(order.begin(), order.end(),
                   [](Interval *a, Interval *b) { return a->bytes > b->bytes; });
  int64_t total = 0;
  std::vector<Interval *> placed;
  for (Interval *cur : order) {
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (Interval *p : placed)
      if (p->first <= cur->last && cur->first <= p->last)
        busy.push_back({p->offset, p->offset + p->bytes});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (offset + cur->bytes <= lo)
        break;
      offset = std::max<int64_t>(offset, llvm::alignTo(hi, SINTER_BUFFER_ALIGNMENT));
    }
    cur->offset = offset;
    total = std::max(total, offset + cur->bytes);
    placed.push_back(cur);
  }
  return (int64_t)llvm::alignTo(total, SINTER_BUFFER_ALIGNMENT);
}

struct PlanArenaPass : sinter::impl::LaunchPlanArenaBase<PlanArenaPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t arenaBytes = 0;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      llvm::DenseMap<Operation *, int64_t> position;
      int64_t index = 0;
      func.walk([&](Operation *op) { position[op] = index++; });
      std::vector<Interval> intervals;
      func.walk([&](launch::AllocOp alloc) {
        Interval interval{alloc, position[alloc], position[alloc],
                          launch::bufferBytes(alloc.getBuffer().getType())};
        for (Operation *user : alloc->getUsers()) {
          interval.first = std::min(interval.first, position[user]);
          interval.last = std::max(interval.last, position[user]);
        }
        intervals.push_back(interval);
      });
      arenaBytes = std::max(arenaBytes, place(intervals));
      OpBuilder builder(func.getContext());
      for (Interval &i : intervals)
        i.alloc.setOffsetAttr(builder.getI64IntegerAttr(i.offset));
    }
    module->setAttr("launch.arena_bytes",
                    IntegerAttr::get(IntegerType::get(&getContext(), 64), arenaBytes));
  }
};

} // namespace
