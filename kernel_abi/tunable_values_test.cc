#include "kernel_abi/tunable_values.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_abi/tunables.h"

namespace sparseditto {
namespace {

const DeviceFacts kH200{.sm_count = 132, .smem_per_block = 232448, .smem_per_sm = 233472, .arch = 90};
const DeviceFacts kA100{.sm_count = 108, .smem_per_block = 166912, .smem_per_sm = 167936, .arch = 80};

TEST(TunableValuesTest, ResolvesAgainstTheDevice) {
  struct Case {
    std::string spec, current;
    DeviceFacts device;
    std::vector<std::string> want;
    bool device_relative;
  };
  const std::vector<Case> cases = {
      {"values=[32, 64]", "32", kH200, {"32", "64"}, false},
      {"values=[VARIANT_STREAM, VARIANT_SPLIT]", "VARIANT_SPLIT", {}, {"VARIANT_STREAM", "VARIANT_SPLIT"}, false},
      {"values=[(128, 64), {64,64}, (32,32)]", "(32,32)", {}, {"(128,64)", "{64,64}", "(32,32)"}, false},
      {"values=device:sm_count*[1, 2, 4]", "264", kH200, {"132", "264", "528"}, true},
      // Written for the H200, read on an A100: the literal stays allowed, in numeric order.
      {"values=device:sm_count*[1, 2, 4]", "264", kA100, {"108", "216", "264", "432"}, true},
      // Unknown facts: only the current value, so the tunable does not move.
      {"values=device:sm_count*[1, 2, 4]", "264", {}, {"264"}, true},
      {"values=[1, sm_count, 2*sm_count, smem_per_block/1024]", "1", kH200, {"1", "132", "264", "227"}, true},
      {"values=[1, sm_count]", "1", {}, {"1"}, true},
      {"range=[32, smem_per_block/1024]", "64", kH200, {"32", "64", "128"}, true},
      {"range=[32, smem_per_block/1024]", "96", kA100, {"32", "64", "96", "128"}, true},
      {"range=[16, 64, +16]", "48", {}, {"16", "32", "48", "64"}, true},
      {"range=[32, smem_per_sm/1024]", "48", {}, {"48"}, true},
      {"values=[arch]", "90", kH200, {"90"}, true},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ResolvedValues> r = ResolveTunableValues(c.spec, c.current, c.device);
    ASSERT_TRUE(r.ok()) << c.spec << ": " << r.status();
    EXPECT_EQ(r->values, c.want) << c.spec << " on " << c.device.ToString();
    EXPECT_EQ(r->device_relative, c.device_relative) << c.spec;
  }
}

TEST(TunableValuesTest, MalformedSpecsSayWhy) {
  struct Case { std::string spec, current, want; };
  const std::vector<Case> cases = {
      {"values=[1, 2]", "3", "value 3 not in [1, 2]"},
      {"values=[]", "1", "has an empty or malformed entry"},
      {"values=[(1,2]", "1", "has an empty or malformed entry"},
      {"values=[(1,,2)]", "(1,2)", "has an empty or malformed entry"},
      {"values=[sm_count*2*2]", "1", "more than one operator"},
      {"values=[warps*2]", "1", "'warps' is neither an integer nor a device fact"},
      {"values=device:warps*[1]", "1", "'warps' is not a device fact"},
      {"values=device:sm_count*[a]", "1", "needs integers"},
      {"range=[1]", "1", "needs [LO, HI]"},
      {"range=[1, 8, *2]", "1", "must be +N"},
      {"range=[1, 1000, +1]", "1", "more than 64 values"},
      {"choices=[1]", "1", "is not values=[...] or range=[...]"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ResolvedValues> r = ResolveTunableValues(c.spec, c.current, kH200);
    ASSERT_FALSE(r.ok()) << c.spec;
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << c.spec << ": " << r.status();
  }
}

TEST(TunableValuesTest, ArchNumbers) {
  for (const auto& [arch, want] : std::vector<std::pair<std::string, int64_t>>{
           {"sm_90a", 90}, {"sm_80", 80}, {"compute_90", 90}, {"", 0}, {"gpu", 0}}) {
    EXPECT_EQ(ArchNumber(arch), want) << arch;
  }
}

constexpr char kStructural[] =
    "// sparseditto:family stream\n"
    "#define TILE (128,64)  // sparseditto:tunable values=[(128, 64), (64,64)]\n"
    "#define VARIANT STREAM // sparseditto:tunable values=[STREAM, SPLIT_K]\n"
    "#define GRID 264       // sparseditto:tunable values=device:sm_count*[1, 2]\n";

TEST(TunableValuesTest, TuplesVariantsAndDeviceValuesParseAndSubstitute) {
  auto parsed = ParseTunables(kStructural, kH200);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ((*parsed)[0].value(), "(128,64)");
  EXPECT_EQ((*parsed)[0].allowed_values(1), "(64,64)");
  EXPECT_EQ((*parsed)[2].allowed_values_size(), 2);  // 132 and 264 (the current value, listed once)
  auto out = ApplyTunables(kStructural, {{"TILE", "(64,64)"}, {"VARIANT", "SPLIT_K"}, {"GRID", "132"}}, kH200);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE(out->find("#define TILE (64,64)  //"), std::string::npos) << *out;
  EXPECT_NE(out->find("#define VARIANT SPLIT_K //"), std::string::npos) << *out;
  EXPECT_NE(out->find("#define GRID 132       //"), std::string::npos) << *out;
  // Without facts GRID allows only 264.
  EXPECT_FALSE(ApplyTunables(kStructural, {{"GRID", "132"}}).ok());
  EXPECT_EQ(DeclaredFamily(kStructural), "stream");
  EXPECT_EQ(DeclaredFamily("#define A 1\n"), "");
  EXPECT_EQ(DeclaredFamily("// sparseditto:family csr_rows  (shared names)\n"), "csr_rows");
  EXPECT_EQ(DeclaredFamily("// sparseditto:familyx\n"), "");
}

}  // namespace
}  // namespace sparseditto
