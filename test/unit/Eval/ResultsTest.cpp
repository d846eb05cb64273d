// The results file round-trips and rejects what it cannot read.
#include "cudal1/Eval/Results.h"

#include <gtest/gtest.h>

using namespace cudal1;

TEST(Results, RoundTrips) {
  EvalResults r;
  r.bundle = "/tmp/b";
  r.gpu = "NVIDIA H200";
  r.date = "2026-12-02T12:00:00Z";
  r.wallSeconds = 12.5;
  VariantResult o;
  o.id = "original";
  o.outcome = Outcome::Ok;
  o.compiler = "nvrtc";
  o.timed = true;
  o.timeMs = 0.5;
  o.speedup = o.lo = o.hi = 1;
  o.rounds = 100;
  r.results.push_back(o);
  VariantResult v;
  v.id = "bad";
  v.outcome = Outcome::Wrong;
  v.verifyMode = "double-reference";
  v.details = {"3 elements outside the tolerance\nsecond line"};
  v.mismatches = {"launch 0 run 0 arg 2 [5]: expected 1 got nan"};
  r.results.push_back(v);
  VariantResult f = o;
  f.id = "fast";
  f.speedup = 2.01;
  f.lo = 1.98;
  f.hi = 2.05;
  f.faster = true;
  f.sideWork = true;
  r.results.push_back(f);

  std::string text = formatResults(r);
  Expected<EvalResults> p = parseResults(text, "r.txt");
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->gpu, "NVIDIA H200");
  ASSERT_EQ(p->results.size(), 3u);
  EXPECT_EQ(p->find("bad")->outcome, Outcome::Wrong);
  EXPECT_EQ(p->find("bad")->details[0],
            "3 elements outside the tolerance second line");
  EXPECT_EQ(p->find("bad")->mismatches.size(), 1u);
  EXPECT_FALSE(p->find("bad")->timed);
  const VariantResult *pf = p->find("fast");
  EXPECT_TRUE(pf->faster && pf->sideWork && pf->timed);
  EXPECT_DOUBLE_EQ(pf->lo, 1.98);
  EXPECT_EQ(pf->rounds, 100);
  EXPECT_EQ(formatResults(*p), text);
}

TEST(Results, RejectsBadFiles) {
  EXPECT_FALSE(parseResults("", "r").ok());
  EXPECT_NE(parseResults("cudal1-results 7\n", "r").error().message().find(
                "version 7"),
            std::string::npos);
  EXPECT_FALSE(parseResults("cudal1-results 1\nresult x outcome=weird\n", "r")
                   .ok());
  EXPECT_FALSE(parseResults("cudal1-results 1\ndetail y text\n", "r").ok());
  EXPECT_FALSE(parseResults("cudal1-results 1\nresult x compiler=nvcc\n", "r")
                   .ok());
}
