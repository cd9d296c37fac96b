// "cusparse_csr": cusparseSpMM on A in CSR (see baseline.h and cusparse_spmm_baseline.h).
// CUSPARSE_SPMM_ALG_DEFAULT: the baseline is what a user gets without tuning; no search over
// CSR_ALG1/ALG2/ALG3 and no cusparseSpMM_preprocess (optional for these algorithms).
#include "common/dtype.h"
#include "evaluator/gpu/baseline_impls.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/gpu/cusparse_spmm_baseline.h"
#include "fmt/format.h"

namespace sparseditto::gpu {
namespace {

class CusparseCsrBaseline : public CusparseSpmmBaseline {
 public:
  std::string name() const override { return "cusparse_csr"; }

 protected:
  absl::StatusOr<SpMatDescr> BuildMatrix(const CsrMatrix& a, v1::Dtype dtype, const v1::PatternSpec& /*pattern*/,
                                         std::vector<DeviceBuffer>* storage, std::string* note) override {
    const std::vector<uint8_t> values = EncodeInDtype(a.values, dtype);
    SD_ASSIGN_OR_RETURN(DeviceBuffer offsets,
                        DeviceBuffer::FromHost(a.row_offsets.data(), a.row_offsets.size() * 4, "CSR row offsets"));
    SD_ASSIGN_OR_RETURN(DeviceBuffer columns,
                        DeviceBuffer::FromHost(a.col_indices.data(), a.col_indices.size() * 4, "CSR columns"));
    SD_ASSIGN_OR_RETURN(DeviceBuffer vals, DeviceBuffer::FromHost(values.data(), values.size(), "CSR values"));
    cusparseSpMatDescr_t descr = nullptr;
    SD_CUSPARSE_CHECK(cusparseCreateCsr(&descr, a.rows, a.cols, a.nnz(), offsets.get(), columns.get(), vals.get(),
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                        CudaDataType(dtype)));
    SpMatDescr matrix(descr);
    storage->push_back(std::move(offsets));
    storage->push_back(std::move(columns));
    storage->push_back(std::move(vals));
    *note = fmt::format("CSR {}x{}, {} nonzeros, {}, CUSPARSE_SPMM_ALG_DEFAULT", a.rows, a.cols, a.nnz(),
                        DtypeName(dtype));
    return matrix;
  }

  cusparseSpMMAlg_t algorithm() const override { return CUSPARSE_SPMM_ALG_DEFAULT; }
};

}  // namespace

std::unique_ptr<Baseline> NewCusparseCsrBaseline() { return std::make_unique<CusparseCsrBaseline>(); }

}  // namespace sparseditto::gpu
