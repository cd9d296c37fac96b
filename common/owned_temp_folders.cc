#include "common/owned_temp_folders.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "fmt/format.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

// When the machine booted, seconds since the epoch (/proc/stat btime); 0 when unknown.
std::time_t BootTime() {
  std::ifstream stat("/proc/stat");
  std::string key;
  while (stat >> key) {
    if (key == "btime") {
      long long seconds = 0;
      stat >> seconds;
      return static_cast<std::time_t>(seconds);
    }
    stat.ignore(1 << 20, '\n');
  }
  return 0;
}

// When process `pid` started, seconds since the epoch (field 22 of /proc/<pid>/stat); nullopt when
// unknown.
std::optional<std::time_t> ProcessStart(pid_t pid) {
  // Read with read(2), not an istreambuf_iterator: the process may exit between open and read, and then
  // read fails with ESRCH, which libstdc++'s filebuf throws as an exception (seen under ctest -j).
  std::string text;
  const int fd = open(fmt::format("/proc/{}/stat", pid).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[1024];
  for (ssize_t got; (got = read(fd, buffer, sizeof buffer)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) { text.clear(); break; }  // gone: the parse below says unknown
    text.append(buffer, static_cast<size_t>(got));
  }
  close(fd);
  const size_t after_name = text.rfind(')');  // the command name may hold spaces and ')'
  if (after_name == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(after_name + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i != 22) continue;
    unsigned long long ticks = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), ticks);
    const long hertz = sysconf(_SC_CLK_TCK);
    const std::time_t boot = BootTime();
    if (error != std::errc() || hertz <= 0 || boot == 0) return std::nullopt;
    return boot + static_cast<std::time_t>(ticks / static_cast<unsigned long long>(hertz));
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<fs::path> MakeOwnedTempFolder(const fs::path& parent, std::string_view prefix) {
  std::string path = (parent / fmt::format("{}{}-XXXXXX", prefix, getpid())).string();
  if (mkdtemp(path.data()) == nullptr) {
    return absl::InternalError(fmt::format("cannot make the temporary folder {}: {}", path, std::strerror(errno)));
  }
  return fs::path(path);
}

std::optional<pid_t> OwnerOf(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  const std::string_view rest = name.substr(prefix.size());
  long long pid = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (error != std::errc() || end == rest.data() || pid <= 0 || pid > (1LL << 30)) return std::nullopt;
  if (end != rest.data() + rest.size() && *end != '-' && *end != '_') return std::nullopt;
  return static_cast<pid_t>(pid);
}

bool OwnerIsGone(pid_t pid, std::time_t changed) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  const std::optional<std::time_t> started = ProcessStart(pid);
  // A second of slack: both clocks are whole seconds here.
  return started.has_value() && *started > changed + 1;
}

SweepOutcome SweepOrphanedTempFolders(const fs::path& parent, const std::vector<std::string_view>& prefixes) {
  SweepOutcome outcome;
  std::error_code error;
  std::vector<fs::path> stale;
  for (auto it = fs::directory_iterator(parent, error); !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::optional<pid_t> owner;
    for (std::string_view prefix : prefixes) {
      if ((owner = OwnerOf(name, prefix))) break;
    }
    struct stat info {};
    if (!owner || lstat(it->path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != geteuid()) {
      continue;
    }
    if (!OwnerIsGone(*owner, info.st_mtime)) {  // this process's own folders included
      ++outcome.kept_alive;
      continue;
    }
    stale.push_back(it->path());
  }
  for (const fs::path& path : stale) {
    std::error_code removed;
    fs::remove_all(path, removed);
    if (removed) {
      ++outcome.failed;
    } else {
      outcome.removed.push_back(path.string());
    }
  }
  return outcome;
}

}  // namespace sparseditto
