// A hand-written stand-in for `sinter compile` output: one cuBLASLt GEMM and two kernels. The
// unit tests build it into a .so with the same nvcc command line the emitter uses: as is
// (embedded weights plus a weight table) and, from test_model_ext.cu, with
// SINTER_TEST_MODEL_EXTERNAL (external weights: the table only, what --weights=external emits).
#include "checksum.h" // the weight checksum the runtime checks (linked from its archive)
#include "sinter/program.h"
#include "test_model_data.h"

#include <cstring>

using namespace sinter::test::model;

// Kernels follow the contract of runtime/kernels (launch_params.h): the runtime launches a kernel
// that follows another one with programmatic dependent launch (sm_90), so each lets its
// successor start and waits for its predecessor before touching activations.
__device__ __forceinline__ void pdl_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__global__ void relu_scale(const float *h, const float *scale, float *y) {
  pdl_start();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kM * kN)
    y[i] = fmaxf(h[i], 0.0f) * scale[i % kN];
}

__global__ void twice(const float *x, float *z) {
  pdl_start();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kM * kK)
    z[i] = 2.0f * x[i];
}

namespace {

alignas(256) unsigned char g_weights[kWeightBytes];

const sinter_tensor_info g_inputs[] = {{"x", SINTER_DTYPE_F32, 2, {kM, kK}}};
const sinter_tensor_info g_outputs[] = {{"y", SINTER_DTYPE_F32, 2, {kM, kN}},
                                        {"z", SINTER_DTYPE_F32, 2, {kM, kK}}};
const sinter_buffer_ref g_relu_buffers[] = {{SINTER_BUFFER_ARENA, 0, 0},
                                            {SINTER_BUFFER_WEIGHTS, 0, kScaleOffset},
                                            {SINTER_BUFFER_OUTPUT, 0, 0}};
const sinter_buffer_ref g_twice_buffers[] = {{SINTER_BUFFER_INPUT, 0, 0},
                                             {SINTER_BUFFER_OUTPUT, 1, 0}};

sinter_launch_desc g_launches[3];
sinter_weight_info g_table[3];
sinter_program g_program;

void put(unsigned offset, float v) { std::memcpy(g_weights + offset, &v, 4); }

const sinter_program *build() {
  for (int k = 0; k < kK; ++k)
    for (int n = 0; n < kN; ++n)
      put(kWOffset + 4 * (k * kN + n), w(k, n));
  for (int n = 0; n < kN; ++n) {
    put(kBiasOffset + 4 * n, bias(n));
    put(kScaleOffset + 4 * n, scale(n));
  }
  sinter_launch_desc &g = g_launches[0];
  g.kind = SINTER_LAUNCH_GEMM;
  g.label = "gemm";
  g.sources = "MatMul_0";
  g.gemm = {kM, kN, kK, SINTER_DTYPE_F32, SINTER_PRECISION_STRICT,
            {SINTER_BUFFER_INPUT, 0, 0}, {SINTER_BUFFER_WEIGHTS, 0, kWOffset},
            {SINTER_BUFFER_WEIGHTS, 0, kBiasOffset}, {SINTER_BUFFER_ARENA, 0, 0}};
  sinter_launch_desc &r = g_launches[1];
  r.kind = SINTER_LAUNCH_KERNEL;
  r.label = "relu_scale";
  r.sources = "Relu_0,Mul_0";
  r.kernel = {reinterpret_cast<const void *>(&relu_scale), {1, 1, 1}, {64, 1, 1}, 0, 3,
              g_relu_buffers};
  sinter_launch_desc &t = g_launches[2];
  t.kind = SINTER_LAUNCH_KERNEL;
  t.label = "twice";
  t.sources = "Mul_1";
  t.kernel = {reinterpret_cast<const void *>(&twice), {1, 1, 1}, {32, 1, 1}, 0, 2,
              g_twice_buffers};
  g_program = {SINTER_PROGRAM_VERSION, "sm_90", "test_model.cu", 1, 2, g_inputs, g_outputs,
               kM * kN * 4, g_weights, kWeightBytes, sinter::checksum::of(g_weights, kWeightBytes), 3,
               g_launches};
  // The weight table (program.h's appended fields), in blob order.
  g_table[0] = {"w", SINTER_DTYPE_F32, 2, {kK, kN}, kWOffset, kK * kN * 4, 0};
  g_table[1] = {"bias", SINTER_DTYPE_F32, 1, {kN}, kBiasOffset, kN * 4, 0};
  g_table[2] = {"scale", SINTER_DTYPE_F32, 1, {kN}, kScaleOffset, kN * 4, 0};
  for (sinter_weight_info &t : g_table)
    t.checksum = sinter::checksum::of(g_weights + t.offset, t.bytes);
  g_program.num_weight_tensors = 3;
  g_program.weight_tensors = g_table;
#ifdef SINTER_TEST_MODEL_EXTERNAL
  g_program.weights_external = 1;
  g_program.weights = nullptr;
#endif
  return &g_program;
}

} // namespace

extern "C" const sinter_program *sinter_generated_program(void) {
  static const sinter_program *p = build();
  return p;
}
