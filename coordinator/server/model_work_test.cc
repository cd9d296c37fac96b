// ModelWork (model_work.h): who may register as a mutator service, a request with no service for its
// model failing at once, a request answered through a service with every field of the answer, an
// answer the coordinator does not understand, and a report after the lease ran out.
#include "coordinator/server/model_work.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm_mutator/chat_wire.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

v1::RegisterWorkerRequest Service(const std::string& model) {
  v1::RegisterWorkerRequest r;
  r.mutable_worker()->set_kind(v1::WORKER_KIND_MUTATOR);
  r.mutable_worker()->set_name("svc");
  r.mutable_worker()->set_model(model);
  r.mutable_worker()->set_slots(2);
  return r;
}

class ModelWorkTest : public ::testing::Test {
 protected:
  ModelWorkTest() : work_({.lease = absl::Seconds(30), .pickup_wait = absl::Seconds(5)}, &clock_) {}
  std::string Register(const std::string& model) {
    auto r = work_.Register(Service(model));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->session_id() : "";
  }
  // Pulls until a grant comes (the request is submitted from another thread).
  v1::ChatGrant PullOne(const std::string& session) {
    v1::PullChatJobsRequest pull;
    pull.set_session_id(session);
    pull.set_max_jobs(1);
    pull.set_wait_ms(5000);
    for (int i = 0; i < 100; ++i) {
      auto got = work_.Pull(pull);
      EXPECT_TRUE(got.ok()) << got.status();
      if (got.ok() && got->grants_size() == 1) return got->grants(0);
    }
    ADD_FAILURE() << "no grant";
    return {};
  }
  absl::StatusOr<v1::ReportChatResponse> Report(const std::string& session, const v1::ChatGrant& grant,
                                                const v1::ChatAnswer& answer) {
    v1::ReportChatRequest r;
    r.set_session_id(session);
    r.set_job_id(grant.job().job_id());
    r.set_attempt(grant.attempt());
    *r.mutable_answer() = answer;
    return work_.Report(r);
  }

  jobs::FakeMonotonicClock clock_;
  ModelWork work_;
};

TEST_F(ModelWorkTest, RegisterTakesMutatorServicesOfOneModelOnly) {
  struct Case {
    const char* name;
    std::function<void(v1::RegisterWorkerRequest&)> damage;
    const char* says;
  };
  const Case cases[] = {
      {"evaluator", [](auto& r) { r.mutable_worker()->set_kind(v1::WORKER_KIND_EVALUATOR); }, "mutator services only"},
      {"no_model", [](auto& r) { r.mutable_worker()->clear_model(); }, "worker.model is empty"},
      {"no_slots", [](auto& r) { r.mutable_worker()->set_slots(0); }, "worker.slots 0 < 1"},
      {"forged_session", [](auto& r) { r.set_previous_session_id("../x"); }, "not a session id"},
  };
  for (const Case& c : cases) {
    v1::RegisterWorkerRequest r = Service("m");
    c.damage(r);
    auto reply = work_.Register(r);
    EXPECT_TRUE(absl::IsInvalidArgument(reply.status())) << c.name << ": " << reply.status();
    EXPECT_THAT(std::string(reply.status().message()), HasSubstr(c.says)) << c.name;
  }
  EXPECT_TRUE(work_.LiveServices().empty());
}

TEST_F(ModelWorkTest, ARequestForAModelNoServiceHoldsFailsAtOnceNamingIt) {
  Register("other");
  const llm::ChatResult r = work_.Complete("absent", {.system = "s", .user = "u"}, absl::Seconds(60));
  EXPECT_EQ(r.outcome, llm::ChatOutcome::kConnectionFailed);
  EXPECT_THAT(r.message, HasSubstr("no mutator service answers for model absent"));
}

TEST_F(ModelWorkTest, ARequestIsAnsweredThroughAServiceOfItsModelWithEveryField) {
  const std::string session = Register("m");
  llm::ChatResult asked;
  std::thread search([&] { asked = work_.Complete("m", {.system = "sys", .user = "usr"}, absl::Seconds(60)); });
  const v1::ChatGrant grant = PullOne(session);
  EXPECT_EQ(grant.job().model(), "m");
  EXPECT_EQ(grant.job().system(), "sys");
  EXPECT_EQ(grant.job().user(), "usr");
  llm::ChatResult answer;
  answer.outcome = llm::ChatOutcome::kRateLimited;
  answer.message = "slow down";
  answer.http_status = 429;
  answer.retry_after_seconds = 7;
  answer.prompt_tokens = 11;
  answer.completion_tokens = 3;
  auto reported = Report(session, grant, llm::ChatAnswerOf(answer));
  search.join();
  ASSERT_TRUE(reported.ok()) << reported.status();
  EXPECT_EQ(reported->outcome(), v1::REPORT_OUTCOME_ACCEPTED);
  EXPECT_EQ(asked.outcome, llm::ChatOutcome::kRateLimited);
  EXPECT_EQ(asked.message, "slow down");
  EXPECT_EQ(asked.http_status, 429);
  ASSERT_TRUE(asked.retry_after_seconds.has_value());
  EXPECT_EQ(*asked.retry_after_seconds, 7);
  EXPECT_EQ(asked.prompt_tokens, 11);
  EXPECT_EQ(Report(session, grant, llm::ChatAnswerOf(answer))->outcome(), v1::REPORT_OUTCOME_DUPLICATE);
}

TEST_F(ModelWorkTest, AnAnswerOfAnUnknownOutcomeIsMalformedNotACrash) {
  v1::ChatAnswer answer;
  answer.set_outcome("from_the_future");
  const llm::ChatResult r = llm::ChatResultOf(answer);
  EXPECT_EQ(r.outcome, llm::ChatOutcome::kMalformedResponse);
  EXPECT_THAT(r.message, HasSubstr("from_the_future"));
}

TEST_F(ModelWorkTest, AReportAfterTheLeaseRanOutIsStaleAndTheRequestGoesToAnotherService) {
  const std::string slow = Register("m"), other = Register("m");
  llm::ChatResult asked;
  std::thread search([&] { asked = work_.Complete("m", {.system = "s", .user = "u"}, absl::Seconds(600)); });
  const v1::ChatGrant first = PullOne(slow);
  clock_.Advance(absl::Seconds(31));  // no heartbeat names it: the lease runs out
  v1::HeartbeatRequest beat;
  beat.set_session_id(other);
  ASSERT_TRUE(work_.Heartbeat(beat).ok());
  const v1::ChatGrant second = PullOne(other);
  EXPECT_EQ(second.attempt(), 2);
  llm::ChatResult ok;
  ok.text = "answer";
  EXPECT_EQ(Report(slow, first, llm::ChatAnswerOf(ok))->outcome(), v1::REPORT_OUTCOME_STALE);
  EXPECT_EQ(Report(other, second, llm::ChatAnswerOf(ok))->outcome(), v1::REPORT_OUTCOME_ACCEPTED);
  search.join();
  EXPECT_EQ(asked.outcome, llm::ChatOutcome::kOk);
  EXPECT_EQ(asked.text, "answer");
}

}  // namespace
}  // namespace sparseditto
