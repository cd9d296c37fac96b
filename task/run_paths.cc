#include "task/run_paths.h"

#include <algorithm>
#include <array>
#include <system_error>

#include "fmt/format.h"
#include "task/arch_populations.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxNameBytes = 128;

// The entries of a run's folder that are not tasks (run_paths.h).
constexpr std::array<std::string_view, 3> kRunEntries = {"store", "export", "provenance.json"};
// Markers in the names of the writers' temporary files and folders, which their clean-up removes
// (run_artifacts.cc, population_store_open.cc).
constexpr std::array<std::string_view, 3> kTemporaryMarkers = {".sparseditto-tmp-", ".sparseditto-old-",
                                                               ".creating-"};

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

std::string Lowercase(std::string_view s) {
  std::string lower(s);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

// Why `part` is not one path component, or nullopt.
std::optional<std::string> ComponentProblem(std::string_view part) {
  if (part.empty()) return "is empty";
  if (part == ".") return "is '.', the folder itself";
  if (part == "..") return "is '..', the parent folder (outside)";
  if (part.find('/') != std::string_view::npos) return "holds a '/'";
  if (part.find('\0') != std::string_view::npos) return "holds a NUL byte";
  return std::nullopt;
}

// True when `path` is `root` or lies under it (both normalised, absolute).
bool IsWithin(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

fs::path Resolved(const fs::path& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) absolute = path;
  fs::path resolved = fs::weakly_canonical(absolute, error);
  if (error) resolved = absolute.lexically_normal();
  if (!resolved.has_filename() && resolved.has_parent_path()) resolved = resolved.parent_path();
  return resolved;
}

}  // namespace

std::optional<std::string> RunNameProblem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name == ".") return "'.' names the folder of runs itself";
  if (name == "..") return "'..' names the folder above the folder of runs (outside of it)";
  if (name.size() > kMaxNameBytes || !std::all_of(name.begin(), name.end(), IsNameChar)) {
    return fmt::format("must match [A-Za-z0-9_.-]{{1,{}}} (it names a folder), got '{}'", kMaxNameBytes, name);
  }
  return std::nullopt;
}

std::optional<std::string> TaskNameProblem(std::string_view name) {
  // The population of one arch of a task with several (arch_populations.h): "<task>@<arch>".
  if (const size_t at = name.rfind(kPopulationSeparator); at != std::string_view::npos) {
    if (!IsArchName(name.substr(at + 1))) {
      return fmt::format("'{}' has a '{}' not followed by an arch (it is kept for a task's populations, "
                         "<name>{}sm_80)", name, kPopulationSeparator, kPopulationSeparator);
    }
    name = name.substr(0, at);
  }
  if (name == ".") return "'.' names the run's folder itself";
  if (name == "..") return "'..' names the folder above the run, where the other runs are";
  if (std::optional<std::string> problem = RunNameProblem(name)) return problem;
  const std::string lower = Lowercase(name);
  for (std::string_view entry : kRunEntries) {
    if (lower == entry) {
      return fmt::format("'{}' is taken by the run's own runs/<run>/{}; pick another name", name, entry);
    }
  }
  for (std::string_view marker : kTemporaryMarkers) {
    if (lower.find(marker) != std::string::npos) {
      return fmt::format("'{}' holds '{}', the mark of the run's temporary files (they are removed)", name, marker);
    }
  }
  return std::nullopt;
}

absl::Status CheckRunName(std::string_view name, std::string_view where) {
  if (std::optional<std::string> problem = RunNameProblem(name)) {
    return absl::InvalidArgumentError(fmt::format("{}: run name {}", where, *problem));
  }
  return absl::OkStatus();
}

absl::Status CheckTaskName(std::string_view name) {
  if (std::optional<std::string> problem = TaskNameProblem(name)) {
    return absl::InvalidArgumentError(fmt::format("task name {}", *problem));
  }
  return absl::OkStatus();
}

absl::StatusOr<fs::path> PathInside(const fs::path& root, std::initializer_list<std::string_view> parts) {
  fs::path joined = root;
  std::string shown = root.string();
  for (std::string_view part : parts) {
    shown += "/" + std::string(part);
    if (std::optional<std::string> problem = ComponentProblem(part)) {
      return absl::InvalidArgumentError(
          fmt::format("cannot write {}: the part '{}' {}; a run's files stay inside {}", shown, part, *problem,
                      root.string()));
    }
    joined /= fs::path(std::string(part));
  }
  const fs::path real_root = Resolved(root);
  const fs::path real_path = Resolved(joined);
  if (!IsWithin(real_path, real_root)) {
    return absl::InvalidArgumentError(fmt::format(
        "cannot write {}: it resolves to {}, outside {} (a symbolic link inside the run?)", shown,
        real_path.string(), real_root.string()));
  }
  return joined;
}

}  // namespace sparseditto
