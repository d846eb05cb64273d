// Program-level evaluation on the CPU: the "programs" are shell scripts, the
// build command copies them, so verification, faults and timing rounds run
// for real without a GPU or a compiler.
#include "cudal1/Eval/ProgramEval.h"
#include "cudal1/Eval/Process.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sys/stat.h>

using namespace cudal1;

namespace {

std::string makeTempDir() { return *makeTempDirectory("cudal1-progeval-test"); }

void writeScript(const std::string &path, const std::string &body) {
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
}

/// A script's first lines: counts its runs in `file` (by default next to the
/// built program) and sets $n to the number of earlier runs.
std::string runCounter(const std::string &file = "$0.n") {
  return "n=$(cat " + file + " 2>/dev/null || echo 0); echo $((n+1)) > " + file + "\n";
}

ProgramBundle scriptBundle(const std::string &dir) {
  ProgramBundle b;
  b.dir = dir;
  // A "compile error" is a source containing BROKEN.
  b.build = {"/bin/sh", "-c", "! grep -q BROKEN {src} && cp {src} {exe} && chmod +x {exe}"};
  b.run = {"{exe}"};
  b.ignoreRegex = "^note:";
  b.original = {"original", "original.sh", false};
  return b;
}

/// A bundle of scripts that print the same checksum and a fixed GPU time:
/// the original's and one per variant (id, milliseconds).
ProgramBundle timedBundle(const std::string &dir, const std::string &originalMs,
                          const std::vector<std::pair<std::string, std::string>> &variants) {
  ProgramBundle b = scriptBundle(dir);
  b.timeRegex = "^gpu_ms=(\\S+)";
  writeScript(dir + "/original.sh", "echo checksum=1; echo gpu_ms=" + originalMs);
  for (const auto &[id, ms] : variants) {
    writeScript(dir + "/" + id + ".sh", "echo checksum=1; echo gpu_ms=" + ms);
    b.variants.push_back({id, id + ".sh", false});
  }
  return b;
}

} // namespace

TEST(ProgramOutput, NumbersAreDelimitedWords) {
  std::vector<std::string> mm;
  std::vector<std::string> o = {"sm_90 l1_relu checksum=1.0 n=1024"};
  // Text with digits inside words must match exactly; numbers within 1e-4.
  EXPECT_TRUE(compareProgramOutputs(o, o, {"sm_90 l1_relu checksum=1.00005 n=1024"}, 1e-4, 0, mm));
  EXPECT_FALSE(compareProgramOutputs(o, o, {"sm_80 l1_relu checksum=1.0 n=1024"}, 1e-4, 0, mm));
  // Integers are exact.
  EXPECT_FALSE(compareProgramOutputs(o, o, {"sm_90 l1_relu checksum=1.0 n=1025"}, 1e-4, 0, mm));
  EXPECT_FALSE(compareProgramOutputs(o, o, {"sm_90 l1_relu checksum=1.01 n=1024"}, 1e-4, 0, mm));
  EXPECT_NE(mm.back().find("expected 1.0, got 1.01"), std::string::npos) << mm.back();
}

TEST(ProgramOutput, NanMustMatchAndSpreadWidens) {
  std::vector<std::string> mm;
  EXPECT_FALSE(compareProgramOutputs({"x=1.5"}, {"x=1.5"}, {"x=nan"}, 1e-4, 0, mm));
  EXPECT_TRUE(compareProgramOutputs({"x=nan"}, {"x=nan"}, {"x=nan"}, 1e-4, 0, mm));
  // The original itself moves by 0.01 between runs (atomics): 0.03 is fine.
  EXPECT_TRUE(compareProgramOutputs({"x=1.00"}, {"x=1.01"}, {"x=1.03"}, 1e-4, 0, mm));
  EXPECT_FALSE(compareProgramOutputs({"x=1.00"}, {"x=1.01"}, {"x=1.10"}, 1e-4, 0, mm));
  EXPECT_FALSE(compareProgramOutputs({"a", "b"}, {"a", "b"}, {"a"}, 1e-4, 0, mm));
}

TEST(ProgramOutput, TimeRegexAndIgnoredLines) {
  ProgramBundle b;
  b.timeRegex = "^gpu_ms=(\\S+)";
  b.ignoreRegex = "^date";
  ProgramOutput out = splitProgramOutput("checksum=3\ngpu_ms=1.25\ndate today\nend\n", b);
  EXPECT_TRUE(out.haveTime);
  EXPECT_DOUBLE_EQ(out.timeMs, 1.25);
  ASSERT_EQ(out.lines.size(), 2u);
  EXPECT_EQ(out.lines[1], "end");
}

TEST(ProgramBundle, ManifestRoundTripAndErrors) {
  ProgramBundle b = scriptBundle("/tmp/x");
  b.timeRegex = "^gpu_ms=(\\S+)";
  b.variants.push_back({"fast", "v/fast.sh", true});
  std::string text = formatProgramManifest(b);
  ASSERT_TRUE(isProgramManifest(text));
  Expected<ProgramBundle> p = parseProgramManifest(text, "/tmp/x", "m");
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->build, b.build);
  EXPECT_EQ(p->timeRegex, b.timeRegex);
  ASSERT_EQ(p->variants.size(), 1u);
  EXPECT_TRUE(p->variants[0].fastMath);
  EXPECT_EQ(formatProgramManifest(*p), text);

  auto error = [](const std::string &t) {
    Expected<ProgramBundle> r = parseProgramManifest(t, "/tmp", "m");
    return r.ok() ? std::string("(parsed)") : r.error().message();
  };
  const std::string head = "cudal1-program-bundle 1\nrun {exe}\n";
  EXPECT_NE(error("cudal1-program-bundle 2\n").find("version 2"), std::string::npos);
  EXPECT_NE(error(head + "build cc -o x y\noriginal a.cu\n")
                .find("m:3: the build command must contain {src}"),
            std::string::npos);
  EXPECT_NE(error(head + "build cc {src} -o {exe}\noriginal ../a.cu\n").find("inside the bundle"),
            std::string::npos);
  EXPECT_NE(error(head + "build cc {src} -o {exe}\ntime-regex \"(\"\noriginal a.cu\n")
                .find("bad regular expression"),
            std::string::npos);
  EXPECT_NE(error(head + "build cc {src} -o {exe}\n").find("no 'original'"), std::string::npos);
}

// Issue 19: results are bound to the plan and source they measured.
TEST(ProgramBundle, VariantHashes) {
  std::string h = variantHash("@sum: warp-reduce", "int main() {}\n");
  EXPECT_TRUE(isVariantHash(h));
  EXPECT_EQ(h.size(), 32u);
  EXPECT_NE(h, variantHash("@sum: grid-stride", "int main() {}\n"));
  EXPECT_NE(h, variantHash("@sum: warp-reduce", "int main() { }\n"));
  EXPECT_EQ(h.substr(0, 16), variantHash("@sum: warp-reduce", "").substr(0, 16));
  // What cudal1-eval records: the manifest's plan half, the built source's half.
  EXPECT_EQ(measuredHash(h, "int main() {}\n"), h);
  EXPECT_EQ(measuredHash(h, "other"), variantHash("@sum: warp-reduce", "other"));
  EXPECT_EQ(measuredHash("", "x"), "");
  EXPECT_FALSE(isVariantHash("0123"));
  EXPECT_FALSE(isVariantHash("0123456789ABCDEF0123456789abcdef"));

  ProgramBundle b = scriptBundle("/tmp/x");
  b.original.hash = variantHash("", "o");
  b.variants.push_back({"v1", "v1.sh", false, {}, h});
  std::string text = formatProgramManifest(b);
  EXPECT_NE(text.find("variant v1 v1.sh hash=" + h + "\n"), std::string::npos);
  Expected<ProgramBundle> p = parseProgramManifest(text, "/tmp/x", "m");
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->variants[0].hash, h);
  EXPECT_EQ(p->original.hash, b.original.hash);
  EXPECT_EQ(formatProgramManifest(*p), text);
  Expected<ProgramBundle> bad = parseProgramManifest(
      "cudal1-program-bundle 1\nbuild cc {src} -o {exe}\nrun {exe}\noriginal a.cu hash=xyz\n",
      "/tmp", "m");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("m:4: bad 'hash=xyz'"), std::string::npos);
}

// Found by test/fuzz/ManifestFuzz.cpp: libstdc++'s regex compiler overflows
// a long on a back-reference of 19 digits (undefined behaviour).
TEST(ProgramBundle, RegexesAreBounded) {
  auto check = [](const std::string &re) {
    Status s = checkProgramRegex(re, "m:4");
    return s.ok() ? std::string("ok") : s.message();
  };
  EXPECT_EQ(check("^gpu_ms=(\\S+)"), "ok");
  EXPECT_EQ(check("(a)(b)\\2"), "ok");
  EXPECT_EQ(check("x{2,1000}"), "ok");
  EXPECT_NE(check("(\\99999999999999999999)").find("back-references go up to \\9"),
            std::string::npos);
  EXPECT_NE(check("a{99999999}").find("a repetition count above 1000"), std::string::npos);
  EXPECT_NE(check("a{1,1001}").find("a repetition count above 1000"), std::string::npos);
  EXPECT_NE(check(std::string(17, '(') + std::string(17, ')')).find("nested deeper than 16"),
            std::string::npos);
  EXPECT_NE(check(std::string(1025, 'a')).find("longer than 1024"), std::string::npos);
  EXPECT_NE(check("(").find("bad regular expression"), std::string::npos);
}

TEST(ProgramBundle, BadTolerancesAreErrors) {
  const std::string head =
      "cudal1-program-bundle 1\nbuild cc {src} -o {exe}\nrun {exe}\noriginal a.cu\n";
  for (const char *t : {"rel=inf", "rel=nan", "abs=-1", "rel=1e999", "rel=", "rel=0x10"}) {
    Expected<ProgramBundle> r = parseProgramManifest(head + "tolerance " + t + "\n", "/tmp", "m");
    EXPECT_FALSE(r.ok()) << t;
  }
  EXPECT_TRUE(parseProgramManifest(head + "tolerance rel=1e-3 abs=0\n", "/tmp", "m").ok());
}

TEST(ProgramEval, VerdictsAndRanking) {
  std::string dir = makeTempDir();
  // The original prints a checksum and a note that changes every run.
  writeScript(dir + "/original.sh", "sleep 0.08; echo checksum=1.000000; echo note: $$");
  writeScript(dir + "/fast.sh", "sleep 0.02; echo checksum=1.00001; echo note: x");
  writeScript(dir + "/slow.sh", "sleep 0.24; echo checksum=1.000000");
  writeScript(dir + "/wrong.sh", "sleep 0.02; echo checksum=1.1");
  writeScript(dir + "/crash.sh", "kill -SEGV $$");
  writeScript(dir + "/exit.sh", "echo checksum=1.0; exit 3");
  writeScript(dir + "/hang.sh", "sleep 30");
  writeScript(dir + "/broken.sh", "BROKEN");
  // Right on its first run, wrong afterwards (a counter file next to it).
  writeScript(dir + "/lazy.sh",
              runCounter() +
                  "if [ $n -ge 1 ]; then echo checksum=2; else sleep 0.08; echo checksum=1; fi");
  ProgramBundle b = scriptBundle(dir);
  for (const char *id : {"fast", "slow", "wrong", "crash", "exit", "hang", "broken", "lazy"})
    b.variants.push_back({id, std::string(id) + ".sh", false});
  ASSERT_TRUE(writeProgramManifest(b, dir).ok());
  Expected<ProgramBundle> rb = readProgramBundle(dir);
  ASSERT_TRUE(rb.ok()) << rb.error().message();

  ProgramEvalOptions opts;
  opts.jobs = 2;
  opts.maxRounds = 6;
  opts.runTimeout = 2;
  Expected<EvalResults> r = evaluateProgramBundle(*rb, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  auto get = [&](const char *id) { return r->find(id); };
  ASSERT_NE(get("fast"), nullptr);
  EXPECT_EQ(get("original")->outcome, Outcome::Ok);
  EXPECT_EQ(get("fast")->outcome, Outcome::Ok);
  EXPECT_TRUE(get("fast")->faster);
  // Wall times of shell scripts: 4x in sleep, less in process start-up on a
  // loaded machine (1.8x seen in CI); the verdict is what matters.
  EXPECT_GT(get("fast")->speedup, 1.3);
  EXPECT_EQ(get("slow")->outcome, Outcome::Ok);
  EXPECT_FALSE(get("slow")->faster);
  EXPECT_LT(get("slow")->hi, 1.0);
  EXPECT_EQ(get("wrong")->outcome, Outcome::Wrong);
  ASSERT_FALSE(get("wrong")->mismatches.empty());
  EXPECT_NE(get("wrong")->mismatches[0].find("expected 1.000000, got 1.1"), std::string::npos);
  EXPECT_EQ(get("crash")->outcome, Outcome::Crash);
  EXPECT_EQ(get("exit")->outcome, Outcome::Crash);
  EXPECT_EQ(get("hang")->outcome, Outcome::Timeout);
  EXPECT_EQ(get("broken")->outcome, Outcome::CompileError);
  EXPECT_EQ(get("lazy")->outcome, Outcome::WrongAfterTiming);
  EXPECT_FALSE(get("lazy")->faster);
  runProcess({"rm", "-rf", dir}, 30);
}

TEST(ProgramEval, BrokenOriginalIsAnError) {
  std::string dir = makeTempDir();
  writeScript(dir + "/original.sh", "exit 0");
  ProgramBundle b = scriptBundle(dir);
  b.timeRegex = "^gpu_ms=(\\S+)";
  Expected<EvalResults> r = evaluateProgramBundle(b, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("time regex"), std::string::npos) << r.error().message();
  runProcess({"rm", "-rf", dir}, 30);
}

TEST(ProgramEval, FloorLine) {
  double bytes = 0, flops = 0;
  std::string dtype;
  EXPECT_TRUE(parseFloorLine("checksum=1\nfloor: bytes=4.8e9 flops=1024 "
                             "dtype=f64\ngpu_ms=2\n",
                             bytes, flops, dtype));
  EXPECT_DOUBLE_EQ(bytes, 4.8e9);
  EXPECT_DOUBLE_EQ(flops, 1024);
  EXPECT_EQ(dtype, "f64");
  EXPECT_TRUE(parseFloorLine("floor: bytes=8 flops=0\n", bytes, flops, dtype));
  EXPECT_EQ(dtype, "f32"); // bench/run's default
  EXPECT_FALSE(parseFloorLine("no floor here\n", bytes, flops, dtype));
  EXPECT_FALSE(parseFloorLine("floor: bytes=x flops=1\n", bytes, flops, dtype));
  EXPECT_FALSE(parseFloorLine("  floor: bytes=1 flops=1\n", bytes, flops, dtype));
}

// The per-round times behind each speedup are kept (the report plots them),
// and the original's roofline floor comes with its result.
TEST(ProgramEval, RecordsSamplesAndFloor) {
  std::string dir = makeTempDir();
  // Reported times differ per run (a counter file), so the samples show
  // which run each one came from.
  std::string body = runCounter() + "echo checksum=1; echo 'floor: bytes=2e9 flops=4e6 dtype=f32'; "
                                    "echo gpu_ms=%s.$n";
  char orig[512], fast[512];
  std::snprintf(orig, sizeof orig, body.c_str(), "60");
  std::snprintf(fast, sizeof fast, body.c_str(), "20");
  writeScript(dir + "/original.sh", orig);
  writeScript(dir + "/fast.sh", fast);
  ProgramBundle b = scriptBundle(dir);
  b.timeRegex = "^gpu_ms=(\\S+)";
  b.variants.push_back({"fast", "fast.sh", false});
  ASSERT_TRUE(writeProgramManifest(b, dir).ok());
  Expected<ProgramBundle> rb = readProgramBundle(dir);
  ASSERT_TRUE(rb.ok()) << rb.error().message();
  ProgramEvalOptions opts;
  opts.jobs = 1;
  opts.maxRounds = 4;
  Expected<EvalResults> r = evaluateProgramBundle(*rb, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const VariantResult *o = r->find("original"), *f = r->find("fast");
  ASSERT_TRUE(o && f);
  EXPECT_TRUE(o->haveFloor);
  EXPECT_DOUBLE_EQ(o->floorBytes, 2e9);
  EXPECT_DOUBLE_EQ(o->floorFlops, 4e6);
  EXPECT_EQ(o->floorDtype, "f32");
  EXPECT_FALSE(f->haveFloor);
  // The original ran twice to verify, the variant once: the timed runs are
  // the original's 3rd to 6th and the variant's 2nd to 5th.
  EXPECT_EQ(o->samplesMs, (std::vector<double>{60.2, 60.3, 60.4, 60.5}));
  EXPECT_EQ(f->samplesMs, (std::vector<double>{20.1, 20.2, 20.3, 20.4}));
  Expected<EvalResults> back = parseResults(formatResults(*r), "r");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->find("fast")->samplesMs, f->samplesMs);
  EXPECT_DOUBLE_EQ(back->find("original")->floorBytes, 2e9);
  runProcess({"rm", "-rf", dir}, 30);
}

// Racing: the verification runs rank the verified variants and only the K
// fastest are timed; the rest stay verified and untimed, with the reason. A
// wrong variant is never among them, however fast it is.
TEST(ProgramEval, RaceTimesOnlyTheFastestVerified) {
  std::string dir = makeTempDir();
  ProgramBundle b = scriptBundle(dir);
  b.timeRegex = "^gpu_ms=(\\S+)";
  writeScript(dir + "/original.sh", "echo checksum=1; echo gpu_ms=50");
  const std::pair<const char *, const char *> variants[] = {
      {"v40", "echo checksum=1; echo gpu_ms=40"},
      {"v10", "echo checksum=1; echo gpu_ms=10"},
      {"v60", "echo checksum=1; echo gpu_ms=60"},
      {"v20", "echo checksum=1; echo gpu_ms=20"},
      {"wrong", "echo checksum=2; echo gpu_ms=1"}};
  for (const auto &[id, body] : variants) {
    writeScript(dir + "/" + id + ".sh", body);
    b.variants.push_back({id, std::string(id) + ".sh", false});
  }
  ProgramEvalOptions opts;
  opts.jobs = 2;
  opts.maxRounds = 3;
  opts.raceKeep = 2;
  Expected<EvalResults> r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  for (const char *id : {"v10", "v20"}) {
    const VariantResult *v = r->find(id);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->outcome, Outcome::Ok) << id;
    EXPECT_TRUE(v->timed) << id;
    EXPECT_EQ(v->samplesMs.size(), 3u) << id;
  }
  for (const char *id : {"v40", "v60"}) {
    const VariantResult *v = r->find(id);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->outcome, Outcome::Ok) << id;
    EXPECT_FALSE(v->timed) << id;
    ASSERT_FALSE(v->details.empty()) << id;
    EXPECT_NE(v->details.back().find("not among the 2 fastest"), std::string::npos)
        << v->details.back();
  }
  EXPECT_EQ(r->find("wrong")->outcome, Outcome::Wrong);
  EXPECT_GT(r->find("v10")->speedup, 4.0);
  // Without racing every verified variant is timed.
  opts.raceKeep = 0;
  r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->find("v40")->timed);
  EXPECT_TRUE(r->find("v60")->timed);
  runProcess({"rm", "-rf", dir}, 30);
}

// Racing in the rounds (stopWhenDecided): a variant slower than the original
// leaves after the first rounds, and with one variant left and decided
// faster the rounds end long before maxRounds; the speedups still come from
// the rounds each one ran. Without it every variant runs every round.
TEST(ProgramEval, RoundsStopWhenDecided) {
  std::string dir = makeTempDir();
  ProgramBundle b = timedBundle(dir, "50", {{"v10", "10"}, {"v80", "80"}});
  ProgramEvalOptions opts;
  opts.jobs = 2;
  opts.maxRounds = 30;
  opts.stopWhenDecided = true;
  Expected<EvalResults> r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const VariantResult *fast = r->find("v10"), *slow = r->find("v80");
  ASSERT_TRUE(fast && slow && fast->timed && slow->timed);
  EXPECT_LT(fast->samplesMs.size(), 30u);
  EXPECT_GE(fast->samplesMs.size(), 6u);
  EXPECT_NEAR(fast->speedup, 5.0, 1e-6);
  EXPECT_TRUE(fast->faster);
  EXPECT_LE(slow->samplesMs.size(), fast->samplesMs.size());
  ASSERT_FALSE(slow->details.empty());
  EXPECT_NE(slow->details.back().find("cannot win"), std::string::npos) << slow->details.back();
  opts.stopWhenDecided = false;
  r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->find("v10")->samplesMs.size(), 30u);
  EXPECT_EQ(r->find("v80")->samplesMs.size(), 30u);
  runProcess({"rm", "-rf", dir}, 30);
}

// A number that moves from run to run (a float-atomic sum) is judged by all
// of the original's runs, not only its first two: here the original's first
// two runs differ by 0.001 and its later ones by 0.05, and the variant's
// later runs print a value inside that spread. Judged by the first two runs
// alone it would be wrong after timing.
TEST(ProgramEval, OriginalSpreadGrowsWithItsRuns) {
  std::string dir = makeTempDir();
  ProgramBundle b = scriptBundle(dir);
  b.timeRegex = "^gpu_ms=(\\S+)";
  std::string counter = runCounter();
  // Runs 1 and 2 verify; run 3 is the first timing round.
  writeScript(dir + "/original.sh",
              std::string(counter) + "case $n in 0) s=100.000;; 1) s=100.001;; *) s=100.05;; esac\n"
                                     "echo checksum=$s; echo gpu_ms=50");
  // Verified with 100.000; from its third run (round 2, after the original
  // ran in round 1) it prints 100.04.
  writeScript(dir + "/drift.sh", std::string(counter) +
                                     "case $n in 0|1) s=100.000;; *) s=100.04;; esac\n"
                                     "echo checksum=$s; echo gpu_ms=40");
  b.variants.push_back({"drift", "drift.sh", false});
  ProgramEvalOptions opts;
  opts.jobs = 1;
  opts.maxRounds = 4;
  Expected<EvalResults> r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const VariantResult *v = r->find("drift");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->outcome, Outcome::Ok) << (v->details.empty() ? "" : v->details.back());
  EXPECT_TRUE(v->timed);
  // The first two runs alone allow max(1e-4 * 100, 4 * 0.001) = 0.01.
  std::vector<std::string> mm;
  EXPECT_FALSE(compareProgramOutputs({"checksum=100.000"}, {"checksum=100.001"},
                                     {"checksum=100.04"}, 1e-4, 0, mm));
  EXPECT_TRUE(compareWithOriginalRuns({"checksum=100.000"},
                                      {{"checksum=100.001"}, {"checksum=100.05"}},
                                      {"checksum=100.04"}, 1e-4, 0, mm));
  runProcess({"rm", "-rf", dir}, 30);
}

// At verification too: when the original's two runs differ and a variant
// fails, the original runs three more times (once per evaluation) and the
// variant is judged again by all of them. A variant beyond that spread stays
// wrong; an original whose output does not move never runs more.
TEST(ProgramEval, VerificationRefinesAMovingOriginalsSpread) {
  std::string dir = makeTempDir();
  ProgramBundle b = scriptBundle(dir);
  b.timeRegex = "^gpu_ms=(\\S+)";
  // The original counts its runs in the bundle directory.
  auto counter = [&] { return runCounter(dir + "/count"); };
  writeScript(dir + "/original.sh",
              counter() + "case $n in 0) s=100.000;; 1) s=100.001;; *) s=100.05;; esac\n"
                          "echo checksum=$s; echo gpu_ms=50");
  writeScript(dir + "/inside.sh", "echo checksum=100.04; echo gpu_ms=40");
  writeScript(dir + "/beyond.sh", "echo checksum=101.0; echo gpu_ms=40");
  b.variants.push_back({"inside", "inside.sh", false});
  b.variants.push_back({"beyond", "beyond.sh", false});
  ProgramEvalOptions opts;
  opts.jobs = 1;
  opts.maxRounds = 2;
  Expected<EvalResults> r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->find("inside")->outcome, Outcome::Ok);
  EXPECT_EQ(r->find("beyond")->outcome, Outcome::Wrong);
  // 2 verification runs, 3 more once, 2 rounds.
  std::ifstream runs(dir + "/count");
  int n = 0;
  runs >> n;
  EXPECT_EQ(n, 7);
  runProcess({"rm", "-rf", dir}, 30);

  // A deterministic original: a wrong variant costs no extra runs.
  dir = makeTempDir();
  b = scriptBundle(dir);
  b.timeRegex = "^gpu_ms=(\\S+)";
  writeScript(dir + "/original.sh", counter() + "echo checksum=100.0; echo gpu_ms=50");
  writeScript(dir + "/beyond.sh", "echo checksum=101.0; echo gpu_ms=40");
  b.variants.push_back({"beyond", "beyond.sh", false});
  r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->find("beyond")->outcome, Outcome::Wrong);
  std::ifstream runs2(dir + "/count");
  runs2 >> n;
  EXPECT_EQ(n, 2); // no timing rounds either: nothing verified
  runProcess({"rm", "-rf", dir}, 30);
}

// In the timing rounds too: the original's first three runs barely move
// (100.000, 100.001, 100.001), later ones reach 100.05, and the variant
// prints 100.04 from its first round on. Whether the original runs before
// or after it in round 1, the three runs known then allow only 0.01; the
// refinement's runs show the real spread, so the variant is not wrong after
// timing (it was, on the H200, for a plan identical to a verified one).
TEST(ProgramEval, TimingRoundsRefineAMovingOriginalsSpread) {
  std::string dir = makeTempDir();
  ProgramBundle b = scriptBundle(dir);
  b.timeRegex = "^gpu_ms=(\\S+)";
  auto counter = [&](const char *name) { return runCounter(dir + "/" + name); };
  writeScript(dir + "/original.sh",
              counter("original.n") +
                  "case $n in 0) s=100.000;; 1|2) s=100.001;; *) s=100.05;; esac\n"
                  "echo checksum=$s; echo gpu_ms=50");
  writeScript(dir + "/drift.sh", counter("drift.n") +
                                     "case $n in 0) s=100.000;; *) s=100.04;; esac\n"
                                     "echo checksum=$s; echo gpu_ms=40");
  writeScript(dir + "/beyond.sh", counter("beyond.n") +
                                      "case $n in 0) s=100.000;; *) s=101.0;; esac\n"
                                      "echo checksum=$s; echo gpu_ms=45");
  b.variants.push_back({"drift", "drift.sh", false});
  b.variants.push_back({"beyond", "beyond.sh", false});
  ProgramEvalOptions opts;
  opts.jobs = 1;
  opts.maxRounds = 1;
  Expected<EvalResults> r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const VariantResult *drift = r->find("drift");
  EXPECT_EQ(drift->outcome, Outcome::Ok) << (drift->details.empty() ? "" : drift->details.back());
  EXPECT_TRUE(drift->timed);
  // Beyond any spread of the original: wrong after timing, and says by how
  // many of the original's runs it was judged.
  const VariantResult *beyond = r->find("beyond");
  EXPECT_EQ(beyond->outcome, Outcome::WrongAfterTiming);
  ASSERT_FALSE(beyond->details.empty());
  EXPECT_NE(beyond->details.back().find("round 1: printed output differs"), std::string::npos)
      << beyond->details.back();
  EXPECT_NE(beyond->details.back().find("runs of the original)"), std::string::npos)
      << beyond->details.back();
  EXPECT_FALSE(beyond->mismatches.empty());
  runProcess({"rm", "-rf", dir}, 30);
}

// Screening runs: a variant whose verification run was lucky (10 ms, then
// 60 ms) wins a race of one run, but not the median of three, where the
// steady 20 ms variant does. A variant wrong on a later screening run is
// wrong.
TEST(ProgramEval, ScreeningRunsRankByTheMedian) {
  std::string dir = makeTempDir();
  auto counter = [&](const char *name) { return runCounter(dir + "/" + name); };
  auto bundle = [&] {
    ProgramBundle b = scriptBundle(dir);
    b.timeRegex = "^gpu_ms=(\\S+)";
    writeScript(dir + "/original.sh", "echo checksum=1; echo gpu_ms=50");
    writeScript(dir + "/lucky.sh", counter("lucky.n") + "case $n in 0) t=10;; *) t=60;; esac\n"
                                                        "echo checksum=1; echo gpu_ms=$t");
    writeScript(dir + "/steady.sh", "echo checksum=1; echo gpu_ms=20");
    writeScript(dir + "/flaky.sh", counter("flaky.n") + "case $n in 0) s=1;; *) s=2;; esac\n"
                                                        "echo checksum=$s; echo gpu_ms=5");
    b.variants.push_back({"lucky", "lucky.sh", false});
    b.variants.push_back({"steady", "steady.sh", false});
    b.variants.push_back({"flaky", "flaky.sh", false});
    runProcess({"rm", "-f", dir + "/lucky.n", dir + "/flaky.n"}, 10);
    return b;
  };
  ProgramEvalOptions opts;
  opts.jobs = 1;
  opts.maxRounds = 2;
  opts.raceKeep = 1;
  // One run: the flaky variant (5 ms) wins the race and is caught only in
  // the rounds; the steady one is never timed.
  Expected<EvalResults> r = evaluateProgramBundle(bundle(), opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->find("flaky")->outcome, Outcome::WrongAfterTiming);
  EXPECT_FALSE(r->find("steady")->timed);
  // Three runs: the flaky one is wrong at screening, the lucky one's median
  // is 60 ms, and the steady one is the one timed.
  opts.screenRuns = 3;
  r = evaluateProgramBundle(bundle(), opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->find("flaky")->outcome, Outcome::Wrong);
  EXPECT_TRUE(r->find("steady")->timed);
  EXPECT_FALSE(r->find("lucky")->timed);
  EXPECT_NE(r->find("lucky")->details.back().find("median of its screening runs (60"),
            std::string::npos)
      << r->find("lucky")->details.back();
  runProcess({"rm", "-rf", dir}, 30);
}

// Clear losers (screenMargin): a variant whose verification run is more
// than 25% slower than the raceKeep-th fastest one gets no screening runs;
// the close ones are screened as before.
TEST(ProgramEval, ClearLosersAreNotScreened) {
  std::string dir = makeTempDir();
  auto counter = [&](const char *name) { return runCounter(dir + "/" + name); };
  ProgramBundle b = scriptBundle(dir);
  b.timeRegex = "^gpu_ms=(\\S+)";
  writeScript(dir + "/original.sh", "echo checksum=1; echo gpu_ms=50");
  writeScript(dir + "/fast.sh", counter("fast.n") + "echo checksum=1; echo gpu_ms=20");
  writeScript(dir + "/close.sh", counter("close.n") + "echo checksum=1; echo gpu_ms=23");
  writeScript(dir + "/slow.sh", counter("slow.n") + "echo checksum=1; echo gpu_ms=40");
  b.variants.push_back({"fast", "fast.sh", false});
  b.variants.push_back({"close", "close.sh", false});
  b.variants.push_back({"slow", "slow.sh", false});
  ProgramEvalOptions opts;
  opts.jobs = 1;
  opts.maxRounds = 2;
  opts.raceKeep = 1;
  opts.screenRuns = 3;
  opts.screenMargin = 0.25;
  Expected<EvalResults> r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  auto runs = [&](const char *name) {
    std::ifstream in(dir + "/" + name);
    int n = 0;
    in >> n;
    return n;
  };
  EXPECT_EQ(runs("slow.n"), 1);  // verified only
  EXPECT_EQ(runs("close.n"), 3); // verified and screened twice
  EXPECT_TRUE(r->find("fast")->timed);
  EXPECT_FALSE(r->find("slow")->timed);
  EXPECT_EQ(r->find("slow")->outcome, Outcome::Ok);
  EXPECT_NE(r->find("slow")->details.back().find(
                "was more than 25% slower than 20 ms, the slowest of the 1 fastest"),
            std::string::npos)
      << r->find("slow")->details.back();
  EXPECT_NE(r->find("close")->details.back().find("median of its screening runs (23"),
            std::string::npos)
      << r->find("close")->details.back();
  runProcess({"rm", "-rf", dir}, 30);
}

// The program-level double-reference rule (issue 15 item 2), on scripted
// outputs: r is the reference program's number, o the original's.
TEST(ReferenceRule, CloserToTheReferenceThanTheOriginalPasses) {
  ReferenceRule rule; // k = 4, rel 1e-4, as the replay rule and the bundle
  std::vector<std::string> mm;
  // A float-atomic sum: the original is 2% off the reference; the
  // warp-reduced variant is 0.001% off, far from the original's number.
  std::vector<std::string> ref = {"sum=5592169.98"};
  std::vector<std::vector<std::string>> orig = {{"sum=5476213.00"}};
  EXPECT_TRUE(compareWithReference(ref, orig, {"sum=5592100.00"}, rule, mm)) << mm[0];
  // The old rule rejects it: it is 2% from the original.
  EXPECT_FALSE(compareWithOriginalRuns(orig[0], {}, {"sum=5592100.00"}, 1e-4, 0, mm));
  mm.clear();
  // A variant summing half the terms is wrong against either.
  EXPECT_FALSE(compareWithReference(ref, orig, {"sum=2774164.25"}, rule, mm));
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_NE(mm[0].find("expected 5592169.98 (reference program), got 2774164.25"),
            std::string::npos)
      << mm[0];
  // As wrong as k times the original's error passes; more fails.
  mm.clear();
  double errO = 5592169.98 - 5476213.00;
  EXPECT_TRUE(
      compareWithReference(ref, orig, {"sum=" + formatDouble(5592169.98 - 3.9 * errO)}, rule, mm));
  EXPECT_FALSE(
      compareWithReference(ref, orig, {"sum=" + formatDouble(5592169.98 - 4.2 * errO)}, rule, mm));
  // The original's largest error over its runs counts.
  mm.clear();
  std::vector<std::vector<std::string>> moving = {{"sum=5592169.98"}, {"sum=5476213.00"}};
  EXPECT_TRUE(compareWithReference(ref, moving, {"sum=5400000"}, rule, mm));
}

TEST(ReferenceRule, TheFloor) {
  ReferenceRule rule;
  std::vector<std::string> mm;
  // The original is exact here: the floor rel * |r| (1e-4 of 1000 = 0.1)
  // plus the unit of the last printed digit (0.01) is what is allowed.
  std::vector<std::vector<std::string>> orig = {{"x=1000.00"}};
  EXPECT_TRUE(compareWithReference({"x=1000.00"}, orig, {"x=1000.10"}, rule, mm));
  EXPECT_FALSE(compareWithReference({"x=1000.00"}, orig, {"x=1000.12"}, rule, mm));
  ASSERT_FALSE(mm.empty());
  EXPECT_NE(mm.back().find("allowed +-0.11"), std::string::npos) << mm.back();
  // Printed coarsely, a number is known to its last digit only.
  rule.rel = 0;
  EXPECT_TRUE(compareWithReference({"x=1.69e+07"}, {{"x=1.69e+07"}}, {"x=1.70e+07"}, rule, mm));
  EXPECT_FALSE(compareWithReference({"x=1.69e+07"}, {{"x=1.69e+07"}}, {"x=1.71e+07"}, rule, mm));
  // The bundle's absolute tolerance adds to the floor.
  rule.abs = 0.5;
  EXPECT_TRUE(compareWithReference({"x=0.0"}, {{"x=0.0"}}, {"x=0.55"}, rule, mm));
  // Integers: exact where the original matches the reference, else
  // within k times its error.
  mm.clear();
  EXPECT_FALSE(compareWithReference({"n=100"}, {{"n=100"}}, {"n=101"}, ReferenceRule{}, mm));
  EXPECT_NE(mm.back().find("allowed +-0"), std::string::npos) << mm.back();
  EXPECT_TRUE(compareWithReference({"n=100"}, {{"n=102"}}, {"n=107"}, ReferenceRule{}, mm));
  EXPECT_FALSE(compareWithReference({"n=100"}, {{"n=102"}}, {"n=109"}, ReferenceRule{}, mm));
}

TEST(ReferenceRule, TextNanAndShape) {
  ReferenceRule rule;
  std::vector<std::string> mm;
  std::vector<std::vector<std::string>> orig = {{"ok 1.5"}};
  EXPECT_FALSE(compareWithReference({"ok 1.5"}, orig, {"FAIL 1.5"}, rule, mm));
  EXPECT_FALSE(compareWithReference({"ok 1.5"}, orig, {"ok 1.5", "extra"}, rule, mm));
  EXPECT_FALSE(compareWithReference({"ok 1.5"}, orig, {"ok nan"}, rule, mm));
  // A NaN where the reference has one, or where the original has one.
  EXPECT_TRUE(compareWithReference({"ok nan"}, {{"ok nan"}}, {"ok nan"}, rule, mm));
  EXPECT_TRUE(compareWithReference({"ok 1.5"}, {{"ok inf"}}, {"ok inf"}, rule, mm));
  // The original is not finite where the reference is: any finite value.
  EXPECT_TRUE(compareWithReference({"ok 1.5"}, {{"ok inf"}}, {"ok 7"}, rule, mm));
  EXPECT_DOUBLE_EQ(printedUnit("3.14"), 0.01);
  EXPECT_DOUBLE_EQ(printedUnit("1.69e+07"), 1e5);
  EXPECT_DOUBLE_EQ(printedUnit("42"), 1);
  EXPECT_DOUBLE_EQ(printedUnit("-2.5E-3"), 1e-4);
  EXPECT_EQ(printedUnit("nan"), 0);
}

// The whole path: a bundle with a reference program; the variant closer to
// the reference than the original passes, a wrong one fails, and a cached
// reference run is not built or run again.
TEST(ProgramEval, JudgedByTheReferenceProgram) {
  std::string dir = makeTempDir();
  writeScript(dir + "/original.sh", "echo checksum=1.692032e+07; echo done");
  writeScript(dir + "/reference.sh",
              runCounter(dir + "/ref.n") + "echo checksum=1.699126e+07; echo done");
  writeScript(dir + "/warp.sh", "echo checksum=1.699125e+07; echo done");
  writeScript(dir + "/half.sh", "echo checksum=8.49e+06; echo done");
  writeScript(dir + "/same.sh", "echo checksum=1.692032e+07; echo done");
  ProgramBundle b = scriptBundle(dir);
  b.reference = "reference.sh";
  for (const char *id : {"warp", "half", "same"})
    b.variants.push_back({id, std::string(id) + ".sh", false});
  ASSERT_TRUE(writeProgramManifest(b, dir).ok());
  Expected<ProgramBundle> rb = readProgramBundle(dir);
  ASSERT_TRUE(rb.ok()) << rb.error().message();
  EXPECT_EQ(rb->reference, "reference.sh");
  ProgramEvalOptions opts;
  opts.jobs = 2;
  opts.maxRounds = 3;
  opts.referenceCache = std::make_shared<ProgramReferenceRun>();
  Expected<EvalResults> r = evaluateProgramBundle(*rb, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->find("warp")->outcome, Outcome::Ok);
  EXPECT_EQ(r->find("warp")->verifyMode, "program-reference");
  EXPECT_EQ(r->find("half")->outcome, Outcome::Wrong);
  EXPECT_EQ(r->find("same")->outcome, Outcome::Ok); // the original passes its own rule
  EXPECT_TRUE(opts.referenceCache->usable);
  // Without the reference the warp-reduced sum is rejected, as before.
  ProgramBundle plain = *rb;
  plain.reference.clear();
  Expected<EvalResults> old = evaluateProgramBundle(plain, {});
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_EQ(old->find("warp")->outcome, Outcome::Wrong);
  EXPECT_EQ(old->find("warp")->verifyMode, "program-output");
  // The cached run: the reference is not run again.
  Expected<EvalResults> again = evaluateProgramBundle(*rb, opts);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->find("warp")->outcome, Outcome::Ok);
  std::ifstream count(dir + "/ref.n");
  int runs = 0;
  count >> runs;
  EXPECT_EQ(runs, 1);
  runProcess({"rm", "-rf", dir}, 30);
}

// A reference that prints other text (or exits otherwise) is not used: the
// variants are compared with the original, and the original's result says why.
TEST(ProgramEval, UnusableReferenceFallsBack) {
  std::string dir = makeTempDir();
  writeScript(dir + "/original.sh", "echo checksum=1.0; echo PASSED");
  writeScript(dir + "/reference.sh", "echo checksum=1.0; echo FAILED");
  writeScript(dir + "/v.sh", "echo checksum=1.0; echo PASSED");
  ProgramBundle b = scriptBundle(dir);
  b.reference = "reference.sh";
  b.variants.push_back({"v", "v.sh", false});
  Expected<EvalResults> r = evaluateProgramBundle(b, {});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->find("v")->outcome, Outcome::Ok);
  EXPECT_EQ(r->find("v")->verifyMode, "program-output");
  bool said = false;
  for (const std::string &d : r->find("original")->details)
    said |= d.find("prints other text than the original") != std::string::npos;
  EXPECT_TRUE(said);
  runProcess({"rm", "-rf", dir}, 30);
}

// A roundoff-amplifying program (the LU without pivoting, whose
// triangular solve was unrolled): last-bit changes grow past any fixed
// tolerance, but the original's own error against the double reference
// grows with them, so the unrolled variant passes and a wrong one does not.
TEST(ReferenceRule, AmplifiedRoundoffIsJudgedByTheOriginalsOwnError) {
  std::vector<std::string> ref = {"x[0]=1.23450 x[1]=-0.98760 residual=3.1e-04"};
  std::vector<std::vector<std::string>> orig = {{"x[0]=1.24010 x[1]=-0.99310 residual=9.8e-04"}};
  std::vector<std::string> unrolled = {"x[0]=1.22990 x[1]=-0.98120 residual=7.7e-04"};
  std::vector<std::string> mm;
  // 0.01 from the original: a fixed 1e-4 tolerance rejects it...
  EXPECT_FALSE(compareWithOriginalRuns(orig[0], {}, unrolled, 1e-4, 0, mm));
  mm.clear();
  // ...the reference rule does not: each number is within 4x the original's error.
  EXPECT_TRUE(compareWithReference(ref, orig, unrolled, ReferenceRule{}, mm))
      << (mm.empty() ? "" : mm[0]);
  // Ten times the original's error in one number is wrong.
  EXPECT_FALSE(compareWithReference(ref, orig, {"x[0]=1.29050 x[1]=-0.98120 residual=7.7e-04"},
                                    ReferenceRule{}, mm));
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_NE(mm[0].find("line 1 number 2: expected 1.23450 (reference program), got 1.29050"),
            std::string::npos)
      << mm[0];
}

// The session's build cache (issue 15 item 5): a second evaluation with the
// same cache builds nothing, prebuildProgramBundle builds ahead what an
// evaluation then finds built, and a changed source is built again. The
// build command counts its runs in a file.
TEST(ProgramEval, BuildCacheBuildsEachSourceOnce) {
  std::string dir = makeTempDir();
  ProgramBundle b = scriptBundle(dir);
  std::string count = dir + "/builds.n";
  b.build = {"/bin/sh", "-c", "echo x >> " + count + " && cp {src} {exe} && chmod +x {exe}"};
  writeScript(dir + "/original.sh", "echo checksum=1");
  writeScript(dir + "/a.sh", "echo checksum=1");
  b.variants.push_back({"a", "a.sh", false});
  auto builds = [&] {
    std::ifstream in(count);
    int n = 0;
    for (std::string l; std::getline(in, l);)
      ++n;
    return n;
  };
  ProgramEvalOptions opts;
  opts.jobs = 2;
  opts.maxRounds = 2;
  opts.buildCache = std::make_shared<ProgramBuildCache>();
  Expected<EvalResults> r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(builds(), 2);
  r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(builds(), 2) << "the second evaluation rebuilt something";
  EXPECT_EQ(r->find("a")->outcome, Outcome::Ok);
  EXPECT_TRUE(r->find("a")->timed);
  EXPECT_EQ(opts.buildCache->hits(), 2u);
  // A new source: prebuilt ahead, found built by the evaluation.
  writeScript(dir + "/b.sh", "echo checksum=1; echo note: b");
  b.variants.push_back({"b", "b.sh", false});
  prebuildProgramBundle(b, 2, *opts.buildCache);
  EXPECT_EQ(builds(), 3);
  r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(builds(), 3);
  EXPECT_EQ(r->find("b")->outcome, Outcome::Ok);
  // Another build command is another build.
  b.build.back() += " ";
  r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(builds(), 6);
  runProcess({"rm", "-rf", dir}, 30);
}

// Racing drops a variant whose interval lies below kMinFasterSpeedup (it
// can never count as faster), so a sure winner is left alone and decides
// the rounds.
TEST(ProgramEval, RacingDropsWhatCannotCountAsFaster) {
  std::string dir = makeTempDir();
  ProgramBundle b = timedBundle(dir, "50", {{"v10", "10"}, {"almost", "49.8"}}); // 1.004x
  ProgramEvalOptions opts;
  opts.jobs = 2;
  opts.maxRounds = 30;
  opts.stopWhenDecided = true;
  Expected<EvalResults> r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const VariantResult *almost = r->find("almost"), *fast = r->find("v10");
  ASSERT_TRUE(almost && fast && almost->timed && fast->timed);
  EXPECT_NEAR(almost->speedup, 50 / 49.8, 1e-6);
  EXPECT_FALSE(almost->faster);
  ASSERT_FALSE(almost->details.empty());
  EXPECT_NE(almost->details.back().find("below the 1.01x"), std::string::npos)
      << almost->details.back();
  EXPECT_LT(fast->samplesMs.size(), 30u);
  runProcess({"rm", "-rf", dir}, 30);
}

// A check's rounds end once checkDecided says so, never before
// minCheckRounds; without it they run to maxRounds.
TEST(ProgramEval, CheckRoundsEndWhenDecided) {
  std::string dir = makeTempDir();
  ProgramBundle b = timedBundle(dir, "50", {{"check", "25"}});
  ProgramEvalOptions opts;
  opts.jobs = 2;
  opts.maxRounds = 30;
  opts.minCheckRounds = 8;
  size_t asked = 0;
  opts.checkDecided = [&](const std::vector<double> &a, const std::vector<double> &c) {
    ++asked;
    EXPECT_EQ(a.size(), c.size());
    return c.size() >= 10;
  };
  Expected<EvalResults> r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->find("check")->samplesMs.size(), 10u);
  EXPECT_EQ(asked, 3u); // after rounds 8, 9 and 10
  opts.checkDecided = nullptr;
  r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->find("check")->samplesMs.size(), 30u);
  runProcess({"rm", "-rf", dir}, 30);
}

// The original's runs kept between evaluations (ProgramOriginalRuns): a
// second evaluation of the same original runs it only in its timing rounds,
// and judges by every run of it so far; another original is run afresh.
TEST(ProgramEval, OriginalRunsCarryOverBetweenEvaluations) {
  std::string dir = makeTempDir();
  ProgramBundle b = timedBundle(dir, "50", {{"v25", "25"}});
  writeScript(dir + "/original.sh",
              runCounter(dir + "/original.n") + "echo checksum=1; echo gpu_ms=50");
  auto runs = [&] {
    std::ifstream in(dir + "/original.n");
    int n = 0;
    in >> n;
    return n;
  };
  ProgramEvalOptions opts;
  opts.jobs = 2;
  opts.maxRounds = 3;
  opts.buildCache = std::make_shared<ProgramBuildCache>();
  opts.originalRuns = std::make_shared<ProgramOriginalRuns>();
  Expected<EvalResults> r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(runs(), 2 + 3); // its two verification runs, then the rounds
  EXPECT_EQ(opts.originalRuns->later.size(), 1u + 3u);
  r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(runs(), 5 + 3) << "the second evaluation ran the original before the rounds";
  EXPECT_EQ(r->find("v25")->outcome, Outcome::Ok);
  EXPECT_NEAR(r->find("v25")->speedup, 2.0, 1e-9);
  EXPECT_EQ(opts.originalRuns->later.size(), 4u + 3u);
  // Another original (its source changed): two verification runs again.
  writeScript(dir + "/original.sh",
              runCounter(dir + "/original.n") + "echo checksum=1; echo gpu_ms=50; echo note: v2");
  r = evaluateProgramBundle(b, opts);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(runs(), 8 + 2 + 3);
  runProcess({"rm", "-rf", dir}, 30);
}

// The program-level rule pools the original's error over a family (the
// numbers at one position of the lines of one shape), as replay pools over
// a buffer: test/gpu/roundoff/program.cu prints six row sums whose
// reassociation by warp-rows moved one of them more than 4x the original's
// error there, and the H100 run (2026-12-06) rejected it.
TEST(ReferenceRule, AFamilyOfNumbersIsJudgedByItsPooledError) {
  std::vector<std::string> ref = {"row 0 sum=1.000000e-02",  "row 1 sum=-2.000000e-02",
                                  "row 2 sum=3.000000e-02",  "row 3 sum=5.000000e-03",
                                  "row 4 sum=-1.500000e-02", "total=4.000000e+00"};
  // The original's errors: 3e-4, 1e-6 (a lucky row), -2e-4, 4e-4, 1e-4.
  std::vector<std::vector<std::string>> orig = {
      {"row 0 sum=1.030000e-02", "row 1 sum=-2.000100e-02", "row 2 sum=2.980000e-02",
       "row 3 sum=5.400000e-03", "row 4 sum=-1.490000e-02", "total=4.000000e+00"}};
  // The reassociated sums: errors of the same size, but 2.5e-4 on the lucky
  // row, 250x its original's error there.
  std::vector<std::string> warp = {"row 0 sum=9.800000e-03",  "row 1 sum=-1.975000e-02",
                                   "row 2 sum=3.030000e-02",  "row 3 sum=4.700000e-03",
                                   "row 4 sum=-1.520000e-02", "total=4.000000e+00"};
  std::vector<std::string> mm;
  EXPECT_TRUE(compareWithReference(ref, orig, warp, ReferenceRule{}, mm))
      << (mm.empty() ? "" : mm[0]);
  // A row far beyond the family's error fails, named.
  std::vector<std::string> fault = warp;
  fault[3] = "row 3 sum=2.500000e-02";
  EXPECT_FALSE(compareWithReference(ref, orig, fault, ReferenceRule{}, mm));
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_NE(mm[0].find("line 4 number 2: expected 5.000000e-03"), std::string::npos) << mm[0];
  // The family's pool does not reach other shapes: total is exact in the
  // original, so its own floor (rel 1e-4 of 4, plus the printed unit) holds.
  mm.clear();
  std::vector<std::string> offTotal = warp;
  offTotal[5] = "total=4.001000e+00";
  EXPECT_FALSE(compareWithReference(ref, orig, offTotal, ReferenceRule{}, mm));
  // Every row 3.6 times the family's largest original error (4e-4) away:
  // each inside the pooled allowance, the family's RMS error not.
  mm.clear();
  std::vector<std::string> worse = {"row 0 sum=1.144000e-02",  "row 1 sum=-2.144000e-02",
                                    "row 2 sum=3.144000e-02",  "row 3 sum=3.560000e-03",
                                    "row 4 sum=-1.356000e-02", "total=4.000000e+00"};
  EXPECT_FALSE(compareWithReference(ref, orig, worse, ReferenceRule{}, mm));
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_NE(mm[0].find("RMS error"), std::string::npos) << mm[0];
}
