// Median of bucket averages and the paired bootstrap on synthetic samples.
#include "cudal1/Eval/Stats.h"

#include <gtest/gtest.h>

#include <random>

using namespace cudal1;

TEST(Stats, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(Stats, BucketAverages) {
  std::vector<double> b = bucketAverages({1, 2, 3, 4, 5, 6}, 3);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_DOUBLE_EQ(b[0], 1.5);
  EXPECT_DOUBLE_EQ(b[2], 5.5);
  EXPECT_EQ(bucketAverages({1, 2}, 10).size(), 2u);
}

TEST(Stats, OutliersDoNotMoveTheEstimate) {
  std::vector<double> s(100, 1.0);
  s[17] = 1000; // one preempted launch
  s[60] = 500;
  EXPECT_DOUBLE_EQ(medianOfBucketAverages(s, 10), 1.0);
}

namespace {
std::vector<double> noisy(double mean, double sd, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(mean, sd);
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i)
    v.push_back(d(rng));
  return v;
}
} // namespace

TEST(Stats, SameDistributionIntervalContainsOne) {
  auto a = noisy(1.0, 0.02, 400, 1), b = noisy(1.0, 0.02, 400, 2);
  SpeedupEstimate e = bootstrapSpeedup(a, b, 10, 1000, 3);
  EXPECT_LT(e.lo, 1.0);
  EXPECT_GT(e.hi, 1.0);
  EXPECT_FALSE(isFaster(e));
  EXPECT_NEAR(e.speedup, 1.0, 0.01);
}

TEST(Stats, TwiceAsFastIsFaster) {
  auto a = noisy(2.0, 0.05, 200, 4), b = noisy(1.0, 0.05, 200, 5);
  SpeedupEstimate e = bootstrapSpeedup(a, b, 10, 1000, 6);
  EXPECT_NEAR(e.speedup, 2.0, 0.05);
  EXPECT_TRUE(isFaster(e));
  EXPECT_LE(e.lo, e.speedup);
  EXPECT_GE(e.hi, e.speedup);
  EXPECT_GT(e.lo, 1.8);
}

TEST(Stats, OnePercentWithTenPercentNoiseIsNotCalledFaster) {
  auto a = noisy(1.01, 0.1, 30, 7), b = noisy(1.0, 0.1, 30, 8);
  EXPECT_FALSE(isFaster(bootstrapSpeedup(a, b, 10, 1000, 9)));
}

TEST(Stats, TinyButCertainGainIsNotCalledFaster) {
  // Noise-free 0.5%: the interval excludes 1.0, the effect is below the
  // minimum (seen on the H200 as self-copies at 1.0001x).
  std::vector<double> a(300, 1.005), b(300, 1.0);
  SpeedupEstimate e = bootstrapSpeedup(a, b, 10, 500, 1);
  EXPECT_GT(e.lo, 1.0);
  EXPECT_FALSE(isFaster(e));
}

TEST(Stats, PairedDriftCancels) {
  // Both slow down together halfway (a clock change): the ratio is stable.
  std::vector<double> a, b;
  for (int i = 0; i < 200; ++i) {
    double drift = i < 100 ? 1.0 : 1.5;
    a.push_back(1.2 * drift);
    b.push_back(1.0 * drift);
  }
  SpeedupEstimate e = bootstrapSpeedup(a, b, 10, 500, 1);
  EXPECT_NEAR(e.speedup, 1.2, 1e-9);
  EXPECT_TRUE(isFaster(e));
}

TEST(Stats, Deterministic) {
  auto a = noisy(1.0, 0.1, 50, 1), b = noisy(0.9, 0.1, 50, 2);
  SpeedupEstimate x = bootstrapSpeedup(a, b, 10, 500, 42);
  SpeedupEstimate y = bootstrapSpeedup(a, b, 10, 500, 42);
  EXPECT_EQ(x.lo, y.lo);
  EXPECT_EQ(x.hi, y.hi);
}

namespace {
SpeedupEstimate interval(double lo, double hi) {
  SpeedupEstimate e;
  e.lo = lo;
  e.hi = hi;
  e.speedup = (lo + hi) / 2;
  return e;
}
} // namespace

TEST(Race, SlowerAndBeatenVariantsCannotWin) {
  // [0.9, 0.98] is below the original; [1.0, 1.005] can never reach 1.01x;
  // [1.2, 1.4] lies below the surest variant's lower end (1.5).
  std::vector<std::optional<SpeedupEstimate>> est = {interval(0.9, 0.98), interval(1.0, 1.005),
                                                     interval(1.2, 1.4), interval(1.5, 1.7),
                                                     interval(1.3, 1.6)};
  RaceVerdict v = raceVerdict(est, /*dropBeaten=*/true);
  EXPECT_EQ(v.cannotWin, (std::vector<bool>{true, true, true, false, false}));
  EXPECT_FALSE(v.decided); // two are left
  // Without dropBeaten (the kernel worker) the beaten one stays.
  EXPECT_EQ(raceVerdict(est).cannotWin, (std::vector<bool>{true, true, false, false, false}));
}

TEST(Race, OneVariantLeftAndFasterDecidesTheRace) {
  RaceVerdict v = raceVerdict({interval(0.5, 0.6), interval(2.0, 2.2)}, true);
  EXPECT_EQ(v.cannotWin, (std::vector<bool>{true, false}));
  EXPECT_TRUE(v.decided);
}

TEST(Race, OneVariantLeftButNotSurelyFasterKeepsRacing) {
  // Its interval straddles 1: more rounds may still decide it.
  RaceVerdict v = raceVerdict({interval(0.5, 0.6), interval(0.99, 1.2)});
  EXPECT_FALSE(v.decided);
}

TEST(Race, AVariantWithTooFewRoundsIsNeverDroppedNorDecided) {
  RaceVerdict v = raceVerdict({std::nullopt, interval(0.5, 0.6)});
  EXPECT_EQ(v.cannotWin, (std::vector<bool>{false, true}));
  EXPECT_FALSE(v.decided);
  EXPECT_FALSE(raceVerdict({std::nullopt}).decided);
}

TEST(Race, NarrowIntervalsSettleTheRace) {
  // Two plans that cannot be told apart, each known to within 1%: more
  // rounds would not make the choice between them worth more.
  EXPECT_TRUE(raceVerdict({interval(1.019, 1.024), interval(1.018, 1.025)}).decided);
  // One of them still wide: the rounds go on.
  EXPECT_FALSE(raceVerdict({interval(1.019, 1.024), interval(1.0, 1.08)}).decided);
  // A variant with too few rounds has not settled.
  EXPECT_FALSE(raceVerdict({interval(1.019, 1.024), std::nullopt}).decided);
}

TEST(Race, NoVariantLeftDecides) {
  RaceVerdict v = raceVerdict({interval(0.5, 0.6), interval(0.7, 0.9)});
  EXPECT_TRUE(v.decided);
  EXPECT_TRUE(raceVerdict({}).decided);
}
