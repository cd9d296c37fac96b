// The benchmark table of `sparseditto bench`: one row per (task, n) with the best correct kernel, its
// time, every baseline's time, the speedup over the best baseline and the fraction of the physical
// limit reached; printed as text and written as JSON and CSV (which also carry every correct seed's
// time, fastest first: where each strategy stands, not only the winner). Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eval_result.pb.h"
#include "nlohmann/json.hpp"
#include "runner.pb.h"
#include "task.pb.h"

namespace sparseditto {

// The least time the product can take on this device: the larger of moving the fewest bytes (A's
// nonzero values once, B once, C once; indices not counted) at the measured copy bandwidth, and doing
// 2 * nnz * n flops at the measured dense rate (tensor cores for fp16/bf16, plain fp32 for fp32).
// 0 when the limits were not measured.
double PhysicalLimitMs(v1::Dtype dtype, int64_t rows, int64_t cols, int64_t nnz, int64_t n,
                       const v1::SetupTaskReply& device);

struct BenchRow {
  std::string task;
  std::string dtype;
  int64_t n = 0;
  std::string best_kernel;           // empty: no seed was correct
  double kernel_ms = 0;
  std::vector<std::pair<std::string, double>> seeds_ms;  // every correct seed timed at n, fastest first
                                                         // (ties in evaluation order); front() is the best
  // Seeds only screened at n (bench --screen-margin): a short timing that was beyond the margin of the task's best
  // full timing; never the best kernel, fastest first. Empty when every seed was timed in full.
  std::vector<std::pair<std::string, double>> screened_ms;
  std::vector<std::pair<std::string, double>> baselines_ms;  // name, ms (< 0: absent)
  double speedup_over_best_baseline = 0;
  double speedup_over_dense = 0;
  double fraction_of_limit = 0;      // limit time / kernel time
  std::string failures;              // seeds that failed, with their category
  bool shared_gpu = false;           // a time at n (a seed's or a baseline's) was taken on a shared GPU
                                     // (TimedOnSharedGpu): the row's times are not comparable
};

// Rows for one task from the evaluations of its seeds (any order). The best kernel per n is the
// fastest correct seed at that n (a seed that was only SLOWER is correct) among those timed in full; a result
// that is a timing screen (timing_screen) goes to screened_ms.
std::vector<BenchRow> MakeBenchRows(const v1::Task& task, const v1::SetupTaskReply& setup,
                                    const std::vector<v1::EvalResult>& results, int64_t rows, int64_t cols);

// The candidate path's own cost as these rows measured it: the seed dense_cublas makes the baseline cublas_dense's
// own cuBLAS call, so its full timing minus the baseline's, over the rows that have both and a baseline time
// under kHarnessOffsetBelowMs, is what a candidate pays that a baseline does not (on an H100 about +0.85 us at
// 6-22 us kernels, but -3 to 0 us at 90 us: docs/results/session_h100_2026-12-07b.md, so long rows are left out).
// Rows timed on a shared GPU are left out. count 0 when no row qualifies.
inline constexpr double kHarnessOffsetBelowMs = 0.05;
struct HarnessOffset {
  int count = 0;
  double median_us = 0, min_us = 0, max_us = 0;
};
HarnessOffset MeasuredHarnessOffset(const std::vector<BenchRow>& rows);

// The table; a row timed on a shared GPU ends in "shared GPU", and a line under the table counts them. With at
// least 3 rows measuring it, a note gives the harness offset, so that speedups over baselines of a few
// microseconds are read knowing they are understated (offset > 0) or overstated (< 0) by about that much.
std::string FormatBenchTable(const std::vector<BenchRow>& rows);
std::string BenchCsv(const std::vector<BenchRow>& rows);
// An array, one object a row; objects keep their fields (and baselines_ms its baselines) in order.
nlohmann::ordered_json BenchJson(const std::vector<BenchRow>& rows);
// The rows of a bench.json that BenchJson wrote, as they were (`sparseditto bench --resume` keeps them).
// InvalidArgument naming the row (0-based) and the field when `doc` is not such an array.
absl::StatusOr<std::vector<BenchRow>> BenchRowsFromJson(const nlohmann::ordered_json& doc);

// Geometric mean of speedup_over_best_baseline (or over a named baseline when `baseline` is set),
// over rows with a correct kernel; 0 when none.
double GeomeanSpeedup(const std::vector<BenchRow>& rows, const std::string& baseline = "");

}  // namespace sparseditto
