// The summary, plots, lineage and per-n sections of a task in the report (html_sections.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "coordinator/search/search_progress.h"
#include "fmt/format.h"
#include "report/html_sections.h"
#include "report/html_text.h"
#include "report/lineage.h"
#include "report/svg_plot.h"

namespace sparseditto::report {
namespace {

bool Correct(const v1::EvalResult& r) {
  return r.failure() == v1::FAILURE_CATEGORY_NONE || r.failure() == v1::FAILURE_CATEGORY_SLOWER;
}

std::string OperatorName(v1::MutationOperator op) {
  std::string name = v1::MutationOperator_Name(op);
  const std::string prefix = "MUTATION_OPERATOR_";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// "tune by builtin, fitness 1.234" for a lineage or diff line.
std::string Describe(const CandidateFacts* c) {
  if (c == nullptr) return "not in the store";
  std::string what = OperatorName(c->candidate.operator_());
  if (!c->candidate.mutator().empty()) what += " by " + c->candidate.mutator();
  if (!c->candidate.model().empty()) what += " (" + c->candidate.model() + ")";
  if (!c->candidate.seed_name().empty()) what += ", seed " + c->candidate.seed_name();
  if (!c->result) return what + ", not evaluated";
  if (!Correct(*c->result)) return what + ", " + OutcomeName(c->result->failure());
  return what + fmt::format(", fitness {:.3f}", c->result->fitness());
}

// A name made fit for a data-* attribute name: lower-case letters, digits and '_' kept, others '_'.
std::string AttributeName(const std::string& name) {
  std::string out;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(std::tolower(static_cast<unsigned char>(c)));
    out += (std::isalnum(u) && u < 0x80) || u == '_' ? static_cast<char>(u) : '_';
  }
  return out;
}

}  // namespace

std::string DataNumber(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "NaN"; }

std::string SummarySection(const TaskFacts& t) {
  const v1::Budget& b = t.task.budget();
  std::string out = "<table class=\"summary\">\n";
  const auto row = [&](const std::string& name, const std::string& html) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, html);
  };
  row("state", EscapeHtml(t.state) + (t.state_detail.empty() ? "" : " — " + EscapeHtml(t.state_detail)));
  if (!t.population_arch.empty()) row("population", EscapeHtml(t.population_arch + " of " + t.population_of));
  row("evaluations", fmt::format("<span class=\"num\">{}</span> of {}", t.spent.evaluations(), b.max_evaluations()));
  row("search wall time", EscapeHtml(FormatDuration(t.spent.wall_seconds())) +
                              (b.max_wall_seconds() > 0 ? " of " + EscapeHtml(FormatDuration(b.max_wall_seconds())) : ""));
  row("candidates", fmt::format("{} stored, {} duplicates proposed, attempts {}", t.candidates.size(),
                                t.spent.duplicates(), t.attempts));
  if (t.spent.tokens() > 0 || b.max_tokens() > 0) row("tokens", fmt::format("{} of {}", t.spent.tokens(), b.max_tokens()));
  if (t.spent.money_usd() > 0 || b.max_money_usd() > 0) {
    row("money", fmt::format("${:.2f} of ${:.2f}", t.spent.money_usd(), b.max_money_usd()));
  }
  std::string arch;
  for (const std::string& a : t.task.arch()) arch += (arch.empty() ? "" : ", ") + EscapeHtml(a);
  row("arch", arch.empty() ? "any" : arch);
  std::string gpus;
  for (const GpuEvaluations& g : t.gpus) gpus += fmt::format("{}{} ({} evaluations)", gpus.empty() ? "" : "; ", EscapeHtml(g.gpu), g.evaluations);
  row("GPUs", gpus.empty() ? "no evaluation on a GPU yet" : gpus + (t.gpus.size() > 1 ? " <b>(times from different GPUs compared)</b>" : ""));
  std::string outcomes = "<table class=\"outcomes\"><tr>";
  for (const auto& [name, count] : t.outcomes) outcomes += "<th>" + EscapeHtml(name) + "</th>";
  outcomes += "</tr><tr>";
  for (const auto& [name, count] : t.outcomes) {
    outcomes += fmt::format("<td data-outcome=\"{}\">{}</td>", EscapeHtml(name), count);
  }
  row("outcomes", t.outcomes.empty() ? "none yet" : outcomes + "</tr></table>");
  row("best", t.best_id.empty() ? "none correct yet"
                                : fmt::format("<code>{}</code> fitness <b>{:.3f}</b> (geometric mean over n of the best "
                                              "baseline's time over its time)",
                                              EscapeHtml(t.best_id), t.best_fitness));
  row("finalist checks", t.finalists_text.empty() ? "not run yet" : EscapeHtml(t.finalists_text));
  row("confirmation", t.confirmation_text.empty() ? "not run (the fitness above was measured once)"
                                                  : "<pre>" + EscapeHtml(t.confirmation_text) + "</pre>");
  return out + "</table>\n";
}

std::string FitnessSection(const TaskFacts& t) {
  std::vector<const CandidateFacts*> evaluated;
  for (const CandidateFacts& c : t.candidates) {
    if (c.result) evaluated.push_back(&c);
  }
  std::sort(evaluated.begin(), evaluated.end(),
            [](const CandidateFacts* a, const CandidateFacts* b) { return a->evaluation_number < b->evaluation_number; });
  // The same three series over either axis; the best so far follows the order of that axis.
  const auto series = [&](bool by_time) {
    std::vector<const CandidateFacts*> order = evaluated;
    if (by_time) {
      std::stable_sort(order.begin(), order.end(),
                       [](const CandidateFacts* a, const CandidateFacts* b) { return a->wall_seconds < b->wall_seconds; });
    }
    PlotSeries best{.name = "best so far", .colour = "#d62728", .line = true, .markers = false};
    PlotSeries correct{.name = "correct", .colour = "#1f77b4"};
    PlotSeries failed{.name = "failed (at 0)", .colour = "#999999"};
    double so_far = 0;
    for (const CandidateFacts* c : order) {
      const v1::EvalResult& r = *c->result;
      const double x = by_time ? c->wall_seconds : static_cast<double>(c->evaluation_number);
      const std::string tip = c->candidate.id() + ": " + Describe(c);
      if (Correct(r)) {
        so_far = std::max(so_far, r.fitness());
        correct.points.push_back({x, r.fitness(), tip});
      } else {
        failed.points.push_back({x, 0, tip});
      }
      best.points.push_back({x, so_far, ""});
    }
    return std::vector<PlotSeries>{best, correct, failed};
  };
  PlotOptions o{.title = "fitness over evaluations", .x_label = "evaluation", .y_label = "fitness", .y_from_zero = true};
  std::string out = "<div class=\"plots\">" + LinePlotSvg(series(false), o);
  o.title = "fitness over search wall time";
  o.x_label = "search wall seconds";
  out += LinePlotSvg(series(true), o) + "</div>\n";
  return out;
}

std::string LineageSection(const TaskFacts& t, const ReportOptions& options) {
  if (t.best_id.empty()) return "<p>No correct candidate yet.</p>\n";
  std::map<std::string, const v1::Candidate*> by_id;
  for (const CandidateFacts& c : t.candidates) by_id[c.candidate.id()] = &c.candidate;
  bool truncated = false;
  const std::vector<LineageEntry> entries = Lineage(by_id, t.best_id, options.max_lineage, &truncated);
  std::string out = "<ul class=\"lineage\">\n";
  for (const LineageEntry& e : entries) {
    const CandidateFacts* c = t.Find(e.candidate_id);
    out += fmt::format("<li style=\"margin-left:{}em\" data-lineage-depth=\"{}\">{}<code>{}</code> {}{}</li>\n",
                       1.5 * e.depth, e.depth, e.depth == 0 ? "" : "&#x21B3; ", EscapeHtml(e.candidate_id),
                       EscapeHtml(Describe(c)), e.repeated ? " <i>(its parents are shown above)</i>" : "");
  }
  if (truncated) out += fmt::format("<li><i>... cut at {} entries</i></li>\n", options.max_lineage);
  return out + "</ul>\n";
}

std::string PerNSection(const TaskFacts& t) {
  const CandidateFacts* best = t.best_id.empty() ? nullptr : t.Find(t.best_id);
  if (best == nullptr || !best->result || best->result->timings().empty()) {
    return "<p>No timed correct candidate yet.</p>\n";
  }
  const v1::EvalResult& r = *best->result;
  std::set<std::string> names;
  for (const auto& [n, list] : r.baselines()) {
    for (const v1::BaselineTime& b : list.baselines()) names.insert(b.name());
  }
  std::string out = "<table class=\"per-n\"><tr><th>n</th><th>best candidate (ms)</th>";
  for (const std::string& name : names) out += "<th>" + EscapeHtml(name) + " (ms)</th>";
  out += "<th>speed-up over the best baseline</th></tr>\n";
  std::vector<BarGroup> groups;
  static const char* kColours[] = {"#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  for (const v1::TimingStats& timing : r.timings()) {
    const auto list = r.baselines().find(timing.n());
    std::map<std::string, const v1::BaselineTime*> at_n;
    if (list != r.baselines().end()) {
      for (const v1::BaselineTime& b : list->second.baselines()) at_n[b.name()] = &b;
    }
    std::string attributes = fmt::format(" data-n=\"{}\" data-candidate-ms=\"{}\"", timing.n(), DataNumber(timing.median_ms()));
    std::string cells = fmt::format("<td>{}</td><td>{:.4f}</td>", timing.n(), timing.median_ms());
    BarGroup group{.label = fmt::format("n = {}", timing.n())};
    group.bars.push_back({.label = "best candidate", .value = timing.median_ms(), .colour = "#1f77b4"});
    double best_baseline = 0;
    size_t colour = 0;
    for (const std::string& name : names) {
      const auto b = at_n.find(name);
      const std::string colour_of = kColours[colour++ % std::size(kColours)];
      if (b == at_n.end() || !b->second->available()) {
        cells += fmt::format("<td title=\"{}\">n/a</td>", b == at_n.end() ? "" : EscapeHtml(b->second->note()));
        continue;
      }
      const double ms = b->second->timing().median_ms();
      attributes += fmt::format(" data-baseline-{}-ms=\"{}\"", AttributeName(name), DataNumber(ms));
      cells += fmt::format("<td>{:.4f}</td>", ms);
      if (ms > 0 && (best_baseline == 0 || ms < best_baseline)) best_baseline = ms;
      group.bars.push_back({.label = name, .value = ms, .colour = colour_of});
    }
    cells += timing.median_ms() > 0 && best_baseline > 0 ? fmt::format("<td>{:.3f}&#xD7;</td>", best_baseline / timing.median_ms())
                                                         : "<td>n/a</td>";
    out += "<tr" + attributes + ">" + cells + "</tr>\n";
    groups.push_back(std::move(group));
  }
  out += "</table>\n";
  std::string about = "times of <code>" + EscapeHtml(best->candidate.id()) + "</code>";
  if (!r.gpu_name().empty()) about += " on " + EscapeHtml(r.gpu_name());
  if (r.prepare_ms() > 0) about += fmt::format(", prepare (format conversion, untimed) {:.3f} ms", r.prepare_ms());
  return "<p>" + about + " (median of the trials; lower is better)</p>\n" + out +
         BarChartSvg(groups, {.title = "time per n (ms; bars scaled per n)", .unit = "ms"});
}

}  // namespace sparseditto::report
