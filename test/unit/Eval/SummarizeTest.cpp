// From per-round samples to a verdict: speedup, interval, >10x flag, and
// the detection of work that escapes the stop event.
#include "cudal1/Eval/Evaluator.h"

#include <gtest/gtest.h>

using namespace cudal1;

TEST(Summarize, FasterAndSuspicious) {
  std::vector<double> o(50, 1.0), oa(50, 1.01), v(50, 0.05), va(50, 0.06);
  VariantResult r;
  summarizeTiming(o, oa, v, va, 1, r);
  EXPECT_TRUE(r.timed && r.faster && r.suspicious);
  EXPECT_NEAR(r.speedup, 20, 1e-9);
  EXPECT_FALSE(r.sideWork);
}

TEST(Summarize, SideWorkIsTimedToTheDeviceWideSync) {
  // The kernel returns at once (0.01 ms) but its work runs on for 1 ms.
  std::vector<double> o(50, 1.0), oa(50, 1.01), v(50, 0.01), va(50, 1.2);
  VariantResult r;
  summarizeTiming(o, oa, v, va, 1, r);
  EXPECT_TRUE(r.sideWork);
  EXPECT_FALSE(r.faster);
  EXPECT_NEAR(r.speedup, 1.01 / 1.2, 1e-9);
}
