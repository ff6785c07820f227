/* A stand-in for a compiled sampling model, for the Python package's CPU tests: the sinter ABI
 * (runtime/include/sinter/sinter.h, compiled against it so the struct layouts are the header's)
 * without CUDA. Tensors are host memory (the tests swap the package's CUDA runtime for one on
 * host memory). Entries "prefill" (input_ids [1, S] -> logits [1, S, V], next_token [1, 1]) and
 * "decode" (input_ids [1, 1], cache_position [1] -> logits [1, 1, V], next_token [1, 1]), and
 * after stub_configure_chunk(C) "chunk" (input_ids [1, C], cache_position [C]: C consecutive
 * slots after written ones -> logits [1, C, V], next_token [1, 1]); state
 * regions past_key_0 [1, 2, L, 4] and ".scratch". next_token is a fixed function of the last
 * input token, its position and the sampling parameters (stub_next below); every run is
 * recorded for stub_trace. Configured by stub_configure before sinter_model_load.
 * Built with -DSTUB_CUDA (nvcc, the GPU tests), tensors are device memory instead: the stub
 * copies input_ids/cache_position in and next_token out on the run's stream (synchronously), so
 * the Python side runs with the real CUDA runtime, pinned memory, streams and events. */
#include <sinter/sinter.h>
#ifdef STUB_CUDA
#include <cuda_runtime_api.h>
#endif

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_L 256
#define MAX_TRACE 4096

static int cfg_sampler = 1, cfg_S = 4, cfg_L = 12, cfg_V = 50, cfg_C = 0;
static char last_error[256];

struct sinter_model {
  int contexts;
};
struct sinter_context {
  sinter_model *model;
  sinter_sampling_params params;
  int written[MAX_L];
  uint64_t counter;
  int64_t trace[MAX_TRACE][3]; /* entry, token, position */
  uint32_t n_trace;
};

static sinter_status fail(sinter_status s, const char *msg) {
  snprintf(last_error, sizeof last_error, "%s", msg);
  return s;
}

/* Tensor data to and from the host: plain memory, or device memory with -DSTUB_CUDA. */
static int read_in(void *dst, const DLTensor *t, size_t n, void *stream) {
  const char *src = (const char *)t->data + t->byte_offset;
#ifdef STUB_CUDA
  return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, (cudaStream_t)stream) ||
         cudaStreamSynchronize((cudaStream_t)stream);
#else
  (void)stream;
  memcpy(dst, src, n);
  return 0;
#endif
}
static int write_out(const DLTensor *t, const void *src, size_t n, void *stream) {
  char *dst = (char *)t->data + t->byte_offset;
#ifdef STUB_CUDA
  return cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, (cudaStream_t)stream) ||
         cudaStreamSynchronize((cudaStream_t)stream);
#else
  (void)stream;
  memcpy(dst, src, n);
  return 0;
#endif
}
static int clear_out(const DLTensor *t, size_t n, void *stream) {
#ifdef STUB_CUDA
  return cudaMemsetAsync(t->data, 0, n, (cudaStream_t)stream) != cudaSuccess;
#else
  (void)stream;
  memset(t->data, 0, n);
  return 0;
#endif
}

/* Exported for the tests. */
void stub_configure(int has_sampler, int prefill_len, int cache_len, int vocab) {
  cfg_sampler = has_sampler;
  cfg_S = prefill_len;
  cfg_L = cache_len < MAX_L ? cache_len : MAX_L;
  cfg_V = vocab;
  cfg_C = 0;
}
void stub_configure_chunk(int chunk_len) { cfg_C = chunk_len < MAX_L ? chunk_len : MAX_L; }
/* sizeof and offsetof of sinter_sampling_params, as the C compiler lays it out. */
void stub_sampling_layout(uint64_t out[7]) {
  out[0] = sizeof(sinter_sampling_params);
  out[1] = offsetof(sinter_sampling_params, struct_size);
  out[2] = offsetof(sinter_sampling_params, temperature);
  out[3] = offsetof(sinter_sampling_params, top_k);
  out[4] = offsetof(sinter_sampling_params, top_p);
  out[5] = offsetof(sinter_sampling_params, repetition_penalty);
  out[6] = offsetof(sinter_sampling_params, seed);
}
int stub_get_sampling(const sinter_context *ctx, sinter_sampling_params *out) {
  *out = ctx->params;
  return 0;
}
uint32_t stub_trace(const sinter_context *ctx, int64_t *out, uint32_t capacity) {
  uint32_t n = ctx->n_trace < capacity ? ctx->n_trace : capacity;
  memcpy(out, ctx->trace, n * 3 * sizeof(int64_t));
  return ctx->n_trace;
}
/* The token a run draws: greedy is a function of (token, position); sampling adds the seed
 * and the run counter. The Python tests use the same formula. */
int64_t stub_next(int64_t token, int64_t pos, double temperature, uint64_t seed,
                  uint64_t counter) {
  int64_t v = token * 31 + pos * 7 + 3;
  if (temperature > 0) v += (int64_t)((seed * 13 + counter * 5) % 1000);
  return v % cfg_V;
}

uint32_t sinter_abi_version(void) { return SINTER_ABI_VERSION; }
const char *sinter_last_error(void) { return last_error; }
const char *sinter_status_string(sinter_status s) { return s == SINTER_OK ? "SINTER_OK" : "?"; }
const char *sinter_build_info(void) { return "python test stub"; }

sinter_status sinter_model_load(uint32_t major, sinter_model **out) {
  if (major != SINTER_ABI_VERSION_MAJOR) return fail(SINTER_ABI_MISMATCH, "abi");
  *out = calloc(1, sizeof(sinter_model));
  return SINTER_OK;
}
sinter_status sinter_model_destroy(sinter_model *m) {
  if (!m) return SINTER_OK;
  if (m->contexts) return fail(SINTER_BUSY, "stub: contexts still open");
  free(m);
  return SINTER_OK;
}

/* entry 0 = prefill, 1 = decode, 2 = chunk */
static uint32_t n_entries(void) { return cfg_C ? 3 : 2; }
static uint32_t n_in(uint32_t e) { return e == 0 ? 1 : 2; }
static int64_t tokens_of(uint32_t e) { return e == 0 ? cfg_S : e == 1 ? 1 : cfg_C; }
static void desc(sinter_tensor_desc *d, const char *name, int code, int bits, int ndim,
                 int64_t a, int64_t b, int64_t c, int64_t e) {
  memset(d, 0, sizeof *d);
  d->name = name;
  d->dtype.code = (uint8_t)code;
  d->dtype.bits = (uint8_t)bits;
  d->dtype.lanes = 1;
  d->ndim = ndim;
  d->shape[0] = a;
  d->shape[1] = b;
  d->shape[2] = c;
  d->shape[3] = e;
  for (int i = ndim; i < SINTER_TENSOR_MAX_NDIM; ++i) d->shape[i] = 0;
}

uint32_t sinter_model_num_entries(const sinter_model *m) { return m ? n_entries() : 0; }
const char *sinter_model_entry_name(const sinter_model *m, uint32_t e) {
  (void)m;
  return e == 0 ? "prefill" : e == 1 ? "decode" : e < n_entries() ? "chunk" : NULL;
}
sinter_status sinter_model_find_entry(const sinter_model *m, const char *name, uint32_t *out) {
  (void)m;
  if (!strcmp(name, "prefill")) *out = 0;
  else if (!strcmp(name, "decode")) *out = 1;
  else if (!strcmp(name, "chunk") && cfg_C) *out = 2;
  else return fail(SINTER_INVALID_ARGUMENT, "no such entry");
  return SINTER_OK;
}
uint32_t sinter_model_entry_num_inputs(const sinter_model *m, uint32_t e) {
  (void)m;
  return e < n_entries() ? n_in(e) : 0;
}
uint32_t sinter_model_entry_num_outputs(const sinter_model *m, uint32_t e) {
  (void)m;
  return e < n_entries() ? (cfg_sampler ? 2 : 1) : 0;
}
sinter_status sinter_model_entry_input_info(const sinter_model *m, uint32_t e, uint32_t i,
                                            sinter_tensor_desc *out) {
  (void)m;
  if (e >= n_entries() || i >= n_in(e)) return fail(SINTER_INVALID_ARGUMENT, "input index");
  if (i == 0) desc(out, "input_ids", kDLInt, 64, 2, 1, tokens_of(e), 0, 0);
  else desc(out, "cache_position", kDLInt, 64, 1, tokens_of(e), 0, 0, 0);
  return SINTER_OK;
}
sinter_status sinter_model_entry_output_info(const sinter_model *m, uint32_t e, uint32_t i,
                                             sinter_tensor_desc *out) {
  (void)m;
  if (e >= n_entries() || i >= (cfg_sampler ? 2u : 1u))
    return fail(SINTER_INVALID_ARGUMENT, "output index");
  if (i == 0) desc(out, "logits", kDLFloat, 32, 3, 1, tokens_of(e), cfg_V, 0);
  else desc(out, "next_token", kDLInt, 64, 2, 1, 1, 0, 0);
  return SINTER_OK;
}
uint32_t sinter_model_entry_num_launches(const sinter_model *m, uint32_t e) {
  (void)m;
  return e < n_entries() ? 3 : 0;
}
uint32_t sinter_model_num_inputs(const sinter_model *m) { return sinter_model_entry_num_inputs(m, 0); }
uint32_t sinter_model_num_outputs(const sinter_model *m) { return sinter_model_entry_num_outputs(m, 0); }
uint32_t sinter_model_num_launches(const sinter_model *m) { return sinter_model_entry_num_launches(m, 0); }
uint64_t sinter_model_arena_bytes(const sinter_model *m) { (void)m; return 1024; }
sinter_status sinter_model_input_info(const sinter_model *m, uint32_t i, sinter_tensor_desc *o) {
  return sinter_model_entry_input_info(m, 0, i, o);
}
sinter_status sinter_model_output_info(const sinter_model *m, uint32_t i, sinter_tensor_desc *o) {
  return sinter_model_entry_output_info(m, 0, i, o);
}
uint64_t sinter_model_state_bytes(const sinter_model *m) {
  (void)m;
  return (uint64_t)cfg_L * 2 * 4 * 4 + 64;
}
uint32_t sinter_model_num_states(const sinter_model *m) { return m ? 2 : 0; }
sinter_status sinter_model_state_info(const sinter_model *m, uint32_t i, sinter_tensor_desc *o) {
  (void)m;
  if (i == 0) desc(o, "past_key_0", kDLFloat, 32, 4, 1, 2, cfg_L, 4);
  else if (i == 1) desc(o, ".scratch", kDLFloat, 32, 1, 16, 0, 0, 0);
  else return fail(SINTER_INVALID_ARGUMENT, "state index");
  return SINTER_OK;
}
int sinter_model_has_sampler(const sinter_model *m) { return m ? cfg_sampler : 0; }

sinter_status sinter_context_create(sinter_model *m, const sinter_context_options *o,
                                    sinter_context **out) {
  (void)o;
  sinter_context *c = calloc(1, sizeof(sinter_context));
  sinter_sampling_params init = SINTER_SAMPLING_PARAMS_INIT;
  c->model = m;
  c->params = init;
  m->contexts++;
  *out = c;
  return SINTER_OK;
}
sinter_status sinter_context_destroy(sinter_context *c) {
  if (!c) return SINTER_OK;
  c->model->contexts--;
  free(c);
  return SINTER_OK;
}
sinter_status sinter_context_reset_state(sinter_context *c, void *stream) {
  (void)stream;
  memset(c->written, 0, sizeof c->written);
  c->counter = 0;
  return SINTER_OK;
}
sinter_status sinter_context_set_sampling(sinter_context *c, const sinter_sampling_params *p,
                                          void *stream) {
  (void)stream;
  if (!cfg_sampler) return fail(SINTER_INVALID_ARGUMENT, "stub: the library has no sampler");
  if (p->struct_size < sizeof(sinter_sampling_params))
    return fail(SINTER_INVALID_ARGUMENT, "struct_size too small");
  if (!(p->temperature >= 0) || !isfinite(p->temperature))
    return fail(SINTER_INVALID_ARGUMENT, "temperature");
  if (p->top_k < 0) return fail(SINTER_INVALID_ARGUMENT, "top_k");
  if (!(p->top_p > 0 && p->top_p <= 1)) return fail(SINTER_INVALID_ARGUMENT, "top_p");
  if (!(p->repetition_penalty > 0) || !isfinite(p->repetition_penalty))
    return fail(SINTER_INVALID_ARGUMENT, "repetition_penalty");
  c->params = *p;
  c->counter = 0;
  return SINTER_OK;
}

sinter_status sinter_run_entry(sinter_context *c, uint32_t e, const DLTensor *in, uint32_t nin,
                               const DLTensor *out, uint32_t nout, void *stream) {
  if (e >= n_entries()) return fail(SINTER_INVALID_ARGUMENT, "entry");
  if (nin != n_in(e) || nout != (cfg_sampler ? 2u : 1u))
    return fail(SINTER_INVALID_ARGUMENT, "wrong tensor count");
  const int64_t count = tokens_of(e);
  int64_t ids[MAX_L];
  if (read_in(ids, &in[0], (size_t)count * sizeof(int64_t), stream))
    return fail(SINTER_CUDA_ERROR, "stub: reading input_ids failed");
  int64_t token = ids[count - 1], pos = count - 1;
  if (e == 0) {
    for (int i = 0; i < cfg_S; ++i) c->written[i] = 1;
  } else {
    int64_t positions[MAX_L];
    if (read_in(positions, &in[1], (size_t)count * sizeof(int64_t), stream))
      return fail(SINTER_CUDA_ERROR, "stub: reading cache_position failed");
    pos = positions[count - 1];
    if (positions[0] < 0 || pos >= cfg_L)
      return fail(SINTER_INVALID_ARGUMENT, "stub: cache_position out of range");
    for (int64_t i = 1; i < count; ++i)
      if (positions[i] != positions[0] + i)
        return fail(SINTER_INVALID_ARGUMENT, "stub: chunk positions not consecutive");
    for (int64_t i = 0; i < positions[0]; ++i)
      if (!c->written[i]) return fail(SINTER_INTERNAL, "stub: a run past a position never written");
    for (int64_t i = positions[0]; i <= pos; ++i) c->written[i] = 1;
  }
  if (c->n_trace < MAX_TRACE) {
    c->trace[c->n_trace][0] = e;
    c->trace[c->n_trace][1] = token;
    c->trace[c->n_trace][2] = pos;
  }
  c->n_trace++;
  if (clear_out(&out[0], (size_t)count * cfg_V * sizeof(float), stream))
    return fail(SINTER_CUDA_ERROR, "stub: clearing logits failed");
  if (cfg_sampler) { /* written after input_ids was read: the buffers may be one */
    int64_t next = stub_next(token, pos, c->params.temperature, c->params.seed, c->counter);
    if (write_out(&out[1], &next, sizeof next, stream))
      return fail(SINTER_CUDA_ERROR, "stub: writing next_token failed");
  }
  c->counter++;
  return SINTER_OK;
}
sinter_status sinter_run(sinter_context *c, const DLTensor *in, uint32_t nin, const DLTensor *out,
                         uint32_t nout, void *stream) {
  return sinter_run_entry(c, 0, in, nin, out, nout, stream);
}
