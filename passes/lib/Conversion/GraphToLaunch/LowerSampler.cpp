// Lowering of sinter.sample_tokens (--sample) to the sample_tokens kernel: its parameters and
// seen-token bits live in the context's state, where sinter_context_set_sampling finds them by
// name.
#include "LaunchLowering.h"

#include "launch_params.h"

using namespace mlir;
using namespace sinter;
namespace kn = sinter::kernels;

LogicalResult FunctionLowering::lowerSampleTokens(graph::SampleTokensOp sample) {
  auto logits = bufferOf(sample.getLogits());
  auto ids = bufferOf(sample.getInputIds());
  if (failed(logits) || failed(ids))
    return failure();
  auto logitsType = cast<MemRefType>(logits->getType());
  int64_t batch = logitsType.getDimSize(0), rows = logitsType.getDimSize(1),
          vocab = logitsType.getDimSize(2);
  int64_t idsLength = sample.getInputIds().getType().getDimSize(1);
  StringRef element = cxxType(logitsType.getElementType());
  if (element.empty() || !kn::sample_tokens_supported(batch, rows, vocab, idsLength, sharedMemory))
    return sample.emitError("no sample_tokens configuration for logits ") << logitsType;
  Location loc = sample.getLoc();
  static_assert(sizeof(kn::SamplingState) % 4 == 0, "the region is held as i32 words");
  Value params = stateBuffer(
      loc, kn::kSamplingStateRegion,
      MemRefType::get({int64_t(sizeof(kn::SamplingState) / 4)}, builder.getI32Type()));
  Value seen = stateBuffer(
      loc, kn::kSamplingSeenRegion,
      MemRefType::get({batch, kn::sample_tokens_seen_words(vocab)}, builder.getI32Type()));
  Value next = destinationFor(sample.getResult());
  buffers[sample.getResult()] = next;
  kn::LaunchParams lp = kn::sample_tokens_launch(int(batch), vocab);
  return emitKernel(loc, "sample_tokens",
                    {intParam(builder, batch), intParam(builder, rows), intParam(builder, vocab),
                     intParam(builder, idsLength), strParam(builder, element)},
                    {*logits, *ids, params, seen, next}, {lp.grid.x, lp.grid.y, lp.grid.z},
                    {lp.block.x, lp.block.y, lp.block.z}, lp.shared_bytes, {2, 3, 4});
}
