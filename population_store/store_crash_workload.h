// The workload of the kill -9 test, shared by the writer child (store_crash_writer.cc) and the test that
// checks what survived (population_store_crash_test.cc): write i stores candidate i (child of i - 1) and
// commits its evaluation with run state i. Every record is a pure function of i, so the checker knows
// exactly what each acknowledged write must have left.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "fmt/format.h"
#include "population_store/store_test_util.h"

namespace sparseditto::store_testing {

inline constexpr std::string_view kCrashRun = "crash-run";
inline constexpr std::string_view kCrashTask = "crash_task";
// Small memtables: the writer flushes (and compacts) often, so kills also land in those.
inline constexpr size_t kCrashMemtableBytes = 64 * 1024;

inline std::string CrashCandidateId(int64_t i) { return fmt::format("c{:06d}", i); }

inline v1::Candidate CrashCandidate(int64_t i) {
  v1::Candidate candidate = i > 1
                                ? SampleCandidate(CrashCandidateId(i), kCrashTask, {CrashCandidateId(i - 1)})
                                : SampleCandidate(CrashCandidateId(i), kCrashTask);
  // 1 to 24 KiB of source that differs per candidate.
  const size_t bytes = 1024 + static_cast<size_t>((i * 7919) % (23 * 1024));
  std::string source = fmt::format("// candidate {}\n", i);
  while (source.size() < bytes) source += fmt::format("x{} += {};\n", i, source.size());
  candidate.set_source(source);
  candidate.set_source_hash(fmt::format("hash-{}", i));
  candidate.set_generation(static_cast<int>(i));
  candidate.set_created_unix_ms(1'700'000'000'000 + i);
  return candidate;
}

inline v1::EvalResult CrashEvaluation(int64_t i) {
  v1::EvalResult result = SampleEvaluation(CrashCandidateId(i), kCrashTask, 1.0 + static_cast<double>(i));
  result.set_run_log(std::string(static_cast<size_t>(i % 4096), static_cast<char>('a' + i % 26)));
  return result;
}

inline store::RunState CrashRunState(int64_t i) {
  store::RunState state = SampleRunState(kCrashTask, i);
  state.set_search_state(fmt::format("state-after-{}", i));
  return state;
}

// The i of the CrashRunState(i) `state` is, or -1.
inline int64_t CrashEvaluationsIn(const store::RunState& state) {
  long long i = -1;
  return std::sscanf(state.search_state().c_str(), "state-after-%lld", &i) == 1 ? i : -1;
}

}  // namespace sparseditto::store_testing
