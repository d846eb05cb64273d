// The judge per plan (issue 15 item 3): which plans replay, the launch
// configuration a replayed launch-level plan gets, the kernel bundle written
// for a known input, and the judging evaluator's dispatch with scripted
// evaluators.
#include "cudal1/Tune/ReplayEvaluator.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Rewrite/PlanDriver.h"
#include "cudal1/Rewrite/Reference.h"
#include "cudal1/Tune/Space.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

using namespace cudal1;

namespace {

Plan plan(const std::string &text) {
  llvm::Expected<Plan> p = parsePlan(text);
  EXPECT_TRUE(bool(p)) << (p ? "" : llvm::toString(p.takeError()));
  return p ? *p : Plan{};
}

TEST(ReplayEvaluator, KernelAndLaunchConfigPlansReplay) {
  EXPECT_EQ(whyNotReplayable(plan("@k: warp-reduce"), 1), "");
  EXPECT_EQ(whyNotReplayable(plan("@k: restrict; @k: unroll(loop=0, factor=4)"), 1), "");
  EXPECT_EQ(whyNotReplayable(plan("@k: launch-config(block=128)"), 1), "");
  EXPECT_EQ(whyNotReplayable(plan("@k: coarsen(factor=2)"), 1), "");
  // One launch of several cannot be told apart in the captures.
  EXPECT_NE(whyNotReplayable(plan("@#3: launch-config(block=128)"), 2), "");
  EXPECT_EQ(whyNotReplayable(plan("@#3: launch-config(block=128)"), 1), "");
  // Host plans stay at program level.
  EXPECT_NE(whyNotReplayable(plan("@k: fuse"), 1), "");
  EXPECT_NE(whyNotReplayable(plan("@k: streams"), 1), "");
  EXPECT_NE(whyNotReplayable(plan("@loop#0: graph"), 1), "");
  EXPECT_NE(whyNotReplayable(plan("@loop#0: persistent(form=grid)"), 1), "");
  EXPECT_NE(whyNotReplayable(plan("@k: restrict; @loop#0: persistent"), 1), "");
  EXPECT_NE(whyNotReplayable(plan("@sync#0: drop-sync"), 1), "");
  EXPECT_NE(whyNotReplayable(plan("@k: warp-reduce; @sync#0: drop-sync"), 1), "");
  EXPECT_NE(whyNotReplayable(Plan{}, 1), "");
}

TEST(ReplayEvaluator, LaunchOverrideFollowsThePass) {
  CapturedLaunch c;
  c.grid[0] = 4096;
  c.block[0] = 256;
  LaunchOverride none = replayLaunch(plan("@k: warp-reduce"), c);
  EXPECT_FALSE(none.hasGrid);
  EXPECT_FALSE(none.hasBlock);
  // The same threads in blocks of 96, rounded up: (4096*256 + 95) / 96.
  LaunchOverride lc = replayLaunch(plan("@k: launch-config(block=96)"), c);
  ASSERT_TRUE(lc.hasGrid && lc.hasBlock);
  EXPECT_EQ(lc.block[0], 96u);
  EXPECT_EQ(lc.grid[0], (4096u * 256u + 95u) / 96u);
  EXPECT_EQ(lc.grid[1], 1u);
  LaunchOverride co = replayLaunch(plan("@k: coarsen(factor=3)"), c);
  ASSERT_TRUE(co.hasGrid && co.hasBlock);
  EXPECT_EQ(co.grid[0], (4096u + 2) / 3);
  EXPECT_EQ(co.block[0], 256u);
  // warp-rows: LANES threads per original thread, in blocks of 256, 1-D.
  CapturedLaunch c2 = c;
  c2.grid[1] = 3;
  c2.block[1] = 2;
  LaunchOverride wr = replayLaunch(plan("@k: warp-rows(lanes=8)"), c2);
  ASSERT_TRUE(wr.hasGrid && wr.hasBlock);
  EXPECT_EQ(wr.grid[0], 4096u * 256u * 8u / 256u);
  EXPECT_EQ(wr.grid[1], 3u);
  EXPECT_EQ(wr.block[0], 256u);
  EXPECT_EQ(wr.block[1], 1u);
  LaunchOverride both =
      replayLaunch(plan("@k: launch-config(block=32x8); @k: coarsen(factor=2)"), c);
  EXPECT_EQ(both.block[0], 32u);
  EXPECT_EQ(both.block[1], 8u);
  EXPECT_EQ(both.grid[0], (4096u * 256u / 32u + 1) / 2);
}

TEST(ReplayEvaluator, EachPassGivesItsLaunchRemap) {
  // The step each launch-changing pass returns (what it writes into the
  // launch; LaunchRemapTest checks the steps against the passes' old
  // arithmetic), in the plan's order.
  EXPECT_EQ(launchRemapOf(plan("@k: launch-config(block=96)")).str(), "reshape(96)");
  EXPECT_EQ(launchRemapOf(plan("@k: launch-config(block=32x8)")).str(), "reshape(32x8)");
  EXPECT_EQ(launchRemapOf(plan("@k: launch-config(block=8x8x4)")).str(), "reshape(8x8x4)");
  EXPECT_EQ(launchRemapOf(plan("@k: coarsen(factor=4)")).str(), "divide-x(4)");
  EXPECT_EQ(launchRemapOf(plan("@k: warp-rows(lanes=8)")).str(), "lanes(8,256)");
  EXPECT_EQ(launchRemapOf(plan("@k: warp-rows")).str(), "lanes(32,256)");
  EXPECT_EQ(launchRemapOf(plan("@k: stage-shared(tile=16, rows=2)")).str(), "tiles(16,8)");
  EXPECT_EQ(launchRemapOf(plan("@k: stage-shared")).str(), "tiles(32,8)");
  // The 1-D form keeps the launch.
  EXPECT_TRUE(launchRemapOf(plan("@k: stage-shared(flat=1, tile=16)")).empty());
  // tile-shared's register blocking: blocks of T x T/rb, the grid kept.
  EXPECT_EQ(launchRemapOf(plan("@k: tile-shared(tile=16, rb=2)")).str(), "block(16x8)");
  EXPECT_EQ(launchRemapOf(plan("@k: tile-shared(tile=32, rb=4)")).str(), "block(32x8)");
  EXPECT_TRUE(launchRemapOf(plan("@k: tile-shared(tile=16, rb=1)")).empty());
  // vectorize: grid.x / (width / element size), the size from the arguments.
  auto forArgs = [&](const char *p, const char *args) {
    Expected<LaunchRemap> r = launchRemapFor(plan(p), args);
    return r.ok() ? r->str() : "error: " + r.error().message();
  };
  EXPECT_EQ(forArgs("@k: vectorize(width=16)", "f32* f32*w i32"), "divide-x(4)");
  EXPECT_EQ(forArgs("@k: vectorize(width=8)", "f32* f32*w i32"), "divide-x(2)");
  EXPECT_EQ(forArgs("@k: vectorize(width=16)", "f64* f64*w i32"), "divide-x(2)");
  EXPECT_EQ(forArgs("@k: restrict; @k: vectorize(width=16)", "i32* i32*w"), "divide-x(4)");
  EXPECT_NE(forArgs("@k: vectorize(width=16)", "f32* f64*w i32").find("error: vectorize's lanes"),
            std::string::npos);
  EXPECT_EQ(forArgs("@k: launch-config(block=96)", "f32* f64*w"), "reshape(96)");
  EXPECT_EQ(
      launchRemapOf(plan("@k: restrict; @k: launch-config(block=32x8); @k: coarsen(factor=2)"))
          .str(),
      "reshape(32x8);divide-x(2)");
  EXPECT_TRUE(launchRemapOf(plan("@k: warp-reduce; @k: unroll(loop=0, factor=4)")).empty());
  // Every one of them can go into a kernel part's manifest.
  for (const char *p : {"@k: launch-config(block=32x8)", "@k: coarsen(factor=8)",
                        "@k: warp-rows(lanes=16)", "@k: stage-shared(tile=32, rows=1)"})
    EXPECT_EQ(whyRemapNotWritten(launchRemapOf(plan(p))), "") << p;
  // A block the pass's checkParams refuses does not read back.
  EXPECT_NE(whyRemapNotWritten(launchRemapOf(plan("@k: launch-config(block=64x64)"))), "");
}

std::string slurp(const std::string &p);

/// The launch configurations (the text between <<< and >>>) of every
/// launch of `kernel` in `source`, in order.
std::vector<std::string> launchConfigs(const std::string &source, const std::string &kernel) {
  std::vector<std::string> out;
  std::regex head("\\b" + kernel + "\\s*(<[^<>;]*>)?\\s*<<<");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), head);
       it != std::sregex_iterator(); ++it) {
    size_t from = size_t(it->position(0) + it->length(0));
    size_t to = source.find(">>>", from);
    out.push_back(source.substr(from, to == std::string::npos ? 0 : to - from));
  }
  return out;
}

// A plan judged by replay re-launches the captured launches with the
// remap its steps give (Transform::remapLaunch); a pass that rewrites a
// launch without giving one is replayed with the original's shape, which
// is wrong (tile-shared's rb > 1 was judged a crash by replay on the H100
// while its whole programs ran correctly). Every legal single step of these
// programs that replay would judge and that changes a launch of its kernel
// must give a remap.
TEST(ReplayEvaluator, EveryReplayedStepThatChangesALaunchHasARemap) {
  for (const char *rel : {"bench/corpus/l3_mlp_forward.cu", "bench/corpus/l1_matmul_square.cu",
                          "bench/corpus/l1_row_sum.cu", "examples/saxpy-pipeline/pipeline.cu"}) {
    std::string file = std::string(CUDAL1_SOURCE_DIR) + "/" + rel;
    RewriteInput in{file, slurp(file),
                    analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90", "-I",
                                  std::string(CUDAL1_SOURCE_DIR) + "/bench/corpus"},
                                 nullptr)};
    llvm::Expected<TuneSpace> space = collectTuneSpace(in);
    ASSERT_TRUE(bool(space)) << rel << ": " << llvm::toString(space.takeError());
    // The kernels' argument types, as replay takes them from the reference.
    std::vector<std::string> keys;
    for (const TuneKernel &k : space->kernels)
      if (!k.host)
        keys.push_back(k.key);
    std::vector<llvm::Expected<ReferenceKernel>> refs = deriveReferences(in, keys);
    std::map<std::string, std::string> argsOf;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (refs[i])
        argsOf[keys[i]] = refs[i]->bundleArgs();
      else
        llvm::consumeError(refs[i].takeError());
    }
    std::vector<Plan> plans;
    std::vector<std::string> kernels, args;
    for (const TuneKernel &k : space->kernels)
      for (const PlanStep &st : k.steps) {
        Plan p = planOf({st});
        if (k.host || !whyNotReplayable(p, k.launches.size()).empty() || !argsOf.count(k.key))
          continue;
        plans.push_back(p);
        kernels.push_back(k.name);
        args.push_back(argsOf[k.key]);
      }
    ASSERT_FALSE(plans.empty()) << rel;
    size_t changed = 0;
    llvm::Error e = applyPlans(in, plans, [&](size_t i, llvm::Expected<std::string> src) {
      if (!src) {
        llvm::consumeError(src.takeError());
        return;
      }
      if (launchConfigs(*src, kernels[i]) == launchConfigs(in.code, kernels[i]))
        return;
      ++changed;
      Expected<LaunchRemap> remap = launchRemapFor(plans[i], args[i]);
      EXPECT_TRUE(remap.ok() && !remap->empty())
          << rel << ": " << printPlan(plans[i]) << " rewrites a launch of " << kernels[i]
          << " but gives no launch remap for arguments " << args[i]
          << (remap.ok() ? "" : ": " + remap.error().message());
    });
    ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
    EXPECT_GT(changed, 0u) << rel; // tile-shared's rb > 1, vectorize
  }
}

std::string slurp(const std::string &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ReplayEvaluator, KernelBundleForAKnownInput) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("replay-bundle", dir));
  std::string cap = std::string(dir) + "/in.capture";
  {
    CaptureFile cf;
    CapturedLaunch l;
    l.kernelKey = "kkey";
    cf.launches.push_back(l);
    ASSERT_TRUE(writeCaptureFile(cap, cf).ok());
  }
  KernelBundleFiles f;
  f.bundle.kernelKey = "kkey";
  f.bundle.entry = "_Z5sumsqPKfPfi";
  f.bundle.compiler = "nvcc";
  for (const char *a : {"f32*", "f32*", "i32"})
    f.bundle.args.push_back(*parseArgType(a));
  f.bundle.hasReference = true;
  f.bundle.reference.entry = "sumsq_ref";
  f.originalSource = "original";
  f.referenceSource = "reference";
  VariantSpec v;
  v.id = "v001";
  v.entry = "_Z5sumsqPKfPfi";
  v.remap = launchRemapOf(plan("@sumsq: launch-config(block=128)")).steps;
  f.bundle.variants.push_back(v);
  f.variantSources.push_back("variant");
  f.captures.push_back(cap);
  std::string out = std::string(dir) + "/b";
  ASSERT_TRUE(writeKernelBundle(out, f).ok());
  EXPECT_EQ(slurp(out + "/original.cu"), "original");
  EXPECT_EQ(slurp(out + "/reference.cu"), "reference");
  EXPECT_EQ(slurp(out + "/v001.cu"), "variant");
  // The evaluator reads it back as written.
  Expected<Bundle> b = readBundle(out);
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(b->kernelKey, "kkey");
  EXPECT_EQ(b->entry, "_Z5sumsqPKfPfi");
  EXPECT_EQ(b->compiler, "nvcc");
  ASSERT_TRUE(b->hasReference);
  EXPECT_EQ(b->reference.entry, "sumsq_ref");
  ASSERT_EQ(b->captures.size(), 1u);
  ASSERT_EQ(b->variants.size(), 1u);
  EXPECT_EQ(LaunchRemap{b->variants[0].remap}.str(), "reshape(128)");
  EXPECT_NE(slurp(out + "/manifest.txt").find("args f32* f32* i32"), std::string::npos);
  // Without a reference: the fallback's reduction length.
  f.bundle.hasReference = false;
  f.reductionLength = 1 << 20;
  std::string out2 = std::string(dir) + "/c";
  ASSERT_TRUE(writeKernelBundle(out2, f).ok());
  Expected<Bundle> c = readBundle(out2);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_FALSE(c->hasReference);
  EXPECT_EQ(c->tolerance.reductionLength, 1 << 20);
  llvm::sys::fs::remove_directories(dir);
}

/// Says which plans it saw and answers with a fixed judge.
class Scripted : public VariantEvaluator {
public:
  explicit Scripted(Judge j, bool failing = false) : judge(j), failing(failing) {}
  std::vector<std::string> seen;
  llvm::Expected<std::vector<Measurement>> evaluate(const std::vector<Candidate> &cs) override {
    if (failing)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "no capture");
    std::vector<Measurement> out;
    for (const Candidate &c : cs) {
      seen.push_back(c.id);
      Measurement r;
      r.outcome = Outcome::Ok;
      r.judge = judge;
      r.speedup = judge == Judge::Program ? 1.1 : 30;
      out.push_back(r);
    }
    return out;
  }
  std::string gpuName() const override { return "NVIDIA H200"; }
  void prepare(const std::vector<Candidate> &cs) override {
    std::lock_guard<std::mutex> lock(preparing); // two prepares may run at once
    for (const Candidate &c : cs)
      prepared.push_back(c.id);
    preparedNow = true;
  }
  Judge judge;
  bool failing;
  std::mutex preparing;
  std::vector<std::string> prepared;
  std::atomic<bool> preparedNow{false};
};

/// A replay that waits (up to 10 s) for another evaluator's prepare().
class WaitsForPrepare : public Scripted {
public:
  explicit WaitsForPrepare(const Scripted &other)
      : Scripted(Judge::ReplayReference), other(other) {}
  llvm::Expected<std::vector<Measurement>> evaluate(const std::vector<Candidate> &cs) override {
    for (int i = 0; i < 1000 && !other.preparedNow; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    sawPrepare = other.preparedNow;
    return Scripted::evaluate(cs);
  }
  const Scripted &other;
  bool sawPrepare = false;
};

Candidate cand(const std::string &id, size_t kernel, const std::string &text) {
  Candidate c;
  c.id = id;
  c.kernel = kernel;
  c.variant.plan = plan(text);
  return c;
}

TEST(JudgingEvaluator, ChoosesTheJudgePerPlan) {
  Scripted replay(Judge::ReplayReference), program(Judge::Program);
  std::vector<std::string> notes;
  JudgingEvaluator j(
      replay,
      [](const Candidate &c) {
        return c.kernel == kCombination ? std::string("a combination")
                                        : whyNotReplayable(c.variant.plan, 1);
      },
      program, [&](const std::string &m) { notes.push_back(m); });
  std::vector<Candidate> cs = {
      cand("v1", 0, "@sum_squares: warp-reduce"), cand("v2", 1, "@scale: fuse"),
      cand("v3", 0, "@sum_squares: launch-config(block=128)"), cand("v4", 2, "@sync#0: drop-sync"),
      cand("combined", kCombination, "@sum_squares: warp-reduce")};
  llvm::Expected<std::vector<Measurement>> r = j.evaluate(cs);
  ASSERT_TRUE(bool(r));
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0].judge, Judge::ReplayReference);
  EXPECT_EQ((*r)[1].judge, Judge::Program);
  EXPECT_EQ((*r)[2].judge, Judge::ReplayReference);
  EXPECT_EQ((*r)[3].judge, Judge::Program);
  EXPECT_EQ((*r)[4].judge, Judge::Program);
  EXPECT_EQ(replay.seen, (std::vector<std::string>{"v1", "v3"}));
  EXPECT_EQ(program.seen, (std::vector<std::string>{"v2", "v4", "combined"}));
  EXPECT_TRUE(notes.empty());
}

// The whole programs of a round build while the replay has the GPU
// (issue 15 item 5): prepare() runs during the replay's evaluate().
TEST(JudgingEvaluator, WholeProgramsBuildDuringTheReplay) {
  Scripted program(Judge::Program);
  WaitsForPrepare replay(program);
  JudgingEvaluator j(
      replay, [](const Candidate &c) { return whyNotReplayable(c.variant.plan, 1); }, program,
      nullptr);
  llvm::Expected<std::vector<Measurement>> r =
      j.evaluate({cand("v1", 0, "@k: warp-reduce"), cand("v2", 0, "@k: fuse")});
  ASSERT_TRUE(bool(r));
  EXPECT_TRUE(replay.sawPrepare);
  EXPECT_EQ(program.prepared, (std::vector<std::string>{"v2"}));
  EXPECT_EQ(program.seen, (std::vector<std::string>{"v2"}));
  // Nothing to replay: nothing to overlap, evaluate() builds.
  Scripted alone(Judge::Program);
  JudgingEvaluator k(
      replay, [](const Candidate &c) { return whyNotReplayable(c.variant.plan, 1); }, alone,
      nullptr);
  ASSERT_TRUE(bool(k.evaluate({cand("v3", 0, "@k: fuse")})));
  EXPECT_TRUE(alone.prepared.empty());
}

// In the first round `replayable` waits for the capture: the plans that
// are whole programs whatever it holds (programOnly) build during that
// wait, those the capture refuses after it, beside the replay.
TEST(JudgingEvaluator, HostPlansBuildWhileTheCaptureIsAwaited) {
  Scripted program(Judge::Program), replay(Judge::ReplayReference);
  bool sawPrepare = false;
  JudgingEvaluator j(
      replay,
      [&](const Candidate &c) {
        for (int i = 0; i < 1000 && !program.preparedNow; ++i) // the capture's wait
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        sawPrepare = sawPrepare || program.preparedNow;
        if (c.id == "v3")
          return std::string("no launch of this kernel was captured");
        return whyNotReplayable(c.variant.plan, 1);
      },
      program, nullptr, [](const Candidate &c) { return whyNotReplayable(c.variant.plan, 1); });
  llvm::Expected<std::vector<Measurement>> r = j.evaluate(
      {cand("v1", 0, "@k: warp-reduce"), cand("v2", 0, "@k: fuse"), cand("v3", 0, "@k: restrict")});
  ASSERT_TRUE(bool(r));
  EXPECT_TRUE(sawPrepare);
  std::vector<std::string> prepared = program.prepared;
  std::sort(prepared.begin(), prepared.end());
  EXPECT_EQ(prepared, (std::vector<std::string>{"v2", "v3"}));
  EXPECT_EQ(replay.seen, (std::vector<std::string>{"v1"}));
  EXPECT_EQ(program.seen, (std::vector<std::string>{"v2", "v3"}));
  EXPECT_EQ((*r)[2].judge, Judge::Program);
  EXPECT_GE(j.buildWaitSeconds(), 0.0);
  // A round of host plans only has no replay to overlap: evaluate() builds.
  Scripted alone(Judge::Program);
  JudgingEvaluator k(
      replay, [](const Candidate &c) { return whyNotReplayable(c.variant.plan, 1); }, alone,
      nullptr, [](const Candidate &c) { return whyNotReplayable(c.variant.plan, 1); });
  ASSERT_TRUE(bool(k.evaluate({cand("v4", 0, "@k: fuse"), cand("v5", 0, "@sync#0: drop-sync")})));
  EXPECT_TRUE(alone.prepared.empty());
  EXPECT_EQ(alone.seen, (std::vector<std::string>{"v4", "v5"}));
}

TEST(JudgingEvaluator, ReplayFailureFallsBackToProgram) {
  Scripted replay(Judge::ReplayReference, /*failing=*/true), program(Judge::Program);
  std::vector<std::string> notes;
  JudgingEvaluator j(
      replay, [](const Candidate &c) { return whyNotReplayable(c.variant.plan, 1); }, program,
      [&](const std::string &m) { notes.push_back(m); });
  llvm::Expected<std::vector<Measurement>> r =
      j.evaluate({cand("v1", 0, "@k: warp-reduce"), cand("v2", 0, "@k: fuse")});
  ASSERT_TRUE(bool(r));
  EXPECT_EQ((*r)[0].judge, Judge::Program);
  EXPECT_EQ((*r)[1].judge, Judge::Program);
  EXPECT_EQ(program.seen, (std::vector<std::string>{"v2", "v1"}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("no capture"), std::string::npos);
}

TEST(JudgeMode, Parses) {
  JudgeMode m;
  EXPECT_TRUE(parseJudgeMode("auto", m));
  EXPECT_EQ(m, JudgeMode::Auto);
  EXPECT_TRUE(parseJudgeMode("replay", m));
  EXPECT_EQ(m, JudgeMode::Replay);
  EXPECT_TRUE(parseJudgeMode("program", m));
  EXPECT_EQ(m, JudgeMode::Program);
  EXPECT_FALSE(parseJudgeMode("kernel", m));
}

} // namespace

// A kernel's best plan measured once more as a whole program, for the final
// choice (Tuner::programLevelBests), goes to the program judge whatever its
// plan (a kernel plan would otherwise be replayed).
TEST(ReplayEvaluator, AWholeProgramMeasurementIsNeverReplayed) {
  std::string file = std::string(CUDAL1_SOURCE_DIR) + "/test/cudal1-opt/Inputs/tune-me.cu";
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  RewriteInput input{file, ss.str(), {"-x", "cuda", "--cuda-gpu-arch=sm_90", "-nocudainc"}};
  TuneSpace space;
  TuneKernel k;
  k.key = "sum";
  k.name = "sum";
  space.kernels.push_back(k);
  ReplayOptions o;
  o.evalExecutable = "/nonexistent/cudal1-eval";
  ReplayEvaluator r(input, space, ProgramSetup{}, o);
  Candidate c = cand("whole-v001", 0, "@sum: warp-reduce");
  c.wholeProgram = true;
  EXPECT_NE(r.accepts(c).find("as a whole program"), std::string::npos) << r.accepts(c);
}

// The capture's instrumented program builds with the capture runtime
// compiled apart (a process per source, while the program is instrumented)
// and linked as objects. Without a GPU its run fails, which says that the
// build succeeded; with one, the kernel is captured.
TEST(ReplayEvaluator, TheInstrumentedProgramBuildsWithTheRuntimeCompiledApart) {
  std::string nvcc;
  for (const char *dir : {"", "/usr/local/cuda/bin"})
    if (llvm::ErrorOr<std::string> p = *dir ? llvm::sys::findProgramByName("nvcc", {dir})
                                            : llvm::sys::findProgramByName("nvcc"))
      if (nvcc.empty())
        nvcc = *p;
  if (nvcc.empty())
    GTEST_SKIP() << "no nvcc";
  std::string corpus = std::string(CUDAL1_SOURCE_DIR) + "/bench/corpus";
  std::string file = corpus + "/l1_row_sum.cu";
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  RewriteInput input{file, ss.str(),
                     analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90", "-I", corpus}, nullptr)};
  llvm::Expected<TuneSpace> space = collectTuneSpace(input);
  ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
  ProgramSetup setup;
  setup.build = {nvcc, "-O0", "-arch=sm_90", "-I", corpus, "{src}", "-o", "{exe}"};
  setup.run = {"{exe}"};
  std::vector<std::string> notes;
  ReplayOptions o;
  o.evalExecutable = "/nonexistent/cudal1-eval";
  o.note = [&](const std::string &m) { notes.push_back(m); };
  o.keepWork = true;
  std::string work;
  {
    ReplayEvaluator r(input, *space, setup, o);
    r.startCapture();
    r.captured();
    work = llvm::sys::path::parent_path(r.keptWorkersDir()).str();
    std::string all;
    for (const std::string &n : notes)
      all += n + "\n";
    EXPECT_EQ(all.find("does not build"), std::string::npos) << all;
    EXPECT_GT(r.times().captureBuild, 0) << all;
  }
  // The runtime's objects, which the program's build linked.
  EXPECT_TRUE(llvm::sys::fs::exists(work + "/CaptureRuntime.o")) << work;
  EXPECT_TRUE(llvm::sys::fs::exists(work + "/CaptureFile.o")) << work;
  llvm::sys::fs::remove_directories(work);
}
