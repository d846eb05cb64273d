// The `policy` strategy: with a missing, corrupt or schema-mismatched model
// it proposes what the heuristic would, after exactly one remark; with a
// model it proposes the heuristic's first plan first, then legal plans of
// its own choosing, deterministically for a seed.
#include "cudal1/Tune/PolicyStrategy.h"
#include "cudal1/Policy/Policy.h"

#include "PolicyTestUtil.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include <fstream>
#include <set>

using namespace cudal1;
using namespace cudal1::test;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("cudal1-strategy-test", p));
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
};

std::vector<std::string> texts(const std::vector<Proposal> &ps) {
  std::vector<std::string> out;
  for (const Proposal &p : ps)
    out.push_back(p.text());
  return out;
}

/// An untrained model saved in `dir`, fitted on kernel a's single steps
/// (and b's state); `maxPlanSteps` as given.
void saveSinglesModel(const std::string &dir, const KernelState &a, const KernelState &b,
                      uint64_t seed, unsigned maxPlanSteps = kPolicyStepCap) {
  std::vector<std::vector<PlanStep>> plans;
  for (const PlanStep &s : a.steps)
    plans.push_back({s});
  auto p = Policy::create(fitSchema({&a, &b}, plans, 1), 16, seed);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  (*p)->info().maxPlanSteps = maxPlanSteps;
  ASSERT_FALSE(bool((*p)->save(dir, false)));
}

/// Proposes `rounds` times one plan, as the tuner does, marking each tried.
std::vector<std::string> run(SearchStrategy &s, KernelState k, unsigned rounds) {
  std::vector<std::string> out;
  for (unsigned i = 0; i < rounds; ++i)
    for (const Proposal &p : s.propose(k, 1)) {
      out.push_back(p.text());
      k.tried.insert(p.text());
    }
  return out;
}

void expectHeuristicFallback(const std::string &modelDir, const std::string &reason) {
  std::vector<std::string> remarks;
  PolicyStrategyOptions o;
  o.modelDir = modelDir;
  o.remark = [&](const std::string &r) { remarks.push_back(r); };
  std::unique_ptr<SearchStrategy> s = makePolicyStrategy(o);
  // Every proposal is the heuristic's, and the measurements say so.
  EXPECT_STREQ(s->name(), "heuristic");
  KernelState k = kernelState("a", 1, 0);
  std::unique_ptr<SearchStrategy> h = makeHeuristicStrategy();
  EXPECT_EQ(run(*s, k, 6), run(*h, k, 6));
  EXPECT_EQ(texts(s->propose(k, 4)), texts(h->propose(k, 4)));
  ASSERT_EQ(remarks.size(), 1u) << "one remark, however many proposals";
  EXPECT_NE(remarks[0].find(reason), std::string::npos) << remarks[0];
  EXPECT_NE(remarks[0].find("the heuristic strategy proposes instead"), std::string::npos);
}

TEST(PolicyStrategy, MissingModelFallsBackToTheHeuristic) {
  TempDir d;
  expectHeuristicFallback(d.path + "/no-model", "no such directory");
}

TEST(PolicyStrategy, CorruptModelFallsBackToTheHeuristic) {
  TempDir d;
  std::ofstream(d.path + "/model.json") << "{\"format\": \"cudal1-policy\", \"major\": ";
  expectHeuristicFallback(d.path, "not JSON");
}

TEST(PolicyStrategy, SchemaMismatchedModelFallsBackToTheHeuristic) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  KernelState a = kernelState("a", 0, 0);
  EncodingSchema schema = fitSchema({&a}, {{a.steps[0]}}, 1);
  schema.encodingVersion = kEncodingVersion + 1;
  auto p = Policy::create(schema, 16, 1);
  ASSERT_TRUE(bool(p));
  ASSERT_FALSE(bool((*p)->save(d.path, false)));
  expectHeuristicFallback(d.path, "schema mismatch");
}

TEST(PolicyStrategy, RegisteredByName) {
  // Registered under "policy"; it names itself by who proposes: the policy
  // with a model, the heuristic without one (here: none where it looks).
  const char *was = std::getenv("CUDAL1_POLICY_MODEL");
  std::string saved = was ? was : "";
  TempDir d;
  setenv("CUDAL1_POLICY_MODEL", (d.path + "/no-model").c_str(), 1);
  std::unique_ptr<SearchStrategy> s = makeStrategy("policy", 1);
  if (was)
    setenv("CUDAL1_POLICY_MODEL", saved.c_str(), 1);
  else
    unsetenv("CUDAL1_POLICY_MODEL");
  ASSERT_TRUE(s);
  EXPECT_STREQ(s->name(), "heuristic");
}

TEST(PolicyStrategy, CandidatesAreSinglesAndOrderedPairs) {
  KernelState k = kernelState("a", 0, 0);
  std::vector<std::vector<PlanStep>> c = policyCandidates(k, 100000);
  size_t n = k.steps.size();
  // Pairs of the same transform at the same scope conflict: vectorize x2 and
  // launch-config x2 give 2 ordered pairs each that are left out.
  EXPECT_EQ(c.size(), n + n * (n - 1) - 4);
  std::set<std::string> seen;
  for (const auto &p : c)
    EXPECT_TRUE(seen.insert(planText(p)).second) << planText(p);
  EXPECT_EQ(policyCandidates(k, 5).size(), 5u);
}

TEST(PolicyStrategy, WithAModelTheHeuristicsFirstPlanComesFirst) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  KernelState a = kernelState("a", 0, 0), b = kernelState("b", 2, 0.5);
  saveSinglesModel(d.path, a, b, 1);
  auto make = [&](uint64_t seed) {
    PolicyStrategyOptions o;
    o.modelDir = d.path;
    o.seed = seed;
    o.remark = [](const std::string &r) { ADD_FAILURE() << "unexpected remark: " << r; };
    return makePolicyStrategy(o);
  };
  auto s1 = make(5), s2 = make(5);
  std::vector<std::string> r1 = run(*s1, a, 10), r2 = run(*s2, a, 10);
  ASSERT_EQ(r1.size(), 10u);
  EXPECT_EQ(r1, r2) << "deterministic for a seed";
  EXPECT_EQ(r1[0], texts(makeHeuristicStrategy()->propose(a, 1))[0]);
  std::set<std::string> legal;
  for (const auto &c : policyCandidates(a, 100000))
    legal.insert(planText(c));
  std::set<std::string> distinct(r1.begin(), r1.end());
  EXPECT_EQ(distinct.size(), r1.size());
  for (const std::string &t : r1) {
    if (legal.count(t))
      continue;
    // Else a triple: one of the candidate pairs and one more step.
    size_t last = t.rfind("; ");
    ASSERT_NE(last, std::string::npos) << t;
    EXPECT_TRUE(legal.count(t.substr(0, last))) << t;
  }
  // Several at once: as many as asked, none tried before.
  KernelState tried = a;
  tried.tried.insert(r1.begin(), r1.end());
  std::vector<Proposal> more = make(5)->propose(tried, 4);
  EXPECT_EQ(more.size(), 4u);
  for (const Proposal &m : more)
    EXPECT_FALSE(tried.tried.count(m.text()));
}

} // namespace

namespace {

TEST(PolicyStrategy, AKernelTheModelRefusesGetsTheHeuristicWithOneRemark) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  KernelState a = kernelState("a", 0, 0), b = kernelState("b", 2, 0.5);
  auto p = Policy::create(fitSchema({&a, &b}, {{a.steps[0]}}, 1), 16, 1);
  ASSERT_TRUE(bool(p));
  ASSERT_FALSE(bool((*p)->save(d.path, false)));
  std::vector<std::string> remarks;
  PolicyStrategyOptions o;
  o.modelDir = d.path;
  o.remark = [&](const std::string &r) { remarks.push_back(r); };
  std::unique_ptr<SearchStrategy> s = makePolicyStrategy(o);
  // Features far outside what the model was trained on.
  KernelState far = kernelState("far", 1e9, 0);
  std::unique_ptr<SearchStrategy> h = makeHeuristicStrategy();
  EXPECT_EQ(run(*s, far, 5), run(*h, far, 5));
  ASSERT_EQ(remarks.size(), 1u);
  EXPECT_NE(remarks[0].find("kernel 'far': 'kernel.atomics' is"), std::string::npos) << remarks[0];
  EXPECT_NE(remarks[0].find("the heuristic proposes for it instead"), std::string::npos);
  // Another kernel is still the policy's.
  std::vector<std::string> mine = run(*s, a, 3);
  EXPECT_EQ(remarks.size(), 1u);
  EXPECT_EQ(mine.size(), 3u);
}

} // namespace

namespace {

TEST(PolicyStrategy, SamplesOnlyAmongTheTopB) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  KernelState a = kernelState("a", 0, 0), b = kernelState("b", 2, 0.5);
  auto p = Policy::create(fitSchema({&a, &b}, {{a.steps[0]}}, 1), 16, 2);
  ASSERT_TRUE(bool(p));
  ASSERT_FALSE(bool((*p)->save(d.path, false)));
  auto make = [&](double temperature, unsigned topB) {
    PolicyStrategyOptions o;
    o.modelDir = d.path;
    o.temperature = temperature;
    o.topB = topB;
    return makePolicyStrategy(o);
  };
  // A top 1 at any temperature is the greedy choice, with probability 1.
  auto greedy = make(0, 16), hot = make(100, 1);
  KernelState k = a;
  for (int round = 0; round < 6; ++round) {
    std::vector<Proposal> g = greedy->propose(k, 1), h = hot->propose(k, 1);
    ASSERT_EQ(g.size(), 1u);
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(g[0].text(), h[0].text()) << round;
    EXPECT_EQ(h[0].probability, 1.0);
    k.tried.insert(g[0].text());
  }
  // Hot over the top 4: each drawn with probability near 1/4, never below.
  auto four = make(1e6, 4);
  KernelState k2 = a;
  four->propose(k2, 1); // the heuristic's first
  for (const Proposal &x : four->propose(k2, 3))
    EXPECT_NEAR(x.probability, 0.25, 0.01) << x.text();
}

} // namespace

namespace {

std::vector<std::string> transformsIn(const Proposal &p) {
  std::vector<std::string> t;
  for (const PlanStep &s : p.steps)
    t.push_back(s.transform);
  return t;
}

TEST(PolicyStrategy, ARoundSpreadsOverTransformsUntilItsResultsAreIn) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  KernelState a = kernelState("a", 0, 0), b = kernelState("b", 2, 0.5);
  saveSinglesModel(d.path, a, b, 3, 1); // singles: six transforms, eight plans
  auto make = [&](double pending) {
    PolicyStrategyOptions o;
    o.modelDir = d.path;
    o.temperature = 0;
    o.diversity = 0;
    o.pendingDiversity = pending;
    o.effectShortlist = 0;
    return makePolicyStrategy(o);
  };
  // Round 1: nothing measured yet, so no plan repeats a transform of one
  // proposed before it while the six transforms last.
  auto spread = make(100), plain = make(0);
  plain->propose(a, 1); // its heuristic's first plan, out of the way
  KernelState k = a;
  std::set<std::string> used;
  std::vector<Proposal> round;
  for (int i = 0; i < 6; ++i) {
    std::vector<Proposal> ps = spread->propose(k, 1);
    ASSERT_EQ(ps.size(), 1u);
    for (const std::string &t : transformsIn(ps[0]))
      EXPECT_TRUE(used.insert(t).second) << ps[0].text() << " repeats " << t;
    k.tried.insert(ps[0].text());
    round.push_back(ps[0]);
  }
  EXPECT_EQ(used.size(), 6u);
  // Its results in: nothing is pending, and the choice is the scores' alone.
  for (const Proposal &r : round) {
    Exemplar e;
    e.steps = r.steps;
    e.thisRun = true;
    e.measured.outcome = Outcome::Ok;
    e.measured.timed = true;
    e.measured.speedup = 1.1;
    k.exemplars.push_back(e);
  }
  std::vector<Proposal> next = spread->propose(k, 1), greedy = plain->propose(k, 1);
  ASSERT_EQ(next.size(), 1u);
  ASSERT_EQ(greedy.size(), 1u);
  EXPECT_EQ(next[0].text(), greedy[0].text());
}

TEST(PolicyStrategy, CalibrationCarriesThisRunsResultsToPlansOfTheSameTransform) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  KernelState a = kernelState("a", 0, 0), b = kernelState("b", 2, 0.5);
  saveSinglesModel(d.path, a, b, 3, 1); // singles only
  std::string first = texts(makeHeuristicStrategy()->propose(a, 1))[0];
  // A transform with two plans, neither the heuristic's first: one is
  // measured, the other (its sibling) is what the calibration moves.
  std::string measured = planText({a.steps[2]}), sibling = planText({a.steps[3]});
  std::vector<PlanStep> measuredSteps = {a.steps[2]};
  if (first == measured || first == sibling) {
    measured = planText({a.steps[6]});
    sibling = planText({a.steps[7]});
    measuredSteps = {a.steps[6]};
  }
  // Where the sibling comes among the remaining proposals after one plan of
  // its transform measured at `speedup`.
  auto siblingAt = [&](double calibration, double speedup) {
    PolicyStrategyOptions o;
    o.modelDir = d.path;
    o.temperature = 0;
    o.diversity = 0;
    o.effectShortlist = 0;
    o.calibration = calibration;
    std::unique_ptr<SearchStrategy> s = makePolicyStrategy(o);
    KernelState k = a;
    for (const Proposal &p : s->propose(k, 1))
      k.tried.insert(p.text());
    k.tried.insert(measured);
    Exemplar e;
    e.steps = measuredSteps;
    e.thisRun = true;
    e.measured.outcome = Outcome::Ok;
    e.measured.timed = true;
    e.measured.speedup = speedup;
    k.exemplars.push_back(e);
    // Single steps only: a measured gain is also extended by a step
    // (extendMeasured), and those plans come first whatever the calibration.
    std::vector<std::string> rest;
    for (const std::string &p : run(*s, k, 20))
      if (p.find(';') == std::string::npos)
        rest.push_back(p);
    EXPECT_EQ(rest.size(), 6u);
    return size_t(std::find(rest.begin(), rest.end(), sibling) - rest.begin());
  };
  // Far better than predicted: its sibling is the first single; far worse:
  // the last.
  EXPECT_EQ(siblingAt(1, 1000), 0u);
  EXPECT_EQ(siblingAt(1, 0.001), 5u);
  // Off, the sibling's place does not follow the measurement that far.
  EXPECT_FALSE(siblingAt(0, 1000) == 0u && siblingAt(0, 0.001) == 5u);
}

} // namespace
