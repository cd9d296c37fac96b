// cuSPARSELt, loaded at run time with dlopen (its header and library are not part of the CUDA
// toolkit and are absent where the project is built). The declarations below are our own, of the
// handful of entry points the 2:4 baseline uses, following NVIDIA's documented C ABI of cuSPARSELt
// 0.5 and later (the numbering of cusparseComputeType changed in 0.5: 0.4 is refused).
//
// Search order (the first that dlopen()s and exports every needed symbol wins):
//  1. $SPARSEDITTO_CUSPARSELT: a colon-separated list of library files or folders holding
//     libcusparseLt.so.0;
//  2. "libcusparseLt.so.0" through the dynamic loader (LD_LIBRARY_PATH, the ldconfig cache);
//  3. Python wheels (nvidia-cusparselt-cu12/cu13): nvidia/cusparselt/lib and nvidia/cu13/lib under
//     the site-packages / dist-packages folders of /opt/*/.venv, /opt/*, /usr/local, /usr and
//     $HOME/.local (globbed for every python3.*); then /usr/local/cuda/lib64.
// The library stays loaded for the life of the process (never dlclose()d).
// Errors: FailedPrecondition("cuSPARSELt not found: searched ...") listing every place tried and why.
// Thread-safety: LoadCusparseLt is thread-safe (loads once); the API itself is cuSPARSELt's.
#pragma once

#include <cuda_runtime_api.h>
#include <cusparse.h>  // cusparseStatus_t, cusparseOperation_t, cusparseOrder_t (shared with cuSPARSELt)
#include <library_types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sparseditto::gpu::lt {

// cuSPARSELt's opaque objects are caller-allocated fixed-size structs (1024 bytes or less since 0.5;
// 11024 in 0.4). We reserve 16 KiB, aligned, so any version fits.
struct alignas(64) Opaque {
  uint8_t data[16384];
};

enum Sparsity : int { kSparsity50Percent = 0 };       // cusparseLtSparsity_t
enum ComputeType : int { kCompute32F = 2 };           // cusparseComputeType (>= 0.5)
enum MatmulAlg : int { kMatmulAlgDefault = 0 };       // cusparseLtMatmulAlg_t

struct Api {
  std::string path;
  int major = 0, minor = 0, patch = 0;

  cusparseStatus_t (*Init)(Opaque* handle);
  cusparseStatus_t (*Destroy)(const Opaque* handle);
  cusparseStatus_t (*GetProperty)(libraryPropertyType type, int* value);
  cusparseStatus_t (*DenseDescriptorInit)(const Opaque* handle, Opaque* mat, int64_t rows, int64_t cols,
                                          int64_t ld, uint32_t alignment, cudaDataType type, cusparseOrder_t order);
  cusparseStatus_t (*StructuredDescriptorInit)(const Opaque* handle, Opaque* mat, int64_t rows, int64_t cols,
                                               int64_t ld, uint32_t alignment, cudaDataType type,
                                               cusparseOrder_t order, Sparsity sparsity);
  cusparseStatus_t (*MatDescriptorDestroy)(const Opaque* mat);
  cusparseStatus_t (*MatmulDescriptorInit)(const Opaque* handle, Opaque* matmul, cusparseOperation_t op_a,
                                           cusparseOperation_t op_b, const Opaque* a, const Opaque* b,
                                           const Opaque* c, const Opaque* d, ComputeType compute);
  cusparseStatus_t (*MatmulAlgSelectionInit)(const Opaque* handle, Opaque* alg, const Opaque* matmul,
                                             MatmulAlg which);
  cusparseStatus_t (*MatmulPlanInit)(const Opaque* handle, Opaque* plan, const Opaque* matmul, const Opaque* alg);
  cusparseStatus_t (*MatmulPlanDestroy)(const Opaque* plan);
  cusparseStatus_t (*MatmulGetWorkspace)(const Opaque* handle, const Opaque* plan, size_t* bytes);
  cusparseStatus_t (*Matmul)(const Opaque* handle, const Opaque* plan, const void* alpha, const void* a,
                             const void* b, const void* beta, const void* c, void* d, void* workspace,
                             cudaStream_t* streams, int32_t num_streams);
  cusparseStatus_t (*SpMMAPruneCheck2)(const Opaque* handle, const Opaque* sparse_mat, int is_sparse_a,
                                       cusparseOperation_t op, const void* dense, int* d_valid, cudaStream_t stream);
  cusparseStatus_t (*SpMMACompressedSize2)(const Opaque* handle, const Opaque* sparse_mat, size_t* compressed_bytes,
                                           size_t* buffer_bytes);
  cusparseStatus_t (*SpMMACompress2)(const Opaque* handle, const Opaque* sparse_mat, int is_sparse_a,
                                     cusparseOperation_t op, const void* dense, void* compressed, void* buffer,
                                     cudaStream_t stream);
  // Optional (0.7 and later); null when absent.
  cusparseStatus_t (*MatmulAlgSelectionDestroy)(const Opaque* alg) = nullptr;
};

// The process's cuSPARSELt, loaded on first call.
absl::StatusOr<const Api*> LoadCusparseLt();

// The candidate library paths in search order (env entries, the bare soname, glob matches).
std::vector<std::string> CusparseLtCandidatePaths();

}  // namespace sparseditto::gpu::lt
