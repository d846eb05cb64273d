// cudal1-train's library on a synthetic task whose right plan is known: a
// reduction with atomics wants warp-reduce, a strided kernel coalesce,
// anything else wider loads. Trained on some kernels (programs), the
// policy must rank the right plan first on kernels it has never seen.
#include "cudal1/Policy/Train.h"
#include "cudal1/Tune/PolicyStrategy.h"

#include "Torch/Network.h" // lib/Policy: the network behind Policy (tests only)

#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
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
  EXPECT_NE(sum->curve.find("(lowest validation loss)"), std::string::npos);

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
}

} // namespace
