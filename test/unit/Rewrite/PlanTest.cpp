// The plan language: parsing, printing, round trips and positioned errors.
#include "cudal1/Rewrite/Plan.h"

#include <gtest/gtest.h>

using namespace cudal1;

namespace {

Plan parseOk(const std::string &text) {
  auto p = parsePlan(text);
  EXPECT_TRUE(bool(p)) << (p ? "" : llvm::toString(p.takeError()));
  return p ? *p : Plan{};
}

std::string parseError(const std::string &text) {
  auto p = parsePlan(text);
  if (p)
    return "";
  return llvm::toString(p.takeError());
}

TEST(PlanTest, ParsesScopesStepsAndParameters) {
  Plan p =
      parseOk("@transpose: coalesce; launch-config(block=32x8); @#2: unroll(loop=0, factor=4)");
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].scope.kernel, "transpose");
  EXPECT_EQ(p.steps[0].transform, "coalesce");
  EXPECT_EQ(p.steps[1].scope.kernel, "transpose"); // a scope holds until the next one
  EXPECT_EQ(p.steps[1].param("block"), std::optional<std::string>("32x8"));
  EXPECT_EQ(p.steps[2].scope.launch, 2);
  EXPECT_EQ(p.steps[2].param("loop"), std::optional<std::string>("0"));
  EXPECT_EQ(p.steps[2].param("factor"), std::optional<std::string>("4"));
  EXPECT_FALSE(p.steps[2].param("block"));
}

TEST(PlanTest, PrintsCanonicallyAndRoundTrips) {
  const char *texts[] = {
      "restrict",
      "@k: unroll(loop=1, factor=8)",
      "@a: coalesce; launch-config(block=32x8); @#3: coarsen(factor=2); @b: fast-math",
      "  @k :unroll( loop = 0 ,factor=2 ) ;; restrict ; ",
  };
  for (const char *t : texts) {
    Plan p = parseOk(t);
    std::string printed = printPlan(p);
    Plan again = parseOk(printed);
    EXPECT_EQ(p, again) << t;
    EXPECT_EQ(printed, printPlan(again)) << t;
  }
  EXPECT_EQ(printPlan(parseOk("  @k :unroll( loop = 0 ,factor=2 ) ;; restrict ; ")),
            "@k: unroll(loop=0, factor=2); restrict");
}

TEST(PlanTest, ErrorsCarryTheColumn) {
  EXPECT_EQ(parseError("@k unroll"), "plan:1:4: error: expected ':' after the scope");
  EXPECT_EQ(parseError("unroll(loop=0"), "plan:1:14: error: expected ',' or ')'");
  EXPECT_EQ(parseError("unroll(loop)"), "plan:1:12: error: expected '=' after parameter 'loop'");
  EXPECT_EQ(parseError("unroll(loop=)"), "plan:1:13: error: expected a value for parameter 'loop'");
  EXPECT_EQ(parseError("unroll restrict"), "plan:1:8: error: expected ';' between steps");
  EXPECT_EQ(parseError("@#x: unroll"), "plan:1:3: error: expected a launch id after '@#'");
  EXPECT_EQ(parseError("unroll(a=1, a=2)"), "plan:1:16: error: parameter 'a' given twice");
  EXPECT_EQ(parseError(""), "plan:1:1: error: the plan has no steps");
  EXPECT_EQ(parseError("; ;"), "plan:1:4: error: the plan has no steps");
  EXPECT_EQ(parseError("3d"), "plan:1:1: error: expected a transform name");
}

TEST(PlanTest, PlansCannotCarrySourceText) {
  // Values are plain tokens: no quotes, braces or operators get through.
  EXPECT_NE(parseError("unroll(loop=\"x\")"), "");
  EXPECT_NE(parseError("unroll(loop=a{b})"), "");
  EXPECT_NE(parseError("unroll(loop=1+1)"), "");
}

TEST(PlanTest, ParsesDims) {
  using Dims = std::vector<unsigned>;
  EXPECT_EQ(parseDims("256"), std::optional<Dims>(Dims{256}));
  EXPECT_EQ(parseDims("32x8"), std::optional<Dims>(Dims{32, 8}));
  EXPECT_EQ(parseDims("8x8x4"), std::optional<Dims>(Dims{8, 8, 4}));
  EXPECT_FALSE(parseDims("0x8"));
  EXPECT_FALSE(parseDims("1x2x3x4"));
  EXPECT_FALSE(parseDims("x8"));
  EXPECT_FALSE(parseDims("abc"));
  // Each dimension at most 1024: 65536x65536 used to wrap to 0 threads.
  EXPECT_EQ(parseDims("1024x1x1"), std::optional<Dims>(Dims{1024, 1, 1}));
  EXPECT_FALSE(parseDims("1025"));
  EXPECT_FALSE(parseDims("65536x65536"));
  EXPECT_FALSE(parseDims("99999999999"));
  EXPECT_FALSE(parseDims("-1"));
}

} // namespace

namespace {

TEST(PlanTest, HostScopes) {
  Plan p =
      parseOk("@sync#3: drop-sync; @loop#1: graph; @#2: streams; @loop: unroll(loop=0, factor=2)");
  ASSERT_EQ(p.steps.size(), 4u);
  EXPECT_EQ(p.steps[0].scope.sync, 3);
  EXPECT_EQ(p.steps[0].scope.loop, -1);
  EXPECT_EQ(p.steps[1].scope.loop, 1);
  EXPECT_EQ(p.steps[1].scope.sync, -1);
  EXPECT_EQ(p.steps[2].scope.launch, 2);
  EXPECT_EQ(p.steps[2].scope.loop, -1);
  EXPECT_EQ(p.steps[3].scope.kernel, "loop"); // a kernel named loop is still a kernel
  std::string text = printPlan(p);
  EXPECT_EQ(text,
            "@sync#3: drop-sync; @loop#1: graph; @#2: streams; @loop: unroll(loop=0, factor=2)");
  EXPECT_EQ(parseOk(text), p);
  EXPECT_NE(parseError("@block#1: graph")
                .find("plan:1:7: error: expected 'loop', 'sync' or 'copy' before '#'"),
            std::string::npos);
  Plan c = parseOk("@copy#2: async-copy; @sync#0: drop-sync");
  ASSERT_EQ(c.steps.size(), 2u);
  EXPECT_EQ(c.steps[0].scope.copy, 2);
  EXPECT_EQ(c.steps[0].scope.sync, -1);
  EXPECT_EQ(c.steps[1].scope.copy, -1);
  EXPECT_EQ(printPlan(c), "@copy#2: async-copy; @sync#0: drop-sync");
  EXPECT_NE(parseError("@loop#: graph").find("expected an id after '@loop#'"), std::string::npos);
}

} // namespace

namespace {

// Issue 19: a database row or a user's plan with a huge integer threw
// std::out_of_range from std::stoi and aborted the tool (and clang).
TEST(PlanTest, HugeIdsAreErrorsNotExceptions) {
  EXPECT_EQ(parseError("@#99999999999: launch-config(block=128)"),
            "plan:1:3: error: launch id 99999999999 is out of range (0 to 2147483647)");
  EXPECT_EQ(parseError("@sync#99999999999: drop-sync"),
            "plan:1:7: error: @sync id 99999999999 is out of range (0 to 2147483647)");
  EXPECT_EQ(parseError("@loop#2147483648: graph"),
            "plan:1:7: error: @loop id 2147483648 is out of range (0 to 2147483647)");
  EXPECT_NE(parseError("@copy#" + std::string(400, '9') + ": async-copy").find("out of range"),
            std::string::npos);
  // The largest id still parses; leading zeros are the same number.
  EXPECT_EQ(parseOk("@#2147483647: streams").steps[0].scope.launch, kMaxPlanId);
  EXPECT_EQ(parseOk("@sync#007: drop-sync").steps[0].scope.sync, 7);
  // Parameters stay tokens: the pass decides (unroll refuses loop=99999999999).
  Plan p = parseOk("@sum: unroll(loop=99999999999, factor=4)");
  EXPECT_EQ(p.steps[0].param("loop"), std::optional<std::string>("99999999999"));
  EXPECT_FALSE(p.steps[0].uintParam("loop"));
  EXPECT_EQ(p.steps[0].uintParam("factor", 1, 64), std::optional<unsigned>(4));
  EXPECT_FALSE(p.steps[0].uintParam("factor", 8, 64));
  EXPECT_FALSE(p.steps[0].uintParam("missing"));
  EXPECT_FALSE(parseOk("k(a=-1)").steps[0].uintParam("a"));
  EXPECT_FALSE(parseOk("k(a=1.5)").steps[0].uintParam("a"));
}

} // namespace
