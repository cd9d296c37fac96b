// The parts of `sparseditto export` that turn a task's kernel (a candidate or a composed dispatch plan,
// under the ABI of kernel_abi/sparseditto_kernel.h) into files a user builds and links
// (coordinator/search/kernel_export.h writes them):
//   - <task>.cu: the kernel's source wrapped so that many exports link into one library. Its leading
//     #include lines are hoisted; its body goes into `namespace sd_export_<symbol>` (every C++ name,
//     templates and __global__ kernels included, is then its own), its ABI functions (and a plan's
//     C names of its variants) renamed as words and hidden; then the five exported entries <symbol>_prepare (which first runs sd_check_weight of
//     kernel_abi/sparseditto_weight_check.h against the pattern the kernel was searched for, then
//     refuses a layout the kernel's mask lacks), _run, _release, _abi_version and _layouts (the
//     kernel's sparseditto_layouts() mask, KN only for a kernel without one). SPARSEDITTO_HARNESS is defined first, so the header's own
//     sparseditto_abi_version is not defined in every export.
//   - <task>.h: those five declarations;
//   - build.sh: nvcc with the evaluator's own flags (NvccFlags of evaluator/compile/nvcc_compiler.h, for
//     the task's archs as the evaluator picks them), one object per task, linked into one shared
//     library with kCandidateLibraries.
// Pure functions over strings; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto {

// The C identifier prefix of a task's exported functions: the task name with every character outside
// [A-Za-z0-9_] made '_', and "t_" in front of a leading digit ("nm24-4096.v2" -> "nm24_4096_v2").
// Two task names can give one symbol; CheckExportSymbols refuses that.
std::string ExportSymbol(std::string_view task_name);

// InvalidArgument "tasks a-b and a_b would both export a_b_prepare; rename one" when two of `task_names`
// give one ExportSymbol (their exports could not link into one library).
absl::Status CheckExportSymbols(const std::vector<std::string>& task_names);

// The C initializer of the sd_weight_spec (kernel_abi/sparseditto_weight_check.h) of `task`:
// its dtype and pattern, the units of its family that `searched` (the task's matrix) divides, and
// for a task over a matrix file that matrix's shape, nnz and structure digests.
std::string WeightSpecInitializer(const v1::Task& task, const CsrMatrix& searched);

// The exported source (see the file comment). InvalidArgument when `source` cannot be wrapped (an
// #include after code, or one naming a macro: SplitLeadingIncludes of mutators/plan/plan_composer.h).
absl::StatusOr<std::string> WrapForExport(std::string_view source, std::string_view symbol,
                                          std::string_view weight_spec_initializer);

// <task>.h: the declarations of the four entries of `symbol`.
std::string ExportDeclarations(std::string_view symbol);

// The nvcc flags the evaluator compiles `task`'s candidates with, the ABI folder made ".".
// InvalidArgument for a bad arch in the task.
absl::StatusOr<std::vector<std::string>> ExportNvccFlags(const v1::Task& task);

struct ExportedFile {
  std::string cu_file;             // "alpha.cu", in the script's folder
  std::vector<std::string> flags;  // ExportNvccFlags of its task
};

// build.sh: `./build.sh [-o LIB] [FILE.cu ...]` compiles each named file (default: every file of
// `files`) with its task's flags into an object and links them into LIB (default
// libsparseditto_kernels.so) with the candidates' libraries; $NVCC names nvcc (default: nvcc on PATH).
std::string BuildScript(const std::vector<ExportedFile>& files);

}  // namespace sparseditto
