// cudal1-eval end to end on the CPU: real bundle parsing, NVRTC compilation,
// worker processes, replay, verification and timing, with the GPU replaced by
// FakeCudaDriver (host "kernels" chosen by a fake_tag_NAME kernel in each
// source). Catches worker bugs before GPU time is spent; says nothing about
// real kernels.
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/ContextHolder.h"
#include "cudal1/Eval/KeptWorkers.h"
#include "cudal1/Eval/Process.h"
#include "cudal1/Eval/Results.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <thread>

using namespace cudal1;

namespace {
int clampIdx(int j, int n) { return j < 0 ? 0 : (j >= n ? n - 1 : j); }

void writeSource(const std::string &dir, const std::string &tag, bool reference = false) {
  std::ofstream f(dir + "/" + tag + ".cu");
  if (tag == "broken") {
    f << "extern \"C\" __global__ void stencil(float *o) { o[0] = ; }\n";
    return;
  }
  if (reference)
    f << "extern \"C\" __global__ void stencil_ref(const double *in, const "
         "double *w, double *out, int n, int R) { out[0] = in[0] * w[0]; }\n";
  else
    f << "extern \"C\" __global__ void stencil(const float *in, const float "
         "*w, float *out, int n, int R) { out[0] = in[0] * w[0]; }\n";
  f << "extern \"C\" __global__ void fake_tag_" << tag << "() {}\n";
}

std::string fakeDriverEnv() { return std::string("LD_LIBRARY_PATH=") + FAKE_CUDA_DIR; }

/// The sockets left in a kept-worker directory.
size_t socketsIn(const std::string &dir) {
  size_t n = 0;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      n += name.size() > 5 && name.compare(name.size() - 5, 5, ".sock") == 0;
    }
    closedir(d);
  }
  return n;
}

/// One captured launch of the stencil: n elements, R = 4, blocks of 256.
CapturedLaunch stencilLaunch(int n) {
  const int R = 4;
  std::vector<float> in(n), w(2 * R + 1), out(n);
  for (int i = 0; i < n; ++i)
    in[i] = i % 1024 == 0 ? 0.f : float((i * 37) % 101) / 101.f;
  for (int k = 0; k <= 2 * R; ++k)
    w[k] = 1.f / float(2 * R + 1);
  for (int i = 0; i < n; ++i) {
    float f = 0, b = 0;
    for (int k = -R; k <= R; ++k)
      f = std::fma(w[k + R], in[clampIdx(i + k, n)], f);
    for (int k = R; k >= -R; --k)
      b = std::fma(w[k + R], in[clampIdx(i + k, n)], b);
    out[i] = 0.5f * (f + b);
  }
  CapturedLaunch l;
  l.kernelKey = "stencil";
  l.grid[0] = (n + 255) / 256;
  l.block[0] = 256;
  auto addAlloc = [&](const std::vector<float> &before, const std::vector<float> &after) {
    CapturedAlloc a;
    a.size = before.size() * 4;
    a.before.resize(a.size);
    a.after.resize(a.size);
    std::memcpy(a.before.data(), before.data(), a.size);
    std::memcpy(a.after.data(), after.data(), a.size);
    l.allocs.push_back(a);
  };
  addAlloc(in, in);
  addAlloc(w, w);
  addAlloc(std::vector<float>(n, 0.f), out);
  for (uint32_t i = 0; i < 3; ++i) {
    CapturedArg a;
    a.isPointer = true;
    a.alloc = i;
    l.args.push_back(a);
  }
  for (int v : {n, R}) {
    CapturedArg a;
    a.bytes.resize(4);
    std::memcpy(a.bytes.data(), &v, 4);
    l.args.push_back(a);
  }
  return l;
}

/// Writes the stencil family's capture (a launch per size in `sizes`) and
/// sources into `dir`, and a manifest listing `variants` (manifest lines).
void writeStencilBundle(const std::string &dir, const std::string &variants,
                        const std::vector<int> &sizes = {4096}) {
  CaptureFile cf;
  for (int n : sizes)
    cf.launches.push_back(stencilLaunch(n));
  ASSERT_TRUE(writeCaptureFile(dir + "/demo.capture", cf).ok());
  for (const char *t : {"original", "fast", "slow", "offbyone", "nan", "pastend", "memo", "lazy",
                        "illegal", "hang", "broken"})
    writeSource(dir, t);
  writeSource(dir, "reference", true);
  std::ofstream(dir + "/manifest.txt")
      << "cudal1-bundle 1\nkernel-key stencil\nargs f32* f32* f32*w i32 i32\n"
         "capture demo.capture\noriginal original.cu\n"
         "reference reference.cu entry=stencil_ref\n"
      << variants;
}

/// The whole fault family, evaluated with a worker process per request or
/// (keptWorkers) by kept workers: the same verdicts either way.
void stencilFamily(bool keptWorkers) {
  char tmp[] = "/tmp/cudal1-fake-driver-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmp), nullptr);
  std::string dir = tmp;
  writeStencilBundle(dir, "variant fast fast.cu\nvariant slow slow.cu\n"
                          "variant off-by-one offbyone.cu\nvariant nan nan.cu\n"
                          "variant write-past-end pastend.cu grid=17\n"
                          "variant partial-write original.cu grid=15\n"
                          "variant memo-inputs memo.cu\nvariant lazy-after-4 lazy.cu\n"
                          "variant illegal-address illegal.cu\nvariant endless-loop hang.cu\n"
                          "variant compile-error broken.cu\n");
  if (::testing::Test::HasFatalFailure())
    return;

  // 2. Evaluate with the fake driver first on the library path.
  std::string results = dir + "/results.txt";
  std::vector<std::string> argv = {CUDAL1_EVAL_EXE, dir, "--window", "2",
                                   "--timeout",     "5", "-o",       results};
  if (keptWorkers)
    argv.insert(argv.end(), {"--keep-workers", dir + "/kept"});
  ProcessResult p = runProcess(argv, 300, {fakeDriverEnv()});
  if (keptWorkers)
    stopKeptWorkers(dir + "/kept");
  ASSERT_TRUE(p.exited && p.exitCode == 0) << p.describe() << "\n" << p.output;
  Expected<EvalResults> r = readResults(results);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->gpu, "Fake GPU");
  auto outcome = [&](const char *id) {
    const VariantResult *v = r->find(id);
    return v ? v->outcome : Outcome::NotRun;
  };
  EXPECT_EQ(outcome("original"), Outcome::Ok) << p.output;
  EXPECT_EQ(outcome("fast"), Outcome::Ok) << p.output;
  EXPECT_EQ(outcome("slow"), Outcome::Ok);
  EXPECT_EQ(outcome("off-by-one"), Outcome::Wrong);
  EXPECT_EQ(outcome("nan"), Outcome::Wrong);
  EXPECT_EQ(outcome("write-past-end"), Outcome::Wrong);
  EXPECT_EQ(outcome("partial-write"), Outcome::Wrong);
  EXPECT_EQ(outcome("memo-inputs"), Outcome::Wrong);
  EXPECT_EQ(outcome("lazy-after-4"), Outcome::WrongAfterTiming);
  EXPECT_EQ(outcome("illegal-address"), Outcome::Crash);
  EXPECT_EQ(outcome("endless-loop"), Outcome::Timeout);
  EXPECT_EQ(outcome("compile-error"), Outcome::CompileError);
  const VariantResult *fast = r->find("fast"), *slow = r->find("slow");
  ASSERT_TRUE(fast && slow && fast->timed && slow->timed);
  EXPECT_TRUE(fast->faster);
  EXPECT_GT(fast->lo, 1.0);
  EXPECT_LT(slow->hi, 1.0);
  EXPECT_TRUE(r->find("lazy-after-4")->suspicious);
  bool redZone = false;
  for (const std::string &d : r->find("write-past-end")->details)
    redZone |= d.find("outside the buffer") != std::string::npos;
  EXPECT_TRUE(redZone);
  EXPECT_EQ(r->find("fast")->verifyMode, "double-reference");
  EXPECT_EQ(socketsIn(dir + "/kept"), 0u);
  if (!::testing::Test::HasFailure())
    std::system(("rm -rf " + dir).c_str());
  else
    std::printf("kept %s\n", dir.c_str());
}

} // namespace

TEST(EvalFakeDriver, VerdictsOfTheStencilFamily) { stencilFamily(false); }

// A variant's launch remap is applied to each captured launch on its own: a
// kernel captured with two shapes (4096 and 1000 elements) keeps them.
TEST(EvalFakeDriver, TheRemapIsAppliedToEachCapturedLaunch) {
  char tmp[] = "/tmp/cudal1-fake-remap-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmp), nullptr);
  std::string dir = tmp;
  // per-launch: blocks of 128, 32 x 128 and 8 x 128, every element covered
  // in both launches; one-config: one fixed configuration for both (all a
  // variant line could say before remap=), the second launch's 8 x 128,
  // too few threads for the first; halved: divide-x(2) on a kernel that
  // was not coarsened, half the elements of each launch.
  writeStencilBundle(dir,
                     "variant per-launch original.cu remap=reshape(128)\n"
                     "variant one-config original.cu grid=8 block=128\n"
                     "variant halved original.cu remap=divide-x(2)\n",
                     {4096, 1000});
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  std::string results = dir + "/results.txt";
  ProcessResult p =
      runProcess({CUDAL1_EVAL_EXE, dir, "--window", "1", "-o", results}, 300, {fakeDriverEnv()});
  ASSERT_TRUE(p.exited && p.exitCode == 0) << p.describe() << "\n" << p.output;
  Expected<EvalResults> r = readResults(results);
  ASSERT_TRUE(r.ok()) << r.error().message();
  auto outcome = [&](const char *id) {
    const VariantResult *v = r->find(id);
    return v ? v->outcome : Outcome::NotRun;
  };
  EXPECT_EQ(outcome("original"), Outcome::Ok) << p.output;
  EXPECT_EQ(outcome("per-launch"), Outcome::Ok) << p.output;
  EXPECT_EQ(outcome("one-config"), Outcome::Wrong) << p.output;
  EXPECT_EQ(outcome("halved"), Outcome::Wrong) << p.output;
  if (!::testing::Test::HasFailure())
    std::system(("rm -rf " + dir).c_str());
  else
    std::printf("kept %s\n", dir.c_str());
}

// Every fault ends its kept worker and the next request starts a fresh one:
// the verdicts are those of a worker process per request.
TEST(EvalFakeDriver, VerdictsOfTheStencilFamilyWithKeptWorkers) { stencilFamily(true); }

// A kept worker verifies, then times, then serves the next call with the
// set-up it made; it exits when told to, or when left idle.
TEST(EvalFakeDriver, KeptWorkerKeepsTheSetUpAcrossCalls) {
  char tmp[] = "/tmp/cudal1-fake-kept-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmp), nullptr);
  std::string dir = tmp, kept = dir + "/kept";
  writeStencilBundle(dir, "variant fast fast.cu\nvariant slow slow.cu\n");
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  // Idle times far above a loaded machine's pauses between calls, but the
  // last call's: its worker must be seen to leave by itself.
  auto evaluate = [&](int call, std::vector<std::string> more, const char *idle) {
    std::string results = dir + "/results" + std::to_string(call) + ".txt";
    std::string phases = dir + "/phases" + std::to_string(call) + ".txt";
    std::vector<std::string> argv = {
        CUDAL1_EVAL_EXE,  dir,  "--window",      "1", "-o", results, "--phases", phases,
        "--keep-workers", kept, "--worker-idle", idle};
    argv.insert(argv.end(), more.begin(), more.end());
    ProcessResult p = runProcess(argv, 300, {fakeDriverEnv()});
    EXPECT_TRUE(p.exited && p.exitCode == 0) << p.describe() << "\n" << p.output;
    Expected<EvalResults> r = readResults(results);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
    if (r.ok()) {
      const VariantResult *fast = r->find("fast"), *slow = r->find("slow");
      EXPECT_TRUE(fast && fast->outcome == Outcome::Ok && fast->faster) << p.output;
      EXPECT_TRUE(slow && slow->outcome == Outcome::Ok && slow->hi < 1.0) << p.output;
    }
    std::ifstream in(phases);
    std::string name;
    double value;
    std::map<std::string, double> got;
    while (in >> name >> value)
      got[name] = value;
    return std::make_pair(got["setups"], got["kept-setups"]);
  };
  // Call 1: the verification makes the set-up, the timing finds it kept.
  auto [setups1, kept1] = evaluate(1, {}, "60");
  EXPECT_EQ(setups1, 2);
  EXPECT_EQ(kept1, 1);
  EXPECT_EQ(socketsIn(kept), 1u);
  // Call 2 (a tuner's next batch): both requests find it kept.
  auto [setups2, kept2] = evaluate(2, {"--original-verified"}, "60");
  EXPECT_EQ(setups2, 2);
  EXPECT_EQ(kept2, 2);
  // Told to stop, it is gone at once.
  stopKeptWorkers(kept);
  EXPECT_EQ(socketsIn(kept), 0u);
  // Left alone, it exits after its idle time (2 s) and removes its socket
  // (call 2 found call 1's worker alive: cudal1-eval does not stop them).
  evaluate(3, {"--original-verified"}, "2");
  for (int i = 0; i < 300 && socketsIn(kept) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(socketsIn(kept), 0u);
  if (!::testing::Test::HasFailure())
    std::system(("rm -rf " + dir).c_str());
  else
    std::printf("kept %s\n", dir.c_str());
}

// cudal1-eval --hold-context makes a context and holds it until its input
// closes; without a driver it says why (the tuner's note) and exits 2.
TEST(EvalFakeDriver, HoldContextUntilLetGo) {
  std::string why;
  {
    const char *had = std::getenv("LD_LIBRARY_PATH");
    std::string saved = had ? had : "";
    ::setenv("LD_LIBRARY_PATH", FAKE_CUDA_DIR, 1); // the holder inherits this environment
    std::unique_ptr<ContextHolder> h = ContextHolder::start(CUDAL1_EVAL_EXE, 0, 60, 30, why);
    if (had)
      ::setenv("LD_LIBRARY_PATH", saved.c_str(), 1);
    else
      ::unsetenv("LD_LIBRARY_PATH");
    ASSERT_TRUE(h) << why;
    EXPECT_EQ(h->device(), "Fake GPU");
    pid_t pid = h->pid();
    auto t0 = std::chrono::steady_clock::now();
    h.reset();
    EXPECT_NE(::kill(pid, 0), 0);
    // It left on end-of-file, not at the 5 s kill.
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 4.0);
  }
  ProcessResult p =
      runProcess({CUDAL1_EVAL_EXE, "--hold-context", "--gpu", "3"}, 60, {fakeDriverEnv()});
  EXPECT_TRUE(p.exited && p.exitCode == 2) << p.describe() << "\n" << p.output;
  EXPECT_NE(p.output.find("cannot hold a context on GPU 3"), std::string::npos) << p.output;
}
