#include "coordinator/search/search_bench_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "coordinator/search/run_artifacts.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr double kTieTolerance = 1e-9;

constexpr std::array<double, 30> kT975 = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                          2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                          2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};

const char* Colour(BenchStrategy s) {
  switch (s) {
    case BenchStrategy::kSeeds: return "#7f7f7f";
    case BenchStrategy::kSeedPlan: return "#bcbd22";
    case BenchStrategy::kRandom: return "#1f77b4";
    case BenchStrategy::kEvolution: return "#2ca02c";
    case BenchStrategy::kEvolutionPlan: return "#d62728";
  }
  return "#000000";
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

int Repetitions(const TaskBench& bench) {
  int reps = 0;
  for (const StrategyRun& run : bench.runs) reps = std::max(reps, run.repetition + 1);
  return reps;
}

std::string Header(int confirm_rounds) {
  const std::string fitness =
      confirm_rounds > 0
          ? fmt::format("bench-search: CONFIRMED fitness: each run's best re-timed in {} rounds beside the "
                        "repetition's best seed, each round behind fresh baselines (median over rounds);\n  ratio = the "
                        "median per-round ratio of the run's best to that seed; ",
                        confirm_rounds)
          : std::string("bench-search: fitness as each evaluation measured it, NOT re-confirmed (--confirm-rounds 0);\n"
                        "  ratio = best / the seeds' best of the same repetition; ");
  return fitness +
         "geometric mean over repetitions, 95% CI: Student t interval on the mean log-ratio;\n  wins = repetitions "
         "with the highest best of all strategies (a tie is a win for each tied strategy); anytime curves: each "
         "evaluation's own fitness.\n";
}

}  // namespace

double StudentT975(int df) {
  if (df < 1) return std::nan("");
  if (df <= static_cast<int>(kT975.size())) return kT975[df - 1];
  const double z = 1.959964, v = df;
  return z + (z * z * z + z) / (4 * v) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * v * v);
}

RatioInterval LogRatioInterval(const std::vector<double>& ratios) {
  RatioInterval out;
  std::vector<double> logs;
  for (double r : ratios) {
    if (r > 0 && std::isfinite(r)) {
      logs.push_back(std::log(r));
    } else {
      ++out.excluded;
    }
  }
  out.samples = static_cast<int>(logs.size());
  if (logs.empty()) return out;
  double mean = 0;
  for (double l : logs) mean += l;
  mean /= logs.size();
  out.geomean = std::exp(mean);
  if (logs.size() < 2) return out;
  double ss = 0;
  for (double l : logs) ss += (l - mean) * (l - mean);
  const double half = StudentT975(out.samples - 1) * std::sqrt(ss / (logs.size() - 1)) / std::sqrt(logs.size());
  out.has_interval = true;
  out.low = std::exp(mean - half);
  out.high = std::exp(mean + half);
  return out;
}

std::vector<StrategySummary> SummariseTask(const TaskBench& bench) {
  const int reps = Repetitions(bench);
  std::vector<StrategySummary> out;
  for (BenchStrategy s : kAllBenchStrategies) {
    StrategySummary& summary = out.emplace_back();
    summary.strategy = s;
    summary.best.assign(reps, -1);
  }
  for (const StrategyRun& run : bench.runs) {
    StrategySummary& summary = out[static_cast<size_t>(run.strategy)];
    if (bench.confirm_rounds > 0) {
      summary.best[run.repetition] = run.ok && run.confirmed ? run.confirmed_fitness : -1;
    } else {
      summary.best[run.repetition] = run.ok ? run.best_fitness : -1;
    }
    summary.max_evaluations = std::max(summary.max_evaluations, run.evaluations);
    if (!run.ok) ++summary.failed;
  }
  const std::vector<double>& seeds = out[static_cast<size_t>(BenchStrategy::kSeeds)].best;
  for (int r = 0; r < reps; ++r) {
    double top = 0;
    for (const StrategySummary& s : out) top = std::max(top, s.best[r]);
    for (StrategySummary& s : out) {
      if (top > 0 && s.best[r] >= top * (1 - kTieTolerance)) ++s.wins;
    }
  }
  std::vector<std::vector<double>> ratios(out.size(), std::vector<double>(reps, 0));
  for (const StrategyRun& run : bench.runs) {
    const StrategySummary& s = out[static_cast<size_t>(run.strategy)];
    const double seed = seeds[run.repetition], best = s.best[run.repetition];
    double& ratio = ratios[static_cast<size_t>(run.strategy)][run.repetition];
    if (bench.confirm_rounds > 0) {
      ratio = run.ok && run.confirmed ? run.confirmed_ratio : 0;
    } else {
      ratio = seed > 0 && best >= 0 ? best / seed : 0;
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].ratios = ratios[i];
    out[i].ratio = LogRatioInterval(ratios[i]);
  }
  return out;
}

PooledComparison ComparePooled(const std::vector<TaskBench>& benches, BenchStrategy strategy) {
  std::vector<double> to_seed, to_random;
  for (const TaskBench& bench : benches) {
    const std::vector<StrategySummary> summaries = SummariseTask(bench);
    const std::vector<double>& mine = summaries[static_cast<size_t>(strategy)].ratios;
    const std::vector<double>& random = summaries[static_cast<size_t>(BenchStrategy::kRandom)].ratios;
    for (size_t r = 0; r < mine.size(); ++r) {
      to_seed.push_back(mine[r]);
      to_random.push_back(mine[r] > 0 && random[r] > 0 ? mine[r] / random[r] : 0);
    }
  }
  return {LogRatioInterval(to_seed), LogRatioInterval(to_random)};
}

namespace {

std::string DescribeInterval(const RatioInterval& r) {
  if (r.samples == 0) return "n/a";
  std::string text = fmt::format("{:.3f}", r.geomean);
  text += r.has_interval ? fmt::format(" [{:.3f}, {:.3f}]", r.low, r.high) : " (one sample, no interval)";
  if (r.has_interval) text += r.low > 1 ? ", above 1" : r.high < 1 ? ", below 1" : ", a tie not excluded";
  if (r.excluded > 0) text += fmt::format(", {} left out", r.excluded);
  return text;
}

}  // namespace

std::string SearchBenchText(const std::vector<TaskBench>& benches) {
  int confirm_rounds = 0;
  for (const TaskBench& bench : benches) confirm_rounds = std::max(confirm_rounds, bench.confirm_rounds);
  std::string out = Header(confirm_rounds);
  for (const TaskBench& bench : benches) {
    const int reps = Repetitions(bench);
    out += fmt::format("\ntask {}: budget {} evaluations, wall {}, {} repetitions, {} seed sources\n", bench.task,
                       bench.budget_evaluations,
                       bench.budget_wall_seconds > 0 ? fmt::format("{} s", bench.budget_wall_seconds) : "none", reps,
                       bench.seed_count);
    out += fmt::format("{:<15} {:>6}", "strategy", "evals");
    for (int r = 0; r < reps; ++r) out += fmt::format(" {:>9}", fmt::format("rep{}", r));
    out += fmt::format(" {:>8}  {:<18} {:>5}\n", "ratio", "95% CI", "wins");
    for (const StrategySummary& s : SummariseTask(bench)) {
      out += fmt::format("{:<15} {:>6}", BenchStrategyName(s.strategy), s.max_evaluations);
      for (double b : s.best) out += b < 0 ? fmt::format(" {:>9}", "FAILED") : fmt::format(" {:>9.4f}", b);
      const std::string ci = s.ratio.has_interval ? fmt::format("[{:.3f}, {:.3f}]", s.ratio.low, s.ratio.high)
                                                  : std::string("n/a");
      out += s.ratio.samples > 0 ? fmt::format(" {:>8.3f}  {:<18}", s.ratio.geomean, ci)
                                 : fmt::format(" {:>8}  {:<18}", "n/a", "n/a");
      out += fmt::format(" {:>5}", fmt::format("{}/{}", s.wins, reps));
      if (s.ratio.excluded > 0) out += fmt::format("  ({} repetitions without a ratio)", s.ratio.excluded);
      out += "\n";
    }
    for (const StrategyRun& run : bench.runs) {
      if (!run.ok) {
        out += fmt::format("  {} rep{} failed: {}\n", BenchStrategyName(run.strategy), run.repetition, run.error);
      } else if (bench.confirm_rounds > 0 && !run.confirmed) {
        out += fmt::format("  {} rep{} not confirmed: {}\n", BenchStrategyName(run.strategy), run.repetition,
                           run.confirmation);
      }
    }
  }
  const PooledComparison pooled = ComparePooled(benches, BenchStrategy::kEvolutionPlan);
  out += fmt::format("\nevolution_plan over {} task(s) x repetitions: to the best seed {}; to random search (paired) {}\n",
                     benches.size(), DescribeInterval(pooled.to_best_seed), DescribeInterval(pooled.to_random));
  return out;
}

std::string AnytimeCsv(const std::vector<TaskBench>& benches) {
  std::string out = "task,strategy,repetition,seed,evaluation,seconds,fitness,best_so_far\n";
  for (const TaskBench& bench : benches) {
    for (const StrategyRun& run : bench.runs) {
      for (const AnytimePoint& p : run.curve) {
        out += fmt::format("{},{},{},{},{},{:.6f},{:.9g},{:.9g}\n", run.task, BenchStrategyName(run.strategy),
                           run.repetition, run.seed, p.evaluation, p.seconds, p.fitness, p.best);
      }
    }
  }
  return out;
}

namespace {

std::string CsvQuoted(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string RunsCsv(const std::vector<TaskBench>& benches) {
  std::string out =
      "task,strategy,repetition,seed,ok,evaluations,wall_seconds,best_fitness,best_candidate_id,confirmed,"
      "confirmed_fitness,confirmed_low,confirmed_high,confirmed_ratio,run_dir,stop,error\n";
  for (const TaskBench& bench : benches) {
    for (const StrategyRun& r : bench.runs) {
      out += fmt::format("{},{},{},{},{},{},{:.3f},{:.9g},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{}\n", r.task,
                         BenchStrategyName(r.strategy), r.repetition, r.seed, r.ok, r.evaluations, r.wall_seconds,
                         r.best_fitness, CsvQuoted(r.best_candidate_id), r.confirmed, r.confirmed_fitness,
                         r.confirmed_low, r.confirmed_high, r.confirmed_ratio, CsvQuoted(r.run_dir), CsvQuoted(r.stop),
                         CsvQuoted(r.error));
    }
  }
  return out;
}

namespace {

struct Panel {
  double left, top, width, height;
  double x_max, y_lo, y_hi;
  double X(double x) const { return left + width * (x_max > 0 ? x / x_max : 0); }
  double Y(double y) const { return top + height * (1 - (y - y_lo) / (y_hi - y_lo)); }
};

std::string Axes(const Panel& p, const std::string& x_label) {
  std::string out = fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#000\"/>\n", p.left,
      p.top, p.width, p.height);
  for (int i = 0; i <= 4; ++i) {
    const double x = p.x_max * i / 4, y = p.y_lo + (p.y_hi - p.y_lo) * i / 4;
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3g}</text>\n", p.X(x),
                       p.top + p.height + 16, x);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.3g}</text>\n", p.left - 4, p.Y(y) + 4, y);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", p.left,
                       p.Y(y), p.left + p.width, p.Y(y));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", p.left + p.width / 2,
                     p.top + p.height + 34, XmlEscape(x_label));
  return out;
}

// A run's best so far as steps: flat until the next evaluation, then up.
std::string Steps(const Panel& p, const StrategyRun& run, bool by_seconds) {
  std::string points;
  double last_y = 0;
  for (size_t i = 0; i < run.curve.size(); ++i) {
    const AnytimePoint& a = run.curve[i];
    const double x = p.X(by_seconds ? a.seconds : static_cast<double>(a.evaluation));
    if (i > 0) points += fmt::format("{:.1f},{:.1f} ", x, last_y);
    last_y = p.Y(a.best);
    points += fmt::format("{:.1f},{:.1f} ", x, last_y);
  }
  return fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" stroke-opacity=\"0.8\" points=\"{}\"/>\n",
                     Colour(run.strategy), points);
}

}  // namespace

std::string AnytimeSvg(const TaskBench& bench) {
  double max_eval = 1, max_seconds = 0, y_lo = 0, y_hi = 0;
  bool any = false;
  for (const StrategyRun& run : bench.runs) {
    for (const AnytimePoint& a : run.curve) {
      max_eval = std::max(max_eval, static_cast<double>(a.evaluation));
      max_seconds = std::max(max_seconds, a.seconds);
      y_lo = any ? std::min(y_lo, a.best) : a.best;
      y_hi = any ? std::max(y_hi, a.best) : a.best;
      any = true;
    }
  }
  if (max_seconds <= 0) max_seconds = 1;
  if (y_hi - y_lo < 1e-9) {
    y_lo -= 0.05;
    y_hi += 0.05;
  }
  const double pad = (y_hi - y_lo) * 0.05;
  y_lo = std::max(0.0, y_lo - pad);
  y_hi += pad;
  const Panel by_eval{70, 60, 400, 300, max_eval, y_lo, y_hi};
  const Panel by_time{560, 60, 400, 300, max_seconds, y_lo, y_hi};
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1000\" height=\"440\" viewBox=\"0 0 1000 440\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"1000\" height=\"440\" fill=\"#fff\"/>\n";
  out += fmt::format("<text x=\"500\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n",
                     XmlEscape(fmt::format("task {}: best fitness so far (as evaluated, not re-confirmed), budget {} "
                                           "evaluations, one line per repetition",
                                           bench.task, bench.budget_evaluations)));
  out += Axes(by_eval, "evaluations") + Axes(by_time, "wall seconds");
  out += "<text x=\"18\" y=\"210\" text-anchor=\"middle\" transform=\"rotate(-90 18 210)\">best fitness so far</text>\n";
  for (const StrategyRun& run : bench.runs) out += Steps(by_eval, run, false) + Steps(by_time, run, true);
  double x = 70;
  for (BenchStrategy s : kAllBenchStrategies) {
    out += fmt::format("<rect x=\"{:.0f}\" y=\"32\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", x, Colour(s));
    out += fmt::format("<text x=\"{:.0f}\" y=\"42\">{}</text>\n", x + 16, BenchStrategyName(s));
    x += 130;
  }
  return out + "</svg>\n";
}

absl::Status WriteSearchBench(const std::vector<TaskBench>& benches, const std::string& out_dir) {
  const std::filesystem::path dir(out_dir);
  for (const TaskBench& bench : benches) {
    std::error_code error;
    std::filesystem::create_directories(dir / bench.task, error);
    if (error) return absl::UnavailableError(fmt::format("{}: {}", (dir / bench.task).string(), error.message()));
    if (absl::Status s = WriteFileAtomically((dir / bench.task / "anytime.svg").string(), AnytimeSvg(bench)); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = WriteFileAtomically((dir / "bench-search.txt").string(), SearchBenchText(benches)); !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteFileAtomically((dir / "bench-search-runs.csv").string(), RunsCsv(benches)); !s.ok()) {
    return s;
  }
  return WriteFileAtomically((dir / "bench-search-anytime.csv").string(), AnytimeCsv(benches));
}

}  // namespace sparseditto
