// Several runners on one GPU (`sparseditto search --per-gpu K`): a candidate's timing, the baselines'
// timing and the bracket's calibration need the GPU to themselves, while the other GPU stages (smoke,
// correctness, recheck, a host's start and teardown) of different runners may overlap. A
// reader-writer lock between the processes, over flock(2) on two files per GPU in a folder they share:
// `main` (shared: other GPU work; exclusive: timing) and a `turnstile` every acquirer passes through,
// so a runner waiting to time is not starved by a stream of others' smoke stages. A process that dies
// loses its locks with it (the kernel drops them), so no lock outlives its holder.
//
// Moves between modes release what is held before waiting for the turnstile (shared -> exclusive
// lets go of the shared lock first), so two runners that both go from shared to exclusive cannot
// deadlock; the price is that a runner's shared work and its timing are not one atomic hold, which
// nothing needs: each stage's GPU work is finished before its stage ends.
// Thread-compatible: one thread (the runner's) drives a GpuShare.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace sparseditto {

class GpuShare {
 public:
  enum class Mode { kNone, kShared, kExclusive };

  // Opens (creating, mode 0600) "<dir>/gpu-<gpu_id>.lock" and ".turnstile". Errors: InvalidArgument for
  // an empty dir or an id with characters other than [A-Za-z0-9_-]; the open's error (naming the path).
  static absl::StatusOr<std::unique_ptr<GpuShare>> Open(const std::string& dir, const std::string& gpu_id);
  ~GpuShare();  // closes the files (the kernel drops the locks)
  GpuShare(const GpuShare&) = delete;
  GpuShare& operator=(const GpuShare&) = delete;

  // Moves to `mode`, blocking until it is granted. Errors: flock's (Internal, naming the file); the
  // mode is then kNone.
  absl::Status Hold(Mode mode);
  Mode mode() const { return mode_; }

  // Holds `mode` for a scope and goes back to the mode before at its end. Null share: nothing.
  class Scoped {
   public:
    Scoped(GpuShare* share, Mode mode);
    ~Scoped();
    Scoped(const Scoped&) = delete;
    Scoped& operator=(const Scoped&) = delete;
    const absl::Status& status() const { return status_; }

   private:
    GpuShare* share_;
    Mode before_ = Mode::kNone;
    absl::Status status_;
  };

 private:
  GpuShare(int main_fd, int turnstile_fd, std::string path) : main_(main_fd), turnstile_(turnstile_fd), path_(std::move(path)) {}
  int main_;
  int turnstile_;
  std::string path_;  // of `main`, for errors
  Mode mode_ = Mode::kNone;
};

}  // namespace sparseditto
