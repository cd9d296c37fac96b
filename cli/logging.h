// One logging path for the long-running commands (search, coordinator, bench-search): spdlog
// (Debian's libspdlog-dev; absl/log is not in Debian 12's abseil 20220623), set up once per command.
// Messages go to stderr as plain lines (what the commands always printed there) and, with
// --log-file, also to that file (appended, each line stamped with UTC time and level, flushed at
// once), so a run started in the background keeps a log of what it said.
// --log-level: trace, debug, info (default), warn, error, off; below the level, nothing is written.
// The progress line and the result lines on stdout are not log messages and are not filtered.
// main() sets up stderr at info for every command; search and coordinator set it up again with their
// options. Thread-safety: SetUpLogging from the command's thread, before other threads log; spdlog's
// default logger is thread-safe (the _mt sinks).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "CLI/CLI.hpp"

namespace sparseditto {

// Adds --log-level and --log-file to `cmd`, into `level` and `file` (both outlive the command).
void AddLogOptions(CLI::App* cmd, std::string* level, std::string* file);

// Makes spdlog's default logger: stderr at `level`, plus `file` when not empty (its folder made).
// InvalidArgument for an unknown level; Unavailable naming the file when it cannot be opened.
absl::Status SetUpLogging(const std::string& level, const std::string& file);

}  // namespace sparseditto
