#include "evaluator/node/result_spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/durable_file.h"
#include "common/sha256.h"
#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr char kReportSuffix[] = ".report";
constexpr char kSessionFile[] = "session";

std::string KeyOf(const std::string& job_id, int attempt) { return Sha256Hex(fmt::format("{}\n{}", job_id, attempt)); }

}  // namespace

absl::StatusOr<std::unique_ptr<ResultSpool>> ResultSpool::Open(const std::string& dir) {
  std::unique_ptr<ResultSpool> spool(new ResultSpool(dir));
  if (dir.empty()) return spool;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return absl::InternalError(fmt::format("result spool {}: cannot make it: {}", dir, error.message()));
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::directory_iterator(dir, error); !error && it != std::filesystem::directory_iterator();
       it.increment(error)) {
    files.push_back(it->path());
  }
  if (error) return absl::InternalError(fmt::format("result spool {}: cannot read it: {}", dir, error.message()));
  // Oldest first by modification time, then name: the order they were finished in, near enough.
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    std::error_code ignored;
    const auto ta = std::filesystem::last_write_time(a, ignored), tb = std::filesystem::last_write_time(b, ignored);
    return ta != tb ? ta < tb : a < b;
  });
  for (const std::filesystem::path& file : files) {
    const std::string name = file.filename().string();
    std::ifstream in(file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    if (name == kSessionFile) {
      spool->session_ = bytes.str();
      continue;
    }
    if (!name.ends_with(kReportSuffix)) continue;
    v1::ReportEvaluationRequest report;
    if (!report.ParseFromString(bytes.str()) || report.job_id().empty()) {
      std::filesystem::rename(file, file.string() + ".bad", error);
      spool->set_aside_.push_back(file.string());
      continue;
    }
    const std::string key = KeyOf(report.job_id(), report.attempt());  // before the move below
    spool->reports_[key] = {spool->next_sequence_++, std::move(report)};
  }
  return spool;
}

std::string ResultSpool::FileFor(const std::string& key) const {
  return (std::filesystem::path(dir_) / (key + kReportSuffix)).string();
}

absl::Status ResultSpool::WriteFile(const std::string& path, const std::string& bytes) const {
  if (absl::Status s = WriteFileDurably(path, bytes); !s.ok()) {
    return absl::InternalError(fmt::format("result spool: {}", s.message()));
  }
  return absl::OkStatus();
}

absl::Status ResultSpool::Put(const v1::ReportEvaluationRequest& report) {
  const std::string key = KeyOf(report.job_id(), report.attempt());
  {
    absl::MutexLock lock(&mutex_);
    reports_[key] = {next_sequence_++, report};
  }
  if (dir_.empty()) return absl::OkStatus();
  return WriteFile(FileFor(key), report.SerializeAsString());
}

void ResultSpool::Remove(const std::string& job_id, int attempt) {
  const std::string key = KeyOf(job_id, attempt);
  {
    absl::MutexLock lock(&mutex_);
    reports_.erase(key);
  }
  if (!dir_.empty()) ::unlink(FileFor(key).c_str());
}

std::vector<v1::ReportEvaluationRequest> ResultSpool::Pending() const {
  absl::MutexLock lock(&mutex_);
  std::vector<std::pair<int64_t, const v1::ReportEvaluationRequest*>> ordered;
  for (const auto& [key, entry] : reports_) ordered.emplace_back(entry.first, &entry.second);
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<v1::ReportEvaluationRequest> out;
  for (const auto& [sequence, report] : ordered) out.push_back(*report);
  return out;
}

std::string ResultSpool::Session() const {
  absl::MutexLock lock(&mutex_);
  return session_;
}

absl::Status ResultSpool::SaveSession(const std::string& session_id) {
  {
    absl::MutexLock lock(&mutex_);
    session_ = session_id;
  }
  if (dir_.empty()) return absl::OkStatus();
  return WriteFile((std::filesystem::path(dir_) / kSessionFile).string(), session_id);
}

}  // namespace sparseditto
