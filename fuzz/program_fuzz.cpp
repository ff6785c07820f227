// libFuzzer target: the runtime's load-time checks of a program description and its weights.
//
// A model .so hands the runtime a `sinter_program` table (runtime/include/sinter/program.h) and
// a weight blob. sinter_model_load checks, in order and before any CUDA call, the program
// structure (check_program), then the weight checksum; sinter_run then validates the caller's
// tensors against expectations derived from the program (make_io_expect, validate_io). This
// target runs exactly those checks, without CUDA, on tables derived from real ones:
//
//   base 0: the table `sinter compile` generates for examples/fixtures/lora_mlp_tiny.onnx
//           (three f32 GEMMs with bias through the arena);
//   base 1: the unit tests' fake program (test/unit/fake_program.cpp: a GEMM and a kernel).
//
// The input's first byte picks the base; the rest is a list of edits (set a field to an
// interesting or arbitrary value, add or drop tensors, launches and kernel buffers, flip weight
// bytes, ...). The empty edit list must pass. Whenever check_program accepts a table, an
// independent oracle (128-bit arithmetic) confirms that every tensor size is representable and
// that every buffer range a launch touches lies inside its buffer; validate_io must accept
// tensors built exactly to the expectations and reject a wrong one. Anything else is a bug:
// the check would let a kernel or cuBLASLt read or write out of bounds.
#include "checksum.h"
#include "error.h"
#include "model.h"
#include "validate.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace {

using u128 = unsigned __int128;

[[noreturn]] void bug(const char *what) {
  std::fprintf(stderr, "sinter-program-fuzz: %s (last error: %s)\n", what,
               sinter_last_error());
  std::abort();
}

void kernelStub() {}

/// Everything a sinter_program points at, owned.
struct Image {
  std::deque<std::string> names;
  std::vector<sinter_tensor_info> inputs, outputs;
  std::vector<sinter_launch_desc> launches;
  std::deque<std::vector<sinter_buffer_ref>> buffers; // kernel buffer arrays
  std::vector<unsigned char> weights;
  std::vector<sinter_state_info> states;
  sinter_program p{};
  bool inputsNull = false, outputsNull = false, launchesNull = false, weightsNull = false;
  bool statesNull = false;
  bool checksumValid = true;
  uint64_t checksum = 0;

  const char *name(const std::string &s) { return names.emplace_back(s).c_str(); }

  sinter_tensor_info tensor(const char *n, int32_t dtype, std::initializer_list<int64_t> shape) {
    sinter_tensor_info t{};
    t.name = name(n);
    t.dtype = dtype;
    t.rank = static_cast<int32_t>(shape.size());
    int i = 0;
    for (int64_t d : shape)
      t.shape[i++] = d;
    return t;
  }

  sinter_launch_desc gemm(int64_t m, int64_t n, int64_t k, sinter_buffer_ref a,
                          sinter_buffer_ref b, sinter_buffer_ref bias, sinter_buffer_ref c) {
    sinter_launch_desc l{};
    l.kind = SINTER_LAUNCH_GEMM;
    l.label = "gemm";
    l.sources = "node";
    l.gemm = {m, n, k, SINTER_DTYPE_F32, SINTER_PRECISION_STRICT, a, b, bias, c,
              {SINTER_BUFFER_NONE, 0, 0}};
    return l;
  }

  // The program linked into the LoRA MLP fixture's .so (`sinter compile --compile-to=source`).
  void loraMlpTiny() {
    inputs = {tensor("x", SINTER_DTYPE_F32, {1, 4, 64})};
    outputs = {tensor("y", SINTER_DTYPE_F32, {1, 4, 64})};
    launches = {
        gemm(4, 32, 64, {SINTER_BUFFER_INPUT, 0, 0}, {SINTER_BUFFER_WEIGHTS, 0, 13056},
             {SINTER_BUFFER_WEIGHTS, 0, 12800}, {SINTER_BUFFER_ARENA, 0, 0}),
        gemm(4, 32, 32, {SINTER_BUFFER_ARENA, 0, 0}, {SINTER_BUFFER_WEIGHTS, 0, 8192},
             {SINTER_BUFFER_WEIGHTS, 0, 12544}, {SINTER_BUFFER_ARENA, 0, 512}),
        gemm(4, 64, 32, {SINTER_BUFFER_ARENA, 0, 512}, {SINTER_BUFFER_WEIGHTS, 0, 0},
             {SINTER_BUFFER_WEIGHTS, 0, 12288}, {SINTER_BUFFER_OUTPUT, 0, 0})};
    p.arena_bytes = 1024;
    weights.assign(21248, 0);
  }

  // test/unit/fake_program.cpp
  void fakeProgram() {
    inputs = {tensor("x", SINTER_DTYPE_F32, {2, 4}), tensor("ids", SINTER_DTYPE_I64, {2})};
    outputs = {tensor("y", SINTER_DTYPE_F32, {2, 8})};
    launches = {gemm(2, 8, 4, {SINTER_BUFFER_INPUT, 0, 0}, {SINTER_BUFFER_WEIGHTS, 0, 0},
                     {SINTER_BUFFER_WEIGHTS, 0, 128}, {SINTER_BUFFER_ARENA, 0, 0})};
    sinter_launch_desc k{};
    k.kind = SINTER_LAUNCH_KERNEL;
    k.label = "fake_kernel";
    k.sources = "Gather_0";
    k.kernel.function = reinterpret_cast<const void *>(&kernelStub);
    k.kernel.grid[0] = k.kernel.grid[1] = k.kernel.grid[2] = 1;
    k.kernel.block[0] = 32;
    k.kernel.block[1] = k.kernel.block[2] = 1;
    buffers.push_back({{SINTER_BUFFER_ARENA, 0, 0}, {SINTER_BUFFER_INPUT, 1, 0},
                       {SINTER_BUFFER_OUTPUT, 0, 0}});
    k.kernel.num_buffers = 3;
    k.kernel.buffers = buffers.back().data();
    launches.push_back(k);
    p.arena_bytes = 64;
    // A KV-cache-like state block: two regions, one read by the kernel.
    sinter_state_info key{};
    key.name = name("past_key_0");
    key.dtype = SINTER_DTYPE_BF16;
    key.rank = 2;
    key.shape[0] = 2;
    key.shape[1] = 8;
    key.offset = 0;
    key.bytes = 32;
    sinter_state_info value = key;
    value.name = name("past_value_0");
    value.offset = 256;
    states = {key, value};
    p.state_bytes = 512;
    buffers.back().push_back({SINTER_BUFFER_STATE, 0, 256});
    launches.back().kernel.num_buffers = 4;
    launches.back().kernel.buffers = buffers.back().data();
    weights.resize(160);
    for (size_t i = 0; i < weights.size(); ++i)
      weights[i] = static_cast<unsigned char>(i * 7 + 1);
  }

  // Points the program at the owned arrays (after every edit that may reallocate them).
  const sinter_program &finish() {
    p.version = p.version ? p.version : SINTER_PROGRAM_VERSION;
    p.target = "fuzz";
    p.build_info = "sinter-program-fuzz";
    p.num_inputs = static_cast<uint32_t>(inputs.size());
    p.num_outputs = static_cast<uint32_t>(outputs.size());
    p.inputs = inputsNull ? nullptr : inputs.data();
    p.outputs = outputsNull ? nullptr : outputs.data();
    p.num_launches = static_cast<uint32_t>(launches.size());
    p.launches = launchesNull ? nullptr : launches.data();
    p.num_states = static_cast<uint32_t>(states.size());
    p.states = statesNull ? nullptr : states.data();
    p.weight_bytes = weights.size();
    p.weights = weightsNull ? nullptr : weights.data();
    p.weights_checksum =
        checksumValid ? sinter::checksum::of(weights.data(), weights.size()) : checksum;
    return p;
  }
};

// ---- edits ---------------------------------------------------------------------------------

int64_t interestingI64(FuzzedDataProvider &in) {
  static const int64_t kValues[] = {0,          1,          -1,         2,
                                    3,          4,          64,         255,
                                    256,        1024,       4096,       1 << 20,
                                    INT32_MAX,  int64_t(1) << 32,       int64_t(1) << 40,
                                    int64_t(1) << 48,       int64_t(1) << 61,
                                    int64_t(1) << 62,       INT64_MAX,  INT64_MIN,
                                    INT64_MAX / 2 + 1,      -(int64_t(1) << 32)};
  if (in.ConsumeBool())
    return in.PickValueInArray(kValues);
  return in.ConsumeIntegral<int64_t>();
}

uint64_t interestingU64(FuzzedDataProvider &in) {
  return static_cast<uint64_t>(interestingI64(in));
}

template <typename T> T *pick(FuzzedDataProvider &in, std::vector<T> &v) {
  if (v.empty())
    return nullptr;
  return &v[in.ConsumeIntegralInRange<size_t>(0, v.size() - 1)];
}

int32_t someDtype(FuzzedDataProvider &in) {
  static const int32_t kDtypes[] = {SINTER_DTYPE_F32,  SINTER_DTYPE_F16, SINTER_DTYPE_BF16,
                                    SINTER_DTYPE_I64,  SINTER_DTYPE_I32, SINTER_DTYPE_BOOL,
                                    SINTER_DTYPE_F8_E4M3, SINTER_DTYPE_U8};
  return in.ConsumeBool() ? in.PickValueInArray(kDtypes) : in.ConsumeIntegral<int32_t>();
}

void editTensor(FuzzedDataProvider &in, Image &img, std::vector<sinter_tensor_info> &list) {
  switch (in.ConsumeIntegralInRange(0, 6)) {
  case 0:
    if (list.size() < 6)
      list.push_back(img.tensor("t", SINTER_DTYPE_F32, {4}));
    return;
  case 1:
    if (!list.empty())
      list.pop_back();
    return;
  }
  sinter_tensor_info *t = pick(in, list);
  if (!t)
    return;
  switch (in.ConsumeIntegralInRange(0, 4)) {
  case 0: t->dtype = someDtype(in); break;
  case 1: t->rank = in.ConsumeBool() ? in.ConsumeIntegralInRange(-2, 10) : in.ConsumeIntegral<int32_t>(); break;
  case 2: t->shape[in.ConsumeIntegralInRange(0, SINTER_MAX_RANK - 1)] = interestingI64(in); break;
  case 3: t->name = in.ConsumeBool() ? nullptr : img.name(in.ConsumeRandomLengthString(16)); break;
  case 4:
    // Grow the rank keeping the byte size plausible.
    if (t->rank >= 0 && t->rank < SINTER_MAX_RANK)
      t->shape[t->rank++] = in.ConsumeIntegralInRange<int64_t>(1, 8);
    break;
  }
}

void editRef(FuzzedDataProvider &in, sinter_buffer_ref &r) {
  switch (in.ConsumeIntegralInRange(0, 2)) {
  case 0: r.space = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint32_t>(0, 5) : in.ConsumeIntegral<uint32_t>(); break;
  case 1: r.index = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint32_t>(0, 3) : in.ConsumeIntegral<uint32_t>(); break;
  case 2: r.offset = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 32768) : interestingU64(in); break;
  }
}

void editLaunch(FuzzedDataProvider &in, Image &img) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
  case 0:
    if (!img.launches.empty() && img.launches.size() < 8)
      img.launches.push_back(*pick(in, img.launches));
    return;
  case 1:
    if (!img.launches.empty())
      img.launches.erase(img.launches.begin() +
                         in.ConsumeIntegralInRange<size_t>(0, img.launches.size() - 1));
    return;
  }
  sinter_launch_desc *l = pick(in, img.launches);
  if (!l)
    return;
  sinter_gemm_desc &g = l->gemm;
  sinter_kernel_desc &k = l->kernel;
  switch (in.ConsumeIntegralInRange(0, 16)) {
  case 0: l->kind = in.ConsumeBool() ? in.ConsumeIntegralInRange(0, 3) : in.ConsumeIntegral<int32_t>(); break;
  case 1: g.m = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-1, 256) : interestingI64(in); break;
  case 2: g.n = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-1, 256) : interestingI64(in); break;
  case 3: g.k = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-1, 256) : interestingI64(in); break;
  case 4: g.dtype = someDtype(in); break;
  case 5: g.precision = in.ConsumeIntegralInRange(-1, 3); break;
  case 6: editRef(in, g.a); break;
  case 7: editRef(in, g.b); break;
  case 8: editRef(in, g.bias); break;
  case 9: editRef(in, g.c); break;
  case 10: editRef(in, g.residual); break;
  case 11: k.function = in.ConsumeBool() ? nullptr : reinterpret_cast<const void *>(&kernelStub); break;
  case 12: k.grid[in.ConsumeIntegralInRange(0, 2)] = in.ConsumeIntegralInRange<uint32_t>(0, 3); break;
  case 13: k.block[in.ConsumeIntegralInRange(0, 2)] = in.ConsumeIntegralInRange<uint32_t>(0, 3); break;
  case 14: k.shared_bytes = in.ConsumeIntegral<uint32_t>(); break;
  case 15: {
    // Replace the kernel's buffer list (a null list with a non-zero count included).
    std::vector<sinter_buffer_ref> refs(k.buffers, k.buffers + (k.buffers ? k.num_buffers : 0));
    size_t n = in.ConsumeIntegralInRange<size_t>(0, 5);
    refs.resize(n, sinter_buffer_ref{SINTER_BUFFER_ARENA, 0, 0});
    img.buffers.push_back(refs);
    k.num_buffers = static_cast<uint32_t>(n);
    k.buffers = in.ConsumeIntegralInRange(0, 7) == 0 ? nullptr : img.buffers.back().data();
    break;
  }
  case 16:
    if (k.buffers && k.num_buffers > 0) {
      img.buffers.emplace_back(k.buffers, k.buffers + k.num_buffers);
      editRef(in, img.buffers.back()[in.ConsumeIntegralInRange<uint32_t>(0, k.num_buffers - 1)]);
      k.buffers = img.buffers.back().data();
    }
    break;
  }
}

void editState(FuzzedDataProvider &in, Image &img) {
  switch (in.ConsumeIntegralInRange(0, 8)) {
  case 0:
    if (img.states.size() < 6) {
      sinter_state_info s = img.states.empty() ? sinter_state_info{} : *pick(in, img.states);
      s.name = img.name(in.ConsumeRandomLengthString(12));
      img.states.push_back(s);
    }
    return;
  case 1:
    if (!img.states.empty())
      img.states.pop_back();
    return;
  case 2: img.statesNull = true; return;
  }
  sinter_state_info *s = pick(in, img.states);
  if (!s)
    return;
  switch (in.ConsumeIntegralInRange(0, 5)) {
  case 0: s->dtype = someDtype(in); break;
  case 1: s->rank = in.ConsumeIntegralInRange(-2, 10); break;
  case 2: s->shape[in.ConsumeIntegralInRange(0, SINTER_MAX_RANK - 1)] = interestingI64(in); break;
  case 3: s->offset = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 1024) : interestingU64(in); break;
  case 4: s->bytes = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 1024) : interestingU64(in); break;
  case 5: s->name = in.ConsumeBool() ? nullptr : img.name(in.ConsumeRandomLengthString(12)); break;
  }
}

void edit(FuzzedDataProvider &in, Image &img) {
  switch (in.ConsumeIntegralInRange(0, 13)) {
  case 0: editTensor(in, img, img.inputs); break;
  case 1: editTensor(in, img, img.outputs); break;
  case 2: case 3: case 4: editLaunch(in, img); break;
  case 5: img.p.arena_bytes = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 4096) : interestingU64(in); break;
  case 6: img.weights.resize(in.ConsumeIntegralInRange<size_t>(0, 32768)); break;
  case 7:
    if (!img.weights.empty())
      img.weights[in.ConsumeIntegralInRange<size_t>(0, img.weights.size() - 1)] ^=
          in.ConsumeIntegralInRange<uint8_t>(1, 255);
    break;
  case 8: img.checksumValid = false; img.checksum = in.ConsumeIntegral<uint64_t>(); break;
  case 9: img.checksumValid = in.ConsumeBool(); break;
  case 10: {
    switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: img.inputsNull = true; break;
    case 1: img.outputsNull = true; break;
    case 2: img.launchesNull = true; break;
    case 3: img.weightsNull = true; break;
    }
    break;
  }
  case 11: img.p.version = in.ConsumeIntegralInRange<uint32_t>(0, 3); break;
  // State refs (SINTER_BUFFER_STATE, space 5) are bounded by the state block.
  case 12: img.p.state_bytes = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 4096) : interestingU64(in); break;
  case 13: editState(in, img); break;
  }
}

// ---- oracle --------------------------------------------------------------------------------

u128 exactBytes(const sinter_tensor_info &t) {
  u128 n = sinter::rt::dtype_bytes(t.dtype);
  for (int i = 0; i < t.rank; ++i) {
    n *= static_cast<u128>(t.shape[i]);
    if (n > (u128(1) << 64))
      return u128(1) << 65; // stays "too large" without overflowing 128 bits
  }
  return n;
}

u128 bufferSize(const sinter_program &p, const sinter_buffer_ref &r) {
  switch (r.space) {
  case SINTER_BUFFER_ARENA: return p.arena_bytes;
  case SINTER_BUFFER_WEIGHTS: return p.weight_bytes;
  case SINTER_BUFFER_STATE: return p.state_bytes;
  case SINTER_BUFFER_INPUT: return r.index < p.num_inputs ? exactBytes(p.inputs[r.index]) : 0;
  case SINTER_BUFFER_OUTPUT: return r.index < p.num_outputs ? exactBytes(p.outputs[r.index]) : 0;
  default: bug("check_program accepted an unknown buffer space");
  }
}

void requireInside(const sinter_program &p, const sinter_buffer_ref &r, u128 bytes,
                   bool writable, const char *what) {
  if ((r.space == SINTER_BUFFER_INPUT && r.index >= p.num_inputs) ||
      (r.space == SINTER_BUFFER_OUTPUT && r.index >= p.num_outputs))
    bug("check_program accepted a reference to a missing I/O slot");
  if (writable && r.space == SINTER_BUFFER_WEIGHTS)
    bug("check_program accepted a write into the weights");
  if (u128(r.offset) + bytes > bufferSize(p, r)) {
    std::fprintf(stderr, "%s: offset %llu + %llu bytes\n", what, (unsigned long long)r.offset,
                 (unsigned long long)bytes);
    bug("check_program accepted a buffer range outside its buffer");
  }
}

// Every accepted state region is named uniquely, sized by its dtype and shape, aligned, inside
// the state block, and disjoint from the others.
void checkAcceptedStates(const sinter_program &p) {
  if (p.num_states > 0 && !p.states)
    bug("check_program accepted a null state table");
  for (uint32_t i = 0; i < p.num_states; ++i) {
    const sinter_state_info &s = p.states[i];
    if (!s.name || !*s.name || s.rank < 0 || s.rank > SINTER_MAX_RANK)
      bug("check_program accepted a malformed state");
    u128 bytes = sinter::rt::dtype_bytes(s.dtype);
    if (bytes == 0)
      bug("check_program accepted a state of unknown dtype");
    for (int d = 0; d < s.rank; ++d) {
      if (s.shape[d] <= 0)
        bug("check_program accepted a state with a non-positive dimension");
      bytes *= u128(s.shape[d]);
      if (bytes > u128(INT64_MAX))
        bug("check_program accepted a state whose byte size overflows");
    }
    if (bytes != s.bytes || s.offset % 256 != 0 || u128(s.offset) + s.bytes > p.state_bytes)
      bug("check_program accepted a state region of the wrong size, alignment or extent");
    for (uint32_t j = 0; j < i; ++j) {
      const sinter_state_info &o = p.states[j];
      if (std::strcmp(o.name, s.name) == 0)
        bug("check_program accepted two states of one name");
      const bool disjoint = u128(s.offset) + s.bytes <= o.offset ||
                            u128(o.offset) + o.bytes <= s.offset;
      if (!disjoint && s.bytes > 0 && o.bytes > 0)
        bug("check_program accepted overlapping states");
    }
  }
}

void checkAccepted(const sinter_program &p) {
  for (int role = 0; role < 2; ++role) {
    const sinter_tensor_info *infos = role ? p.outputs : p.inputs;
    uint32_t count = role ? p.num_outputs : p.num_inputs;
    for (uint32_t i = 0; i < count; ++i) {
      const sinter_tensor_info &t = infos[i];
      if (!t.name || sinter::rt::dtype_bytes(t.dtype) == 0 || t.rank < 0 || t.rank > SINTER_MAX_RANK)
        bug("check_program accepted a malformed tensor info");
      for (int d = 0; d < t.rank; ++d) // 0 is an empty input or output, which no launch touches
        if (t.shape[d] < 0)
          bug("check_program accepted a negative dimension");
      if (exactBytes(t) > u128(INT64_MAX))
        bug("check_program accepted a tensor whose byte size overflows");
    }
  }
  if (p.weight_bytes > 0 && !p.weights)
    bug("check_program accepted weight bytes without weights");
  checkAcceptedStates(p);
  for (uint32_t i = 0; i < p.num_launches; ++i) {
    const sinter_launch_desc &l = p.launches[i];
    if (l.kind == SINTER_LAUNCH_GEMM) {
      const sinter_gemm_desc &g = l.gemm;
      if (g.m <= 0 || g.n <= 0 || g.k <= 0)
        bug("check_program accepted a GEMM with a non-positive size");
      const u128 e = sinter::rt::dtype_bytes(g.dtype);
      if (e == 0)
        bug("check_program accepted a GEMM of unknown dtype");
      const u128 m = u128(g.m), n = u128(g.n), k = u128(g.k);
      requireInside(p, g.a, m * k * e, false, "gemm a");
      requireInside(p, g.b, k * n * e, false, "gemm b");
      requireInside(p, g.c, m * n * e, true, "gemm c");
      if (g.bias.space != SINTER_BUFFER_NONE)
        requireInside(p, g.bias, n * e, false, "gemm bias");
      if (g.residual.space != SINTER_BUFFER_NONE)
        requireInside(p, g.residual, m * n * e, false, "gemm residual");
    } else if (l.kind == SINTER_LAUNCH_KERNEL) {
      const sinter_kernel_desc &k = l.kernel;
      if (!k.function || (k.num_buffers > 0 && !k.buffers))
        bug("check_program accepted a kernel without function or buffers");
      for (uint32_t b = 0; b < k.num_buffers; ++b)
        if (k.buffers[b].space != SINTER_BUFFER_NONE) // an unused argument: a null pointer
          requireInside(p, k.buffers[b], 0, false, "kernel buffer");
    } else {
      bug("check_program accepted an unknown launch kind");
    }
  }
}

// Tensors exactly as the expectations describe must pass validate_io; one wrong dtype must not.
void checkIo(const sinter_program &p) {
  sinter::rt::IoExpect io = sinter::rt::make_io_expect(p);
  std::deque<std::vector<int64_t>> shapes;
  auto build = [&](const std::vector<sinter::rt::TensorExpect> &list) {
    std::vector<DLTensor> out;
    for (const auto &e : list) {
      DLTensor t{};
      t.data = reinterpret_cast<void *>(uintptr_t(0x10000));
      t.device = {kDLCUDA, 0};
      t.ndim = e.ndim;
      t.dtype = e.dtype;
      t.shape = shapes.emplace_back(e.shape, e.shape + e.ndim).data();
      t.strides = shapes.emplace_back(e.strides, e.strides + e.ndim).data();
      out.push_back(t);
    }
    return out;
  };
  std::vector<DLTensor> inputs = build(io.inputs), outputs = build(io.outputs);
  if (sinter::rt::validate_io(io, inputs.data(), uint32_t(inputs.size()), outputs.data(),
                              uint32_t(outputs.size()), 0) != SINTER_OK)
    bug("validate_io rejected tensors built to its own expectations");
  if (!inputs.empty()) {
    inputs[0].dtype.bits ^= 0x80;
    if (sinter::rt::validate_io(io, inputs.data(), uint32_t(inputs.size()), outputs.data(),
                                uint32_t(outputs.size()), 0) == SINTER_OK)
      bug("validate_io accepted a wrong dtype");
  }
}

} // namespace

// The runtime archive expects the generated code's table; this binary has none of its own.
extern "C" const sinter_program *sinter_generated_program(void) { return nullptr; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  Image img;
  if (in.ConsumeBool())
    img.fakeProgram();
  else
    img.loraMlpTiny();
  const bool pristine = in.remaining_bytes() == 0;
  for (int edits = 0; edits < 64 && in.remaining_bytes() > 0; ++edits)
    edit(in, img);
  const sinter_program &p = img.finish();

  // load_model's checks, in its order, minus the CUDA part.
  if (p.version != SINTER_PROGRAM_VERSION)
    return 0;
  sinter_status s = sinter::rt::check_program(p);
  if (s != SINTER_OK) {
    if (pristine)
      bug("check_program rejected an unedited base program");
    if (s != SINTER_INTERNAL || !std::strstr(sinter_last_error(), "malformed program"))
      bug("check_program failed without its status or message");
    return 0;
  }
  checkAccepted(p);
  const bool sumOk = sinter::checksum::of(p.weights, p.weight_bytes) == p.weights_checksum;
  if (pristine && !sumOk)
    bug("the checksum of an unedited base program does not match");
  checkIo(p);
  return 0;
}
