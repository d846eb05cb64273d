// cudal1-train's library on a synthetic task whose right plan is known: a
// reduction with atomics wants warp-reduce, a strided kernel coalesce,
// anything else wider loads. Trained on some kernels (programs), the
// policy must rank the right plan first on kernels it has never seen.
#include "cudal1/Policy/Train.h"
#include "cudal1/Tune/PolicyStrategy.h"

#include "Torch/Network.h" // lib/Policy: the network behind Policy (tests only)

#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Tune/Effect.h"
#include "cudal1/Tune/Space.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace cudal1;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("cudal1-train-test", p));
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
};

/// The right plan of a kernel of the synthetic task.
std::string rightPlan(const std::string &name, int kind) {
  return kind == 0   ? "@" + name + ": warp-reduce"
         : kind == 1 ? "@" + name + ": coalesce"
                     : "@" + name + ": vectorize(width=16)";
}

/// `n` kernels, each its own program (its own session), with features that
/// decide the right plan and a small deterministic spread of the rest.
void buildSyntheticDb(const std::string &path, unsigned n) {
  auto db = TuneDB::open(path);
  ASSERT_TRUE(bool(db)) << llvm::toString(db.takeError());
  for (unsigned i = 0; i < n; ++i) {
    int kind = int(i % 3);
    std::string name = "k" + std::to_string(i), key = "key" + std::to_string(i);
    KernelFeatures f{key, name, 1, {}};
    f.features = {{"atomics", kind == 0 ? 1.0 + i % 4 : 0.0},
                  {"frac_strided", kind == 1 ? 0.5 + 0.1 * (i % 5) : 0.1 * (i % 2)},
                  {"loops", double(i % 3)},
                  {"global_reads", double(1 + i % 7)}};
    ASSERT_FALSE(bool(db->recordFeatures(f)));
    std::vector<std::pair<std::string, double>> plans = {
        {"@" + name + ": warp-reduce", kind == 0 ? 3.0 : 0.97},
        {"@" + name + ": coalesce", kind == 1 ? 2.0 : 1.0},
        {"@" + name + ": vectorize(width=16)", kind == 2 ? 1.6 : 1.03},
        {"@" + name + ": restrict", 1.05},
        {"@" + name + ": unroll(loop=0, factor=4)", 1.08 - 0.01 * (i % 3)},
        {"@" + name + ": launch-config(block=256)", 0.95},
        {"@" + name + ": vectorize(width=8)", kind == 2 ? 1.3 : 1.01},
    };
    for (const auto &[plan, speedup] : plans) {
      MeasurementRow m;
      m.kernelKey = key;
      m.kernelName = name;
      m.plan = plan;
      m.gpu = {"NVIDIA H200", "sm_90"};
      m.shape = "*";
      m.session = "s" + std::to_string(i);
      // warp-reduce on a kernel without a reduction does not verify.
      bool wrong = kind != 0 && plan.find("warp-reduce") != std::string::npos;
      m.measured.outcome = wrong ? Outcome::Wrong : Outcome::Ok;
      if (!wrong) {
        m.measured.timed = true;
        m.measured.speedup = speedup;
        m.measured.lo = speedup * 0.99;
        m.measured.hi = speedup * 1.01;
        m.measured.baselineMs = 1.0 + 0.1 * i;
      }
      auto id = db->recordMeasurement(m);
      ASSERT_TRUE(bool(id)) << llvm::toString(id.takeError());
    }
  }
}

TEST(Train, SplitsAreByHashAndStable) {
  SplitOptions o{10, 10};
  unsigned counts[3] = {0, 0, 0};
  for (unsigned i = 0; i < 2000; ++i)
    ++counts[unsigned(splitOf("program" + std::to_string(i), o))];
  EXPECT_NEAR(counts[unsigned(Split::Test)], 200, 60);
  EXPECT_NEAR(counts[unsigned(Split::Validation)], 200, 60);
  EXPECT_EQ(splitOf("l1_vector_add", o), splitOf("l1_vector_add", o));
  EXPECT_EQ(splitOf("x", {0, 0}), Split::Train);
  EXPECT_EQ(splitOf("x", {0, 100}), Split::Test);
}

TEST(Train, KernelsOfOneSessionAreOneProgram) {
  TempDir d;
  std::string path = d.path + "/t.db";
  {
    auto db = TuneDB::open(path);
    ASSERT_TRUE(bool(db));
    auto rec = [&](const std::string &key, const std::string &session, Outcome out) {
      MeasurementRow m;
      m.kernelKey = key;
      m.kernelName = key;
      m.plan = "@" + key + ": restrict";
      m.gpu = {"NVIDIA H200", "sm_90"};
      m.shape = "*";
      m.session = session;
      m.measured.outcome = out;
      auto id = db->recordMeasurement(m);
      ASSERT_TRUE(bool(id)) << llvm::toString(id.takeError());
    };
    rec("ka", "s1", Outcome::Ok);
    rec("kb", "s1", Outcome::Ok);
    rec("kb", "s2", Outcome::Wrong); // kb in s2 joins kc's session to ka's program
    rec("kc", "s2", Outcome::Ok);
    rec("kd", "s3", Outcome::Ok);
    rec("program:x", "s3", Outcome::Ok);
  }
  auto ds = loadDataset({path}, 1, {});
  ASSERT_TRUE(bool(ds)) << llvm::toString(ds.takeError());
  ASSERT_EQ(ds->kernels.size(), 4u);
  EXPECT_EQ(ds->kernels[0].program, ds->kernels[1].program);
  EXPECT_EQ(ds->kernels[0].program, ds->kernels[2].program);
  EXPECT_NE(ds->kernels[0].program, ds->kernels[3].program);
  EXPECT_EQ(ds->skipped, 1u); // the combination
  // kb: wrong once makes the plan wrong, and an untimed one.
  EXPECT_EQ(ds->kernels[1].plans[0].outcome, Outcome::Wrong);
  EXPECT_FALSE(ds->kernels[1].plans[0].timed);

  // A session named as a corpus program takes the program's name and its
  // fixed split (the corpus test split is never trained on).
  SplitOptions named;
  named.sessionPrograms["t.db#s3"] = "bench/corpus/hpc_wave2d.cu";
  named.programSplits["hpc_wave2d"] = Split::Test;
  auto ds2 = loadDataset({path}, 1, named);
  ASSERT_TRUE(bool(ds2)) << llvm::toString(ds2.takeError());
  EXPECT_EQ(ds2->kernels[3].program, "bench/corpus/hpc_wave2d.cu");
  EXPECT_EQ(ds2->kernels[3].split, Split::Test);
  EXPECT_EQ(ds2->kernels[0].program, ds->kernels[0].program);
}

TEST(Train, ReadsProgramsAndSplitsWithClearErrors) {
  TempDir d;
  std::ofstream(d.path + "/programs.tsv") << "# file\tsession\tprogram\n"
                                          << "a.db\ts1\tbench/corpus/x.cu\n"
                                          << "a.db\ts2\n";
  SplitOptions o;
  llvm::Error e = readSessionPrograms(d.path + "/programs.tsv", o);
  ASSERT_TRUE(bool(e));
  EXPECT_NE(
      llvm::toString(std::move(e)).find("programs.tsv:3: expected FILE<TAB>SESSION<TAB>PROGRAM"),
      std::string::npos);
  EXPECT_EQ(o.sessionPrograms["a.db#s1"], "bench/corpus/x.cu");
  for (const char *split : {"train", "validation", "test"})
    std::ofstream(d.path + "/" + split + ".txt") << "# comment\n" << split << "_prog\n";
  ASSERT_FALSE(bool(readProgramSplits(d.path, o)));
  EXPECT_EQ(splitOf("bench/corpus/test_prog.cu", o), Split::Test);
  EXPECT_EQ(splitOf("validation_prog", o), Split::Validation);
  std::ofstream(d.path + "/test.txt") << "train_prog\n";
  llvm::Error twice = readProgramSplits(d.path, o);
  ASSERT_TRUE(bool(twice));
  EXPECT_NE(llvm::toString(std::move(twice)).find("'train_prog' is in two splits"),
            std::string::npos);
}

TEST(Train, LearnsTheRightPlanOfASyntheticTask) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  std::string path = d.path + "/synthetic.db";
  buildSyntheticDb(path, 45);
  SplitOptions so{15, 15};
  auto ds = loadDataset({path}, 1, so);
  ASSERT_TRUE(bool(ds)) << llvm::toString(ds.takeError());
  ASSERT_EQ(ds->kernels.size(), 45u);
  TrainOptions to;
  to.outDir = d.path + "/model";
  to.epochs = 40;
  to.verifyEpochs = 10;
  to.rlEpochs = 10;
  to.budget = 2;
  to.group = 2;
  to.hidden = 32;
  to.seed = 3;
  auto sum = trainPolicy(*ds, to);
  ASSERT_TRUE(bool(sum)) << llvm::toString(sum.takeError());
  ASSERT_GT(sum->validationKernels + sum->testKernels, 5u);
  // Held out: the right plan first on every kernel, and most pairs (many
  // differ by a few percent at 1% noise; issue 17's goal is 0.80).
  auto model = Policy::load(to.outDir);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  unsigned heldOut = 0, right = 0;
  for (const KernelData &k : ds->kernels) {
    if (k.split == Split::Train)
      continue;
    std::vector<Plan> plans;
    for (const MeasuredPlan &p : k.plans)
      plans.push_back(Plan{p.steps});
    auto s = (*model)->score(k.state, plans);
    ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
    // Chosen as the strategy chooses (without exploration): warp-reduce
    // where it does not verify must lose by its verification probability.
    size_t top = 0;
    for (size_t i = 0; i < plans.size(); ++i)
      if (policyUtility((*s)[i], 0) > policyUtility((*s)[top], 0))
        top = i;
    int kind = std::stoi(k.state.name.substr(1)) % 3;
    ++heldOut;
    right += k.plans[top].text == rightPlan(k.state.name, kind);
  }
  EXPECT_EQ(right, heldOut) << sum->curve;

  // Through the strategy, as --tune would ask it: the heuristic's first
  // plan (warp-reduce, wrong outside reductions), then the policy's own
  // greedy choice, which must be the right plan where the heuristic's is not.
  PolicyStrategyOptions po;
  po.modelDir = to.outDir;
  po.temperature = 0;
  po.explore = 0;
  po.remark = [](const std::string &r) { ADD_FAILURE() << r; };
  std::unique_ptr<SearchStrategy> strategy = makePolicyStrategy(po);
  for (const KernelData &k : ds->kernels) {
    if (k.split == Split::Train)
      continue;
    KernelState st = k.state;
    for (const MeasuredPlan &p : k.plans)
      st.steps.push_back(p.steps[0]);
    std::vector<std::string> proposed;
    for (int round = 0; round < 2; ++round)
      for (const Proposal &p : strategy->propose(st, 1)) {
        proposed.push_back(p.text());
        st.tried.insert(p.text());
      }
    int kind = std::stoi(k.state.name.substr(1)) % 3;
    ASSERT_EQ(proposed.size(), 2u);
    EXPECT_EQ(proposed[0], "@" + k.state.name + ": warp-reduce");
    EXPECT_TRUE(proposed[0] == rightPlan(k.state.name, kind) ||
                proposed[1] == rightPlan(k.state.name, kind))
        << k.state.name << ": " << proposed[0] << " then " << proposed[1];
    // Trained on single steps only, it composes from what this run
    // measured: the right plan, measured 3x, extended by one more step.
    Exemplar ex;
    ex.steps = k.plans[0].steps;
    for (const MeasuredPlan &p : k.plans)
      if (p.text == rightPlan(k.state.name, kind))
        ex.steps = p.steps;
    ex.measured.outcome = Outcome::Ok;
    ex.measured.timed = ex.measured.faster = ex.thisRun = true;
    ex.measured.speedup = 3;
    st.exemplars.push_back(ex);
    std::vector<Proposal> next = strategy->propose(st, 1);
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].steps.size(), 2u) << next[0].text();
    EXPECT_EQ(next[0].text().rfind(rightPlan(k.state.name, kind) + "; ", 0), 0u) << next[0].text();
  }
  EXPECT_GE(sum->validation.pairAccuracy, 0.8) << sum->curve;
  EXPECT_GE(sum->test.pairAccuracy, 0.8) << sum->curve;
  // The curve was written beside the model.
  std::ifstream curve(to.outDir + "/curve.txt");
  std::stringstream text;
  text << curve.rdbuf();
  EXPECT_EQ(text.str(), sum->curve);
  EXPECT_NE(sum->curve.find("# final test:"), std::string::npos);
  EXPECT_NE(sum->curve.find("# kept: stage a"), std::string::npos);
  EXPECT_NE(sum->curve.find("# kept: stage b"), std::string::npos);
  EXPECT_NE(sum->curve.find("# kept: stage c"), std::string::npos) << sum->curve;
  EXPECT_EQ(sum->stages, "abc");
  // And its plot.
  std::ifstream svg(to.outDir + "/curve.svg");
  std::stringstream plot;
  plot << svg.rdbuf();
  EXPECT_EQ(plot.str().rfind("<svg ", 0), 0u);
  EXPECT_NE(plot.str().find("stage c"), std::string::npos);
  EXPECT_NE(plot.str().find("<polyline"), std::string::npos);

  // Deterministic: the same seed trains the same weights, bit for bit.
  TrainOptions again = to;
  again.outDir = d.path + "/model2";
  auto sum2 = trainPolicy(*ds, again);
  ASSERT_TRUE(bool(sum2));
  auto model2 = Policy::load(again.outDir);
  ASSERT_TRUE(bool(model2));
  std::vector<float> a = (*model)->network().parameters(), b = (*model2)->network().parameters();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

/// Held-out kernels whose plan of highest utility (no exploration) is the
/// right one.
unsigned rightFirst(const Policy &model, const Dataset &ds, unsigned &heldOut) {
  unsigned right = 0;
  heldOut = 0;
  for (const KernelData &k : ds.kernels) {
    if (k.split == Split::Train)
      continue;
    std::vector<Plan> plans;
    for (const MeasuredPlan &p : k.plans)
      plans.push_back(Plan{p.steps});
    auto s = model.score(k.state, plans);
    EXPECT_TRUE(bool(s)) << llvm::toString(s.takeError());
    if (!s)
      continue;
    size_t top = 0;
    for (size_t i = 0; i < plans.size(); ++i)
      if (policyUtility((*s)[i], 0) > policyUtility((*s)[top], 0))
        top = i;
    ++heldOut;
    right += k.plans[top].text == rightPlan(k.state.name, std::stoi(k.state.name.substr(1)) % 3);
  }
  return right;
}

TEST(Train, StageCAloneReachesTheRightPlan) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  std::string path = d.path + "/synthetic.db";
  buildSyntheticDb(path, 45);
  auto ds = loadDataset({path}, 1, SplitOptions{15, 15});
  ASSERT_TRUE(bool(ds)) << llvm::toString(ds.takeError());
  // No supervised stage, no anchor to it: the policy learns only from
  // episodes' rewards (turns of 2 of the measured plans, GRPO advantages,
  // the recorded sessions replayed with importance weights).
  TrainOptions to;
  to.outDir = d.path + "/rl";
  to.epochs = 0;
  to.verifyEpochs = 0;
  to.rlEpochs = 40;
  to.rlAnchor = 0;
  to.budget = 2;
  to.group = 2;
  to.hidden = 32;
  to.seed = 4;
  auto sum = trainPolicy(*ds, to);
  ASSERT_TRUE(bool(sum)) << llvm::toString(sum.takeError());
  EXPECT_EQ(sum->stages, "c");
  auto model = Policy::load(to.outDir);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  unsigned heldOut = 0, right = rightFirst(**model, *ds, heldOut);
  ASSERT_GT(heldOut, 5u);
  EXPECT_EQ(right, heldOut) << sum->curve;
  EXPECT_DOUBLE_EQ(sum->validationFound, 1.0) << sum->curve;
  // The untrained network it started from does not (the task is not trivial).
  TrainOptions none = to;
  none.outDir = d.path + "/untrained";
  none.rlEpochs = 0;
  none.evalEvery = 1;
  auto sum0 = trainPolicy(*ds, none);
  ASSERT_TRUE(bool(sum0)) << llvm::toString(sum0.takeError());
  auto untrained = Policy::load(none.outDir);
  ASSERT_TRUE(bool(untrained));
  unsigned heldOut0 = 0;
  EXPECT_LT(rightFirst(**untrained, *ds, heldOut0), heldOut / 2);
  // Deterministic: the same seed, the same weights.
  TrainOptions again = to;
  again.outDir = d.path + "/rl2";
  ASSERT_TRUE(bool(trainPolicy(*ds, again)));
  auto model2 = Policy::load(again.outDir);
  ASSERT_TRUE(bool(model2));
  std::vector<float> a = (*model)->network().parameters(), b = (*model2)->network().parameters();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

TEST(Train, AblationsTrainWithoutWhatTheyName) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  std::string path = d.path + "/synthetic.db";
  buildSyntheticDb(path, 12);
  auto ds = loadDataset({path}, 1, SplitOptions{0, 0});
  ASSERT_TRUE(bool(ds));
  // Effects given to a few plans, so that the schema has effect slots.
  for (KernelData &k : ds->kernels)
    for (MeasuredPlan &p : k.plans)
      p.effect = EffectFeatures{
          {"vector_bytes", p.text.find("vectorize") != std::string::npos ? 16.0 : 4.0}};
  TrainOptions to;
  to.epochs = 4;
  to.verifyEpochs = 2;
  to.rlEpochs = 2;
  to.hidden = 16;
  auto train = [&](const std::string &name, std::set<std::string> ablate) {
    TrainOptions o = to;
    o.outDir = d.path + "/" + name;
    o.ablate = std::move(ablate);
    auto sum = trainPolicy(*ds, o);
    EXPECT_TRUE(bool(sum)) << llvm::toString(sum.takeError());
    auto m = Policy::load(o.outDir);
    EXPECT_TRUE(bool(m)) << llvm::toString(m.takeError());
    return std::make_pair(sum ? sum->stages : "", m ? std::move(*m) : nullptr);
  };
  auto [allStages, all] = train("all", {});
  ASSERT_TRUE(all);
  EXPECT_EQ(allStages, "abc");
  EXPECT_EQ(all->schema().effectNames, std::vector<std::string>{"vector_bytes"});
  EXPECT_EQ(all->schema().effectVersion, kEffectVersion);
  EXPECT_TRUE(all->info().useExemplars);

  auto [noC, withoutC] = train("no-c", {"stage-c"});
  EXPECT_EQ(noC, "ab");
  auto [s2, withoutEffect] = train("no-effect", {"effect"});
  ASSERT_TRUE(withoutEffect);
  EXPECT_EQ(withoutEffect->schema().effectDim(), 0u);
  EXPECT_EQ(withoutEffect->info().ablations, "effect");
  auto [s3, withoutExemplars] = train("no-exemplars", {"exemplars"});
  ASSERT_TRUE(withoutExemplars);
  EXPECT_FALSE(withoutExemplars->info().useExemplars);
  // A model without exemplars scores a kernel the same whatever was measured.
  KernelState st = ds->kernels[0].state;
  std::vector<Plan> plans = {Plan{ds->kernels[0].plans[0].steps}};
  auto bare = withoutExemplars->score(st, plans);
  Exemplar e;
  e.steps = ds->kernels[0].plans[1].steps;
  e.measured.outcome = Outcome::Ok;
  e.measured.timed = true;
  e.measured.speedup = 3;
  st.exemplars.push_back(e);
  auto withEx = withoutExemplars->score(st, plans);
  ASSERT_TRUE(bare && withEx);
  EXPECT_EQ((*bare)[0].logSpeedup, (*withEx)[0].logSpeedup);
  auto allBare = all->score(ds->kernels[0].state, plans), allWith = all->score(st, plans);
  ASSERT_TRUE(allBare && allWith);
  EXPECT_NE((*allBare)[0].logSpeedup, (*allWith)[0].logSpeedup);

  TrainOptions bad = to;
  bad.outDir = d.path + "/bad";
  bad.ablate = {"everything"};
  auto err = trainPolicy(*ds, bad);
  ASSERT_FALSE(bool(err));
  EXPECT_NE(llvm::toString(err.takeError()).find("unknown ablation 'everything'"),
            std::string::npos);
}

TEST(Train, NothingToTrainOnIsAnError) {
  Dataset empty;
  TrainOptions to;
  to.outDir = "/nonexistent/never-written";
  auto sum = trainPolicy(empty, to);
  ASSERT_FALSE(bool(sum));
  EXPECT_NE(llvm::toString(sum.takeError()).find("no kernel in the training split"),
            std::string::npos);
}

} // namespace

namespace {

TEST(Train, RankingScoresCountPairsTiesAndTheTopPlan) {
  Dataset ds;
  KernelData k;
  k.state.name = "k";
  auto plan = [](const char *transform, double y, bool timed) {
    MeasuredPlan p;
    PlanStep s;
    s.scope.kernel = "k";
    s.transform = transform;
    p.steps = {s};
    p.timed = timed;
    p.outcome = Outcome::Ok;
    p.logSpeedup = y;
    p.noise = 0.01;
    return p;
  };
  // Measured: warp-reduce > coalesce > restrict; unroll within the noise of
  // restrict (no pair); vectorize not timed (ignored).
  k.plans = {plan("restrict", 0.0, true), plan("warp-reduce", 0.5, true),
             plan("coalesce", 0.2, true), plan("unroll", 0.005, true),
             plan("vectorize", 0.9, false)};
  ds.kernels.push_back(k);
  RankFn byTable = [](const KernelData &, const std::vector<const MeasuredPlan *> &ps,
                      bool &) -> llvm::Expected<std::vector<double>> {
    std::vector<double> out;
    for (const MeasuredPlan *p : ps) // coalesce and warp-reduce tied, restrict last
      out.push_back(p->steps[0].transform == "restrict" ? 0 : 1);
    return out;
  };
  auto s = evaluateRanking(ds, Split::Train, byTable);
  ASSERT_TRUE(bool(s));
  // Non-tied pairs: w>c, w>r, w>u, c>r, c>u: 5. Scores: w=c=u=1, r=0, so
  // w>r and c>r are right, w>c, w>u and c>u are predicted ties (half each).
  EXPECT_EQ(s->pairs, 5u);
  EXPECT_DOUBLE_EQ(s->pairAccuracy, (1 + 1 + 0.5 + 0.5 + 0.5) / 5);
  EXPECT_EQ(s->kernels, 1u);
  // The top plan is the first of the highest scores: warp-reduce, the best.
  EXPECT_DOUBLE_EQ(s->top1, 1.0);
  // The heuristic ranks warp-reduce first, coalesce before restrict and unroll.
  auto h = evaluateHeuristic(ds, Split::Train);
  ASSERT_TRUE(bool(h));
  EXPECT_DOUBLE_EQ(h->pairAccuracy, 1.0);
  EXPECT_DOUBLE_EQ(h->top1, 1.0);
  auto none = evaluateHeuristic(ds, Split::Test);
  ASSERT_TRUE(bool(none));
  EXPECT_EQ(none->kernels, 0u);
  EXPECT_EQ(none->pairs, 0u);
  EXPECT_EQ(s->within5Kernels, 1u);
  EXPECT_DOUBLE_EQ(s->within5, 1.0);
}

TEST(Train, TopOneWithinFivePercentOfTheOracle) {
  Dataset ds;
  auto kernel = [](const char *name, std::vector<std::pair<const char *, double>> plans) {
    KernelData k;
    k.state.name = name;
    for (auto [transform, y] : plans) {
      MeasuredPlan p;
      PlanStep s;
      s.scope.kernel = name;
      s.transform = transform;
      p.steps = {s};
      p.outcome = Outcome::Ok;
      p.timed = true;
      p.logSpeedup = y;
      p.noise = 0.001;
      k.plans.push_back(p);
    }
    return k;
  };
  // The ranking puts coalesce first everywhere. a: 4% slower than the best
  // (within 5%, not the best: top-1 misses); b: 10% slower (misses both);
  // c: one timed plan (no ranking to judge).
  ds.kernels = {kernel("a", {{"restrict", std::log(1.5)}, {"coalesce", std::log(1.5 * 0.96)}}),
                kernel("b", {{"restrict", std::log(2.0)}, {"coalesce", std::log(2.0 * 0.9)}}),
                kernel("c", {{"restrict", 0.3}})};
  RankFn coalesceFirst = [](const KernelData &, const std::vector<const MeasuredPlan *> &ps,
                            bool &) -> llvm::Expected<std::vector<double>> {
    std::vector<double> out;
    for (const MeasuredPlan *p : ps)
      out.push_back(p->steps[0].transform == "coalesce" ? 1 : 0);
    return out;
  };
  auto s = evaluateRanking(ds, Split::Train, coalesceFirst);
  ASSERT_TRUE(bool(s));
  EXPECT_EQ(s->kernels, 3u);
  EXPECT_EQ(s->within5Kernels, 2u);
  EXPECT_DOUBLE_EQ(s->within5, 0.5);
  EXPECT_DOUBLE_EQ(s->top1, 0.0);
}

} // namespace

namespace {

/// A dataset for the fold assignment: `programs` programs of 1 to 4
/// kernels each; every fifth program is in the test split.
Dataset foldDataset(unsigned programs) {
  Dataset ds;
  for (unsigned p = 0; p < programs; ++p)
    for (unsigned k = 0; k < 1 + p % 4; ++k) {
      KernelData kd;
      kd.program = "bench/corpus/prog" + std::to_string(p) + ".cu";
      kd.split = p % 5 == 4 ? Split::Test : p % 5 == 3 ? Split::Validation : Split::Train;
      kd.state.key = "key" + std::to_string(p) + "-" + std::to_string(k);
      ds.kernels.push_back(kd);
    }
  return ds;
}

} // namespace

TEST(Train, FoldsAreGroupedByProgramDeterministicAndNeverHoldTheTest) {
  Dataset ds = foldDataset(23);
  auto folds = assignFolds(ds, 4, 1);
  ASSERT_TRUE(bool(folds)) << llvm::toString(folds.takeError());
  ASSERT_EQ(folds->size(), ds.kernels.size());
  std::map<std::string, int> foldOf;
  std::vector<unsigned> sizes(4, 0);
  for (size_t i = 0; i < ds.kernels.size(); ++i) {
    const KernelData &k = ds.kernels[i];
    int f = (*folds)[i];
    if (k.split == Split::Test) {
      EXPECT_EQ(f, -1) << k.program; // never in a fold, on either side
      continue;
    }
    ASSERT_GE(f, 0) << k.program; // train and validation programs are pooled
    ASSERT_LT(f, 4);
    ++sizes[size_t(f)];
    auto [it, fresh] = foldOf.emplace(k.program, f);
    EXPECT_EQ(it->second, f) << k.program << ": a program on two sides";
  }
  // Balanced by kernels: largest programs first into the emptiest fold,
  // so the folds differ by at most the largest program (4 kernels).
  unsigned total = 0;
  for (const KernelData &k : ds.kernels)
    total += k.split != Split::Test;
  EXPECT_EQ(sizes[0] + sizes[1] + sizes[2] + sizes[3], total);
  EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()) -
                *std::min_element(sizes.begin(), sizes.end()),
            4u);
  EXPECT_EQ(foldOf.size(), 19u); // every non-test program has its fold
  // Deterministic with the seed; another seed may deal equal sizes apart.
  auto again = assignFolds(ds, 4, 1);
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(*folds, *again);
  bool differs = false;
  for (uint64_t seed = 2; seed < 12 && !differs; ++seed) {
    auto other = assignFolds(ds, 4, seed);
    ASSERT_TRUE(bool(other));
    differs = *other != *folds;
  }
  EXPECT_TRUE(differs);
  // Too few programs outside the test split, or fewer than two folds.
  auto tooMany = assignFolds(foldDataset(5), 5, 1); // 4 non-test programs
  ASSERT_FALSE(bool(tooMany));
  EXPECT_NE(llvm::toString(tooMany.takeError()).find("5 folds, 4 programs"), std::string::npos);
  auto one = assignFolds(ds, 1, 1);
  ASSERT_FALSE(bool(one));
  llvm::consumeError(one.takeError());
}

TEST(Train, CrossValidationChoosesWithoutTheTestSplit) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  std::string path = d.path + "/synthetic.db";
  buildSyntheticDb(path, 24);
  auto ds = loadDataset({path}, 1, SplitOptions{0, 0});
  ASSERT_TRUE(bool(ds)) << llvm::toString(ds.takeError());
  for (size_t i = 0; i < ds->kernels.size(); ++i)
    ds->kernels[i].split = i % 4 == 0 ? Split::Test : i % 4 == 1 ? Split::Validation : Split::Train;
  TrainOptions to;
  to.outDir = d.path + "/cv";
  to.epochs = 20;
  to.verifyEpochs = 10;
  to.rlEpochs = 0;
  to.evalEvery = 10;
  to.hidden = 16;
  to.seed = 2;
  to.folds = 3;
  to.cvHeuristicWeights = {0, 0.5};
  unsigned runs = 0;
  to.progress = [&](const std::string &) { ++runs; };
  auto sum = trainPolicy(*ds, to);
  ASSERT_TRUE(bool(sum)) << llvm::toString(sum.takeError());
  EXPECT_EQ(runs, 2u * 3u + 3u); // the grid's (a) runs, then (b) per fold
  const std::string &cv = sum->crossValidation;
  EXPECT_NE(cv.find("# cross-validation: 3 folds by program over 18 programs"), std::string::npos)
      << cv;
  EXPECT_NE(cv.find("\na 0.003 0 10 "), std::string::npos) << cv;
  EXPECT_NE(cv.find("\na 0.003 0.5 20 "), std::string::npos) << cv;
  EXPECT_NE(cv.find("\nb 0.003 "), std::string::npos) << cv;
  EXPECT_NE(cv.find("# chosen: --epochs " + std::to_string(sum->epochsA)), std::string::npos);
  EXPECT_TRUE(sum->epochsA == 10 || sum->epochsA == 20);
  EXPECT_LE(sum->epochsB, 10u);
  EXPECT_TRUE(sum->heuristicWeight == 0 || sum->heuristicWeight == 0.5);
  EXPECT_NE(sum->curve.find("(chosen by 3-fold cross-validation)"), std::string::npos)
      << sum->curve;
  std::ifstream file(to.outDir + "/cv.txt");
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(text.str(), cv);

  // The test split changes nothing: its measurements turned upside down
  // (and its kernels' plans cut), the same choices and the same weights.
  Dataset flipped = *ds;
  for (KernelData &k : flipped.kernels)
    if (k.split == Split::Test) {
      for (MeasuredPlan &p : k.plans)
        p.logSpeedup = -p.logSpeedup;
      k.plans.resize(3);
    }
  TrainOptions again = to;
  again.outDir = d.path + "/cv2";
  auto sum2 = trainPolicy(flipped, again);
  ASSERT_TRUE(bool(sum2)) << llvm::toString(sum2.takeError());
  EXPECT_EQ(sum2->crossValidation, cv);
  auto m1 = Policy::load(to.outDir), m2 = Policy::load(again.outDir);
  ASSERT_TRUE(m1 && m2);
  std::vector<float> a = (*m1)->network().parameters(), b = (*m2)->network().parameters();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  // The validation split is trained on (it is part of the folds).
  EXPECT_NE(sum->curve.find("validation programs trained on"), std::string::npos);
}

namespace {

/// Plans whose heuristic order is known (ranks 0, 20, 30, 31, 40, 50, 60).
const std::vector<std::string> &heuristicOrderPlans() {
  static const std::vector<std::string> plans = {"warp-reduce",
                                                 "coalesce",
                                                 "vectorize(width=16)",
                                                 "vectorize(width=8)",
                                                 "restrict",
                                                 "unroll(loop=0, factor=4)",
                                                 "launch-config(block=256)"};
  return plans;
}

/// `n` kernels, each its own program, measuring the plans above: verified
/// but never timed (nothing measured: only the heuristic can order them),
/// or timed in the reverse of the heuristic's order (the measurements say
/// the opposite).
void buildHeuristicDb(const std::string &path, unsigned n, bool timedReversed) {
  auto db = TuneDB::open(path);
  ASSERT_TRUE(bool(db)) << llvm::toString(db.takeError());
  for (unsigned i = 0; i < n; ++i) {
    std::string name = "h" + std::to_string(i), key = "hkey" + std::to_string(i);
    KernelFeatures f{key, name, 1, {}};
    f.features = {{"loops", double(i % 3)}, {"global_reads", double(1 + i % 7)}};
    ASSERT_FALSE(bool(db->recordFeatures(f)));
    const auto &plans = heuristicOrderPlans();
    for (size_t j = 0; j < plans.size(); ++j) {
      MeasurementRow m;
      m.kernelKey = key;
      m.kernelName = name;
      m.plan = "@" + name + ": " + plans[j];
      m.gpu = {"NVIDIA H200", "sm_90"};
      m.shape = "*";
      m.session = "s" + std::to_string(i);
      m.measured.outcome = Outcome::Ok;
      if (timedReversed) {
        double speedup = 0.8 + 0.1 * double(j); // the heuristic's last is fastest
        m.measured.timed = true;
        m.measured.speedup = speedup;
        m.measured.lo = speedup * 0.99;
        m.measured.hi = speedup * 1.01;
        m.measured.baselineMs = 1.0;
      }
      auto id = db->recordMeasurement(m);
      ASSERT_TRUE(bool(id)) << llvm::toString(id.takeError());
    }
  }
}

/// The share of the held-out kernels' plan pairs the model orders as the
/// heuristic does.
double heuristicAgreement(const Policy &model, const Dataset &ds) {
  unsigned pairs = 0, agree = 0;
  for (const KernelData &k : ds.kernels) {
    if (k.split != Split::Test)
      continue;
    std::vector<Plan> plans;
    for (const MeasuredPlan &p : k.plans)
      plans.push_back(Plan{p.steps});
    auto s = model.score(k.state, plans);
    EXPECT_TRUE(bool(s)) << llvm::toString(s.takeError());
    if (!s)
      return 0;
    for (size_t a = 0; a < plans.size(); ++a)
      for (size_t b = 0; b < plans.size(); ++b) {
        double ha = heuristicPlanScore(plans[a].steps), hb = heuristicPlanScore(plans[b].steps);
        if (ha > hb) {
          ++pairs;
          agree += (*s)[a].logSpeedup > (*s)[b].logSpeedup;
        }
      }
  }
  return pairs ? double(agree) / pairs : 0;
}

double trainedAgreement(const std::string &dir, bool timedReversed, double weight) {
  std::string path = dir + "/h.db";
  if (!llvm::sys::fs::exists(path))
    buildHeuristicDb(path, 16, timedReversed);
  auto ds = loadDataset({path}, 1, SplitOptions{0, 0});
  EXPECT_TRUE(bool(ds)) << llvm::toString(ds.takeError());
  if (!ds)
    return -1;
  for (size_t i = 0; i < ds->kernels.size(); ++i)
    ds->kernels[i].split = i % 4 == 0 ? Split::Test : Split::Train;
  TrainOptions to;
  to.outDir = dir + "/model-" + std::to_string(weight);
  to.epochs = 40;
  to.verifyEpochs = 0;
  to.rlEpochs = 0;
  to.hidden = 16;
  to.seed = 4;
  to.heuristicWeight = weight;
  auto sum = trainPolicy(*ds, to);
  EXPECT_TRUE(bool(sum)) << llvm::toString(sum.takeError());
  if (!sum)
    return -1;
  EXPECT_NE(sum->curve.find("heuristic imitation weight " + std::to_string(int(weight))),
            std::string::npos)
      << sum->curve;
  auto model = Policy::load(to.outDir);
  EXPECT_TRUE(bool(model));
  return model ? heuristicAgreement(**model, *ds) : -1;
}

} // namespace

TEST(Train, HeuristicImitationIsLearnedWhereNothingIsMeasured) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  // Nothing timed: with the imitation the held-out kernels' plans are
  // ordered as the heuristic orders them; without it nothing orders them.
  double with = trainedAgreement(d.path, false, 1);
  double without = trainedAgreement(d.path, false, 0);
  EXPECT_GE(with, 0.95) << without;
  EXPECT_LT(without, 0.8) << with;
}

TEST(Train, MeasuredPairsOverrideTheHeuristicImitation) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  // Every pair timed, in the reverse order: the measurements win, at the
  // same weight that taught the order above.
  double with = trainedAgreement(d.path, true, 1);
  EXPECT_LE(with, 0.05);
  EXPECT_GE(with, 0) << "trained";
}

namespace {

/// The legal plans nobody measured, in the heuristic's order (strict ranks).
const std::vector<std::string> &unmeasuredOrderPlans() {
  static const std::vector<std::string> plans = {
      "warp-reduce",        "coalesce", "vectorize(width=16)",
      "vectorize(width=8)", "restrict", "unroll(loop=0, factor=4)"};
  return plans;
}

std::vector<PlanStep> stepsOf(const std::string &kernel, const std::string &step) {
  auto p = parsePlan("@" + kernel + ": " + step);
  EXPECT_TRUE(bool(p)) << llvm::toString(p.takeError());
  if (!p)
    return {};
  return p->steps;
}

/// `n` kernels, each its own program: measured, launch-config (which the
/// heuristic ranks below every plan above) timed 1.5x faster and
/// launch-bounds timed slower; the plans above are the unmeasured ones of
/// the training kernels (the test split gets none, as attachUnmeasured).
Dataset unmeasuredDataset(unsigned n) {
  Dataset ds;
  ds.featureVersion = 1;
  for (unsigned i = 0; i < n; ++i) {
    KernelData k;
    k.state.name = "u" + std::to_string(i);
    k.state.key = "ukey" + std::to_string(i);
    k.state.featureVersion = 1;
    k.state.features = {{"loops", double(i % 3)}, {"global_reads", double(1 + i % 7)}};
    k.state.gpu = describeGpu("NVIDIA H200", "sm_90");
    k.program = "p" + std::to_string(i);
    k.split = i % 4 == 0 ? Split::Test : Split::Train;
    for (auto [step, speedup] :
         {std::pair{"launch-config(block=256)", 1.5}, std::pair{"launch-bounds", 0.9}}) {
      MeasuredPlan p;
      p.steps = stepsOf(k.state.name, step);
      p.text = planText(p.steps);
      p.outcome = Outcome::Ok;
      p.timed = true;
      p.logSpeedup = std::log(speedup);
      p.logLo = p.logSpeedup - 0.01;
      p.noise = 0.01;
      p.measurements = 1;
      k.plans.push_back(p);
    }
    if (k.split != Split::Test)
      for (const std::string &step : unmeasuredOrderPlans()) {
        UnmeasuredPlan u;
        u.steps = stepsOf(k.state.name, step);
        u.text = planText(u.steps);
        k.unmeasured.push_back(u);
      }
    ds.kernels.push_back(std::move(k));
  }
  return ds;
}

struct UnmeasuredAgreement {
  double heuristic = -1;     ///< unmeasured pairs ordered as the heuristic orders them
  double measuredFirst = -1; ///< (measured-faster, unmeasured) pairs with the measured one first
  double measuredPair = -1;  ///< launch-config above launch-bounds, as measured
};

/// Trains on the dataset above and scores the held-out kernels' plans.
UnmeasuredAgreement trainedOnUnmeasured(const std::string &dir, double share) {
  UnmeasuredAgreement r;
  Dataset ds = unmeasuredDataset(16);
  TrainOptions to;
  to.outDir = dir + "/model-share-" + std::to_string(int(share));
  to.epochs = 40;
  to.verifyEpochs = 0;
  to.rlEpochs = 0;
  to.hidden = 16;
  to.seed = 4;
  to.heuristicWeight = 1;
  to.unmeasuredShare = share;
  auto sum = trainPolicy(ds, to);
  EXPECT_TRUE(bool(sum)) << llvm::toString(sum.takeError());
  if (!sum)
    return r;
  EXPECT_NE(sum->curve.find(share > 0 ? "; 72 unmeasured plans at share 1"
                                      : "; 0 unmeasured plans at share 0"),
            std::string::npos)
      << sum->curve;
  auto model = Policy::load(to.outDir);
  EXPECT_TRUE(bool(model));
  if (!model)
    return r;
  unsigned hp = 0, ha = 0, mp = 0, ma = 0, pp = 0, pa = 0;
  for (const KernelData &k : ds.kernels) {
    if (k.split != Split::Test)
      continue;
    std::vector<Plan> plans;
    for (const std::string &step : unmeasuredOrderPlans())
      plans.push_back(Plan{stepsOf(k.state.name, step)});
    size_t nu = plans.size();
    plans.push_back(Plan{k.plans[0].steps}); // launch-config, measured faster
    plans.push_back(Plan{k.plans[1].steps}); // launch-bounds, measured slower
    auto s = (*model)->score(k.state, plans);
    EXPECT_TRUE(bool(s)) << llvm::toString(s.takeError());
    if (!s)
      return r;
    for (size_t a = 0; a < nu; ++a) {
      for (size_t b = a + 1; b < nu; ++b) { // listed in the heuristic's order
        ++hp;
        ha += (*s)[a].logSpeedup > (*s)[b].logSpeedup;
      }
      ++mp;
      ma += (*s)[nu].logSpeedup > (*s)[a].logSpeedup;
    }
    ++pp;
    pa += (*s)[nu].logSpeedup > (*s)[nu + 1].logSpeedup;
  }
  r.heuristic = hp ? double(ha) / hp : 0;
  r.measuredFirst = mp ? double(ma) / mp : 0;
  r.measuredPair = pp ? double(pa) / pp : 0;
  return r;
}

} // namespace

TEST(Train, UnmeasuredPlansAreOrderedByTheHeuristicWhereNothingIsMeasured) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  // The held-out kernels' unmeasured plans follow the heuristic's order
  // when the training kernels' unmeasured plans were targets of the prior,
  // and not without them (then nothing taught their order).
  UnmeasuredAgreement with = trainedOnUnmeasured(d.path, 1);
  UnmeasuredAgreement without = trainedOnUnmeasured(d.path, 0);
  // 0.93 at seed 4 (56 of 60 pairs; one pair per held-out kernel missed,
  // at 40 epochs and at 80), against 0 without.
  EXPECT_GE(with.heuristic, 0.9) << without.heuristic;
  EXPECT_LT(without.heuristic, 0.8) << with.heuristic;
}

TEST(Train, MeasurementsWinOverTheUnmeasuredPlansPrior) {
  if (!policyBackendAvailable())
    GTEST_SKIP() << "built without libtorch";
  TempDir d;
  // launch-config, which the heuristic ranks below every unmeasured plan,
  // was measured faster: it stays above them all, and above the slower
  // measured launch-bounds, with the prior at full weight.
  UnmeasuredAgreement with = trainedOnUnmeasured(d.path, 1);
  EXPECT_GE(with.measuredFirst, 0.95);
  EXPECT_DOUBLE_EQ(with.measuredPair, 1.0);
}

TEST(Train, UnmeasuredPlansNeedASource) {
  // attachUnmeasured on programs whose source is not at hand adds nothing,
  // says so, and never touches the test split.
  Dataset ds = unmeasuredDataset(8);
  for (KernelData &k : ds.kernels)
    k.unmeasured.clear();
  UnmeasuredOptions uo;
  uo.sourceRoot = "/nonexistent-cudal1-root";
  auto s = attachUnmeasured(ds, uo);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->kernelsWithoutSource, 6u); // 8 kernels, 2 in the test split
  EXPECT_EQ(s->plans, 0u);
  for (const KernelData &k : ds.kernels)
    EXPECT_TRUE(k.unmeasured.empty());
}

TEST(Train, UnmeasuredPlansAreTheLegalSpaceLessTheMeasured) {
  TempDir d;
  std::string source = "__global__ void scale(float *out, const float *in, float a, int n) {\n"
                       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                       "  if (i < n)\n"
                       "    out[i] = a * in[i];\n"
                       "}\n"
                       "void run(float *out, const float *in, int n) {\n"
                       "  scale<<<(n + 255) / 256, 256>>>(out, in, 2.0f, n);\n"
                       "}\n";
  {
    std::ofstream f(d.path + "/scale.cu");
    f << source;
  }
  // The tuner's view of the file: the kernel's key and its candidates.
  RewriteInput in{d.path + "/scale.cu", source,
                  analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90"}, nullptr)};
  auto space = collectTuneSpace(in);
  ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
  const TuneKernel *tk = nullptr;
  for (const TuneKernel &k : space->kernels)
    if (k.name == "scale")
      tk = &k;
  ASSERT_NE(tk, nullptr);
  KernelState st;
  st.steps = tk->steps;
  st.composed = tk->composed;
  std::set<std::string> legal;
  for (std::vector<PlanStep> steps : policyCandidates(st, UINT_MAX, false)) {
    for (PlanStep &s : steps)
      s.column = 0;
    legal.insert(planText(steps));
  }
  ASSERT_GE(legal.size(), 3u);
  auto make = [&] {
    Dataset ds;
    KernelData k;
    k.state.name = "scale";
    k.state.key = tk->key;
    k.program = "scale.cu";
    MeasuredPlan m;
    auto p = parsePlan(*legal.begin());
    EXPECT_TRUE(bool(p));
    m.steps = p->steps;
    m.text = planText(m.steps);
    m.outcome = Outcome::Ok;
    k.plans.push_back(m);
    ds.kernels.push_back(k);
    KernelData t = k; // the same kernel in the test split: never given any
    t.split = Split::Test;
    t.state.key = tk->key;
    ds.kernels.push_back(t);
    return ds;
  };
  auto run = [&](unsigned cap, uint64_t seed) {
    Dataset ds = make();
    UnmeasuredOptions uo;
    uo.sourceRoot = d.path;
    uo.perKernel = cap;
    uo.seed = seed;
    auto s = attachUnmeasured(ds, uo);
    EXPECT_TRUE(bool(s)) << llvm::toString(s.takeError());
    if (s)
      EXPECT_EQ(s->kernelsChanged + s->kernelsWithoutSource, 0u);
    EXPECT_TRUE(ds.kernels[1].unmeasured.empty());
    std::vector<std::string> texts;
    for (const UnmeasuredPlan &u : ds.kernels[0].unmeasured)
      texts.push_back(u.text);
    if (s && cap > 0) {
      EXPECT_EQ(s->legal, unsigned(legal.size() - 1));
      EXPECT_EQ(s->plans, unsigned(texts.size()));
    }
    return texts;
  };
  std::vector<std::string> all = run(UINT_MAX, 1);
  EXPECT_EQ(all.size(), legal.size() - 1); // every legal plan but the measured one
  for (const std::string &t : all) {
    EXPECT_TRUE(legal.count(t)) << t;
    EXPECT_NE(t, *legal.begin());
  }
  std::vector<std::string> two = run(2, 1);
  EXPECT_EQ(two.size(), 2u);
  EXPECT_EQ(two, run(2, 1)); // deterministic for a seed
  EXPECT_TRUE(run(0, 1).empty());
}
