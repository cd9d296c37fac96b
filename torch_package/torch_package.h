// The PyTorch package of a run's exported kernels (`sparseditto export RUN --torch`, issue 26 item 2):
// a Python package folder <out>/sparseditto_<run>/ holding
//   __init__.py        SparseLinear.from_linear and the operators' loader (torch_package/template)
//   weight_pattern.py  the check of a weight's pattern and its CSR for the kernel
//   sparseditto_op.cpp the TORCH_LIBRARY operators (sparseditto::prepare / release / spmm / spmm_nk), compiled on
//                      import by torch.utils.cpp_extension, which dlopen an exported kernel library
//   sparseditto_kernel.h the kernel ABI the operators call
//   kernels.json       per task: shape, dtype, pattern, n values, arch, layout (kn, or nk: the op passes
//                      PyTorch's X and Y as they are), and the kernel's library
//                      (relative to the package folder) and entry-point prefix.
// The package runs the kernels the export builds; it does not build them.
// Thread-safety: pure functions, except WriteTorchPackage (writes files).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "task.pb.h"

namespace sparseditto {

// Where a task's exported kernel is: its shared library, relative to the package folder (which
// `export --torch` puts at <out>/torch/<package>/, so "../../" is the export's folder), and the
// prefix of its ABI entries (<prefix>prepare, <prefix>run, <prefix>release, <prefix>abi_version).
// THE adapter between the package and the export's naming: the only place that knows it.
struct KernelEntryPoints {
  std::string library;
  std::string symbol_prefix;
};
KernelEntryPoints ExportedEntryPoints(std::string_view task_name);

// A task of the package with the shape of its matrix (a task over a matrix file knows it only once
// the file is read).
struct TorchPackageTask {
  v1::Task task;
  int64_t rows = 0;
  int64_t cols = 0;
};

// "sparseditto_<run>" with every character outside [A-Za-z0-9_] made '_': a Python module name.
std::string TorchPackageName(std::string_view run_id);

// kernels.json's text (format 1): {"format", "run", "abi_version", "tasks": [{"name", "rows", "cols",
// "dtype", "pattern": {"family", "sparsity", "block_rows", "block_cols", "n", "m", "half_bandwidth",
// "num_blocks"}, "n_values", "arch", "library", "symbol_prefix", "layout" ("kn" or "nk")}]}.
std::string TorchKernelsJson(std::string_view run_id, const std::vector<TorchPackageTask>& tasks);

// Writes the package into <out_dir>/<TorchPackageName(run_id)>/ (created; files replaced atomically)
// and returns that folder. Errors: InvalidArgument for no tasks, a task without a positive shape or n
// values, or two tasks of one name; the file system's errors (the folder not writable).
absl::StatusOr<std::string> WriteTorchPackage(const std::string& out_dir, std::string_view run_id,
                                              const std::vector<TorchPackageTask>& tasks);

}  // namespace sparseditto
