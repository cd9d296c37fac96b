#include "evaluator/compile/compile_cache.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
constexpr int kFormatVersion = 1;

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

std::optional<CompileResult> FromJson(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", 0) != kFormatVersion) return std::nullopt;
  CompileResult result;
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

std::optional<CompileResult> CompileCache::Lookup(const std::string& key) const {
  std::ifstream in(EntryStem(key) + ".json");
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::optional<CompileResult> result;
  try {  // nlohmann's accessors throw on a malformed entry; it stays inside this function
    result = FromJson(j);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  if (!result || result->cache_key != key) return std::nullopt;
  if (result->ok) {
    result->library_path = LibraryPath(key);
    if (!fs::exists(result->library_path)) return std::nullopt;
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
  if (result.ok) {
    fs::rename(built_library, stem + ".so", error);
    if (error) return absl::InternalError(fmt::format("compile cache: rename {}: {}", built_library, error.message()));
  }
  absl::StatusOr<std::string> scratch = MakeScratchDirectory();
  if (!scratch.ok()) return scratch.status();
  const std::string temp = *scratch + "/entry.json";
  CompileResult stored = result;
  stored.cache_key = key;
  {
    std::ofstream out(temp);
    out << ToJson(stored).dump(1, ' ', false, nlohmann::json::error_handler_t::replace);  // logs may not be UTF-8
    if (!out.flush()) return absl::InternalError(fmt::format("compile cache: cannot write {}", temp));
  }
  fs::rename(temp, stem + ".json", error);
  fs::remove_all(*scratch);
  if (error) return absl::InternalError(fmt::format("compile cache: rename {}: {}", temp, error.message()));
  return absl::OkStatus();
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
