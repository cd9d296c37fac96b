// kill -9 at a random moment loses no acknowledged write. A child process (fork, then exec of
// population_store_crash_writer, so it starts with no RocksDB state inherited from this one) writes in a
// loop and acknowledges each committed write through a pipe; the parent SIGKILLs it at a random point,
// reopens the store and checks every acknowledged write is there, intact, and consistent with the run
// state. Several rounds on one store, each resuming where the last left off. No timing asserts.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <random>

#include "common/status_format.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "population_store/population_store.h"
#include "population_store/store_crash_workload.h"

namespace sparseditto {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;
using namespace store_testing;

constexpr int kRounds = 6;

// Reads one acknowledgement; false at end of file (the child is gone and everything it sent is read).
bool ReadAck(int fd, int64_t* value) {
  char* out = reinterpret_cast<char*>(value);
  size_t got = 0;
  while (got < sizeof *value) {
    const ssize_t n = read(fd, out + got, sizeof *value - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

// Starts the writer at write `first`; returns its pid and the read end of its acknowledgement pipe.
std::pair<pid_t, int> StartWriter(const std::string& store, int64_t first) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, -1};
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  // Everything the child needs is made before fork: between fork and exec it only closes and execs.
  const std::string first_text = std::to_string(first);
  const std::string fd_text = std::to_string(fds[1]);
  const char* argv[] = {STORE_CRASH_WRITER, store.c_str(), first_text.c_str(), fd_text.c_str(), nullptr};
  const pid_t pid = fork();
  if (pid == 0) {
    execv(STORE_CRASH_WRITER, const_cast<char* const*>(argv));
    _exit(127);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

// Checks the store after a kill; returns the number of writes it holds (E), or -1 after a failure.
int64_t CheckSurvivors(const std::string& path, int64_t acknowledged) {
  PopulationStoreOptions options;
  options.memtable_bytes = kCrashMemtableBytes;
  auto store = PopulationStore::Open(path, options);
  EXPECT_TRUE(store.ok()) << "the store does not open cleanly after kill -9: " << store.status();
  if (!store.ok()) return -1;
  const PopulationStore& s = **store;
  auto state = s.GetRunState(kCrashRun, kCrashTask);
  if (acknowledged == 0 && absl::IsNotFound(state.status())) return 0;
  EXPECT_TRUE(state.ok()) << state.status();
  if (!state.ok()) return -1;
  const int64_t stored = CrashEvaluationsIn(*state);
  EXPECT_GE(stored, acknowledged) << "an acknowledged write is lost";
  EXPECT_TRUE(MessageDifferencer::Equals(*state, CrashRunState(stored))) << state->DebugString();
  // Every write up to the run state's count is whole: candidate, evaluation, lineage, hash index.
  for (int64_t i = 1; i <= stored; ++i) {
    SCOPED_TRACE(fmt::format("write {}", i));
    auto candidate = s.GetCandidate(kCrashRun, CrashCandidateId(i));
    auto evaluation = s.GetEvaluation(kCrashRun, CrashCandidateId(i));
    auto same_hash = s.FindBySourceHash(kCrashRun, kCrashTask, fmt::format("hash-{}", i));
    auto children = s.Children(kCrashRun, CrashCandidateId(i - 1 > 0 ? i - 1 : 0));
    if (!candidate.ok() || !evaluation.ok() || !same_hash.ok() || !same_hash->has_value()) {
      ADD_FAILURE() << candidate.status() << " " << evaluation.status() << " " << same_hash.status();
      return -1;
    }
    EXPECT_TRUE(MessageDifferencer::Equals(*candidate, CrashCandidate(i)));
    EXPECT_TRUE(MessageDifferencer::Equals(*evaluation, CrashEvaluation(i)));
    EXPECT_EQ((*same_hash)->id(), CrashCandidateId(i));
    if (i > 1) {
      EXPECT_THAT(*children, ElementsAre(CrashCandidateId(i)));
    }
  }
  // Nothing beyond: the evaluation and the run state were one write.
  EXPECT_TRUE(absl::IsNotFound(s.GetEvaluation(kCrashRun, CrashCandidateId(stored + 1)).status()));
  // The candidate of the next write may be stored (killed between its two writes), nothing further.
  auto all = s.ListCandidates(kCrashRun, kCrashTask);
  EXPECT_TRUE(all.ok()) << all.status();
  if (!all.ok()) return -1;
  EXPECT_TRUE(all->size() == static_cast<size_t>(stored) || all->size() == static_cast<size_t>(stored + 1))
      << all->size() << " candidates for " << stored << " evaluations";
  for (size_t k = 0; k < all->size(); ++k)
    EXPECT_EQ((*all)[k].id(), CrashCandidateId(static_cast<int64_t>(k) + 1));
  return stored;
}

TEST(PopulationStoreCrash, KillNineLosesNoAcknowledgedWrite) {
  uint64_t seed = std::random_device{}();
  if (const char* fixed = std::getenv("SPARSEDITTO_CRASH_SEED")) seed = std::strtoull(fixed, nullptr, 10);
  SCOPED_TRACE(fmt::format("seed {} (rerun with SPARSEDITTO_CRASH_SEED={})", seed, seed));
  std::mt19937_64 random(seed);

  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.Sub("store");
  {
    auto store = PopulationStore::Create(path);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->CreateRun(SampleRun(kCrashRun)).ok());
    ASSERT_TRUE((*store)->PutTask(kCrashRun, SampleTask(kCrashTask)).ok());
  }
  int64_t stored = 0;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    const auto [pid, acks] = StartWriter(path, stored + 1);
    ASSERT_GT(pid, 0);
    // Wait for a random number of acknowledgements, then let the child run on a random while.
    const int64_t wanted = std::uniform_int_distribution<int64_t>(1, 40)(random);
    int64_t acknowledged = stored;
    int64_t got = 0;
    int64_t ack = 0;
    while (got < wanted && ReadAck(acks, &ack)) {
      EXPECT_EQ(ack, acknowledged + 1) << "acknowledgements come in order";
      acknowledged = ack;
      ++got;
    }
    ASSERT_EQ(got, wanted) << "the writer stopped by itself (see its stderr)";
    const int yields = std::uniform_int_distribution<int>(0, 3000)(random);
    for (int k = 0; k < yields; ++k) sched_yield();
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int wait_status = 0;
    ASSERT_EQ(waitpid(pid, &wait_status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL) << "status " << wait_status;
    // Acknowledgements sent before the kill are still in the pipe; they count.
    while (ReadAck(acks, &ack)) acknowledged = ack;
    close(acks);

    const int64_t now_stored = CheckSurvivors(path, acknowledged);
    ASSERT_GE(now_stored, acknowledged);
    RecordProperty(fmt::format("round{}", round),
                   fmt::format("acknowledged {}, stored {}", acknowledged, now_stored));
    stored = now_stored;
  }
}

}  // namespace
}  // namespace sparseditto
