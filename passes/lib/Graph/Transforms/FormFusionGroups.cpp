// Partitions the ops no pattern claimed into fusion groups (see Passes.td).
#include "sinter/Passes/GenericPlan.h"
#include "sinter/Passes/Passes.h"
#include "sinter/Passes/PatternKernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERFORMFUSIONGROUPS
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter;

namespace {

/// Ops the pattern kernels compute or absorb: pattern ops, and the views, RoPE and SwiGLU
/// reached from their results (the head split of a fused QKV projection, the head merge
/// after attention, gate/up slices), which the lowering folds into the pattern launches.
llvm::DenseSet<Operation *> patternClaims(Block &block) {
  llvm::DenseSet<Operation *> claimed;
  SmallVector<Operation *> work;
  for (Operation &op : block) {
    bool pattern = isa<graph::LinearOp, graph::FusedAttentionOp, graph::DecodeAttentionOp,
                       graph::CacheWriteOp>(op);
    if (auto norm = dyn_cast<graph::RMSNormalizationOp>(op))
      pattern = rmsNormHasKernel(norm);
    if (auto gather = dyn_cast<graph::GatherOp>(op))
      pattern = gatherHasKernel(gather);
    if (pattern) {
      claimed.insert(&op);
      work.push_back(&op);
    }
  }
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Operation *user : op->getUsers())
      if (isa<graph::SliceOp, graph::ReshapeOp, graph::TransposeOp, graph::RopeOp,
              graph::SiluMulOp>(user) &&
          claimed.insert(user).second)
        work.push_back(user);
  }
  // A view that only generic ops read (Gemma's gate and up slices before its GeLU) is theirs:
  // it joins their group and is read in place there, instead of a copy launch of its own; so
  // does a norm the rms_norm kernel would take (a post-norm before its residual add: one
  // generated launch instead of two). Last ops first, so that a chain of views is released
  // from its end.
  for (Operation &op : llvm::reverse(block)) {
    if (!isa<graph::SliceOp, graph::ReshapeOp, graph::TransposeOp, graph::RMSNormalizationOp>(
            op) ||
        !claimed.contains(&op))
      continue;
    bool genericUsersOnly = !op.use_empty() && llvm::all_of(op.getUsers(), [&](Operation *u) {
      return !claimed.contains(u) && !u->hasTrait<OpTrait::IsTerminator>();
    });
    if (genericUsersOnly)
      claimed.erase(&op);
  }
  return claimed;
}

struct Group {
  SmallVector<Operation *> ops; // in reverse program order: the root first
  Operation *rowOp = nullptr;
};

class Partitioner {
public:
  explicit Partitioner(func::FuncOp func) : func(func) {}

  void run() {
    Block &block = func.getBody().front();
    llvm::DenseSet<Operation *> claimed = patternClaims(block);
    Operation *ret = block.getTerminator();
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      if (!isGenericOp(op) || isa<graph::ConstantOp>(op) || claimed.contains(op))
        continue;
      Group *users = commonUserGroup(op);
      if (users && canJoin(op, *users)) {
        add(op, *users);
        continue;
      }
      // A reshape of a materialized value is a view, not a launch, unless it is returned.
      if (isa<graph::ReshapeOp>(op) &&
          llvm::none_of(op->getUsers(), [&](Operation *u) { return u == ret; }))
        continue;
      groups.push_back(std::make_unique<Group>());
      add(op, *groups.back());
    }
    for (auto &group : groups)
      materialize(*group);
  }

private:
  /// The group every user of `op` is in, or null.
  Group *commonUserGroup(Operation *op) {
    Group *common = nullptr;
    for (Operation *user : op->getUsers()) {
      Group *g = groupOf.lookup(user);
      if (!g || (common && g != common))
        return nullptr;
      common = g;
    }
    return common;
  }

  bool canJoin(Operation *op, Group &group) {
    if (!isRowOp(op))
      return true;
    if (group.rowOp)
      return false;
    // Everything in the group downstream of a row operation reads it elementwise at its
    // shape: the generated row kernel computes it per element of the current row.
    auto shape = cast<ShapedType>(op->getResult(0).getType()).getShape();
    SmallVector<Operation *> work(op->getUsers().begin(), op->getUsers().end());
    llvm::DenseSet<Operation *> seen;
    while (!work.empty()) {
      Operation *user = work.pop_back_val();
      if (!seen.insert(user).second || groupOf.lookup(user) != &group)
        continue;
      if (!isElementwiseOp(user) ||
          cast<ShapedType>(user->getResult(0).getType()).getShape() != shape)
        return false;
      work.append(user->getUsers().begin(), user->getUsers().end());
    }
    return true;
  }

  void add(Operation *op, Group &group) {
    group.ops.push_back(op);
    groupOf[op] = &group;
    if (isRowOp(op))
      group.rowOp = op;
  }

  void materialize(Group &group) {
    llvm::SmallPtrSet<Operation *, 16> members(group.ops.begin(), group.ops.end());
    SmallVector<Operation *> ordered(llvm::reverse(group.ops));
    llvm::SetVector<Value> inputs;
    SmallVector<Operation *> constants;
    for (Operation *op : ordered)
      for (Value v : op->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (def && members.contains(def))
          continue;
        if (isInlinedConstant(v)) {
          if (!llvm::is_contained(constants, def))
            constants.push_back(def);
        } else {
          inputs.insert(v);
        }
      }
    Operation *root = group.ops.front();
    OpBuilder builder(root);
    SmallVector<Location> locs;
    for (Operation *op : ordered)
      locs.push_back(op->getLoc());
    Location loc = builder.getFusedLoc(locs);
    auto fused =
        graph::FusionGroupOp::create(builder, loc, root->getResultTypes(), inputs.getArrayRef(),
                                     /*in_consumer_prologue=*/false);
    Block *body = new Block();
    fused.getBody().push_back(body);
    IRMapping map;
    for (Value in : inputs)
      map.map(in, body->addArgument(in.getType(), in.getLoc()));
    OpBuilder inner = OpBuilder::atBlockBegin(body);
    for (Operation *c : constants)
      inner.clone(*c, map);
    for (Operation *op : ordered)
      inner.clone(*op, map);
    graph::YieldOp::create(inner, loc, llvm::map_to_vector(root->getResults(), [&](Value v) {
                             return map.lookup(v);
                           }));
    root->replaceAllUsesWith(fused->getResults());
    for (Operation *op : group.ops) // users first
      op->erase();
  }

  func::FuncOp func;
  SmallVector<std::unique_ptr<Group>> groups;
  llvm::DenseMap<Operation *, Group *> groupOf;
};

struct FormFusionGroupsPass : sinter::impl::SinterFormFusionGroupsBase<FormFusionGroupsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.getBody().hasOneBlock())
        Partitioner(func).run();
  }
};

} // namespace
