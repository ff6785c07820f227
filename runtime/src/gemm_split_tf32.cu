// Split-TF32 fp32 GEMMs (gemm_split_tf32.h): CUTLASS 2.x device GEMMs on the sm_80 tensor-core
// path (mma.sync TF32, multistage cp.async), row-major operands, serial split-K.
#include "gemm_split_tf32.h"

#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/gemm/device/gemm.h"

#include <climits>
#include <cstdint>

namespace sinter::rt {
namespace {

using cutlass::gemm::GemmShape;
using RowMajor = cutlass::layout::RowMajor;

// 4 floats (16 bytes) per access for a, b and the output.
constexpr int kAlignment = 4;

template <int TileM, int TileN, int TileK, int WarpM, int WarpN, int Stages>
using SplitTf32Kernel = cutlass::gemm::device::Gemm<
    float, RowMajor, float, RowMajor, float, RowMajor, float, cutlass::arch::OpClassTensorOp,
    cutlass::arch::Sm80, GemmShape<TileM, TileN, TileK>, GemmShape<WarpM, WarpN, TileK>,
    GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, kAlignment, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, Stages, kAlignment, kAlignment,
    /*SplitKSerial=*/true, cutlass::arch::OpMultiplyAddFastF32>;

// Warp tiles of 64x32, 32x64 and 32x32 keep the hi/lo fragments in registers (a 64x64 warp
// tile spills at 255 registers).
struct Variant {
  const char *name;
  cudaError_t (*launch)(const SplitTf32Operands &, int, void *, size_t, cudaStream_t);
};

template <class Gemm>
cudaError_t launch(const SplitTf32Operands &o, int split_k, void *workspace, size_t workspace_bytes,
                   cudaStream_t stream) {
  typename Gemm::Arguments args({o.m, o.n, o.k}, {o.a, o.k}, {o.b, o.n}, {o.c, o.ldc}, {o.d, o.n},
                                {1.0f, o.beta}, split_k);
  if (Gemm::can_implement(args) != cutlass::Status::kSuccess ||
      Gemm::get_workspace_size(args) > workspace_bytes)
    return cudaErrorInvalidValue;
  Gemm gemm;
  // initialize() zeroes the split's tile semaphores in the workspace on `stream`.
  if (gemm.initialize(args, workspace, stream) != cutlass::Status::kSuccess)
    return cudaErrorInvalidValue;
  if (gemm.run(stream) != cutlass::Status::kSuccess) {
    const cudaError_t err = cudaGetLastError();
    return err != cudaSuccess ? err : cudaErrorLaunchFailure;
  }
  return cudaSuccess;
}

// Within 5 % of each other on W2's products (H100, results/gemm_split_tf32_s38.log); the
// 32-deep k tiles led, a 128x128 tile wins deep products that a K split spreads, 64x64 keeps
// small ones on many SMs.
const Variant kVariants[] = {
    {"128x64x32", &launch<SplitTf32Kernel<128, 64, 32, 64, 32, 3>>},
    {"64x128x32", &launch<SplitTf32Kernel<64, 128, 32, 32, 64, 3>>},
    {"128x128x32", &launch<SplitTf32Kernel<128, 128, 32, 64, 32, 3>>},
    {"64x64x16", &launch<SplitTf32Kernel<64, 64, 16, 32, 32, 4>>},
};
constexpr int kNumVariants = int(sizeof kVariants / sizeof kVariants[0]);

bool aligned16(const void *p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

} // namespace

bool split_tf32_applies(const sinter_gemm_desc &g) {
  // Products of at least 2^26 multiply-adds over k >= 256 only: there the split is what is
  // fast, and its per-product error (~2^-22, the remainders' TF32 rounding) stays below fp32's
  // summation error; over a short k (a tiny model's 64) it would exceed fp32's own.
  const bool large = g.k >= 256 && double(g.m) * double(g.n) * double(g.k) >= double(1 << 26);
  return g.dtype == SINTER_DTYPE_F32 && g.precision == SINTER_PRECISION_STRICT && large &&
         g.batch <= 1 &&
         !(g.bias.space != SINTER_BUFFER_NONE && g.residual.space != SINTER_BUFFER_NONE) &&
         g.m > 0 && g.n > 0 && g.k > 0 && g.m <= INT_MAX && g.n <= INT_MAX && g.k <= INT_MAX &&
         g.n % kAlignment == 0 && g.k % kAlignment == 0;
}

bool split_tf32_aligned(const SplitTf32Operands &o) {
  return aligned16(o.a) && aligned16(o.b) && aligned16(o.d) && (!o.c || aligned16(o.c));
}

int split_tf32_candidates(int k, SplitTf32Choice *out, int max) {
  int count = 0;
  for (int v = 0; v < kNumVariants; ++v)
    for (int split = 1; split <= 4; split *= 2) {
      // A K split pays a semaphore round per tile: only where each part keeps 512 of K.
      if (split > 1 && k / split < 512) continue;
      if (count < max) out[count++] = SplitTf32Choice{v, split};
    }
  return count;
}

cudaError_t split_tf32_gemm(const SplitTf32Choice &choice, const SplitTf32Operands &ops,
                            void *workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (choice.variant < 0 || choice.variant >= kNumVariants || choice.split_k < 1)
    return cudaErrorInvalidValue;
  return kVariants[choice.variant].launch(ops, choice.split_k, workspace, workspace_bytes, stream);
}

const char *split_tf32_variant_name(int variant) {
  return variant >= 0 && variant < kNumVariants ? kVariants[variant].name : "cublasLt";
}

} // namespace sinter::rt
