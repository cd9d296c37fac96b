// The 2:4 seed built for one dtype, as the evaluator builds it for an fp16 task
// (-DSPARSEDITTO_TASK_DTYPE=2, Evaluator::CompileOptionsFor): its prepare refuses the dtype the build left
// out (bf16) and one it never supports (fp32), with the reason, before any CUDA call. CPU only. That the
// build holds no bf16 kernel is seeds_compile_test's (a real nvcc build for sm_80 and sm_90).
#define SPARSEDITTO_TASK_DTYPE 2
#include "kernels/seeds/nm24_mma_sp.cu"

#include <string>

#include "gtest/gtest.h"

namespace {

static_assert(SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP16) && !SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_BF16) &&
              !SPARSEDITTO_BUILDS_DTYPE(SD_DTYPE_FP32));

TEST(Nm24DtypeGuard, PrepareRefusesADtypeTheBuildLeftOut) {
  struct Case {
    int32_t dtype;
    const char* error;
  };
  const Case cases[] = {
      {SD_DTYPE_BF16, "nm24_mma_sp: dtype 3 unsupported (fp16, bf16 only) or not in this build"},
      {SD_DTYPE_FP32, "nm24_mma_sp: dtype 1 unsupported (fp16, bf16 only) or not in this build"},
  };
  for (const Case& c : cases) {
    sd_problem p{};
    p.dtype = c.dtype;
    void* state = nullptr;
    char error[256] = {};
    EXPECT_EQ(sparseditto_prepare(&p, &state, error, sizeof error), 1) << c.dtype;
    EXPECT_EQ(state, nullptr);
    EXPECT_STREQ(error, c.error);
  }
}

}  // namespace
