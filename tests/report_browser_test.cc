// `sparseditto status --json` and `sparseditto report` over a real run (tests/report_run_maker.cc: a batch
// search over the fake evaluator with hostile logs and sources), and the report loaded in a real headless
// browser (Debian's chromium): no console message or uncaught exception, its own self-check ran, no
// injected markup became an element, and the numbers it shows match `status --json` of the same run.
// The browser tests skip, saying so, only when no chromium is installed (scripts/setup.sh installs it).
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/shell_command.h"
#include "tests/testing/temp_folder.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sparseditto::testing_support::RunShell;
using sparseditto::testing_support::ShellOutcome;
using sparseditto::testing_support::Slurp;
using sparseditto::testing_support::TempFolder;

// $SPARSEDITTO_CHROMIUM, else the first of chromium, chromium-browser, google-chrome on PATH; empty: none.
std::string FindChromium(const fs::path& scratch) {
  if (const char* named = std::getenv("SPARSEDITTO_CHROMIUM"); named != nullptr && *named != '\0') return named;
  const ShellOutcome found = RunShell("command -v chromium || command -v chromium-browser || command -v google-chrome", scratch);
  std::string path = found.out.substr(0, found.out.find('\n'));
  return found.exit_code == 0 ? path : "";
}

// The lines of chromium's log that report something the page did: console messages (CSP refusals
// included) and uncaught exceptions.
std::vector<std::string> PageMessages(const std::string& log) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(start, end - start);
    if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) out.push_back(line);
    start = end + 1;
  }
  return out;
}

// The data-* attributes of the first tag starting at `at` in `html`.
std::map<std::string, std::string> Attributes(const std::string& html, size_t at) {
  const std::string tag = html.substr(at, html.find('>', at) - at);
  std::map<std::string, std::string> out;
  static const std::regex attribute("data-([a-z0-9_-]+)=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(tag.begin(), tag.end(), attribute); it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = (*it)[2];
  }
  return out;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    const std::string make = std::string("'") + REPORT_RUN_MAKER + "' '" + (dir_ / "runs/run").string() + "'";
    const ShellOutcome made = RunShell(make, dir_.path());
    ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  }
  ShellOutcome Sparseditto(const std::string& args) {
    return RunShell(std::string("'") + SPARSEDITTO_BINARY + "' " + args + " --runs-dir '" + (dir_ / "runs").string() + "'",
                    dir_.path());
  }
  json StatusJson() {
    const ShellOutcome status = Sparseditto("status run --json");
    EXPECT_EQ(status.exit_code, 0) << status.err;
    return json::parse(status.out);
  }
  // Writes the report and returns its text.
  std::string Report() {
    const ShellOutcome made = Sparseditto("report run --out '" + (dir_ / "report.html").string() + "'");
    EXPECT_EQ(made.exit_code, 0) << made.err;
    return Slurp(dir_ / "report.html");
  }
  TempFolder dir_{"report_test"};
};

TEST_F(ReportTest, StatusJsonSaysWhatTheTextStatusSays) {
  const json doc = StatusJson();
  EXPECT_EQ(doc["schema"], "sparseditto.status/1");
  EXPECT_EQ(doc["run"]["id"], "run");
  EXPECT_EQ(doc["run"]["provenance"]["gpu"], "Fake GPU");
  ASSERT_EQ(doc["tasks"].size(), 2u);
  const json& alpha = doc["tasks"][0];
  EXPECT_EQ(alpha["name"], "alpha");
  EXPECT_EQ(alpha["state"], "budget_exhausted");
  EXPECT_EQ(alpha["evaluations"]["done"], 30);
  EXPECT_EQ(alpha["evaluations"]["max"], 30);
  EXPECT_EQ(alpha["gpus"][0]["gpu"], "Fake GPU (sm_90)");
  EXPECT_EQ(alpha["outcomes"]["wrong"], 1) << "the hostile candidate";
  EXPECT_GE(alpha["outcomes"].value("compile", 0) + alpha["outcomes"].value("crash", 0), 1) << alpha["outcomes"];
  ASSERT_TRUE(alpha["best"].is_object());
  EXPECT_TRUE(alpha["finalists"]["done"]);
  int64_t total = 0;
  for (const auto& [name, count] : alpha["outcomes"].items()) total += count.get<int64_t>();
  EXPECT_EQ(total, alpha["candidates"].get<int64_t>());

  const ShellOutcome text = Sparseditto("status run");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const json& t : doc["tasks"]) {
    const std::string name = t["name"];
    EXPECT_NE(text.out.find("task " + name + ": done (budget spent)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("evaluations " + std::to_string(t["evaluations"]["done"].get<int64_t>()) + "/"),
              std::string::npos);
    EXPECT_NE(text.out.find("best: " + t["best"]["candidate_id"].get<std::string>()), std::string::npos) << text.out;
  }
}

// What can be checked without a browser: one file, nothing fetched, hostile text escaped, logs trimmed.
TEST_F(ReportTest, TheReportIsSelfContainedAndEscapesWhatTheStoreHolds) {
  const std::string html = Report();
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(Count(html, "<script"), 2u) << "the data block and the page's own script, nothing injected";
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>host</b>"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;script&gt;alert(&#39;pwned&#39;)"), std::string::npos) << "shown, as text";
  EXPECT_NE(html.find("bytes left out ...]"), std::string::npos) << "the megabyte logs are trimmed";
  EXPECT_LT(html.size(), 4u << 20) << "each failure carried a 1 MiB log";
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(html.find("alpha.hostile"), std::string::npos);
  EXPECT_NE(html.find("<details class=\"diff\" data-candidate=\"alpha.hostile\">"), std::string::npos);
}

class ChromiumTest : public ReportTest {
 protected:
  void SetUp() override {
    chromium_ = FindChromium(dir_.path());
    if (chromium_.empty()) {
      GTEST_SKIP() << "no chromium on PATH (nor $SPARSEDITTO_CHROMIUM): install Debian's chromium (scripts/setup.sh does)";
    }
    ReportTest::SetUp();
  }
  // The page's DOM after load; its log lines in *log.
  std::string DumpDom(const fs::path& page, std::string* log) {
    const ShellOutcome r = RunShell("timeout 120 '" + chromium_ + "' --headless --disable-gpu --no-sandbox --disable-dev-shm-usage "
                                    "--enable-logging=stderr --v=0 --no-first-run --user-data-dir='" +
                                    (dir_ / "profile").string() + "' --dump-dom 'file://" + page.string() + "'",
                                    dir_.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    *log = r.err;
    return r.out;
  }
  std::string chromium_;
};

// The detector below would see a broken page: a console error and an uncaught exception are found.
TEST_F(ChromiumTest, ConsoleErrorsAndUncaughtExceptionsAreSeen) {
  std::ofstream(dir_ / "broken.html") << "<!DOCTYPE html><html><body><p>x</p><script>console.error('boom-error');"
                                         "undefinedFunction();</script></body></html>";
  std::string log;
  DumpDom(dir_ / "broken.html", &log);
  const std::vector<std::string> messages = PageMessages(log);
  ASSERT_EQ(messages.size(), 2u) << log;
  EXPECT_NE(messages[0].find("boom-error"), std::string::npos) << messages[0];
  EXPECT_NE(messages[1].find("Uncaught ReferenceError"), std::string::npos) << messages[1];
}

TEST_F(ChromiumTest, TheReportLoadsWithoutErrorsAndShowsTheNumbersOfStatusJson) {
  const json doc = StatusJson();
  Report();
  std::string log;
  const std::string dom = DumpDom(dir_ / "report.html", &log);
  ASSERT_FALSE(dom.empty()) << log;
  EXPECT_TRUE(PageMessages(log).empty()) << "the page logged:\n" << ::testing::PrintToString(PageMessages(log));
  EXPECT_NE(dom.find("data-self-check=\"ok\""), std::string::npos)
      << "the page's own check of its numbers against the status document did not pass or did not run: "
      << dom.substr(dom.find("<body"), 200);
  EXPECT_EQ(dom.find("<img"), std::string::npos) << "injected markup became an element";
  EXPECT_EQ(Count(dom, "<script"), 2u);

  const std::map<std::string, std::string> main = Attributes(dom, dom.find("<main"));
  EXPECT_EQ(main.at("run-id"), doc["run"]["id"]);
  EXPECT_EQ(std::stoul(main.at("tasks")), doc["tasks"].size());
  std::vector<size_t> starts;
  for (size_t at = dom.find("<section class=\"task\""); at != std::string::npos; at = dom.find("<section class=\"task\"", at + 1)) {
    starts.push_back(at);
  }
  ASSERT_EQ(starts.size(), doc["tasks"].size());
  for (size_t i = 0; i < starts.size(); ++i) {
    const json& t = doc["tasks"][i];
    SCOPED_TRACE(t["name"].get<std::string>());
    const std::map<std::string, std::string> a = Attributes(dom, starts[i]);
    EXPECT_EQ(a.at("task"), t["name"]);
    EXPECT_EQ(a.at("state"), t["state"]);
    EXPECT_EQ(std::stoll(a.at("evaluations")), t["evaluations"]["done"].get<int64_t>());
    EXPECT_EQ(std::stoll(a.at("max-evaluations")), t["evaluations"]["max"].get<int64_t>());
    EXPECT_EQ(std::stoll(a.at("candidates")), t["candidates"].get<int64_t>());
    ASSERT_TRUE(t["best"].is_object());
    EXPECT_EQ(a.at("best-id"), t["best"]["candidate_id"]);
    EXPECT_DOUBLE_EQ(std::stod(a.at("best-fitness")), t["best"]["fitness"].get<double>());
    const size_t end = i + 1 < starts.size() ? starts[i + 1] : dom.find("</main>");
    const std::string section = dom.substr(starts[i], end - starts[i]);
    std::map<std::string, int64_t> shown;
    static const std::regex cell("<td data-outcome=\"([^\"]*)\">([0-9]+)</td>");
    for (auto it = std::sregex_iterator(section.begin(), section.end(), cell); it != std::sregex_iterator(); ++it) {
      shown[(*it)[1]] = std::stoll((*it)[2]);
    }
    std::map<std::string, int64_t> want;
    for (const auto& [name, count] : t["outcomes"].items()) want[name] = count.get<int64_t>();
    EXPECT_EQ(shown, want);
    // The best's time at each n of the run, against both baselines.
    size_t rows = 0;
    for (size_t at = section.find("<tr data-n="); at != std::string::npos; at = section.find("<tr data-n=", at + 1)) {
      const std::map<std::string, std::string> row = Attributes(section, at);
      EXPECT_GT(std::stod(row.at("candidate-ms")), 0);
      EXPECT_EQ(std::stod(row.at("baseline-fake_baseline-ms")), 1.0);
      EXPECT_TRUE(row.count("baseline-cusparse_csr-ms"));
      ++rows;
    }
    EXPECT_EQ(rows, 3u) << "n = 16, 128, 2048";
    EXPECT_NE(section.find("<svg"), std::string::npos);
  }
}

}  // namespace
