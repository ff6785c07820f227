// Llama 3.2 1B decode step as the compiler lowers it (84 launches: 2 RoPE-table gathers, the
// embedding, 16 x [RMS+QKV+RoPE, attention with the cache write, o_proj+residual,
// RMS+gate/up+SiLU, down+residual (gate/up -> down through the layer's handoff buffers)],
// RMS+LM head), on random weights, launched with PDL and replayed as one CUDA graph. Prints ms
// per step against the weight bytes / measured copy bandwidth, and a checksum of the logits.
// Not a test (nothing is checked): it times the kernel chain without the compiler and runtime
// in the way, and, built with -DSINTER_TRACE (target decode_chain_trace), prints where each
// launch boundary's time goes from the blocks' own timestamps, and where the time after a
// block's release goes from its in-kernel marks (BlockTrace::mark).
//
//   decode_chain_bench [--position P] [--iterations N] [--layers L]
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attention_decode.cuh"
#include "attention_decode_clustered.cuh"
#include "embedding_gather.cuh"
#include "gpu_test_util.h"
#include "linear_small_m.cuh"

using namespace sinter::kernels;
using gputest::launch_pdl;

namespace {

constexpr int kSms = 132;
constexpr int kHidden = 2048, kInter = 8192, kVocab = 128256, kHeadDim = 64;
constexpr int kHeads = 32, kKvHeads = 8, kMaxLen = 1024;
constexpr int kQkvRows = (kHeads + 2 * kKvHeads) * kHeadDim; // 3072
constexpr int kRopeRows = (kHeads + kKvHeads) * kHeadDim;    // 2560
constexpr uint32_t kEpsBits = 925353388u;                    // 1e-5f
constexpr uint32_t kScaleBits = 1040183808u;                 // 0.125f
constexpr int kSplit = attention_decode_split(kMaxLen, kHeads, kKvHeads, kHeadDim, kSms);

auto *const kQkv = &linear_small_m<1, kQkvRows, kHidden, LinearPrologue::RMS_NORM,
                                   LinearEpilogue::ROPE_PAIRS, bf16, kEpsBits, kRopeRows,
                                   kHeadDim, kSms, bf16>;
// The kernel the compiler picks: 2 to 8 splits merge inside a cluster (one wave of blocks).
template <bool CLUSTER> constexpr auto attention_kernel() {
  if constexpr (CLUSTER)
    return &attention_decode_clustered<kHeads, kKvHeads, kHeadDim, 0, kHeads * kHeadDim,
                                       (kHeads + kKvHeads) * kHeadDim, kQkvRows, kMaxLen, kSplit,
                                       kScaleBits, /*KEY_MASK=*/false, /*BATCH=*/1>;
  else
    return &attention_decode<kHeads, kKvHeads, kHeadDim, 0, kHeads * kHeadDim,
                             (kHeads + kKvHeads) * kHeadDim, kQkvRows, kMaxLen, kSplit,
                             kScaleBits, /*KEY_MASK=*/false, /*BATCH=*/1>;
}
auto *const kAttn =
    attention_kernel<attention_decode_cluster_merge(kKvHeads, kMaxLen, kSplit, 1, kSms)>();
auto *const kOProj = &linear_small_m<1, kHidden, kHidden, LinearPrologue::NONE,
                                     LinearEpilogue::RESIDUAL, bf16, 0u, 0, 0, kSms, bf16>;
// gate/up -> down through the handoff buffers of the layer, as the compiler lowers them.
constexpr int kGateUpBlocks =
    linear_small_m_tiling(1, 2 * kInter, kHidden, LinearPrologue::RMS_NORM, kSms).grid;
auto *const kGateUp = &linear_small_m<1, 2 * kInter, kHidden, LinearPrologue::RMS_NORM,
                                      LinearEpilogue::SILU_MUL_PAIRS, bf16, kEpsBits, 0, 0,
                                      kSms, bf16, LinearHandoff::PRODUCER>;
auto *const kDown = &linear_small_m<1, kHidden, kInter, LinearPrologue::NONE,
                                    LinearEpilogue::RESIDUAL, bf16, 0u, 0, 0, kSms, bf16,
                                    LinearHandoff::CONSUMER, kGateUpBlocks>;
auto *const kLmHead = &linear_small_m<1, kVocab, kHidden, LinearPrologue::RMS_NORM,
                                      LinearEpilogue::NONE, bf16, kEpsBits, 0, 0, kSms, bf16>;
auto *const kGatherRope = &embedding_gather<1, kHeadDim, kMaxLen, bf16, bf16>;
auto *const kGatherTok = &embedding_gather<1, kHidden, kVocab, bf16, bf16>;

__global__ void fill_random(bf16 *p, size_t n, uint32_t seed, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = __float2bfloat16(scale * (float(h & 0xffff) / 32768.f - 1.f));
  }
}

template <typename T> T *dalloc(size_t n) {
  T *p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(16, n * sizeof(T))));
  CUDA_CHECK(cudaMemset(p, 0, std::max<size_t>(16, n * sizeof(T))));
  return p;
}
bf16 *device_random_bf16(size_t n, uint32_t seed, float scale) {
  bf16 *p = dalloc<bf16>(n);
  fill_random<<<1024, 256>>>(p, n, seed, scale);
  CUDA_CHECK(cudaGetLastError());
  return p;
}

struct Layer {
  bf16 *norm1, *wqkv, *wo, *norm2, *wgu, *wd, *k_cache, *v_cache;
  bf16 *act;           // gate/up -> down handoff buffer (zeroed: "not written")
  uint32_t *act_count; // and its count of gate/up blocks
};

struct Model {
  int layers = 16;
  bf16 *embedding, *norm_f, *rope_cos_table, *rope_sin_table;
  std::vector<Layer> layer;
  int64_t *token, *position;
  bf16 *cos, *sin, *resid, *qkv, *attn, *resid2, *logits;
  float *partials;
  uint32_t *counters;
  size_t weight_bytes = 0;
};

Model make_model(int layers, int64_t position) {
  Model m;
  m.layers = layers;
  uint32_t seed = 1;
  auto weight = [&](size_t n, float scale) {
    m.weight_bytes += n * 2;
    return device_random_bf16(n, seed++, scale);
  };
  m.embedding = weight(size_t(kVocab) * kHidden, 0.05f);
  m.norm_f = weight(kHidden, 1.f);
  m.rope_cos_table = device_random_bf16(size_t(kMaxLen) * kHeadDim, seed++, 1.f);
  m.rope_sin_table = device_random_bf16(size_t(kMaxLen) * kHeadDim, seed++, 1.f);
  for (int l = 0; l < layers; ++l) {
    Layer L;
    L.norm1 = weight(kHidden, 1.f);
    L.norm2 = weight(kHidden, 1.f);
    // One allocation per layer in launch order, as the compiler lays out the weight blob.
    const size_t nqkv = size_t(kQkvRows) * kHidden, no = size_t(kHidden) * kHidden,
                 ngu = size_t(2 * kInter) * kHidden, nd = size_t(kHidden) * kInter;
    L.wqkv = weight(nqkv + no + ngu + nd, 0.02f);
    L.wo = L.wqkv + nqkv;
    L.wgu = L.wo + no;
    L.wd = L.wgu + ngu;
    L.k_cache = device_random_bf16(size_t(kKvHeads) * kMaxLen * kHeadDim, seed++, 1.f);
    L.v_cache = device_random_bf16(size_t(kKvHeads) * kMaxLen * kHeadDim, seed++, 1.f);
    L.act = dalloc<bf16>(kInter);
    L.act_count = dalloc<uint32_t>(1);
    m.layer.push_back(L);
  }
  m.token = dalloc<int64_t>(1);
  m.position = dalloc<int64_t>(1);
  const int64_t tok = 12345;
  CUDA_CHECK(cudaMemcpy(m.token, &tok, 8, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(m.position, &position, 8, cudaMemcpyHostToDevice));
  m.cos = dalloc<bf16>(kHeadDim);
  m.sin = dalloc<bf16>(kHeadDim);
  m.resid = dalloc<bf16>(kHidden);
  m.qkv = dalloc<bf16>(kQkvRows);
  m.attn = dalloc<bf16>(kHidden);
  m.resid2 = dalloc<bf16>(kHidden);
  m.logits = dalloc<bf16>(kVocab);
  m.partials = dalloc<float>(attention_decode_partials_floats(kHeads, kKvHeads, kHeadDim,
                                                              kMaxLen, kSplit));
  m.counters = dalloc<uint32_t>(kKvHeads);
  CUDA_CHECK(cudaDeviceSynchronize());
  return m;
}

LaunchParams linear_lp(int n_rows, int k, LinearPrologue pro) {
  return linear_small_m_launch(1, n_rows, k, pro, kSms);
}

// One decode step; returns the launch names in order.
std::vector<std::string> enqueue_step(const Model &m, cudaStream_t s) {
  std::vector<std::string> names;
  const bf16 *none = nullptr;
  uint32_t *no_count = nullptr;
  bf16 *no_x = nullptr;
  const float *no_scale = nullptr; // bf16 weights
  const uint8_t *no_zero = nullptr;
  auto check = [&](cudaError_t e, const char *name) {
    CUDA_CHECK(e);
    names.push_back(name);
  };
  check(launch_pdl(kGatherRope, embedding_gather_launch(1, kHeadDim, 2), s, m.position,
                   (const bf16 *)m.rope_cos_table, m.cos),
        "rope_cos");
  check(launch_pdl(kGatherRope, embedding_gather_launch(1, kHeadDim, 2), s, m.position,
                   (const bf16 *)m.rope_sin_table, m.sin),
        "rope_sin");
  check(launch_pdl(kGatherTok, embedding_gather_launch(1, kHidden, 2), s, m.token,
                   (const bf16 *)m.embedding, m.resid),
        "embedding");
  for (size_t l = 0; l < m.layer.size(); ++l) {
    const Layer &L = m.layer[l];
    // down resets the next layer's handoff buffers (the last layer: the first layer's).
    const Layer &next = m.layer[(l + 1) % m.layer.size()];
    check(launch_pdl(kQkv, linear_lp(kQkvRows, kHidden, LinearPrologue::RMS_NORM), s,
                     (const bf16 *)m.resid, (const bf16 *)L.wqkv, (const bf16 *)L.norm1, none,
                     none, (const bf16 *)m.cos, (const bf16 *)m.sin, m.qkv, no_count, no_x,
                     no_count, no_scale, no_zero, none, no_x),
          "qkv");
    check(launch_pdl(kAttn, attention_decode_launch(kKvHeads, kMaxLen, kSplit), s,
                     (const bf16 *)m.qkv, (const int64_t *)m.position, L.k_cache, L.v_cache,
                     m.attn, m.partials, m.counters, (const int64_t *)nullptr,
                     (const bf16 *)nullptr, (const bf16 *)nullptr, (const bf16 *)nullptr,
                     (const bf16 *)nullptr),
          "attention");
    check(launch_pdl(kOProj, linear_lp(kHidden, kHidden, LinearPrologue::NONE), s,
                     (const bf16 *)m.attn, (const bf16 *)L.wo, none, none,
                     (const bf16 *)m.resid, none, none, m.resid2, no_count, no_x, no_count,
                     no_scale, no_zero, none, no_x),
          "o_proj");
    check(launch_pdl(kGateUp, linear_lp(2 * kInter, kHidden, LinearPrologue::RMS_NORM), s,
                     (const bf16 *)m.resid2, (const bf16 *)L.wgu, (const bf16 *)L.norm2, none,
                     none, none, none, L.act, L.act_count, no_x, no_count,
                     no_scale, no_zero, none, no_x),
          "gate_up");
    check(launch_pdl(kDown, linear_lp(kHidden, kInter, LinearPrologue::NONE), s,
                     (const bf16 *)L.act, (const bf16 *)L.wd, none, none,
                     (const bf16 *)m.resid2, none, none, m.resid, L.act_count, next.act,
                     next.act_count, no_scale, no_zero, none, no_x),
          "down");
  }
  check(launch_pdl(kLmHead, linear_lp(kVocab, kHidden, LinearPrologue::RMS_NORM), s,
                   (const bf16 *)m.resid, (const bf16 *)m.embedding, (const bf16 *)m.norm_f,
                   none, none, none, none, m.logits, no_count, no_x, no_count,
                   no_scale, no_zero, none, no_x),
        "lm_head");
  return names;
}

#ifdef SINTER_TRACE
// Per launch kind, averaged over the layers (the first layer and the embedding excluded):
// blocks, the spread of block starts, release = first wait release - previous launch's last
// exit, first-exit and last-exit times after the release, and the launch's share of the step.
void print_trace(const std::vector<std::string> &names) {
  uint32_t count = 0;
  CUDA_CHECK(cudaMemcpyFromSymbol(&count, detail::trace_count, sizeof(count)));
  count = std::min(count, detail::kTraceCapacity);
  std::vector<detail::TraceRecord> rec(count);
  CUDA_CHECK(cudaMemcpyFromSymbol(rec.data(), detail::trace_records,
                                  count * sizeof(detail::TraceRecord)));
  std::vector<detail::TraceRecord> traced;
  for (const auto &r : rec)
    if (r.waited) traced.push_back(r);
  std::sort(traced.begin(), traced.end(),
            [](const auto &a, const auto &b) { return a.waited < b.waited; });
  // Launches are consecutive in release order; the traced ones are the linears and attention.
  struct Span {
    std::string name;
    size_t blocks = 0;
    double start0, start1, wait0, wait1, end0, endmed, end1;
    double marks[detail::kTraceMarks] = {}; // mean cycles after the release, blocks past mark 1
    size_t marked = 0;
  };
  std::vector<Span> spans;
  size_t at = 0;
  for (const auto &name : names) {
    if (name.rfind("rope", 0) == 0 || name == "embedding") continue;
    if (at >= traced.size()) break;
    const uint32_t grid = traced[at].grid;
    std::vector<detail::TraceRecord> blk;
    while (at < traced.size() && blk.size() < grid) blk.push_back(traced[at++]);
    Span sp{name};
    sp.blocks = blk.size();
    std::vector<double> st, wt, en;
    for (const auto &b : blk) {
      st.push_back(double(b.start));
      wt.push_back(double(b.waited));
      en.push_back(double(b.end));
    }
    std::sort(st.begin(), st.end());
    std::sort(wt.begin(), wt.end());
    std::sort(en.begin(), en.end());
    sp.start0 = st.front();
    sp.start1 = st.back();
    sp.wait0 = wt.front();
    sp.wait1 = wt.back();
    sp.end0 = en.front();
    sp.endmed = en[en.size() / 2];
    sp.end1 = en.back();
    for (const auto &b : blk) {
      if (b.marks[1] == 0) continue; // returned early (an attention split past the position)
      ++sp.marked;
      for (int k = 0; k < detail::kTraceMarks; ++k) sp.marks[k] += b.marks[k];
    }
    for (int k = 0; k < detail::kTraceMarks; ++k)
      sp.marks[k] = sp.marked ? sp.marks[k] / double(sp.marked) : 0.0;
    if (name == "lm_head") { // its tail: block exits after the first release
      std::printf("lm_head exits (us after the first release):");
      for (double q : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0})
        std::printf(" p%.0f %.2f", q * 100,
                    (en[size_t(q * double(en.size() - 1))] - sp.wait0) / 1e3);
      std::printf("\n");
    }
    spans.push_back(sp);
  }
  if (spans.empty()) return;
  const double t0 = spans.front().start0;
  std::printf("\ntrace: %zu launches traced, step %.1f us (first start to last exit)\n",
              spans.size(), (spans.back().end1 - t0) / 1e3);
  std::printf("%-10s %6s %10s %10s %10s %10s %10s %10s %9s\n", "launch", "blocks",
              "start-rel", "lastst-rel", "release", "fexit", "medexit", "lastexit", "span");
  struct Acc {
    double n = 0, a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0;
    double marks[detail::kTraceMarks] = {};
  };
  std::vector<std::pair<std::string, Acc>> acc;
  for (size_t i = 1; i < spans.size(); ++i) {
    const Span &p = spans[i - 1], &c = spans[i];
    // relative to the previous launch's last exit (the dependency point)
    const double ref = p.end1;
    const double v[7] = {(c.start0 - ref) / 1e3, (c.start1 - ref) / 1e3, (c.wait0 - ref) / 1e3,
                         (c.end0 - ref) / 1e3,   (c.endmed - ref) / 1e3, (c.end1 - ref) / 1e3,
                         (c.end1 - p.end1) / 1e3};
    if (i <= 5 || i + 1 == spans.size())
      std::printf("%-10s %6zu %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %9.2f\n", c.name.c_str(),
                  c.blocks, v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    if (i < 5) continue; // the first layer's launches follow the gathers
    auto it = std::find_if(acc.begin(), acc.end(), [&](auto &x) { return x.first == c.name; });
    if (it == acc.end()) {
      acc.push_back({c.name, {}});
      it = acc.end() - 1;
    }
    Acc &a = it->second;
    a.n += 1;
    a.a += v[0], a.b += v[1], a.c += v[2], a.d += v[3], a.e += v[4], a.f += v[5], a.g += v[6];
    for (int k = 0; k < detail::kTraceMarks; ++k) a.marks[k] += c.marks[k];
  }
  std::printf("mean over layers 2..%d (us, relative to the previous launch's last exit):\n",
              int(spans.size() - 1) / 5);
  double total = 0;
  for (auto &[name, a] : acc) {
    std::printf("%-10s %6s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %9.2f\n", name.c_str(), "",
                a.a / a.n, a.b / a.n, a.c / a.n, a.d / a.n, a.e / a.n, a.f / a.n, a.g / a.n);
    if (name != "lm_head") total += a.g / a.n;
  }
  std::printf("one layer: %.2f us\n", total);
  // In-kernel marks (BlockTrace::mark) of the blocks that did work, from the SM clock.
  int khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  std::printf("marks, us after the block's release (SM clock %.2f GHz; linear: 0 = x staged, "
              "1 = tiles done, with RMS 2 = x summed, 3 = sums shared; attention: 0 = position, "
              "1 = keys, 2 = warps merged, 3 = stored):\n",
              khz / 1e6);
  for (auto &[name, a] : acc) {
    std::printf("%-10s", name.c_str());
    for (int k = 0; k < detail::kTraceMarks; ++k)
      std::printf(" %8.2f", a.marks[k] / a.n / (khz * 1e-3));
    std::printf("\n");
  }
}
#endif

} // namespace

int main(int argc, char **argv) {
  int64_t position = 127;
  int iterations = 100, layers = 16;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--position" && i + 1 < argc) position = std::atoll(argv[++i]);
    else if (a == "--iterations" && i + 1 < argc) iterations = std::atoi(argv[++i]);
    else if (a == "--layers" && i + 1 < argc) layers = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--position P] [--iterations N] [--layers L]\n", argv[0]);
      return 2;
    }
  }
  if (layers < 2) { // each layer's down resets the next layer's handoff buffers
    std::fprintf(stderr, "%s: --layers must be at least 2\n", argv[0]);
    return 2;
  }
  if (!gputest::have_device()) return 77;
  if (gputest::sm_count() != kSms)
    std::printf("note: the kernels are tiled for %d SMs, this device has %d\n", kSms,
                gputest::sm_count());
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const double gbs = gputest::copy_bandwidth() / 1e9;
  Model m = make_model(layers, position);

  // Warm up (opts the kernels in to large shared memory outside the capture).
  std::vector<std::string> names = enqueue_step(m, s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  enqueue_step(m, s);
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 20; ++i) CUDA_CHECK(cudaGraphLaunch(exec, s));
  CUDA_CHECK(cudaStreamSynchronize(s));

  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<float> per;
  for (int r = 0; r < 5; ++r) {
    CUDA_CHECK(cudaEventRecord(e0, s));
    for (int i = 0; i < iterations; ++i) CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaEventRecord(e1, s));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    per.push_back(ms / iterations);
  }
  std::sort(per.begin(), per.end());
  const double floor_ms = double(m.weight_bytes) / (gbs * 1e9) * 1e3;
  std::printf("decode chain: %zu launches, %d layers, position %lld: %.4f ms per step "
              "(median of 5 x %d graph replays); weights %.1f MB, copy %.0f GB/s, floor %.4f "
              "ms, %.1f %% of bandwidth\n",
              names.size(), layers, (long long)position, per[2], iterations,
              m.weight_bytes / 1e6, gbs, floor_ms, 100.0 * floor_ms / per[2]);
  {
    // A checksum of the logits: variants that must compute the same thing print the same.
    std::vector<bf16> lg(kVocab);
    CUDA_CHECK(cudaMemcpy(lg.data(), m.logits, kVocab * sizeof(bf16), cudaMemcpyDeviceToHost));
    double sum = 0, asum = 0;
    for (const bf16 &v : lg) {
      sum += __bfloat162float(v);
      asum += std::fabs(__bfloat162float(v));
    }
    std::printf("logits checksum: sum %.6e, abs sum %.6e\n", sum, asum);
  }
#ifdef SINTER_TRACE
  const uint32_t zero = 0;
  CUDA_CHECK(cudaMemcpyToSymbol(detail::trace_count, &zero, sizeof(zero)));
  CUDA_CHECK(cudaGraphLaunch(exec, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  print_trace(names);
#endif
  return 0;
}
