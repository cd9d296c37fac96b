// Keys for caching baseline timings across candidates and runs: a baseline's time depends only on
// (matrix structure and values, dtype, n, GPU, baseline), so the runner times each once.
//
// The hash is FNV-1a 64 over a byte stream we define: a format tag (bumped when the way baselines are
// timed changes, so that older timings are not mixed with newer ones), then every field as
// little-endian fixed-width integers, and every string or array preceded by its length (so fields
// cannot run into each other). It is stable across runs, processes and machines of the same
// endianness; it is not cryptographic (a cache key, not a defence against crafted collisions).
// Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string>

#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto::gpu {

// FNV-1a 64 of the matrix: rows, cols, row_offsets, col_indices and the bit patterns of values.
// Linear in nnz (about a second per 10^9 bytes); compute it once per matrix.
uint64_t MatrixFingerprint(const CsrMatrix& a);

// "<16 hex digits>": the hash of (MatrixFingerprint(a), dtype, n, gpu_name, baseline_name, and the
// layout when it is not KN: keys of KN timings are those written before layouts existed).
std::string BaselineCacheKey(const CsrMatrix& a, v1::Dtype dtype, int64_t n, const std::string& gpu_name,
                             const std::string& baseline_name, v1::Layout layout = v1::LAYOUT_KN);

// The same from a fingerprint already computed.
std::string BaselineCacheKey(uint64_t matrix_fingerprint, v1::Dtype dtype, int64_t n, const std::string& gpu_name,
                             const std::string& baseline_name, v1::Layout layout = v1::LAYOUT_KN);

}  // namespace sparseditto::gpu
