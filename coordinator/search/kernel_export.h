// A search's best kernel as a standalone .cu file for use outside SparseDitto (`sparseditto export`):
// the candidate's source (a composed dispatch plan when that is what the search kept), wrapped with
// per-task names and a weight check at prepare (export_wrapper.h), under a header comment that says what it is for (task, shape, dtype, pattern,
// n values), how it did (per-n median time against every baseline, fitness), where it was found
// (run, candidate, provenance), which checks it passed, and how to call it through the ABI of
// kernel_abi/sparseditto_kernel.h. `result` is the evaluation to quote (the finalist one when the
// kernel passed the finalist checks: its run_log holds their sanitizer lines). `finalist_note`, when not
// empty, replaces the "not run" line about the finalist checks (e.g. why the search's best failed them).
// `searched` is the task's matrix: its shape, and for a matrix file its structure (the weight check).
// InvalidArgument when the source cannot be wrapped (WrapForExport). Pure formatting; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "eval_result.pb.h"
#include "matrix/csr_matrix.h"
#include "store.pb.h"
#include "task.pb.h"

namespace sparseditto {

class PopulationStore;

absl::StatusOr<std::string> ExportedKernel(const store::RunRecord& run, const v1::Task& task, const v1::Candidate& best,
                                           const v1::EvalResult& result, const CsrMatrix& searched,
                                           const std::string& finalist_note = "");

// What a task's export writes: <task>.cu, <task>.h, and its line of build.sh.
struct ExportedTask {
  std::string symbol;                   // ExportSymbol(task name): the entries are <symbol>_prepare, ...
  std::string cu;                       // ExportedKernel's text
  std::string declarations;             // ExportDeclarations(symbol)
  std::vector<std::string> nvcc_flags;  // ExportNvccFlags(task)
};

// The export of a task's kernel as the store holds it: the best candidate that passed the
// finalist checks (quoting that evaluation), else the search's best (its note says whether the checks
// failed or did not run). Errors: NotFound "no correct candidate yet"; DataLoss for a stored finalist
// result that does not parse; InvalidArgument for a stored task name that cannot name a file, a source
// that cannot be wrapped or a bad arch; FailedPrecondition when the task's matrix file (needed for the
// weight check of a kernel searched on one real matrix) does not read; the store's errors. Reads only; safe to call while the search writes (a read-only store).
absl::StatusOr<ExportedTask> ExportBestKernel(const PopulationStore& store, const store::RunRecord& run,
                                               const std::string& task_name);

}  // namespace sparseditto
