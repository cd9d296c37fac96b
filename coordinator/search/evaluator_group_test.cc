// EvaluatorGroup (evaluator_group.h): set-up reaches every member, an error names the member and keeps
// its code and NonRetryable mark, the machine-wide calls go to the first, and the pipeline has a taker
// per member.
#include "coordinator/search/evaluator_group.h"

#include <atomic>
#include <string>
#include <vector>

#include "common/non_retryable.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

class SetUpEvaluator : public CandidateEvaluator {
 public:
  explicit SetUpEvaluator(absl::Status answer = absl::OkStatus()) : answer_(std::move(answer)) {}
  absl::Status SetUp(const v1::Task&) override {
    ++set_up;
    return answer_;
  }
  absl::Status RetimeBaselines(const v1::Task&) override {
    ++retimed;
    return answer_;
  }
  v1::EvalResult Evaluate(const v1::Task&, const v1::Candidate&, uint64_t) override {
    ++evaluated;
    return v1::EvalResult();
  }
  std::atomic<int> set_up{0}, retimed{0}, evaluated{0};

 private:
  absl::Status answer_;
};

TEST(EvaluatorGroupTest, SetUpReachesEveryMemberAndAnErrorNamesItsMember) {
  struct Case {
    std::vector<absl::Status> answers;
    absl::StatusCode code;
    std::string message;  // what the error starts with
    bool non_retryable;
  };
  const Case cases[] = {
      {{absl::OkStatus()}, absl::StatusCode::kOk, "", false},
      {{absl::OkStatus(), absl::OkStatus(), absl::OkStatus()}, absl::StatusCode::kOk, "", false},
      {{absl::OkStatus(), absl::UnavailableError("runner died")}, absl::StatusCode::kUnavailable,
       "evaluator 2 of 2 (set-up): runner died", false},
      {{NonRetryable(absl::FailedPreconditionError("no NVIDIA driver")), absl::UnavailableError("x")},
       absl::StatusCode::kFailedPrecondition, "evaluator 1 of 2 (set-up): no NVIDIA driver", true},
  };
  for (const Case& c : cases) {
    std::vector<std::unique_ptr<SetUpEvaluator>> members;
    std::vector<CandidateEvaluator*> raw;
    for (const absl::Status& a : c.answers) {
      members.push_back(std::make_unique<SetUpEvaluator>(a));
      raw.push_back(members.back().get());
    }
    EvaluatorGroup group(raw);
    EXPECT_EQ(group.pipeline().Slots(), static_cast<int>(raw.size()));
    const absl::Status s = group.SetUp(v1::Task());
    EXPECT_EQ(s.code(), c.code) << s;
    if (!s.ok()) EXPECT_EQ(std::string(s.message()).rfind(c.message, 0), 0u) << s;
    EXPECT_EQ(IsNonRetryable(s), c.non_retryable) << s;
    for (const auto& m : members) EXPECT_EQ(m->set_up.load(), 1) << "every member, once";
    (void)group.Evaluate(v1::Task(), v1::Candidate(), 1);
    EXPECT_EQ(members[0]->evaluated.load(), 1) << "the machine-wide calls go to the first";
    for (size_t i = 1; i < members.size(); ++i) EXPECT_EQ(members[i]->evaluated.load(), 0);
  }
}

TEST(EvaluatorGroupTest, BaselinesAreRetimedWhereTheConfirmationEvaluates) {
  SetUpEvaluator a, b;
  EvaluatorGroup group({&a, &b});
  EXPECT_TRUE(group.RetimeBaselines(v1::Task()).ok());
  EXPECT_EQ(a.retimed.load(), 1);
  EXPECT_EQ(b.retimed.load(), 0);
}

}  // namespace
}  // namespace sparseditto
