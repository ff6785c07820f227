// GEMM-only stand-in for generated code: bf16 native, f32 tf32 and f16 strict GEMMs, each from
// an input and the weights straight into an output.
#include "checksum.h" // the weight checksum the runtime checks (linked from its archive)
#include "gemm_model_data.h"
#include "sinter/program.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

using namespace sinter::test::gemm_model;

namespace {

alignas(256) unsigned char g_weights[kWeightBytes];
const int32_t kDtypes[3] = {SINTER_DTYPE_BF16, SINTER_DTYPE_F32, SINTER_DTYPE_F16};
const int32_t kPrecisions[3] = {SINTER_PRECISION_NATIVE, SINTER_PRECISION_TF32,
                                SINTER_PRECISION_STRICT};
const char *const kInNames[3] = {"a_bf16", "a_f32", "a_f16"};
const char *const kOutNames[3] = {"c_bf16", "c_tf32", "c_f16"};

sinter_tensor_info g_inputs[3], g_outputs[3];
sinter_launch_desc g_launches[3];
sinter_program g_program;

void put(unsigned offset, int32_t dtype, float v) {
  if (dtype == SINTER_DTYPE_F32) {
    std::memcpy(g_weights + offset, &v, 4);
  } else if (dtype == SINTER_DTYPE_BF16) {
    __nv_bfloat16 h = __float2bfloat16(v);
    std::memcpy(g_weights + offset, &h, 2);
  } else {
    __half h = __float2half(v);
    std::memcpy(g_weights + offset, &h, 2);
  }
}

const sinter_program *build() {
  for (int i = 0; i < 3; ++i) {
    const Problem &p = kProblems[i];
    const int32_t dt = kDtypes[i];
    const unsigned e = dt == SINTER_DTYPE_F32 ? 4 : 2;
    for (int k = 0; k < p.k; ++k)
      for (int n = 0; n < p.n; ++n)
        put(p.w_offset + e * unsigned(k * p.n + n), dt, w(k, n, p.salt));
    if (p.bias_offset)
      for (int n = 0; n < p.n; ++n)
        put(p.bias_offset + e * unsigned(n), dt, bias(n));
    g_inputs[i] = {kInNames[i], dt, 2, {p.m, p.k}};
    g_outputs[i] = {kOutNames[i], dt, 2, {p.m, p.n}};
    sinter_launch_desc &l = g_launches[i];
    l.kind = SINTER_LAUNCH_GEMM;
    l.label = "gemm";
    l.sources = kOutNames[i];
    l.gemm.m = p.m;
    l.gemm.n = p.n;
    l.gemm.k = p.k;
    l.gemm.dtype = dt;
    l.gemm.precision = kPrecisions[i];
    l.gemm.a = {SINTER_BUFFER_INPUT, uint32_t(i), 0};
    l.gemm.b = {SINTER_BUFFER_WEIGHTS, 0, p.w_offset};
    l.gemm.bias = p.bias_offset ? sinter_buffer_ref{SINTER_BUFFER_WEIGHTS, 0, p.bias_offset}
                                : sinter_buffer_ref{SINTER_BUFFER_NONE, 0, 0};
    l.gemm.c = {SINTER_BUFFER_OUTPUT, uint32_t(i), 0};
  }
  g_program = {SINTER_PROGRAM_VERSION, "sm_90", "gemm_model.cu", 3, 3, g_inputs, g_outputs, 0,
               g_weights, kWeightBytes, sinter::checksum::of(g_weights, kWeightBytes), 3, g_launches};
  return &g_program;
}

} // namespace

extern "C" const sinter_program *sinter_generated_program(void) {
  static const sinter_program *p = build();
  return p;
}
