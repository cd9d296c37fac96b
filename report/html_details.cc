// The failures and diffs sections of a task in the report (html_sections.h): the long, untrusted texts,
// each trimmed, escaped and folded in a <details> element.
#include <map>
#include <vector>

#include "fmt/format.h"
#include "report/html_sections.h"
#include "report/html_text.h"
#include "report/text_diff.h"

namespace sparseditto::report {
namespace {

std::string Pre(const std::string& what, const std::string& text, const ReportOptions& o) {
  if (text.empty()) return "";
  return fmt::format("<div class=\"log\"><span class=\"what\">{}</span><pre>{}</pre></div>\n", what,
                     EscapeHtml(TrimMiddle(text, o.max_log_bytes)));
}

// The diff as lines coloured by their first character; every line escaped.
std::string DiffHtml(const std::string& diff) {
  std::string out;
  for (const std::string& line : SplitLines(diff)) {
    const char* cls = line.rfind("+++", 0) == 0 || line.rfind("---", 0) == 0 ? "file"
                      : line.rfind("@@", 0) == 0                             ? "hunk"
                      : !line.empty() && line[0] == '+'                      ? "add"
                      : !line.empty() && line[0] == '-'                      ? "del"
                                                                             : "ctx";
    out += fmt::format("<span class=\"{}\">{}</span>\n", cls, EscapeHtml(line));
  }
  return out;
}

}  // namespace

std::string FailuresSection(const TaskFacts& t, const ReportOptions& o) {
  std::map<std::string, std::vector<const CandidateFacts*>> by_category;
  for (const CandidateFacts& c : t.candidates) {
    if (!c.result) continue;
    const v1::FailureCategory f = c.result->failure();
    if (f == v1::FAILURE_CATEGORY_NONE || f == v1::FAILURE_CATEGORY_SLOWER) continue;
    by_category[OutcomeName(f)].push_back(&c);
  }
  std::string out;
  for (const FinalistFacts& f : t.finalists) {
    if (f.passed) continue;
    out += fmt::format("<details class=\"failure\"><summary>finalist checks of <code>{}</code>: {}</summary>{}</details>\n",
                       EscapeHtml(f.candidate_id), EscapeHtml(f.outcome), Pre("detail", f.detail, o));
  }
  if (by_category.empty()) return out.empty() ? "<p>No failed evaluation.</p>\n" : out;
  for (const auto& [category, list] : by_category) {
    out += fmt::format("<details class=\"category\" data-failure-category=\"{}\" data-count=\"{}\"><summary>{}: {} "
                       "candidate(s)</summary>\n",
                       EscapeHtml(category), list.size(), EscapeHtml(category), list.size());
    size_t shown = 0;
    for (const CandidateFacts* c : list) {
      if (shown++ == o.max_failures_per_category) {
        out += fmt::format("<p><i>{} more not shown</i></p>\n", list.size() - o.max_failures_per_category);
        break;
      }
      const v1::EvalResult& r = *c->result;
      std::string stage = v1::EvalStage_Name(r.stage_reached());
      out += fmt::format("<details class=\"failure\"><summary><code>{}</code> at {}: {}</summary>\n",
                         EscapeHtml(c->candidate.id()), EscapeHtml(stage),
                         EscapeHtml(TrimMiddle(r.failure_detail(), 200)));
      out += Pre("detail", r.failure_detail(), o) + Pre("compile log", r.compile_log(), o) + Pre("run log", r.run_log(), o);
      out += "</details>\n";
    }
    out += "</details>\n";
  }
  return out;
}

std::string DiffsSection(const TaskFacts& t, const ReportOptions& o) {
  std::map<std::string, const CandidateFacts*> by_id;
  for (const CandidateFacts& c : t.candidates) by_id[c.candidate.id()] = &c;
  std::string out;
  size_t shown = 0, with_parent = 0;
  for (const CandidateFacts& c : t.candidates) {
    if (c.candidate.parent_ids().empty()) continue;
    ++with_parent;
    if (shown == o.max_diffs) continue;
    ++shown;
    const std::string& parent_id = c.candidate.parent_ids(0);
    const auto parent = by_id.find(parent_id);
    std::string fitness = !c.result ? "not evaluated"
                          : c.result->failure() == v1::FAILURE_CATEGORY_NONE || c.result->failure() == v1::FAILURE_CATEGORY_SLOWER
                              ? fmt::format("fitness {:.3f}", c.result->fitness())
                              : OutcomeName(c.result->failure());
    out += fmt::format("<details class=\"diff\" data-candidate=\"{}\"><summary><code>{}</code> against <code>{}</code>"
                       "{} — {}</summary>\n",
                       EscapeHtml(c.candidate.id()), EscapeHtml(c.candidate.id()), EscapeHtml(parent_id),
                       c.candidate.parent_ids_size() > 1 ? fmt::format(" (first of {} parents)", c.candidate.parent_ids_size()) : "",
                       EscapeHtml(fitness));
    if (parent == by_id.end()) {
      out += "<p>its parent is not in the store</p>\n";
    } else {
      const std::string diff = UnifiedDiff(parent->second->candidate.source(), c.candidate.source(), parent_id,
                                           c.candidate.id(), {.max_output_lines = o.max_diff_lines});
      out += diff.empty() ? "<p>the same source</p>\n" : "<pre class=\"diff\">" + DiffHtml(diff) + "</pre>\n";
    }
    out += "</details>\n";
  }
  if (with_parent > shown) out += fmt::format("<p><i>{} more diffs not shown</i></p>\n", with_parent - shown);
  return out.empty() ? "<p>No candidate with a parent yet (only seeds).</p>\n" : out;
}

}  // namespace sparseditto::report
