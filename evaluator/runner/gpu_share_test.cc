// GpuShare (gpu_share.h) between runners, each a GpuShare of its own (flock locks belong to an open
// file, so two in one process exclude each other as two processes would): shared holds coexist, an
// exclusive one excludes every other, a runner waiting to time goes before readers that came after
// it, and two runners moving from shared to exclusive at once both get there (no deadlock).
#include "evaluator/runner/gpu_share.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using Mode = GpuShare::Mode;

class GpuShareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(folder_.ok());
    dir_ = folder_.path().string();
  }
  std::unique_ptr<GpuShare> Share() {
    auto share = GpuShare::Open(dir_, "GPU-0a1b");
    EXPECT_TRUE(share.ok()) << share.status();
    return share.ok() ? *std::move(share) : nullptr;
  }
  // Whether `file` ("lock" or "turnstile") could be locked `operation` right now by a third party.
  bool FreeFor(const std::string& file, int operation) {
    const int fd = open((dir_ + "/gpu-GPU-0a1b." + file).c_str(), O_RDWR);
    if (fd < 0) return false;
    const bool free = flock(fd, operation | LOCK_NB) == 0;
    close(fd);
    return free;
  }
  static void WaitUntil(const std::function<bool()>& done) {  // synchronisation only; asserts nothing about time
    while (!done()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  testing_support::TempFolder folder_{"gpu_share_test"};
  std::string dir_;
};

TEST_F(GpuShareTest, SharedHoldsCoexistAndAnExclusiveOneExcludesEveryOther) {
  auto a = Share(), b = Share();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Hold(Mode::kShared).ok());
  ASSERT_TRUE(b->Hold(Mode::kShared).ok());  // would block for ever if shared holds excluded each other
  EXPECT_TRUE(FreeFor("lock", LOCK_SH));
  EXPECT_FALSE(FreeFor("lock", LOCK_EX));
  ASSERT_TRUE(b->Hold(Mode::kNone).ok());
  ASSERT_TRUE(a->Hold(Mode::kExclusive).ok());
  EXPECT_EQ(a->mode(), Mode::kExclusive);
  EXPECT_FALSE(FreeFor("lock", LOCK_SH));
  std::atomic<bool> b_in{false};
  std::thread reader([&] {
    EXPECT_TRUE(b->Hold(Mode::kShared).ok());
    b_in = true;
  });
  WaitUntil([&] { return !FreeFor("turnstile", LOCK_EX); });  // b is past... or in the turnstile
  EXPECT_FALSE(b_in.load()) << "a shared hold was granted beside an exclusive one";
  {
    GpuShare::Scoped back(a.get(), Mode::kShared);  // a downgrade lets b in beside a
    EXPECT_TRUE(back.status().ok());
    reader.join();
    EXPECT_TRUE(b_in.load());
    ASSERT_TRUE(b->Hold(Mode::kNone).ok());  // else the scope's way back to exclusive waits for b
  }
  EXPECT_EQ(a->mode(), Mode::kExclusive) << "the scope restores the mode before it";
  ASSERT_TRUE(a->Hold(Mode::kNone).ok());
  EXPECT_TRUE(FreeFor("lock", LOCK_EX));
}

TEST_F(GpuShareTest, ARunnerWaitingToTimeGoesBeforeReadersThatCameAfterIt) {
  auto holder = Share(), writer = Share(), late = Share();
  ASSERT_TRUE(holder && writer && late);
  ASSERT_TRUE(holder->Hold(Mode::kShared).ok());
  std::mutex order_mutex;
  std::vector<std::string> order;
  auto note = [&](const std::string& who) {
    std::lock_guard<std::mutex> lock(order_mutex);
    order.push_back(who);
  };
  std::thread w([&] {
    EXPECT_TRUE(writer->Hold(Mode::kExclusive).ok());
    note("writer");
    EXPECT_TRUE(writer->Hold(Mode::kNone).ok());
  });
  WaitUntil([&] { return !FreeFor("turnstile", LOCK_EX); });  // the writer holds the turnstile, waiting
  std::thread r([&] {
    EXPECT_TRUE(late->Hold(Mode::kShared).ok());
    note("late reader");
    EXPECT_TRUE(late->Hold(Mode::kNone).ok());
  });
  ASSERT_TRUE(holder->Hold(Mode::kNone).ok());
  w.join();
  r.join();
  EXPECT_EQ(order, (std::vector<std::string>{"writer", "late reader"}));
}

TEST_F(GpuShareTest, RunnersMovingFromSharedToExclusiveAtOnceAllGetThereOneAtATime) {
  constexpr int kRunners = 4;
  std::vector<std::unique_ptr<GpuShare>> shares;
  for (int i = 0; i < kRunners; ++i) shares.push_back(Share());
  std::atomic<int> exclusive{0}, most{0}, done{0};
  std::vector<std::thread> runners;
  for (int i = 0; i < kRunners; ++i) {
    runners.emplace_back([&, i] {
      for (int round = 0; round < 20; ++round) {
        EXPECT_TRUE(shares[i]->Hold(Mode::kShared).ok());
        EXPECT_TRUE(shares[i]->Hold(Mode::kExclusive).ok());
        const int now = ++exclusive;
        most = std::max(most.load(), now);
        --exclusive;
        EXPECT_TRUE(shares[i]->Hold(Mode::kShared).ok());
        EXPECT_TRUE(shares[i]->Hold(Mode::kNone).ok());
      }
      ++done;
    });
  }
  for (std::thread& t : runners) t.join();
  EXPECT_EQ(done.load(), kRunners);
  EXPECT_EQ(most.load(), 1) << "two exclusive holds at once";
}

TEST_F(GpuShareTest, BadFoldersAndIdsAreRefused) {
  EXPECT_EQ(GpuShare::Open("", "0").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GpuShare::Open(dir_, "").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GpuShare::Open(dir_, "../x").status().code(), absl::StatusCode::kInvalidArgument);
  const auto missing = GpuShare::Open(dir_ + "/no/such/folder", "0");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(missing.status().message().find("no/such/folder"), std::string::npos) << missing.status();
  GpuShare::Scoped none(nullptr, Mode::kExclusive);  // no share: nothing to hold
  EXPECT_TRUE(none.status().ok());
}

}  // namespace
}  // namespace sparseditto
