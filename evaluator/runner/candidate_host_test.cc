// CPU tests of the judge's side of the trust boundary that need no GPU: the candidate host's layer
// list, the bracket's arithmetic and what reaches the step trace of the host's Open. (The host protocol itself runs on the GPU: evaluator_gpu_test and
// the adversarial corpus.)
#include "evaluator/runner/bracket.h"
#include "evaluator/runner/candidate_host.h"
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "evaluator/runner/framing.h"
#include "evaluator/runner/step_trace.h"
#include "kernels/testing/candidate_build.h"

#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

// The step trace reads SPARSEDITTO_RUNNER_TRACE once, at its first use: set before any test runs, to
// a file in this process's own folder.
const std::string kTraceFile = [] {
  const std::string file = testing_support::ProcessTempDir() + "step_trace";
  return setenv("SPARSEDITTO_RUNNER_TRACE", file.c_str(), 1) == 0 ? file : "";
}();

TEST(HostOpenStepsTest, OnlyKnownStepsWithSaneTimesReachTheTrace) {
  ASSERT_FALSE(kTraceFile.empty());
  ASSERT_TRUE(StepTraceOn());
  v1::HostReply reply;
  for (double ms : {2.0, std::nan(""), -1.0, 1e9, 40.0, 7.0}) reply.add_open_step_ms(ms);  // the 6th: no such step
  TraceHostOpenSteps(reply);
  FlushStepTrace("c1");
  std::ifstream in(kTraceFile);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), std::string("c1 ") + kHostOpenSteps[0] + " 1 0.0020\n" + "c1 " + kHostOpenSteps[4] +
                            " 1 0.0400\n")
      << "NaN, negative and absurd times and a 6th step are dropped";
}

// The corpus' forge_open_steps.cu, built and loaded here (its constructor needs no GPU): the Open reply it
// forges on fd 4 parses as a HostReply through the runner's own framing, and of its 65 claimed step times
// only the two sane ones among the five known steps reach the trace. (On the GPU the evaluation fails without a
// CORRECT verdict: corpus.json accepts CRASH, WRONG or REJECTED; on an H100, 2026-12-07, it was REJECTED at
// timing, the host's trial times not finite.)
TEST(HostOpenStepsTest, TheCorpusForgeryOfOpenStepTimesReachesTheTraceOnlyAsSaneKnownSteps) {
  testing_support::TempFolder dir("forge_open_steps");
  ASSERT_TRUE(dir.ok());
  const std::string library = (dir.path() / "forge_open_steps.so").string();
  auto log = testing::CompileCandidate(SPARSEDITTO_NVCC, SPARSEDITTO_SOURCE_DIR "/tests/adversarial/forge_open_steps.cu", {"sm_90"},
                                       library);
  ASSERT_TRUE(log.ok()) << log.status();
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const int saved_fd4 = dup(4);  // -1 when fd 4 was not open
  ASSERT_EQ(dup2(pipe_fds[1], 4), 4);
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);  // the constructor writes its frame to fd 4
  const std::string load_error = handle == nullptr ? dlerror() : "";
  if (saved_fd4 >= 0) {
    dup2(saved_fd4, 4), close(saved_fd4);
  } else {
    close(4);
  }
  close(pipe_fds[1]);
  ASSERT_NE(handle, nullptr) << load_error;
  v1::HostReply forged;
  ASSERT_TRUE(ReadFrame(pipe_fds[0], &forged).ok());
  close(pipe_fds[0]);
  EXPECT_TRUE(forged.ok());
  ASSERT_EQ(forged.open_step_ms_size(), 65) << "the forgery as written";
  TraceHostOpenSteps(forged);
  FlushStepTrace("forged");
  std::ifstream in(kTraceFile);
  std::stringstream text;
  text << in.rdbuf();
  const std::string trace = text.str(), mine = trace.substr(std::min(trace.find("forged "), trace.size()));
  // The trace lists labels in name order: "load the library" (step 4) before "lockdown" (step 3).
  EXPECT_EQ(mine, std::string("forged ") + kHostOpenSteps[4] + " 1 0.0005\n" + "forged " + kHostOpenSteps[3] + " 1 0.0005\n")
      << "NaN, -1 and 1e30 are dropped, and nothing past the five known steps\n" << trace;
}

TEST(HostSandboxLayersTest, Table) {
  struct Case {
    std::string layers;
    bool ok;
    bool sandboxed;
    bool net, ipc, pid, uid, spawn_landlock;
    std::string in_process;
  };
  const Case cases[] = {
      {"off", true, false, false, false, false, false, false, ""},
      {"netns,landlock,seccomp", true, true, true, false, false, false, false, "landlock,seccomp"},
      {"netns,ipcns,pidns,uid,spawn-landlock,landlock,seccomp", true, true, true, true, true, true, true,
       "landlock,seccomp"},
      {"netns,ipcns,landlock,caps,seccomp", true, true, true, true, false, false, false, "landlock,caps,seccomp"},
      {"seccomp", true, true, false, false, false, false, false, "seccomp"},
      {"", true, true, false, false, false, false, false, ""},  // parent-death signal and no_new_privs only
      {"netns,bogus", false, false, false, false, false, false, false, ""},
      {"off,netns", false, false, false, false, false, false, false, ""},
  };
  for (const Case& c : cases) {
    CandidateHostOptions options;
    const absl::Status s = ApplyHostSandboxLayers(c.layers, "/bin/true", "/tmp", &options);
    EXPECT_EQ(s.ok(), c.ok) << c.layers << ": " << s;
    if (!s.ok() || !c.ok) continue;
    EXPECT_EQ(options.sandbox.has_value(), c.sandboxed) << c.layers;
    EXPECT_EQ(options.in_process_layers, c.in_process) << c.layers;
    if (!options.sandbox) continue;
    EXPECT_EQ(options.sandbox->new_network_namespace, c.net) << c.layers;
    EXPECT_EQ(options.sandbox->new_ipc_namespace, c.ipc) << c.layers;
    EXPECT_EQ(options.sandbox->new_pid_namespace, c.pid) << c.layers;
    EXPECT_EQ(options.sandbox->drop_root, c.uid) << c.layers;
    EXPECT_EQ(options.sandbox->landlock.has_value(), c.spawn_landlock) << c.layers;
    EXPECT_FALSE(options.sandbox->new_user_namespace) << c.layers;
    EXPECT_TRUE(options.sandbox->no_new_privs && options.sandbox->parent_death_signal) << c.layers;
  }
}

// A host spawned ahead serves the next candidate only when nothing it was spawned with depends on that
// candidate's library, and only a candidate whose host options are the same in every field.
TEST(SpawnAheadTest, OnlyLayersThatNeedNoLibraryPathAndOnlyTheSameOptions) {
  struct Case {
    std::string layers;
    bool ahead;
  };
  const Case cases[] = {
      {"off", true},
      {"netns,ipcns,landlock,caps,seccomp", true},  // the default
      {"netns,ipcns,pidns,uid,landlock,seccomp", true},
      {"netns,spawn-landlock", false},  // its rules name the library's folder
      {"netns,ipcns,pidns,uid,spawn-landlock,landlock,seccomp", false},
  };
  for (const Case& c : cases) {
    CandidateHostOptions options;
    ASSERT_TRUE(ApplyHostSandboxLayers(c.layers, "/bin/true", "/tmp", &options).ok()) << c.layers;
    EXPECT_EQ(CanSpawnAhead(options), c.ahead) << c.layers;
  }

  CandidateHostOptions base;
  ASSERT_TRUE(ApplyHostSandboxLayers("netns,ipcns,landlock,caps,seccomp", "/bin/true", "/tmp", &base).ok());
  base.host_path = "/opt/sd/bin/sparseditto-candidate-host";
  EXPECT_TRUE(base == base);
  const SharedMatrixFile* other_matrix = reinterpret_cast<const SharedMatrixFile*>(&base);  // compared, never read
  const std::vector<std::function<void(CandidateHostOptions&)>> changes = {
      [](CandidateHostOptions& o) { o.host_path += "2"; },
      [](CandidateHostOptions& o) { o.request_timeout_seconds += 1; },
      [](CandidateHostOptions& o) { o.max_resident_bytes /= 2; },
      [](CandidateHostOptions& o) { o.inherit_variables.push_back("HOME"); },
      [](CandidateHostOptions& o) { o.in_process_layers = "seccomp"; },
      [](CandidateHostOptions& o) { o.sandbox->new_network_namespace = false; },
      [](CandidateHostOptions& o) { o.sandbox.reset(); },
      [other_matrix](CandidateHostOptions& o) { o.task_matrix = other_matrix; },  // another task's matrix
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    CandidateHostOptions changed = base;
    changes[i](changed);
    EXPECT_FALSE(changed == base) << "change " << i;
  }
}

// What a forged report must overcome: reported times scaled down by `scale` leave the rest of the
// batch's true time unexplained in the bracket.
TEST(BracketCalibrationTest, ForgeryBeyondTheToleranceIsVisibleAndHonestReportsFit) {
  BracketCalibration c;
  c.fixed_ms = 0.290;     // two context switches (H200, dev/trusted_timing_probe)
  c.per_trial_ms = 0.045; // a flush of twice the L2 and two events
  c.noise_ms = 0.008;
  struct Case {
    int trials;
    double true_trial_ms;
    double scale;  // reported = true x scale
    bool visible;
  };
  const Case cases[] = {
      // Honest reports fit.
      {20, 0.050, 1.0, false}, {20, 1.0, 1.0, false}, {50, 0.005, 1.0, false},
      // The forgery (0.6x) is seen at every size, at 5 us only in batches of 50 (the cap a
      // 5 us kernel reaches: problem_run_timing.cc), not of 20.
      {20, 0.050, 0.6, true}, {20, 1.0, 0.6, true}, {50, 0.005, 0.6, true}, {20, 0.005, 0.6, false},
      // The limits bracket.h states: 9% of 50 us and 2.3% of 1 ms at 20 trials, about 30% of 5 us at 50.
      {20, 0.050, 0.93, false}, {20, 0.050, 0.89, true},
      {20, 1.0, 0.98, false}, {20, 1.0, 0.97, true},
      {50, 0.005, 0.72, false}, {50, 0.005, 0.65, true},
  };
  for (const Case& k : cases) {
    const double bracket = c.fixed_ms + k.trials * (c.per_trial_ms + k.true_trial_ms);
    const double claimed = k.trials * k.true_trial_ms * k.scale;
    const double excess = bracket - c.Explained(k.trials, claimed);
    EXPECT_EQ(excess > c.Tolerance(k.trials, claimed), k.visible)
        << k.trials << " x " << k.true_trial_ms << " ms reported at " << k.scale << ": excess " << excess
        << " ms, tolerance " << c.Tolerance(k.trials, claimed);
  }
}

}  // namespace
}  // namespace sparseditto
