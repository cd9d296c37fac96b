#include "cli/logging.h"

#include <filesystem>
#include <memory>
#include <vector>

#include "fmt/format.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/basic_file_sink.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace sparseditto {

void AddLogOptions(CLI::App* cmd, std::string* level, std::string* file) {
  cmd->add_option("--log-level", *level, "Messages at this level and above: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  cmd->add_option("--log-file", *file,
                  "Also append every message (at --log-level and above) to this file, each line with its UTC "
                  "time and level");
}

absl::Status SetUpLogging(const std::string& level, const std::string& file) {
  const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        fmt::format("--log-level {}: not one of trace, debug, info, warn, error, off", level));
  }
  auto to_stderr = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  to_stderr->set_pattern("%v");  // the lines the commands have always printed
  std::vector<spdlog::sink_ptr> sinks = {to_stderr};
  if (!file.empty()) {
    try {
      const std::filesystem::path parent = std::filesystem::path(file).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent);
      auto to_file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file, /*truncate=*/false);
      to_file->set_formatter(
          std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc));
      sinks.push_back(to_file);
    } catch (const std::exception& e) {  // spdlog_ex, filesystem_error: never past this module
      return absl::UnavailableError(fmt::format("--log-file {}: {}", file, e.what()));
    }
  }
  auto logger = std::make_shared<spdlog::logger>("sparseditto", sinks.begin(), sinks.end());
  logger->set_level(parsed);
  // Every message flushed at once (they are few), and no flusher thread: a thread started here could
  // miss the signal mask StopSignals sets (cli/stop_signals.h).
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

}  // namespace sparseditto
