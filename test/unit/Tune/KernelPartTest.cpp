// The split path's kernel part (issue 15 item 6): its manifest and status
// formats, what --emit-bundle writes for kernel-level plans, and what
// --import-results makes of a replay's results (the GPU machine's half,
// cudal1-eval, is stood in for by results written the way it writes them:
// the evaluation itself needs a GPU, test/gpu/split-kernel-bundle.sh).
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/KernelPlans.h"
#include "cudal1/Eval/ProgramBundle.h"
#include "cudal1/Eval/Results.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Tune/ProgramEvaluator.h"
#include "cudal1/Tune/ReplayEvaluator.h"
#include "cudal1/Tune/Session.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

using namespace cudal1;

namespace {

TEST(KernelPlans, ManifestRoundTrips) {
  KernelPlans p;
  p.arch = "sm_80";
  p.flags = {"-DN=4", "-I/a b"};
  p.kernels.push_back({"k.cu:3:sum", "sum", "_Z3sumPKfPfi", "f32* f32* i32", "ref0.cu", "ref_sum"});
  p.variants.push_back({"v000", "k.cu:3:sum", "_Z3sumPKfPfi", false});
  p.variants.push_back({"v001", "k.cu:3:sum", "_Z3sumPKfS_i", true});
  // A plan that changes the launch carries its remap (version 2).
  p.variants.push_back(
      {"v002", "k.cu:3:sum", "_Z3sumPKfPfi", true,
       LaunchRemap{{LaunchRemapStep::reshape(32, 8), LaunchRemapStep::divideX(2)}}});
  std::string text = formatKernelPlans(p);
  EXPECT_NE(text.find("cudal1-kernel-plans 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("variant v002 kernel=k.cu:3:sum entry=_Z3sumPKfPfi "
                      "launch=reshape(32x8);divide-x(2) fast-math\n"),
            std::string::npos)
      << text;
  Expected<KernelPlans> back = parseKernelPlans(text, "/d", "m");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->dir, "/d");
  EXPECT_EQ(back->arch, "sm_80");
  EXPECT_EQ(back->flags, p.flags);
  ASSERT_EQ(back->kernels.size(), 1u);
  EXPECT_EQ(back->kernels[0].key, "k.cu:3:sum");
  EXPECT_EQ(back->kernels[0].entry, "_Z3sumPKfPfi");
  EXPECT_EQ(back->kernels[0].args, "f32* f32* i32");
  EXPECT_EQ(back->kernels[0].reference, "ref0.cu");
  EXPECT_EQ(back->kernels[0].referenceEntry, "ref_sum");
  ASSERT_EQ(back->variants.size(), 3u);
  EXPECT_EQ(back->variants[1].id, "v001");
  EXPECT_EQ(back->variants[1].entry, "_Z3sumPKfS_i");
  EXPECT_TRUE(back->variants[1].fastMath);
  EXPECT_FALSE(back->variants[0].fastMath);
  EXPECT_TRUE(back->variants[0].launch.empty());
  EXPECT_TRUE(back->variants[1].launch.empty());
  EXPECT_EQ(back->variants[2].launch, p.variants[2].launch);
  EXPECT_TRUE(back->variants[2].fastMath);
  EXPECT_EQ(formatKernelPlans(*back), text);
  KernelPlans spaced = *back;
  spaced.arch = "sm 90";
  Expected<KernelPlans> arch = parseKernelPlans(formatKernelPlans(spaced), "/d", "m");
  ASSERT_TRUE(arch.ok()) << arch.error().message();
  EXPECT_EQ(arch->arch, "sm 90");
  // A version 1 manifest (no launch=) reads the same.
  std::string v1 = text.substr(0, text.find("variant v002"));
  v1.replace(0, std::string("cudal1-kernel-plans 2").size(), "cudal1-kernel-plans 1");
  Expected<KernelPlans> old = parseKernelPlans(v1, "/d", "m");
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_EQ(old->variants.size(), 2u);
}

TEST(KernelPlans, BadManifestsAreRefusedWithTheLine) {
  auto error = [](const std::string &text) {
    Expected<KernelPlans> p = parseKernelPlans(text, "/d", "m");
    return p.ok() ? std::string("(parsed)") : p.error().message();
  };
  EXPECT_NE(error("cudal1-kernel-plans 3\n")
                .find("m:1: cudal1-kernel-plans version 3 is not supported (this build reads "
                      "versions 1 to 2)"),
            std::string::npos)
      << error("cudal1-kernel-plans 3\n");
  EXPECT_NE(error("cudal1-program-bundle 1\n").find("m:1: not a cudal1-kernel-plans file"),
            std::string::npos);
  const std::string head = "cudal1-kernel-plans 1\n";
  EXPECT_NE(error(head + "kernel k name=k entry=e reference=../x.cu reference-entry=r args=\n")
                .find("m:2: '../x.cu' is not a path inside the bundle"),
            std::string::npos);
  EXPECT_NE(error(head + "variant v000 kernel=k entry=e\n")
                .find("m:2: variant v000: kernel k is not listed before it"),
            std::string::npos);
  EXPECT_NE(error(head + "kernel k name=k entry=e reference=r.cu args=\n")
                .find("m:2: kernel k has no reference-entry="),
            std::string::npos);
  EXPECT_NE(error(head + "kernel k name=k entry=e reference=r.cu reference-entry=r args= x=1\n")
                .find("m:2: unknown key 'x='"),
            std::string::npos);
  EXPECT_NE(error(head + "kernel k name=k entry=e reference=r.cu reference-entry=r args=\n" +
                  "variant ../v kernel=k entry=e\n")
                .find("m:3: '../v' is not a variant id"),
            std::string::npos);
  const std::string kernel = "kernel k name=k entry=e reference=r.cu reference-entry=r args=\n";
  EXPECT_NE(error(head + kernel + "variant v1 kernel=k entry=e launch=reshape(4096)\n")
                .find("m:3: variant v1: launch remap step 'reshape(4096)': '4096' is not a "
                      "number from 1 to 1024"),
            std::string::npos)
      << error(head + kernel + "variant v1 kernel=k entry=e launch=reshape(4096)\n");
  EXPECT_NE(error(head + kernel + "variant v1 kernel=k entry=e launch=spin(2)\n")
                .find("m:3: variant v1: launch remap step 'spin(2)': unknown step 'spin'"),
            std::string::npos);
  EXPECT_NE(error(head + kernel + "variant v1 kernel=k entry=e launch=\n")
                .find("m:3: variant v1: launch= is empty"),
            std::string::npos);
}

TEST(KernelPlans, StatusRoundTripsWithRemarks) {
  KernelPlansStatus s;
  s.remark = "the instrumented program failed (exit 3)";
  s.kernels.push_back({"a", true, 4, "k0", ""});
  s.kernels.push_back({"b", false, 0, "", "no launch of \"b\" was captured\n(twice)"});
  s.variants.push_back({"v003", "the captured launches differ in their configuration"});
  Expected<KernelPlansStatus> back = parseKernelPlansStatus(formatKernelPlansStatus(s), "s");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->remark, s.remark);
  ASSERT_EQ(back->kernels.size(), 2u);
  EXPECT_TRUE(back->kernels[0].replayed);
  EXPECT_EQ(back->kernels[0].launches, 4u);
  EXPECT_EQ(back->kernels[0].results, "k0");
  EXPECT_FALSE(back->kernels[1].replayed);
  EXPECT_EQ(back->kernels[1].remark, "no launch of 'b' was captured (twice)");
  ASSERT_EQ(back->variants.size(), 1u);
  EXPECT_EQ(back->variants[0].id, "v003");
  EXPECT_EQ(back->variants[0].remark, s.variants[0].remark);
  ASSERT_NE(back->findVariant("v003"), nullptr);
  EXPECT_EQ(back->findVariant("v000"), nullptr);
  EXPECT_FALSE(
      parseKernelPlansStatus("cudal1-kernel-plans-status 2\nvariant v1 replay\n", "s").ok());
  // Words with blanks are quoted (the fuzz target's round trip).
  KernelPlansStatus blanks;
  blanks.kernels.push_back({"a b", true, 1, "k0", ""});
  blanks.variants.push_back({"v 1", "why"});
  Expected<KernelPlansStatus> quoted = parseKernelPlansStatus(formatKernelPlansStatus(blanks), "s");
  ASSERT_TRUE(quoted.ok()) << quoted.error().message();
  EXPECT_EQ(quoted->kernels[0].key, "a b");
  EXPECT_EQ(quoted->variants[0].id, "v 1");
  EXPECT_FALSE(parseKernelPlansStatus("cudal1-kernel-plans-status 1\nkernel a replay\n", "s").ok());
  EXPECT_FALSE(
      parseKernelPlansStatus("cudal1-kernel-plans-status 1\nkernel a replay results=../x\n", "s")
          .ok());
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RewriteInput input() {
  std::string file = std::string(CUDAL1_SOURCE_DIR) + "/test/cudal1-opt/Inputs/tune-me.cu";
  return {file, readFile(file), analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90"}, nullptr)};
}

/// A verified result, timed at `ms` against an original of `baseMs`.
VariantResult timed(const std::string &id, double ms, double baseMs, const std::string &hash) {
  VariantResult r;
  r.id = id;
  r.outcome = Outcome::Ok;
  r.timed = true;
  r.timeMs = ms;
  r.speedup = baseMs / ms;
  r.lo = r.speedup * 0.99;
  r.hi = r.speedup * 1.01;
  r.faster = r.lo > 1.0;
  r.hash = hash;
  return r;
}

class KernelPartTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> d;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kernel-part-test", d));
    dir = std::string(d);
    bundle = dir + "/b";
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  SessionOptions options(SessionOptions::Mode mode, std::string &log) {
    SessionOptions o;
    o.mode = mode;
    o.bundleDir = bundle;
    o.budget = 4;
    o.outputFile = dir + "/tuned.cu";
    o.setup = programSetup(input(), "", "", "sm_90");
    logs.push_back(std::make_unique<llvm::raw_string_ostream>(log));
    o.out = logs.back().get();
    o.note = [&log](const std::string &m) { log += "note: " + m + "\n"; };
    return o;
  }
  std::string hashOf(const std::string &id, const std::string &plan) {
    return variantHash(plan, readFile(bundle + "/" + id + ".cu"));
  }
  /// The same for the bundle at `b`.
  void evaluateAt(const std::string &b, bool replay) {
    std::string saved = bundle;
    bundle = b;
    evaluate(replay);
    bundle = saved;
  }
  /// What cudal1-eval writes on the GPU machine when `replay` (the capture
  /// worked): the kernel part's results (warp-reduce: the kernel 4x
  /// faster) and status, and the program results of the rest (everything
  /// 1.02x); otherwise every variant at program level. The variants in
  /// `refused` are left to the program level with a remark, as cudal1-eval
  /// does when a launch remap gives no one configuration.
  void evaluate(bool replay, const std::set<std::string> &refused = {}) {
    Expected<std::vector<BundlePlan>> plans = readBundlePlans(bundle);
    ASSERT_TRUE(plans.ok()) << plans.error().message();
    Expected<KernelPlans> kp = readKernelPlans(bundle + "/kernels");
    ASSERT_TRUE(kp.ok()) << kp.error().message();
    EvalResults program;
    program.gpu = "NVIDIA H200";
    program.results.push_back(timed("original", 10, 10, hashOf("original", "")));
    // One kernel bundle per kernel, kN, each with its original's time.
    std::vector<EvalResults> kernel(kp->kernels.size());
    KernelPlansStatus st;
    for (size_t k = 0; k < kp->kernels.size(); ++k) {
      kernel[k].gpu = "NVIDIA H200";
      kernel[k].results.push_back(timed("original", 2, 2, hashOf("original", "")));
      std::string name = "k" + std::to_string(k);
      st.kernels.push_back({kp->kernels[k].key, replay, replay ? 4u : 0u, replay ? name : "",
                            replay ? "" : "no launch was captured"});
    }
    for (const BundlePlan &p : *plans) {
      size_t at = kp->kernels.size();
      for (const KernelPlanVariant &v : kp->variants)
        if (v.id == p.id)
          for (size_t k = 0; k < kp->kernels.size(); ++k)
            if (kp->kernels[k].key == v.kernelKey)
              at = k;
      if (refused.count(p.id))
        st.variants.push_back({p.id, "the captured launches differ in their configuration"});
      if (replay && at < kp->kernels.size() && !refused.count(p.id))
        kernel[at].results.push_back(
            timed(p.id, p.plan.find("warp-reduce") != std::string::npos ? 0.5 : 1.9, 2,
                  hashOf(p.id, p.plan)));
      else
        program.results.push_back(timed(p.id, 10 / 1.02, 10, hashOf(p.id, p.plan)));
    }
    ASSERT_TRUE(writeResults(bundle + "/results.txt", program).ok());
    for (size_t k = 0; replay && k < kernel.size(); ++k) {
      std::string kdir = bundle + "/kernels/k" + std::to_string(k);
      ASSERT_FALSE(llvm::sys::fs::create_directories(kdir));
      ASSERT_TRUE(writeResults(kdir + "/results.txt", kernel[k]).ok());
    }
    ASSERT_TRUE(writeKernelPlansStatus(st, bundle + "/kernels").ok());
  }
  std::string dir, bundle;
  std::vector<std::unique_ptr<llvm::raw_string_ostream>> logs;
};

} // namespace

TEST_F(KernelPartTest, EmitWritesTheKernelLevelPlansForReplay) {
  std::string log;
  SessionStatus st =
      runSession(input(), options(SessionOptions::EmitBundle, log), nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message << "\n" << log;
  EXPECT_NE(log.find("kernel-level, judged by replay: " + bundle + "/kernels"), std::string::npos)
      << log;
  Expected<KernelPlans> kp = readKernelPlans(bundle + "/kernels");
  ASSERT_TRUE(kp.ok()) << kp.error().message();
  Expected<std::vector<BundlePlan>> plans = readBundlePlans(bundle);
  ASSERT_TRUE(plans.ok());
  ASSERT_FALSE(kp->variants.empty());
  // Every listed variant is one of the program bundle's, a plan of device
  // code only, of a kernel listed with its reference.
  bool warp = false;
  for (const KernelPlanVariant &v : kp->variants) {
    const BundlePlan *p = nullptr;
    for (const BundlePlan &x : *plans)
      if (x.id == v.id)
        p = &x;
    ASSERT_NE(p, nullptr) << v.id;
    EXPECT_EQ(p->kernelKey, v.kernelKey);
    EXPECT_EQ(p->plan.find("fuse"), std::string::npos) << p->plan;
    llvm::Expected<Plan> plan = parsePlan(p->plan);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    const KernelPlanKernel *k = kp->kernel(v.kernelKey);
    ASSERT_NE(k, nullptr);
    // The remap with the kernel's argument types (vectorize's lanes).
    Expected<LaunchRemap> remap = launchRemapFor(*plan, k->args);
    ASSERT_TRUE(remap.ok()) << p->plan << ": " << remap.error().message();
    EXPECT_EQ(v.launch, *remap) << p->plan;
    if (p->plan.find("vectorize") != std::string::npos)
      EXPECT_FALSE(v.launch.empty()) << p->plan;
    warp |= p->plan == "@sum: warp-reduce";
    EXPECT_TRUE(llvm::sys::fs::exists(bundle + "/kernels/" + k->reference));
    EXPECT_NE(readFile(bundle + "/kernels/" + k->reference).find(k->referenceEntry),
              std::string::npos);
    EXPECT_FALSE(k->args.empty());
  }
  EXPECT_TRUE(warp);
  // The instrumented program and the runtime it is built with.
  EXPECT_NE(readFile(bundle + "/instrumented.cu").find("cudal1"), std::string::npos);
  for (const std::string &f : captureRuntimeFiles())
    EXPECT_TRUE(llvm::sys::fs::exists(bundle + "/kernels/runtime/" + f)) << f;
  // With --judge program there is no kernel part, and an old one goes.
  SessionOptions o = options(SessionOptions::EmitBundle, log);
  o.judge = JudgeMode::Program;
  st = runSession(input(), o, nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message;
  EXPECT_FALSE(llvm::sys::fs::exists(bundle + "/kernels"));
}

TEST_F(KernelPartTest, PlansThatChangeTheLaunchGoIntoTheKernelPartWithTheirRemap) {
  std::string log;
  SessionOptions o = options(SessionOptions::EmitBundle, log);
  o.transforms = {"launch-config", "coarsen"};
  SessionStatus st = runSession(input(), o, nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message << "\n" << log;
  EXPECT_EQ(log.find("change the launch configuration"), std::string::npos) << log;
  Expected<KernelPlans> kp = readKernelPlans(bundle + "/kernels");
  ASSERT_TRUE(kp.ok()) << kp.error().message();
  Expected<std::vector<BundlePlan>> plans = readBundlePlans(bundle);
  ASSERT_TRUE(plans.ok());
  unsigned listed = 0, kernelPlans = 0;
  for (const BundlePlan &p : *plans) {
    if (p.kernelKey == "*")
      continue;
    ++kernelPlans;
    const KernelPlanVariant *v = nullptr;
    for (const KernelPlanVariant &x : kp->variants)
      if (x.id == p.id)
        v = &x;
    ASSERT_NE(v, nullptr) << p.id << " " << p.plan << " is not in the kernel part\n" << log;
    ++listed;
    llvm::Expected<Plan> plan = parsePlan(p.plan);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    ASSERT_FALSE(v->launch.empty()) << p.plan;
    EXPECT_EQ(v->launch, launchRemapOf(*plan)) << p.plan;
    const char *step = p.plan.find("coarsen") != std::string::npos ? "divide-x(" : "reshape(";
    EXPECT_NE(v->launch.str().find(step), std::string::npos) << p.plan << ": " << v->launch.str();
  }
  EXPECT_GT(listed, 0u);
  EXPECT_EQ(listed, kernelPlans);
  // The import takes them at the kernel's own time, by replay; one that
  // cudal1-eval left to the program level is noted with its reason.
  std::string refused = kp->variants.front().id;
  evaluate(/*replay=*/true, {refused});
  if (HasFatalFailure())
    return;
  std::string importLog;
  st = runSession(input(), options(SessionOptions::ImportResults, importLog), nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message << "\n" << importLog;
  EXPECT_NE(importLog.find("replay-double-reference"), std::string::npos) << importLog;
  EXPECT_NE(importLog.find(refused + ": not judged by replay (the captured launches differ in "
                                     "their configuration); judged as a whole program"),
            std::string::npos)
      << importLog;
}

TEST_F(KernelPartTest, ImportTakesReplayedPlansAtTheKernelsOwnTime) {
  std::string emitLog, importLog;
  SessionStatus st =
      runSession(input(), options(SessionOptions::EmitBundle, emitLog), nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message;
  evaluate(/*replay=*/true);
  if (HasFatalFailure())
    return;
  st = runSession(input(), options(SessionOptions::ImportResults, importLog), nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message << "\n" << importLog;
  // sum's best plan, judged by replay at the kernel's 4x (the program-level
  // variants are at 1.02x).
  EXPECT_NE(importLog.find("4.000x"), std::string::npos) << importLog;
  EXPECT_NE(importLog.find("@sum: warp-reduce  (replay-double-reference"), std::string::npos)
      << importLog;
  EXPECT_NE(importLog.find("kernel's own time"), std::string::npos) << importLog;
}

TEST_F(KernelPartTest, ImportRefusesAStaleReplayResult) {
  std::string emitLog, importLog;
  SessionStatus st =
      runSession(input(), options(SessionOptions::EmitBundle, emitLog), nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message;
  evaluate(/*replay=*/true);
  if (HasFatalFailure())
    return;
  Expected<KernelPlans> kp = readKernelPlans(bundle + "/kernels");
  ASSERT_TRUE(kp.ok());
  std::string id = kp->variants.front().id;
  // The variant's source changed after it was replayed.
  std::ofstream(bundle + "/" + id + ".cu", std::ios::app) << "// edited\n";
  // Its program result is absent (it was replayed), so only the replay
  // results' binding can refuse it.
  st = runSession(input(), options(SessionOptions::ImportResults, importLog), nullptr, nullptr);
  EXPECT_EQ(st.kind, SessionStatus::InputError);
  EXPECT_NE(
      st.message.find("/results.txt: the result for '" + id + "' was measured on another source"),
      std::string::npos)
      << st.message;
}

TEST_F(KernelPartTest, AKernelNotCapturedFallsBackToItsProgramResults) {
  std::string emitLog, importLog;
  SessionStatus st =
      runSession(input(), options(SessionOptions::EmitBundle, emitLog), nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message;
  evaluate(/*replay=*/false);
  if (HasFatalFailure())
    return;
  st = runSession(input(), options(SessionOptions::ImportResults, importLog), nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message << "\n" << importLog;
  EXPECT_NE(importLog.find("sum: not judged by replay (no launch was captured); its plans are "
                           "judged as whole programs"),
            std::string::npos)
      << importLog;
  EXPECT_EQ(importLog.find("replay-double-reference"), std::string::npos) << importLog;
  EXPECT_NE(importLog.find("(program)"), std::string::npos) << importLog;
}

TEST_F(KernelPartTest, ANextRoundMeasuresReplayedBestsAsWholePrograms) {
  std::string log1, log2, importLog;
  SessionStatus st =
      runSession(input(), options(SessionOptions::EmitBundle, log1), nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message;
  evaluate(/*replay=*/true); // both kernels get a best by replay
  if (HasFatalFailure())
    return;
  std::string r2 = dir + "/r2";
  SessionOptions o = options(SessionOptions::EmitBundle, log2);
  o.bundleDir = r2;
  o.continueFrom = {bundle};
  st = runSession(input(), o, nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message << "\n" << log2;
  Expected<std::vector<BundlePlan>> plans = readBundlePlans(r2);
  ASSERT_TRUE(plans.ok()) << plans.error().message();
  unsigned whole = 0;
  for (const BundlePlan &p : *plans)
    if (p.id.rfind("whole-", 0) == 0) {
      ++whole;
      EXPECT_NE(p.kernelKey, "*");
    }
  EXPECT_EQ(whole, 2u) << readFile(r2 + "/plans.tsv");
  // Measured as programs only: the kernel part does not list them.
  Expected<KernelPlans> kp = readKernelPlans(r2 + "/kernels");
  ASSERT_TRUE(kp.ok()) << kp.error().message();
  for (const KernelPlanVariant &v : kp->variants)
    EXPECT_NE(v.id.rfind("whole-", 0), 0u) << v.id;
  evaluateAt(r2, /*replay=*/true);
  if (HasFatalFailure())
    return;
  SessionOptions io = options(SessionOptions::ImportResults, importLog);
  io.bundleDir = r2;
  io.continueFrom = {bundle};
  st = runSession(input(), io, nullptr, nullptr);
  ASSERT_EQ(st.kind, SessionStatus::Ok) << st.message << "\n" << importLog;
  // sum's replayed best, with its whole-program figures beside it.
  EXPECT_NE(importLog.find("@sum: warp-reduce  (replay-double-reference; whole program 1.020x"),
            std::string::npos)
      << importLog;
}
