#include "task/task_loader.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "common/status_macros.h"
#include "fmt/format.h"
#include "task/task_parse.h"
#include "task/task_validation.h"
#include "task/yaml_fields.h"
#include "yaml-cpp/yaml.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using task_internal::Fields;
using task_internal::FieldError;
using task_internal::ParseContext;
using task_internal::PosOf;
using task_internal::SourceMap;
using task_internal::SourcePos;

constexpr std::string_view kBatchKeys[] = {"tasks", "defaults"};

std::optional<std::pair<YAML::Node, YAML::Node>> FindKey(const YAML::Node& map, std::string_view key) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return std::make_pair(it->first, it->second);
  }
  return std::nullopt;
}

// Parses one task (its layers: the defaults, if any, under the task's own mapping) and validates it.
absl::StatusOr<v1::Task> ParseOne(const std::string& file, const fs::path& base_dir, std::vector<Fields::Layer> layers,
                                  std::string display, SourceMap* sources) {
  ParseContext ctx{file, sources};
  Fields fields(&ctx, "", std::move(layers));
  sources->Record("", fields.pos(), std::move(display));
  SD_ASSIGN_OR_RETURN(v1::Task task, task_internal::ParseTask(ctx, fields, base_dir));
  SD_RETURN_IF_ERROR(task_internal::ValidateTaskFields(task, *sources, file, /*presence_known=*/true));
  return task;
}

// Task names are unique in a batch; reports the later of two at its name.
absl::Status CheckUniqueNames(const v1::TaskBatch& batch, const std::vector<SourceMap>& sources,
                              std::string_view file) {
  std::map<std::string, int> first;
  for (int i = 0; i < batch.tasks_size(); ++i) {
    auto [it, inserted] = first.emplace(batch.tasks(i).name(), i);
    if (inserted) continue;
    const SourcePos earlier = sources.empty() ? SourcePos{} : sources[it->second].Find("name").first;
    auto [pos, display] = sources.empty() ? std::pair{SourcePos{}, fmt::format("tasks[{}].name", i)}
                                          : sources[i].Find("name");
    const std::string where = earlier.line > 0 ? fmt::format(" at line {}", earlier.line) : "";
    return FieldError(file, pos, display,
                      fmt::format("duplicate task name '{}' (also tasks[{}]{})", batch.tasks(i).name(), it->second,
                                  where));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::TaskBatch> ParseDocument(const YAML::Node& root, const std::string& file, const fs::path& base_dir) {
  v1::TaskBatch batch;
  if (!root.IsMap()) {
    return FieldError(file, PosOf(root.Mark()), "",
                      "expected a mapping: one task's fields, or `tasks:` with a list of tasks");
  }
  const std::optional<std::pair<YAML::Node, YAML::Node>> tasks = FindKey(root, "tasks");
  if (!tasks) {  // a single task
    if (auto defaults = FindKey(root, "defaults")) {
      return FieldError(file, PosOf(defaults->first.Mark()), "defaults",
                        "`defaults:` is only for a batch file with a `tasks:` list");
    }
    std::vector<SourceMap> sources(1);
    SD_ASSIGN_OR_RETURN(*batch.add_tasks(), ParseOne(file, base_dir, {{root, ""}}, "", &sources[0]));
    return batch;
  }
  ParseContext ctx{file, nullptr};
  Fields top(&ctx, "", {{root, ""}});
  SD_RETURN_IF_ERROR(top.CheckKeys(kBatchKeys));
  std::vector<Fields::Layer> base_layers;
  if (auto defaults = FindKey(root, "defaults")) {
    if (!defaults->second.IsMap()) {
      return FieldError(file, PosOf(defaults->second.IsNull() ? defaults->first.Mark() : defaults->second.Mark()),
                        "defaults", "expected a mapping of task fields");
    }
    base_layers.push_back({defaults->second, "defaults"});
  }
  const YAML::Node& list = tasks->second;
  const SourcePos list_pos = PosOf(list.IsNull() ? tasks->first.Mark() : list.Mark());
  if (!list.IsSequence()) return FieldError(file, list_pos, "tasks", "expected a list of tasks");
  if (list.size() == 0) return FieldError(file, list_pos, "tasks", "empty list: no task to run");
  std::vector<SourceMap> sources(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string display = fmt::format("tasks[{}]", i);
    if (!item.IsMap()) {
      return FieldError(file, PosOf(item.Mark().is_null() ? list.Mark() : item.Mark()), display,
                        "expected a mapping of task fields");
    }
    std::vector<Fields::Layer> layers = base_layers;
    layers.push_back({item, display});
    SD_ASSIGN_OR_RETURN(*batch.add_tasks(), ParseOne(file, base_dir, std::move(layers), display, &sources[i]));
  }
  SD_RETURN_IF_ERROR(CheckUniqueNames(batch, sources, file));
  return batch;
}

}  // namespace

namespace task_internal {

absl::StatusOr<std::string> ReadYamlFile(const std::string& path, std::string_view what) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) return absl::NotFoundError(fmt::format("{}: no such {}", path, what));
  if (!fs::is_regular_file(status)) return absl::InvalidArgumentError(fmt::format("{}: not a regular file", path));
  const auto size = fs::file_size(path, ec);
  if (!ec && size > static_cast<uintmax_t>(kMaxTaskFileBytes)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {} bytes, larger than the {} bytes a {} may have", path, size, kMaxTaskFileBytes, what));
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    const std::string msg = fmt::format("{}: cannot open: {}", path, std::generic_category().message(err));
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
    return absl::UnavailableError(msg);
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::UnavailableError(fmt::format("{}: read failed", path));
  return contents.str();
}

}  // namespace task_internal

absl::StatusOr<v1::TaskBatch> ParseTaskYaml(std::string_view yaml, const std::string& file_name) {
  return ParseTaskYamlAt(yaml, "", file_name);
}

// An empty `key`: the root itself is the task document.
absl::StatusOr<v1::TaskBatch> ParseTaskYamlAt(std::string_view yaml, std::string_view key,
                                              const std::string& file_name) {
  fs::path base_dir = fs::path(file_name).parent_path();
  if (base_dir.empty()) base_dir = ".";
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(std::string(yaml));
    if (docs.empty() || (docs.size() == 1 && docs[0].IsNull())) {
      return FieldError(file_name, {}, "", "empty task file: expected one task's fields, or `tasks:` with a list");
    }
    if (docs.size() > 1) {
      return FieldError(file_name, PosOf(docs[1].Mark()), "",
                        "several YAML documents ('---'); put several tasks in one `tasks:` list instead");
    }
    if (key.empty()) return ParseDocument(docs[0], file_name, base_dir);
    if (!docs[0].IsMap()) return FieldError(file_name, PosOf(docs[0].Mark()), "", "expected an object");
    const std::optional<std::pair<YAML::Node, YAML::Node>> task = FindKey(docs[0], key);
    if (!task) return FieldError(file_name, PosOf(docs[0].Mark()), key, "missing: the task (a task file's fields)");
    return ParseDocument(task->second, file_name, base_dir);
  } catch (const YAML::Exception& e) {
    return FieldError(file_name, PosOf(e.mark), "", fmt::format("YAML syntax error: {}", e.msg));
  } catch (const std::exception& e) {
    return absl::InternalError(fmt::format("{}: unexpected error while parsing: {}", file_name, e.what()));
  }
}

absl::StatusOr<v1::TaskBatch> LoadTaskFile(const std::string& path) {
  SD_ASSIGN_OR_RETURN(std::string contents, task_internal::ReadYamlFile(path, "task file"));
  return ParseTaskYaml(contents, path);
}

absl::Status ValidateTask(const v1::Task& task) {
  SourceMap sources;
  return task_internal::ValidateTaskFields(task, sources, task.source_file(), /*presence_known=*/false);
}

absl::Status ValidateTaskBatch(const v1::TaskBatch& batch) {
  std::vector<SourceMap> sources(batch.tasks_size());
  for (int i = 0; i < batch.tasks_size(); ++i) {
    sources[i].Record("", {}, fmt::format("tasks[{}]", i));
    SD_RETURN_IF_ERROR(task_internal::ValidateTaskFields(batch.tasks(i), sources[i], batch.tasks(i).source_file(),
                                                         /*presence_known=*/false));
  }
  return CheckUniqueNames(batch, sources, "");
}

}  // namespace sparseditto
