// A search's best kernel as a standalone .cu file for use outside SparseDitto (`sparseditto export`):
// the candidate's source under a header comment that says what it is for (task, shape, dtype, pattern,
// n values), how it did (per-n median time against every baseline, fitness), where it was found
// (run, candidate, provenance), which checks it passed, and how to call it through the ABI of
// kernel_abi/sparseditto_kernel.h. `result` is the evaluation to quote (the finalist one when the
// kernel passed the finalist checks: its run_log holds their sanitizer lines). `finalist_note`, when not
// empty, replaces the "not run" line about the finalist checks (e.g. why the search's best failed them).
// Pure formatting; thread-safe.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "eval_result.pb.h"
#include "store.pb.h"
#include "task.pb.h"

namespace sparseditto {

class PopulationStore;

std::string ExportedKernel(const store::RunRecord& run, const v1::Task& task, const v1::Candidate& best,
                           const v1::EvalResult& result, const std::string& finalist_note = "");

// The exported .cu text of a task's kernel as the store holds it: the best candidate that passed the
// finalist checks (quoting that evaluation), else the search's best (its note says whether the checks
// failed or did not run). Errors: NotFound "no correct candidate yet"; DataLoss for a stored finalist
// result that does not parse; InvalidArgument for a stored task name that cannot name a file; the
// store's errors. Reads only; safe to call while the search writes (a read-only store).
absl::StatusOr<std::string> ExportBestKernel(const PopulationStore& store, const store::RunRecord& run,
                                             const std::string& task_name);

}  // namespace sparseditto
