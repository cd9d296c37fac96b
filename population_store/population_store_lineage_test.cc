// Creation order, duplicate lookup by source hash, lineage, and the separation of tasks and runs.
#include <set>

#include "common/status_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "population_store/population_store.h"
#include "population_store/store_test_util.h"

namespace sparseditto {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace store_testing;

class LineageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    PopulationStoreOptions options;
    options.create_if_missing = true;
    auto opened = PopulationStore::Open(dir_.Sub("store"), options);
    ASSERT_TRUE(opened.ok()) << opened.status();
    store_ = std::move(*opened);
    for (const char* run : {"r1", "r2"}) {
      ASSERT_TRUE(store_->CreateRun(SampleRun(run)).ok());
      for (const char* task : {"t1", "t2"}) ASSERT_TRUE(store_->PutTask(run, SampleTask(task)).ok());
    }
  }
  void Put(std::string_view run, const v1::Candidate& candidate) {
    const absl::Status status = store_->PutCandidate(run, candidate);
    ASSERT_TRUE(status.ok()) << status;
  }
  std::vector<std::string> Ids(std::string_view run, std::string_view task) {
    auto candidates = store_->ListCandidates(run, task);
    EXPECT_TRUE(candidates.ok()) << candidates.status();
    std::vector<std::string> ids;
    for (const v1::Candidate& c : candidates.value_or(std::vector<v1::Candidate>{})) ids.push_back(c.id());
    return ids;
  }

  TempDir dir_;
  std::unique_ptr<PopulationStore> store_;
};

TEST_F(LineageTest, ListsCandidatesInCreationOrderPerTaskAndRun) {
  // Ids and timestamps disagree with the order of storing; the order of storing wins.
  for (const char* id : {"zeta", "alpha", "mu"}) {
    auto candidate = SampleCandidate(id, "t1");
    candidate.set_created_unix_ms(1000 - id[0]);
    Put("r1", candidate);
  }
  Put("r1", SampleCandidate("other-task", "t2"));
  Put("r2", SampleCandidate("other-run", "t1"));
  EXPECT_THAT(Ids("r1", "t1"), ElementsAre("zeta", "alpha", "mu"));
  EXPECT_THAT(Ids("r1", "t2"), ElementsAre("other-task"));
  EXPECT_THAT(Ids("r2", "t1"), ElementsAre("other-run"));
  EXPECT_THAT(Ids("r2", "t2"), IsEmpty());
  EXPECT_THAT(Ids("r3", "t1"), IsEmpty());
}

TEST_F(LineageTest, CreationOrderContinuesAfterReopening) {
  Put("r1", SampleCandidate("b", "t1"));
  store_.reset();
  auto reopened = PopulationStore::Open(dir_.Sub("store"), {});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  store_ = std::move(*reopened);
  Put("r1", SampleCandidate("a", "t1"));
  EXPECT_THAT(Ids("r1", "t1"), ElementsAre("b", "a"));
}

struct DuplicateCase {
  std::string name;
  std::string run, task, hash;
  std::optional<std::string> found;  // the candidate id FindBySourceHash returns
};

TEST_F(LineageTest, FindsTheFirstCandidateWithASourceHashInItsTaskOnly) {
  Put("r1", SampleCandidate("first", "t1", {}, "h1"));
  Put("r1", SampleCandidate("second", "t1", {}, "h1"));  // a duplicate the coordinator let through
  Put("r1", SampleCandidate("in-t2", "t2", {}, "h2"));
  auto unhashed = SampleCandidate("unhashed", "t1");
  unhashed.clear_source_hash();
  Put("r1", unhashed);
  const std::vector<DuplicateCase> cases = {
      {"first of two", "r1", "t1", "h1", "first"},      {"other task", "r1", "t1", "h2", std::nullopt},
      {"its own task", "r1", "t2", "h2", "in-t2"},      {"other run", "r2", "t1", "h1", std::nullopt},
      {"unknown hash", "r1", "t1", "h9", std::nullopt}, {"empty hash", "r1", "t1", "", std::nullopt},
  };
  for (const DuplicateCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto found = store_->FindBySourceHash(c.run, c.task, c.hash);
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_EQ(found->has_value(), c.found.has_value());
    if (c.found) {
      EXPECT_EQ((*found)->id(), *c.found);
    }
  }
}

TEST_F(LineageTest, ChildrenInCreationOrderIncludingCrossovers) {
  Put("r1", SampleCandidate("root", "t1"));
  Put("r1", SampleCandidate("other-root", "t1"));
  Put("r1", SampleCandidate("z-child", "t1", {"root"}));
  Put("r1", SampleCandidate("a-child", "t1", {"root"}));
  Put("r1", SampleCandidate("cross", "t1", {"root", "other-root"}));
  Put("r1", SampleCandidate("grandchild", "t1", {"a-child"}));
  EXPECT_THAT(*store_->Children("r1", "root"), ElementsAre("z-child", "a-child", "cross"));
  EXPECT_THAT(*store_->Children("r1", "other-root"), ElementsAre("cross"));
  EXPECT_THAT(*store_->Children("r1", "a-child"), ElementsAre("grandchild"));
  EXPECT_THAT(*store_->Children("r1", "grandchild"), IsEmpty());
  EXPECT_THAT(*store_->Children("r2", "root"), IsEmpty());
  EXPECT_THAT(*store_->Children("r1", "unknown"), IsEmpty());
}

TEST_F(LineageTest, OneCommitStoresAMutationsChildrenWithTheRunState) {
  Put("r1", SampleCandidate("parent", "t1"));
  const std::vector<v1::Candidate> children = {
      SampleCandidate("kid1", "t1", {"parent"}, "hk"),
      SampleCandidate("kid2", "t1", {"parent"}, "hk"),  // same hash within one commit: kid1 is first
      SampleCandidate("grandkid", "t1", {"kid1"}),      // a parent earlier in the same commit
  };
  store::RunState state = SampleRunState("t1", 0);
  state.set_in_flight_candidate_id("grandkid");  // one of this commit
  const absl::Status status = store_->CommitCandidates("r1", children, state);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_THAT(Ids("r1", "t1"), ElementsAre("parent", "kid1", "kid2", "grandkid"));
  EXPECT_THAT(*store_->Children("r1", "parent"), ElementsAre("kid1", "kid2"));
  EXPECT_THAT(*store_->Children("r1", "kid1"), ElementsAre("grandkid"));
  EXPECT_EQ((*store_->FindBySourceHash("r1", "t1", "hk"))->id(), "kid1");
  EXPECT_EQ(store_->GetRunState("r1", "t1")->in_flight_candidate_id(), "grandkid");
  // Replaying the same commit (a crash before the caller saw the answer) changes nothing.
  ASSERT_TRUE(store_->CommitCandidates("r1", children, state).ok());
  EXPECT_THAT(Ids("r1", "t1"), ElementsAre("parent", "kid1", "kid2", "grandkid"));
  EXPECT_THAT(*store_->Children("r1", "parent"), ElementsAre("kid1", "kid2"));
}

TEST_F(LineageTest, ARefusedCommitStoresNoneOfItsCandidates) {
  const std::vector<v1::Candidate> children = {
      SampleCandidate("fine", "t1"),
      SampleCandidate("orphan", "t1", {"missing-parent"}),
  };
  EXPECT_EQ(store_->CommitCandidates("r1", children, std::nullopt).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::IsNotFound(store_->GetCandidate("r1", "fine").status()));
  EXPECT_THAT(Ids("r1", "t1"), IsEmpty());
  EXPECT_FALSE(store_->FindBySourceHash("r1", "t1", "hash-fine")->has_value());
}

}  // namespace
}  // namespace sparseditto
