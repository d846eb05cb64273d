// The parent side of an evaluation with a fake worker (fake-worker.sh): how
// crashes, hangs, wrong results, a crash during timing and timing samples
// become results. Compilation is real (NVRTC).
#include "cudal1/Eval/Evaluator.h"
#include "cudal1/Capture/CaptureFile.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace cudal1;

namespace {
/// A capture of one launch of kernel `k` writing one float.
Status writeOneLaunch(const std::string &path) {
  CaptureFile f;
  CapturedLaunch l;
  l.kernelKey = "k";
  CapturedAlloc a;
  a.size = 4;
  a.before.assign(4, 0);
  a.after.assign(4, 0);
  l.allocs.push_back(a);
  CapturedArg arg;
  arg.isPointer = true;
  l.args.push_back(arg);
  f.launches.push_back(l);
  return writeCaptureFile(path, f);
}
} // namespace

TEST(Evaluator, TurnsWorkerBehaviourIntoResults) {
  char dir[] = "/tmp/cudal1-evaluator-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string d = dir;
  std::ofstream(d + "/k.cu") << "extern \"C\" __global__ void k(float *o) { o[0] = 1; }\n";
  std::ofstream(d + "/bad.cu") << "this does not compile\n";
  ASSERT_TRUE(writeOneLaunch(d + "/c.capture").ok());
  std::ofstream(d + "/manifest.txt")
      << "cudal1-bundle 1\nkernel-key k\nargs f32*w\ncapture c.capture\n"
         "original k.cu\n";
  std::string ids[] = {"fast", "slow", "hang", "segv", "illegal", "wrong", "lazy", "boom"};
  {
    std::ofstream m(d + "/manifest.txt", std::ios::app);
    for (const std::string &id : ids)
      m << "variant " << id << " k.cu\n";
    m << "variant broken bad.cu\n";
  }
  Expected<Bundle> b = readBundle(d);
  ASSERT_TRUE(b.ok()) << b.error().message();
  EvalOptions opts;
  opts.jobs = 2;
  opts.verifyTimeout = 2;
  opts.window = 1;
  opts.workerExecutable = FAKE_WORKER;
  Expected<EvalResults> r = evaluateBundle(*b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  auto outcome = [&](const char *id) { return r->find(id)->outcome; };
  EXPECT_EQ(r->gpu, "Fake GPU");
  EXPECT_EQ(outcome("original"), Outcome::Ok);
  EXPECT_EQ(outcome("hang"), Outcome::Timeout);
  EXPECT_EQ(outcome("segv"), Outcome::Crash);
  EXPECT_NE(r->find("segv")->details.back().find("signal 11"), std::string::npos);
  EXPECT_EQ(outcome("illegal"), Outcome::Crash);
  EXPECT_NE(r->find("illegal")->details[0].find("ILLEGAL_ADDRESS"), std::string::npos);
  EXPECT_EQ(outcome("wrong"), Outcome::Wrong);
  EXPECT_EQ(r->find("wrong")->mismatches.size(), 1u);
  EXPECT_EQ(outcome("broken"), Outcome::CompileError);
  EXPECT_EQ(outcome("boom"), Outcome::Crash); // crashed while being timed
  EXPECT_EQ(outcome("lazy"), Outcome::WrongAfterTiming);
  EXPECT_FALSE(r->find("lazy")->faster);
  const VariantResult *fast = r->find("fast"), *slow = r->find("slow");
  ASSERT_TRUE(fast->timed && slow->timed);
  EXPECT_NEAR(fast->speedup, 2.0, 1e-9);
  EXPECT_TRUE(fast->faster);
  EXPECT_NEAR(slow->speedup, 0.5, 1e-9);
  EXPECT_FALSE(slow->faster);
  EXPECT_FALSE(r->find("hang")->timed);

  // One candidate per worker judges alike. Two copies of the bundle in one
  // evaluation share the compile cache: every variant but `broken` is k.cu,
  // so with two compile threads only the first two jobs (the original and
  // `fast`, at once) and the two bad.cu jobs (failures are not kept) compile.
  EvalOptions single = opts;
  single.verifyBatch = 1;
  Expected<EvalResults> r1 = evaluateBundle(*b, single);
  ASSERT_TRUE(r1.ok()) << r1.error().message();
  for (const VariantResult &v : r->results)
    EXPECT_EQ(r1->find(v.id)->outcome, v.outcome) << v.id;
  EvalOptions cached = opts;
  cached.compileCache = d + "/cubins";
  EvalPhaseTimes phases;
  std::vector<Expected<EvalResults>> two = evaluateBundles({*b, *b}, cached, &phases);
  ASSERT_EQ(two.size(), 2u);
  ASSERT_TRUE(two[0].ok() && two[1].ok());
  EXPECT_EQ(two[1]->find("fast")->outcome, Outcome::Ok);
  EXPECT_EQ(two[1]->find("broken")->outcome, Outcome::CompileError);
  EXPECT_EQ(phases.compiled, 4u);
  EXPECT_EQ(phases.cached, 16u);
  // The timing workers' rounds are a part of the timing phase.
  EXPECT_GT(phases.timingRounds, 0.0);
  EXPECT_LE(phases.timingRounds, phases.timing);
  std::system(("rm -rf " + d).c_str());
}

TEST(Evaluator, AnOriginalVerifiedEarlierIsNotVerifiedAgain) {
  char dir[] = "/tmp/cudal1-evaluator-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string d = dir;
  std::ofstream(d + "/k.cu") << "extern \"C\" __global__ void k(float *o) { o[0] = 1; }\n";
  ASSERT_TRUE(writeOneLaunch(d + "/c.capture").ok());
  std::ofstream(d + "/manifest.txt") << "cudal1-bundle 1\nkernel-key k\nargs f32*w\ncapture "
                                        "c.capture\noriginal k.cu\nvariant fast k.cu\n";
  Expected<Bundle> b = readBundle(d);
  ASSERT_TRUE(b.ok()) << b.error().message();
  EvalOptions opts;
  opts.jobs = 2;
  opts.window = 1;
  opts.workerExecutable = FAKE_WORKER;
  opts.workDir = d + "/work";
  opts.keepWork = true;
  opts.originalVerified = true;
  Expected<EvalResults> r = evaluateBundle(*b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  // The verify workers saw `fast` alone; the original was still timed.
  std::ifstream log(d + "/work/workers.log");
  std::string verified((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(verified, "fast\n");
  const VariantResult &o = r->results.front();
  EXPECT_EQ(o.outcome, Outcome::Ok);
  EXPECT_EQ(o.verifyMode, "fallback-no-reference");
  EXPECT_NE(o.details.front().find("earlier evaluation"), std::string::npos);
  EXPECT_TRUE(r->find("fast")->timed);
  EXPECT_NEAR(r->find("fast")->speedup, 2.0, 1e-9);
  std::system(("rm -rf " + d).c_str());
}
