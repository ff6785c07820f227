// sinter-append-sampler: `sinter compile --sample` gives every language-model entry a
// "next_token" output picked on the device, so a decode loop needs nothing from the host.
#include "sinter/Dialect/Graph/IR/GraphOps.h"
#include "sinter/Passes/EntryNames.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERAPPENDSAMPLER
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace {

constexpr StringLiteral kLogits = "logits", kInputIds = "input_ids", kNextToken = "next_token";

struct AppendSamplerPass : sinter::impl::SinterAppendSamplerBase<AppendSamplerPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int sampled = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      FailureOr<bool> appended = append(func);
      if (failed(appended))
        return signalPassFailure();
      sampled += *appended;
    }
    if (sampled == 0) {
      module.emitError("--sample needs an entry with a 'logits' output [batch, seq, vocab] and "
                       "an 'input_ids' input [batch, seq] of int64 token ids");
      return signalPassFailure();
    }
  }

  /// Whether `func` got a sampler; failure for an entry that looks like a language model but
  /// cannot take one.
  FailureOr<bool> append(func::FuncOp func) {
    int logitsIndex = sinter::findNamedResult(func, kLogits),
        idsIndex = sinter::findNamedArgument(func, kInputIds);
    if (logitsIndex < 0 || idsIndex < 0 || !func.getBody().hasOneBlock())
      return false;
    if (sinter::findNamedResult(func, kNextToken) >= 0)
      return func.emitError("--sample adds a 'next_token' output, and entry '")
             << func.getName() << "' already has one";
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    Value logits = ret.getOperand(logitsIndex);
    Value ids = func.getArgument(idsIndex);
    auto logitsType = dyn_cast<RankedTensorType>(logits.getType());
    auto idsType = dyn_cast<RankedTensorType>(ids.getType());
    if (!logitsType || logitsType.getRank() != 3 ||
        !isa<FloatType>(logitsType.getElementType()))
      return func.emitError("--sample: entry '") << func.getName() << "' has logits "
             << logits.getType() << ", not float [batch, seq, vocab]";
    if (!idsType || idsType.getRank() != 2 || !idsType.getElementType().isInteger(64) ||
        idsType.getDimSize(0) != logitsType.getDimSize(0))
      return func.emitError("--sample: entry '") << func.getName() << "' has input_ids "
             << ids.getType() << ", not int64 [" << logitsType.getDimSize(0) << ", seq]";
    OpBuilder b(ret);
    int64_t batch = logitsType.getDimSize(0);
    auto tokenType = RankedTensorType::get({batch, 1}, b.getI64Type());
    Value next = SampleTokensOp::create(b, ret.getLoc(), tokenType, logits, ids);
    unsigned index = func.getNumResults();
    if (failed(func.insertResult(index, tokenType,
                                 b.getDictionaryAttr(b.getNamedAttr(
                                     "sinter.name", b.getStringAttr(kNextToken))))))
      return func.emitError("--sample could not add the next_token output");
    ret.getOperandsMutable().append(next);
    return true;
  }
};

} // namespace
