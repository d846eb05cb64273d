// The tuning loop with a scripted evaluator (the real one is covered by the
// GPU tests): strategies, budgets, refused plans, the choice of the best and
// the verified combination.
#include "cudal1/Tune/Tuner.h"
#include "cudal1/Frontend/CompileFlags.h"

#include <set>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

using namespace cudal1;

namespace {

// The program the lit test tunes too: an element-wise kernel and an atomic
// reduction, one launch each. tune-chain.cu: three kernels, the first
// fusable into the second.
RewriteInput input(const std::string &name = "tune-me.cu") {
  std::string file = std::string(CUDAL1_SOURCE_DIR) + "/test/cudal1-opt/Inputs/" + name;
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return {file, ss.str(), analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90"}, nullptr)};
}

/// Plays a GPU: warp-reduce on `sum` is 3x, fuse 1.2x, restrict 1.1x per kernel, anything with
/// launch-config(block=1024) is wrong, and one plan crashes.
class ScriptedEvaluator : public VariantEvaluator {
public:
  std::vector<std::vector<std::string>> batches;
  llvm::Expected<std::vector<Measurement>> evaluate(const std::vector<Candidate> &cs) override {
    std::vector<Measurement> out;
    batches.emplace_back();
    for (const Candidate &c : cs) {
      std::string plan = c.planText();
      batches.back().push_back(plan);
      EXPECT_NE(c.variant.source.find("cudal1-opt plan"), std::string::npos);
      Measurement r;
      double s = 1.0;
      if (plan.find("warp-reduce") != std::string::npos)
        s *= 3.0;
      if (plan.find("fuse") != std::string::npos)
        s *= 1.2;
      // restrict pays 1.1x per kernel it is applied to.
      for (size_t at = plan.find("restrict"); at != std::string::npos;
           at = plan.find("restrict", at + 1))
        s *= 1.1;
      if (plan.find("block=1024") != std::string::npos)
        r.outcome = Outcome::Wrong;
      else if (plan.find("block=64") != std::string::npos)
        r.outcome = Outcome::Crash;
      else {
        r.outcome = Outcome::Ok;
        r.timed = true;
        r.speedup = s;
        r.lo = s * 0.98;
        r.hi = s * 1.02;
        r.faster = r.lo > 1.0 && s >= 1.01;
      }
      out.push_back(r);
    }
    return out;
  }
  std::string gpuName() const override { return "Scripted GPU"; }
};

TuneSpace space() {
  llvm::Expected<TuneSpace> s = collectTuneSpace(input());
  EXPECT_TRUE(bool(s)) << (s ? "" : llvm::toString(s.takeError()));
  return s ? *s : TuneSpace{};
}

Plan plan(const std::string &text) {
  llvm::Expected<Plan> p = parsePlan(text);
  EXPECT_TRUE(bool(p)) << (p ? "" : llvm::toString(p.takeError()));
  return p ? planOf(p->steps) : Plan{};
}

PlanStep step(const std::string &text) { return plan(text).steps.front(); }

} // namespace

TEST(TuneSpace, LegalStepsPerKernelAtKernelScope) {
  TuneSpace s = space();
  ASSERT_EQ(s.kernels.size(), 2u);
  EXPECT_EQ(s.kernels[1].name, "sum");
  bool warp = false, launch = false;
  for (const TuneStep &st : s.kernels[1].steps) {
    warp |= stepText(st) == "@sum: warp-reduce";
    // One launch site: launch-level steps are scoped to the kernel.
    launch |= stepText(st) == "@sum: launch-config(block=256)";
    EXPECT_EQ(st.scope.kernel, "sum");
  }
  EXPECT_TRUE(warp);
  EXPECT_TRUE(launch);
}

TEST(TuneSpace, HostStepsFormTheirOwnEntry) {
  // The legal space's loops and synchronizations (no kernel owns them).
  LegalSpace legal;
  legal.file = "/x/app.cu";
  auto site = [](Transform::Level level, int id, const char *name, bool legal) {
    LegalSite s;
    s.level = level;
    (level == Transform::Level::HostLoop ? s.scope.loop : s.scope.sync) = id;
    LegalTransform t;
    t.name = name;
    t.legal = legal;
    s.transforms.push_back(t);
    return s;
  };
  legal.loops.push_back(site(Transform::Level::HostLoop, 3, "graph", true));
  legal.syncs.push_back(site(Transform::Level::HostSync, 1, "drop-sync", false));
  legal.syncs.push_back(site(Transform::Level::HostSync, 2, "drop-sync", true));
  TuneSpace s = tuneSpaceOf(legal, "host:abc");
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels[0].name, "(host)");
  EXPECT_TRUE(s.kernels[0].host);
  EXPECT_EQ(s.kernels[0].key, "host:abc");
  ASSERT_EQ(s.kernels[0].steps.size(), 2u);
  EXPECT_EQ(stepText(s.kernels[0].steps[0]), "@loop#3: graph");
  EXPECT_EQ(stepText(s.kernels[0].steps[1]), "@sync#2: drop-sync");
  // Steps find their owner by scope.
  EXPECT_EQ(s.ownerOf(s.kernels[0].steps[1].scope), 0u);
  EXPECT_EQ(s.ownerOf(step("@k: restrict").scope), kNoKernel);
}

TEST(TuneSpace, KernelsCarryTheirFeatures) {
  TuneSpace s = space();
  ASSERT_EQ(s.kernels.size(), 2u);
  for (const TuneKernel &k : s.kernels) {
    EXPECT_FALSE(k.features.empty()) << k.name;
    EXPECT_GT(k.featureVersion, 0);
  }
}

TEST(Tuner, HeuristicFindsTheReductionAndCombines) {
  TuneSpace s = space();
  std::unique_ptr<SearchStrategy> st = makeStrategy("heuristic", 1);
  TuneOptions o;
  o.budget = 10;
  o.perRound = 4;
  Tuner t(input(), s, *st, o);
  ScriptedEvaluator ev;
  llvm::Expected<TuneResult> r = t.run(ev);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  // warp-reduce is the heuristic's first choice for `sum`.
  ASSERT_FALSE(ev.batches.empty());
  EXPECT_EQ(ev.batches[0][1], "@sum: warp-reduce");
  ASSERT_EQ(r->best.size(), 2u);
  EXPECT_NE(printPlan(r->best[1].plan).find("warp-reduce"), std::string::npos);
  EXPECT_GE(r->best[1].speedup, 3.0);
  // Budget: 10 variants, then one combination of the two kernels' bests.
  size_t evaluated = 0;
  for (const auto &b : ev.batches)
    evaluated += b.size();
  EXPECT_EQ(evaluated, 11u);
  EXPECT_EQ(ev.batches.back().size(), 1u);
  std::string log;
  for (const TuneRecord &rec : r->records)
    log += rec.candidate.planText() + " -> " + outcomeName(rec.result.outcome) + "\n";
  std::string final = printPlan(r->finalPlan);
  EXPECT_NE(final.find("@scale"), std::string::npos) << final << "\n" << log;
  EXPECT_NE(final.find("@sum"), std::string::npos) << final;
  EXPECT_NEAR(r->finalSpeedup, 3.0 * 1.1 * 1.1, 0.01);
  EXPECT_EQ(r->gpu, "Scripted GPU");
  // Both parts were verified together: both become best choices.
  EXPECT_TRUE(r->best[0].inFinal);
  EXPECT_TRUE(r->best[1].inFinal);
}

TEST(Tuner, WithoutACombinationOnlyTheSingleBestIsFinal) {
  // As the split path's import: no combination is evaluated, so a kernel
  // faster alone is not part of what the build should use.
  TuneOptions o;
  o.budget = 10;
  o.perRound = 4;
  o.combine = false;
  std::unique_ptr<SearchStrategy> st = makeStrategy("heuristic", 1);
  Tuner t(input(), space(), *st, o);
  ScriptedEvaluator ev;
  llvm::Expected<TuneResult> r = t.run(ev);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->best.size(), 2u);
  EXPECT_FALSE(r->best[0].plan.steps.empty()); // scale: faster alone...
  EXPECT_FALSE(r->best[0].inFinal);            // ...but never measured with sum's plan
  EXPECT_TRUE(r->best[1].inFinal);
  EXPECT_EQ(r->finalPlan, r->best[1].plan);
}

namespace {
/// Proposes each kernel's first legal step of one transform, once.
class OneStepStrategy : public SearchStrategy {
public:
  std::map<std::string, std::string> transformOf; ///< kernel -> transform
  const char *name() const override { return "one-step"; }
  std::vector<Proposal> propose(const KernelState &k, unsigned) override {
    auto it = transformOf.find(k.name);
    if (it == transformOf.end())
      return {};
    for (const PlanStep &st : k.steps)
      if (st.transform == it->second && !k.tried.count(stepText(st)))
        return {Proposal{{st}}};
    return {};
  }
};

/// tune-chain.cu tuned one step per kernel (half: fuse; twice and copy:
/// restrict) at budget 8; no tuner when its space cannot be collected.
struct OneStepChain {
  RewriteInput in = input("tune-chain.cu");
  OneStepStrategy strategy;
  std::unique_ptr<Tuner> tuner;
  OneStepChain() {
    llvm::Expected<TuneSpace> sp = collectTuneSpace(in);
    if (!sp) {
      ADD_FAILURE() << llvm::toString(sp.takeError());
      return;
    }
    strategy.transformOf = {{"half", "fuse"}, {"twice", "restrict"}, {"copy", "restrict"}};
    TuneOptions o;
    o.budget = 8;
    tuner = std::make_unique<Tuner>(in, *sp, strategy, o);
  }
};
} // namespace

TEST(Tuner, BestPlansThatDoNotCombineAreLeftOutOfTheCombination) {
  // Fusing half into twice takes twice's launch: twice's own best plan
  // cannot join, copy's can. The combination is half's and copy's, and
  // only those two become best choices.
  OneStepChain chain;
  ASSERT_TRUE(chain.tuner);
  ScriptedEvaluator ev;
  llvm::Expected<TuneResult> r = chain.tuner->run(ev);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->best.size(), 3u);
  EXPECT_EQ(printPlan(r->best[0].plan), "@half: fuse");
  EXPECT_EQ(printPlan(r->best[1].plan), "@twice: restrict");
  EXPECT_EQ(printPlan(r->best[2].plan), "@copy: restrict");
  // One round of three singles, then the combinations: the surest plans
  // first, and the one that starts from twice's plan, which the first left
  // out.
  ASSERT_EQ(ev.batches.size(), 2u);
  ASSERT_EQ(ev.batches.back().size(), 2u);
  EXPECT_EQ(ev.batches.back()[0], "@half: fuse; @copy: restrict");
  EXPECT_EQ(ev.batches.back()[1], "@twice: restrict; @copy: restrict");
  EXPECT_EQ(printPlan(r->finalPlan), "@half: fuse; @copy: restrict");
  EXPECT_NEAR(r->finalSpeedup, 1.2 * 1.1, 0.01);
  EXPECT_TRUE(r->best[0].inFinal);
  EXPECT_FALSE(r->best[1].inFinal);
  EXPECT_TRUE(r->best[2].inFinal);
}

namespace {
/// A GPU on which a plan's worth depends on the others: twice's restrict is
/// small alone (1.05x) and large beside copy's (1.6x together), as a host
/// loop's plan is small beside slow kernels and large beside fast ones.
class InteractingEvaluator : public VariantEvaluator {
public:
  std::vector<std::vector<std::string>> batches;
  llvm::Expected<std::vector<Measurement>> evaluate(const std::vector<Candidate> &cs) override {
    std::vector<Measurement> out;
    batches.emplace_back();
    for (const Candidate &c : cs) {
      std::string plan = c.planText();
      batches.back().push_back(plan);
      bool twice = plan.find("@twice: restrict") != std::string::npos;
      bool copy = plan.find("@copy: restrict") != std::string::npos;
      double s = twice && copy ? 1.6 : twice ? 1.05 : 1.0;
      if (plan.find("fuse") != std::string::npos)
        s *= 1.2;
      if (copy && !twice)
        s *= 1.1;
      Measurement r;
      r.outcome = Outcome::Ok;
      r.timed = true;
      r.speedup = s;
      r.lo = s * 0.98;
      r.hi = s * 1.02;
      r.faster = r.lo > 1.0;
      out.push_back(r);
    }
    return out;
  }
  std::string gpuName() const override { return "Interacting GPU"; }
};
} // namespace

TEST(Tuner, APlanLeftOutOfTheSurestCombinationGetsACombinationOfItsOwn) {
  // Alone, half's fuse (1.2x) is surer than twice's restrict (1.05x), and
  // the two do not combine; twice's restrict with copy's is 1.6x. The
  // greedy combination (fuse, copy: 1.32x) loses to the one that starts
  // from twice's plan, and the final plan and best choices are that one's.
  OneStepChain chain;
  ASSERT_TRUE(chain.tuner);
  InteractingEvaluator ev;
  llvm::Expected<TuneResult> r = chain.tuner->run(ev);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(ev.batches.size(), 2u);
  ASSERT_EQ(ev.batches.back().size(), 2u);
  EXPECT_EQ(ev.batches.back()[0], "@half: fuse; @copy: restrict");
  EXPECT_EQ(ev.batches.back()[1], "@twice: restrict; @copy: restrict");
  EXPECT_EQ(printPlan(r->finalPlan), "@twice: restrict; @copy: restrict");
  EXPECT_NEAR(r->finalSpeedup, 1.6, 0.01);
  EXPECT_FALSE(r->best[0].inFinal);
  EXPECT_TRUE(r->best[1].inFinal);
  EXPECT_TRUE(r->best[2].inFinal);
  // Measured once, each: asking again gives nothing new.
  EXPECT_TRUE(chain.tuner->combinations().empty());
}

// The split path's rounds: a combination measured in one round is the final
// plan while its parts are their kernels' bests, and history once a later
// round finds a better plan for one of them.
TEST(Tuner, ACombinationCountsWhileItsPartsAreTheBests) {
  RewriteInput in = input("tune-chain.cu");
  llvm::Expected<TuneSpace> sp = collectTuneSpace(in);
  ASSERT_TRUE(bool(sp)) << llvm::toString(sp.takeError());
  ASSERT_EQ(sp->kernels.size(), 3u);
  std::string otherCopyStep;
  for (const PlanStep &st : sp->kernels[2].steps)
    if (st.transform != "restrict")
      otherCopyStep = stepText(st);
  ASSERT_FALSE(otherCopyStep.empty());
  OneStepStrategy st;
  Tuner t(in, *sp, st, TuneOptions{});
  auto cand = [](size_t k, std::string id, std::string text) {
    Candidate c;
    c.id = std::move(id);
    c.kernel = k;
    c.variant.plan = plan(text);
    return c;
  };
  auto faster = [](double lo) {
    Measurement r;
    r.outcome = Outcome::Ok;
    r.timed = r.faster = true;
    r.speedup = lo + 0.01;
    r.lo = lo;
    r.hi = lo + 0.02;
    return r;
  };
  t.absorb({cand(0, "v000", "@half: fuse"), cand(2, "v001", "@copy: restrict")},
           {faster(1.18), faster(1.08)});
  EXPECT_EQ(printPlan(t.summary().finalPlan), "@half: fuse");
  std::vector<Candidate> cs = t.combinations();
  ASSERT_EQ(cs.size(), 1u);
  Candidate *c = &cs[0];
  EXPECT_EQ(c->id, "combined");
  EXPECT_EQ(c->planText(), "@half: fuse; @copy: restrict");
  EXPECT_EQ(c->kernel, kCombination);
  EXPECT_NE(c->variant.source.find("cudal1-opt plan: @half: fuse; @copy: restrict"),
            std::string::npos);
  t.absorb({*c}, {faster(1.25)});
  TuneResult r = t.summary();
  EXPECT_EQ(printPlan(r.finalPlan), "@half: fuse; @copy: restrict");
  EXPECT_TRUE(r.best[0].inFinal);
  EXPECT_TRUE(r.best[2].inFinal);
  EXPECT_TRUE(t.combinations().empty()); // measured already
  // A surer plan for copy: the measured combination is no longer what the
  // build would apply.
  t.absorb({cand(2, "v002", "@copy: restrict; " + otherCopyStep)}, {faster(1.15)});
  r = t.summary();
  EXPECT_EQ(printPlan(r.finalPlan), "@half: fuse");
  EXPECT_TRUE(r.best[0].inFinal);
  EXPECT_FALSE(r.best[2].inFinal);
  cs = t.combinations();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].planText(), printPlan(plan("@half: fuse; @copy: restrict; " + otherCopyStep)));
}

TEST(Tuner, WrongAndCrashingVariantsAreNeverChosen) {
  TuneSpace s = space();
  // A fixed small space (block shapes and restrict), so that the seeded
  // random plans surely include the scripted faults whatever other passes
  // offer.
  for (TuneKernel &k : s.kernels)
    for (auto it = k.steps.begin(); it != k.steps.end();)
      it = it->transform == "launch-config" || it->transform == "restrict" ? it + 1
                                                                           : k.steps.erase(it);
  std::unique_ptr<SearchStrategy> st = makeStrategy("random", 7);
  TuneOptions o;
  o.budget = 12;
  o.perRound = 6;
  Tuner t(input(), s, *st, o);
  ScriptedEvaluator ev;
  llvm::Expected<TuneResult> r = t.run(ev);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  unsigned wrong = 0;
  std::set<std::string> plans;
  for (const TuneRecord &rec : r->records) {
    wrong += rec.result.outcome == Outcome::Wrong;
    if (rec.result.outcome != Outcome::Refused && rec.candidate.id != "combined")
      EXPECT_TRUE(plans.insert(rec.candidate.planText()).second)
          << "proposed twice: " << rec.candidate.planText();
  }
  EXPECT_GT(wrong, 0u);               // the scripted faults were proposed...
  for (const KernelBest &b : r->best) // ...and never chosen
    EXPECT_EQ(printPlan(b.plan).find("block=1024"), std::string::npos);
  EXPECT_EQ(printPlan(r->finalPlan).find("block=1024"), std::string::npos);
  EXPECT_EQ(printPlan(r->finalPlan).find("block=64"), std::string::npos);
}

TEST(Tuner, NothingFasterKeepsTheOriginal) {
  TuneSpace s = space();
  // Only the scale kernel, whose steps the script never speeds up.
  s.kernels.resize(1);
  for (auto it = s.kernels[0].steps.begin(); it != s.kernels[0].steps.end();)
    it = it->transform == "restrict" ? s.kernels[0].steps.erase(it) : it + 1;
  std::unique_ptr<SearchStrategy> st = makeStrategy("heuristic", 1);
  TuneOptions o;
  o.budget = 5;
  Tuner t(input(), s, *st, o);
  ScriptedEvaluator ev;
  llvm::Expected<TuneResult> r = t.run(ev);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_TRUE(r->finalPlan.steps.empty()) << printPlan(r->finalPlan);
  EXPECT_TRUE(r->best[0].plan.steps.empty());
  EXPECT_GT(r->best[0].tried, 0u);
}

TEST(Strategy, UnknownNameIsNull) {
  EXPECT_EQ(makeStrategy("policy-v0", 1), nullptr);
  EXPECT_LT(heuristicRank(step("@k: warp-reduce")),
            heuristicRank(step("@k: launch-config(block=128)")));
}

// warp-rows: packed groups from 32 lanes down; spread groups (a coalesced
// column kernel) from 8, the most threads that still share a 32-byte sector
// of floats between two warps, then 4, 16, 2; both before tiling.
TEST(Strategy, HeuristicRanksWarpRowsLayouts) {
  auto rank = [](const char *p) { return heuristicRank(step(p)); };
  EXPECT_LT(rank("@k: warp-rows(lanes=32)"), rank("@k: warp-rows(lanes=16)"));
  EXPECT_LT(rank("@k: warp-rows(lanes=8)"), rank("@k: warp-rows(lanes=4)"));
  EXPECT_LT(rank("@k: warp-rows(lanes=16, layout=spread)"),
            rank("@k: warp-rows(lanes=8, layout=spread)"));
  EXPECT_LT(rank("@k: warp-rows(lanes=8, layout=spread)"),
            rank("@k: warp-rows(lanes=4, layout=spread)"));
  EXPECT_LT(rank("@k: warp-rows(lanes=4, layout=spread)"),
            rank("@k: warp-rows(lanes=2, layout=spread)"));
  EXPECT_LT(rank("@k: warp-rows(lanes=2, layout=spread)"), rank("@k: tile-shared(tile=32)"));
  EXPECT_LT(rank("@k: warp-reduce"), rank("@k: warp-rows(lanes=16, layout=spread)"));
}

// persistent on a host loop: the owner form first, the cooperative grid
// before a graph, one block after it (it pays only where a launch fits one
// block); the forms of one loop are never paired with each other.
TEST(Strategy, HeuristicRanksPersistentForms) {
  EXPECT_LT(heuristicRank(step("@sync#0: drop-sync")),
            heuristicRank(step("@loop#3: persistent(form=owner)")));
  EXPECT_LT(heuristicRank(step("@loop#3: persistent(form=owner)")),
            heuristicRank(step("@loop#3: persistent(form=grid)")));
  EXPECT_LT(heuristicRank(step("@loop#3: persistent(form=grid)")),
            heuristicRank(step("@loop#3: graph")));
  EXPECT_LT(heuristicRank(step("@loop#3: graph")),
            heuristicRank(step("@loop#3: persistent(form=block)")));
  KernelState k;
  k.name = "(host)";
  k.host = true;
  k.steps = {step("@loop#3: graph"), step("@loop#3: persistent(form=block)"),
             step("@loop#3: persistent(form=grid)"), step("@loop#3: persistent(form=owner)")};
  std::vector<Proposal> p = makeStrategy("heuristic", 1)->propose(k, 12);
  std::vector<std::string> texts;
  for (const Proposal &x : p)
    texts.push_back(x.text());
  ASSERT_GE(texts.size(), 4u) << ::testing::PrintToString(texts);
  EXPECT_EQ(texts[0], "@loop#3: persistent(form=owner)");
  EXPECT_EQ(texts[1], "@loop#3: persistent(form=grid)");
  EXPECT_EQ(texts[2], "@loop#3: graph");
  EXPECT_EQ(texts[3], "@loop#3: persistent(form=block)");
  for (const std::string &t : texts)
    EXPECT_EQ(t.find("persistent(form=owner); persistent"), std::string::npos) << t;
}

// loop-streams ranks with streams, two streams before four, after graph.
TEST(Strategy, HeuristicRanksLoopStreams) {
  EXPECT_EQ(heuristicRank(step("@loop#1: loop-streams(streams=2)")),
            heuristicRank(step("@#0: streams")));
  EXPECT_EQ(heuristicRank(step("@loop#1: loop-streams")),
            heuristicRank(step("@loop#1: loop-streams(streams=2)")));
  EXPECT_LT(heuristicRank(step("@loop#1: loop-streams(streams=2)")),
            heuristicRank(step("@loop#1: loop-streams(streams=4)")));
  EXPECT_LT(heuristicRank(step("@loop#1: graph")),
            heuristicRank(step("@loop#1: loop-streams(streams=2)")));
  EXPECT_LT(heuristicRank(step("@loop#1: loop-streams(streams=4)")), 90);
}

// One round asking for more plans than there are single steps (the split
// path's whole budget): after the singles in rank order come pairs of
// compatible steps, the best-ranked first, none repeated.
TEST(Strategy, HeuristicPairsFollowTheSingles) {
  KernelState k;
  k.name = "k";
  k.steps = {step("@k: restrict"), step("@k: warp-reduce"), step("@k: unroll(loop=0, factor=4)"),
             step("@k: unroll(loop=0, factor=8)"), step("@k: fast-math")}; // fast-math: never
  std::unique_ptr<SearchStrategy> st = makeStrategy("heuristic", 1);
  std::vector<Proposal> p = st->propose(k, 20);
  std::vector<std::string> texts;
  for (const Proposal &x : p)
    texts.push_back(x.text());
  ASSERT_EQ(texts.size(), 4u + 5u) << ::testing::PrintToString(texts);
  EXPECT_EQ(texts[0], "@k: warp-reduce");
  EXPECT_EQ(texts[1], "@k: restrict");
  EXPECT_EQ(texts[4], "@k: warp-reduce; restrict");
  // The two unrolls of one loop never pair; every pair is new.
  std::set<std::string> seen;
  for (const std::string &t : texts) {
    EXPECT_TRUE(seen.insert(t).second) << t;
    EXPECT_EQ(t.find("factor=4); unroll"), std::string::npos) << t;
  }
  // A smaller count is the ranking's prefix.
  std::vector<Proposal> few = st->propose(k, 2);
  ASSERT_EQ(few.size(), 2u);
  EXPECT_EQ(few[1].text(), "@k: restrict");
}

namespace {
/// Plays the judging evaluator of --tune: single-kernel plans are judged by
/// replay and get their kernel's own speedup (warp-reduce 30x, restrict
/// 1.5x); whole programs (the combination, and best plans measured once more
/// as whole programs) get the program's, where the kernels are a share of
/// the time (warp-reduce 1.3x, restrict 1.05x, both `combined`).
class LevelsEvaluator : public VariantEvaluator {
public:
  double combined = 1.35;
  std::vector<std::vector<std::string>> batches;
  llvm::Expected<std::vector<Measurement>> evaluate(const std::vector<Candidate> &cs) override {
    std::vector<Measurement> out;
    batches.emplace_back();
    for (const Candidate &c : cs) {
      std::string plan = c.planText();
      bool program = c.wholeProgram || c.kernel == kCombination;
      batches.back().push_back((program ? "program: " : "replay: ") + plan);
      bool warp = plan.find("warp-reduce") != std::string::npos;
      bool restrict = plan.find("restrict") != std::string::npos;
      double s = program ? (warp &&restrict ? combined : warp ? 1.3 : 1.05) : (warp ? 30.0 : 1.5);
      Measurement r;
      r.outcome = Outcome::Ok;
      r.judge = program ? Judge::Program : Judge::ReplayReference;
      r.timed = r.faster = true;
      r.speedup = s;
      r.lo = s * 0.98;
      r.hi = s * 1.02;
      r.timeMs = program ? 10 / s : 1 / s;
      r.baselineMs = program ? 10 : 1; // the program 10 ms, the kernel 1 ms
      out.push_back(r);
    }
    return out;
  }
  std::string gpuName() const override { return "Scripted GPU"; }
};

llvm::Expected<TuneResult> tuneAtTwoLevels(LevelsEvaluator &ev) {
  OneStepStrategy st;
  st.transformOf = {{"scale", "restrict"}, {"sum", "warp-reduce"}};
  TuneOptions o;
  o.budget = 4;
  Tuner t(input(), space(), st, o);
  llvm::Expected<TuneResult> r = t.run(ev);
  // The kernel's own time and the program's are kept apart.
  if (r) {
    EXPECT_EQ(t.state(1).originalMs, std::optional<double>(1.0));
    EXPECT_EQ(t.state(1).programMs, std::optional<double>(10.0));
  }
  return r;
}
} // namespace

// The combination is judged as a whole program; the single plans by replay.
// Compared like with like, the combination (1.35x as a program) beats the
// best single plan (30x for its kernel, 1.3x as a program); compared with
// the kernel-level 30x it was never chosen.
TEST(Tuner, TheCombinationIsComparedAtProgramLevel) {
  LevelsEvaluator ev;
  llvm::Expected<TuneResult> r = tuneAtTwoLevels(ev);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(ev.batches.size(), 2u);
  // The last evaluation: both single bests as whole programs, and the
  // combination, together.
  ASSERT_EQ(ev.batches.back().size(), 3u);
  EXPECT_EQ(ev.batches.back()[0], "program: @scale: restrict");
  EXPECT_EQ(ev.batches.back()[1], "program: @sum: warp-reduce");
  EXPECT_EQ(ev.batches.back()[2], "program: @scale: restrict; @sum: warp-reduce");
  EXPECT_EQ(printPlan(r->finalPlan), "@scale: restrict; @sum: warp-reduce");
  EXPECT_NEAR(r->finalSpeedup, 1.35, 1e-9);
  EXPECT_EQ(r->finalJudge, Judge::Program);
  EXPECT_TRUE(r->best[0].inFinal);
  EXPECT_TRUE(r->best[1].inFinal);
  // The kernel's best keeps its replay figures beside its program ones.
  EXPECT_EQ(r->best[1].judge, Judge::ReplayReference);
  EXPECT_NEAR(r->best[1].speedup, 30, 1e-9);
  EXPECT_TRUE(r->best[1].haveProgram);
  EXPECT_NEAR(r->best[1].programSpeedup, 1.3, 1e-9);
  EXPECT_EQ(r->best[1].tried, 1u); // the whole-program measurement is not a second plan
}

// A combination slower as a program than one of its parts: the part wins,
// on its whole-program figures.
TEST(Tuner, ASingleBestBeatsAWeakerCombinationAtProgramLevel) {
  LevelsEvaluator ev;
  ev.combined = 1.2;
  llvm::Expected<TuneResult> r = tuneAtTwoLevels(ev);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(printPlan(r->finalPlan), "@sum: warp-reduce");
  EXPECT_NEAR(r->finalSpeedup, 1.3, 1e-9);
  EXPECT_EQ(r->finalJudge, Judge::Program);
  EXPECT_FALSE(r->best[0].inFinal);
  EXPECT_TRUE(r->best[1].inFinal);
}

// One kernel tuned by replay and nothing measured as a whole program: its
// kernel-level figures stand, and say so.
TEST(Tuner, ALoneReplayedPlanKeepsItsKernelLevelFigures) {
  OneStepStrategy st;
  st.transformOf = {{"sum", "warp-reduce"}};
  Tuner t(input(), space(), st, TuneOptions{});
  LevelsEvaluator ev;
  llvm::Expected<TuneResult> r = t.run(ev);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(ev.batches.size(), 1u); // nothing to compare across kernels
  EXPECT_EQ(printPlan(r->finalPlan), "@sum: warp-reduce");
  EXPECT_EQ(r->finalJudge, Judge::ReplayReference);
  EXPECT_NEAR(r->finalSpeedup, 30, 1e-9);
}

namespace {
/// Proposes the given plans for kernel "sum", those not tried yet.
class FixedPlansStrategy : public SearchStrategy {
public:
  std::vector<std::string> plans;
  const char *name() const override { return "fixed"; }
  std::vector<Proposal> propose(const KernelState &k, unsigned) override {
    std::vector<Proposal> out;
    if (k.name == "sum")
      for (const std::string &p : plans)
        if (!k.tried.count(planText(plan(p).steps)))
          out.push_back(Proposal{plan(p).steps});
    return out;
  }
};

/// Replay ranks warp-reduce (30x) just above warp-reduce with restrict
/// (29.5x, within 5%) and far above restrict (1.5x); as whole programs the
/// order of the first two turns (1.3x against 1.4x).
class CloseFinalistsEvaluator : public VariantEvaluator {
public:
  std::vector<std::vector<std::string>> batches;
  llvm::Expected<std::vector<Measurement>> evaluate(const std::vector<Candidate> &cs) override {
    std::vector<Measurement> out;
    batches.emplace_back();
    for (const Candidate &c : cs) {
      std::string plan = c.planText();
      bool program = c.wholeProgram || c.kernel == kCombination;
      batches.back().push_back((program ? "program: " : "replay: ") + plan);
      bool warp = plan.find("warp-reduce") != std::string::npos;
      bool restrict = plan.find("restrict") != std::string::npos;
      double s = program ? (warp &&restrict ? 1.4
                            : warp          ? 1.3
                                            : 1.02)
                         : (warp &&restrict ? 29.5
                            : warp          ? 30.0
                                            : 1.5);
      Measurement r;
      r.outcome = Outcome::Ok;
      r.judge = program ? Judge::Program : Judge::ReplayReference;
      r.timed = r.faster = true;
      r.speedup = s;
      r.lo = s * 0.99;
      r.hi = s * 1.01;
      out.push_back(r);
    }
    return out;
  }
  std::string gpuName() const override { return "Scripted GPU"; }
};
} // namespace

// One kernel tuned by replay, with a runner-up within 5% of its best: both
// are measured as whole programs, and the one that pays more there is the
// kernel's best and the final plan, on its whole-program figures (the plan
// far behind is not measured again).
TEST(Tuner, CloseReplayedPlansAreDecidedAsWholePrograms) {
  FixedPlansStrategy st;
  st.plans = {"@sum: warp-reduce", "@sum: warp-reduce; @sum: restrict", "@sum: restrict"};
  TuneOptions o;
  o.budget = 3;
  Tuner t(input(), space(), st, o);
  CloseFinalistsEvaluator ev;
  llvm::Expected<TuneResult> r = t.run(ev);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  std::string seen;
  for (const auto &b : ev.batches)
    for (const std::string &p : b)
      seen += p + "\n";
  ASSERT_EQ(ev.batches.size(), 2u) << seen;
  ASSERT_EQ(ev.batches.back().size(), 2u);
  EXPECT_EQ(ev.batches.back()[0], "program: @sum: warp-reduce");
  EXPECT_EQ(ev.batches.back()[1], "program: @sum: warp-reduce; restrict");
  EXPECT_EQ(printPlan(r->finalPlan), "@sum: warp-reduce; restrict");
  EXPECT_EQ(r->finalJudge, Judge::Program);
  EXPECT_NEAR(r->finalSpeedup, 1.4, 1e-9);
  const KernelBest &sum = r->best[1];
  EXPECT_EQ(printPlan(sum.plan), "@sum: warp-reduce; restrict");
  EXPECT_EQ(sum.judge, Judge::ReplayReference); // its own replay figures
  EXPECT_NEAR(sum.speedup, 29.5, 1e-9);
  EXPECT_TRUE(sum.haveProgram);
  EXPECT_NEAR(sum.programSpeedup, 1.4, 1e-9);
  EXPECT_TRUE(sum.inFinal);
  EXPECT_EQ(sum.tried, 3u); // the whole-program measurements are not more plans
}

TEST(Tuner, VariantIdsParseWithoutOverflow) {
  EXPECT_EQ(variantNumber("v003"), std::optional<unsigned>(3));
  EXPECT_EQ(variantNumber("v4294967294"), std::optional<unsigned>(4294967294u));
  // The largest unsigned has no next id; more digits do not fit (sscanf's
  // %u wrapped them).
  EXPECT_EQ(variantNumber("v4294967295"), std::nullopt);
  EXPECT_EQ(variantNumber("v4294967296"), std::nullopt);
  EXPECT_EQ(variantNumber("v99999999999999999999999"), std::nullopt);
  for (const char *bad : {"v", "v-1", "v+1", "v12a", "v 1", "combined", "whole-v003", "x003"})
    EXPECT_EQ(variantNumber(bad), std::nullopt) << bad;
  // Absorbed ids are not given out again.
  OneStepStrategy st;
  st.transformOf = {{"sum", "warp-reduce"}};
  Tuner t(input(), space(), st, TuneOptions{});
  Candidate c;
  c.id = "v120";
  c.kernel = 0;
  c.variant.plan = plan("@scale: restrict");
  Measurement res;
  res.outcome = Outcome::Ok;
  Candidate big = c;
  big.id = "v99999999999999999999";
  t.absorb({c, big}, {res, res});
  std::vector<Candidate> next = t.proposeRound(1);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].id, "v121");
}
