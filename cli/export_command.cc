// `sparseditto export RUN [--out DIR]`: the best kernel of each task of a run, read from the run's
// store, as files a user builds and links (coordinator/search/kernel_export.h, export_wrapper.h):
// <task>.cu and <task>.h per task, the ABI header and the weight check header beside them (the
// installed copies, AbiIncludeDir), and build.sh; with --torch also the run's PyTorch package
// (torch_package/torch_package.h) under <out>/torch, which loads the library build.sh makes.

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/install_paths.h"
#include "cli/run_folder.h"
#include "common/status_format.h"
#include "coordinator/search/export_wrapper.h"
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

absl::Status WriteInside(const std::string& out_dir, const std::string& name, const std::string& contents,
                         std::string* written = nullptr) {
  absl::StatusOr<std::filesystem::path> path = PathInside(out_dir, {name});
  if (!path.ok()) return path.status();
  if (written != nullptr) *written = path->string();
  return WriteFileAtomically(path->string(), contents);
}

// Writes <out>/<task>.cu and <task>.h; NotFound when the task has no correct candidate.
absl::Status ExportTask(const PopulationStore& store, const store::RunRecord& run, const std::string& task_name,
                        const std::string& out_dir, std::string* written, std::vector<ExportedFile>* files) {
  absl::StatusOr<ExportedTask> task = ExportBestKernel(store, run, task_name);
  if (!task.ok()) return task.status();
  if (absl::Status s = WriteInside(out_dir, task_name + ".cu", task->cu, written); !s.ok()) return s;
  if (absl::Status s = WriteInside(out_dir, task_name + ".h", task->declarations); !s.ok()) return s;
  files->push_back({task_name + ".cu", task->nvcc_flags});
  return absl::OkStatus();
}

// build.sh, executable, and the ABI and weight check headers (the installed copies) beside the exports.
absl::Status WriteCompanions(const std::string& out_dir, const std::vector<ExportedFile>& files) {
  if (absl::Status s = WriteInside(out_dir, "build.sh", BuildScript(files)); !s.ok()) return s;
  return InstallExportCompanions(out_dir);
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
  std::vector<std::string> names;
  for (const v1::Task& task : tasks) names.push_back(task.name());
  if (absl::Status s = CheckExportSymbols(names); !s.ok()) {
    std::cerr << "sparseditto export: " << s.message() << "\n";
    return kExitFailure;
  }
  std::vector<ExportedFile> files;
  std::vector<v1::Task> exported;
  for (const v1::Task& task : tasks) {
    std::string written;
    if (absl::Status s = ExportTask(*store, record, task.name(), out, &written, &files); !s.ok()) {
      std::cerr << fmt::format("sparseditto export: task {}: {}\n", task.name(), s.message());
      continue;
    }
    std::cout << written << "\n";
    exported.push_back(task);
  }
  if (!files.empty()) {
    if (absl::Status s = WriteCompanions(out, files); !s.ok()) {
      std::cerr << fmt::format("sparseditto export: {}\n", s.message());
      return kExitFailure;
    }
    std::cout << out << "/build.sh\n";
  }
  bool all = !files.empty() && files.size() == tasks.size();
  if (o.torch && !exported.empty()) all = ExportTorchPackage(out, record.run_id(), exported) && all;
  return all ? kExitSuccess : kExitFailure;
}

}  // namespace

void RegisterExportCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Write the best kernel of each task of a run as a .cu with its headers and build.sh");
  cmd->add_option("run", o->run, "Run name (under --runs-dir) or the run's folder")->required();
  cmd->add_option("--runs-dir", o->runs_dir, "Folder of runs")->capture_default_str();
  cmd->add_option("--out", o->out_dir, "Output folder (default: the run's folder/export)");
  cmd->add_flag("--torch", o->torch,
                "Also write the run's PyTorch package (SparseLinear.from_linear, the sparseditto:: operators) "
                "under <out>/torch/sparseditto_<run>");
  cmd->callback([o, exit_code] { *exit_code = RunExport(*o); });
}

}  // namespace sparseditto
