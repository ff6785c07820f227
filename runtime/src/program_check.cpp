// Load-time checks of the generated program, so a malformed .so fails with a message instead of
// a kernel reading out of bounds.
#include "model.h"

#include "entries.h"
#include "error.h"
#include "weights_file.h"

#include <cstdio>
#include <cstring>

namespace sinter::rt {

namespace {

// a * b, false when the product does not fit in 64 bits.
bool mul_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_mul_overflow(a, b, out); }

// Byte size of a checked tensor (check_tensors guarantees it fits in int64).
uint64_t tensor_bytes(const sinter_tensor_info &t) {
  uint64_t n = dtype_bytes(t.dtype);
  for (int i = 0; i < t.rank; ++i)
    n *= static_cast<uint64_t>(t.shape[i]);
  return n;
}

// `in` prefixes the role in messages ("" or "entry 'decode' ").
sinter_status check_tensors(const sinter_tensor_info *infos, uint32_t count, const char *role,
                            const char *in) {
  if (count > 0 && !infos)
    return fail(SINTER_INTERNAL, "malformed program: %s%s infos are null", in, role);
  for (uint32_t i = 0; i < count; ++i) {
    const sinter_tensor_info &t = infos[i];
    if (!t.name)
      return fail(SINTER_INTERNAL, "malformed program: %s%s %u has no name", in, role, i);
    if (dtype_bytes(t.dtype) == 0)
      return fail(SINTER_INTERNAL, "malformed program: %s%s '%s' has unknown dtype %d", in,
                  role, t.name, t.dtype);
    if (t.rank < 0 || t.rank > SINTER_MAX_RANK)
      return fail(SINTER_INTERNAL, "malformed program: %s%s '%s' has rank %d", in, role,
                  t.name, t.rank);
    uint64_t bytes = dtype_bytes(t.dtype);
    for (int d = 0; d < t.rank; ++d) {
      if (t.shape[d] < 0) // 0 is an empty tensor, which no launch touches
        return fail(SINTER_INTERNAL, "malformed program: %s%s '%s' has dimension %d of size %lld",
                    in, role, t.name, d, static_cast<long long>(t.shape[d]));
      if (!mul_u64(bytes, static_cast<uint64_t>(t.shape[d]), &bytes) || bytes > INT64_MAX)
        return fail(SINTER_INTERNAL, "malformed program: %s%s '%s' has a byte size past 2^63",
                    in, role, t.name);
    }
  }
  return SINTER_OK;
}

// The launches being checked: one entry's I/O (what INPUT/OUTPUT refs index) and how
// messages name a launch ("launch 3" for entry 0, "entry 'decode' launch 3" for the others).
struct LaunchScope {
  const sinter_program &p;
  const sinter_entry &entry;
  const char *prefix; // "" or "entry 'decode' "
};

// `bytes` is what the launch touches from ref.offset on (0 when unknown: only the start is
// checked). Writable refs must not point into the read-only weights.
sinter_status check_ref(const LaunchScope &scope, uint32_t launch, const char *what,
                        const sinter_buffer_ref &ref, uint64_t bytes, bool writable) {
  const sinter_program &p = scope.p;
  const sinter_entry &e = scope.entry;
  const char *in = scope.prefix;
  uint64_t size = 0;
  switch (ref.space) {
  case SINTER_BUFFER_ARENA: size = p.arena_bytes; break;
  case SINTER_BUFFER_STATE: size = p.state_bytes; break;
  case SINTER_BUFFER_WEIGHTS:
    if (writable)
      return fail(SINTER_INTERNAL, "malformed program: %slaunch %u writes %s into the weights",
                  in, launch, what);
    size = p.weight_bytes;
    break;
  case SINTER_BUFFER_INPUT:
    if (ref.index >= e.num_inputs)
      return fail(SINTER_INTERNAL, "malformed program: %slaunch %u %s names input %u of %u", in,
                  launch, what, ref.index, e.num_inputs);
    size = tensor_bytes(e.inputs[ref.index]);
    break;
  case SINTER_BUFFER_OUTPUT:
    if (ref.index >= e.num_outputs)
      return fail(SINTER_INTERNAL, "malformed program: %slaunch %u %s names output %u of %u", in,
                  launch, what, ref.index, e.num_outputs);
    size = tensor_bytes(e.outputs[ref.index]);
    break;
  default:
    return fail(SINTER_INTERNAL, "malformed program: %slaunch %u %s has buffer space %u", in,
                launch, what, ref.space);
  }
  if (ref.offset > size || bytes > size - ref.offset)
    return fail(SINTER_INTERNAL,
                "malformed program: %slaunch %u %s spans bytes [%llu, %llu) of a %llu-byte %s",
                in, launch, what, static_cast<unsigned long long>(ref.offset),
                static_cast<unsigned long long>(ref.offset + bytes),
                static_cast<unsigned long long>(size),
                ref.space == SINTER_BUFFER_STATE ? "state block" : "buffer");
  return SINTER_OK;
}

sinter_status check_gemm(const LaunchScope &p, uint32_t i, const sinter_gemm_desc &g) {
  const char *in = p.prefix;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0)
    return fail(SINTER_INTERNAL, "malformed program: %slaunch %u gemm has m=%lld n=%lld k=%lld",
                in, i, static_cast<long long>(g.m), static_cast<long long>(g.n),
                static_cast<long long>(g.k));
  if (g.dtype != SINTER_DTYPE_F32 && g.dtype != SINTER_DTYPE_F16 && g.dtype != SINTER_DTYPE_BF16 &&
      g.dtype != SINTER_DTYPE_F64)
    return fail(SINTER_INTERNAL, "malformed program: %slaunch %u gemm has dtype %d", in, i,
                g.dtype);
  if (g.precision < SINTER_PRECISION_STRICT || g.precision > SINTER_PRECISION_NATIVE)
    return fail(SINTER_INTERNAL, "malformed program: %slaunch %u gemm has precision %d", in, i,
                g.precision);
  if (g.precision == SINTER_PRECISION_TF32 && g.dtype != SINTER_DTYPE_F32)
    return fail(SINTER_INTERNAL,
                "malformed program: %slaunch %u gemm asks tf32 for a dtype other than f32", in, i);
  const uint64_t e = dtype_bytes(g.dtype);
  const uint64_t m = uint64_t(g.m), n = uint64_t(g.n), k = uint64_t(g.k);
  // Byte sizes of a, b and c; a product that wraps would let a huge operand pass the checks.
  uint64_t mk, kn, mn, a_bytes, b_bytes, c_bytes;
  if (!mul_u64(m, k, &mk) || !mul_u64(mk, e, &a_bytes) || !mul_u64(k, n, &kn) ||
      !mul_u64(kn, e, &b_bytes) || !mul_u64(m, n, &mn) || !mul_u64(mn, e, &c_bytes))
    return fail(SINTER_INTERNAL,
                "malformed program: %slaunch %u gemm m=%lld n=%lld k=%lld overflows 64-bit sizes",
                in, i, static_cast<long long>(g.m), static_cast<long long>(g.n),
                static_cast<long long>(g.k));
  if (g.batch < 0 || g.batch > INT32_MAX || (g.batch > 1 && (g.bias.space != SINTER_BUFFER_NONE ||
                                      g.residual.space != SINTER_BUFFER_NONE)))
    return fail(SINTER_INTERNAL,
                "malformed program: %slaunch %u gemm has batch %lld with a bias or residual", in,
                i, static_cast<long long>(g.batch));
  const uint64_t batch = g.batch > 1 ? uint64_t(g.batch) : 1;
  if (!mul_u64(a_bytes, g.broadcast_a ? 1 : batch, &a_bytes) ||
      !mul_u64(b_bytes, g.broadcast_b ? 1 : batch, &b_bytes) || !mul_u64(c_bytes, batch, &c_bytes))
    return fail(SINTER_INTERNAL, "malformed program: %slaunch %u gemm batch %lld overflows",
                in, i, static_cast<long long>(g.batch));
  sinter_status s;
  if ((s = check_ref(p, i, "a", g.a, a_bytes, false)) != SINTER_OK) return s;
  if ((s = check_ref(p, i, "b", g.b, b_bytes, false)) != SINTER_OK) return s;
  if ((s = check_ref(p, i, "c", g.c, c_bytes, true)) != SINTER_OK) return s;
  if (g.bias.space != SINTER_BUFFER_NONE &&
      (s = check_ref(p, i, "bias", g.bias, n * e, false)) != SINTER_OK)
    return s;
  if (g.residual.space != SINTER_BUFFER_NONE &&
      (s = check_ref(p, i, "residual", g.residual, c_bytes, false)) != SINTER_OK)
    return s;
  return SINTER_OK;
}

sinter_status check_kernel(const LaunchScope &p, uint32_t i, const sinter_kernel_desc &k) {
  const char *in = p.prefix;
  if (!k.function)
    return fail(SINTER_INTERNAL, "malformed program: %slaunch %u kernel has no function", in,
                i);
  for (int d = 0; d < 3; ++d)
    if (k.grid[d] == 0 || k.block[d] == 0)
      return fail(SINTER_INTERNAL,
                  "malformed program: %slaunch %u kernel has an empty grid/block", in, i);
  if (k.num_buffers > 0 && !k.buffers)
    return fail(SINTER_INTERNAL, "malformed program: %slaunch %u kernel buffers are null", in,
                i);
  for (uint32_t b = 0; b < k.num_buffers; ++b) {
    // A kernel argument the variant does not use is passed as a null pointer.
    if (k.buffers[b].space == SINTER_BUFFER_NONE)
      continue;
    // Kernels may write any buffer but weights; how many bytes they touch is not recorded.
    const bool writable = k.buffers[b].space != SINTER_BUFFER_WEIGHTS;
    sinter_status s = check_ref(p, i, "buffer", k.buffers[b], 0, writable);
    if (s != SINTER_OK)
      return s;
  }
  return SINTER_OK;
}

// The launches of one entry against that entry's I/O.
sinter_status check_launches(const LaunchScope &scope) {
  const sinter_entry &e = scope.entry;
  if (e.num_launches > 0 && !e.launches)
    return fail(SINTER_INTERNAL, "malformed program: %slaunches are null", scope.prefix);
  for (uint32_t i = 0; i < e.num_launches; ++i) {
    const sinter_launch_desc &l = e.launches[i];
    sinter_status s;
    if (l.kind == SINTER_LAUNCH_GEMM)
      s = check_gemm(scope, i, l.gemm);
    else if (l.kind == SINTER_LAUNCH_KERNEL)
      s = check_kernel(scope, i, l.kernel);
    else
      s = fail(SINTER_INTERNAL, "malformed program: %slaunch %u has kind %d", scope.prefix, i,
               l.kind);
    if (s != SINTER_OK)
      return s;
  }
  return SINTER_OK;
}

// Entry 0 must be the legacy fields, so that what sinter_run and the 1.0 queries see (the
// legacy fields) is what sinter_run_entry(0) runs.
bool repeats_legacy_fields(const sinter_program &p, const sinter_entry &e) {
  return e.num_inputs == p.num_inputs && e.inputs == p.inputs && e.num_outputs == p.num_outputs &&
         e.outputs == p.outputs && e.num_launches == p.num_launches && e.launches == p.launches;
}

// The entry table: names, entry 0 == legacy fields, each later entry's I/O and launches (entry
// 0's were checked as the legacy fields).
sinter_status check_entry_table(const sinter_program &p) {
  if (p.num_entries == 0)
    return SINTER_OK;
  if (!p.entries)
    return fail(SINTER_INTERNAL, "malformed program: %u entries but the entry table is null",
                p.num_entries);
  for (uint32_t i = 0; i < p.num_entries; ++i) {
    const sinter_entry &e = p.entries[i];
    if (!e.name || !*e.name)
      return fail(SINTER_INTERNAL, "malformed program: entry %u has no name", i);
    for (uint32_t j = 0; j < i; ++j)
      if (std::strcmp(p.entries[j].name, e.name) == 0)
        return fail(SINTER_INTERNAL, "malformed program: entries %u and %u are both named '%s'",
                    j, i, e.name);
  }
  if (!repeats_legacy_fields(p, p.entries[0]))
    return fail(SINTER_INTERNAL,
                "malformed program: entry 0 ('%s') differs from the program's single-entry "
                "fields (inputs, outputs and launches must be the same arrays)",
                p.entries[0].name);
  char prefix[160];
  sinter_status s;
  for (uint32_t i = 1; i < p.num_entries; ++i) {
    const sinter_entry &e = p.entries[i];
    std::snprintf(prefix, sizeof prefix, "entry '%s' ", e.name);
    if ((s = check_tensors(e.inputs, e.num_inputs, "input", prefix)) != SINTER_OK) return s;
    if ((s = check_tensors(e.outputs, e.num_outputs, "output", prefix)) != SINTER_OK) return s;
    if ((s = check_launches({p, e, prefix})) != SINTER_OK) return s;
  }
  return SINTER_OK;
}

} // namespace

sinter_status check_program(const sinter_program &p) {
  sinter_status s;
  if ((s = check_tensors(p.inputs, p.num_inputs, "input", "")) != SINTER_OK) return s;
  if ((s = check_tensors(p.outputs, p.num_outputs, "output", "")) != SINTER_OK) return s;
  if (p.weights_external > 1)
    return fail(SINTER_INTERNAL, "malformed program: weights_external is %u", p.weights_external);
  if (p.weight_bytes > 0 && !p.weights && !p.weights_external)
    return fail(SINTER_INTERNAL, "malformed program: %llu weight bytes but no weights",
                static_cast<unsigned long long>(p.weight_bytes));
  if (p.weight_bytes > 0 && p.weights_external && p.num_weight_tensors == 0)
    return fail(SINTER_INTERNAL,
                "malformed program: external weights (%llu bytes) but no weight table",
                static_cast<unsigned long long>(p.weight_bytes));
  if ((s = check_weight_table(p)) != SINTER_OK)
    return s;
  if ((s = check_state_table(p)) != SINTER_OK)
    return s;
  const sinter_entry legacy = legacy_entry(p);
  if ((s = check_launches({p, legacy, ""})) != SINTER_OK)
    return s;
  return check_entry_table(p);
}

} // namespace sinter::rt
