// The tuning session as a library call: a scripted evaluator measures, a
// database records, and a second session's strategy sees what the first
// one left there (features and exemplars) in its KernelState.
#include "cudal1/Tune/Session.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Tune/Reproduce.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
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

/// A verified, timed, faster result of `speedup` with a +-1% interval.
Measurement verifiedAt(double speedup) {
  Measurement r;
  r.outcome = Outcome::Ok;
  r.timed = r.faster = true;
  r.speedup = speedup;
  r.lo = speedup * 0.99;
  r.hi = speedup * 1.01;
  r.baselineMs = 2.0;
  r.timeMs = 2.0 / speedup;
  return r;
}

/// warp-reduce is 3x, everything else 1.05x; all verify.
class Scripted : public VariantEvaluator {
public:
  llvm::Expected<std::vector<Measurement>> evaluate(const std::vector<Candidate> &cs) override {
    std::vector<Measurement> out;
    for (const Candidate &c : cs)
      out.push_back(verifiedAt(c.planText().find("warp-reduce") != std::string::npos ? 3.0 : 1.05));
    return out;
  }
  std::string gpuName() const override { return "NVIDIA H200"; }
};

/// The heuristic, remembering every state it was shown.
class Spy : public SearchStrategy {
public:
  std::unique_ptr<SearchStrategy> inner = makeHeuristicStrategy();
  std::vector<KernelState> seen;
  const char *name() const override { return "spy"; }
  std::vector<Proposal> propose(const KernelState &s, unsigned count) override {
    seen.push_back(s);
    return inner->propose(s, count);
  }
};

class SessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> d;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("session-test", d));
    dir = std::string(d);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  SessionOptions options(std::string &log) {
    SessionOptions o;
    o.budget = 4;
    o.outputFile = dir + "/tuned.cu";
    logStream = std::make_unique<llvm::raw_string_ostream>(log);
    o.out = logStream.get();
    return o;
  }
  std::string dir;
  std::unique_ptr<llvm::raw_string_ostream> logStream;
};

} // namespace

TEST_F(SessionTest, AStrategySeesAnEarlierSessionsExemplarsAndFeatures) {
  llvm::Expected<TuneDB> db = TuneDB::open(dir + "/tune.db");
  ASSERT_TRUE(bool(db)) << llvm::toString(db.takeError());
  Scripted ev;
  std::string log1, log2;
  SessionOptions first = options(log1);
  SessionStatus st = runSession(input(), first, &ev, &*db);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message;
  EXPECT_NE(log1.find("result: "), std::string::npos) << log1;
  EXPECT_TRUE(llvm::sys::fs::exists(dir + "/tuned.cu"));

  // The second session's strategy, before proposing anything, sees the
  // first session's measurements of each kernel and the features that were
  // recorded with them.
  Spy spy;
  SessionOptions second = options(log2);
  second.strategyInstance = &spy;
  st = runSession(input(), second, &ev, &*db);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message;
  ASSERT_FALSE(spy.seen.empty());
  const KernelState *sum = nullptr;
  for (const KernelState &s : spy.seen)
    if (s.name == "sum" && !sum)
      sum = &s; // the first state shown for `sum`: nothing of this run yet
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->gpu.name, "NVIDIA H200");
  EXPECT_EQ(sum->gpu.smCount, 132);
  ASSERT_FALSE(sum->exemplars.empty());
  bool warp = false;
  for (const Exemplar &e : sum->exemplars) {
    EXPECT_FALSE(e.thisRun);
    EXPECT_EQ(e.measured.outcome, Outcome::Ok);
    EXPECT_FALSE(e.session.empty());
    if (planText(e.steps) == "@sum: warp-reduce") {
      warp = true;
      EXPECT_NEAR(e.measured.speedup, 3.0, 1e-9);
      EXPECT_TRUE(e.measured.faster);
    }
  }
  EXPECT_TRUE(warp);
  ASSERT_FALSE(sum->features.empty());
  llvm::Expected<std::optional<KernelFeatures>> stored =
      db->features(sum->key, sum->featureVersion);
  ASSERT_TRUE(bool(stored)) << llvm::toString(stored.takeError());
  ASSERT_TRUE(stored->has_value());
  std::vector<std::pair<std::string, double>> expected = sum->features;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ((*stored)->features, expected);

  // What the first session's strategy recorded about its proposals.
  bool heuristic = false;
  llvm::Error e = db->forEachMeasurement([&](const MeasurementRow &m) {
    if (m.strategy == "heuristic") {
      heuristic = true;
      EXPECT_EQ(m.proposalProbability.value_or(0), 1.0);
      EXPECT_EQ(m.measured.judge, Judge::Program);
    }
    return llvm::Error::success();
  });
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  EXPECT_TRUE(heuristic);
}

TEST_F(SessionTest, AnUnknownStrategyIsAUsageError) {
  std::string log;
  SessionOptions o = options(log);
  o.strategy = "oracle";
  Scripted ev;
  SessionStatus st = runSession(input(), o, &ev, nullptr);
  EXPECT_EQ(st.kind, SessionStatus::UsageError);
  EXPECT_NE(st.message.find("oracle"), std::string::npos) << st.message;
}

namespace {
/// Every plan 1.2x in the tuning rounds; in the reproducibility check the
/// original speeds up by 23% from its first to its last rounds (what the
/// machine did, not the plan), which the check's interval must absorb.
class Drifting : public Scripted {
public:
  llvm::Expected<std::vector<Measurement>> evaluate(const std::vector<Candidate> &cs) override {
    std::vector<Measurement> out;
    for (const Candidate &c : cs) {
      Measurement r = verifiedAt(1.2);
      r.lo = 1.19; // the figures the check's line is written with below
      r.hi = 1.21;
      if (c.id == "check")
        r.baselineSamplesMs = {13, 13, 13, 12, 11, 11, 10, 10, 10};
      out.push_back(r);
    }
    return out;
  }
};
} // namespace

TEST_F(SessionTest, AGainThatWasDriftFailsTheReproducibilityCheck) {
  llvm::Expected<TuneDB> db = TuneDB::open(dir + "/tune.db");
  ASSERT_TRUE(bool(db)) << llvm::toString(db.takeError());
  Drifting ev;
  std::string log;
  SessionStatus st = runSession(input(), options(log), &ev, &*db);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message;
  EXPECT_NE(log.find("reproducibility check: 1.200x [1.190, 1.210], original drift 23.1%, checked "
                     "interval [0.975, 1.477]: failed"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("did not hold up in the reproducibility check"), std::string::npos) << log;
  // Nothing was chosen, and the check itself is a measurement.
  llvm::Expected<std::vector<TuneDB::TunedKernel>> tuned = db->tunedKernels("");
  ASSERT_TRUE(bool(tuned)) << llvm::toString(tuned.takeError());
  for (const TuneDB::TunedKernel &k : *tuned)
    EXPECT_EQ(k.plan, "") << k.name;
  bool recorded = false;
  llvm::Error e = db->forEachMeasurement([&](const MeasurementRow &m) {
    // Under the file's program entry, with the interval widened by the
    // drift, and the check's own times (its Measurement, carried whole).
    recorded |= llvm::StringRef(m.kernelKey).starts_with("program:") && m.measured.timed &&
                m.measured.lo < 1.0 && m.measured.baselineMs == 2.0 &&
                std::abs(m.measured.timeMs - 2.0 / 1.2) < 1e-9 && !m.measured.faster;
    return llvm::Error::success();
  });
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  EXPECT_TRUE(recorded);
}

TEST(Reproduce, DriftIsTheLastThirdAgainstTheFirst) {
  EXPECT_NEAR(originalDrift({10, 10, 10, 12, 12, 12, 11, 11, 11}), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(originalDrift({5, 5}), 0);
  EXPECT_DOUBLE_EQ(originalDrift({}), 0);
}

// The time lines: the capture awaited at the first replay judgement is its
// own figure, not part of "proposals, bundles" (it was, in the H100 runs
// of 2026-12-06, about 18 of the 28.6 s shown there).
TEST(SessionTimings, TheCaptureWaitIsNotCountedAsProposals) {
  SessionTimings t;
  t.total = 100;
  t.rounds = 90;
  t.derive = 10;
  t.replay.batches = 2;
  t.replay.variants = 8;
  t.replay.wall = 30;
  t.replay.accepts = 18;
  t.replay.timing = 12;
  t.replay.timingRounds = 4;
  t.replay.setups = 6;
  t.replay.keptSetups = 4;
  t.programVariants = 4;
  t.programBuild = 5;
  t.programRun = 20;
  std::string text = formatTimings(t);
  EXPECT_NE(text.find("timing 12.0 s of which rounds 4.0 s; kept workers had the set-up of 4 of "
                      "6 request(s))"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the rest of the rounds: waiting for the capture 18.0 s, for the whole "
                      "programs' builds after a replay 0.0 s; proposals, bundles 7.0 s"),
            std::string::npos)
      << text;
}

namespace {
/// Scripted, remembering every candidate id it was given.
class Counting : public Scripted {
public:
  std::vector<std::string> ids;
  llvm::Expected<std::vector<Measurement>> evaluate(const std::vector<Candidate> &cs) override {
    for (const Candidate &c : cs)
      ids.push_back(c.id);
    return Scripted::evaluate(cs);
  }
};
} // namespace

TEST_F(SessionTest, SearchOnlyRecordsTheMeasurementsAndChoosesNothing) {
  llvm::Expected<TuneDB> db = TuneDB::open(dir + "/tune.db");
  ASSERT_TRUE(bool(db)) << llvm::toString(db.takeError());
  // A first, ordinary session chooses; its choices must stand.
  Scripted ev;
  std::string log1, log2;
  ASSERT_EQ(runSession(input(), options(log1), &ev, &*db).kind, SessionStatus::Ok) << log1;
  auto choices = [&] {
    std::map<std::string, std::string> m;
    llvm::Expected<std::vector<TuneDB::TunedKernel>> tuned = db->tunedKernels("");
    EXPECT_TRUE(bool(tuned)) << llvm::toString(tuned.takeError());
    if (tuned)
      for (const TuneDB::TunedKernel &k : *tuned)
        m[k.name] = k.plan;
    return m;
  };
  auto measurements = [&] {
    size_t n = 0;
    llvm::Error e = db->forEachMeasurement([&](const MeasurementRow &) {
      ++n;
      return llvm::Error::success();
    });
    EXPECT_FALSE(bool(e)) << llvm::toString(std::move(e));
    return n;
  };
  std::map<std::string, std::string> before = choices();
  ASSERT_FALSE(before.empty());
  size_t recordedBefore = measurements();

  Counting counting;
  SessionOptions o = options(log2);
  o.searchOnly = true;
  o.outputFile = "-";
  ASSERT_EQ(llvm::sys::fs::remove(dir + "/tuned.cu"), std::error_code());
  SessionStatus st = runSession(input(), o, &counting, &*db);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message;
  // The budget's plans, and nothing after them: no bests measured again as
  // whole programs, no combination, no reproducibility check.
  EXPECT_EQ(counting.ids.size(), o.budget);
  for (const std::string &id : counting.ids)
    EXPECT_TRUE(variantNumber(id).has_value()) << id;
  EXPECT_NE(log2.find("result: none chosen (--search-only"), std::string::npos) << log2;
  EXPECT_EQ(log2.find("reproducibility check:"), std::string::npos) << log2;
  EXPECT_EQ(measurements(), recordedBefore + o.budget);
  EXPECT_EQ(choices(), before);
  EXPECT_FALSE(llvm::sys::fs::exists(dir + "/tuned.cu"));
}
