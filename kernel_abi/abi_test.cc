// The C ABI's numbers must be the data model's numbers: a kernel sees the task's enums unchanged.
#define SPARSEDITTO_HARNESS
#include "kernel_abi/sparseditto_kernel.h"

#include "gtest/gtest.h"
#include "task.pb.h"

namespace sparseditto {
namespace {

static_assert(int{SD_DTYPE_FP32} == int{v1::DTYPE_FP32} && int{SD_DTYPE_FP16} == int{v1::DTYPE_FP16} &&
              int{SD_DTYPE_BF16} == int{v1::DTYPE_BF16});
static_assert(int{SD_PATTERN_UNSTRUCTURED} == int{v1::PATTERN_FAMILY_UNSTRUCTURED} &&
              int{SD_PATTERN_BLOCK} == int{v1::PATTERN_FAMILY_BLOCK} && int{SD_PATTERN_N_M} == int{v1::PATTERN_FAMILY_N_M} &&
              int{SD_PATTERN_ROW_SPARSE} == int{v1::PATTERN_FAMILY_ROW_SPARSE} &&
              int{SD_PATTERN_COLUMN_SPARSE} == int{v1::PATTERN_FAMILY_COLUMN_SPARSE} &&
              int{SD_PATTERN_BANDED} == int{v1::PATTERN_FAMILY_BANDED} &&
              int{SD_PATTERN_BLOCK_DIAGONAL} == int{v1::PATTERN_FAMILY_BLOCK_DIAGONAL} &&
              int{SD_PATTERN_DENSE} == int{v1::PATTERN_FAMILY_DENSE} && int{SD_PATTERN_FILE} == int{v1::PATTERN_FAMILY_FILE});

TEST(KernelAbiTest, EveryPatternFamilyOfTheModelHasAnAbiNumber) {
  // A family added to the proto without an ABI number would reach kernels as an unknown value.
  EXPECT_EQ(int{v1::PatternFamily_MAX}, int{SD_PATTERN_FILE});
  EXPECT_EQ(int{v1::Dtype_MAX}, int{SD_DTYPE_BF16});
}

}  // namespace
}  // namespace sparseditto
