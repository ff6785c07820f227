/* Sinter run-time ABI: the C interface every compiled model .so exports.
 *
 * Valid C99 and C++. Every exported symbol starts with `sinter_`. No exception crosses it; every
 * fallible call returns a sinter_status and leaves a message for sinter_last_error().
 *
 * Ownership (AOTInductor/DLPack style), stated per argument below:
 *   - "owned" handles are created by sinter_*_create/load and released by the matching destroy;
 *   - "borrowed" pointers belong to the caller (tensors, options) or to the library (names,
 *     messages) and are only read for the duration stated.
 *
 * Threads: a model is read-only after load and may be shared by any number of contexts and
 * threads. A context is used by one thread at a time; a concurrent second call returns
 * SINTER_BUSY instead of racing. Runs of one context must be ordered by the caller (same stream,
 * or synchronize before switching streams): the context's arena is reused by every run, and its
 * state (ABI 1.2) is read and updated by runs of every entry. */
#ifndef SINTER_SINTER_H
#define SINTER_SINTER_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define SINTER_API __declspec(dllexport)
#elif defined(__GNUC__)
#define SINTER_API __attribute__((visibility("default")))
#else
#define SINTER_API
#endif

#define SINTER_ABI_VERSION_MAJOR 1u
#define SINTER_ABI_VERSION_MINOR 4u /* 1.1: load_from_file/_v2, launch info, profile;
                                       1.2: entry points and context state (KV caches);
                                       1.3: state region queries;
                                       1.4: token sampling in the program */
/* Packed as (major << 16) | minor, the value sinter_abi_version() returns. */
#define SINTER_ABI_VERSION ((SINTER_ABI_VERSION_MAJOR << 16) | SINTER_ABI_VERSION_MINOR)

/* Largest rank of a model input or output. */
#define SINTER_TENSOR_MAX_NDIM 8

typedef enum sinter_status {
  SINTER_OK = 0,
  SINTER_INVALID_ARGUMENT = 1, /* null handle/tensor, wrong count, dtype, shape, device, ... */
  SINTER_NO_DEVICE = 2,        /* no usable CUDA device or driver */
  SINTER_CUDA_ERROR = 3,       /* a CUDA runtime or cuBLASLt call failed */
  SINTER_OUT_OF_MEMORY = 4,    /* device or host allocation failed */
  SINTER_ABI_MISMATCH = 5,     /* caller's ABI major or the program version differs */
  SINTER_CORRUPT_WEIGHTS = 6,  /* weights fail a checksum, or a weights file is malformed or does
                                  not match the model (message names the tensor) */
  SINTER_BUSY = 7,             /* context used from two threads at once, or model still in use */
  SINTER_INTERNAL = 8          /* a bug or malformed program; the message says which */
} sinter_status;

typedef enum sinter_mode {
  SINTER_MODE_DIRECT = 0, /* issue every launch on each run */
  SINTER_MODE_GRAPH = 1   /* one CUDA graph, built at the first run and replayed */
} sinter_mode;

/* Opaque handles. */
typedef struct sinter_model sinter_model;     /* code + weights on the device, read-only */
typedef struct sinter_context sinter_context; /* arena, state, cuBLASLt state, CUDA graphs */

/* One model input or output. `name` is borrowed from the model (valid until it is destroyed). */
typedef struct sinter_tensor_desc {
  const char *name;
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[SINTER_TENSOR_MAX_NDIM]; /* entries past ndim are 0 */
} sinter_tensor_desc;

/* Set struct_size = sizeof(sinter_context_options) so later versions can grow the struct. */
typedef struct sinter_context_options {
  uint32_t struct_size;
  int mode; /* sinter_mode */
} sinter_context_options;

#define SINTER_CONTEXT_OPTIONS_INIT {(uint32_t)sizeof(sinter_context_options), SINTER_MODE_DIRECT}

/* Options of sinter_model_load_v2 (ABI 1.1). Set struct_size = sizeof(sinter_model_load_options)
 * so later versions can grow the struct. */
typedef struct sinter_model_load_options {
  uint32_t struct_size;
  /* A safetensors file holding every tensor of the model's weight table (the file `sinter
   * compile --weights=external` writes beside the .so, or another one with the same names,
   * dtypes and shapes). NULL = the weights embedded in the library. Borrowed for the call. */
  const char *weights_path;
  /* 0: every tensor must match the values the model was compiled with (per-tensor checksum).
   * 1: accept new values (a fine-tuned checkpoint): checksums are skipped, names, dtypes and
   *    shapes are still checked. */
  int allow_new_values;
} sinter_model_load_options;

#define SINTER_MODEL_LOAD_OPTIONS_INIT {(uint32_t)sizeof(sinter_model_load_options), NULL, 0}

/* One launch of the compiled program (ABI 1.1). Strings are borrowed from the model. */
typedef struct sinter_launch_info {
  const char *kind;    /* "gemm" (cuBLASLt) or "kernel" */
  const char *label;   /* "gemm" or the kernel template name */
  const char *sources; /* comma-separated ONNX node names the launch came from ("" if none) */
} sinter_launch_info;

/* (major << 16) | minor of the runtime inside this library. */
SINTER_API uint32_t sinter_abi_version(void);

/* Message of the most recent failing call on this thread ("" if none). Borrowed: valid until the
 * next sinter_* call on this thread. Successful calls leave it unchanged. */
SINTER_API const char *sinter_last_error(void);

/* Static name of a status, e.g. "SINTER_INVALID_ARGUMENT". Never NULL. */
SINTER_API const char *sinter_status_string(sinter_status status);

/* Runtime version, compile target and compiler build info. Static string, never NULL. */
SINTER_API const char *sinter_build_info(void);

/* Loads the model compiled into this library on the current CUDA device: checks that
 * expected_abi_major (pass SINTER_ABI_VERSION_MAJOR) matches, verifies the weight checksum
 * (before any CUDA call), then uploads the weights. *out (owned by the caller) is set on success
 * only; release it with sinter_model_destroy. */
SINTER_API sinter_status sinter_model_load(uint32_t expected_abi_major, sinter_model **out);

/* ABI 1.1. Loads the model with its weights read from the safetensors file `weights_path`
 * (borrowed for the call): the file's header is parsed strictly and matched against the model's
 * weight table (every tensor present with the compiled dtype and shape, extra tensors ignored),
 * all before any CUDA call; then each tensor is streamed from the file (64-bit offsets, files over
 * 4 GB work) through pinned staging into device memory and its checksum verified. Errors:
 * INVALID_ARGUMENT (file cannot be opened, or the library has no weight table),
 * CORRUPT_WEIGHTS (malformed file, missing tensor, other dtype/shape, checksum mismatch; the
 * message names the file and the tensor), and those of sinter_model_load. Works for libraries
 * with embedded weights too (replacing them), provided they carry a weight table. */
SINTER_API sinter_status sinter_model_load_from_file(uint32_t expected_abi_major,
                                                     const char *weights_path,
                                                     sinter_model **out);

/* ABI 1.1. sinter_model_load (opts NULL or weights_path NULL) or sinter_model_load_from_file,
 * with options; allow_new_values = 1 loads a fine-tuned checkpoint without recompiling. */
SINTER_API sinter_status sinter_model_load_v2(uint32_t expected_abi_major,
                                              const sinter_model_load_options *opts,
                                              sinter_model **out);

/* ABI 1.1. 1 when this library was compiled with external weights (sinter_model_load refuses
 * it; pass the weights file), 0 when they are embedded. Needs no device. */
SINTER_API int sinter_weights_external(void);

/* Releases a model (owned). NULL is a no-op. Returns SINTER_BUSY, and frees nothing, while
 * contexts created from it still exist. */
SINTER_API sinter_status sinter_model_destroy(sinter_model *model);

/* Queries on a borrowed model. On a NULL model they return 0 and set the last error. */
SINTER_API uint32_t sinter_model_num_inputs(const sinter_model *model);
SINTER_API uint32_t sinter_model_num_outputs(const sinter_model *model);
SINTER_API uint64_t sinter_model_arena_bytes(const sinter_model *model);
SINTER_API uint32_t sinter_model_num_launches(const sinter_model *model);
/* ABI 1.1: tensors in the weight table (0 for a library compiled without one). */
SINTER_API uint32_t sinter_model_num_weights(const sinter_model *model);

/* ABI 1.1. Fills *out (caller's storage) with launch `index` (0 <= index < num_launches). */
SINTER_API sinter_status sinter_model_launch_info(const sinter_model *model, uint32_t index,
                                                  sinter_launch_info *out);

/* Fills *out (borrowed, caller's storage) with input/output `index`. */
SINTER_API sinter_status sinter_model_input_info(const sinter_model *model, uint32_t index,
                                                 sinter_tensor_desc *out);
SINTER_API sinter_status sinter_model_output_info(const sinter_model *model, uint32_t index,
                                                  sinter_tensor_desc *out);

/* Creates a context on the model's device: allocates the arena (zeroed), the state (zeroed; ABI
 * 1.2) and cuBLASLt workspace, builds every launch's arguments and GEMM descriptors, of every
 * entry, and picks each GEMM's algorithm (timing the heuristic's candidates). `model` is borrowed and must outlive the context; `opts` is
 * borrowed for the call (NULL = defaults: direct mode). *out is owned by the caller. */
SINTER_API sinter_status sinter_context_create(sinter_model *model,
                                               const sinter_context_options *opts,
                                               sinter_context **out);

/* Releases a context (owned). NULL is a no-op. Waits for the context's own work but not for
 * runs the caller queued on its streams: synchronize those first. */
SINTER_API sinter_status sinter_context_destroy(sinter_context *ctx);

/* Enqueues one inference on `cuda_stream` (a cudaStream_t; NULL = the legacy default stream)
 * and returns without waiting. `inputs`/`outputs` are borrowed arrays of num_inputs/num_outputs
 * tensors, in the model's order; their descriptions are read during the call only, their device
 * memory must stay valid until the stream reaches the end of the run. Every tensor must be
 * kDLCUDA device memory on the model's device, with the exact dtype and shape of the model,
 * compact row-major (strides NULL or contiguous) and 16-byte aligned.
 * Graph mode: the first run builds and instantiates the graph; a later run whose I/O addresses
 * differ updates only the affected nodes (kernel nodes in place, GEMMs re-captured), so fixed
 * I/O buffers give the cheapest replays. */
SINTER_API sinter_status sinter_run(sinter_context *ctx, const DLTensor *inputs,
                                    uint32_t num_inputs, const DLTensor *outputs,
                                    uint32_t num_outputs, void *cuda_stream);

/* ABI 1.1. Profiles one inference of entry 0 (what sinter_run runs): validates and binds the tensors exactly as sinter_run, then
 * issues every launch directly (also for a graph-mode context) on `cuda_stream` with a CUDA
 * event between consecutive launches, holds the stream until all are enqueued (so host issue
 * time does not show as GPU time), waits for the stream, and writes the GPU milliseconds of
 * launch i to ms_per_launch[i]. `capacity` must be >= sinter_model_num_launches. Synchronous
 * and slower than sinter_run: for tools (`sinter run --profile`), not for serving. */
SINTER_API sinter_status sinter_context_profile(sinter_context *ctx, const DLTensor *inputs,
                                                uint32_t num_inputs, const DLTensor *outputs,
                                                uint32_t num_outputs, void *cuda_stream,
                                                float *ms_per_launch, uint32_t capacity);

/* ---- ABI 1.2: entry points and state -------------------------------------------------------
 * A library may hold several entry points (e.g. "prefill" and "decode" of one language model)
 * over the same weights. Each has its own inputs, outputs and launches; sinter_run and the
 * single-entry queries above are entry 0. A context also holds the model's state (e.g. KV
 * caches): device memory that entries read and update in place, kept across runs, zeroed at
 * creation and by sinter_context_reset_state. State is not passed as inputs or outputs. */

/* Number of entry points (>= 1). 0 and the last error on a NULL model. */
SINTER_API uint32_t sinter_model_num_entries(const sinter_model *model);

/* Name of entry `entry` ("main" for a single-entry library); borrowed from the model. NULL and
 * the last error when out of range. */
SINTER_API const char *sinter_model_entry_name(const sinter_model *model, uint32_t entry);

/* Index of the entry called `name` (borrowed for the call; exact, case-sensitive match) in *out.
 * INVALID_ARGUMENT (the message lists the entries) when there is none; *out is then unchanged. */
SINTER_API sinter_status sinter_model_find_entry(const sinter_model *model, const char *name,
                                                 uint32_t *out);

/* Per-entry I/O and launch count: for entry 0 the same answers as sinter_model_num_inputs/
 * _outputs/_input_info/_output_info/_num_launches. The counts return 0 and set the last error
 * for a NULL model or an entry out of range; the infos return INVALID_ARGUMENT. */
SINTER_API uint32_t sinter_model_entry_num_inputs(const sinter_model *model, uint32_t entry);
SINTER_API uint32_t sinter_model_entry_num_outputs(const sinter_model *model, uint32_t entry);
SINTER_API sinter_status sinter_model_entry_input_info(const sinter_model *model, uint32_t entry,
                                                       uint32_t index, sinter_tensor_desc *out);
SINTER_API sinter_status sinter_model_entry_output_info(const sinter_model *model, uint32_t entry,
                                                        uint32_t index, sinter_tensor_desc *out);
SINTER_API uint32_t sinter_model_entry_num_launches(const sinter_model *model, uint32_t entry);
/* sinter_model_launch_info for launch `index` of entry `entry`. */
SINTER_API sinter_status sinter_model_entry_launch_info(const sinter_model *model, uint32_t entry,
                                                        uint32_t index, sinter_launch_info *out);

/* Bytes of state a context holds (0 when the model has none). */
SINTER_API uint64_t sinter_model_state_bytes(const sinter_model *model);

/* ABI 1.3. The regions of the state block: one per KV cache (named after the model input it
 * replaces, e.g. "past_key_0", with its shape: [batch, kv heads, cache length, head dim] for an
 * exported Llama) and the compiler's scratch (names starting with '.'). The count returns 0 and
 * sets the last error for a NULL model; the info fills `out` (name borrowed from the model,
 * valid until sinter_model_destroy) or returns INVALID_ARGUMENT for a NULL model or out, or an
 * index out of range. */
SINTER_API uint32_t sinter_model_num_states(const sinter_model *model);
SINTER_API sinter_status sinter_model_state_info(const sinter_model *model, uint32_t index,
                                                 sinter_tensor_desc *out);

/* sinter_run for entry `entry` (sinter_run is entry 0), with that entry's inputs and outputs in
 * its order; the same rules, including SINTER_BUSY. Graph mode keeps one CUDA graph per entry,
 * built at the entry's first run. INVALID_ARGUMENT (the message lists the entries) for an entry
 * out of range. */
SINTER_API sinter_status sinter_run_entry(sinter_context *ctx, uint32_t entry,
                                          const DLTensor *inputs, uint32_t num_inputs,
                                          const DLTensor *outputs, uint32_t num_outputs,
                                          void *cuda_stream);

/* sinter_context_profile for entry `entry` (capacity >= sinter_model_entry_num_launches). */
SINTER_API sinter_status sinter_context_profile_entry(sinter_context *ctx, uint32_t entry,
                                                      const DLTensor *inputs, uint32_t num_inputs,
                                                      const DLTensor *outputs,
                                                      uint32_t num_outputs, void *cuda_stream,
                                                      float *ms_per_launch, uint32_t capacity);

/* Zeroes the context's state (every KV cache) on `cuda_stream`, ordered with the runs queued
 * there; returns without waiting. A no-op for a model without state. SINTER_BUSY while another
 * thread is inside a call on the context, like sinter_run. */
SINTER_API sinter_status sinter_context_reset_state(sinter_context *ctx, void *cuda_stream);


/* ---- ABI 1.4: token sampling inside the compiled program -----------------------------------
 * A library compiled with `sinter compile --sample` picks the next token itself: every entry
 * with a "logits" output [batch, seq, vocab] and an "input_ids" input [batch, seq] gets one
 * more output, "next_token" (int64 [batch, 1]), drawn from the last position's logits by a
 * kernel at the end of the run. So a decode loop can pass one device buffer as the decode
 * entry's input_ids and as every run's next_token, and never wait on the host (a run reads
 * input_ids before it writes next_token).
 * The sampler's parameters and its random-number counter live in the context's state, so CUDA
 * graph replays use the current values. A new context, and sinter_context_reset_state, start
 * with the parameters last set (greedy until set), the counter at 0 and no token seen. */

/* Set struct_size = sizeof(sinter_sampling_params) so later versions can grow the struct. */
typedef struct sinter_sampling_params {
  uint32_t struct_size;
  float temperature;        /* 0: greedy (argmax, first index among equal maxima); > 0: the
                               logits are divided by it and a token is drawn */
  int32_t top_k;            /* 0: off; k > 0: draw among the k largest logits (ties kept) */
  float top_p;              /* 1: off; (0, 1): draw among the smallest set of largest
                               logits whose probability (after top_k) reaches top_p */
  float repetition_penalty; /* 1: off; > 0: a token already in this sequence's input_ids
                               (prompt and fed-back tokens, since the last reset) has its
                               logit divided by it when positive, multiplied when negative */
  uint64_t seed;            /* the draws are a function of (seed, run counter, row, token):
                               the same seed gives the same tokens, in direct and graph mode */
} sinter_sampling_params;

#define SINTER_SAMPLING_PARAMS_INIT {(uint32_t)sizeof(sinter_sampling_params), 0.0f, 0, 1.0f, 1.0f, 0u}

/* 1 when the library was compiled with --sample (its entries have a next_token output), 0 when
 * not, and 0 with the last error for a NULL model. */
SINTER_API int sinter_model_has_sampler(const sinter_model *model);

/* Sets the sampling parameters of `ctx` (borrowed for the call) on `cuda_stream`, ordered with
 * the runs queued there; restarts the run counter at 0 (tokens already seen stay seen).
 * INVALID_ARGUMENT naming the parameter for a temperature < 0 or not finite, top_k < 0, top_p
 * outside (0, 1], repetition_penalty <= 0 or not finite, a struct_size too small, or a library
 * without a sampler; SINTER_BUSY as for sinter_run. */
SINTER_API sinter_status sinter_context_set_sampling(sinter_context *ctx,
                                                     const sinter_sampling_params *params,
                                                     void *cuda_stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SINTER_SINTER_H */
