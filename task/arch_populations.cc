#include "task/arch_populations.h"

#include <algorithm>
#include <cctype>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace sparseditto {

std::string DeviceArchOf(std::string_view arch) {
  if (arch.size() >= 2 && (arch.back() == 'a' || arch.back() == 'f') &&
      std::isdigit(static_cast<unsigned char>(arch[arch.size() - 2]))) {
    arch.remove_suffix(1);
  }
  return std::string(arch);
}

bool IsArchName(std::string_view arch) {
  if (!arch.starts_with("sm_")) return false;
  std::string_view digits = arch.substr(3);
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.remove_suffix(1);
  return !digits.empty() &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string PopulationName(std::string_view task_name, std::string_view arch) {
  return fmt::format("{}{}{}", task_name, kPopulationSeparator, arch);
}

std::vector<v1::Task> SplitByArch(const std::vector<v1::Task>& tasks) {
  std::vector<v1::Task> out;
  for (const v1::Task& task : tasks) {
    if (task.arch_size() <= 1) {
      out.push_back(task);
      continue;
    }
    for (const std::string& arch : task.arch()) {
      v1::Task& population = out.emplace_back(task);
      population.set_name(PopulationName(task.name(), arch));
      population.clear_arch();
      population.add_arch(arch);
    }
  }
  return out;
}

bool DeviceServesTask(const v1::Task& task, std::string_view device_arch) {
  if (task.arch().empty()) return true;
  const std::string device = DeviceArchOf(device_arch);
  return std::any_of(task.arch().begin(), task.arch().end(),
                     [&](const std::string& arch) { return DeviceArchOf(arch) == device; });
}

absl::Status CheckDeviceServesTask(const v1::Task& task, std::string_view device_arch, std::string_view gpu_name) {
  if (DeviceServesTask(task, device_arch)) return absl::OkStatus();
  const std::string targets = fmt::format("{}", fmt::join(task.arch(), ", "));
  const std::string wanted = DeviceArchOf(task.arch(0));
  return absl::FailedPreconditionError(fmt::format(
      "task {} targets {}, but the GPU it would be timed on{} is {}: not searched here (its times would be "
      "compared with no GPU of its own arch); search it on an {} GPU (sparseditto search --name {} there) or "
      "through a coordinator with an {} evaluator",
      task.name(), targets, gpu_name.empty() ? "" : fmt::format(" ({})", gpu_name), device_arch, wanted,
      task.name(), wanted));
}

std::string EvaluationPlatform(std::string_view arch, std::string_view gpu_name) {
  return fmt::format("{}/{}", DeviceArchOf(arch), gpu_name);
}

std::string DescribePlatform(std::string_view platform) {
  const size_t slash = platform.find('/');
  const std::string_view arch = platform.substr(0, slash);
  const std::string_view gpu = slash == std::string_view::npos ? "" : platform.substr(slash + 1);
  return fmt::format("{} ({})", gpu.empty() ? "an unnamed GPU" : gpu, arch);
}

}  // namespace sparseditto
