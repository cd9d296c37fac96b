// Where an evaluator worker keeps what it must not lose (evaluator_node.h): each finished result until
// the coordinator has answered its report, and the worker's session id, so that a worker killed (or
// cut off) and started again reconnects as the same session and still reports what it finished.
// One file per result in `dir` (written to a temporary name and renamed, so a kill leaves the old or
// the new file, never half of one); an empty dir keeps everything in memory only.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "services.pb.h"

namespace sparseditto {

class ResultSpool {
 public:
  // Reads what `dir` holds (made if missing). A file that does not parse is set aside as
  // "<name>.bad" (named in Open's log, not fatal). Errors: the folder cannot be made or read.
  static absl::StatusOr<std::unique_ptr<ResultSpool>> Open(const std::string& dir);

  // Keeps `report` (replacing one for the same job and attempt). Internal: the file cannot be written
  // (the report is still kept in memory).
  absl::Status Put(const v1::ReportEvaluationRequest& report);
  // Forgets the report of `job_id`'s attempt `attempt` (the coordinator answered it).
  void Remove(const std::string& job_id, int attempt);
  // Every report kept, oldest first.
  std::vector<v1::ReportEvaluationRequest> Pending() const;

  // The session id saved by SaveSession ("" when none).
  std::string Session() const;
  absl::Status SaveSession(const std::string& session_id);

  // What Open set aside, for the worker's log.
  const std::vector<std::string>& set_aside() const { return set_aside_; }

 private:
  explicit ResultSpool(std::string dir) : dir_(std::move(dir)) {}
  std::string FileFor(const std::string& key) const;
  absl::Status WriteFile(const std::string& path, const std::string& bytes) const;

  const std::string dir_;
  std::vector<std::string> set_aside_;
  mutable absl::Mutex mutex_;
  // key (sha256 of job id and attempt) -> (sequence, report)
  std::map<std::string, std::pair<int64_t, v1::ReportEvaluationRequest>> reports_ ABSL_GUARDED_BY(mutex_);
  int64_t next_sequence_ ABSL_GUARDED_BY(mutex_) = 0;
  std::string session_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace sparseditto
