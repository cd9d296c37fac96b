// The files of a search run on disk, written from what the population store holds (the store is the
// truth; every file here can be deleted and written again from it):
//
//   runs/<run>/provenance.json                    the run record's provenance (GPU, driver, CUDA, nvcc,
//                                                 project revision, mutator models)
//   runs/<run>/<task>/candidates/<id>/kernel.cu   the candidate's source
//                                     compile.log, verify.json, benchmark.json, result.json
//                                                 its evaluation (evaluator/report.h), once evaluated
//                                     prompt.md, response.md   when an LLM made it (Candidate.prompt,
//                                                 Candidate.response non-empty)
//   runs/<run>/<task>/best/kernel.cu, report.json the best correct candidate and its report
//
// Atomicity: a candidate's folder and best/ are built in a temporary sibling folder and renamed into
// place, and provenance.json is written to a temporary file and renamed, so a reader (or a crash) never
// sees half a folder or half a file. Replacing an existing folder is two renames: between them the
// folder is briefly absent (never half-written).
// Every path is made by PathInside (task/run_paths.h) from task names that CheckTaskName accepts, so
// nothing is written, renamed or removed outside <run_dir>, whatever the store holds.
// Errors: NotFound when the store lacks the run, task or candidate; InvalidArgument for a task name or
// candidate id that cannot name a folder inside the run (nothing is written for it); Unavailable
// naming the file or folder that could not be written; DataLoss when the stored coordinator state
// does not parse.
// Thread-safety: the functions may run concurrently for different tasks; not for the same folder.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "population_store/population_store.h"

namespace sparseditto {

// <run_dir>/<task>/candidates/<candidate id>/.
absl::Status WriteCandidateArtifacts(const PopulationStore& store, const std::string& run_id,
                                     const std::string& candidate_id, const std::string& run_dir);

// <run_dir>/<task>/best/ for the best candidate in the task's stored state; removes a stale best/ when
// no candidate is correct (or the task has no state yet).
absl::Status WriteBestArtifacts(const PopulationStore& store, const std::string& run_id,
                                const std::string& task_name, const std::string& run_dir);

// Every stored candidate of the task, then best/: regenerates the task's folder from the store.
absl::Status WriteTaskArtifacts(const PopulationStore& store, const std::string& run_id,
                                const std::string& task_name, const std::string& run_dir);

// <run_dir>/provenance.json from the run record (its provenance_json, pretty-printed, with run id,
// creation time and project revision added).
absl::Status WriteProvenance(const PopulationStore& store, const std::string& run_id, const std::string& run_dir);

// Opens the store of the run at <run_dir>/store for a search (`options` with create_if_missing set),
// making it only for a new run. A run folder that holds the files of an earlier run
// (provenance.json, which a run writes before anything else) but no store has lost its store (the
// truth of the run): FailedPrecondition says so instead of starting the run over in a fresh store. An
// emptied store folder is refused by PopulationStore::Open itself. Errors: InvalidArgument when the
// store's path would leave <run_dir> (PathInside); PopulationStore::Open's.
absl::StatusOr<std::unique_ptr<PopulationStore>> OpenRunStore(const std::string& run_dir,
                                                              const PopulationStoreOptions& options);

// Writes `contents` to `path` through a temporary file in the same folder and a rename.
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace sparseditto
