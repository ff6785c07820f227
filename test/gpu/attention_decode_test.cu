// GPU test of attention_decode (one decode step with a bf16 KV cache) against a
// double-precision CPU reference: Llama 3.2 1B shapes at several cache lengths (split and
// unsplit), odd shapes (D = 16, 40, 96, 128, 256, GROUP 1..8, uneven last split, parts of the
// fused QKV row in any order), positions at the split edges and out of range. Each position
// gets fresh random data, cache slots after p hold NaN (reading one poisons the output), and
// the kernel runs several times in a row on the same partials/counters; checks the output,
// that cache row p (and no other row) was written, and that the counters are back to zero.
// Then again under PDL behind a late producer of qkv. Two to eight splits take
// attention_decode_clustered (the merge inside a cluster) when the grid fits in one wave, as
// the compiler does; some cases force either merge. QK cases hand the kernel raw q and k
// heads with Qwen3's per-head norms and rotation (bf16, or fp32 weights and tables) for it to
// apply. Prints microseconds per launch.
#include "attention_decode.cuh"
#include "attention_decode_clustered.cuh"
#include "gpu_test_util.h"

using namespace sinter::kernels;
using namespace gputest;

// SPLIT is chosen at compile time for the H200's SM count, as the compiler does.
constexpr int kSms = 132;
constexpr uint16_t kNaN = 0x7fc0;
constexpr uint32_t kNormEps = 0x358637bdu; // 1e-6f

// What the kernel computes with QK before attending: each head of D columns at `offset` of
// every row (RS columns, BATCH rows) RMS-normalized with w (bf16 weights: bf16(w * bf16(x * r)),
// fp32: bf16(w * (x * r))), then rotated in fp32 with the row's table and rounded once.
template <typename NormT>
void norm_rope_heads(std::vector<uint16_t> &qkv, int rows, int rs, int offset, int heads, int d,
                     const std::vector<typename HostT<NormT>::type> &w,
                     const std::vector<typename HostT<NormT>::type> &cos,
                     const std::vector<typename HostT<NormT>::type> &sin) {
  using H = HostT<NormT>;
  const int half = d / 2;
  for (int b = 0; b < rows; ++b)
    for (int h = 0; h < heads; ++h) {
      uint16_t *x = qkv.data() + size_t(b) * rs + offset + size_t(h) * d;
      float ss = 0.f;
      for (int i = 0; i < d; ++i) ss += bf2f(x[i]) * bf2f(x[i]);
      const float r = 1.f / std::sqrt(ss / float(d) + 1e-6f);
      std::vector<float> n(d);
      for (int i = 0; i < d; ++i)
        n[i] = std::is_same_v<NormT, float> ? rbf(H::get(w[i]) * (bf2f(x[i]) * r))
                                            : rbf(H::get(w[i]) * rbf(bf2f(x[i]) * r));
      const size_t t = size_t(b) * d;
      for (int i = 0; i < half; ++i) {
        x[i] = f2bf(n[i] * H::get(cos[t + i]) - n[i + half] * H::get(sin[t + i]));
        x[i + half] = f2bf(n[i + half] * H::get(cos[t + i + half]) + n[i] * H::get(sin[t + i + half]));
      }
    }
}

template <int HQ, int HKV, int D, int QO, int KO, int VO, int RS, int MAX_LEN, int SPLIT,
          uint32_t SCALE, bool KEY_MASK = false, int BATCH = 1,
          bool CLUSTER = attention_decode_cluster_merge(HKV, MAX_LEN, SPLIT, BATCH, kSms),
          int QK = 0, uint32_t SOFTCAP = 0u>
struct DecodeCase {
  // QK: 0 none, 1 bf16 norm weights and tables, 2 fp32 ones. SOFTCAP: the cap's bits (0: none).
  using NormT = std::conditional_t<QK == 2, float, bf16>;
  using NormHost = typename HostT<NormT>::type;
  static constexpr int GROUP = HQ / HKV;
  static constexpr size_t CACHE = size_t(BATCH) * HKV * MAX_LEN * D; // every sequence's
  static constexpr LaunchParams lp = attention_decode_launch(HKV, MAX_LEN, SPLIT, BATCH);
  static constexpr bool GLOBAL_MERGE = !CLUSTER && attention_decode_num_splits(MAX_LEN, SPLIT) > 1;
  static constexpr int PF =
      GLOBAL_MERGE ? attention_decode_partials_floats(HQ, HKV, D, MAX_LEN, SPLIT, BATCH) : 0;
  static constexpr int CW =
      GLOBAL_MERGE ? attention_decode_counter_words(HKV, MAX_LEN, SPLIT, BATCH) : 0;
  static constexpr const char *merge = CLUSTER ? ", cluster merge" : GLOBAL_MERGE ? ", global merge" : "";
  static auto kernel() {
    if constexpr (CLUSTER)
      return attention_decode_clustered<HQ, HKV, D, QO, KO, VO, RS, MAX_LEN, SPLIT, SCALE,
                                        KEY_MASK, BATCH, QK != 0, NormT, NormT, kNormEps,
                                        SOFTCAP>;
    else
      return attention_decode<HQ, HKV, D, QO, KO, VO, RS, MAX_LEN, SPLIT, SCALE, KEY_MASK, BATCH,
                              QK != 0, NormT, NormT, kNormEps, SOFTCAP>;
  }
  NormT *q_norm = nullptr, *k_norm = nullptr, *cos = nullptr, *sin = nullptr;

  bf16 *qkv = nullptr, *k = nullptr, *v = nullptr, *out = nullptr;
  int64_t *pos = nullptr, *mask = nullptr;
  float *partials = nullptr;
  uint32_t *counters = nullptr;

  DecodeCase() {
    CUDA_CHECK(cudaMalloc(&qkv, size_t(BATCH) * RS * 2));
    CUDA_CHECK(cudaMalloc(&k, CACHE * 2));
    CUDA_CHECK(cudaMalloc(&v, CACHE * 2));
    CUDA_CHECK(cudaMalloc(&out, size_t(BATCH) * HQ * D * 2));
    CUDA_CHECK(cudaMalloc(&pos, 16));
    if (KEY_MASK) CUDA_CHECK(cudaMalloc(&mask, size_t(BATCH) * MAX_LEN * 8));
    if (QK) {
      CUDA_CHECK(cudaMalloc(&q_norm, D * sizeof(NormT)));
      CUDA_CHECK(cudaMalloc(&k_norm, D * sizeof(NormT)));
      CUDA_CHECK(cudaMalloc(&cos, size_t(BATCH) * D * sizeof(NormT)));
      CUDA_CHECK(cudaMalloc(&sin, size_t(BATCH) * D * sizeof(NormT)));
    }
    if (PF > 0) { // persistent scratch: contents never matter (garbage: NaN bytes)
      CUDA_CHECK(cudaMalloc(&partials, size_t(PF) * 4));
      CUDA_CHECK(cudaMemset(partials, 0xff, size_t(PF) * 4));
    }
    if (CW > 0) { // zero once, before the first launch only
      CUDA_CHECK(cudaMalloc(&counters, size_t(CW) * 4));
      CUDA_CHECK(cudaMemset(counters, 0, size_t(CW) * 4));
    }
  }
  ~DecodeCase() {
    CUDA_CHECK(cudaFree(qkv));
    CUDA_CHECK(cudaFree(k));
    CUDA_CHECK(cudaFree(v));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(pos));
    if (mask) CUDA_CHECK(cudaFree(mask));
    for (NormT *p : {q_norm, k_norm, cos, sin})
      if (p) CUDA_CHECK(cudaFree(p));
    if (partials) CUDA_CHECK(cudaFree(partials));
    if (counters) CUDA_CHECK(cudaFree(counters));
  }
  void go(cudaStream_t st = 0) {
    launch(kernel(), lp, st, (const bf16 *)qkv, (const int64_t *)pos, k, v, out, partials,
           counters, (const int64_t *)mask, (const NormT *)q_norm, (const NormT *)k_norm,
           (const NormT *)cos, (const NormT *)sin);
  }
  cudaError_t go_pdl(cudaStream_t st = 0) {
    return launch_pdl(kernel(), lp, st, (const bf16 *)qkv, (const int64_t *)pos, k, v, out, partials,
                      counters, (const int64_t *)mask, (const NormT *)q_norm,
                      (const NormT *)k_norm, (const NormT *)cos, (const NormT *)sin);
  }
  size_t nonzero_counters() const {
    if (CW == 0) return 0;
    std::vector<uint32_t> c = to_host(counters, size_t(CW));
    size_t n = 0;
    for (uint32_t x : c) n += x != 0;
    return n;
  }
};

// Bitwise cache check: row p must equal the new key/value, every other row its old value.
// Row p may differ by row_p_ulps bf16 units where the kernel computes it (QK: the device's
// rsqrtf and fused multiply-adds against the host's reference).
static bool check_cache(const char *what, const std::vector<uint16_t> &got,
                        const std::vector<uint16_t> &want, int hkv, int max_len, int d,
                        int64_t p, int row_p_ulps = 0) {
  size_t bad_p = 0, bad_other = 0;
  for (int g = 0; g < hkv; ++g)
    for (int j = 0; j < max_len; ++j)
      for (int e = 0; e < d; ++e) {
        const size_t i = (size_t(g) * max_len + j) * d + e;
        if (j == p) {
          const bool same_sign = (got[i] ^ want[i]) < 0x8000u;
          if (!same_sign || std::abs(int(got[i]) - int(want[i])) > row_p_ulps) ++bad_p;
        } else if (got[i] != want[i]) {
          ++bad_other;
        }
      }
  if (bad_p || bad_other)
    std::printf("    %s cache: FAIL (%zu wrong in row p, %zu other elements changed)\n", what,
                bad_p, bad_other);
  return bad_p == 0 && bad_other == 0;
}

// The key mask of case `pi` at position p (KEY_MASK cases): in turn the keys up to p (what
// generation passes), a random half, a random third with keys past p attended, none, and p
// alone.
static std::vector<int64_t> key_mask_for(size_t pi, int64_t p, int max_len, uint64_t seed) {
  std::vector<int64_t> mask(max_len, 0);
  uint64_t state = seed * 2654435761u + 1;
  auto coin = [&](int percent) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return int((state >> 33) % 100) < percent;
  };
  for (int j = 0; j < max_len; ++j) {
    switch (pi % 5) {
    case 0: mask[j] = j <= p; break;
    case 1: mask[j] = j <= p && coin(50) ? 1 : 0; break;
    case 2: mask[j] = coin(33) ? 7 : 0; break; // any non-zero value attends
    case 3: break;
    default: mask[j] = j == p; break;
    }
  }
  return mask;
}

template <int HQ, int HKV, int D, int QO, int KO, int VO, int RS, int MAX_LEN, int SPLIT,
          uint32_t SCALE, bool KEY_MASK = false, int BATCH = 1,
          bool CLUSTER = attention_decode_cluster_merge(HKV, MAX_LEN, SPLIT, BATCH, kSms),
          int QK = 0, uint32_t SOFTCAP = 0u>
bool run_case(const char *name, uint64_t seed, const std::vector<int64_t> &ps) {
  using C = DecodeCase<HQ, HKV, D, QO, KO, VO, RS, MAX_LEN, SPLIT, SCALE, KEY_MASK, BATCH, CLUSTER,
                       QK, SOFTCAP>;
  constexpr int GROUP = C::GROUP;
  constexpr size_t CACHE = C::CACHE;
  constexpr int REPEAT = 3;
  float scale, softcap;
  {
    uint32_t b = SCALE, c = SOFTCAP;
    std::memcpy(&scale, &b, 4);
    std::memcpy(&softcap, &c, 4);
  }
  std::printf("%s%s HQ=%d HKV=%d D=%d MAX_LEN=%d SPLIT=%d BATCH=%d  [grid %u,%u,%u block %u, "
              "partials %d floats, %d counters%s%s, softcap %g]\n",
              name, KEY_MASK ? " (key mask)" : "", HQ, HKV, D, MAX_LEN, SPLIT, BATCH, C::lp.grid.x,
              C::lp.grid.y, C::lp.grid.z, C::lp.block.x, C::PF, C::CW, C::merge,
              QK == 1 ? ", q/k norm + RoPE (bf16)" : QK == 2 ? ", q/k norm + RoPE (fp32)" : "",
              softcap);
  C dc;
  bool ok = true;
  for (size_t pi = 0; pi < ps.size(); ++pi) {
    const int64_t p = ps[pi];
    const bool in_range = p >= 0 && p < MAX_LEN;
    const uint64_t sd = seed * 1000 + pi * 7;
    std::vector<uint16_t> qkv = random_bf16(size_t(BATCH) * RS, sd + 1, -2.f, 2.f);
    std::vector<uint16_t> kc = random_bf16(CACHE, sd + 2, -2.f, 2.f);
    std::vector<uint16_t> vc = random_bf16(CACHE, sd + 3, -2.f, 2.f);
    // QK: the kernel reads raw heads from qkv; the reference and the expected cache row take
    // them normalized and rotated (eff). The tables hold each angle in both halves, as HF's.
    std::vector<uint16_t> eff = qkv;
    if constexpr (QK != 0) {
      using NH = typename C::NormHost;
      using H = HostT<typename C::NormT>;
      std::vector<uint16_t> wq = random_bf16(D, sd + 4, 0.5f, 1.5f), wk = random_bf16(D, sd + 5, 0.5f, 1.5f);
      std::vector<uint16_t> angle = random_bf16(size_t(BATCH) * D / 2, sd + 6, -3.f, 3.f);
      std::vector<NH> qn(D), kn(D), cs(size_t(BATCH) * D), sn(size_t(BATCH) * D);
      for (int i = 0; i < D; ++i) {
        qn[i] = H::put(bf2f(wq[i]));
        kn[i] = H::put(bf2f(wk[i]));
      }
      for (int b = 0; b < BATCH; ++b)
        for (int i = 0; i < D / 2; ++i) {
          const float a = bf2f(angle[size_t(b) * D / 2 + i]);
          cs[size_t(b) * D + i] = cs[size_t(b) * D + i + D / 2] = H::put(std::cos(a));
          sn[size_t(b) * D + i] = sn[size_t(b) * D + i + D / 2] = H::put(std::sin(a));
        }
      norm_rope_heads<typename C::NormT>(eff, BATCH, RS, QO, HQ, D, qn, cs, sn);
      norm_rope_heads<typename C::NormT>(eff, BATCH, RS, KO, HKV, D, kn, cs, sn);
      CUDA_CHECK(cudaMemcpy(dc.q_norm, qn.data(), D * sizeof(NH), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(dc.k_norm, kn.data(), D * sizeof(NH), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(dc.cos, cs.data(), cs.size() * sizeof(NH), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(dc.sin, sn.data(), sn.size() * sizeof(NH), cudaMemcpyHostToDevice));
    }
    // The keys sequence b attends: [0, p], or where its key mask is not 0 (each sequence its
    // own mask). The others hold NaN, which must not reach the output.
    std::vector<int64_t> mask;
    for (int b = 0; b < BATCH && KEY_MASK; ++b) {
      std::vector<int64_t> m = key_mask_for(pi + b, p, MAX_LEN, sd + b);
      mask.insert(mask.end(), m.begin(), m.end());
    }
    auto attended = [&](int b, int64_t j) {
      return KEY_MASK ? mask[size_t(b) * MAX_LEN + j] != 0 : j <= p;
    };
    // Element e of row j of kv head g of sequence b in the caches.
    auto at = [](int b, int g, int64_t j, int e) {
      return ((size_t(b) * HKV + g) * MAX_LEN + j) * D + e;
    };
    for (int b = 0; b < BATCH; ++b)
      for (int g = 0; g < HKV; ++g)
        for (int j = 0; j < MAX_LEN; ++j)
          if (!attended(b, j) && j != p)
            for (int e = 0; e < D; ++e) kc[at(b, g, j, e)] = vc[at(b, g, j, e)] = kNaN;
    // Expected caches and reference output.
    std::vector<uint16_t> kw = kc, vw = vc;
    if (in_range)
      for (int b = 0; b < BATCH; ++b)
        for (int g = 0; g < HKV; ++g)
          for (int e = 0; e < D; ++e) {
            kw[at(b, g, p, e)] = eff[size_t(b) * RS + KO + g * D + e];
            vw[at(b, g, p, e)] = qkv[size_t(b) * RS + VO + g * D + e];
          }
    std::vector<float> ref(size_t(BATCH) * HQ * D, 0.f);
    if (in_range) {
      parallel_for(size_t(BATCH) * HQ, [&](size_t bh) {
        const int b = int(bh / HQ), h = int(bh % HQ), g = h / GROUP;
        const uint16_t *qrow = eff.data() + size_t(b) * RS + QO + h * D;
        std::vector<double> sc(MAX_LEN, 0.0);
        double mx = -INFINITY;
        for (int64_t j = 0; j < MAX_LEN; ++j) {
          if (!attended(b, j)) continue;
          double s = 0;
          for (int e = 0; e < D; ++e) s += double(bf2f(qrow[e])) * double(bf2f(kw[at(b, g, j, e)]));
          sc[j] = s * scale;
          if (SOFTCAP != 0u) sc[j] = softcap * std::tanh(sc[j] / softcap);
          mx = std::max(mx, sc[j]);
        }
        if (mx == -INFINITY) return; // every key masked: zeros
        double sum = 0;
        for (int64_t j = 0; j < MAX_LEN; ++j) {
          sc[j] = attended(b, j) ? std::exp(sc[j] - mx) : 0.0;
          sum += sc[j];
        }
        for (int e = 0; e < D; ++e) {
          double o = 0;
          for (int64_t j = 0; j < MAX_LEN; ++j)
            if (attended(b, j)) o += sc[j] * double(bf2f(vw[at(b, g, j, e)]));
          ref[bh * D + e] = float(o / sum);
        }
      });
    }
    auto read_out = [&] {
      std::vector<uint16_t> h = to_host(reinterpret_cast<const uint16_t *>(dc.out), ref.size());
      std::vector<float> f(h.size());
      for (size_t i = 0; i < f.size(); ++i) f[i] = bf2f(h[i]);
      return f;
    };
    CUDA_CHECK(cudaMemcpy(dc.qkv, qkv.data(), qkv.size() * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc.k, kc.data(), CACHE * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc.v, vc.data(), CACHE * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc.pos, &p, 8, cudaMemcpyHostToDevice));
    if (KEY_MASK)
      CUDA_CHECK(cudaMemcpy(dc.mask, mask.data(), mask.size() * 8, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dc.out, 0xff, ref.size() * 2));
    for (int r = 0; r < REPEAT; ++r) dc.go();
    CUDA_CHECK(cudaDeviceSynchronize());
    char label[160];
    size_t keys = 0;
    for (int64_t j = 0; j < MAX_LEN; ++j) keys += attended(0, j);
    std::snprintf(label, sizeof label, "  p=%lld, %zu keys in sequence 0 (x%d)", (long long)p, keys,
                  REPEAT);
    bool case_ok = report(label, compare(read_out(), ref, 1.0 / 128));
    case_ok &= check_cache("k", to_host(reinterpret_cast<const uint16_t *>(dc.k), CACHE), kw,
                           BATCH * HKV, MAX_LEN, D, p, QK ? 1 : 0);
    case_ok &= check_cache("v", to_host(reinterpret_cast<const uint16_t *>(dc.v), CACHE), vw,
                           BATCH * HKV, MAX_LEN, D, p);
    size_t nz = dc.nonzero_counters();
    if (nz) std::printf("    FAIL: %zu counters not back to zero\n", nz);
    case_ok &= nz == 0;
    // Again under PDL behind a kernel that writes qkv late (checks griddepcontrol.wait): the
    // caches still hold the old rows except row p, which gets the same values again.
    uint16_t *saved = to_device(qkv);
    CUDA_CHECK(cudaMemset(dc.out, 0xff, ref.size() * 2));
    launch_after_delayed_producer(dc.qkv, saved, qkv.size() * 2, C::kernel(), C::lp,
                                  (const bf16 *)dc.qkv, (const int64_t *)dc.pos, dc.k, dc.v,
                                  dc.out, dc.partials, dc.counters, (const int64_t *)dc.mask,
                                  (const typename C::NormT *)dc.q_norm,
                                  (const typename C::NormT *)dc.k_norm,
                                  (const typename C::NormT *)dc.cos,
                                  (const typename C::NormT *)dc.sin);
    CUDA_CHECK(cudaFree(saved));
    case_ok &= report("    same, PDL behind a late producer of qkv",
                      compare(read_out(), ref, 1.0 / 128));
    case_ok &= check_cache("k (PDL)", to_host(reinterpret_cast<const uint16_t *>(dc.k), CACHE),
                           kw, BATCH * HKV, MAX_LEN, D, p, QK ? 1 : 0);
    case_ok &= check_cache("v (PDL)", to_host(reinterpret_cast<const uint16_t *>(dc.v), CACHE),
                           vw, BATCH * HKV, MAX_LEN, D, p);
    nz = dc.nonzero_counters();
    if (nz) std::printf("    FAIL: %zu counters not back to zero after the PDL launch\n", nz);
    case_ok &= nz == 0;
    ok &= case_ok;
  }
  return ok;
}

// Microseconds per launch of `go(stream, pdl)`: ITERS back-to-back plain launches, PDL
// launches, and a CUDA graph of plain launches. Returns (plain, pdl, graph).
struct Timing {
  double plain, pdl, graph;
};
template <typename Go> Timing time_launches(Go go) {
  constexpr int ITERS = 200;
  cudaStream_t st;
  CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  auto timed = [&](auto &&body) {
    body(); // warm-up
    CUDA_CHECK(cudaStreamSynchronize(st));
    CUDA_CHECK(cudaEventRecord(e0, st));
    body();
    CUDA_CHECK(cudaEventRecord(e1, st));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return 1000.0 * ms / ITERS;
  };
  Timing t;
  t.plain = timed([&] {
    for (int i = 0; i < ITERS; ++i) go(st, false);
  });
  t.pdl = timed([&] {
    for (int i = 0; i < ITERS; ++i) go(st, true);
  });
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < ITERS; ++i) go(st, false);
  CUDA_CHECK(cudaStreamEndCapture(st, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  t.graph = timed([&] { CUDA_CHECK(cudaGraphLaunch(exec, st)); });
  CUDA_CHECK(cudaStreamSynchronize(st));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  CUDA_CHECK(cudaStreamDestroy(st));
  return t;
}

// The launch floor: a kernel with the same arguments and grid that only issues the PDL
// instructions.
__global__ void empty_decode_like(const bf16 *, const int64_t *, bf16 *, bf16 *, bf16 *, float *,
                                  uint32_t *) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
static void time_empty(int grid_y) {
  const LaunchParams lp = {{8u, uint32_t(grid_y), 1u}, {128u, 1u, 1u}, 0u};
  const Timing t = time_launches([&](cudaStream_t st, bool pdl) {
    if (pdl)
      CUDA_CHECK(launch_pdl(empty_decode_like, lp, st, (const bf16 *)nullptr,
                            (const int64_t *)nullptr, (bf16 *)nullptr, (bf16 *)nullptr,
                            (bf16 *)nullptr, (float *)nullptr, (uint32_t *)nullptr));
    else
      launch(empty_decode_like, lp, st, (const bf16 *)nullptr, (const int64_t *)nullptr,
             (bf16 *)nullptr, (bf16 *)nullptr, (bf16 *)nullptr, (float *)nullptr,
             (uint32_t *)nullptr);
  });
  std::printf("  timing empty kernel grid 8,%d: %.2f us/launch plain, %.2f PDL, %.2f graph\n",
              grid_y, t.plain, t.pdl, t.graph);
}

// Microseconds per launch at p (default MAX_LEN - 1: every split active).
template <int HQ, int HKV, int D, int QO, int KO, int VO, int RS, int MAX_LEN, int SPLIT,
          uint32_t SCALE, bool KEY_MASK = false, int BATCH = 1,
          bool CLUSTER = attention_decode_cluster_merge(HKV, MAX_LEN, SPLIT, BATCH, kSms),
          int QK = 0, uint32_t SOFTCAP = 0u>
bool time_case(const char *name, int64_t p = MAX_LEN - 1) {
  using C = DecodeCase<HQ, HKV, D, QO, KO, VO, RS, MAX_LEN, SPLIT, SCALE, KEY_MASK, BATCH, CLUSTER,
                       QK, SOFTCAP>;
  C dc;
  std::vector<uint16_t> qkv = random_bf16(size_t(BATCH) * RS, 901, -2.f, 2.f);
  std::vector<uint16_t> kc = random_bf16(C::CACHE, 902, -2.f, 2.f);
  std::vector<uint16_t> vc = random_bf16(C::CACHE, 903, -2.f, 2.f);
  CUDA_CHECK(cudaMemcpy(dc.qkv, qkv.data(), qkv.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dc.k, kc.data(), C::CACHE * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dc.v, vc.data(), C::CACHE * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dc.pos, &p, 8, cudaMemcpyHostToDevice));
  if (KEY_MASK) { // the keys up to p, as generation passes
    std::vector<int64_t> mask;
    for (int b = 0; b < BATCH; ++b) {
      std::vector<int64_t> m = key_mask_for(0, p, MAX_LEN, 0);
      mask.insert(mask.end(), m.begin(), m.end());
    }
    CUDA_CHECK(cudaMemcpy(dc.mask, mask.data(), mask.size() * 8, cudaMemcpyHostToDevice));
  }
  const Timing t = time_launches([&](cudaStream_t st, bool pdl) {
    if (pdl)
      CUDA_CHECK(dc.go_pdl(st));
    else
      dc.go(st);
  });
  const size_t nz = dc.nonzero_counters();
  std::printf("  timing %s%s MAX_LEN=%d p=%lld SPLIT=%d BATCH=%d grid %u,%u,%u%s: %.2f us/launch "
              "plain, %.2f PDL, %.2f graph%s\n",
              name, KEY_MASK ? " (key mask)" : "", MAX_LEN, (long long)p, SPLIT, BATCH,
              C::lp.grid.x, C::lp.grid.y, C::lp.grid.z, C::merge, t.plain, t.pdl, t.graph,
              nz ? "  FAIL: counters not zero" : "");
  return nz == 0;
}

// Which cases take the tensor-core path (checked at build time, so also on machines without
// a GPU): the 1B shape, D 96 and D 128 up to GROUP 6; not D % 32 != 0, D 256 or D 128 at
// GROUP 8 (the staged V and the merge buffers would pass 48 KiB).
#if SINTER_ATTENTION_DECODE_TENSOR_CORES
static_assert(attention_decode_tensor_cores(64, 4) && attention_decode_tensor_cores(64, 8) &&
              attention_decode_tensor_cores(96, 2) && attention_decode_tensor_cores(128, 4) &&
              attention_decode_tensor_cores(128, 6));
static_assert(!attention_decode_tensor_cores(16, 2) && !attention_decode_tensor_cores(40, 8) &&
              !attention_decode_tensor_cores(128, 8) && !attention_decode_tensor_cores(256, 1));
#else
static_assert(!attention_decode_tensor_cores(64, 4));
#endif

int main() {
  if (!have_device()) return 77;
  constexpr uint32_t s64 = 0x3e000000u, s16 = 0x3e800000u, s96 = 0x3dd105ecu,
                     s128 = 0x3db504f3u, s256 = 0x3d800000u;
  // Llama 3.2 1B: fused QKV [1, 3072] = q (32 x 64) | k (8 x 64) | v (8 x 64).
  constexpr int L128 = attention_decode_split(128, 32, 8, 64, kSms);
  constexpr int L1024 = attention_decode_split(1024, 32, 8, 64, kSms);
  constexpr int L4096 = attention_decode_split(4096, 32, 8, 64, kSms);
  bool ok = true;
  // SINTER_DECODE_PROFILE=1: only the MAX_LEN=1024 timing (for ncu).
  if (std::getenv("SINTER_DECODE_PROFILE"))
    return time_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64>("llama") ? 0 : 1;
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 128, L128, s64>("llama", 61,
                                                                 {0, 1, 77, 127, 128, -1});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64>(
      "llama", 62, {0, 1, 77, 1023, 1024, 63, 64, 500});
  // The same eight splits merged through global memory (the path past eight splits).
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, false, 1, false>(
      "llama", 87, {0, 1, 127, 128, 1023, 500});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, true, 2, false>(
      "llama batch 2", 88, {0, 77, 1023, 500, 3});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 4096, L4096, s64>("llama", 63,
                                                                   {0, 255, 256, 3000, 4095});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 128, 128, s64>("llama unsplit", 64,
                                                                {0, 1, 77, 127, 128});
  // Small odd shapes: v | k | q order with spare columns; NSPLIT 5 (split 8), 2, 1.
  ok &= run_case<4, 2, 16, 64, 32, 0, 136, 40, 8, s16>("small", 65,
                                                       {0, 1, 7, 8, 17, 39, 40, -1});
  ok &= run_case<4, 2, 16, 64, 32, 0, 136, 40, attention_decode_split(40, 4, 2, 16, kSms), s16>(
      "small", 66, {0, 31, 32, 39, 1000});
  ok &= run_case<4, 2, 16, 64, 32, 0, 136, 40, 40, s16>("small unsplit", 67, {0, 1, 39, 40});
  // 38 splits: the last block merges its records in chunks of 16 (17, 19 and 38 active).
  ok &= run_case<4, 2, 16, 64, 32, 0, 136, 300, 8, s16>("many splits", 72,
                                                        {0, 8, 130, 150, 299, 300});
  // GROUP 8, D 128, uneven last split; D 96 (12 vectors: padded lanes), split 33; D 256 MHA;
  // D 40 (5 vectors) with one kv head for 8 q heads.
  ok &= run_case<16, 2, 128, 0, 2048, 2304, 2560, 300, 64, s128>("group 8 d128", 68,
                                                                  {0, 63, 64, 200, 299, 300});
  ok &= run_case<6, 3, 96, 0, 576, 864, 1152, 100, 33, s96>("d96 split 33", 69,
                                                            {0, 32, 33, 65, 99, 100});
  ok &= run_case<2, 2, 256, 0, 512, 1024, 1536, 70, 16, s256>("mha d256", 70, {0, 15, 16, 69, 70});
  // Gemma 2 2B at a 1024-slot cache with the split the compiler takes (scalar path, 32 keys:
  // 32 splits merged in two chunks of 16).
  constexpr int G1024 = attention_decode_split(1024, 8, 4, 256, kSms);
  static_assert(G1024 == 32, "Gemma 2's decode attention splits by the scalar path's round trip");
  ok &= run_case<8, 4, 256, 0, 2048, 3072, 4096, 1024, G1024, s256>(
      "gemma2 d256", 86, {0, 31, 32, 500, 1023, 1024});
  ok &= run_case<8, 1, 40, 0, 320, 360, 400, 200, 32, s64>("d40 group 8", 71,
                                                           {0, 31, 150, 199, -5});
  // Tensor-core path (attention_decode_tensor_cores) beyond the 1B shapes: GROUP 8 at D 64,
  // D 128 at GROUP 4, and 300-key splits (three rounds of 128 keys, the last one partial).
  ok &= run_case<16, 2, 64, 0, 1024, 1152, 1280, 300, 64, s64>("tc group 8 d64", 73,
                                                              {0, 31, 32, 63, 64, 200, 299});
  ok &= run_case<8, 2, 128, 0, 1024, 1280, 1536, 200, 128, s128>("tc d128 group 4", 74,
                                                                 {0, 100, 127, 128, 199});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 600, 300, s64>(
      "tc llama split 300", 75, {0, 127, 128, 129, 255, 256, 299, 300, 599});
  // With a key mask (a with-past export's attention_mask): the tensor-core path (split,
  // unsplit, 300-key splits), the scalar path, and 38 splits merged in chunks.
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, true>(
      "llama", 76, {0, 1, 77, 1023, 500, 63, 64, 900, 1024, 5, -1});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 128, 128, s64, true>("llama unsplit", 77,
                                                                      {0, 1, 77, 127, 100, 3});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 600, 300, s64, true>(
      "tc llama split 300", 78, {0, 128, 299, 300, 599, 301, 2, 450});
  ok &= run_case<4, 2, 16, 64, 32, 0, 136, 300, 8, s16, true>("many splits", 79,
                                                              {0, 8, 130, 150, 299, 3, 77});
  ok &= run_case<8, 1, 40, 0, 320, 360, 400, 200, 32, s64, true>("d40 group 8", 80,
                                                                 {0, 31, 150, 199, 40});
  // A batch of sequences at one position (a with-past export's batched decode step), each its
  // own caches, key mask and output row; the split the compiler takes (one sequence's) and a
  // longer one.
  constexpr int L1024B8 = attention_decode_split(1024, 32 * 8, 8 * 8, 64, kSms); // 512 keys
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, false, 8>(
      "llama batch 8", 81, {0, 77, 1023, 1024, 500});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, true, 8>(
      "llama batch 8", 82, {0, 77, 1023, 500, 3, 900, -1});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024B8, s64, true, 8>(
      "llama batch 8 split 512", 85, {0, 77, 1023, 500, 3});
  // Clusters over more than one wave of blocks (not the compiler's choice, still correct).
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, true, 8, true>(
      "llama batch 8", 89, {0, 77, 1023, 500, 3});
  ok &= run_case<4, 2, 16, 64, 32, 0, 136, 300, 8, s16, true, 3>("many splits batch 3", 83,
                                                                 {0, 8, 130, 299, 3, 77});
  ok &= run_case<8, 1, 40, 0, 320, 360, 400, 200, 32, s64, true, 3>("d40 group 8 batch 3", 84,
                                                                    {0, 31, 150, 199, 40});
  // Qwen3's per-head q/k norms and RoPE in the kernel (QK): Qwen3-1.7B's heads at 1024 slots
  // (tensor cores, clustered), the global merge, a key mask over a batch of 3 with fp32 weights
  // and tables, the scalar path (D 256, Gemma 3's head size) and one split.
  constexpr int Q1024 = attention_decode_split(1024, 16, 8, 128, kSms, true);
  ok &= run_case<16, 8, 128, 0, 2048, 3072, 4096, 1024, Q1024, s128, false, 1,
                 attention_decode_cluster_merge(8, 1024, Q1024, 1, kSms), 1>(
      "qwen3 qk", 90, {0, 1, 127, 128, 1023, 500, 1024});
  ok &= run_case<16, 8, 128, 0, 2048, 3072, 4096, 1024, Q1024, s128, false, 1, false, 1>(
      "qwen3 qk", 91, {0, 500, 1023});
  ok &= run_case<16, 8, 128, 0, 2048, 3072, 4096, 300, 64, s128, true, 3, false, 2>(
      "qwen3 qk batch 3", 92, {0, 63, 64, 299, 3, 150});
  ok &= run_case<8, 4, 256, 0, 2048, 3072, 4096, 300, 32, s256, false, 1, false, 1>(
      "d256 qk", 93, {0, 31, 32, 299, 300});
  ok &= run_case<16, 8, 128, 0, 2048, 3072, 4096, 128, 128, s128, false, 1, false, 2>(
      "qwen3 qk unsplit", 94, {0, 1, 77, 127});
  // Gemma 2's attention soft-cap (50) on its shapes (scalar path, global merge), a tight cap
  // (2: every score near saturation) on the tensor-core path with the cluster merge, and with
  // a key mask over a batch of 3 on the scalar path.
  constexpr uint32_t cap50 = 0x42480000u, cap2 = 0x40000000u;
  ok &= run_case<8, 4, 256, 0, 2048, 3072, 4096, 1024, G1024, s256, false, 1,
                 attention_decode_cluster_merge(4, 1024, G1024, 1, kSms), 0, cap50>(
      "gemma2 d256 softcap", 95, {0, 31, 32, 500, 1023});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, false, 1,
                 attention_decode_cluster_merge(8, 1024, L1024, 1, kSms), 0, cap2>(
      "llama softcap", 96, {0, 127, 128, 1023});
  ok &= run_case<32, 8, 64, 0, 2048, 2560, 3072, 600, 300, s64, true, 1, false, 0, cap2>(
      "llama softcap global merge", 97, {0, 299, 300, 599});
  ok &= run_case<8, 1, 40, 0, 320, 360, 400, 200, 32, s64, true, 3, false, 0, cap2>(
      "d40 softcap batch 3", 98, {0, 31, 150, 199});
  // Timings (200 launches each; the caches, 1..4 MiB, stay in L2).
  time_empty(1);
  time_empty(16);
#define LLAMA_T(LEN, SPLIT_) time_case<32, 8, 64, 0, 2048, 2560, 3072, LEN, SPLIT_, s64>
  ok &= LLAMA_T(128, L128)("llama");
  ok &= LLAMA_T(1024, L1024)("llama");
  ok &= time_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, false, 1, false>("llama");
  ok &= LLAMA_T(1024, L1024)("llama", 100);
  ok &= time_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, true>("llama", 100);
  ok &= time_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, true>("llama");
  ok &= time_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, false, 8>("llama", 1023);
  ok &= time_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, true, 8>("llama", 1023);
  ok &= time_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024, s64, true, 8, true>("llama", 1023);
  ok &= time_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024B8, s64, false, 8>("llama", 1023);
  ok &= time_case<32, 8, 64, 0, 2048, 2560, 3072, 1024, L1024B8, s64, true, 8>("llama", 1023);
  ok &= LLAMA_T(4096, L4096)("llama");
  // What the soft-cap's tanh costs on Gemma 2's shapes.
  ok &= time_case<8, 4, 256, 0, 2048, 3072, 4096, 1024, G1024, s256>("gemma2");
  ok &= time_case<8, 4, 256, 0, 2048, 3072, 4096, 1024, G1024, s256, false, 1,
                  attention_decode_cluster_merge(4, 1024, G1024, 1, kSms), 0, cap50>(
      "gemma2 softcap");
  if (std::getenv("SINTER_DECODE_SWEEP")) { // other splits, for tuning attention_decode_split
    ok &= LLAMA_T(128, 64)("sweep");
    ok &= LLAMA_T(128, 128)("sweep");
    ok &= LLAMA_T(1024, 64)("sweep", 127);
    ok &= LLAMA_T(1024, 128)("sweep", 127);
    ok &= LLAMA_T(1024, 256)("sweep", 127);
    ok &= LLAMA_T(1024, 32)("sweep");
    ok &= LLAMA_T(1024, 64)("sweep");
    ok &= LLAMA_T(1024, 128)("sweep");
    ok &= LLAMA_T(1024, 256)("sweep");
    ok &= LLAMA_T(4096, 64)("sweep");
    ok &= LLAMA_T(4096, 128)("sweep");
    ok &= LLAMA_T(4096, 256)("sweep");
  }
#undef LLAMA_T
  if (std::getenv("SINTER_DECODE_FAMILIES")) { // splits for other families' shapes at 1024
#define QWEN25_T(SPLIT_) time_case<12, 2, 128, 0, 1536, 1792, 2048, 1024, SPLIT_, s128>
#define QWEN3_T(SPLIT_) time_case<16, 8, 128, 0, 2048, 3072, 4096, 1024, SPLIT_, s128>
#define GEMMA2_T(SPLIT_) time_case<8, 4, 256, 0, 2048, 3072, 4096, 1024, SPLIT_, s256>
#define OLMO2_T(SPLIT_) time_case<16, 16, 128, 0, 2048, 4096, 6144, 1024, SPLIT_, s128>
#define PHI2_T(SPLIT_) time_case<32, 32, 80, 0, 2560, 5120, 7680, 1024, SPLIT_, s64>
    // The merge through global memory at the same splits (the clustered merge below).
    ok &= time_case<12, 2, 128, 0, 1536, 1792, 2048, 1024, 128, s128, false, 1, false>(
        "qwen2.5 hq12 hkv2 d128");
    ok &= time_case<16, 8, 128, 0, 2048, 3072, 4096, 1024, 128, s128, false, 1, false>(
        "qwen3 hq16 hkv8 d128");
    ok &= time_case<16, 16, 128, 0, 2048, 4096, 6144, 1024, 128, s128, false, 1, false>(
        "olmo2 hq16 hkv16 d128");
    ok &= time_case<32, 32, 80, 0, 2560, 5120, 7680, 1024, 256, s64, false, 1, false>(
        "phi2 hq32 hkv32 d80");
    ok &= time_case<25, 25, 64, 0, 1600, 3200, 4800, 1024, 224, s64, false, 1, false>(
        "gpt2xl hq25 hkv25 d64");
    // Many kv heads (GPT-2 XL, Phi-3-mini, Phi-2): the compiler's split (one wave, clustered)
    // against 128-key splits (two waves) merged either way, for the split rule.
    static_assert(attention_decode_split(1024, 25, 25, 64, kSms) == 224 &&
                  attention_decode_split(1024, 32, 32, 96, kSms) == 256);
    ok &= time_case<25, 25, 64, 0, 1600, 3200, 4800, 1024, 224, s64>("gpt2xl hq25 hkv25 d64");
    ok &= time_case<25, 25, 64, 0, 1600, 3200, 4800, 1024, 128, s64>("gpt2xl hq25 hkv25 d64");
    ok &= time_case<25, 25, 64, 0, 1600, 3200, 4800, 1024, 128, s64, false, 1, true>(
        "gpt2xl hq25 hkv25 d64");
    ok &= time_case<32, 32, 96, 0, 3072, 6144, 9216, 1024, 256, s96>("phi3 hq32 hkv32 d96");
    ok &= time_case<32, 32, 96, 0, 3072, 6144, 9216, 1024, 128, s96>("phi3 hq32 hkv32 d96");
    ok &= time_case<32, 32, 96, 0, 3072, 6144, 9216, 1024, 128, s96, false, 1, true>(
        "phi3 hq32 hkv32 d96");
    ok &= time_case<32, 32, 80, 0, 2560, 5120, 7680, 1024, 128, s64, false, 1, true>(
        "phi2 hq32 hkv32 d80");
    ok &= QWEN25_T(128)("qwen2.5 hq12 hkv2 d128");
    ok &= QWEN25_T(64)("qwen2.5 hq12 hkv2 d128");
    ok &= QWEN25_T(32)("qwen2.5 hq12 hkv2 d128");
    ok &= QWEN3_T(128)("qwen3 hq16 hkv8 d128");
    // The same with Qwen3's q/k norms and RoPE in the kernel (the norm weights and tables are
    // not set: timing only).
    ok &= time_case<16, 8, 128, 0, 2048, 3072, 4096, 1024, 128, s128, false, 1,
                    attention_decode_cluster_merge(8, 1024, 128, 1, kSms), 1>(
        "qwen3 hq16 hkv8 d128 qk-norm");
    ok &= QWEN3_T(64)("qwen3 hq16 hkv8 d128");
    ok &= QWEN3_T(32)("qwen3 hq16 hkv8 d128");
    ok &= GEMMA2_T(128)("gemma2 hq8 hkv4 d256");
    ok &= GEMMA2_T(64)("gemma2 hq8 hkv4 d256");
    ok &= GEMMA2_T(32)("gemma2 hq8 hkv4 d256");
    ok &= GEMMA2_T(16)("gemma2 hq8 hkv4 d256");
    ok &= OLMO2_T(128)("olmo2 hq16 hkv16 d128");
    ok &= OLMO2_T(64)("olmo2 hq16 hkv16 d128");
    ok &= PHI2_T(256)("phi2 hq32 hkv32 d80");
    ok &= PHI2_T(128)("phi2 hq32 hkv32 d80");
    ok &= PHI2_T(64)("phi2 hq32 hkv32 d80");
#undef QWEN25_T
#undef QWEN3_T
#undef GEMMA2_T
#undef OLMO2_T
#undef PHI2_T
  }
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
