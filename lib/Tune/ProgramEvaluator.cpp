// Program bundles for the tuner, and the in-process program evaluator.
#include "cudal1/Tune/ProgramEvaluator.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Process.h"
#include "cudal1/Rewrite/PlanDriver.h"

#include "llvm/Support/FileSystem.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <thread>

namespace cudal1 {

namespace {

std::string dirName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

Status writeText(const std::string &path, const std::string &text) {
  return writeFileAtomically(path, text.data(), text.size());
}

/// Headers the file includes with quotes from its own directory (one level:
/// enough for a program and its local helpers, e.g. the corpus' common.h).
std::vector<std::string> localIncludes(const std::string &file, const std::string &text) {
  std::vector<std::string> out;
  static const std::regex inc("^\\s*#\\s*include\\s*\"([^\"/]+)\"");
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, inc)) {
      std::string p = dirName(file) + "/" + m[1].str();
      struct stat st;
      if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        out.push_back(m[1].str());
    }
  }
  return out;
}

} // namespace

Expected<ProgramBundle> writeProgramBundle(const std::string &dir, const ProgramSetup &setup,
                                           const std::vector<Candidate> &cands,
                                           const std::vector<std::string> &keys,
                                           const std::vector<std::string> &names) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return makeError("cannot create ", dir, ": ", ec.message());
  Expected<std::vector<uint8_t>> orig = readWholeFile(setup.originalFile);
  if (!orig.ok())
    return orig.error();
  std::string text(orig->begin(), orig->end());
  if (Status s_ = writeText(dir + "/original.cu", text); !s_.ok())
    return s_;
  for (const std::string &h : localIncludes(setup.originalFile, text)) {
    Expected<std::vector<uint8_t>> hd = readWholeFile(dirName(setup.originalFile) + "/" + h);
    if (!hd.ok())
      return hd.error();
    if (Status s_ = writeText(dir + "/" + h, std::string(hd->begin(), hd->end())); !s_.ok())
      return s_;
  }
  ProgramBundle b;
  b.dir = dir;
  b.build = setup.build;
  b.run = setup.run;
  b.timeRegex = setup.timeRegex;
  b.ignoreRegex = setup.ignoreRegex;
  b.rel = setup.rel;
  b.original = {"original", "original.cu", false};
  b.original.hash = variantHash("", text);
  if (!setup.referenceSource.empty()) {
    if (Status s_ = writeText(dir + "/reference.cu", setup.referenceSource); !s_.ok())
      return s_;
    b.reference = "reference.cu";
  }
  std::string plans = "# id\tkernel-key\tkernel\tplan\thash\n";
  for (const Candidate &c : cands) {
    if (Status s_ = writeText(dir + "/" + c.id + ".cu", c.variant.source); !s_.ok())
      return s_;
    // Libraries the plan's steps need (the library pass: cublas).
    ProgramVariant v{c.id, c.id + ".cu", c.variant.fastMath, c.variant.links};
    // The same hash in the manifest, plans.tsv and (through cudal1-eval)
    // results.txt: checkResultsMatch refuses a result measured on anything else.
    v.hash = variantHash(c.planText(), c.variant.source);
    b.variants.push_back(v);
    bool one = c.kernel < keys.size();
    plans += c.id + "\t" + (one ? keys[c.kernel] : "*") + "\t" + (one ? names[c.kernel] : "*") +
             "\t" + c.planText() + "\t" + v.hash + "\n";
  }
  if (Status s_ = writeText(dir + "/plans.tsv", plans); !s_.ok())
    return s_;
  if (Status s_ = writeProgramManifest(b, dir); !s_.ok())
    return s_;
  return b;
}

Expected<std::vector<BundlePlan>> readBundlePlans(const std::string &dir) {
  Expected<std::vector<uint8_t>> data = readWholeFile(dir + "/plans.tsv");
  if (!data.ok())
    return data.error();
  std::vector<BundlePlan> out;
  std::istringstream in(std::string(data->begin(), data->end()));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#')
      continue;
    BundlePlan p;
    std::istringstream ls(line);
    // A fifth field, the variant hash, since issue 19 (older files have 4).
    if (!std::getline(ls, p.id, '\t') || !std::getline(ls, p.kernelKey, '\t') ||
        !std::getline(ls, p.kernel, '\t') || !std::getline(ls, p.plan, '\t') ||
        (std::getline(ls, p.hash) && !isVariantHash(p.hash)))
      return makeError(dir, "/plans.tsv:", n,
                       ": expected 4 or 5 tab-separated fields (id, kernel key, kernel, "
                       "plan, hash)");
    out.push_back(p);
  }
  return out;
}

Status checkResultsMatch(const std::string &dir, const std::vector<BundlePlan> &plans,
                         const EvalResults &results) {
  Expected<ProgramBundle> b = readProgramBundle(dir);
  if (!b.ok())
    return b.error();
  const std::string where = dir + "/results.txt";
  // One variant: its result's hash against the plan and source there now.
  auto check = [&](const ProgramVariant &v, const std::string &planText,
                   const std::string &tsvHash) -> Status {
    const VariantResult *r = results.find(v.id);
    if (!r)
      return Status::success(); // not evaluated: nothing to import
    if (r->hash.empty())
      return makeError(where, ": the result for '", v.id,
                       "' carries no hash: it predates result hashes (issue 19) or its "
                       "bundle does; emit the bundle again and re-run cudal1-eval ",
                       dir);
    Expected<std::vector<uint8_t>> src = readWholeFile(b->path(v.source));
    if (!src.ok())
      return src.error();
    std::string now = variantHash(planText, std::string(src->begin(), src->end()));
    if (r->hash != now || (!tsvHash.empty() && tsvHash != now) ||
        (!v.hash.empty() && v.hash != now))
      return makeError(where, ": the result for '", v.id, "' was measured on another ",
                       r->hash.compare(0, 16, now, 0, 16) != 0 ? "plan" : "source",
                       " than the bundle's ", v.id, " now holds",
                       planText.empty() ? std::string() : " ('" + planText + "')", " (hash ",
                       r->hash, ", expected ", now, "); re-run cudal1-eval ", dir);
    return Status::success();
  };
  if (Status s = check(b->original, "", ""); !s.ok())
    return s;
  for (const BundlePlan &p : plans) {
    const ProgramVariant *v = nullptr;
    for (const ProgramVariant &x : b->variants)
      if (x.id == p.id)
        v = &x;
    if (!v)
      return makeError(dir, "/plans.tsv: variant '", p.id, "' is not in the manifest");
    if (Status s = check(*v, p.plan, p.hash); !s.ok())
      return s;
  }
  return Status::success();
}

Measurement candidateMeasurement(const VariantResult &v, const VariantResult &original) {
  Measurement m = v;
  m.baselineMs = original.timeMs;
  m.baselineSamplesMs = original.samplesMs;
  m.details.insert(m.details.end(), v.mismatches.begin(), v.mismatches.end());
  return m;
}

ProgramEvaluator::ProgramEvaluator(ProgramSetup s, ProgramEvalOptions o, std::vector<std::string> k,
                                   std::vector<std::string> n)
    : setup(std::move(s)), options(std::move(o)), keys(std::move(k)), names(std::move(n)) {
  if (!options.referenceCache)
    options.referenceCache = std::make_shared<ProgramReferenceRun>();
  if (!options.buildCache)
    options.buildCache = std::make_shared<ProgramBuildCache>();
  if (!options.originalRuns)
    options.originalRuns = std::make_shared<ProgramOriginalRuns>();
}

void ProgramEvaluator::prepare(const std::vector<Candidate> &cands) {
  Expected<std::string> dir = makeTempDirectory("cudal1-tune");
  if (!dir.ok())
    return; // evaluate() builds them
  Expected<ProgramBundle> b = writeProgramBundle(*dir, setup, cands, keys, names);
  if (b.ok()) {
    unsigned cores = std::max(2u, std::thread::hardware_concurrency());
    prebuildProgramBundle(*b, int(cores / 2), *options.buildCache);
  }
  llvm::sys::fs::remove_directories(*dir, /*IgnoreErrors=*/true);
}

llvm::Expected<std::vector<Measurement>>
ProgramEvaluator::evaluate(const std::vector<Candidate> &cands) {
  auto fail = [](const Status &s) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), s.message());
  };
  Expected<std::string> tmp = makeTempDirectory("cudal1-tune");
  if (!tmp.ok())
    return fail(tmp.error());
  std::string dir = *tmp;
  ++batch;
  // The bundle as written: its sources are files for the user's build
  // command, its manifest is not read back.
  Expected<ProgramBundle> b = writeProgramBundle(dir, setup, cands, keys, names);
  if (!b.ok())
    return fail(b.error());
  ProgramEvalOptions o = options;
  o.seed += batch;
  Expected<EvalResults> res = evaluateProgramBundle(*b, o);
  if (!options.keepWork)
    llvm::sys::fs::remove_directories(dir, /*IgnoreErrors=*/true);
  if (!res.ok())
    return fail(res.error());
  gpu = res->gpu; // the evaluator asked nvidia-smi already
  buildWall += res->buildSeconds;
  runWall += res->wallSeconds - res->buildSeconds;
  originalWall += res->originalSeconds;
  verifyWall += res->verifySeconds;
  roundsWall += res->roundsSeconds;
  original = res->results.front();
  std::vector<Measurement> out;
  const VariantResult &orig = res->results.front();
  for (const Candidate &c : cands) {
    const VariantResult *v = res->find(c.id);
    out.push_back(v ? candidateMeasurement(*v, orig) : Measurement{});
  }
  return out;
}

} // namespace cudal1
