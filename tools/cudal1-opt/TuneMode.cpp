// The tuning modes of cudal1-opt: the driver, the program evaluator and the
// tuning database put together.
#include "TuneMode.h"

#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/Process.h"
#include "cudal1/Eval/Results.h"
#include "cudal1/Report/TuneReport.h"
#include "cudal1/Support/AtomicFile.h"
#include "cudal1/Tune/ProgramEvaluator.h"
#include "cudal1/Tune/Tuner.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <ctime>
#include <map>
#include <unistd.h>

using namespace llvm;

namespace cudal1 {

namespace {

enum ExitCode { Ok = 0, InputError = 1, UsageError = 2, NothingToDo = 3 };

raw_ostream &error() { return WithColor::error(errs(), "cudal1-opt"); }
raw_ostream &note() { return WithColor::note(errs(), "cudal1-opt"); }

ProgramSetup setupFor(const RewriteInput &in, const TuneModeOptions &o) {
  ProgramSetup s;
  s.originalFile = in.file;
  if (!o.buildCmd.empty())
    s.build = splitWords(o.buildCmd);
  else
    s.build = {"nvcc", "-O3", "-arch=" + o.arch, "{src}", "-o", "{exe}"};
  if (!o.runCmd.empty())
    s.run = splitWords(o.runCmd);
  s.timeRegex = o.timeRegex;
  s.ignoreRegex = o.ignoreRegex;
  s.rel = o.relTol;
  return s;
}

std::string sessionId() {
  char buf[64];
  std::snprintf(buf, sizeof buf, "tune-%lld-%d", (long long)std::time(nullptr),
                int(::getpid()));
  return buf;
}

/// Every evaluated variant becomes a measurement. The final plan's parts
/// become their kernels' best choices for this GPU (shape "*": program-level
/// runs do not separate launch shapes); every other kernel measured here
/// gets the empty plan, also over an earlier session's choice: the plugin
/// applies a file's best choices together, and together only the final plan
/// was verified. A plan faster alone stays in the measurements.
llvm::Error recordAll(const std::string &dbPath, const TuneSpace &space,
                const TuneResult &r, const std::string &arch) {
  llvm::Expected<TuneDB> db = TuneDB::open(dbPath);
  if (!db)
    return db.takeError();
  GpuKey gpu{r.gpu.empty() ? "unknown" : r.gpu, arch};
  std::string session = sessionId();
  std::vector<Measurement> ms;
  for (const TuneRecord &rec : r.records) {
    if (rec.result.outcome == "refused")
      continue;
    Measurement m;
    if (rec.candidate.kernel < space.kernels.size()) {
      m.kernelKey = space.kernels[rec.candidate.kernel].key;
      m.kernelName = space.kernels[rec.candidate.kernel].name;
    } else {
      // The kernels' best plans measured together belong to no one kernel:
      // the file's entry, as the host code has one (never a best choice).
      m.kernelKey = "program:" + llvm::sys::path::filename(space.file).str();
      m.kernelName = "(combination)";
    }
    m.plan = rec.candidate.plan;
    m.gpu = gpu;
    m.shape = kAnyShape.str();
    m.outcome = rec.result.outcome;
    if (rec.result.timed) {
      m.speedup = rec.result.speedup;
      m.speedupLo = rec.result.lo;
      m.speedupHi = rec.result.hi;
      m.timeMs = rec.result.timeMs;
      m.baselineMs = rec.result.baselineMs;
    }
    m.session = session;
    ms.push_back(m);
  }
  llvm::Expected<std::vector<int64_t>> ids = db->recordMeasurements(ms);
  if (!ids)
    return ids.takeError();
  for (const KernelBest &b : r.best) {
    if (b.tried == 0)
      continue; // not measured here: an earlier choice stands
    BestChoice c;
    c.kernelKey = b.key;
    c.gpu = gpu;
    c.shape = kAnyShape.str();
    if (b.inFinal) {
      c.plan = b.plan;
      c.speedup = b.speedup;
      c.speedupLo = b.lo;
      c.speedupHi = b.hi;
      for (size_t i = 0; i < ms.size(); ++i)
        if (ms[i].kernelKey == b.key && ms[i].plan == b.plan)
          c.measurementId = (*ids)[i];
    }
    if (llvm::Error e = db->setBest(c))
      return e;
  }
  return llvm::Error::success();
}

void printSummary(const TuneResult &r) {
  raw_ostream &os = outs();
  os << "cudal1 tuning: " << r.rounds << " round(s) on "
     << (r.gpu.empty() ? "an unknown GPU" : r.gpu) << "\n";
  os << format("%-24s %6s %7s  %-28s %s\n", (const char *)"kernel",
               (const char *)"tried", (const char *)"correct",
               (const char *)"speedup [95% interval]", (const char *)"best plan");
  for (const KernelBest &b : r.best) {
    std::string sp = b.plan.empty()
                         ? "-"
                         : formatv("{0:F3}x [{1:F3}, {2:F3}]", b.speedup, b.lo, b.hi)
                               .str();
    os << format("%-24s %6u %7u  %-28s %s\n", b.kernel.c_str(), b.tried,
                 b.correct, sp.c_str(),
                 b.plan.empty() ? "(original kept)" : b.plan.c_str());
  }
  std::map<std::string, unsigned> outcomes;
  for (const TuneRecord &rec : r.records)
    ++outcomes[rec.result.outcome];
  os << "variants:";
  for (const auto &o : outcomes)
    os << " " << o.first << "=" << o.second;
  os << "\n";
  if (r.finalPlan.empty())
    os << "result: no variant was faster; the original is kept\n";
  else
    os << formatv("result: {0:F3}x [{1:F3}, {2:F3}] (whole program) with '{3}'\n",
                  r.finalSpeedup, r.finalLo, r.finalHi, r.finalPlan);
  os << "speedups are of the whole program's measured time with the plan applied\n";
}

/// What the report needs beyond the tuner's result.
struct ReportContext {
  std::string date;
  std::string timeRegex;
  VariantResult original; ///< its roofline floor
  std::optional<RooflineCeilings> ceilings;
};

ReportData makeReport(const RewriteInput &in, const TuneModeOptions &o,
                      const TuneSpace &space, const TuneResult &r,
                      const ReportContext &ctx, const std::string &tuned) {
  ReportData d;
  d.sourceFile = in.file;
  d.outputFile = o.outputFile;
  d.mode = o.mode == TuneModeOptions::Tune ? "--tune"
                                           : "--import-results " + o.bundleDir;
  d.date = ctx.date;
  d.programTimes = !ctx.timeRegex.empty();
  d.timeSource =
      d.programTimes
          ? "the program's own report of its GPU time (time regex '" +
                ctx.timeRegex + "'), median of bucket averages over "
                                "interleaved rounds"
          : "whole-process wall time (no time regex), median of bucket "
            "averages over interleaved rounds";
  addTuneResult(d, space, r);
  d.originalSource = in.code;
  d.tunedSource = tuned;
  const VariantResult &orig = ctx.original;
  d.floor.known = orig.haveFloor;
  d.floor.bytes = orig.floorBytes;
  d.floor.flops = orig.floorFlops;
  if (!orig.floorDtype.empty())
    d.floor.dtype = orig.floorDtype;
  d.ceilings = ctx.ceilings;
  if (!d.ceilings)
    d.ceilings = nominalCeilings(r.gpu);
  if (!d.ceilings)
    d.ceilingsNote = "no ceilings are known for the GPU '" +
                     (r.gpu.empty() ? std::string("unknown") : r.gpu) +
                     "': pass --report-ceilings FILE with the output of "
                     "bench/roofline/ceilings run on it";
  return d;
}

/// The report must not replace the input or the tuned output.
bool sameFile(const std::string &a, const std::string &b) {
  if (a == b)
    return true;
  bool eq = false;
  return !sys::fs::equivalent(a, b, eq) && eq;
}

int finish(const RewriteInput &in, const TuneModeOptions &o,
           const TuneSpace &space, const TuneResult &r,
           const ReportContext &ctx) {
  printSummary(r);
  if (!o.dbPath.empty()) {
    if (llvm::Error e = recordAll(o.dbPath, space, r, o.arch)) {
      error() << "recording in the tuning database: " << toString(std::move(e))
              << "\n";
      return InputError;
    }
    outs() << "recorded in " << o.dbPath << "\n";
  }
  std::string text = in.code;
  if (!r.finalPlan.empty()) {
    llvm::Expected<std::string> v = derivePlan(in, r.finalPlan);
    if (!v) {
      error() << "the chosen plan no longer applies: " << toString(v.takeError())
              << "\n";
      return InputError;
    }
    text = std::move(*v);
  }
  if (!o.reportFile.empty()) {
    if (llvm::Error e = writeReport(
            o.reportFile, makeReport(in, o, space, r, ctx, text))) {
      error() << "writing the report: " << toString(std::move(e)) << "\n";
      return InputError;
    }
    outs() << "report written to " << o.reportFile << "\n";
  }
  if (o.outputFile != "-" || !r.finalPlan.empty())
    if (llvm::Error e = writeFileAtomically(o.outputFile, text)) {
      error() << toString(std::move(e)) << "\n";
      return InputError;
    }
  return Ok;
}

/// What one evaluated bundle said, after absorbing it into the tuner.
struct BundleRound {
  std::string gpu, date;
  VariantResult original;
};

/// Reads an evaluated bundle's plans and results and gives them to the
/// tuner as one round. A plan whose kernel changed since is ignored with a
/// note; a plan's steps are found again in the space (the heuristic extends
/// measured plans step by step).
cudal1::Expected<BundleRound> absorbBundle(const std::string &dir,
                                           const TuneSpace &space, Tuner &tuner) {
  cudal1::Expected<std::vector<BundlePlan>> plans = readBundlePlans(dir);
  if (!plans.ok())
    return plans.error();
  cudal1::Expected<EvalResults> res = readResults(dir + "/results.txt");
  if (!res.ok())
    return res.error();
  BundleRound round{res->gpu, res->date, res->results.front()};
  std::vector<Candidate> cands;
  std::vector<CandidateResult> results;
  for (const BundlePlan &p : *plans) {
    Candidate c;
    c.id = p.id;
    c.plan = p.plan;
    c.kernel = kCombination;
    for (size_t k = 0; k < space.kernels.size(); ++k)
      if (space.kernels[k].key == p.kernelKey)
        c.kernel = k;
    // "*": the kernels' best plans together; the tuner checks that its parts
    // are still the kernels' bests before choosing it.
    if (p.kernelKey != "*") {
      if (c.kernel == kCombination) {
        note() << dir << ": " << p.id << ": kernel " << p.kernel
               << " changed since the bundle was written; its result is "
                  "ignored\n";
        continue;
      }
      SmallVector<StringRef, 4> pieces;
      StringRef(p.plan).split(pieces, "; ");
      for (StringRef piece : pieces)
        for (const TuneStep &st : space.kernels[c.kernel].steps)
          if (st.text() == piece.trim()) {
            c.steps.push_back(st);
            break;
          }
    }
    const VariantResult *v = res->find(p.id);
    cands.push_back(c);
    results.push_back(v ? toCandidateResult(*v, round.original) : CandidateResult{});
  }
  tuner.absorb(cands, results);
  return round;
}

} // namespace

int runTuneMode(const RewriteInput &in, const TuneModeOptions &o) {
  ReportContext ctx;
  if (!o.reportFile.empty()) {
    // Checked before tuning, which takes long.
    if (o.reportFile == "-" || sameFile(o.reportFile, in.file) ||
        (o.outputFile != "-" && sameFile(o.reportFile, o.outputFile))) {
      error() << "--report " << o.reportFile
              << ": needs a file of its own (not standard output, the input "
                 "or -o)\n";
      return UsageError;
    }
    if (!o.reportCeilings.empty()) {
      ErrorOr<std::unique_ptr<MemoryBuffer>> buf =
          MemoryBuffer::getFile(o.reportCeilings);
      if (!buf) {
        error() << "cannot read '" << o.reportCeilings
                << "': " << buf.getError().message() << "\n";
        return InputError;
      }
      llvm::Expected<RooflineCeilings> c =
          parseCeilings((*buf)->getBuffer(), o.reportCeilings);
      if (!c) {
        error() << toString(c.takeError()) << "\n";
        return InputError;
      }
      ctx.ceilings = *c;
    }
  }
  std::unique_ptr<SearchStrategy> strategy = makeStrategy(o.strategy, o.seed);
  if (!strategy) {
    error() << "--strategy=" << o.strategy
            << ": expected 'heuristic' or 'random'\n";
    return UsageError;
  }
  llvm::Expected<TuneSpace> space = collectTuneSpace(in);
  if (!space) {
    errs() << toString(space.takeError()) << "\n";
    return InputError;
  }
  if (space->kernels.empty()) {
    error() << in.file << ": no CUDA kernels to tune\n";
    return NothingToDo;
  }
  std::vector<std::string> keys, names;
  for (const TuneKernel &k : space->kernels) {
    keys.push_back(k.key);
    names.push_back(k.name);
  }
  TuneOptions to;
  to.budget = o.budget;
  to.timeLimit = o.timeLimit;
  bool terminal = ::isatty(2);
  if (terminal)
    to.progress = [](const std::string &m) {
      errs() << "\r\033[K[cudal1-opt] " << m;
      errs().flush();
    };
  Tuner tuner(in, *space, *strategy, to);
  ProgramSetup setup = setupFor(in, o);

  // Earlier rounds of the split path, evaluated.
  for (const std::string &dir : o.continueFrom) {
    cudal1::Expected<BundleRound> r = absorbBundle(dir, *space, tuner);
    if (!r.ok()) {
      error() << r.error().message() << "\n";
      return InputError;
    }
  }

  if (o.mode == TuneModeOptions::EmitBundle) {
    // One round of the whole budget: the strategy learns only from the
    // rounds given with --continue.
    std::vector<Candidate> cands = tuner.proposeRound(o.budget);
    // With earlier rounds: their kernels' bests together, one more variant
    // (the import chooses it only if it is verified and surer than the
    // best single plan, as --tune does).
    if (std::optional<Candidate> c = tuner.combination())
      cands.push_back(std::move(*c));
    if (terminal)
      errs() << "\r\033[K";
    if (cands.empty()) {
      error() << "no legal plan to try in " << in.file << "\n";
      return NothingToDo;
    }
    Status s = writeProgramBundle(o.bundleDir, setup, cands, keys, names);
    if (!s.ok()) {
      error() << s.message() << "\n";
      return InputError;
    }
    outs() << "wrote " << cands.size() << " variants to " << o.bundleDir
           << "; evaluate them on a GPU machine with\n  cudal1-eval "
           << o.bundleDir << "\nthen: cudal1-opt " << in.file
           << " --import-results " << o.bundleDir << " -o OUT.cu\n";
    return Ok;
  }

  if (o.mode == TuneModeOptions::ImportResults) {
    cudal1::Expected<BundleRound> res = absorbBundle(o.bundleDir, *space, tuner);
    if (!res.ok()) {
      error() << res.error().message() << "\n";
      return InputError;
    }
    TuneResult r = tuner.summary();
    r.gpu = res->gpu;
    ctx.date = res->date;
    ctx.original = res->original;
    if (cudal1::Expected<ProgramBundle> b = readProgramBundle(o.bundleDir);
        b.ok())
      ctx.timeRegex = b->timeRegex;
    return finish(in, o, *space, r, ctx);
  }

  std::string gpu = queryGpuName();
  if (gpu.empty()) {
    error() << "no GPU on this machine (nvidia-smi found none): variants "
               "cannot be measured here. Use --emit-bundle DIR, run "
               "cudal1-eval DIR on a GPU machine, then --import-results DIR\n";
    return InputError;
  }
  ProgramEvalOptions po;
  po.raceKeep = int(o.race);
  po.screenRuns = int(std::max(1u, o.screen));
  ProgramEvaluator ev(setup, po, keys, names);
  llvm::Expected<TuneResult> r = tuner.run(ev);
  if (terminal)
    errs() << "\r\033[K";
  if (!r) {
    error() << toString(r.takeError()) << "\n";
    return InputError;
  }
  ctx.date = utcTimestamp();
  ctx.timeRegex = setup.timeRegex;
  ctx.original = ev.lastOriginal();
  return finish(in, o, *space, *r, ctx);
}

} // namespace cudal1
