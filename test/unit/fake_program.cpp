// The fake program (see fake_program.h) and its sinter_generated_program definition.
#include "fake_program.h"

#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sinter::test {
namespace {

void fake_kernel() {} // stands in for a __global__ host stub

alignas(256) unsigned char g_weights[256];

const sinter_tensor_info g_inputs[] = {
    {"x", SINTER_DTYPE_F32, 2, {2, 4}},
    {"ids", SINTER_DTYPE_I64, 1, {2}},
};
const sinter_tensor_info g_outputs[] = {
    {"y", SINTER_DTYPE_F32, 2, {2, 8}},
};
// The last argument is one the kernel variant does not use: passed as a null pointer.
const sinter_buffer_ref g_kernel_buffers[] = {
    {SINTER_BUFFER_ARENA, 0, 0},
    {SINTER_BUFFER_INPUT, 1, 0},
    {SINTER_BUFFER_OUTPUT, 0, 0},
    {SINTER_BUFFER_NONE, 0, 0},
};

std::vector<sinter_launch_desc> &launches() {
  static std::vector<sinter_launch_desc> l = fake_launches();
  return l;
}

sinter_program make_program() {
  for (unsigned i = 0; i < sizeof g_weights; ++i)
    g_weights[i] = static_cast<unsigned char>(i * 7 + 1);
  sinter_program p{};
  p.version = SINTER_PROGRAM_VERSION;
  p.target = "fake_sm";
  p.build_info = "unit-test program";
  p.num_inputs = 2;
  p.num_outputs = 1;
  p.inputs = g_inputs;
  p.outputs = g_outputs;
  p.arena_bytes = 64;
  p.weights = g_weights;
  p.weight_bytes = 160;
  p.weights_checksum = reference_checksum(g_weights, 160);
  p.num_launches = static_cast<uint32_t>(launches().size());
  p.launches = launches().data();
  return p;
}

} // namespace

std::vector<sinter_launch_desc> fake_launches() {
  sinter_launch_desc gemm{};
  gemm.kind = SINTER_LAUNCH_GEMM;
  gemm.label = "gemm";
  gemm.sources = "MatMul_0,Add_0";
  gemm.gemm.m = 2;
  gemm.gemm.n = 8;
  gemm.gemm.k = 4;
  gemm.gemm.dtype = SINTER_DTYPE_F32;
  gemm.gemm.precision = SINTER_PRECISION_STRICT;
  gemm.gemm.a = {SINTER_BUFFER_INPUT, 0, 0};
  gemm.gemm.b = {SINTER_BUFFER_WEIGHTS, 0, 0};
  gemm.gemm.bias = {SINTER_BUFFER_WEIGHTS, 0, 128};
  gemm.gemm.c = {SINTER_BUFFER_ARENA, 0, 0};
  sinter_launch_desc kernel{};
  kernel.kind = SINTER_LAUNCH_KERNEL;
  kernel.label = "fake_kernel";
  kernel.sources = "Gather_0";
  kernel.kernel.function = reinterpret_cast<const void *>(&fake_kernel);
  kernel.kernel.grid[0] = kernel.kernel.grid[1] = kernel.kernel.grid[2] = 1;
  kernel.kernel.block[0] = 32;
  kernel.kernel.block[1] = kernel.kernel.block[2] = 1;
  kernel.kernel.num_buffers = 4;
  kernel.kernel.buffers = g_kernel_buffers;
  return {gemm, kernel};
}

sinter_program &fake_program() {
  static sinter_program p = make_program();
  return p;
}

uint64_t reference_checksum(const void *data, uint64_t size) {
  // xxHash's own one-shot XXH3-64, not the runtime's Hasher (which streams).
  return XXH3_64bits(size ? data : nullptr, size_t(size));
}

TensorSet make_tensors(const sinter_tensor_info *infos, uint32_t count, bool with_strides) {
  TensorSet set;
  set.tensors.resize(count);
  set.shapes.resize(count);
  set.strides.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const sinter_tensor_info &info = infos[i];
    set.shapes[i].assign(info.shape, info.shape + info.rank);
    set.strides[i].assign(info.rank, 1);
    for (int d = info.rank - 2; d >= 0; --d)
      set.strides[i][d] = set.strides[i][d + 1] * info.shape[d + 1];
    DLTensor &t = set.tensors[i];
    std::memset(&t, 0, sizeof t);
    t.data = reinterpret_cast<void *>(uintptr_t(0x10000) * (i + 1)); // never dereferenced
    t.device.device_type = kDLCUDA;
    t.device.device_id = 0;
    t.ndim = info.rank;
    t.dtype.code = static_cast<uint8_t>(info.dtype >> 8);
    t.dtype.bits = static_cast<uint8_t>(info.dtype & 0xff);
    t.dtype.lanes = 1;
    t.shape = set.shapes[i].data();
    t.strides = with_strides ? set.strides[i].data() : nullptr;
  }
  return set;
}

} // namespace sinter::test

namespace sinter::test {
namespace {

const sinter_tensor_info g_write_inputs[] = {{"x", SINTER_DTYPE_F32, 2, {2, 4}}};
const sinter_tensor_info g_read_outputs[] = {{"y", SINTER_DTYPE_F32, 2, {2, 4}}};

sinter_launch_desc fake_kernel_launch(const std::vector<sinter_buffer_ref> &buffers) {
  sinter_launch_desc l{};
  l.kind = SINTER_LAUNCH_KERNEL;
  l.label = "fake_kernel";
  l.kernel.function = reinterpret_cast<const void *>(&fake_kernel);
  l.kernel.grid[0] = l.kernel.grid[1] = l.kernel.grid[2] = 1;
  l.kernel.block[0] = 32;
  l.kernel.block[1] = l.kernel.block[2] = 1;
  l.kernel.num_buffers = static_cast<uint32_t>(buffers.size());
  l.kernel.buffers = buffers.data();
  return l;
}

} // namespace

StateProgram::StateProgram() {
  states = {{"acc", SINTER_DTYPE_F32, 2, {2, 4}, 0, 32},
            {".steps", SINTER_DTYPE_I32, 1, {1}, 256, 4}};
  write_buffers = {{SINTER_BUFFER_INPUT, 0, 0},
                   {SINTER_BUFFER_STATE, 0, 0},
                   {SINTER_BUFFER_STATE, 0, 256}};
  read_buffers = {{SINTER_BUFFER_STATE, 0, 0}, {SINTER_BUFFER_OUTPUT, 0, 0}};
  write_launches = {fake_kernel_launch(write_buffers)};
  sinter_launch_desc gemm{};
  gemm.kind = SINTER_LAUNCH_GEMM;
  gemm.label = "gemm";
  gemm.gemm.m = 2;
  gemm.gemm.n = 4;
  gemm.gemm.k = 4;
  gemm.gemm.dtype = SINTER_DTYPE_F32;
  gemm.gemm.precision = SINTER_PRECISION_STRICT;
  gemm.gemm.a = {SINTER_BUFFER_STATE, 0, 0};
  gemm.gemm.b = {SINTER_BUFFER_WEIGHTS, 0, 0};
  gemm.gemm.c = {SINTER_BUFFER_OUTPUT, 0, 0};
  read_launches = {fake_kernel_launch(read_buffers), gemm};
  entries = {{"write", 1, 0, g_write_inputs, nullptr, 1, write_launches.data()},
             {"read", 0, 1, nullptr, g_read_outputs, 2, read_launches.data()}};
  program = fake_program();
  program.num_inputs = 1;
  program.inputs = g_write_inputs;
  program.num_outputs = 0;
  program.outputs = nullptr;
  program.num_launches = 1;
  program.launches = write_launches.data();
  program.state_bytes = 512;
  program.num_states = static_cast<uint32_t>(states.size());
  program.states = states.data();
  program.num_entries = static_cast<uint32_t>(entries.size());
  program.entries = entries.data();
}

} // namespace sinter::test

extern "C" const sinter_program *sinter_generated_program(void) {
  return &sinter::test::fake_program();
}
