/* The contract between the code `sinter compile` generates and the runtime linked into the
 * same .so. Not part of the public ABI: a .so always carries the runtime it was built with.
 * Valid C99 and C++. */
#ifndef SINTER_PROGRAM_H
#define SINTER_PROGRAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SINTER_PROGRAM_VERSION 1u
#define SINTER_MAX_RANK 8
/* Every offset the compiler places — weights in the blob, arena buffers, state regions — is a
   multiple of this (the kernels' vector loads need 16; 256 is what cudaMalloc gives), and the
   blob itself starts on it. */
#define SINTER_BUFFER_ALIGNMENT 256

/* Element types, numbered as DLPack's (code << 8 | bits). */
typedef enum sinter_dtype {
  SINTER_DTYPE_F32 = (2 << 8) | 32,
  SINTER_DTYPE_F16 = (2 << 8) | 16,
  SINTER_DTYPE_BF16 = (4 << 8) | 16,
  SINTER_DTYPE_I64 = (0 << 8) | 64,
  SINTER_DTYPE_I32 = (0 << 8) | 32,
  SINTER_DTYPE_BOOL = (6 << 8) | 8,
  /* kDLFloat8_e4m3fn (DLPack 1.1): fp8 weights (--weight-dtype fp8); never an input or output */
  SINTER_DTYPE_F8_E4M3 = (10 << 8) | 8,
  /* kDLUInt, 8 bits: uint8 tensors, and int4 weights packed two to a byte (--weight-dtype
     int4) */
  SINTER_DTYPE_U8 = (1 << 8) | 8,
  SINTER_DTYPE_F64 = (2 << 8) | 64,
  SINTER_DTYPE_I16 = (0 << 8) | 16,
  SINTER_DTYPE_I8 = (0 << 8) | 8,
  SINTER_DTYPE_U16 = (1 << 8) | 16,
  SINTER_DTYPE_U32 = (1 << 8) | 32,
  SINTER_DTYPE_U64 = (1 << 8) | 64
} sinter_dtype;

/* Where a buffer lives. Arena and weight offsets are bytes; I/O buffers are the tensors
 * passed to sinter_run, `index` naming the slot. */
typedef enum sinter_buffer_space {
  SINTER_BUFFER_NONE = 0,
  SINTER_BUFFER_ARENA = 1,
  SINTER_BUFFER_WEIGHTS = 2,
  SINTER_BUFFER_INPUT = 3,
  SINTER_BUFFER_OUTPUT = 4,
  SINTER_BUFFER_STATE = 5 /* bytes into the context's state block (sinter_program.state_bytes):
                             persists across runs and entries, zeroed at context creation and
                             by sinter_context_reset_state */
} sinter_buffer_space;

typedef struct sinter_buffer_ref {
  uint32_t space; /* sinter_buffer_space */
  uint32_t index; /* I/O slot for INPUT/OUTPUT */
  uint64_t offset; /* bytes into the arena, the weight blob, or the I/O tensor */
} sinter_buffer_ref;

typedef struct sinter_tensor_info {
  const char *name;
  int32_t dtype; /* sinter_dtype */
  int32_t rank;
  int64_t shape[SINTER_MAX_RANK];
} sinter_tensor_info;

typedef enum sinter_gemm_precision {
  SINTER_PRECISION_STRICT = 0, /* fp32 FMA, no tensor-core rounding */
  SINTER_PRECISION_TF32 = 1,   /* fp32 storage, TF32 tensor cores */
  SINTER_PRECISION_NATIVE = 2  /* bf16/f16 operands on tensor cores, fp32 accumulation */
} sinter_gemm_precision;

/* Row-major c[m, n] = a[m, k] @ b[k, n] (+ bias[n]) (+ residual[m, n]) through cuBLASLt,
 * per batch. */
typedef struct sinter_gemm_desc {
  int64_t m, n, k;
  int32_t dtype;     /* of a, b, bias and c */
  int32_t precision; /* sinter_gemm_precision */
  sinter_buffer_ref a, b, bias, c; /* bias.space == SINTER_BUFFER_NONE when absent */
  sinter_buffer_ref residual;      /* SINTER_BUFFER_NONE when absent; may alias c */
  /* Strided batches: `batch` products over consecutive [m, k], [k, n], [m, n] matrices (0 or
   * 1: one product). An operand marked broadcast is one matrix read by every batch. A batched
   * product has no bias or residual. */
  int64_t batch;
  int32_t broadcast_a, broadcast_b;
} sinter_gemm_desc;

/* A __global__ function taking one pointer per buffer, in order. */
typedef struct sinter_kernel_desc {
  const void *function; /* host stub address of the __global__ function */
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_bytes;
  uint32_t num_buffers;
  const sinter_buffer_ref *buffers;
} sinter_kernel_desc;

typedef enum sinter_launch_kind { SINTER_LAUNCH_GEMM = 1, SINTER_LAUNCH_KERNEL = 2 } sinter_launch_kind;

typedef struct sinter_launch_desc {
  int32_t kind;        /* sinter_launch_kind */
  const char *label;   /* "gemm" or the kernel template name */
  const char *sources; /* comma-separated ONNX node names the launch came from */
  sinter_gemm_desc gemm;     /* valid for SINTER_LAUNCH_GEMM */
  sinter_kernel_desc kernel; /* valid for SINTER_LAUNCH_KERNEL */
} sinter_launch_desc;

/* One tensor of the weight blob, as compiled (after compile-time transforms such as the LoRA
 * merge). `offset`/`bytes` place it in the blob the launches address (SINTER_BUFFER_WEIGHTS);
 * in an external weights file (safetensors) it is found by `name`, wherever the file puts it.
 * bytes == element size * product(shape); tensors do not overlap; gaps in the blob are zero. */
typedef struct sinter_weight_info {
  const char *name;
  int32_t dtype; /* sinter_dtype */
  int32_t rank;
  int64_t shape[SINTER_MAX_RANK];
  uint64_t offset;   /* bytes into the weight blob */
  uint64_t bytes;
  uint64_t checksum; /* of the tensor's bytes as compiled (runtime/src/checksum.h) */
} sinter_weight_info;

/* A named region of the state block: a KV cache, or a kernel's private scratch that must
 * start zeroed (its name then starts with "."). Checked at load: bytes == element size *
 * product(shape), [offset, offset + bytes) inside state_bytes, regions do not overlap, names
 * are unique. */
typedef struct sinter_state_info {
  const char *name;
  int32_t dtype; /* sinter_dtype */
  int32_t rank;
  int64_t shape[SINTER_MAX_RANK];
  uint64_t offset; /* bytes into the state block, 256-byte aligned */
  uint64_t bytes;
} sinter_state_info;

/* One entry point (ABI 1.2): its own I/O and launch list over the shared weights, arena and
 * state. Entry 0 is also described by the legacy single-entry fields of sinter_program, and must
 * repeat them exactly (same counts and pointers: the load refuses otherwise), so that a runtime
 * or tool that only knows those fields sees entry 0. Names are non-empty and unique; INPUT and
 * OUTPUT buffer refs in an entry's launches index that entry's inputs and outputs. */
typedef struct sinter_entry {
  const char *name;
  uint32_t num_inputs;
  uint32_t num_outputs;
  const sinter_tensor_info *inputs;
  const sinter_tensor_info *outputs;
  uint32_t num_launches;
  const sinter_launch_desc *launches;
} sinter_entry;

typedef struct sinter_program {
  uint32_t version; /* SINTER_PROGRAM_VERSION */
  const char *target;
  const char *build_info;
  uint32_t num_inputs;
  uint32_t num_outputs;
  const sinter_tensor_info *inputs;
  const sinter_tensor_info *outputs;
  uint64_t arena_bytes;
  const unsigned char *weights; /* host copy embedded in the .so, 256-byte aligned; NULL when
                                   weights_external */
  uint64_t weight_bytes;        /* size of the blob on the device */
  uint64_t weights_checksum;    /* of the blob's bytes, gaps included (checksum.h) */
  uint32_t num_launches;
  const sinter_launch_desc *launches;

  /* Appended fields (still SINTER_PROGRAM_VERSION 1): code emitted before them leaves them
   * zero-initialized, which means "embedded weights, no weight table". */
  uint32_t weights_external;  /* 1: `weights` is NULL; the blob is assembled at load from a
                                 safetensors file (sinter_model_load_from_file / _v2) */
  uint32_t num_weight_tensors; /* 0 = no table: only the embedded blob can be loaded */
  const sinter_weight_info *weight_tensors;

  /* Appended fields (still SINTER_PROGRAM_VERSION 1), zero in code emitted before them, which
   * means "one entry described by the fields above, no state". arena_bytes covers every entry
   * (the entries never run concurrently on one context). When num_entries > 0, entries[0]
   * repeats the legacy fields (same pointers). */
  uint64_t state_bytes;
  uint32_t num_states;
  const sinter_state_info *states;
  uint32_t num_entries;
  const sinter_entry *entries;
} sinter_program;

/* Defined by the generated code of each .so. */
const sinter_program *sinter_generated_program(void);

#ifdef __cplusplus
}
#endif

#endif /* SINTER_PROGRAM_H */
