// Helpers of the end-to-end tests that run commands the way a user types them: a shell command line with
// its stdout, stderr and exit code, and a whole file as a string. Header-only; not thread-safe (the caller's
// scratch folder holds stderr).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sparseditto::testing_support {

struct ShellOutcome {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

// The whole file; empty when it cannot be read.
inline std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `command` through /bin/sh; its stderr goes through `scratch_dir`/stderr.txt.
inline ShellOutcome RunShell(const std::string& command, const std::filesystem::path& scratch_dir) {
  const std::filesystem::path err = scratch_dir / "stderr.txt";
  ShellOutcome outcome;
  FILE* pipe = popen((command + " 2>'" + err.string() + "'").c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof(buffer), pipe)) > 0) outcome.out.append(buffer, got);
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.err = Slurp(err);
  return outcome;
}

}  // namespace sparseditto::testing_support
