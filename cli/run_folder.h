// Where a run lives: runs/<run>/ holds store/ (the population store) and the artifacts
// (coordinator/search/run_artifacts.h). `sparseditto status RUN` and `export RUN` take a run name
// (looked up under --runs-dir) or the run's folder itself.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "population_store/population_store.h"
#include "store.pb.h"

namespace sparseditto {

struct RunFolder {
  std::string dir;     // runs/<run>
  std::string run_id;  // the folder's name: the run id in its store
  std::string store() const { return dir + "/store"; }
};

// `run` itself when it is a folder holding store/, else <runs_dir>/<run>. NotFound (naming both
// places looked at) when neither holds a store.
absl::StatusOr<RunFolder> FindRunFolder(const std::string& run, const std::string& runs_dir);

// A run opened for reading: its folder, its store (read-only), its record and its tasks.
struct OpenedRun {
  RunFolder folder;
  std::unique_ptr<PopulationStore> store;
  store::RunRecord record;
  std::vector<v1::Task> tasks;
};

// FindRunFolder, PopulationStore::OpenReadOnly, FindRunRecord and the run's tasks, with their errors
// (each message names the run or the store).
absl::StatusOr<OpenedRun> OpenRun(const std::string& run, const std::string& runs_dir);

// The record of the folder's run in its store: the run named like the folder, else the store's only
// run. NotFound naming the runs the store holds otherwise; the store's errors.
absl::StatusOr<store::RunRecord> FindRunRecord(const PopulationStore& store, const RunFolder& folder);

}  // namespace sparseditto
