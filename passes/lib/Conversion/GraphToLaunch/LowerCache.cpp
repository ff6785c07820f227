// Lowering of KV-cache writes and decode attention to the attention_decode and
// kv_cache_write kernels (runtime/kernels), over state buffers of the context.
#include "LaunchLowering.h"

#include "sinter/Passes/KernelCache.h"

#include "mlir/IR/TypeUtilities.h"

#include "launch_params.h"

using namespace mlir;
using namespace sinter;
namespace kn = sinter::kernels;

namespace {

bool readByDecodeAttention(graph::CacheWriteOp write) {
  return llvm::any_of(write->getUsers(),
                      [](Operation *user) { return isa<graph::DecodeAttentionOp>(user); });
}

/// The cache write of `rows` at `positions`, if one.
graph::CacheWriteOp cacheWriteOf(Value rows, Value positions) {
  for (OpOperand &use : rows.getUses())
    if (auto write = dyn_cast<graph::CacheWriteOp>(use.getOwner());
        write && use.getOperandNumber() == 1 && write.getPositions() == positions)
      return write;
  return {};
}

int64_t cacheLength(graph::CacheWriteOp write) {
  return write.getState().getType().getDimSize(write.getAxis());
}

} // namespace

LogicalResult FunctionLowering::lowerCacheWrite(graph::CacheWriteOp write) {
  auto state = bufferOf(write.getState());
  if (failed(state))
    return failure();
  // The write happens in place: the updated cache is the state buffer itself.
  buffers[write.getResult()] = *state;
  if (readByDecodeAttention(write))
    return success(); // the attention kernel writes the new row
  // A prefill: the k and v writes of one step, from one split_qkv_heads, are one launch, at
  // whichever of the two comes first.
  auto split = write.getRows().getDefiningOp<graph::SplitQkvHeadsOp>();
  if (!split || !isKernelCache(write))
    return lowerCacheRowsWrite(write, *state);
  graph::CacheWriteOp kWrite = cacheWriteOf(split.getK(), write.getPositions());
  graph::CacheWriteOp vWrite = cacheWriteOf(split.getV(), write.getPositions());
  if ((write != kWrite && write != vWrite) || !kWrite || !vWrite ||
      kWrite.getState().getType() != vWrite.getState().getType() || !isKernelCache(kWrite) ||
      !isKernelCache(vWrite))
    return write.emitError("a cache write needs the matching key/value write of the same step");
  graph::CacheWriteOp other = write == kWrite ? vWrite : kWrite;
  if (other->isBeforeInBlock(write))
    return success(); // written with `other`
  auto otherState = bufferOf(other.getState());
  if (failed(otherState))
    return failure();
  buffers[other.getResult()] = *otherState;
  std::optional<HeadColumns> k = headColumns(split.getK()), v = headColumns(split.getV());
  Value kState = write == kWrite ? *state : *otherState;
  Value vState = write == kWrite ? *otherState : *state;
  auto type = write.getState().getType();
  int64_t batch = type.getDimSize(0), n = write.getRows().getType().getDimSize(2),
          hkv = type.getDimSize(1), d = type.getDimSize(3), length = cacheLength(write);
  if (!kn::kv_cache_write_supported(n, hkv, d, k->offset, v->offset, k->rowStride, length))
    return write.emitError("no kv_cache_write configuration for D=") << d;
  auto positions = bufferOf(write.getPositions());
  if (failed(positions))
    return failure();
  if (!cast<RankedTensorType>(write.getPositions().getType()).getElementType().isInteger(64))
    return write.emitError("cache positions must be i64");
  kn::LaunchParams lp = kn::kv_cache_write_launch(batch * n, hkv, d);
  return emitKernel(builder.getFusedLoc({write.getLoc(), other.getLoc()}), "kv_cache_write",
                    {intParam(builder, n), intParam(builder, hkv), intParam(builder, d),
                     intParam(builder, k->offset), intParam(builder, v->offset),
                     intParam(builder, k->rowStride), intParam(builder, length),
                     intParam(builder, batch)},
                    {k->buffer, *positions, kState, vState}, {lp.grid.x, lp.grid.y, lp.grid.z},
                    {lp.block.x, lp.block.y, lp.block.z}, lp.shared_bytes, {2, 3});
}

LogicalResult FunctionLowering::lowerCacheRowsWrite(graph::CacheWriteOp write, Value state) {
  auto type = write.getState().getType();
  int64_t axis = write.getAxis();
  // Only the KV-cache layout: any other scatter of an input into an output that
  // sinter-form-cache-state took for a cache (an ONNX ScatterND model) would otherwise compile
  // with its input and output moved into the context's state.
  if (type.getRank() != 4 || axis != 2)
    return write.emitError("a cache write needs a [batch, heads, length, head_dim] cache "
                           "written along the length");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d < axis)
      outer *= type.getDimSize(d);
    else if (d > axis)
      inner *= type.getDimSize(d);
  }
  int64_t rows = write.getRows().getType().getDimSize(axis), length = cacheLength(write);
  StringRef element = cxxType(type.getElementType());
  if (element.empty() || !kn::cache_rows_write_supported(outer, rows, inner, length))
    return write.emitError("no cache_rows_write configuration for a ")
           << type << " cache written " << rows << " rows at a time";
  if (!cast<RankedTensorType>(write.getPositions().getType()).getElementType().isInteger(64))
    return write.emitError("cache positions must be i64");
  auto rowsBuffer = bufferOf(write.getRows());
  auto positions = bufferOf(write.getPositions());
  if (failed(rowsBuffer) || failed(positions))
    return failure();
  kn::LaunchParams lp = kn::cache_rows_write_launch(outer, rows, inner);
  return emitKernel(write.getLoc(), "cache_rows_write",
                    {intParam(builder, outer), intParam(builder, rows), intParam(builder, inner),
                     intParam(builder, length), strParam(builder, element)},
                    {*rowsBuffer, *positions, state}, {lp.grid.x, lp.grid.y, lp.grid.z},
                    {lp.block.x, lp.block.y, lp.block.z}, lp.shared_bytes, {2});
}

LogicalResult FunctionLowering::lowerDecodeAttention(graph::DecodeAttentionOp attention) {
  auto kWrite = attention.getK().getDefiningOp<graph::CacheWriteOp>();
  auto vWrite = attention.getV().getDefiningOp<graph::CacheWriteOp>();
  if (!kWrite || !vWrite || !isKernelCache(kWrite) || !isKernelCache(vWrite))
    return attention.emitError("decode attention reads bf16 caches written in the same step");
  std::optional<HeadColumns> q = headColumns(attention.getQ()), k = headColumns(kWrite.getRows()),
                             v = headColumns(vWrite.getRows());
  if (!q || !k || !v || q->buffer != k->buffer || q->buffer != v->buffer)
    return attention.emitError("decode attention operands must come from one fused QKV "
                               "projection");
  auto qType = attention.getQ().getType(), cacheType = kWrite.getState().getType();
  int64_t batch = cacheType.getDimSize(0), hq = qType.getDimSize(1), hkv = cacheType.getDimSize(1),
          d = qType.getDimSize(3), length = cacheLength(kWrite), stride = q->rowStride;
  // Per-head q/k norms and RoPE the kernel applies (sinter-fuse-decode-qk-norm).
  auto heads = attention.getQ().getDefiningOp<graph::SplitQkvHeadsOp>();
  bool qkNorm = heads && heads.getNormInAttention();
  // The split of one sequence for every batch size: a batch of 8 at 1024 positions ran its
  // 128 blocks of 512 keys at half the copy bandwidth (results/attention_decode_s28c.log);
  // more, shorter splits keep more loads in flight.
  int split = kn::attention_decode_split(length, hq, hkv, d, smCount, qkNorm);
  if (!kn::attention_decode_supported(hq, hkv, d, q->offset, k->offset, v->offset, stride, length,
                                      split, batch))
    return attention.emitError("no attention_decode configuration for ")
           << hq << " query heads, " << hkv << " kv heads, D=" << d << ", L=" << length
           << ", batch " << batch;
  if (failed(requireMergedHeads(attention, attention.getMergedHeads())))
    return failure();
  auto position = bufferOf(attention.getPosition());
  auto kState = bufferOf(kWrite.getState()), vState = bufferOf(vWrite.getState());
  if (failed(position) || failed(kState) || failed(vState))
    return failure();
  if (!attention.getPosition().getType().getElementType().isInteger(64))
    return attention.emitError("the cache position must be i64");
  Value keyMask;
  if (Value mask = attention.getKeyMask()) {
    if (!cast<ShapedType>(mask.getType()).getElementType().isInteger(64))
      return attention.emitError("key_mask must be i64 for the attention_decode kernel");
    auto buffer = bufferOf(mask);
    if (failed(buffer))
      return failure();
    keyMask = *buffer;
  }
  // Two to eight splits of a kv head merge in one thread-block cluster while the grid fits in
  // one wave: no records, fence and atomic arrival on the critical path. Otherwise split-KV
  // scratch for the merge through global memory: zeroed state that every layer's launch reuses
  // in turn (each leaves its counters zero again).
  bool clustered = kn::attention_decode_cluster_merge(hkv, length, split, batch, smCount);
  Value partials, counters;
  int floats = kn::attention_decode_partials_floats(hq, hkv, d, length, split, batch);
  if (floats && !clustered) {
    partials = stateBuffer(attention.getLoc(), ".attention_decode.partials." + std::to_string(floats),
                           MemRefType::get({floats}, builder.getF32Type()));
    int words = kn::attention_decode_counter_words(hkv, length, split, batch);
    counters = stateBuffer(attention.getLoc(), ".attention_decode.counters." + std::to_string(words),
                           MemRefType::get({words}, builder.getI32Type()));
  }
  Value out = destinationFor(attention.getResult());
  buffers[attention.getResult()] = out;
  float scale = attention.getScale().convertToFloat();
  kn::LaunchParams lp = kn::attention_decode_launch(hkv, length, split, batch);
  SmallVector<Attribute> params = {
      intParam(builder, hq),        intParam(builder, hkv),
      intParam(builder, d),         intParam(builder, q->offset),
      intParam(builder, k->offset), intParam(builder, v->offset),
      intParam(builder, stride),    intParam(builder, length),
      intParam(builder, split),     strParam(builder, std::to_string(floatBits(scale)) + "u"),
      strParam(builder, keyMask ? "true" : "false"), intParam(builder, batch)};
  Value qNorm, kNorm, cos, sin;
  if (qkNorm) {
    auto qWeight = bufferOf(heads.getQNorm()), kWeight = bufferOf(heads.getKNorm());
    auto tables = ropeTableBuffers(attention, heads, batch, /*allowF32=*/true);
    if (failed(qWeight) || failed(kWeight) || failed(tables))
      return failure();
    qNorm = *qWeight;
    kNorm = *kWeight;
    std::tie(cos, sin) = *tables;
    float eps = heads.getNormEpsilon()->convertToFloat();
    params.append({strParam(builder, "true"),
                   strParam(builder, cxxType(getElementTypeOrSelf(qNorm))),
                   strParam(builder, cxxType(getElementTypeOrSelf(cos))),
                   strParam(builder, std::to_string(floatBits(eps)) + "u")});
  }
  if (float softcap = attention.getSoftcap().convertToFloat(); softcap != 0.0f) {
    if (!qkNorm) // the parameters before SOFTCAP_BITS, at their defaults
      params.append({strParam(builder, "false"), strParam(builder, "__nv_bfloat16"),
                     strParam(builder, "__nv_bfloat16"), strParam(builder, "0u")});
    params.push_back(strParam(builder, std::to_string(floatBits(softcap)) + "u"));
  }
  Location loc = builder.getFusedLoc({kWrite.getLoc(), vWrite.getLoc(), attention.getLoc()});
  SmallVector<unsigned> writes = {2, 3, 4};
  if (partials)
    writes.append({5, 6});
  StringRef kernel = clustered ? "attention_decode_clustered" : "attention_decode";
  return emitKernel(loc, kernel, params,
                    {q->buffer, *position, *kState, *vState, out, partials, counters, keyMask,
                     qNorm, kNorm, cos, sin},
                    {lp.grid.x, lp.grid.y, lp.grid.z}, {lp.block.x, lp.block.y, lp.block.z},
                    lp.shared_bytes, writes);
}
