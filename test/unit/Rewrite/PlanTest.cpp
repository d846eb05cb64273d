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
  Plan p = parseOk("@transpose: coalesce; launch-config(block=32x8); @#2: unroll(loop=0, factor=4)");
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
}

} // namespace

namespace {

TEST(PlanTest, HostScopes) {
  Plan p = parseOk("@sync#3: drop-sync; @loop#1: graph; @#2: streams; @loop: unroll(loop=0, factor=2)");
  ASSERT_EQ(p.steps.size(), 4u);
  EXPECT_EQ(p.steps[0].scope.sync, 3);
  EXPECT_EQ(p.steps[0].scope.loop, -1);
  EXPECT_EQ(p.steps[1].scope.loop, 1);
  EXPECT_EQ(p.steps[1].scope.sync, -1);
  EXPECT_EQ(p.steps[2].scope.launch, 2);
  EXPECT_EQ(p.steps[2].scope.loop, -1);
  EXPECT_EQ(p.steps[3].scope.kernel, "loop"); // a kernel named loop is still a kernel
  std::string text = printPlan(p);
  EXPECT_EQ(text, "@sync#3: drop-sync; @loop#1: graph; @#2: streams; @loop: unroll(loop=0, factor=2)");
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
