// `sparseditto export RUN [--out DIR]`: the best kernel of each task of a run as a standalone .cu file
// (coordinator/search/kernel_export.h), read from the run's store; with --torch also the run's PyTorch
// package (torch_package/torch_package.h) under <out>/torch.
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/run_folder.h"
#include "common/status_format.h"
#include "coordinator/search/kernel_export.h"
#include "coordinator/search/run_artifacts.h"
#include "fmt/format.h"
#include "population_store/population_store.h"
#include "task/run_paths.h"
#include "task/task_matrix.h"
#include "torch_package/torch_package.h"

namespace sparseditto {
namespace {

struct ExportOptions {
  std::string run;
  std::string runs_dir = "runs";
  std::string out_dir;  // default: <run folder>/export
  bool torch = false;   // also write the PyTorch package of the exported tasks
};

// The task with its matrix's shape; a task over a matrix file reads the file for it.
absl::StatusOr<TorchPackageTask> PackageTask(const v1::Task& task) {
  TorchPackageTask t{task, task.matrix().generated().rows(), task.matrix().generated().cols()};
  if (!task.matrix().has_file()) return t;
  absl::StatusOr<CsrMatrix> matrix = MaterializeTaskMatrix(task);
  if (!matrix.ok()) return matrix.status();
  t.rows = matrix->rows;
  t.cols = matrix->cols;
  return t;
}

// Writes <out>/torch/sparseditto_<run>/ for the exported tasks; false (said on stderr) when it cannot.
bool ExportTorchPackage(const std::string& out, const std::string& run_id, const std::vector<v1::Task>& exported) {
  std::vector<TorchPackageTask> tasks;
  for (const v1::Task& task : exported) {
    absl::StatusOr<TorchPackageTask> t = PackageTask(task);
    if (!t.ok()) {
      std::cerr << fmt::format("sparseditto export: --torch: task {}: {}\n", task.name(), t.status().message());
      continue;
    }
    tasks.push_back(*std::move(t));
  }
  if (tasks.empty()) return false;
  absl::StatusOr<std::string> folder = WriteTorchPackage((std::filesystem::path(out) / "torch").string(), run_id, tasks);
  if (!folder.ok()) {
    std::cerr << "sparseditto export: --torch: " << folder.status().message() << "\n";
    return false;
  }
  std::cout << *folder << "\n";
  return tasks.size() == exported.size();
}

// Writes <out>/<task>.cu; NotFound when the task has no correct candidate.
absl::Status ExportTask(const PopulationStore& store, const store::RunRecord& run, const std::string& task_name,
                        const std::string& out_dir, std::string* written) {
  absl::StatusOr<std::string> text = ExportBestKernel(store, run, task_name);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::filesystem::path> path = PathInside(out_dir, {task_name + ".cu"});
  if (!path.ok()) return path.status();
  *written = path->string();
  return WriteFileAtomically(*written, *text);
}

int RunExport(const ExportOptions& o) {
  absl::StatusOr<OpenedRun> run = OpenRun(o.run, o.runs_dir);
  if (!run.ok()) {
    std::cerr << "sparseditto export: " << run.status().message() << "\n";
    return kExitFailure;
  }
  const auto& [folder, store, record, tasks] = *run;
  absl::StatusOr<std::filesystem::path> default_out = PathInside(folder.dir, {"export"});
  if (!default_out.ok()) {
    std::cerr << "sparseditto export: " << default_out.status().message() << "\n";
    return kExitFailure;
  }
  const std::string out = o.out_dir.empty() ? default_out->string() : o.out_dir;
  std::vector<v1::Task> exported;
  for (const v1::Task& task : tasks) {
    std::string written;
    if (absl::Status s = ExportTask(*store, record, task.name(), out, &written); !s.ok()) {
      std::cerr << fmt::format("sparseditto export: task {}: {}\n", task.name(), s.message());
      continue;
    }
    std::cout << written << "\n";
    exported.push_back(task);
  }
  bool all = !exported.empty() && exported.size() == tasks.size();
  if (o.torch && !exported.empty()) all = ExportTorchPackage(out, record.run_id(), exported) && all;
  return all ? kExitSuccess : kExitFailure;
}

}  // namespace

void RegisterExportCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Write the best kernel of each task of a run as a standalone .cu");
  cmd->add_option("run", o->run, "Run name (under --runs-dir) or the run's folder")->required();
  cmd->add_option("--runs-dir", o->runs_dir, "Folder of runs")->capture_default_str();
  cmd->add_option("--out", o->out_dir, "Output folder (default: the run's folder/export)");
  cmd->add_flag("--torch", o->torch,
                "Also write the run's PyTorch package (SparseLinear.from_linear, the sparseditto:: operators) "
                "under <out>/torch/sparseditto_<run>");
  cmd->callback([o, exit_code] { *exit_code = RunExport(*o); });
}

}  // namespace sparseditto
