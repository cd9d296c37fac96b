#include "report/html_report.h"

#include <ctime>

#include "absl/strings/escaping.h"
#include "common/sha256.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "report/html_sections.h"
#include "report/html_text.h"
#include "report/status_json.h"

namespace sparseditto::report {
namespace {

constexpr const char* kStyle = R"(
body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1200px}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:2em}h3{margin-top:1.4em}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}
table.summary>tbody>tr>th{background:#f6f6f6;width:10em}td[data-outcome]{text-align:right}
code{font-size:.95em}pre{background:#f8f8f8;padding:6px;overflow-x:auto;max-height:40em;white-space:pre-wrap;word-break:break-all}
pre.diff span{display:block;white-space:pre-wrap}.add{background:#e6ffed}.del{background:#ffeef0}.hunk{color:#6f42c1}.file{color:#666}
details{margin:.3em 0}summary{cursor:pointer}.log .what{font-size:.85em;color:#666}
.plots{display:flex;flex-wrap:wrap;gap:1em}ul.lineage{list-style:none;padding-left:0}ul.lineage li{margin:2px 0}
footer{margin-top:3em;color:#666;font-size:.85em}
)";

// Checks the data-* attributes against the status document the page carries (html_report.h).
constexpr const char* kScript = R"(
(function () {
  var doc = JSON.parse(document.getElementById('status-json').textContent);
  var problems = [];
  var main = document.querySelector('main');
  if (main.dataset.runId !== doc.run.id) problems.push('run id');
  var sections = document.querySelectorAll('section.task');
  if (sections.length !== doc.tasks.length) problems.push('task count');
  doc.tasks.forEach(function (t, i) {
    var s = sections[i];
    if (!s) return;
    if (s.dataset.task !== t.name) problems.push(t.name + ': name');
    if (s.dataset.state !== t.state) problems.push(t.name + ': state');
    if (Number(s.dataset.evaluations) !== t.evaluations.done) problems.push(t.name + ': evaluations');
    if (Number(s.dataset.candidates) !== t.candidates) problems.push(t.name + ': candidates');
    var best = t.best ? t.best.fitness : null;
    if (best === null ? s.dataset.bestFitness !== '' : Number(s.dataset.bestFitness) !== best) problems.push(t.name + ': best');
    Object.keys(t.outcomes).forEach(function (k) {
      var cell = s.querySelector('td[data-outcome="' + CSS.escape(k) + '"]');
      if (!cell || Number(cell.textContent) !== t.outcomes[k]) problems.push(t.name + ': outcome ' + k);
    });
  });
  document.body.dataset.selfCheck = problems.length ? 'mismatch: ' + problems.join('; ') : 'ok';
  if (problems.length) console.error('report self-check: ' + problems.join('; '));
})();
)";

std::string Date(int64_t unix_ms) {
  if (unix_ms <= 0) return "unknown";
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

std::string ScriptHash(const std::string& script) {
  return "sha256-" + absl::Base64Escape(absl::HexStringToBytes(Sha256Hex(script)));
}

std::string Provenance(const RunFacts& run, const ReportOptions& o) {
  std::string out = "<table class=\"summary\">\n";
  const auto row = [&](const std::string& name, const std::string& value) {
    out += "<tr><th>" + EscapeHtml(name) + "</th><td>" + EscapeHtml(TrimMiddle(value, o.max_log_bytes)) + "</td></tr>\n";
  };
  row("run", run.run_id);
  row("folder", run.dir);
  row("project revision", run.revision);
  row("run created", Date(run.created_unix_ms));
  const nlohmann::json p = nlohmann::json::parse(run.provenance_json, nullptr, false);
  if (!p.is_discarded() && p.is_object()) {
    for (const auto& [key, value] : p.items()) {
      row(key, value.is_string() ? value.get<std::string>() : DumpJson(value, -1));
    }
  } else if (!run.provenance_json.empty()) {
    row("provenance (not JSON)", run.provenance_json);
  }
  row("report made", Date(o.generated_unix_ms) + (o.generator.empty() ? "" : " by " + o.generator));
  return out + "</table>\n";
}

std::string Task(const TaskFacts& t, const ReportOptions& o) {
  const std::string name = EscapeHtml(t.task.name());
  std::string out = fmt::format(
      "<section class=\"task\" id=\"task-{0}\" data-task=\"{0}\" data-state=\"{1}\" data-evaluations=\"{2}\" "
      "data-max-evaluations=\"{3}\" data-candidates=\"{4}\" data-best-id=\"{5}\" data-best-fitness=\"{6}\">\n"
      "<h2>task {0}</h2>\n",
      name, EscapeHtml(t.state), t.spent.evaluations(), t.task.budget().max_evaluations(), t.candidates.size(),
      EscapeHtml(t.best_id), t.best_id.empty() ? "" : DataNumber(t.best_fitness));
  out += SummarySection(t);
  out += "<h3>Fitness</h3>\n" + FitnessSection(t);
  out += "<h3>Lineage of the best</h3>\n" + LineageSection(t, o);
  out += "<h3>Time per n against the baselines</h3>\n" + PerNSection(t);
  out += "<h3>Failures by category</h3>\n" + FailuresSection(t, o);
  out += "<h3>What each mutation changed</h3>\n" + DiffsSection(t, o);
  return out + "</section>\n";
}

}  // namespace

std::string RenderReport(const RunFacts& run, const ReportOptions& o) {
  const std::string script = kScript;
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "img-src data:; script-src '{}'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>sparseditto run {}</title>\n<style>{}</style>\n</head>\n<body>\n",
      ScriptHash(script), EscapeHtml(run.run_id), kStyle);
  out += fmt::format("<main data-run-id=\"{}\" data-revision=\"{}\" data-tasks=\"{}\">\n<h1>Run {}</h1>\n",
                     EscapeHtml(run.run_id), EscapeHtml(run.revision), run.tasks.size(), EscapeHtml(run.run_id));
  out += "<nav><ul>";
  for (const TaskFacts& t : run.tasks) {
    const std::string name = EscapeHtml(t.task.name());
    out += fmt::format("<li><a href=\"#task-{0}\">{0}</a>: {1}, {2} evaluations, best {3}</li>", name, EscapeHtml(t.state),
                       t.spent.evaluations(), t.best_id.empty() ? "none" : fmt::format("{:.3f}", t.best_fitness));
  }
  out += "</ul></nav>\n";
  for (const std::string& e : run.errors) out += "<p class=\"error\"><b>not read:</b> " + EscapeHtml(e) + "</p>\n";
  for (const TaskFacts& t : run.tasks) out += Task(t, o);
  out += "<h2>Provenance</h2>\n" + Provenance(run, o);
  out += "</main>\n<script type=\"application/json\" id=\"status-json\">" + JsonForScript(DumpJson(StatusJson(run), -1)) +
         "</script>\n<script>" + script + "</script>\n";
  out += "<footer>Made by <code>sparseditto report</code> from the run's store; every text from the store is escaped.</footer>\n";
  return out + "</body>\n</html>\n";
}

}  // namespace sparseditto::report
