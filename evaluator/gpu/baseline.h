// Baselines (DESIGN.md §3.5): library SpMM implementations, shaped like a candidate, so the harness
// times them exactly as it times candidates, and fitness divides by the best of them.
//
// Life cycle: Prepare once (untimed: uploads A in the library's format, allocates every workspace
// and descriptor for each n in n_values), then Run any number of times for any of those n.
// Run only enqueues work on `stream`: no allocation, no synchronization, no other stream.
// B (cols x n) and C (rows x n) are device pointers in the task dtype, laid out as Prepare's layout
// says (the task's: KN row-major; NK B given as X = B^T n x cols and C written as Y = C^T n x rows,
// both row-major, i.e. B and C column-major); every baseline accumulates in fp32 and writes C in the
// task dtype. Each baseline below does both layouts in the library's own way (no copies): cuBLAS with
// the operands' transposes, cuSPARSE and cuSPARSELt with CUSPARSE_ORDER_COL dense descriptors.
//
// The baselines (name(): what it runs):
//  - "cublas_dense": cublasGemmEx on densified A (in the task dtype), CUBLAS_COMPUTE_32F, default
//    math mode: fp16/bf16 use tensor cores; fp32 stays true fp32 (no TF32: the honest fp32 dense
//    baseline). Workspace set with cublasSetWorkspace (cuBLAS's recommended size for the device's
//    architecture), so the timed region never allocates.
//  - "cusparse_csr": cusparseSpMM on CSR, CUSPARSE_SPMM_ALG_DEFAULT (no per-matrix algorithm search:
//    it is the baseline users get), compute type fp32, B and C CUSPARSE_ORDER_ROW. Accuracy, measured
//    on an H200 (cuSPARSE 12.6): fp32 is true fp32; with fp16/bf16 C, ALG_DEFAULT (and CSR_ALG1/ALG2)
//    round partial sums to the output type (errors up to ~1e-3 of sum |a*b| in bf16, several output
//    ulps), while CSR_ALG3, Blocked-ELL and BSR round once. Timing is what a baseline is for; the
//    baseline is kept as users get it.
//  - "cusparse_bsr": cusparseSpMM on BSR (CUSPARSE_SPMM_BSR_ALG1) with square blocks; block patterns.
//  - "cusparse_blocked_ell": cusparseSpMM on Blocked-ELL (CUSPARSE_SPMM_BLOCKED_ELL_ALG1); block
//    patterns, fp16/bf16 only: for fp32 cuSPARSE computes on TF32 tensor cores (measured), which is no
//    fp32 baseline, so it is absent.
//  - "cusparselt_2to4": cuSPARSELt structured-sparse GEMM; N:M patterns that are 2:4 (or sparser
//    and aligned: 1:4, 1:2) in fp16/bf16; the library is loaded at run time (cusparselt_loader.h).
//
// Errors: a baseline that does not apply (format, dtype or shape the library does not take, library
// missing, matrix too large for the device) returns FailedPrecondition from Prepare with the reason,
// which the report prints as "absent: <reason>". Any other error is a harness failure. Run returns
// InvalidArgument for an n that was not in Prepare's n_values (where the baseline needs it), and
// FailedPrecondition for an n the library refuses although others were accepted (cusparselt_2to4:
// cuSPARSELt 0.8 refuses n = 1, for instance): the report prints that n's baseline as absent.
// Thread-safety: none. One CUDA device: the one current during Prepare, which must stay current.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto::gpu {

class Baseline {
 public:
  virtual ~Baseline() = default;

  // "cublas_dense", "cusparse_csr", "cusparse_bsr", "cusparse_blocked_ell", "cusparselt_2to4".
  virtual std::string name() const = 0;

  // Untimed. `a` must satisfy ValidateCsr with values exactly representable in `dtype`. InvalidArgument
  // for a layout the enum does not name.
  virtual absl::Status Prepare(const CsrMatrix& a, v1::Dtype dtype, const v1::PatternSpec& pattern,
                               const std::vector<int64_t>& n_values, v1::Layout layout) = 0;

  // Timed: C = A * B for one of the prepared n. Only enqueues on `stream`.
  virtual absl::Status Run(const void* b, void* c, int64_t n, cudaStream_t stream) = 0;

  // After a successful Prepare: what was chosen (format parameters, library version, path), for the
  // report. Empty when there is nothing to add.
  virtual std::string note() const { return ""; }
};

// The baselines that apply to `pattern` and `dtype`, in the order above: cublas_dense and
// cusparse_csr always; cusparse_bsr and cusparse_blocked_ell for PATTERN_FAMILY_BLOCK;
// cusparselt_2to4 for N:M patterns that are 2:4-compatible (m == 4 and n <= 2, or m == 2 and n == 1)
// when dtype is fp16 or bf16. Each may still turn out absent at Prepare (FailedPrecondition).
// Creating them touches no GPU.
std::vector<std::unique_ptr<Baseline>> MakeBaselines(const v1::PatternSpec& pattern, v1::Dtype dtype);

// The names MakeBaselines would return, without creating anything.
std::vector<std::string> BaselineNames(const v1::PatternSpec& pattern, v1::Dtype dtype);

}  // namespace sparseditto::gpu
