#include "bench/bench_table.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/dtype.h"
#include "common/eval_outcome.h"
#include "common/shared_gpu.h"
#include "fmt/format.h"

namespace sparseditto {

double PhysicalLimitMs(v1::Dtype dtype, int64_t rows, int64_t cols, int64_t nnz, int64_t n,
                       const v1::SetupTaskReply& device) {
  if (device.copy_bandwidth_gbs() <= 0) return 0;
  const double elem = DtypeBytes(dtype);
  const double bytes = elem * (static_cast<double>(nnz) + static_cast<double>(cols) * n + static_cast<double>(rows) * n);
  const double bytes_ms = bytes / (device.copy_bandwidth_gbs() * 1e9) * 1e3;
  const double tflops = dtype == v1::DTYPE_FP32 ? device.fp32_tflops() : device.tensor_tflops();
  const double flops_ms = tflops > 0 ? 2.0 * nnz * n / (tflops * 1e12) * 1e3 : 0;
  return std::max(bytes_ms, flops_ms);
}

std::vector<BenchRow> MakeBenchRows(const v1::Task& task, const v1::SetupTaskReply& setup,
                                    const std::vector<v1::EvalResult>& results, int64_t rows, int64_t cols) {
  std::string failures;
  for (const auto& r : results) {
    if (!IsCorrect(r)) {
      const std::string category = v1::FailureCategory_Name(r.failure());
      failures += fmt::format("{}{}:{}", failures.empty() ? "" : " ", r.candidate_id(),
                              category.substr(category.find("CATEGORY_") + 9));
    }
  }
  // The quickest idle trial of the whole bench (seeds and baselines): the quiet GPU's reference.
  double quiet_ms = 0;
  for (const auto& r : results) {
    for (const auto& t : r.timings()) NoteQuickestIdleTrial(t, &quiet_ms);
  }
  for (const auto& [n, list] : setup.baselines()) {
    for (const auto& b : list.baselines()) NoteQuickestIdleTrial(b.timing(), &quiet_ms);
  }
  std::vector<BenchRow> out;
  for (int64_t n : task.n()) {
    BenchRow row;
    row.task = task.name();
    row.dtype = std::string(DtypeName(task.dtype()));
    row.n = n;
    row.failures = failures;
    for (const auto& r : results) {
      if (!IsCorrect(r)) continue;
      double ms = 0;  // the seed's fastest timing at n (one per n in practice)
      for (const auto& t : r.timings()) {
        if (t.n() != n) continue;
        if (t.median_ms() > 0 && (ms == 0 || t.median_ms() < ms)) ms = t.median_ms();
        if (TimedOnSharedGpu(t, quiet_ms)) row.shared_gpu = true;
      }
      if (ms > 0) row.seeds_ms.emplace_back(r.candidate_id(), ms);
    }
    std::stable_sort(row.seeds_ms.begin(), row.seeds_ms.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    if (!row.seeds_ms.empty()) row.best_kernel = row.seeds_ms.front().first, row.kernel_ms = row.seeds_ms.front().second;
    double best_baseline = 0, dense = 0;
    if (auto it = setup.baselines().find(n); it != setup.baselines().end()) {
      for (const auto& b : it->second.baselines()) {
        const double ms = b.available() ? b.timing().median_ms() : -1;
        if (b.available() && TimedOnSharedGpu(b.timing(), quiet_ms)) row.shared_gpu = true;
        row.baselines_ms.emplace_back(b.name(), ms);
        if (ms > 0 && (best_baseline == 0 || ms < best_baseline)) best_baseline = ms;
        if (ms > 0 && b.name() == "cublas_dense") dense = ms;
      }
    }
    if (row.kernel_ms > 0) {
      row.speedup_over_best_baseline = best_baseline > 0 ? best_baseline / row.kernel_ms : 0;
      row.speedup_over_dense = dense > 0 ? dense / row.kernel_ms : 0;
      const double nnz = static_cast<double>(setup.matrix_nnz());
      const double limit = PhysicalLimitMs(task.dtype(), rows, cols, static_cast<int64_t>(nnz), n, setup);
      row.fraction_of_limit = limit / row.kernel_ms;
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string FormatBenchTable(const std::vector<BenchRow>& rows) {
  std::string out = fmt::format("{:<44} {:>5} {:>5} {:<22} {:>9}  {:<58} {:>8} {:>8} {:>7}\n", "task", "dtype", "n",
                                "best kernel", "ms", "baselines (ms)", "x best", "x dense", "limit");
  for (const BenchRow& r : rows) {
    std::string baselines;
    for (const auto& [name, ms] : r.baselines_ms) {
      baselines += ms > 0 ? fmt::format("{} {:.4f} ", name, ms) : fmt::format("{} absent ", name);
    }
    out += fmt::format("{:<44} {:>5} {:>5} {:<22} {:>9.4f}  {:<58} {:>8.2f} {:>8.2f} {:>6.0f}%{}\n", r.task, r.dtype, r.n,
                       r.best_kernel.empty() ? "(none correct)" : r.best_kernel, r.kernel_ms, baselines,
                       r.speedup_over_best_baseline, r.speedup_over_dense, 100.0 * r.fraction_of_limit,
                       r.shared_gpu ? "  shared GPU" : "");
  }
  const auto shared = std::count_if(rows.begin(), rows.end(), [](const BenchRow& r) { return r.shared_gpu; });
  if (shared > 0) {
    out += fmt::format("warning: {} of {} rows were timed while other work shared the GPU (median idle trial {}); "
                       "their times are not comparable with a quiet GPU's\n",
                       shared, rows.size(), kSharedGpuRule);
  }
  return out;
}

std::string BenchCsv(const std::vector<BenchRow>& rows) {
  std::string out = "task,dtype,n,best_kernel,kernel_ms,speedup_over_best_baseline,speedup_over_dense,"
                    "fraction_of_limit,baselines,failures,seeds,shared_gpu\n";
  auto joined = [](const std::vector<std::pair<std::string, double>>& timed) {
    std::string s;
    for (const auto& [name, ms] : timed) s += fmt::format("{}{}={:.6f}", s.empty() ? "" : ";", name, ms);
    return s;
  };
  for (const BenchRow& r : rows) {
    out += fmt::format("{},{},{},{},{:.6f},{:.4f},{:.4f},{:.4f},{},{},{},{}\n", r.task, r.dtype, r.n, r.best_kernel,
                       r.kernel_ms, r.speedup_over_best_baseline, r.speedup_over_dense, r.fraction_of_limit,
                       joined(r.baselines_ms), r.failures, joined(r.seeds_ms), r.shared_gpu ? 1 : 0);
  }
  return out;
}

nlohmann::json BenchJson(const std::vector<BenchRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const BenchRow& r : rows) {
    nlohmann::json baselines = nlohmann::json::object();
    for (const auto& [name, ms] : r.baselines_ms) baselines[name] = ms > 0 ? nlohmann::json(ms) : nlohmann::json();
    nlohmann::json seeds = nlohmann::json::array();  // an array: the order (fastest first) is part of it
    for (const auto& [name, ms] : r.seeds_ms) seeds.push_back({{"seed", name}, {"ms", ms}});
    out.push_back({{"task", r.task}, {"dtype", r.dtype}, {"n", r.n}, {"best_kernel", r.best_kernel},
                   {"kernel_ms", r.kernel_ms}, {"baselines_ms", baselines}, {"seeds_ms", seeds},
                   {"speedup_over_best_baseline", r.speedup_over_best_baseline},
                   {"speedup_over_dense", r.speedup_over_dense}, {"fraction_of_limit", r.fraction_of_limit},
                   {"failures", r.failures}, {"shared_gpu", r.shared_gpu}});
  }
  return out;
}

double GeomeanSpeedup(const std::vector<BenchRow>& rows, const std::string& baseline) {
  double log_sum = 0;
  int count = 0;
  for (const BenchRow& r : rows) {
    if (r.kernel_ms <= 0) continue;
    double speedup = r.speedup_over_best_baseline;
    if (!baseline.empty()) {
      speedup = 0;
      for (const auto& [name, ms] : r.baselines_ms) {
        if (name == baseline && ms > 0) speedup = ms / r.kernel_ms;
      }
    }
    if (speedup <= 0) continue;
    log_sum += std::log(speedup);
    ++count;
  }
  return count == 0 ? 0 : std::exp(log_sum / count);
}

}  // namespace sparseditto
