#include "bench/bench_table.h"

#include "common/shared_gpu.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

v1::EvalResult Result(const std::string& id, v1::FailureCategory failure, std::vector<std::pair<int64_t, double>> ms) {
  v1::EvalResult r;
  r.set_candidate_id(id);
  r.set_failure(failure);
  for (auto [n, t] : ms) {
    auto* timing = r.add_timings();
    timing->set_n(n);
    timing->set_median_ms(t);
  }
  return r;
}

v1::SetupTaskReply FakeSetup() {
  v1::SetupTaskReply s;
  s.set_matrix_nnz(1000000);
  s.set_copy_bandwidth_gbs(4000);
  s.set_tensor_tflops(800);
  s.set_fp32_tflops(50);
  for (int64_t n : {16, 2048}) {
    auto& list = (*s.mutable_baselines())[n];
    auto* dense = list.add_baselines();
    dense->set_name("cublas_dense");
    dense->set_available(true);
    dense->mutable_timing()->set_median_ms(n == 16 ? 0.02 : 0.1);
    auto* csr = list.add_baselines();
    csr->set_name("cusparse_csr");
    csr->set_available(true);
    csr->mutable_timing()->set_median_ms(n == 16 ? 0.04 : 0.05);
    auto* lt = list.add_baselines();
    lt->set_name("cusparselt_2to4");
    lt->set_available(false);
  }
  return s;
}

TEST(BenchTableTest, PhysicalLimitIsTheLargerOfBytesAndFlops) {
  const v1::SetupTaskReply s = FakeSetup();
  // fp16, 4096x4096, 1M nonzeros, n=16: bytes (1M + 2*65536) * 2 = 2.26 MB -> 0.000566 ms at 4 TB/s;
  // flops 32M at 800 TFLOP/s -> 0.00004 ms: memory bound.
  EXPECT_NEAR(PhysicalLimitMs(v1::DTYPE_FP16, 4096, 4096, 1000000, 16, s), 2.0 * (1e6 + 2 * 65536) / 4e12 * 1e3, 1e-9);
  // fp32 at n = 2048: flops 4.1e9 at 50 TFLOP/s = 0.0819 ms > bytes 0.0349 ms.
  EXPECT_NEAR(PhysicalLimitMs(v1::DTYPE_FP32, 4096, 4096, 1000000, 2048, s), 2.0 * 1e6 * 2048 / 50e12 * 1e3, 1e-9);
  EXPECT_EQ(PhysicalLimitMs(v1::DTYPE_FP16, 1, 1, 1, 1, v1::SetupTaskReply()), 0);
}

TEST(BenchTableTest, RowsTakeTheFastestCorrectSeedPerNAndListFailures) {
  v1::Task task;
  task.set_name("t");
  task.set_dtype(v1::DTYPE_FP16);
  task.add_n(16);
  task.add_n(2048);
  const std::vector<v1::EvalResult> results = {
      Result("fast_but_wrong", v1::FAILURE_CATEGORY_WRONG, {{16, 0.001}, {2048, 0.001}}),
      Result("a", v1::FAILURE_CATEGORY_NONE, {{16, 0.01}, {2048, 0.2}}),
      Result("b", v1::FAILURE_CATEGORY_SLOWER, {{16, 0.03}, {2048, 0.08}}),
  };
  const auto rows = MakeBenchRows(task, FakeSetup(), results, 4096, 4096);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].best_kernel, "a");
  EXPECT_DOUBLE_EQ(rows[0].speedup_over_best_baseline, 0.02 / 0.01);
  EXPECT_DOUBLE_EQ(rows[0].speedup_over_dense, 0.02 / 0.01);
  EXPECT_EQ(rows[1].best_kernel, "b");
  EXPECT_DOUBLE_EQ(rows[1].speedup_over_best_baseline, 0.05 / 0.08);
  EXPECT_NE(rows[0].failures.find("fast_but_wrong:WRONG"), std::string::npos);
  EXPECT_GT(rows[0].fraction_of_limit, 0);
  EXPECT_NEAR(GeomeanSpeedup(rows), std::sqrt(2.0 * 0.625), 1e-12);
  EXPECT_NEAR(GeomeanSpeedup(rows, "cusparse_csr"), std::sqrt(4.0 * 0.625), 1e-12);
  const std::string table = FormatBenchTable(rows);
  EXPECT_NE(table.find("cusparselt_2to4 absent"), std::string::npos);
  EXPECT_NE(BenchCsv(rows).find("t,fp16,2048,b,"), std::string::npos);
  EXPECT_EQ(BenchJson(rows)[1]["best_kernel"], "b");
}

TEST(BenchTableTest, RowsListEveryCorrectSeedFastestFirst) {
  v1::Task task;
  task.set_name("t");
  task.set_dtype(v1::DTYPE_BF16);
  task.add_n(16);
  const std::vector<v1::EvalResult> results = {
      Result("slow", v1::FAILURE_CATEGORY_SLOWER, {{16, 0.05}}),
      Result("wrong", v1::FAILURE_CATEGORY_WRONG, {{16, 0.001}}),
      Result("tie_first", v1::FAILURE_CATEGORY_NONE, {{16, 0.02}}),
      Result("untimed_at_16", v1::FAILURE_CATEGORY_NONE, {{2048, 0.01}}),
      Result("tie_second", v1::FAILURE_CATEGORY_NONE, {{16, 0.02}}),
      Result("fast", v1::FAILURE_CATEGORY_NONE, {{16, 0.01}}),
  };
  const auto rows = MakeBenchRows(task, FakeSetup(), results, 64, 64);
  ASSERT_EQ(rows.size(), 1u);
  const std::vector<std::pair<std::string, double>> want = {
      {"fast", 0.01}, {"tie_first", 0.02}, {"tie_second", 0.02}, {"slow", 0.05}};
  EXPECT_EQ(rows[0].seeds_ms, want);
  EXPECT_EQ(rows[0].best_kernel, "fast");
  EXPECT_DOUBLE_EQ(rows[0].kernel_ms, 0.01);
  const nlohmann::ordered_json json = BenchJson(rows);
  ASSERT_EQ(json[0]["seeds_ms"].size(), 4u);
  EXPECT_EQ(json[0]["seeds_ms"][1]["seed"], "tie_first");
  EXPECT_DOUBLE_EQ(json[0]["seeds_ms"][3]["ms"].get<double>(), 0.05);
  const std::string csv = BenchCsv(rows);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "task,dtype,n,best_kernel,kernel_ms,speedup_over_best_baseline,speedup_over_dense,fraction_of_limit,"
            "baselines,failures,seeds,shared_gpu,screened");
  EXPECT_NE(csv.find(",fast=0.010000;tie_first=0.020000;tie_second=0.020000;slow=0.050000,0,\n"), std::string::npos);
}

TEST(BenchTableTest, RowsTimedOnASharedGpuAreMarked) {
  v1::Task task;
  task.set_name("t");
  task.set_dtype(v1::DTYPE_FP16);
  task.add_n(16);
  task.add_n(2048);
  struct Case {
    const char* name;
    double seed_idle_ms, baseline_idle_ms, failed_seed_idle_ms;
    bool shared_16;
    double seed_quickest_ms = 0, baseline_quickest_ms = 0;  // 0: not recorded (a timing stored before it was)
  };
  const Case cases[] = {
      {"quiet", 0.02, 0.02, 0.02, false},
      {"a seed shared", kSharedGpuIdleSlackMs + 0.3, 0.02, 0.02, true},
      {"a baseline shared", 0.02, 0.4, 0.02, true},
      {"at the limit", kSharedGpuIdleSlackMs, kSharedGpuIdleSlackMs, 0.02, false},
      {"only a failed seed shared: its times are not in the row", 0.02, 0.02, 0.5, false},
      {"whole-GPU gate, quiet", 0.138, 0.140, 0.136, false, 0.135, 0.138},
      // The seed's every idle trial waited a little; the bench's quickest (a baseline's) is the reference.
      {"the seed waited in every idle trial", 0.454, 0.140, 0.136, true, 0.450, 0.138},
  };
  for (const Case& c : cases) {
    std::vector<v1::EvalResult> results = {Result("a", v1::FAILURE_CATEGORY_NONE, {{16, 0.01}, {2048, 0.2}}),
                                           Result("w", v1::FAILURE_CATEGORY_WRONG, {{16, 0.01}})};
    results[0].mutable_timings(0)->set_host_idle_median_ms(c.seed_idle_ms);
    results[0].mutable_timings(0)->set_host_idle_quickest_ms(c.seed_quickest_ms);
    results[1].mutable_timings(0)->set_host_idle_median_ms(c.failed_seed_idle_ms);
    v1::SetupTaskReply setup = FakeSetup();
    v1::TimingStats* baseline = (*setup.mutable_baselines())[16].mutable_baselines(1)->mutable_timing();
    baseline->set_host_idle_median_ms(c.baseline_idle_ms);
    baseline->set_host_idle_quickest_ms(c.baseline_quickest_ms);
    const auto rows = MakeBenchRows(task, setup, results, 4096, 4096);
    ASSERT_EQ(rows.size(), 2u) << c.name;
    EXPECT_EQ(rows[0].shared_gpu, c.shared_16) << c.name;
    EXPECT_FALSE(rows[1].shared_gpu) << c.name;  // n = 2048's times were quiet in every case
    const std::string table = FormatBenchTable(rows);
    EXPECT_EQ(table.find("warning: 1 of 2 rows were timed while other work shared the GPU") != std::string::npos,
              c.shared_16)
        << c.name << "\n" << table;
    EXPECT_EQ(BenchJson(rows)[0]["shared_gpu"].get<bool>(), c.shared_16) << c.name;
  }
}

// bench.json read back (`bench --resume`): the rows come back as they were, baselines in their order
// (a baseline absent at n stays absent), and a malformed document names the row and the field.
// bench --screen-margin: a seed only screened (timing_screen) is listed apart and is never the best kernel, even
// when its screen time is the row's lowest; the JSON, CSV and table say so, and read back as they were.
TEST(BenchTableTest, ScreenedSeedsAreListedApartAndNeverTheBest) {
  v1::Task task;
  task.set_name("t");
  task.set_dtype(v1::DTYPE_FP16);
  task.add_n(16);
  std::vector<v1::EvalResult> results = {Result("full", v1::FAILURE_CATEGORY_NONE, {{16, 0.02}}),
                                         Result("screen_slow", v1::FAILURE_CATEGORY_SLOWER, {{16, 0.09}}),
                                         Result("screen_fast", v1::FAILURE_CATEGORY_NONE, {{16, 0.01}})};
  results[1].set_timing_screen(true);
  results[2].set_timing_screen(true);
  const auto rows = MakeBenchRows(task, FakeSetup(), results, 64, 64);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].best_kernel, "full");
  EXPECT_EQ(rows[0].seeds_ms, (std::vector<std::pair<std::string, double>>{{"full", 0.02}}));
  EXPECT_EQ(rows[0].screened_ms, (std::vector<std::pair<std::string, double>>{{"screen_fast", 0.01}, {"screen_slow", 0.09}}));
  const nlohmann::ordered_json json = BenchJson(rows);
  EXPECT_EQ(json[0]["screened_ms"][0]["seed"], "screen_fast");
  auto back = BenchRowsFromJson(nlohmann::ordered_json::parse(json.dump()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)[0].screened_ms, rows[0].screened_ms);
  EXPECT_NE(BenchCsv(rows).find(",screen_fast=0.010000;screen_slow=0.090000\n"), std::string::npos) << BenchCsv(rows);
  EXPECT_NE(FormatBenchTable(rows).find("not in the best kernel column"), std::string::npos);
  // A row without screened seeds writes no screened_ms (as bench.json did before it) and says nothing of it.
  const auto plain = MakeBenchRows(task, FakeSetup(), {results[0]}, 64, 64);
  EXPECT_FALSE(BenchJson(plain)[0].contains("screened_ms"));
  EXPECT_EQ(FormatBenchTable(plain).find("not in the best kernel column"), std::string::npos);
}

TEST(BenchTableTest, JsonRowsReadBackAsTheyWereAndBadOnesNameRowAndField) {
  v1::Task task;
  task.set_name("t");
  task.set_dtype(v1::DTYPE_BF16);
  task.add_n(16);
  task.add_n(2048);
  std::vector<v1::EvalResult> results = {Result("a", v1::FAILURE_CATEGORY_NONE, {{16, 0.01}, {2048, 0.2}}),
                                         Result("b", v1::FAILURE_CATEGORY_NONE, {{16, 0.03}}),
                                         Result("w", v1::FAILURE_CATEGORY_WRONG, {})};
  results[1].mutable_timings(0)->set_host_idle_median_ms(0.9);  // shared GPU at n = 16
  const auto rows = MakeBenchRows(task, FakeSetup(), results, 4096, 4096);
  const nlohmann::ordered_json json = BenchJson(rows);
  auto back = BenchRowsFromJson(nlohmann::ordered_json::parse(json.dump(2)));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(BenchJson(*back).dump(), json.dump());
  EXPECT_EQ(FormatBenchTable(*back), FormatBenchTable(rows));
  EXPECT_EQ(BenchCsv(*back), BenchCsv(rows));
  ASSERT_EQ(back->size(), 2u);
  EXPECT_TRUE((*back)[0].shared_gpu);
  EXPECT_EQ((*back)[0].baselines_ms[2], std::make_pair(std::string("cusparselt_2to4"), -1.0));
  EXPECT_EQ((*back)[0].failures, rows[0].failures);

  struct Bad {
    std::string doc;
    std::string says;
  };
  const std::string good = json[0].dump();
  auto with = [&](const std::string& field, const std::string& value) {
    nlohmann::ordered_json row = json[0];
    if (value.empty()) {
      row.erase(field);
    } else {
      row[field] = nlohmann::ordered_json::parse(value);
    }
    return "[" + good + "," + row.dump() + "]";
  };
  const Bad bad[] = {
      {"{}", "not an array"},
      {"[" + good + ", 7]", "row 1: not an object"},
      {with("task", ""), "row 1: field \"task\""},
      {with("n", "0"), "row 1: field \"n\" missing or not a positive integer"},
      {with("n", "\"16\""), "field \"n\""},
      {with("kernel_ms", "\"fast\""), "row 1: field \"kernel_ms\" missing or not a number"},
      {with("baselines_ms", "{\"cublas_dense\": \"x\"}"), "field \"baselines_ms\""},
      {with("seeds_ms", "[{\"seed\": 3, \"ms\": 1}]"), "field \"seeds_ms\""},
      {with("seeds_ms", ""), "row 1: field \"seeds_ms\" missing or not an array"},
      {with("screened_ms", "{}"), "row 1: field \"screened_ms\" missing or not an array"},
      {with("screened_ms", "[{\"seed\": \"s\"}]"), "field \"screened_ms\""},
      {with("shared_gpu", "1"), "field \"shared_gpu\" missing or not true or false"},
  };
  for (const Bad& b : bad) {
    auto parsed = BenchRowsFromJson(nlohmann::ordered_json::parse(b.doc));
    ASSERT_FALSE(parsed.ok()) << b.doc;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << b.doc;
    EXPECT_NE(std::string(parsed.status().message()).find(b.says), std::string::npos) << parsed.status() << " / " << b.says;
  }
}

TEST(BenchTableTest, NoCorrectSeedLeavesTheRowEmpty) {
  v1::Task task;
  task.add_n(16);
  const auto rows = MakeBenchRows(task, FakeSetup(), {Result("x", v1::FAILURE_CATEGORY_CRASH, {})}, 10, 10);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].best_kernel.empty());
  EXPECT_TRUE(rows[0].seeds_ms.empty());
  EXPECT_NE(FormatBenchTable(rows).find("(none correct)"), std::string::npos);
  EXPECT_EQ(GeomeanSpeedup(rows), 0);
}

// The harness offset note: dense_cublas minus cublas_dense over the short rows that have both, median and range;
// no note with fewer than 3 such rows.
TEST(BenchTableTest, TheHarnessOffsetIsMeasuredFromDenseCublasAgainstItsBaseline) {
  auto row = [](double seed_ms, double base_ms, bool shared = false) {
    BenchRow r;
    r.task = "t", r.dtype = "fp16", r.n = 16, r.best_kernel = "dense_cublas", r.kernel_ms = seed_ms;
    r.seeds_ms = {{"other", seed_ms / 2}, {"dense_cublas", seed_ms}};
    r.baselines_ms = {{"cusparse_csr", 0.1}, {"cublas_dense", base_ms}};
    r.shared_gpu = shared;
    return r;
  };
  struct Case { const char* name; std::vector<BenchRow> rows; int count; double median_us; const char* note; };
  const Case cases[] = {
      {"three short rows", {row(0.0068, 0.0060), row(0.0070, 0.0061), row(0.0065, 0.0060)}, 3, 0.8,
       "timed +0.80 us (median; +0.50 to +0.90, 3 rows with it under 50 us) against it"},
      {"a long row and a shared one are left out", {row(0.0068, 0.0060), row(0.0070, 0.0061), row(0.0880, 0.0910),
                                                    row(0.0100, 0.0060, true)}, 2, 0.85, nullptr},
      {"faster as a candidate", {row(0.0050, 0.0060), row(0.0051, 0.0060), row(0.0052, 0.0060)}, 3, -0.9,
       "are overstated by about that much"},
      {"no pair", {}, 0, 0, nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const HarnessOffset offset = MeasuredHarnessOffset(c.rows);
    EXPECT_EQ(offset.count, c.count);
    EXPECT_NEAR(offset.median_us, c.median_us, 1e-6);
    const std::string table = FormatBenchTable(c.rows);
    if (c.note != nullptr) {
      EXPECT_NE(table.find(c.note), std::string::npos) << table;
    } else {
      EXPECT_EQ(table.find("own cost"), std::string::npos) << table;
    }
  }
}

}  // namespace
}  // namespace sparseditto
