#include "evaluator/gpu/baseline_cache.h"

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "common/sha256.h"
#include "fmt/format.h"

namespace sparseditto::gpu {
namespace {

namespace fs = std::filesystem;

bool IsHexKey(const std::string& key) {
  return !key.empty() && key.size() <= 128 &&
         key.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::optional<std::string> ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

// Writes `bytes` next to `final_path` under a unique name and renames it into place.
absl::Status WriteAtomically(const fs::path& final_path, const std::string& bytes) {
  std::string temp = final_path.string() + ".tmp-XXXXXX";
  const int fd = mkstemp(temp.data());
  if (fd < 0) return absl::InternalError(fmt::format("baseline cache: cannot create a file beside {}", final_path.string()));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const bool written = done == bytes.size();
  if (close(fd) != 0 || !written) {
    unlink(temp.c_str());
    return absl::InternalError(fmt::format("baseline cache: cannot write {}", temp));
  }
  std::error_code error;
  fs::rename(temp, final_path, error);
  if (error) {
    unlink(temp.c_str());
    return absl::InternalError(fmt::format("baseline cache: rename to {}: {}", final_path.string(), error.message()));
  }
  return absl::OkStatus();
}

std::string IndexLine(const std::string& payload, const std::string& key) {
  return fmt::format("{} {}\n", Sha256Hex(payload), key);
}

void Warn(std::string* warning, const std::string& message) {
  if (warning != nullptr) {
    *warning = message;
  } else {
    std::cerr << "sparseditto: warning: " << message << "\n";
  }
}

}  // namespace

std::optional<v1::BaselineTime> LookupCachedBaseline(const std::string& dir, const std::string& key,
                                                     std::string* warning) {
  if (dir.empty() || !IsHexKey(key)) return std::nullopt;
  const std::optional<std::string> payload = ReadBytes(fs::path(dir) / (key + ".pb"));
  if (!payload) return std::nullopt;
  const std::optional<std::string> index = ReadBytes(fs::path(dir) / (key + ".sha256"));
  if (!index || *index != IndexLine(*payload, key)) {
    Warn(warning, fmt::format("baseline cache entry {} in {} failed its hash check ({}); the baseline is timed again",
                              key, dir, index ? "its .pb does not match its .sha256 index entry" : "no index entry"));
    return std::nullopt;
  }
  v1::BaselineTime cached;
  if (!cached.ParseFromString(*payload)) return std::nullopt;
  const double median = cached.timing().median_ms();
  if (cached.name().empty() || (cached.available() && !(std::isfinite(median) && median > 0))) {
    Warn(warning, fmt::format("baseline cache entry {} in {} is not a plausible timing (median {} ms); the baseline "
                              "is timed again",
                              key, dir, median));
    return std::nullopt;
  }
  return cached;
}

absl::Status StoreCachedBaseline(const std::string& dir, const std::string& key, const v1::BaselineTime& value) {
  if (dir.empty()) return absl::OkStatus();
  if (!IsHexKey(key)) return absl::InvalidArgumentError(fmt::format("baseline cache: bad key '{}'", key));
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return absl::InternalError(fmt::format("baseline cache: cannot create {}: {}", dir, error.message()));
  std::string payload;
  if (!value.SerializeToString(&payload)) return absl::InternalError("baseline cache: cannot serialize a BaselineTime");
  if (absl::Status s = WriteAtomically(fs::path(dir) / (key + ".pb"), payload); !s.ok()) return s;
  return WriteAtomically(fs::path(dir) / (key + ".sha256"), IndexLine(payload, key));
}

}  // namespace sparseditto::gpu
