// Resuming a bench that was cut short (`sparseditto bench --resume`): the rows its bench.json holds, which
// tasks they finish, and the merged rows in the suite's order. A bench writes bench.json after every task
// (atomically), so a bench stopped by a time limit loses at most the task it was on. Pure functions
// except ReadBenchRows (reads a file); thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/bench_table.h"
#include "task.pb.h"

namespace sparseditto {

// The rows of the bench.json at `path`. NotFound when there is no such file; InvalidArgument naming the
// path (and, from BenchRowsFromJson, the row and the field) when it is not JSON or not bench rows.
absl::StatusOr<std::vector<BenchRow>> ReadBenchRows(const std::string& path);

// True when `rows` hold a row of `task` for every one of its n.
bool BenchTaskDone(const v1::Task& task, const std::vector<BenchRow>& rows);

// `rows` ordered like `tasks` (by task, each task's rows as they were); rows of tasks not in `tasks`
// come last, in their order.
std::vector<BenchRow> OrderLikeSuite(const std::vector<BenchRow>& rows, const std::vector<v1::Task>& tasks);

}  // namespace sparseditto
