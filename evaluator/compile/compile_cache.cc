#include "evaluator/compile/compile_cache.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <iostream>
#include <sstream>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
// 2: the .json carries library_sha256 (entries of format 1 are misses and get recompiled).
constexpr int kFormatVersion = 2;

std::optional<std::string> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

// Writes `bytes` to a new file at `path` (O_EXCL) with mode 0444; removes it again on failure.
absl::Status WriteNewReadOnlyFile(const std::string& path, std::string_view bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return absl::InternalError(fmt::format("compile cache: cannot create {}", path));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const bool ok = done == bytes.size() && fchmod(fd, 0444) == 0;
  if (close(fd) != 0 || !ok) {
    unlink(path.c_str());
    return absl::InternalError(fmt::format("compile cache: cannot write {}", path));
  }
  return absl::OkStatus();
}

void AppendField(std::string& material, std::string_view field) {
  const uint64_t size = field.size();
  material.append(reinterpret_cast<const char*>(&size), sizeof size);
  material.append(field);
}

nlohmann::json ToJson(const CompileResult& result) {
  nlohmann::json resources = nlohmann::json::array();
  for (const v1::KernelResources& r : result.resources) {
    resources.push_back({{"arch", r.arch()}, {"kernel_name", r.kernel_name()}, {"registers", r.registers()},
                         {"shared_bytes", r.shared_bytes()}, {"stack_bytes", r.stack_bytes()},
                         {"spill_bytes", r.spill_bytes()}});
  }
  return {{"format", kFormatVersion}, {"key", result.cache_key}, {"ok", result.ok}, {"failure", result.failure},
          {"log", result.log}, {"compile_seconds", result.seconds}, {"resources", resources}};
}

// The stored result and the library's recorded hash (empty for failed compiles).
std::optional<CompileResult> FromJson(const nlohmann::json& j, std::string& library_sha256) {
  if (!j.is_object() || j.value("format", 0) != kFormatVersion) return std::nullopt;
  CompileResult result;
  library_sha256 = j.value("library_sha256", std::string());
  result.ok = j.at("ok").get<bool>();
  result.failure = j.at("failure").get<std::string>();
  result.log = j.at("log").get<std::string>();
  result.cache_key = j.at("key").get<std::string>();
  for (const nlohmann::json& r : j.at("resources")) {
    v1::KernelResources& out = result.resources.emplace_back();
    out.set_arch(r.at("arch").get<std::string>());
    out.set_kernel_name(r.at("kernel_name").get<std::string>());
    out.set_registers(r.at("registers").get<int32_t>());
    out.set_shared_bytes(r.at("shared_bytes").get<int32_t>());
    out.set_stack_bytes(r.at("stack_bytes").get<int32_t>());
    out.set_spill_bytes(r.at("spill_bytes").get<int32_t>());
  }
  return result;
}

}  // namespace

std::string CompileCacheKey(std::string_view source, const std::vector<std::string>& flags,
                            std::string_view toolchain_identity, std::string_view abi_header) {
  std::string material;
  AppendField(material, fmt::format("sparseditto-compile-v{}", kFormatVersion));
  AppendField(material, source);
  AppendField(material, std::to_string(flags.size()));
  for (const std::string& flag : flags) AppendField(material, flag);
  AppendField(material, toolchain_identity);
  AppendField(material, abi_header);
  return Sha256Hex(material);
}

absl::StatusOr<CompileCache> CompileCache::Open(const std::string& directory) {
  if (directory.empty()) return absl::InvalidArgumentError("compile cache: empty folder name");
  std::error_code error;
  for (const char* sub : {"objects", "tmp"}) {
    fs::create_directories(fs::path(directory) / sub, error);
    if (error) {
      return absl::InternalError(fmt::format("compile cache: cannot create {}/{}: {}", directory, sub, error.message()));
    }
  }
  return CompileCache(fs::absolute(directory).lexically_normal().string());
}

std::string CompileCache::EntryStem(const std::string& key) const {
  return (fs::path(directory_) / "objects" / key.substr(0, 2) / key).string();
}

std::string CompileCache::LibraryPath(const std::string& key) const { return EntryStem(key) + ".so"; }

std::optional<CompileResult> CompileCache::ReadEntry(const std::string& key, std::string& library_sha256) const {
  std::ifstream in(EntryStem(key) + ".json");
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::optional<CompileResult> result;
  try {  // nlohmann's accessors throw on a malformed entry; it stays inside this function
    result = FromJson(j, library_sha256);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  if (!result || result->cache_key != key) return std::nullopt;
  if (result->ok && library_sha256.size() != 64) return std::nullopt;  // an ok entry always has one
  return result;
}

std::optional<CompileResult> CompileCache::Lookup(const std::string& key, std::string* warning) const {
  std::string recorded;
  std::optional<CompileResult> result = ReadEntry(key, recorded);
  if (!result) return std::nullopt;
  if (result->ok) {
    result->library_path = LibraryPath(key);
    const std::optional<std::string> library = ReadBytes(result->library_path);
    if (!library) return std::nullopt;
    if (const std::string actual = Sha256Hex(*library); actual != recorded) {
      const std::string message = fmt::format(
          "compile cache entry {} failed its hash check (library {} has SHA-256 {}, its index says {}); "
          "treated as a miss and recompiled",
          key, result->library_path, actual, recorded);
      if (warning != nullptr) {
        *warning = message;
      } else {
        std::cerr << "sparseditto: warning: " << message << "\n";
      }
      return std::nullopt;
    }
  }
  std::error_code touch_error;  // a use: Trim evicts the least recently used first
  fs::last_write_time(EntryStem(key) + ".json", fs::file_time_type::clock::now(), touch_error);
  result->from_cache = true;
  result->seconds = 0;
  return result;
}

absl::Status CompileCache::Store(const std::string& key, const CompileResult& result,
                                 const std::string& built_library) const {
  const std::string stem = EntryStem(key);
  std::error_code error;
  fs::create_directories(fs::path(stem).parent_path(), error);
  if (error) return absl::InternalError(fmt::format("compile cache: mkdir for {}: {}", stem, error.message()));
  CompileResult stored = result;
  stored.cache_key = key;
  std::string library_sha256;
  if (result.ok) {
    const std::optional<std::string> library = ReadBytes(built_library);
    if (!library) return absl::InternalError(fmt::format("compile cache: cannot read {}", built_library));
    library_sha256 = Sha256Hex(*library);
    fs::rename(built_library, stem + ".so", error);
    if (error) return absl::InternalError(fmt::format("compile cache: rename {}: {}", built_library, error.message()));
  }
  absl::StatusOr<std::string> scratch = MakeScratchDirectory();
  if (!scratch.ok()) return scratch.status();
  const std::string temp = *scratch + "/entry.json";
  {
    nlohmann::json entry = ToJson(stored);
    if (result.ok) entry["library_sha256"] = library_sha256;
    std::ofstream out(temp);
    out << entry.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);  // logs may not be UTF-8
    if (!out.flush()) return absl::InternalError(fmt::format("compile cache: cannot write {}", temp));
  }
  fs::rename(temp, stem + ".json", error);
  fs::remove_all(*scratch);
  if (error) return absl::InternalError(fmt::format("compile cache: rename {}: {}", temp, error.message()));
  return absl::OkStatus();
}

absl::Status CompileCache::CopyVerifiedLibrary(const std::string& key, const std::string& destination) const {
  std::string recorded;
  const std::optional<CompileResult> entry = ReadEntry(key, recorded);
  if (!entry || !entry->ok) return absl::NotFoundError(fmt::format("compile cache: no library for key {}", key));
  const std::optional<std::string> library = ReadBytes(LibraryPath(key));
  if (!library) return absl::NotFoundError(fmt::format("compile cache: cannot read {}", LibraryPath(key)));
  if (const std::string actual = Sha256Hex(*library); actual != recorded) {
    return absl::DataLossError(fmt::format("compile cache entry {} failed its hash check (library has SHA-256 {}, "
                                           "its index says {})",
                                           key, actual, recorded));
  }
  return WriteNewReadOnlyFile(destination, *library);
}

absl::StatusOr<CompileCache::TrimStats> CompileCache::Trim(uint64_t max_bytes, std::chrono::seconds min_age) const {
  struct Entry {
    fs::file_time_type used;
    uint64_t bytes;
    std::string stem;
  };
  const auto cutoff = fs::file_time_type::clock::now() - min_age;
  std::vector<Entry> entries;
  TrimStats stats;
  std::error_code error;
  fs::recursive_directory_iterator it(fs::path(directory_) / "objects", error), end;
  if (error) return absl::InternalError(fmt::format("compile cache: cannot list {}/objects: {}", directory_, error.message()));
  for (; it != end; it.increment(error)) {
    if (error) break;  // an entry vanished under us: trim what was listed
    if (it->path().extension() != ".json") continue;
    std::error_code e;
    const fs::path stem = fs::path(it->path()).replace_extension();
    Entry entry{fs::last_write_time(it->path(), e), 0, stem.string()};
    if (e) continue;
    entry.bytes = fs::file_size(it->path(), e);
    const uint64_t library = fs::file_size(stem.string() + ".so", e);
    if (!e) entry.bytes += library;
    entries.push_back(std::move(entry));
  }
  stats.entries_before = static_cast<int64_t>(entries.size());
  for (const Entry& entry : entries) stats.bytes_before += entry.bytes;
  stats.bytes_after = stats.bytes_before;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& entry : entries) {
    if (stats.bytes_after <= max_bytes || entry.used >= cutoff) break;
    std::error_code e;
    fs::remove(entry.stem + ".json", e);  // the .json first: without it the entry is a miss
    fs::remove(entry.stem + ".so", e);
    stats.bytes_after -= entry.bytes;
    ++stats.entries_removed;
  }
  for (fs::directory_iterator scratch(fs::path(directory_) / "tmp", error); !error && scratch != fs::directory_iterator();
       scratch.increment(error)) {
    std::error_code e;
    if (fs::last_write_time(scratch->path(), e) < cutoff && !e && fs::remove_all(scratch->path(), e) > 0) ++stats.scratch_removed;
  }
  return stats;
}

absl::StatusOr<std::string> CompileCache::MakeScratchDirectory() const {
  std::string path = (fs::path(directory_) / "tmp" / "compile-XXXXXX").string();
  if (mkdtemp(path.data()) == nullptr) {
    return absl::InternalError(fmt::format("compile cache: mkdtemp in {}/tmp failed", directory_));
  }
  return path;
}

}  // namespace sparseditto
