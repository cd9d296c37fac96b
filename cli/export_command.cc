// `sparseditto export RUN [--out DIR]`: the best kernel of each task of a run, read from the run's
// store, as files a user builds and links (coordinator/search/kernel_export.h, export_wrapper.h):
// <task>.cu and <task>.h per task, the ABI header and the weight check header beside them (the
// installed copies, AbiIncludeDir), and build.sh.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <iostream>
#include <map>

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

namespace sparseditto {
namespace {

struct ExportOptions {
  std::string run;
  std::string runs_dir = "runs";
  std::string out_dir;  // default: <run folder>/export
};

constexpr const char* kShippedHeaders[] = {"sparseditto_kernel.h", "sparseditto_weight_check.h"};

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

// The ABI and weight check headers (the installed copies) and build.sh beside the exports.
absl::Status WriteCompanions(const std::string& out_dir, const std::vector<ExportedFile>& files) {
  for (const char* header : kShippedHeaders) {
    absl::StatusOr<std::filesystem::path> to = PathInside(out_dir, {header});
    if (!to.ok()) return to.status();
    const std::filesystem::path from = std::filesystem::path(AbiIncludeDir()) / header;
    std::error_code error;
    std::filesystem::copy_file(from, *to, std::filesystem::copy_options::overwrite_existing, error);
    if (error) return absl::FailedPreconditionError(fmt::format("copy {} to {}: {}", from.string(), to->string(), error.message()));
  }
  std::string script;
  if (absl::Status s = WriteInside(out_dir, "build.sh", BuildScript(files), &script); !s.ok()) return s;
  if (chmod(script.c_str(), 0755) != 0) return absl::InternalError(fmt::format("chmod {}: {}", script, strerror(errno)));
  return absl::OkStatus();
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
  std::map<std::string, std::string> symbols;  // symbol -> task: two tasks may not share one
  for (const v1::Task& task : tasks) {
    auto [it, inserted] = symbols.emplace(ExportSymbol(task.name()), task.name());
    if (!inserted) {
      std::cerr << fmt::format("sparseditto export: tasks {} and {} would both export {}_prepare; rename one\n",
                               it->second, task.name(), it->first);
      return kExitFailure;
    }
  }
  std::vector<ExportedFile> files;
  for (const v1::Task& task : tasks) {
    std::string written;
    if (absl::Status s = ExportTask(*store, record, task.name(), out, &written, &files); !s.ok()) {
      std::cerr << fmt::format("sparseditto export: task {}: {}\n", task.name(), s.message());
      continue;
    }
    std::cout << written << "\n";
  }
  if (!files.empty()) {
    if (absl::Status s = WriteCompanions(out, files); !s.ok()) {
      std::cerr << fmt::format("sparseditto export: {}\n", s.message());
      return kExitFailure;
    }
    std::cout << out << "/build.sh\n";
  }
  return !files.empty() && files.size() == tasks.size() ? kExitSuccess : kExitFailure;
}

}  // namespace

void RegisterExportCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Write the best kernel of each task of a run as a .cu with its headers and build.sh");
  cmd->add_option("run", o->run, "Run name (under --runs-dir) or the run's folder")->required();
  cmd->add_option("--runs-dir", o->runs_dir, "Folder of runs")->capture_default_str();
  cmd->add_option("--out", o->out_dir, "Output folder (default: the run's folder/export)");
  cmd->callback([o, exit_code] { *exit_code = RunExport(*o); });
}

}  // namespace sparseditto
