#include "kernels/seed_library.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "common/dtype.h"
#include "fmt/format.h"
#include "task/task_names.h"

namespace sparseditto {
namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// "key=[a, b] key2=[c]" -> {key: [a, b], key2: [c]}; false when anything else is left over.
bool SplitKeys(const std::string& text, std::map<std::string, std::vector<std::string>>* out) {
  static const std::regex pair(R"(\s*([a-z_]+)\s*=\s*\[([^\]\[=]*)\]\s*)");
  size_t consumed = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pair); it != std::sregex_iterator(); ++it) {
    if (static_cast<size_t>(it->position()) != consumed) return false;
    consumed += it->length();
    std::vector<std::string>& values = (*out)[(*it)[1].str()];
    std::stringstream list((*it)[2].str());
    for (std::string item; std::getline(list, item, ',');) {
      if (!Trim(item).empty()) values.push_back(Trim(item));
    }
  }
  return !out->empty() && Trim(std::string_view(text).substr(consumed)).empty();
}

}  // namespace

std::vector<v1::Layout> DeclaredLayouts(const std::string& source) {
  static const std::regex nk(
      R"(sparseditto_layouts\s*\(\s*(void)?\s*\)\s*\{[^}]*SPARSEDITTO_LAYOUT_BIT\s*\(\s*SD_LAYOUT_NK\s*\))");
  std::vector<v1::Layout> layouts = {v1::LAYOUT_KN};
  if (std::regex_search(source, nk)) layouts.push_back(v1::LAYOUT_NK);
  return layouts;
}

absl::StatusOr<SeedKernel> ParseSeed(std::string name, std::string source) {
  SeedKernel seed;
  seed.name = std::move(name);
  seed.source = std::move(source);
  auto fail = [&](int line, const std::string& why) {
    return absl::InvalidArgumentError(fmt::format("seed {}: line {}: {}", seed.name, line, why));
  };
  std::istringstream in(seed.source);
  std::string line, metadata;
  int line_number = 0, found_at = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const size_t at = line.find(kSeedMarker);
    if (at == std::string::npos) continue;
    if (found_at != 0) return fail(line_number, fmt::format("second {} line (first on line {})", kSeedMarker, found_at));
    found_at = line_number;
    metadata = line.substr(at + kSeedMarker.size());
  }
  if (found_at == 0) return fail(0, fmt::format("no '// {} families=[...] dtypes=[...] archs=[...]' line", kSeedMarker));
  std::map<std::string, std::vector<std::string>> keys;
  if (!SplitKeys(metadata, &keys)) return fail(found_at, "expected key=[v1, v2] pairs");
  for (const auto& [key, values] : keys) {
    if (key != "families" && key != "dtypes" && key != "archs" && key != "block_sizes" && key != "nm") {
      return fail(found_at, fmt::format("unknown key '{}'", key));
    }
  }
  for (const char* required : {"families", "dtypes", "archs"}) {
    if (keys[required].empty()) return fail(found_at, fmt::format("'{}' is required and must not be empty", required));
  }
  for (const std::string& f : keys["families"]) {
    auto family = ParsePatternFamilyName(f);
    if (!family) return fail(found_at, fmt::format("unknown family '{}'", f));
    seed.families.push_back(*family);
  }
  for (const std::string& d : keys["dtypes"]) {
    auto dtype = ParseDtype(d);
    if (!dtype.ok()) return fail(found_at, std::string(dtype.status().message()));
    seed.dtypes.push_back(*dtype);
  }
  seed.archs = keys["archs"];
  for (const std::string& b : keys["block_sizes"]) {
    int size = 0;
    if (std::sscanf(b.c_str(), "%d", &size) != 1 || size < 1) return fail(found_at, fmt::format("bad block size '{}'", b));
    seed.block_sizes.push_back(size);
  }
  for (const std::string& nm : keys["nm"]) {
    int n = 0, m = 0;
    if (std::sscanf(nm.c_str(), "%d:%d", &n, &m) != 2 || n < 1 || m <= n) {
      return fail(found_at, fmt::format("bad n:m '{}'", nm));
    }
    seed.nm.emplace_back(n, m);
  }
  seed.layouts = DeclaredLayouts(seed.source);
  return seed;
}

absl::StatusOr<std::vector<SeedKernel>> LoadSeedLibrary(const std::string& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return absl::NotFoundError(fmt::format("no seed folder {}", dir));
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".cu" && entry.path().stem().string().find("_test") == std::string::npos) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<SeedKernel> seeds;
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto seed = ParseSeed(path.stem().string(), ss.str());
    if (!seed.ok()) return seed.status();
    seed->path = path.string();
    seeds.push_back(*std::move(seed));
  }
  return seeds;
}

bool ArchBuildsFor(const std::vector<std::string>& declared, const std::string& target) {
  if (std::find(declared.begin(), declared.end(), target) != declared.end()) return true;
  const bool arch_specific = target.size() > 1 && target.back() == 'a';
  const std::string base = arch_specific ? target.substr(0, target.size() - 1) : std::string();
  return arch_specific && std::find(declared.begin(), declared.end(), base) != declared.end();
}

bool SeedAppliesTo(const SeedKernel& seed, const v1::Task& task) {
  auto has = [](const auto& list, const auto& value) {
    return std::find(list.begin(), list.end(), value) != list.end();
  };
  if (!has(seed.families, task.pattern().family()) || !has(seed.dtypes, task.dtype())) return false;
  if (!has(seed.layouts, task.layout())) return false;
  for (const std::string& arch : task.arch()) {
    if (!ArchBuildsFor(seed.archs, arch)) return false;
  }
  const v1::PatternSpec& p = task.pattern();
  if (p.family() == v1::PATTERN_FAMILY_BLOCK && !seed.block_sizes.empty()) {
    if (p.block_rows() != p.block_cols() || !has(seed.block_sizes, p.block_rows())) return false;
  }
  if (p.family() == v1::PATTERN_FAMILY_N_M && !seed.nm.empty()) {
    if (!has(seed.nm, std::pair<int, int>(p.n(), p.m()))) return false;
  }
  return true;
}

}  // namespace sparseditto
