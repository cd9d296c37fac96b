// The status document of runs a careless or hostile user could point it at, over a real store in a
// temporary folder: a task never started, provenance that is not JSON, text that is not UTF-8 inside it.
#include "report/status_json.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "population_store/population_store.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto::report {
namespace {

TEST(StatusJsonTest, ATaskNeverStartedAndProvenanceThatIsNotJson) {
  testing_support::TempFolder dir("status_json_test");
  auto store = PopulationStore::Create((dir / "store").string());
  ASSERT_TRUE(store.ok()) << store.status();
  store::RunRecord run;
  run.set_run_id("r");
  run.set_created_unix_ms(1000);
  const struct {
    std::string provenance;
    bool parses;
  } cases[] = {{R"({"gpu": "H200"})", true}, {"not json {", false}, {"[1, 2]", false}, {"", false}};
  v1::Task task;
  task.set_name("t");
  task.mutable_budget()->set_max_evaluations(5);
  ASSERT_TRUE((*store)->CreateRun(run).ok());
  ASSERT_TRUE((*store)->PutTask("r", task).ok());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.provenance);
    store::RunRecord record = run;
    record.set_provenance_json(c.provenance);
    const RunFacts facts = ReadRunFacts(**store, record, {task}, dir.path().string());
    const nlohmann::json doc = nlohmann::json::parse(DumpJson(StatusJson(facts)));
    EXPECT_EQ(doc["schema"], kStatusSchema);
    EXPECT_EQ(doc["run"]["provenance"].is_object(), c.parses);
    EXPECT_EQ(doc["run"]["provenance_text"], c.parses ? "" : c.provenance);
    ASSERT_EQ(doc["tasks"].size(), 1u);
    const nlohmann::json& t = doc["tasks"][0];
    EXPECT_EQ(t["state"], "pending");
    EXPECT_TRUE(t["best"].is_null());
    EXPECT_TRUE(t["in_flight"].is_null());
    EXPECT_TRUE(t["confirmation"].is_null());
    EXPECT_EQ(t["evaluations"]["done"], 0);
    EXPECT_EQ(t["evaluations"]["max"], 5);
    EXPECT_EQ(t["candidates"], 0);
    EXPECT_TRUE(t["outcomes"].empty());
    EXPECT_TRUE(doc["errors"].empty());
  }
  // The confirmation's words and numbers (cli/search_common.cc keeps both beside the run) reach the document
  // as they are; a numbers file that is not a confirmation is named in errors and the rest stands.
  Confirmation confirmed;
  confirmed.rounds = 2;
  confirmed.subjects = {{.role = "result", .candidate_id = "t.000003", .rounds_correct = 2, .fitness_median = 1.2,
                         .fitness_low = 1.1, .fitness_high = 1.3}};
  confirmed.ratio_rounds = 2;
  confirmed.ratio_median = 1.15;
  {
    std::ofstream(dir / "t.confirmation.txt") << "confirmed over 2 rounds\n";
    std::ofstream(dir / "t.confirmation.json") << ConfirmationToJson(confirmed);
    const nlohmann::json doc = StatusJson(ReadRunFacts(**store, run, {task}, dir.path().string()));
    const nlohmann::json& c = doc["tasks"][0]["confirmation"];
    EXPECT_EQ(c["text"], "confirmed over 2 rounds");
    EXPECT_EQ(c["numbers"]["rounds"], 2);
    EXPECT_EQ(c["numbers"]["subjects"][0]["candidate_id"], "t.000003");
    EXPECT_DOUBLE_EQ(c["numbers"]["ratio"]["median"].get<double>(), 1.15);
    EXPECT_TRUE(doc["errors"].empty()) << doc["errors"];
  }
  {
    std::ofstream(dir / "t.confirmation.json") << R"({"rounds": "two"})";
    const nlohmann::json doc = StatusJson(ReadRunFacts(**store, run, {task}, dir.path().string()));
    EXPECT_EQ(doc["tasks"][0]["confirmation"]["text"], "confirmed over 2 rounds");
    EXPECT_FALSE(doc["tasks"][0]["confirmation"].contains("numbers"));
    ASSERT_EQ(doc["errors"].size(), 1u);
    EXPECT_NE(doc["errors"][0].get<std::string>().find("t.confirmation.json: confirmation: field rounds"),
              std::string::npos) << doc["errors"];
  }
  std::filesystem::remove(dir / "t.confirmation.json");

  // A task the store does not hold is named in errors; the document is still whole.
  v1::Task missing = task;
  missing.set_name("missing");
  const RunFacts facts = ReadRunFacts(**store, run, {task, missing}, dir.path().string());
  const nlohmann::json doc = StatusJson(facts);
  EXPECT_EQ(doc["tasks"].size(), 1u);
  ASSERT_EQ(doc["errors"].size(), 1u);
  EXPECT_NE(doc["errors"][0].get<std::string>().find("task missing:"), std::string::npos) << doc["errors"];
}

TEST(StatusJsonTest, DumpReplacesBytesThatAreNotUtf8) {
  const nlohmann::json doc = {{"detail", "bad \xFF byte"}};
  const std::string text = DumpJson(doc, -1);
  EXPECT_EQ(text, "{\"detail\":\"bad \xEF\xBF\xBD byte\"}");
  EXPECT_NO_THROW((void)nlohmann::json::parse(text));
}

}  // namespace
}  // namespace sparseditto::report
