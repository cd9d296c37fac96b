#include "report/lineage.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sparseditto::report {
namespace {

// "id@depth" per entry, "*" when repeated, "?" when missing.
std::string Walk(const std::vector<v1::Candidate>& all, const std::string& id, size_t max, bool* truncated = nullptr) {
  std::map<std::string, const v1::Candidate*> by_id;
  for (const v1::Candidate& c : all) by_id[c.id()] = &c;
  std::string out;
  for (const LineageEntry& e : Lineage(by_id, id, max, truncated)) {
    out += (out.empty() ? "" : " ") + e.candidate_id + "@" + std::to_string(e.depth) + (e.repeated ? "*" : "") +
           (e.candidate == nullptr ? "?" : "");
  }
  return out;
}

v1::Candidate C(const std::string& id, std::vector<std::string> parents) {
  v1::Candidate c;
  c.set_id(id);
  for (const std::string& p : parents) c.add_parent_ids(p);
  return c;
}

TEST(LineageTest, WalksParentsBackToTheSeeds) {
  const std::vector<v1::Candidate> all = {C("s1", {}), C("s2", {}), C("a", {"s1"}), C("b", {"a", "s2"}),
                                          C("x", {"a", "b"}), C("plan", {"x", "s2"}), C("orphan", {"gone"}),
                                          C("loop1", {"loop2"}), C("loop2", {"loop1"})};
  const struct {
    std::string id;
    std::string want;
  } cases[] = {
      {"s1", "s1@0"},
      {"a", "a@0 s1@1"},
      {"b", "b@0 a@1 s1@2 s2@1"},
      {"x", "x@0 a@1 s1@2 b@1 a@2* s2@2"},
      {"plan", "plan@0 x@1 a@2 s1@3 b@2 a@3* s2@3 s2@1*"},
      {"orphan", "orphan@0 gone@1?"},
      {"loop1", "loop1@0 loop2@1 loop1@2*"},  // a damaged store's cycle ends
      {"unknown", "unknown@0?"},
  };
  for (const auto& c : cases) EXPECT_EQ(Walk(all, c.id, 1000), c.want) << c.id;
  bool truncated = false;
  EXPECT_EQ(Walk(all, "plan", 3, &truncated), "plan@0 x@1 a@2");
  EXPECT_TRUE(truncated);
  Walk(all, "plan", 100, &truncated);
  EXPECT_FALSE(truncated);
}

TEST(LineageTest, ALongChainDoesNotExhaustTheStack) {
  std::vector<v1::Candidate> all = {C("c0", {})};
  for (int i = 1; i < 100000; ++i) all.push_back(C("c" + std::to_string(i), {"c" + std::to_string(i - 1)}));
  std::map<std::string, const v1::Candidate*> by_id;
  for (const v1::Candidate& c : all) by_id[c.id()] = &c;
  const std::vector<LineageEntry> entries = Lineage(by_id, "c99999", 1000000);
  ASSERT_EQ(entries.size(), 100000u);
  EXPECT_EQ(entries.back().candidate_id, "c0");
  EXPECT_EQ(entries.back().depth, 99999);
}

}  // namespace
}  // namespace sparseditto::report
