// The reproducibility check's rule (lib/Tune/Reproduce.cpp) with a scripted
// evaluator: a gain smaller than the original's drift within the check is
// refused with the drift reason, a stable gain passes, a gain larger than
// the drift passes on the widened interval.
#include "cudal1/Tune/Reproduce.h"
#include "cudal1/Frontend/CompileFlags.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace cudal1;

namespace {

RewriteInput input() {
  std::string file = std::string(CUDAL1_SOURCE_DIR) + "/test/cudal1-opt/Inputs/tune-me.cu";
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return {file, ss.str(), analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90"}, nullptr)};
}

/// The check's measurement: `speedup` with a +-1% interval, the original's
/// rounds `baseline` (ms, in round order), the plan's rounds that ratio
/// below them.
Measurement measured(double speedup, std::vector<double> baseline) {
  Measurement m;
  m.outcome = Outcome::Ok;
  m.timed = m.faster = true;
  m.speedup = speedup;
  m.lo = speedup * 0.99;
  m.hi = speedup * 1.01;
  m.baselineSamplesMs = baseline;
  for (double b : baseline)
    m.samplesMs.push_back(b / speedup);
  m.rounds = int(baseline.size());
  return m;
}

/// Answers every candidate with one scripted measurement and remembers
/// what it was asked.
class Scripted : public VariantEvaluator {
public:
  explicit Scripted(Measurement m) : m(std::move(m)) {}
  llvm::Expected<std::vector<Measurement>> evaluate(const std::vector<Candidate> &cs) override {
    asked.insert(asked.end(), cs.begin(), cs.end());
    return std::vector<Measurement>(cs.size(), m);
  }
  std::string gpuName() const override { return "NVIDIA H200"; }
  Measurement m;
  std::vector<Candidate> asked;
};

/// 30 rounds of the original growing by 5% a round: its last third's
/// median against its first third's is 1.05^20 (2.65x, a drift of 165%).
std::vector<double> growing() {
  std::vector<double> v;
  for (int k = 0; k < 30; ++k)
    v.push_back(2.0 * std::pow(1.05, k));
  return v;
}

} // namespace

TEST(ReproduceCheck, ADriftLargerThanTheGainRefusesThePlan) {
  Scripted ev(measured(1.3, growing()));
  llvm::Expected<Plan> plan = parsePlan("@sum: warp-reduce");
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  llvm::Expected<ReproCheck> c = checkReproducible(input(), *plan, ev);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  // The plan was derived and measured as one whole-program candidate.
  ASSERT_EQ(ev.asked.size(), 1u);
  EXPECT_EQ(ev.asked[0].id, "check");
  EXPECT_EQ(ev.asked[0].kernel, kCombination);
  EXPECT_NE(ev.asked[0].variant.source.find("__shfl"), std::string::npos);
  // A real 1.3x (its own interval lies above 1), but the original moved by
  // 165% within the same measurement: not a gain the check can vouch for.
  EXPECT_TRUE(c->timed());
  EXPECT_NEAR(c->drift, std::pow(1.05, 20) - 1, 1e-9);
  EXPECT_NEAR(c->checkedLo, 1.3 / std::pow(1.05, 20), 1e-9);
  EXPECT_NEAR(c->checkedHi, 1.3 * std::pow(1.05, 20), 1e-9);
  EXPECT_FALSE(c->passed);
  EXPECT_EQ(c->detail, kDriftFailure);
  EXPECT_NE(formatCheckLine(*c).find("original drift 165.3%, checked interval [0.490, 3.449]: "
                                     "failed, the original is kept"),
            std::string::npos)
      << formatCheckLine(*c);
}

TEST(ReproduceCheck, AStableGainPasses) {
  std::vector<double> flat(30, 2.0);
  flat[7] = 2.1; // noise inside the thirds moves no median
  flat[25] = 1.9;
  ReproCheck c = judgeCheck(measured(1.1, flat));
  EXPECT_TRUE(c.passed) << c.detail;
  EXPECT_DOUBLE_EQ(c.drift, 0);
  EXPECT_DOUBLE_EQ(c.checkedLo, 1.1 * 0.99);
  EXPECT_DOUBLE_EQ(c.checkedHi, 1.1 * 1.01);
  EXPECT_NE(formatCheckLine(c).find("original drift 0.0%, checked interval [1.089, 1.111]: passed"),
            std::string::npos)
      << formatCheckLine(c);
}

TEST(ReproduceCheck, AGainLargerThanTheDriftPassesOnTheWidenedInterval) {
  ReproCheck c = judgeCheck(measured(3.0, growing()));
  EXPECT_TRUE(c.passed) << c.detail;
  EXPECT_NEAR(c.checkedLo, 3.0 / std::pow(1.05, 20), 1e-9);
  EXPECT_GT(c.checkedLo, 1.0);
  EXPECT_LT(c.checkedLo, c.measured.lo);
}

TEST(ReproduceCheck, AShrinkingOriginalIsDriftToo) {
  std::vector<double> v = growing();
  std::reverse(v.begin(), v.end());
  ReproCheck c = judgeCheck(measured(1.3, v));
  EXPECT_NEAR(c.drift, 1 - std::pow(1.05, -20), 1e-9);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.detail, kDriftFailure);
}

TEST(ReproduceCheck, NoGainIsRefusedForItsInterval) {
  Measurement m = measured(1.0, std::vector<double>(30, 2.0));
  m.faster = false;
  ReproCheck c = judgeCheck(m);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.detail, "the interval of the check does not lie above 1");
}

TEST(ReproduceCheck, AWrongCheckFailsWithItsOutcome) {
  Measurement m;
  m.outcome = Outcome::Wrong;
  m.details = {"round 3: the output differs"};
  ReproCheck c = judgeCheck(m);
  EXPECT_FALSE(c.timed());
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.detail, "round 3: the output differs");
  EXPECT_EQ(formatCheckLine(c), "reproducibility check: wrong (round 3: the output differs): "
                                "failed, the original is kept");
}
