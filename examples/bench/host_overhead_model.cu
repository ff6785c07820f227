// A hand-written stand-in for generated code with many tiny kernels, for the host-overhead
// benchmark (host_overhead.cpp): y = chain of kLayers launches of h = a_l * h + b_l over 256
// floats, ping-ponging through the arena. Each kernel takes about 3 us on the GPU (H200, events
// included), so a direct-mode run is bound by the launch path. Built like a model .so by
// test/unit/CMakeLists.txt.
#include "checksum.h" // the weight checksum the runtime checks (linked from its archive)
#include "sinter/program.h"

#include <cstdio>
#include <cstring>

namespace {

constexpr int kLayers = 32, kN = 256;

// Follows the contract of runtime/kernels (launch_params.h): under programmatic dependent launch
// (the runtime's default on sm_90) a kernel may start before the previous one has finished, so
// it lets its successor start at once and waits before it touches activations.
__global__ void affine(const float *x, const float *ab, float *y) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  const int i = threadIdx.x;
  const float a = ab[0], b = ab[1]; // weights: safe to read before the wait
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  y[i] = a * x[i] + b;
}

alignas(256) unsigned char g_weights[kLayers * 256]; // a, b of layer l at l * 256
sinter_buffer_ref g_buffers[kLayers][3];
sinter_launch_desc g_launches[kLayers];
sinter_weight_info g_table[kLayers];
char g_names[kLayers][16];
sinter_program g_program;

const sinter_tensor_info g_inputs[] = {{"x", SINTER_DTYPE_F32, 1, {kN}}};
const sinter_tensor_info g_outputs[] = {{"y", SINTER_DTYPE_F32, 1, {kN}}};

const sinter_program *build() {
  for (int l = 0; l < kLayers; ++l) {
    const float ab[2] = {0.5f + 0.01f * float(l), 0.125f};
    std::memcpy(g_weights + l * 256, ab, sizeof ab);
    // Layer l reads the input (l == 0) or arena slot (l + 1) % 2, writes slot l % 2 or the output.
    const uint64_t in_slot = uint64_t((l + 1) % 2) * kN * 4, out_slot = uint64_t(l % 2) * kN * 4;
    g_buffers[l][0] = l == 0 ? sinter_buffer_ref{SINTER_BUFFER_INPUT, 0, 0}
                             : sinter_buffer_ref{SINTER_BUFFER_ARENA, 0, in_slot};
    g_buffers[l][1] = {SINTER_BUFFER_WEIGHTS, 0, uint64_t(l) * 256};
    g_buffers[l][2] = l == kLayers - 1 ? sinter_buffer_ref{SINTER_BUFFER_OUTPUT, 0, 0}
                                       : sinter_buffer_ref{SINTER_BUFFER_ARENA, 0, out_slot};
    sinter_launch_desc &d = g_launches[l];
    d.kind = SINTER_LAUNCH_KERNEL;
    d.label = "affine";
    d.sources = "Mul,Add";
    d.kernel = {reinterpret_cast<const void *>(&affine), {1, 1, 1}, {kN, 1, 1}, 0, 3, g_buffers[l]};
    std::snprintf(g_names[l], sizeof g_names[l], "ab%d", l);
    g_table[l] = {g_names[l], SINTER_DTYPE_F32, 1, {2}, uint64_t(l) * 256, 8, 0};
    g_table[l].checksum = sinter::checksum::of(g_weights + l * 256, 8);
  }
  g_program = {SINTER_PROGRAM_VERSION, "sm_90", "host_overhead_model.cu", 1, 1, g_inputs,
               g_outputs, 2 * kN * 4, g_weights, sizeof g_weights,
               sinter::checksum::of(g_weights, sizeof g_weights), kLayers, g_launches};
  g_program.num_weight_tensors = kLayers;
  g_program.weight_tensors = g_table;
  return &g_program;
}

} // namespace

extern "C" const sinter_program *sinter_generated_program(void) {
  static const sinter_program *p = build();
  return p;
}
