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
  EXPECT_EQ(p->find("bad")->details[0], "3 elements outside the tolerance second line");
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
  EXPECT_NE(parseResults("cudal1-results 7\n", "r").error().message().find("version 7"),
            std::string::npos);
  EXPECT_FALSE(parseResults("cudal1-results 1\nresult x outcome=weird\n", "r").ok());
  EXPECT_FALSE(parseResults("cudal1-results 1\ndetail y text\n", "r").ok());
  EXPECT_FALSE(parseResults("cudal1-results 1\nresult x compiler=nvcc\n", "r").ok());
}

TEST(Results, SamplesAndFloorAreOptional) {
  // A results file from before samples and floors were recorded still reads.
  const char *old = "cudal1-results 1\nbundle b\ngpu G\ndate d\nwall-s 1\n"
                    "result original outcome=ok compiler=program compile-s=0 "
                    "verify=program-output timed=yes time-ms=2 speedup=1 lo=1 "
                    "hi=1 faster=no suspicious=no side-work=no rounds=3\n";
  Expected<EvalResults> p = parseResults(old, "old.txt");
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_TRUE(p->results[0].samplesMs.empty());
  EXPECT_FALSE(p->results[0].haveFloor);
  EXPECT_EQ(formatResults(*p), old);

  EvalResults r = *p;
  r.results[0].samplesMs = {2.5, 1.25, 3};
  r.results[0].haveFloor = true;
  r.results[0].floorBytes = 1e9;
  r.results[0].floorFlops = 0;
  r.results[0].floorDtype = "i32";
  std::string text = formatResults(r);
  EXPECT_NE(text.find(" samples-ms=2.5,1.25,3 floor-bytes=1e+09 "
                      "floor-flops=0 floor-dtype=i32\n"),
            std::string::npos);
  Expected<EvalResults> q = parseResults(text, "new.txt");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->results[0].samplesMs, r.results[0].samplesMs);
  EXPECT_TRUE(q->results[0].haveFloor);
  EXPECT_EQ(q->results[0].floorDtype, "i32");
  EXPECT_EQ(formatResults(*q), text);
}

// Issue 19: numbers are read whole and checked; atof read "abc" as 0 and
// atoi overflowed on "rounds=99999999999".
TEST(Results, BadNumbersAreErrors) {
  const std::string head = "cudal1-results 1\n";
  auto error = [&](const std::string &line) {
    Expected<EvalResults> r = parseResults(head + line + "\n", "r.txt");
    return r.ok() ? std::string("(parsed)") : r.error().message();
  };
  EXPECT_EQ(error("result v1 outcome=ok rounds=99999999999"),
            "r.txt:2: rounds='99999999999' is not a number >= 0");
  EXPECT_EQ(error("result v1 outcome=ok time-ms=abc"),
            "r.txt:2: time-ms='abc' is not a number >= 0");
  EXPECT_EQ(error("result v1 outcome=ok speedup=inf"),
            "r.txt:2: speedup='inf' is not a number >= 0");
  EXPECT_EQ(error("result v1 outcome=ok lo=nan"), "r.txt:2: lo='nan' is not a number >= 0");
  EXPECT_EQ(error("result v1 outcome=ok hi=-1"), "r.txt:2: hi='-1' is not a number >= 0");
  EXPECT_EQ(error("result v1 outcome=ok time-ms=1e999"),
            "r.txt:2: time-ms='1e999' is not a number >= 0");
  EXPECT_EQ(error("result v1 outcome=ok samples-ms=1,x,2"),
            "r.txt:2: samples-ms='1,x,2' is not a number >= 0");
  EXPECT_EQ(error("wall-s 12s"), "r.txt:2: wall-s '12s' is not a time in seconds");
  EXPECT_EQ(error("result v1 outcome=ok rounds=2147483647 time-ms=0.5 samples-ms=0.5,1e-3"),
            "(parsed)");
}

TEST(Results, HashRoundTrips) {
  const char *text = "cudal1-results 1\nbundle \ngpu \ndate \nwall-s 0\nresult v1 outcome=ok "
                     "hash=0123456789abcdef0123456789abcdef"
                     " compiler=program compile-s=0 verify=- timed=no\n";
  Expected<EvalResults> p = parseResults(text, "r.txt");
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->results[0].hash, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(formatResults(*p), text);
}
