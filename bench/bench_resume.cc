#include "bench/bench_resume.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "fmt/format.h"

namespace sparseditto {

absl::StatusOr<std::vector<BenchRow>> ReadBenchRows(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("{}: no such file", path));
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError(fmt::format("{}: not JSON", path));
  absl::StatusOr<std::vector<BenchRow>> rows = BenchRowsFromJson(doc);
  if (!rows.ok()) return absl::InvalidArgumentError(fmt::format("{}: {}", path, std::string(rows.status().message())));
  return rows;
}

bool BenchTaskDone(const v1::Task& task, const std::vector<BenchRow>& rows) {
  std::set<int64_t> have;
  for (const BenchRow& r : rows) {
    if (r.task == task.name()) have.insert(r.n);
  }
  return std::all_of(task.n().begin(), task.n().end(), [&have](int64_t n) { return have.contains(n); });
}

std::vector<BenchRow> OrderLikeSuite(const std::vector<BenchRow>& rows, const std::vector<v1::Task>& tasks) {
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < tasks.size(); ++i) position.emplace(tasks[i].name(), i);
  std::vector<BenchRow> out = rows;
  std::stable_sort(out.begin(), out.end(), [&position](const BenchRow& a, const BenchRow& b) {
    auto rank = [&position](const BenchRow& r) {
      auto it = position.find(r.task);
      return it == position.end() ? position.size() : it->second;
    };
    return rank(a) < rank(b);
  });
  return out;
}

}  // namespace sparseditto
