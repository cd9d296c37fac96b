// CompilePool over real nvcc compiles (CPU only).
#include "evaluator/compile/compile_pool.h"

#include <set>
#include <thread>

#include "evaluator/compile/compile_test_sources.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using testing::ScratchDir;
using testing::TinyCandidate;

class CompilePoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<NvccCompiler>> compiler =
        NvccCompiler::Create({.nvcc = SPARSEDITTO_NVCC, .cache_directory = scratch_.path() + "/cache"});
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    compiler_ = std::move(*compiler);
    options_.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
    options_.archs = {"sm_80"};
  }

  ScratchDir scratch_;
  std::unique_ptr<NvccCompiler> compiler_;
  CompileOptions options_;
};

TEST_F(CompilePoolTest, CompilesSeveralSourcesConcurrentlyAndReturnsEveryResult) {
  CompilePool pool(compiler_.get(), 2);
  EXPECT_EQ(pool.num_workers(), 2);
  std::vector<std::future<absl::StatusOr<CompileResult>>> futures;
  for (const char* value : {"1.0f", "2.0f", "3.0f", "4.0f"}) futures.push_back(pool.Submit(TinyCandidate(value), options_));
  std::set<std::string> libraries;
  for (auto& future : futures) {
    absl::StatusOr<CompileResult> result = future.get();
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->ok) << result->failure << "\n" << result->log;
    libraries.insert(result->library_path);
  }
  EXPECT_EQ(libraries.size(), 4u);
}

TEST_F(CompilePoolTest, TwinJobsCompileOnceAndTheOtherHitsTheCache) {
  CompilePool pool(compiler_.get(), 2);
  auto first = pool.Submit(TinyCandidate("5.0f"), options_);
  auto second = pool.Submit(TinyCandidate("5.0f"), options_);
  absl::StatusOr<CompileResult> a = first.get(), b = second.get();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->ok && b->ok);
  EXPECT_EQ(int{a->from_cache} + int{b->from_cache}, 1);
  EXPECT_EQ(a->library_path, b->library_path);
}

TEST_F(CompilePoolTest, CallbacksAndShutdownCancelWhatHasNotStarted) {
  CompilePool pool(compiler_.get(), 1);
  CompileOptions slow = options_;
  slow.timeout_seconds = 3;
  auto running = pool.Submit(testing::kCompileBombCandidate, slow);  // holds the only worker ~3 s
  while (pool.queued() > 0) std::this_thread::yield();                // until the worker has taken it
  absl::Mutex mutex;
  std::vector<absl::StatusOr<CompileResult>> callback_results;
  for (int i = 0; i < 2; ++i) {
    pool.Submit(TinyCandidate("6.0f"), options_, [&](absl::StatusOr<CompileResult> result) {
      absl::MutexLock lock(&mutex);
      callback_results.push_back(std::move(result));
    });
  }
  pool.Shutdown();
  absl::StatusOr<CompileResult> first = running.get();  // Shutdown waited for it
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->timed_out);
  ASSERT_EQ(callback_results.size(), 2u);
  for (const auto& result : callback_results) EXPECT_TRUE(absl::IsCancelled(result.status())) << result.status();
  EXPECT_TRUE(absl::IsCancelled(pool.Submit(TinyCandidate("7.0f"), options_).get().status()));
  pool.Shutdown();  // idempotent
}

}  // namespace
}  // namespace sparseditto
