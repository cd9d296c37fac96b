/* SparseDitto kernel ABI, version 1: the contract between a candidate kernel and the harness.
 *
 * A candidate is ONE CUDA C++ source file that includes this header and defines the three functions
 * below with C linkage. The harness compiles it with nvcc into a shared library, loads it in a child
 * process and calls, in order: sparseditto_prepare once, sparseditto_run any number of times (for any
 * n in the problem's n_values), sparseditto_release once.
 *
 * The operation (SpMM): C[rows x n] = A[rows x cols] * B[cols x n], A sparse, B and C dense row-major
 * in the problem's dtype, products accumulated in fp32.
 *
 * Declaring tunable parameters: a line of the form
 *     #define NAME VALUE  // sparseditto:tunable values=[V1, V2, ...]
 * declares NAME tunable with current VALUE (which must be one of the listed values). The built-in
 * mutator rewrites VALUE; the LLM mutators see the list. Nothing else about the line may change.
 * The allowed values may also follow the device (values=device:sm_count*[1, 2], range=[32,
 * smem_per_block/1024]) and be tuples or variant names; kernel_abi/tunable_values.h has the syntax.
 * kernel_abi/tunables.h parses and rewrites these lines.
 */
#ifndef SPARSEDITTO_KERNEL_H_
#define SPARSEDITTO_KERNEL_H_

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#define SPARSEDITTO_ABI_VERSION 1

#ifdef __cplusplus
#define SPARSEDITTO_EXTERN_C extern "C"
#else
#define SPARSEDITTO_EXTERN_C
#endif
#define SPARSEDITTO_EXPORT SPARSEDITTO_EXTERN_C __attribute__((visibility("default")))

/* Element types; the same numbers as sparseditto.v1.Dtype (proto/task.proto). */
enum sd_dtype { SD_DTYPE_FP32 = 1, SD_DTYPE_FP16 = 2, SD_DTYPE_BF16 = 3 };

/* Pattern families; the same numbers as sparseditto.v1.PatternFamily. */
enum sd_pattern_family {
  SD_PATTERN_UNSTRUCTURED = 1,
  SD_PATTERN_BLOCK = 2,
  SD_PATTERN_N_M = 3,
  SD_PATTERN_ROW_SPARSE = 4,
  SD_PATTERN_COLUMN_SPARSE = 5,
  SD_PATTERN_BANDED = 6,
  SD_PATTERN_BLOCK_DIAGONAL = 7,
  SD_PATTERN_DENSE = 8,
  SD_PATTERN_FILE = 9
};

/* How run's dense operands lie in memory (sd_problem.layout).
 *  SD_LAYOUT_KN (0, every kernel): B is cols x n row-major (element (k, j) at B[k * n + j]) and C is
 *    rows x n row-major (C[i * n + j]).
 *  SD_LAYOUT_NK (1, PyTorch's Linear: X [n x K] in, Y [n x M] out, both row-major): B is given as
 *    X = B^T, n x cols row-major (element (k, j) of B at B[j * cols + k]), and C is written as Y = C^T,
 *    n x rows row-major (element (i, j) of C at C[j * rows + i]). The product is the same C = A * B.
 * A kernel that supports layouts other than KN says so by defining sparseditto_layouts() (a bit mask,
 * bit L for layout L: SPARSEDITTO_LAYOUT_BIT). The harness hands a layout other than KN only to a
 * kernel whose mask has its bit, so a kernel that never heard of layouts is never given one. */
enum sd_layout { SD_LAYOUT_KN = 0, SD_LAYOUT_NK = 1 };
#define SPARSEDITTO_LAYOUT_BIT(layout) (1u << (layout))

/* What the task declares of the pattern. A kernel may rely on it only as far as the harness checks
 * it: the harness guarantees the matrix obeys the declared family and parameters (fields that do not
 * apply to the family are 0). */
typedef struct sd_pattern {
  int32_t family;         /* enum sd_pattern_family */
  float sparsity;         /* fraction of zeros, as declared */
  int32_t block_rows;     /* BLOCK */
  int32_t block_cols;     /* BLOCK */
  int32_t n;              /* N_M: at most n nonzeros in every m consecutive columns of a row */
  int32_t m;              /* N_M */
  int32_t half_bandwidth; /* BANDED */
  int32_t num_blocks;     /* BLOCK_DIAGONAL */
} sd_pattern;

/* The problem handed to prepare. Every pointer is HOST memory owned by the harness and valid only
 * for the duration of the sparseditto_prepare call: copy what you need. */
typedef struct sd_problem {
  int32_t abi_version;         /* SPARSEDITTO_ABI_VERSION of the harness */
  int32_t dtype;               /* enum sd_dtype of A, B and C */
  int64_t rows;                /* M */
  int64_t cols;                /* K */
  int64_t nnz;
  sd_pattern pattern;
  const int32_t* row_offsets;  /* rows + 1 entries, canonical CSR: starts at 0, ends at nnz */
  const int32_t* col_indices;  /* nnz entries, strictly increasing within each row */
  const float* values;         /* nnz entries; each exactly representable in dtype (convert on host) */
  const int64_t* n_values;     /* the n values run() will be called with */
  int32_t num_n_values;
  int32_t device;              /* CUDA device ordinal; it is the current device during every call */
  int32_t layout;              /* enum sd_layout of run's B and C; only a layout the kernel's
                                  sparseditto_layouts() names (KN for a kernel without it) */
} sd_problem;

/* Builds the candidate's device-side representation of A. Untimed (reported as format-conversion
 * cost). On success returns 0 and sets *state to an opaque pointer the harness passes back to run and
 * release. On failure returns nonzero and writes a NUL-terminated reason of at most error_capacity
 * bytes into error; *state is then ignored and release is not called. */
SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* problem, void** state, char* error,
                                           size_t error_capacity);

/* Computes C = A * B for n columns. B (cols x n) and C (rows x n) are DEVICE pointers owned by the
 * harness, laid out as problem->layout says (both row-major for SD_LAYOUT_KN), in the problem's
 * dtype; n is one of problem->n_values. All device work must be enqueued on `stream` (the harness
 * times that stream; work elsewhere is caught and fails). run must not write B or A's inputs, must
 * write every element of C, and must not keep B or C between calls.
 * Returns 0 on success, nonzero if it could not launch (e.g. an n it does not support). */
SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* B, void* C, int64_t n, cudaStream_t stream);

/* Frees everything prepare allocated. Called once, after the last run. */
SPARSEDITTO_EXPORT void sparseditto_release(void* state);

/* Optional. The layouts (bit mask of SPARSEDITTO_LAYOUT_BIT(sd_layout)) run supports; a kernel that
 * does not define it supports SD_LAYOUT_KN only. Must be a constant: the harness reads it once. */
SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void);

/* The ABI version the candidate was compiled against; defined here so every candidate has it.
 * The harness defines SPARSEDITTO_HARNESS before including this header to only see declarations. */
SPARSEDITTO_EXPORT int sparseditto_abi_version(void);
#ifndef SPARSEDITTO_HARNESS
SPARSEDITTO_EXPORT int sparseditto_abi_version(void) { return SPARSEDITTO_ABI_VERSION; }
#endif

/* One dtype a build. The evaluator compiles a candidate with -DSPARSEDITTO_TASK_DTYPE=<the task's sd_dtype
 * number>, the only dtype it ever prepares the candidate for; without the define (an export, a test build) every
 * dtype is built. SPARSEDITTO_BUILDS_DTYPE(d) is a constant expression, true when dtype d is built. A kernel may
 * put each dtype's code under `if constexpr (SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_...))`, so the templates of the
 * dtypes left out are never instantiated (a shorter compile; the task's dtype gets the same code), and its
 * prepare must then refuse a dtype the build left out. */
#ifdef SPARSEDITTO_TASK_DTYPE
#define SPARSEDITTO_BUILDS_DTYPE(d) ((d) == SPARSEDITTO_TASK_DTYPE)
#else
#define SPARSEDITTO_BUILDS_DTYPE(d) 1
#endif

/* One layout a build, the same way: the evaluator adds -DSPARSEDITTO_TASK_LAYOUT=<the task's sd_layout>, and
 * SPARSEDITTO_BUILDS_LAYOUT(l) is true for that layout only (for every layout without the define). A kernel
 * that guards its layouts keeps sparseditto_layouts() as its source's capability (a constant) and refuses
 * in prepare a layout the build left out. */
#ifdef SPARSEDITTO_TASK_LAYOUT
#define SPARSEDITTO_BUILDS_LAYOUT(l) ((l) == SPARSEDITTO_TASK_LAYOUT)
#else
#define SPARSEDITTO_BUILDS_LAYOUT(l) 1
#endif

#endif /* SPARSEDITTO_KERNEL_H_ */
