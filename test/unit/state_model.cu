// A hand-written stand-in for `sinter compile` output with two entry points over one state
// block (ABI 1.2), the shape of an LLM's prefill/decode pair in miniature: "write" folds its
// input into the state, "read" returns what the state holds, through a kernel and a cuBLASLt
// GEMM that reads the state in place. Built with the emitter's nvcc command line.
#include "checksum.h" // the weight checksum the runtime checks (linked from its archive)
#include "sinter/program.h"
#include "state_model_data.h"

#include <cstring>

using namespace sinter::test::state_model;

// The PDL contract of runtime/kernels (see test_model.cu).
__device__ __forceinline__ void pdl_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__global__ void accumulate(const float *x, float *acc, int *calls) {
  pdl_start();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kRows * kCols)
    acc[i] += x[i];
  if (i == 0)
    *calls += 1;
}

__global__ void copy_state(const float *acc, const int *calls, float *acc_out, int *calls_out) {
  pdl_start();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kRows * kCols)
    acc_out[i] = acc[i];
  if (i == 0)
    *calls_out = *calls;
}

namespace {

alignas(256) unsigned char g_weights[kWeightBytes];

const sinter_tensor_info g_write_inputs[] = {{"x", SINTER_DTYPE_F32, 2, {kRows, kCols}}};
const sinter_tensor_info g_read_outputs[] = {{"acc", SINTER_DTYPE_F32, 2, {kRows, kCols}},
                                             {"calls", SINTER_DTYPE_I32, 1, {1}},
                                             {"y", SINTER_DTYPE_F32, 2, {kRows, kN}}};
const sinter_buffer_ref g_accumulate_buffers[] = {{SINTER_BUFFER_INPUT, 0, 0},
                                                  {SINTER_BUFFER_STATE, 0, kAccOffset},
                                                  {SINTER_BUFFER_STATE, 0, kCallsOffset}};
const sinter_buffer_ref g_copy_buffers[] = {{SINTER_BUFFER_STATE, 0, kAccOffset},
                                            {SINTER_BUFFER_STATE, 0, kCallsOffset},
                                            {SINTER_BUFFER_OUTPUT, 0, 0},
                                            {SINTER_BUFFER_OUTPUT, 1, 0}};
const sinter_state_info g_states[] = {
    {"acc", SINTER_DTYPE_F32, 2, {kRows, kCols}, kAccOffset, kAccBytes},
    {".calls", SINTER_DTYPE_I32, 1, {1}, kCallsOffset, 4}};

sinter_launch_desc g_write_launches[1];
sinter_launch_desc g_read_launches[2];
sinter_entry g_entries[2];
sinter_weight_info g_table[1];
sinter_program g_program;

const sinter_program *build() {
  for (int k = 0; k < kCols; ++k)
    for (int n = 0; n < kN; ++n) {
      const float v = w(k, n);
      std::memcpy(g_weights + 4 * (k * kN + n), &v, 4);
    }
  sinter_launch_desc &a = g_write_launches[0];
  a.kind = SINTER_LAUNCH_KERNEL;
  a.label = "accumulate";
  a.sources = "Add_state";
  a.kernel = {reinterpret_cast<const void *>(&accumulate), {1, 1, 1}, {64, 1, 1}, 0, 3,
              g_accumulate_buffers};
  sinter_launch_desc &c = g_read_launches[0];
  c.kind = SINTER_LAUNCH_KERNEL;
  c.label = "copy_state";
  c.sources = "Identity_acc";
  c.kernel = {reinterpret_cast<const void *>(&copy_state), {1, 1, 1}, {64, 1, 1}, 0, 4,
              g_copy_buffers};
  sinter_launch_desc &g = g_read_launches[1];
  g.kind = SINTER_LAUNCH_GEMM;
  g.label = "gemm";
  g.sources = "MatMul_acc";
  g.gemm = {kRows, kN, kCols, SINTER_DTYPE_F32, SINTER_PRECISION_STRICT,
            {SINTER_BUFFER_STATE, 0, kAccOffset}, {SINTER_BUFFER_WEIGHTS, 0, 0},
            {SINTER_BUFFER_NONE, 0, 0}, {SINTER_BUFFER_OUTPUT, 2, 0}};
  g_entries[0] = {"write", 1, 0, g_write_inputs, nullptr, 1, g_write_launches};
  g_entries[1] = {"read", 0, 3, nullptr, g_read_outputs, 2, g_read_launches};
  // The legacy single-entry fields repeat entry 0 (program.h).
  g_program = {SINTER_PROGRAM_VERSION, "sm_90", "state_model.cu", 1, 0, g_write_inputs, nullptr,
               0, g_weights, kWeightBytes, sinter::checksum::of(g_weights, kWeightBytes), 1,
               g_write_launches};
  g_table[0] = {"w", SINTER_DTYPE_F32, 2, {kCols, kN}, 0, kWeightBytes,
                sinter::checksum::of(g_weights, kWeightBytes)};
  g_program.num_weight_tensors = 1;
  g_program.weight_tensors = g_table;
  g_program.state_bytes = kStateBytes;
  g_program.num_states = 2;
  g_program.states = g_states;
  g_program.num_entries = 2;
  g_program.entries = g_entries;
  return &g_program;
}

} // namespace

extern "C" const sinter_program *sinter_generated_program(void) {
  static const sinter_program *p = build();
  return p;
}
