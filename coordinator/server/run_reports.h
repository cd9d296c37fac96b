// What the client service reads from a run's store (its folder runs/<run>/, opened read-only, so it
// works while the search writes): each task's status, and the exported kernels. The run's id in its
// store is the run's name (the coordinator creates it so).
// Thread-safety: pure functions of the store; safe to call concurrently.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "services.pb.h"
#include "task.pb.h"

namespace sparseditto {

// One TaskStatus per population of `tasks` (a task with several archs is one per arch, in its arch
// order, task/arch_populations.h), in their order, with its arch and the GPUs its evaluations ran on:
// "pending" for each while the run's store does not exist yet (a queued run). Errors: the store's (a store that exists but does not open), DataLoss for
// a stored search state that does not parse.
absl::StatusOr<std::vector<v1::TaskStatus>> ReadTaskStatuses(
    const std::string& run_dir, const std::string& run,
    const google::protobuf::RepeatedPtrField<v1::Task>& tasks);

// The best kernel of each population of `tasks` (ExportBestKernel, kernel_export.h) as files
// "<population>.cu"; one with none gets a line in `problems` instead. FailedPrecondition: the run has no store yet (not started).
absl::StatusOr<v1::ExportRunResponse> ExportRunKernels(const std::string& run_dir, const std::string& run,
                                                       const google::protobuf::RepeatedPtrField<v1::Task>& tasks);

}  // namespace sparseditto
