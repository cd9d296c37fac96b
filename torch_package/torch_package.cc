#include "torch_package/torch_package.h"

#include <filesystem>
#include <set>
#include <system_error>

#include "common/dtype.h"
#include "common/durable_file.h"
#include "coordinator/search/export_wrapper.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "task/task_names.h"
#include "torch_package/torch_package_files.h"

namespace sparseditto {

KernelEntryPoints ExportedEntryPoints(std::string_view task_name) {
  // `export` writes <out>/<task>.cu with per-task entries <symbol>_prepare/_run/_release
  // (coordinator/search/export_wrapper.h), and its build.sh links every export of the folder into
  // <out>/libsparseditto_kernels.so; the package is <out>/torch/<package>/.
  return {"../../libsparseditto_kernels.so", ExportSymbol(task_name) + "_"};
}

std::string TorchPackageName(std::string_view run_id) {
  std::string name = "sparseditto_";
  for (char c : run_id) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    name += plain ? c : '_';
  }
  return name;
}

namespace {

nlohmann::json PatternJson(const v1::PatternSpec& p) {
  return {{"family", std::string(PatternFamilyName(p.family()))},
          {"sparsity", p.sparsity()},
          {"block_rows", p.block_rows()},
          {"block_cols", p.block_cols()},
          {"n", p.n()},
          {"m", p.m()},
          {"half_bandwidth", p.half_bandwidth()},
          {"num_blocks", p.num_blocks()}};
}

absl::Status CheckTasks(const std::vector<TorchPackageTask>& tasks) {
  if (tasks.empty()) return absl::InvalidArgumentError("no tasks to package");
  std::set<std::string> names;
  for (const TorchPackageTask& t : tasks) {
    if (t.rows < 1 || t.cols < 1) {
      return absl::InvalidArgumentError(fmt::format("task {}: shape {} x {} is not positive", t.task.name(), t.rows, t.cols));
    }
    if (t.task.n_size() == 0) return absl::InvalidArgumentError(fmt::format("task {}: no n values", t.task.name()));
    if (!names.insert(t.task.name()).second) {
      return absl::InvalidArgumentError(fmt::format("task {} appears twice", t.task.name()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string TorchKernelsJson(std::string_view run_id, const std::vector<TorchPackageTask>& tasks) {
  nlohmann::json list = nlohmann::json::array();
  for (const TorchPackageTask& t : tasks) {
    const KernelEntryPoints entry = ExportedEntryPoints(t.task.name());
    list.push_back({{"name", t.task.name()},
                    {"rows", t.rows},
                    {"cols", t.cols},
                    {"dtype", std::string(DtypeName(t.task.dtype()))},
                    {"pattern", PatternJson(t.task.pattern())},
                    {"n_values", std::vector<int64_t>(t.task.n().begin(), t.task.n().end())},
                    {"arch", std::vector<std::string>(t.task.arch().begin(), t.task.arch().end())},
                    {"library", entry.library},
                    {"symbol_prefix", entry.symbol_prefix},
                    {"layout", std::string(LayoutName(t.task.layout()))}});
  }
  const nlohmann::json doc = {{"format", 1}, {"run", std::string(run_id)}, {"abi_version", 1}, {"tasks", list}};
  return doc.dump(2) + "\n";
}

absl::StatusOr<std::string> WriteTorchPackage(const std::string& out_dir, std::string_view run_id,
                                              const std::vector<TorchPackageTask>& tasks) {
  if (absl::Status s = CheckTasks(tasks); !s.ok()) return s;
  const std::filesystem::path folder = std::filesystem::path(out_dir) / TorchPackageName(run_id);
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) return absl::UnavailableError(fmt::format("cannot make {}: {}", folder.string(), ec.message()));
  for (const EmbeddedFile& f : TorchPackageFiles()) {
    if (absl::Status s = WriteFileDurably((folder / f.name).string(), f.contents, 0644); !s.ok()) return s;
  }
  if (absl::Status s = WriteFileDurably((folder / "kernels.json").string(), TorchKernelsJson(run_id, tasks), 0644);
      !s.ok()) {
    return s;
  }
  return folder.string();
}

}  // namespace sparseditto
