// Test code only: builds exported kernels as a user does (kernel_export.h, export_wrapper.h): the
// `.cu` files already written in `dir`, their build.sh, the ABI headers copied beside them, the real
// nvcc (SPARSEDITTO_NVCC), into `dir/library`. Shared by the export tests on the CPU and the GPU.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "coordinator/search/export_wrapper.h"
#include "fmt/format.h"
#include "tests/testing/shell_command.h"

#ifndef SPARSEDITTO_HARNESS
#define SPARSEDITTO_HARNESS  // declarations only: the kernels under test define the ABI's functions
#endif
#include "sparseditto_kernel.h"

namespace sparseditto::testing {

// The build's outcome: `out` holds the tail of build.log when build.sh failed. Whether it succeeded
// is whether `dir/library` exists (the caller asserts it, with `out` in the message).
inline testing_support::ShellOutcome BuildExports(const std::filesystem::path& dir,
                                                  const std::vector<ExportedFile>& files, const std::string& library) {
  std::ofstream(dir / "build.sh") << BuildScript(files);
  for (const char* header : {"sparseditto_kernel.h", "sparseditto_weight_check.h"}) {
    std::filesystem::copy_file(std::string(SPARSEDITTO_SOURCE_DIR "/kernel_abi/") + header, dir / header,
                               std::filesystem::copy_options::overwrite_existing);
  }
  return testing_support::RunShell(fmt::format("cd '{}' && NVCC='{}' sh build.sh -o '{}' >build.log 2>&1 || tail -30 build.log",
                                               dir.string(), SPARSEDITTO_NVCC, library),
                                   dir);
}

// The 4 x 4 identity as an unstructured weight for n = 16: one an exported kernel's weight check passes
// when its task is unstructured and of `dtype`. Problem() points into this object, which must outlive it.
struct IdentityWeight {
  int32_t row_offsets[5] = {0, 1, 2, 3, 4};
  int32_t columns[4] = {0, 1, 2, 3};
  float values[4] = {1, 1, 1, 1};
  int64_t n_values[1] = {16};

  sd_problem Problem(int32_t dtype) const {
    sd_problem problem = {};
    problem.abi_version = SPARSEDITTO_ABI_VERSION;
    problem.dtype = dtype;
    problem.rows = problem.cols = 4;
    problem.nnz = 4;
    problem.pattern.family = SD_PATTERN_UNSTRUCTURED;
    problem.row_offsets = row_offsets;
    problem.col_indices = columns;
    problem.values = values;
    problem.n_values = n_values;
    problem.num_n_values = 1;
    return problem;
  }
};

}  // namespace sparseditto::testing
