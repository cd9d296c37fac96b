#include "evaluator/runner/framing.h"

#include <unistd.h>

#include "gtest/gtest.h"
#include "runner.pb.h"

namespace sparseditto {
namespace {

TEST(FramingTest, RoundTripsThroughAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  v1::RunnerRequest request;
  request.mutable_evaluate()->set_candidate_id("c-42");
  request.mutable_evaluate()->set_check_seed(7);
  ASSERT_TRUE(WriteFrame(fds[1], request).ok());
  close(fds[1]);
  v1::RunnerRequest got;
  ASSERT_TRUE(ReadFrame(fds[0], &got).ok());
  EXPECT_EQ(got.evaluate().candidate_id(), "c-42");
  EXPECT_EQ(got.evaluate().check_seed(), 7u);
  const absl::Status eof = ReadFrame(fds[0], &got);
  EXPECT_TRUE(absl::IsUnavailable(eof)) << eof;
  close(fds[0]);
}

TEST(FramingTest, RefusesOversizeAndTruncatedFrames) {
  EXPECT_TRUE(absl::IsDataLoss(DecodeFrameLength(std::string("\xff\xff\xff\xff", 4)).status()));
  EXPECT_TRUE(absl::IsDataLoss(DecodeFrameLength("ab").status()));
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "\x10\x00\x00\x00" "abc", 7), 7);  // announces 16 bytes, sends 3
  close(fds[1]);
  v1::RunnerRequest got;
  EXPECT_TRUE(absl::IsUnavailable(ReadFrame(fds[0], &got)));
  close(fds[0]);
}

TEST(FramingTest, GarbageDoesNotParse) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "\x03\x00\x00\x00\xff\xff\xff", 7), 7);
  close(fds[1]);
  v1::RunnerRequest got;
  EXPECT_TRUE(absl::IsDataLoss(ReadFrame(fds[0], &got)));
  close(fds[0]);
}

}  // namespace
}  // namespace sparseditto
