// "cusparse_bsr" and "cusparse_blocked_ell": cusparseSpMM on A in a block format with square blocks
// (see baseline.h, cusparse_spmm_baseline.h and block_formats.h). Only for BLOCK patterns whose
// block size (or the gcd of a rectangular one) is at least 2 and divides both dimensions; otherwise
// absent. cuSPARSE 12.6 has BSR SpMM in the generic API (CUSPARSE_SPMM_BSR_ALG1; the legacy
// cusparse<t>bsrmm is deprecated and fp32/fp64 only, so it is not used).
#include "common/dtype.h"
#include "evaluator/gpu/baseline_impls.h"
#include "evaluator/gpu/block_formats.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/gpu/cusparse_spmm_baseline.h"
#include "fmt/format.h"

namespace sparseditto::gpu {
namespace {

// FailedPrecondition when `bytes` more would not fit in the device's free memory.
absl::Status CheckFits(size_t bytes, const char* what) {
  size_t free_bytes = 0, total_bytes = 0;
  SD_RETURN_IF_ERROR(DeviceMemoryInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes) {
    return absl::FailedPreconditionError(
        fmt::format("{} needs {} bytes; the device has {} of {} free", what, bytes, free_bytes, total_bytes));
  }
  return absl::OkStatus();
}

class CusparseBsrBaseline : public CusparseSpmmBaseline {
 public:
  std::string name() const override { return "cusparse_bsr"; }

 protected:
  absl::StatusOr<SpMatDescr> BuildMatrix(const CsrMatrix& a, v1::Dtype dtype, const v1::PatternSpec& pattern,
                                         std::vector<DeviceBuffer>* storage, std::string* note) override {
    SD_ASSIGN_OR_RETURN(const int64_t block, SquareBlockSize(a, pattern, "BSR"));
    BlockStructure blocks = FindBlocks(a, block);
    const size_t value_bytes = static_cast<size_t>(blocks.num_blocks()) * block * block * DtypeBytes(dtype);
    SD_RETURN_IF_ERROR(CheckFits(value_bytes, "BSR values"));
    const std::vector<uint8_t> values = EncodeInDtype(BsrValues(a, blocks), dtype);
    SD_ASSIGN_OR_RETURN(DeviceBuffer offsets, DeviceBuffer::FromHost(blocks.row_offsets.data(),
                                                                      blocks.row_offsets.size() * 4, "BSR row offsets"));
    SD_ASSIGN_OR_RETURN(DeviceBuffer columns, DeviceBuffer::FromHost(blocks.col_indices.data(),
                                                                      blocks.col_indices.size() * 4, "BSR columns"));
    SD_ASSIGN_OR_RETURN(DeviceBuffer vals, DeviceBuffer::FromHost(values.data(), values.size(), "BSR values"));
    cusparseSpMatDescr_t descr = nullptr;
    SD_CUSPARSE_CHECK(cusparseCreateBsr(&descr, blocks.block_rows, blocks.block_cols, blocks.num_blocks(), block,
                                        block, offsets.get(), columns.get(), vals.get(), CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CudaDataType(dtype),
                                        CUSPARSE_ORDER_ROW));
    SpMatDescr matrix(descr);
    storage->push_back(std::move(offsets));
    storage->push_back(std::move(columns));
    storage->push_back(std::move(vals));
    *note = fmt::format("BSR {}x{} blocks, {} nonzero blocks ({} stored values for {} nonzeros), {}, "
                        "CUSPARSE_SPMM_BSR_ALG1", block, block, blocks.num_blocks(),
                        blocks.num_blocks() * block * block, a.nnz(), DtypeName(dtype));
    return matrix;
  }

  cusparseSpMMAlg_t algorithm() const override { return CUSPARSE_SPMM_BSR_ALG1; }
};

class CusparseBlockedEllBaseline : public CusparseSpmmBaseline {
 public:
  std::string name() const override { return "cusparse_blocked_ell"; }

 protected:
  absl::StatusOr<SpMatDescr> BuildMatrix(const CsrMatrix& a, v1::Dtype dtype, const v1::PatternSpec& pattern,
                                         std::vector<DeviceBuffer>* storage, std::string* note) override {
    if (dtype == v1::DTYPE_FP32) {
      return absl::FailedPreconditionError(
          "cuSPARSE's Blocked-ELL SpMM runs fp32 on TF32 tensor cores (measured on an H200 with cuSPARSE 12.6: "
          "error about 1e-4 of sum |a*b|, unchanged by NVIDIA_TF32_OVERRIDE=0), so it is no fp32 baseline");
    }
    SD_ASSIGN_OR_RETURN(const int64_t block, SquareBlockSize(a, pattern, "Blocked-ELL"));
    BlockStructure blocks = FindBlocks(a, block);
    const int64_t width = blocks.max_blocks_per_row();
    if (width == 0) return absl::FailedPreconditionError("Blocked-ELL: the matrix has no nonzero block");
    SD_RETURN_IF_ERROR(CheckFits(static_cast<size_t>(a.rows) * width * block * DtypeBytes(dtype),
                                 "Blocked-ELL values"));
    BlockedEll ell = ToBlockedEll(a, blocks);
    const std::vector<uint8_t> values = EncodeInDtype(ell.values, dtype);
    SD_ASSIGN_OR_RETURN(DeviceBuffer columns, DeviceBuffer::FromHost(ell.col_indices.data(),
                                                                      ell.col_indices.size() * 4, "ELL columns"));
    SD_ASSIGN_OR_RETURN(DeviceBuffer vals, DeviceBuffer::FromHost(values.data(), values.size(), "ELL values"));
    cusparseSpMatDescr_t descr = nullptr;
    SD_CUSPARSE_CHECK(cusparseCreateBlockedEll(&descr, a.rows, a.cols, block, ell.ell_cols, columns.get(),
                                               vals.get(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                               CudaDataType(dtype)));
    SpMatDescr matrix(descr);
    storage->push_back(std::move(columns));
    storage->push_back(std::move(vals));
    *note = fmt::format("Blocked-ELL {}x{} blocks, {} slots per block row ({} nonzero blocks of {}), {}, "
                        "CUSPARSE_SPMM_BLOCKED_ELL_ALG1", block, block, width, blocks.num_blocks(),
                        blocks.block_rows * width, DtypeName(dtype));
    return matrix;
  }

  cusparseSpMMAlg_t algorithm() const override { return CUSPARSE_SPMM_BLOCKED_ELL_ALG1; }
};

}  // namespace

std::unique_ptr<Baseline> NewCusparseBsrBaseline() { return std::make_unique<CusparseBsrBaseline>(); }
std::unique_ptr<Baseline> NewCusparseBlockedEllBaseline() { return std::make_unique<CusparseBlockedEllBaseline>(); }

}  // namespace sparseditto::gpu
