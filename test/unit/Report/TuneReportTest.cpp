// The tuner's result as report data: variants under their kernels, one
// baseline per evaluation, the combination and the final plan's time.
#include "cudal1/Report/TuneReport.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace cudal1;

namespace {

Plan plan(const std::string &text) {
  llvm::Expected<Plan> p = parsePlan(text);
  EXPECT_TRUE(bool(p));
  return p ? *p : Plan{};
}

TuneRecord record(const std::string &id, size_t kernel, const std::string &text, Outcome outcome,
                  unsigned round, double ms, double baseMs) {
  TuneRecord r;
  r.candidate.id = id;
  r.candidate.kernel = kernel;
  r.candidate.variant.plan = plan(text);
  r.result.outcome = outcome;
  r.round = round;
  if (outcome == Outcome::Ok) {
    r.result.timed = true;
    r.result.timeMs = ms;
    r.result.baselineMs = baseMs;
    r.result.speedup = baseMs / ms;
    r.result.lo = r.result.speedup * 0.99;
    r.result.hi = r.result.speedup * 1.01;
    r.result.faster = r.result.lo > 1;
    r.result.samplesMs = {ms, ms + 0.1};
    r.result.baselineSamplesMs = {baseMs, baseMs + round};
  } else {
    r.result.details = {"why " + id};
  }
  return r;
}

} // namespace

TEST(TuneReport, MapsRecordsOntoKernels) {
  TuneSpace space;
  space.kernels.resize(2);
  space.kernels[0].name = "scale";
  space.kernels[1].name = "sum";
  TuneResult r;
  r.gpu = "G";
  r.records = {
      record("v000", 0, "@scale: restrict", Outcome::Ok, 1, 48, 60),
      record("v001", 1, "@sum: warp-reduce", Outcome::Ok, 1, 20, 60),
      record("v002", 1, "@sum: launch-config(block=1024)", Outcome::Wrong, 1, 0, 0),
      record("-", 0, "@scale: unroll(loop=0, factor=2)", Outcome::Refused, 0, 0, 0),
      record("v003", 1, "@sum: restrict", Outcome::Ok, 2, 48, 61),
      record("combined", SIZE_MAX, "@scale: restrict; @sum: warp-reduce", Outcome::Ok, 3, 16, 62)};
  r.best.resize(2);
  r.best[0].kernel = "scale";
  r.best[0].plan = plan("@scale: restrict");
  r.best[1].kernel = "sum";
  r.best[1].plan = plan("@sum: warp-reduce");
  r.best[1].tried = 3;
  r.finalPlan = plan("@scale: restrict; @sum: warp-reduce");
  r.finalSpeedup = 3.8;

  ReportData d;
  addTuneResult(d, space, r);
  EXPECT_EQ(d.gpu, "G");
  ASSERT_EQ(d.kernels.size(), 2u);
  EXPECT_EQ(d.kernels[0].variants.size(), 2u); // the refused plan too
  EXPECT_EQ(d.kernels[0].variants[1].measured.outcome, Outcome::Refused);
  ASSERT_EQ(d.kernels[1].variants.size(), 3u);
  EXPECT_EQ(d.kernels[1].variants[1].detail(), "why v002");
  EXPECT_EQ(d.kernels[1].variants[2].batch, 2u);
  EXPECT_EQ(d.kernels[1].variants[0].measured.samplesMs, (std::vector<double>{20, 20.1}));
  EXPECT_EQ(d.kernels[1].tried, 3u);
  // One baseline per evaluation that timed something, with its samples.
  ASSERT_EQ(d.baselines.size(), 3u);
  EXPECT_EQ(d.baselines[0].batch, 1u);
  EXPECT_EQ(d.baselines[1].samplesMs, (std::vector<double>{61, 63}));
  EXPECT_DOUBLE_EQ(d.baselines[2].timeMs, 62);
  ASSERT_TRUE(d.combination.has_value());
  EXPECT_EQ(d.combination->id, "combined");
  EXPECT_EQ(d.finalPlan, "@scale: restrict; @sum: warp-reduce");
  EXPECT_DOUBLE_EQ(d.finalMs, 16);
  EXPECT_DOUBLE_EQ(d.finalSpeedup, 3.8);

  // The page from it: both kernels plotted, the combination shown.
  std::string page = renderReport(d);
  EXPECT_NE(page.find("data-kernels=\"2\" data-plots=\"2\""), std::string::npos);
  EXPECT_NE(page.find("<section id=\"combination\">"), std::string::npos);
  EXPECT_NE(page.find("baseline (2 evaluations)"), std::string::npos);
}
