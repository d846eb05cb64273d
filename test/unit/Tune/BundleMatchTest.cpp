// Results are bound to the plan and source they measured (issue 19): the
// split path's import refuses a result whose hash does not match the bundle.
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Tune/ProgramEvaluator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

using namespace cudal1;

namespace {

Candidate candidate(const std::string &id, const std::string &planText, const std::string &source) {
  Candidate c;
  c.id = id;
  c.kernel = 0;
  llvm::Expected<Plan> p = parsePlan(planText);
  EXPECT_TRUE(bool(p));
  if (p)
    c.variant.plan = *p;
  else
    llvm::consumeError(p.takeError());
  c.variant.source = source;
  return c;
}

struct Bundle {
  std::string dir;
  ProgramSetup setup;
  Bundle() {
    char tmpl[] = "/tmp/cudal1-bundle-match.XXXXXX";
    dir = mkdtemp(tmpl);
    setup.originalFile = dir + "/app.cu";
    put("app.cu", "int main() {}\n");
    setup.build = {"sh", "build.sh", "{src}", "{exe}"};
  }
  ~Bundle() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  void put(const std::string &rel, const std::string &text) {
    Status s = writeFileAtomically(dir + "/" + rel, text.data(), text.size());
    EXPECT_TRUE(s.ok()) << s.message();
  }
  void emit(const std::vector<Candidate> &cands) {
    Expected<ProgramBundle> b = writeProgramBundle(dir + "/b", setup, cands, {"k1"}, {"sum"});
    ASSERT_TRUE(b.ok()) << b.error().message();
    // What was written reads back as it was returned.
    Expected<ProgramBundle> read = readProgramBundle(dir + "/b");
    ASSERT_TRUE(read.ok()) << read.error().message();
    EXPECT_EQ(formatProgramManifest(*read), formatProgramManifest(*b));
    EXPECT_EQ(read->dir, b->dir);
  }
  /// What cudal1-eval writes: a result per variant with the manifest's plan
  /// hash and the hash of the source it built.
  EvalResults evaluate() {
    Expected<ProgramBundle> b = readProgramBundle(dir + "/b");
    EXPECT_TRUE(b.ok()) << b.error().message();
    EvalResults r;
    std::vector<ProgramVariant> all = {b->original};
    all.insert(all.end(), b->variants.begin(), b->variants.end());
    for (const ProgramVariant &v : all) {
      VariantResult x;
      x.id = v.id;
      x.outcome = Outcome::Ok;
      Expected<std::vector<uint8_t>> src = readWholeFile(b->path(v.source));
      x.hash = measuredHash(v.hash, std::string(src->begin(), src->end()));
      r.results.push_back(x);
    }
    return r;
  }
  std::string check(const EvalResults &r) {
    Expected<std::vector<BundlePlan>> plans = readBundlePlans(dir + "/b");
    if (!plans.ok())
      return plans.error().message();
    Status s = checkResultsMatch(dir + "/b", *plans, r);
    return s.ok() ? "ok" : s.message();
  }
};

} // namespace

TEST(BundleMatch, ResultsOfTheBundleMatch) {
  Bundle b;
  b.emit({candidate("v000", "@sum: warp-reduce", "// warp\n"),
          candidate("v001", "@sum: grid-stride", "// grid\n")});
  Expected<std::vector<BundlePlan>> plans = readBundlePlans(b.dir + "/b");
  ASSERT_TRUE(plans.ok());
  ASSERT_EQ(plans->size(), 2u);
  EXPECT_EQ((*plans)[0].hash, variantHash("@sum: warp-reduce", "// warp\n"));
  EvalResults r = b.evaluate();
  EXPECT_EQ(r.find("v000")->hash, (*plans)[0].hash);
  EXPECT_EQ(b.check(r), "ok");
  // A variant without a result (not evaluated) is no mismatch.
  r.results.pop_back();
  EXPECT_EQ(b.check(r), "ok");
}

// The reproduction: evaluate, emit a new bundle into the same
// directory with other plans, import: the old result was taken by id.
TEST(BundleMatch, ANewBundleInTheSameDirectoryRefusesOldResults) {
  Bundle b;
  b.emit({candidate("v000", "@sum: warp-reduce", "// warp\n")});
  EvalResults old = b.evaluate();
  b.emit({candidate("v000", "@sum: grid-stride", "// grid\n")});
  std::string e = b.check(old);
  EXPECT_NE(e.find("results.txt: the result for 'v000' was measured on another plan than "
                   "the bundle's v000 now holds ('@sum: grid-stride')"),
            std::string::npos)
      << e;
  EXPECT_EQ(b.check(b.evaluate()), "ok");
}

TEST(BundleMatch, AnEditedSourceOrOriginalIsRefused) {
  Bundle b;
  b.emit({candidate("v000", "@sum: warp-reduce", "// warp\n")});
  EvalResults r = b.evaluate();
  b.put("b/v000.cu", "// warp, edited\n");
  EXPECT_NE(b.check(r).find("the result for 'v000' was measured on another source"),
            std::string::npos);
  b.put("b/v000.cu", "// warp\n");
  EXPECT_EQ(b.check(r), "ok");
  b.put("b/original.cu", "int main() { return 1; }\n");
  EXPECT_NE(b.check(r).find("the result for 'original' was measured on another source"),
            std::string::npos);
}

TEST(BundleMatch, ResultsWithoutHashesAreRefused) {
  Bundle b;
  b.emit({candidate("v000", "@sum: warp-reduce", "// warp\n")});
  EvalResults r = b.evaluate();
  r.results[1].hash.clear();
  EXPECT_NE(b.check(r).find("the result for 'v000' carries no hash: it predates result "
                            "hashes"),
            std::string::npos);
}

TEST(BundleMatch, OldPlansTsvStillReads) {
  Bundle b;
  b.emit({candidate("v000", "@sum: warp-reduce", "// warp\n")});
  b.put("b/plans.tsv", "# id\tkernel-key\tkernel\tplan\nv000\tk1\tsum\t@sum: warp-reduce\n");
  Expected<std::vector<BundlePlan>> plans = readBundlePlans(b.dir + "/b");
  ASSERT_TRUE(plans.ok()) << plans.error().message();
  EXPECT_EQ((*plans)[0].plan, "@sum: warp-reduce");
  EXPECT_EQ((*plans)[0].hash, "");
  // The manifest's hash still binds the result.
  EXPECT_EQ(b.check(b.evaluate()), "ok");
  b.put("b/plans.tsv", "v000\tk1\tsum\t@sum: warp-reduce\tnot-a-hash\n");
  EXPECT_FALSE(readBundlePlans(b.dir + "/b").ok());
}
