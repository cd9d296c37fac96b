// EvaluationWork over a real RocksDB journal in a temporary folder (job_journal.h): a coordinator
// that stops dead (its objects dropped without a drain) and is restored from the journal keeps every
// accepted result, lets a worker that held a lease report it under its old session, and gives a
// resumed search the same job ids, so nothing acknowledged is asked for again.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/search/evaluation_job.h"
#include "coordinator/server/evaluation_work.h"
#include "coordinator/server/job_journal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

v1::RegisterWorkerRequest Worker(const std::string& previous = "", const std::string& gpu_name = "") {
  v1::RegisterWorkerRequest r;
  r.mutable_worker()->set_kind(v1::WORKER_KIND_EVALUATOR);
  r.mutable_worker()->set_slots(1);
  r.mutable_worker()->set_arch("sm_90");
  r.mutable_worker()->set_gpu_name(gpu_name);
  r.set_previous_session_id(previous);
  return r;
}

v1::EvaluationJob JobFor(const std::string& candidate_id) {
  v1::Task task;
  task.set_name("t");
  v1::Candidate c;
  c.set_id(candidate_id);
  c.set_source("// " + candidate_id);
  return MakeEvaluationJob(task, c, 9, EvaluationKind::kFull);
}

class EvaluationWorkJournalTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(folder_.ok()); }
  // A coordinator process's objects over the journal: the old ones are dropped first (a kill).
  void Start() {
    work_.reset();
    journal_.reset();
    auto journal = JobJournal::Open((folder_.path() / "jobs").string());
    ASSERT_TRUE(journal.ok()) << journal.status();
    journal_ = *std::move(journal);
    auto work = EvaluationWork::Restore({.lease = absl::Seconds(30)}, journal_.get(), &clock_);
    ASSERT_TRUE(work.ok()) << work.status();
    work_ = *std::move(work);
  }
  v1::EvaluationGrant PullOne(const std::string& session) {
    v1::PullEvaluationJobsRequest r;
    r.set_session_id(session);
    r.set_max_jobs(1);
    auto reply = work_->Pull(r);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() && reply->grants_size() == 1 ? reply->grants(0) : v1::EvaluationGrant();
  }
  v1::ReportOutcome Report(const std::string& session, const v1::EvaluationGrant& grant, double fitness) {
    v1::ReportEvaluationRequest r;
    r.set_session_id(session);
    r.set_job_id(grant.job().job_id());
    r.set_attempt(grant.attempt());
    r.mutable_result()->set_candidate_id(grant.job().candidate().id());
    r.mutable_result()->set_task_name("t");
    r.mutable_result()->set_fitness(fitness);
    auto reply = work_->Report(r);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? reply->outcome() : v1::REPORT_OUTCOME_UNSPECIFIED;
  }

  testing_support::TempFolder folder_{"evaluation_work_journal_test"};
  jobs::FakeMonotonicClock clock_;
  std::unique_ptr<JobJournal> journal_;
  std::unique_ptr<EvaluationWork> work_;
};

TEST_F(EvaluationWorkJournalTest, ARestartKeepsResultsLeasesAndPendingJobsAndTheSameIds) {
  Start();
  const std::string session = work_->Register(Worker())->session_id();
  auto a = work_->Submit(JobFor("a")), b = work_->Submit(JobFor("b")), c = work_->Submit(JobFor("c"));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const v1::EvaluationGrant grant_a = PullOne(session), grant_b = PullOne(session);
  EXPECT_EQ(grant_a.job().job_id(), a->job_id());
  EXPECT_EQ(Report(session, grant_a, 0.8), v1::REPORT_OUTCOME_ACCEPTED);  // acknowledged: must survive

  clock_.Advance(absl::Minutes(5));  // the coordinator is down longer than any lease
  Start();
  // The resumed search asks for the same three jobs: the same ids, a's result at once.
  auto a2 = work_->Submit(JobFor("a")), b2 = work_->Submit(JobFor("b")), c2 = work_->Submit(JobFor("c"));
  ASSERT_TRUE(a2.ok() && b2.ok() && c2.ok());
  EXPECT_EQ(a2->job_id(), a->job_id());
  EXPECT_EQ(b2->job_id(), b->job_id());
  EXPECT_EQ(c2->job_id(), c->job_id());
  EXPECT_DOUBLE_EQ(work_->Await(*a2).fitness(), 0.8) << "nothing acknowledged is lost or asked for again";
  // The worker that held b comes back as its session and reports it: its lease got a fresh window.
  auto again = work_->Register(Worker(session));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->session_id(), session);
  EXPECT_EQ(Report(session, grant_b, 0.6), v1::REPORT_OUTCOME_ACCEPTED);
  EXPECT_DOUBLE_EQ(work_->Await(*b2).fitness(), 0.6);
  // c was pending: a worker gets it as its first attempt.
  const std::string other = work_->Register(Worker())->session_id();
  const v1::EvaluationGrant grant_c = PullOne(other);
  EXPECT_EQ(grant_c.job().job_id(), c->job_id());
  EXPECT_EQ(grant_c.attempt(), 1);
  EXPECT_EQ(work_->QueueStats().total(), 3) << "no job queued twice";
}

TEST_F(EvaluationWorkJournalTest, AnAcceptedResultIsInTheJournalBeforeTheReportIsAnswered) {
  Start();
  const std::string session = work_->Register(Worker())->session_id();
  ASSERT_TRUE(work_->Submit(JobFor("a")).ok());
  const v1::EvaluationGrant grant = PullOne(session);
  ASSERT_EQ(Report(session, grant, 0.7), v1::REPORT_OUTCOME_ACCEPTED);
  // What the worker was told is on disk: the journal, closed (it has one user at a time) and read back.
  work_.reset();
  journal_.reset();
  auto journal = JobJournal::Open((folder_.path() / "jobs").string());
  ASSERT_TRUE(journal.ok());
  auto records = (*journal)->ReadAll();
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].state(), v1::JOURNAL_JOB_STATE_DONE);
  EXPECT_DOUBLE_EQ((*records)[0].result().fitness(), 0.7);
  EXPECT_THAT((*records)[0].holders(), ::testing::ElementsAre(session));
}

// A population's GPU model, fixed by its first set-up, survives a restart: its jobs still go to workers
// of that model only.
TEST_F(EvaluationWorkJournalTest, APopulationKeepsItsGpuModelAcrossARestart) {
  Start();
  const std::string h100 = work_->Register(Worker("", "NVIDIA H100"))->session_id();
  v1::Task task = JobFor("x").task();
  absl::Status set_up;
  std::thread search([&] { set_up = work_->SetUp(task); });
  v1::PullEvaluationJobsRequest wait;
  wait.set_session_id(h100);
  wait.set_max_jobs(1);
  wait.set_wait_ms(5000);  // until the set-up job is queued
  auto pulled = work_->Pull(wait);
  if (!pulled.ok() || pulled->grants_size() != 1) {
    work_->Close();  // ends the set-up's wait
    search.join();
    FAIL() << "the set-up job was not granted: " << pulled.status();
  }
  const v1::EvaluationGrant setup_grant = pulled->grants(0);
  v1::ReportEvaluationRequest r;
  r.set_session_id(h100);
  r.set_job_id(setup_grant.job().job_id());
  r.set_attempt(setup_grant.attempt());
  r.mutable_result()->set_task_name("t");
  ASSERT_TRUE(work_->Report(r).ok());
  search.join();
  ASSERT_TRUE(set_up.ok()) << set_up;

  Start();  // killed and started again
  const std::string h200 = work_->Register(Worker("", "NVIDIA H200"))->session_id();
  ASSERT_TRUE(work_->Submit(JobFor("a")).ok());
  v1::PullEvaluationJobsRequest pull;
  pull.set_session_id(h200);
  pull.set_max_jobs(1);
  auto none = work_->Pull(pull);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->grants_size(), 0) << "an H200 takes no job of a population timed on an H100";
  const std::string h100_again = work_->Register(Worker("", "NVIDIA H100"))->session_id();
  EXPECT_EQ(PullOne(h100_again).job().candidate().id(), "a");
}

// SubmitAll journals a batch in one write and the grants of one pull in one write: after a kill every
// job of the batch is read back in submission order, each grant of the pull with its attempt and
// holder, and a resumed search's batch (old jobs and a new one mixed) takes the old ones over.
TEST_F(EvaluationWorkJournalTest, ABatchOfJobsAndThePullsGrantsAreAllRestoredAfterAKill) {
  Start();
  const std::string session = work_->Register(Worker())->session_id();
  std::vector<v1::EvaluationJob> batch = {JobFor("a"), JobFor("b"), JobFor("c"), JobFor("d")};
  std::vector<absl::StatusOr<v1::EvaluationJob>> queued = work_->SubmitAll(batch);
  ASSERT_EQ(queued.size(), 4u);
  std::vector<std::string> ids;
  for (size_t i = 0; i < queued.size(); ++i) {
    ASSERT_TRUE(queued[i].ok()) << queued[i].status();
    EXPECT_EQ(queued[i]->candidate().id(), batch[i].candidate().id()) << "answers in the batch's order";
    ids.push_back(queued[i]->job_id());
  }
  v1::PullEvaluationJobsRequest pull;
  pull.set_session_id(session);
  pull.set_max_jobs(3);
  auto reply = work_->Pull(pull);
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->grants_size(), 3);

  clock_.Advance(absl::Minutes(5));
  Start();  // killed: nothing drained or closed
  auto records = journal_->ReadAll();
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 4u) << "every job of the batch is durable";
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(ids[i]);
    EXPECT_EQ((*records)[i].job_id(), ids[i]) << "in submission order";
    EXPECT_EQ((*records)[i].job().candidate().id(), batch[i].candidate().id());
    if (i < 3) {
      EXPECT_EQ((*records)[i].state(), v1::JOURNAL_JOB_STATE_LEASED) << "each grant of the pull is durable";
      EXPECT_EQ((*records)[i].attempt(), 1);
      EXPECT_THAT((*records)[i].holders(), ::testing::ElementsAre(session));
    } else {
      EXPECT_EQ((*records)[i].state(), v1::JOURNAL_JOB_STATE_PENDING);
    }
  }
  EXPECT_EQ(work_->QueueStats().leased, 3);
  EXPECT_EQ(work_->QueueStats().pending, 1);

  // The resumed search's batch: the four again (taken over, the same ids) and a new one.
  batch.push_back(JobFor("e"));
  queued = work_->SubmitAll(batch);
  ASSERT_EQ(queued.size(), 5u);
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(queued[i].ok()) << queued[i].status();
    EXPECT_EQ(queued[i]->job_id(), ids[i]);
  }
  ASSERT_TRUE(queued[4].ok()) << queued[4].status();
  EXPECT_EQ(work_->QueueStats().total(), 5) << "no job queued twice";
  Start();
  records = journal_->ReadAll();
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 5u);
  EXPECT_EQ(records->back().job_id(), queued[4]->job_id()) << "the new job is durable, after the others";
}

// JobJournal::WriteAll by itself: nothing to write is nothing done; a job named twice in one batch
// keeps the later record; what a batch wrote is read back after the journal is closed and reopened.
TEST_F(EvaluationWorkJournalTest, WriteAllKeepsTheLaterRecordOfAJobNamedTwice) {
  const std::string dir = (folder_.path() / "bare").string();
  {
    auto journal = JobJournal::Open(dir);
    ASSERT_TRUE(journal.ok()) << journal.status();
    EXPECT_TRUE((*journal)->WriteAll({}).ok());
    std::vector<v1::JournalJob> batch(3);
    batch[0].set_job_id("x");
    batch[0].set_state(v1::JOURNAL_JOB_STATE_PENDING);
    batch[1].set_job_id("y");
    batch[1].set_sequence(1);
    batch[2].set_job_id("x");
    batch[2].set_state(v1::JOURNAL_JOB_STATE_DONE);
    ASSERT_TRUE((*journal)->WriteAll(batch).ok());
  }
  auto journal = JobJournal::Open(dir);
  ASSERT_TRUE(journal.ok()) << journal.status();
  auto records = (*journal)->ReadAll();
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].job_id(), "x");
  EXPECT_EQ((*records)[0].state(), v1::JOURNAL_JOB_STATE_DONE);
  EXPECT_EQ((*records)[1].job_id(), "y");
}

TEST_F(EvaluationWorkJournalTest, ASecondCoordinatorOnTheSameJournalIsRefused) {
  Start();
  auto second = JobJournal::Open((folder_.path() / "jobs").string());
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsUnavailable(second.status())) << second.status();
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("another coordinator"));
}

}  // namespace
}  // namespace sparseditto
