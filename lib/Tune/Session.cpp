// One tuning session, stage by stage (docs/Architecture.md): the legal
// space, the exemplars of earlier sessions, rounds of proposals measured by
// an evaluator (or written to and read from a bundle), the recording rule,
// the tuned source and the report.
#include "cudal1/Tune/Session.h"
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/ContextHolder.h"
#include "cudal1/Eval/Process.h"
#include "cudal1/Eval/ProgramBundle.h"
#include "cudal1/Eval/Stats.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Report/TuneReport.h"
#include "cudal1/Rewrite/Reference.h"
#include "cudal1/Support/AtomicFile.h"
#include "cudal1/Tune/Record.h"
#include "cudal1/Tune/Reproduce.h"
#include "cudal1/Tune/SplitPath.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

namespace cudal1 {

namespace {

/// The context holder's own limit: it ends with the session (its input
/// closes), this is only for a holder whose session hangs.
constexpr double kHoldContextSeconds = 6 * 3600;

SessionStatus failed(SessionStatus::Kind kind, std::string message) {
  return {kind, std::move(message)};
}

/// What the report needs beyond the tuner's result.
struct ReportContext {
  std::string date;
  std::string timeRegex;
  VariantResult original; ///< its roofline floor
  std::optional<RooflineCeilings> ceilings;
  std::string timings; ///< formatTimings of a --tune run; empty otherwise
};

ReportData makeReport(const RewriteInput &in, const SessionOptions &o, const TuneSpace &space,
                      const TuneResult &r, const ReportContext &ctx, const std::string &tuned) {
  ReportData d;
  d.sourceFile = in.file;
  d.outputFile = o.outputFile;
  d.mode = o.mode == SessionOptions::Tune ? "--tune" : "--import-results " + o.bundleDir;
  d.date = ctx.date;
  d.programTimes = !ctx.timeRegex.empty();
  d.timeSource = d.programTimes
                     ? "the program's own report of its GPU time (time regex '" + ctx.timeRegex +
                           "'), median of bucket averages over "
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
  return !llvm::sys::fs::equivalent(a, b, eq) && eq;
}

/// The end of every judging session: the summary, the database, the tuned
/// source, the report.
SessionStatus finish(const RewriteInput &in, const SessionOptions &o, TuneDB *db,
                     const TuneSpace &space, const TuneResult &r, const ReportContext &ctx) {
  llvm::raw_ostream &out = *o.out;
  out << formatSessionSummary(r) << ctx.timings;
  if (db) {
    if (llvm::Error e = recordSession(*db, space, r, o.arch, newSessionId()))
      return failed(SessionStatus::InputError,
                    "recording in the tuning database: " + llvm::toString(std::move(e)));
    out << "recorded in " << db->path() << "\n";
  }
  std::string text = in.code;
  if (!r.finalPlan.steps.empty()) {
    llvm::Expected<std::string> v = applyPlan(in, r.finalPlan);
    if (!v)
      return failed(SessionStatus::InputError,
                    "the chosen plan no longer applies: " + llvm::toString(v.takeError()));
    text = std::move(*v);
  }
  if (!o.reportFile.empty()) {
    if (llvm::Error e = writeReport(o.reportFile, makeReport(in, o, space, r, ctx, text)))
      return failed(SessionStatus::InputError,
                    "writing the report: " + llvm::toString(std::move(e)));
    out << "report written to " << o.reportFile << "\n";
  }
  if (o.outputFile != "-" || !r.finalPlan.steps.empty())
    if (llvm::Error e = writeFileAtomically(o.outputFile, text))
      return failed(SessionStatus::InputError, llvm::toString(std::move(e)));
  return {};
}

/// The surest verified, faster record judged as a whole program whose plan
/// is not `exclude`.
std::optional<size_t> nextProgramLevelPlan(const TuneResult &r, const Plan &exclude) {
  std::optional<size_t> best;
  for (size_t i = 0; i < r.records.size(); ++i) {
    const TuneRecord &rec = r.records[i];
    if (rec.result.outcome != Outcome::Ok || !rec.result.faster ||
        rec.result.judge != Judge::Program || rec.candidate.variant.plan == exclude)
      continue;
    if (!best || rec.result.lo > r.records[*best].result.lo)
      best = i;
  }
  return best;
}

/// Makes a record's plan the final plan: its parts become their kernels'
/// best plans, the only ones in the final.
void makeFinal(TuneResult &r, const TuneSpace &space, const TuneRecord &rec) {
  r.finalPlan = rec.candidate.variant.plan;
  r.finalSpeedup = rec.result.speedup;
  r.finalLo = rec.result.lo;
  r.finalHi = rec.result.hi;
  r.finalJudge = rec.result.judge;
  r.finalKernels.clear();
  for (KernelBest &b : r.best)
    b.inFinal = false;
  for (const auto &[k, part] : space.partsOf(rec.candidate.variant.plan)) {
    if (k >= r.best.size())
      continue;
    r.best[k].plan = part;
    r.best[k].inFinal = true;
    if (rec.candidate.kernel == k && !rec.candidate.wholeProgram) {
      r.best[k].speedup = rec.result.speedup;
      r.best[k].lo = rec.result.lo;
      r.best[k].hi = rec.result.hi;
      r.best[k].judge = rec.result.judge;
    }
    r.finalKernels.push_back(k);
  }
}

} // namespace

void chooseNothing(TuneResult &r) {
  r.searchOnly = true;
  r.finalPlan = Plan{};
  r.finalKernels.clear();
  for (KernelBest &b : r.best)
    b.inFinal = false;
}

void applyCheck(TuneResult &r, const ReproCheck &check) {
  r.check = check;
  if (check.passed)
    return;
  r.rejectedPlan = r.finalPlan;
  r.finalPlan = Plan{};
  r.finalKernels.clear();
  for (KernelBest &b : r.best)
    b.inFinal = false;
}

ProgramSetup programSetup(const RewriteInput &in, const std::string &buildCmd,
                          const std::string &runCmd, const std::string &arch) {
  ProgramSetup s;
  s.originalFile = in.file;
  if (!buildCmd.empty()) {
    s.build = splitWords(buildCmd);
  } else {
    // The user's include paths and macros, absolute: the bundle is built
    // in its own directory, on another machine.
    s.build = {"nvcc", "-O3", "-arch=" + arch};
    for (std::string &f : buildFlagsOf(in.args))
      s.build.push_back(std::move(f));
    for (const char *w : {"{src}", "-o", "{exe}"})
      s.build.push_back(w);
  }
  if (!runCmd.empty())
    s.run = splitWords(runCmd);
  return s;
}

namespace {
/// How kernel k's best plan was judged ("" when it kept the original).
std::string bestJudge(const TuneResult &r, size_t k, const Plan &plan) {
  if (plan.steps.empty())
    return "";
  for (const TuneRecord &rec : r.records)
    if (rec.candidate.kernel == k && rec.candidate.variant.plan == plan &&
        !rec.candidate.wholeProgram)
      return judgeName(rec.result.judge);
  return "";
}
} // namespace

std::string formatTimings(const SessionTimings &t) {
  const ReplayTimes &rt = t.replay;
  double program = t.programBuild + t.programRun;
  // The rest of the rounds: waiting for the capture (its build and run
  // overlap the first round's deriving; its parses follow them), the
  // strategy, the program evaluations' own bookkeeping (writing bundles), a
  // replay's failure judged again.
  double other =
      std::max(0.0, t.rounds - rt.wall - rt.accepts - t.derive - program - t.programBuildWait);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("time: {0:F1} s in all: legal space {1:F1} s, reference program {2:F1} s, "
                      "rounds {3:F1} s (deriving variants {5:F1} s), reproducibility check "
                      "{4:F1} s\n",
                      t.total, t.legalSpace, t.reference, t.rounds, t.check, t.derive);
  if (rt.batches > 0)
    os << llvm::formatv("  replay: {0} variant(s) in {1} batch(es), {2:F1} s (capture {3:F1} s: "
                        "build {10:F1} s, run {11:F1} s; cudal1-eval {12:F1} s: compile {4:F1} s "
                        "for {5} cubin(s), {6} from the cache, verify "
                        "{7:F1} s, timing {8:F1} s of which rounds {13:F1} s; kept workers "
                        "had the set-up of {14} of {15} request(s)): {9:F1} variants/min\n",
                        rt.variants, rt.batches, rt.wall, rt.capture, rt.compile, rt.compiled,
                        rt.cached, rt.verify, rt.timing,
                        rt.wall > 0 ? 60.0 * rt.variants / rt.wall : 0.0, rt.captureBuild,
                        rt.captureRun, rt.eval, rt.timingRounds, rt.keptSetups, rt.setups);
  if (t.programVariants > 0)
    os << llvm::formatv("  whole programs: {0} variant(s), {1:F1} s (building {2:F1} s, runs "
                        "{3:F1} s: original and reference {7:F1} s, verification {8:F1} s, "
                        "rounds {9:F1} s; {4} build(s), {5} found built): {6:F1} variants/min\n",
                        t.programVariants, program, t.programBuild, t.programRun, t.programBuilt,
                        t.programFoundBuilt, program > 0 ? 60.0 * t.programVariants / program : 0.0,
                        t.programOriginal, t.programVerify, t.programRounds);
  if (t.rounds > 0)
    os << llvm::formatv("  the rest of the rounds: waiting for the capture {0:F1} s, for the "
                        "whole programs' builds after a replay {2:F1} s; proposals, bundles "
                        "{1:F1} s\n",
                        rt.accepts, other, t.programBuildWait);
  return text;
}

std::string formatSessionSummary(const TuneResult &r) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "cudal1 tuning: " << r.rounds << " round(s) on "
     << (r.gpu.empty() ? "an unknown GPU" : r.gpu) << "\n";
  os << llvm::format("%-24s %6s %7s  %-28s %s\n", (const char *)"kernel", (const char *)"tried",
                     (const char *)"correct", (const char *)"speedup [95% interval]",
                     (const char *)"best plan");
  for (const KernelBest &b : r.best) {
    std::string plan = printPlan(b.plan);
    std::string sp =
        plan.empty() ? "-" : llvm::formatv("{0:F3}x [{1:F3}, {2:F3}]", b.speedup, b.lo, b.hi).str();
    std::string judge = bestJudge(r, size_t(&b - r.best.data()), b.plan);
    if (!judge.empty() && b.judge != Judge::Program && b.haveProgram)
      judge = "  (" + judge +
              llvm::formatv("; whole program {0:F3}x [{1:F3}, {2:F3}])", b.programSpeedup,
                            b.programLo, b.programHi)
                  .str();
    else if (!judge.empty())
      judge = "  (" + judge + ")";
    os << llvm::format("%-24s %6u %7u  %-28s %s%s\n", b.kernel.c_str(), b.tried, b.correct,
                       sp.c_str(), plan.empty() ? "(original kept)" : plan.c_str(), judge.c_str());
  }
  std::map<std::string, unsigned> outcomes;
  for (const TuneRecord &rec : r.records)
    ++outcomes[outcomeName(rec.result.outcome)];
  os << "variants:";
  for (const auto &o : outcomes)
    os << " " << o.first << "=" << o.second;
  os << "\n";
  if (r.searchOnly)
    os << "result: none chosen (--search-only: the measurements are recorded, nothing is "
          "checked, chosen or written)\n";
  else if (r.finalPlan.steps.empty() && !r.rejectedPlan.steps.empty())
    os << "result: the best plan did not hold up in the reproducibility check; the original "
          "is kept\n";
  else if (r.finalPlan.steps.empty())
    os << "result: no variant was faster; the original is kept\n";
  else
    os << llvm::formatv(
        "result: {0:F3}x [{1:F3}, {2:F3}] ({3}) with '{4}'\n", r.finalSpeedup, r.finalLo, r.finalHi,
        r.finalJudge == Judge::Program ? std::string("whole program")
                                       : "kernel level, " + std::string(judgeName(r.finalJudge)),
        printPlan(r.finalPlan));
  if (r.check) {
    const ReproCheck &c = *r.check;
    std::string plan = printPlan(c.passed ? r.finalPlan : r.rejectedPlan);
    os << formatCheckLine(c) << "\n";
    if (!c.passed)
      os << "rejected plan: '" << plan << "'\n";
  }
  bool replayed = false;
  for (size_t k = 0; k < r.best.size(); ++k)
    replayed |= bestJudge(r, k, r.best[k].plan).rfind("replay", 0) == 0;
  if (replayed)
    os << "speedups judged by replay (replay-double-reference, replay-fallback) are of the "
          "kernel's own time over its captured launches; the others of the whole program's\n";
  else
    os << "speedups are of the whole program's measured time with the plan applied\n";
  return text;
}

SessionStatus runSession(const RewriteInput &in, const SessionOptions &o,
                         VariantEvaluator *evaluator, TuneDB *db) {
  SessionTimings timings;
  auto started = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  auto note = [&](const std::string &m) {
    if (o.note)
      o.note(m);
  };
  // 1. The user's regexes get the bounds a bundle's get (std::regex would
  // throw or recurse without them), and what the report needs, checked
  // before tuning, which takes long.
  for (const auto &[re, flag] : {std::pair(&o.setup.timeRegex, "--time-regex"),
                                 std::pair(&o.setup.ignoreRegex, "--ignore-regex")})
    if (!re->empty())
      if (Status s = checkProgramRegex(*re, flag); !s.ok())
        return failed(SessionStatus::UsageError, s.message());
  ReportContext ctx;
  if (!o.reportFile.empty()) {
    if (o.reportFile == "-" || sameFile(o.reportFile, in.file) ||
        (o.outputFile != "-" && sameFile(o.reportFile, o.outputFile)))
      return failed(SessionStatus::UsageError,
                    "--report " + o.reportFile +
                        ": needs a file of its own (not standard output, the input or -o)");
    if (!o.reportCeilings.empty()) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
          llvm::MemoryBuffer::getFile(o.reportCeilings);
      if (!buf)
        return failed(SessionStatus::InputError,
                      "cannot read '" + o.reportCeilings + "': " + buf.getError().message());
      llvm::Expected<RooflineCeilings> c = parseCeilings((*buf)->getBuffer(), o.reportCeilings);
      if (!c)
        return failed(SessionStatus::InputError, llvm::toString(c.takeError()));
      ctx.ceilings = *c;
    }
  }
  std::unique_ptr<SearchStrategy> owned;
  SearchStrategy *strategy = o.strategyInstance;
  if (!strategy) {
    owned = makeStrategy(o.strategy, o.seed);
    if (!owned)
      return failed(SessionStatus::UsageError,
                    "--strategy=" + o.strategy + ": expected 'heuristic', 'random' or 'policy'");
    strategy = owned.get();
  }

  // 2. The legal space: per kernel its steps and features.
  auto stage = std::chrono::steady_clock::now();
  llvm::Expected<TuneSpace> space = collectTuneSpace(in);
  timings.legalSpace = since(stage);
  if (!space)
    return failed(SessionStatus::InputError, llvm::toString(space.takeError()));
  if (!o.transforms.empty())
    if (llvm::Error e = keepTransforms(*space, o.transforms))
      return failed(SessionStatus::UsageError, llvm::toString(std::move(e)));
  if (space->kernels.empty())
    return failed(SessionStatus::NothingToDo, in.file + ": no CUDA kernels to tune");
  std::vector<std::string> keys, names;
  for (const TuneKernel &k : space->kernels) {
    keys.push_back(k.key);
    names.push_back(k.name);
  }
  TuneOptions to;
  to.budget = o.budget;
  to.timeLimit = o.timeLimit;
  to.progress = o.progress;
  to.combine = !o.searchOnly;
  Tuner tuner(in, *space, *strategy, to);

  // The reference program judges program-level variants (docs/Reference.md):
  // derived once, carried by every program bundle of the session.
  ProgramSetup setup = o.setup;
  stage = std::chrono::steady_clock::now();
  if (setup.referenceSource.empty() && o.mode != SessionOptions::ImportResults) {
    llvm::Expected<ReferenceProgram> rp = deriveReferenceProgram(in);
    if (!rp)
      note("no reference program: " + llvm::toString(rp.takeError()));
    else if (rp->source.empty())
      note("no reference program (" + rp->summary() +
           "): program-level variants are compared with the original's output");
    else {
      note("reference program: " + rp->summary());
      setup.referenceSource = std::move(rp->source);
    }
  }

  timings.reference = since(stage);

  // 3. Where measuring happens here, the GPU is known before the first
  // proposal, and with it the exemplars of earlier sessions on it.
  std::string gpu;
  // Declared first: it outlives the evaluators and the check below.
  std::unique_ptr<ContextHolder> contextHolder;
  std::unique_ptr<ProgramEvaluator> programEvaluator;
  std::unique_ptr<ReplayEvaluator> replayEvaluator;
  std::unique_ptr<JudgingEvaluator> judgingEvaluator;
  if (o.mode == SessionOptions::Tune) {
    if (!evaluator) {
      gpu = queryGpuName();
      if (gpu.empty())
        return failed(SessionStatus::InputError,
                      "no GPU on this machine (nvidia-smi found none): variants cannot be "
                      "measured here. Use --emit-bundle DIR, run cudal1-eval DIR on a GPU "
                      "machine, then --import-results DIR");
      if (o.holdContext) {
        std::string why;
        contextHolder =
            ContextHolder::start(evalExecutable(ReplayOptions{}), 0, kHoldContextSeconds,
                                 /*waitSeconds=*/30, why);
        if (contextHolder)
          note("a CUDA context is held on " + contextHolder->device() +
               " for the session: the programs run start on an awake GPU");
        else
          note("no CUDA context held for the session (" + why +
               "): every program run starts the GPU on its own");
      }
      ProgramEvalOptions po;
      po.raceKeep = int(o.race);
      po.stopWhenDecided = true; // the check below keeps its rounds
      po.screenRuns = int(std::max(1u, o.screen));
      // A variant whose verification run is a quarter slower than the
      // --race-th fastest is ranked out without more runs: in the
      // example's last round, its kernels' bests as whole programs beside
      // their combination (several times faster) took 10 screening runs.
      po.screenMargin = 0.25;
      programEvaluator = std::make_unique<ProgramEvaluator>(setup, po, keys, names);
      evaluator = programEvaluator.get();
      // Kernel-level plans by replay (lib/Tune/ReplayEvaluator.cpp); the
      // capture runs at the first such plan, and a kernel it cannot
      // capture stays at program level with a note.
      if (o.judge != JudgeMode::Program) {
        ReplayOptions ro;
        ro.arch = o.arch;
        ro.note = note;
        replayEvaluator = std::make_unique<ReplayEvaluator>(in, *space, setup, ro);
        // Built and run while the first round is derived, when some kernel
        // has plans at all.
        if (std::any_of(space->kernels.begin(), space->kernels.end(), [](const TuneKernel &k) {
              return !k.host && (!k.steps.empty() || !k.composed.empty());
            }))
          replayEvaluator->startCapture();
        judgingEvaluator = std::make_unique<JudgingEvaluator>(
            *replayEvaluator,
            [r = replayEvaluator.get()](const Candidate &c) { return r->accepts(c); },
            *programEvaluator, note,
            [r = replayEvaluator.get()](const Candidate &c) {
              return r->refusesWithoutCapture(c);
            });
        evaluator = judgingEvaluator.get();
      }
    } else {
      gpu = evaluator->gpuName();
    }
  }
  GpuDescriptor described = describeGpu(gpu, o.arch);
  for (size_t k = 0; k < space->kernels.size(); ++k)
    tuner.state(k).gpu = described;
  if (db && !gpu.empty())
    if (llvm::Error e = addExemplars(*db, *space, GpuKey{gpu, o.arch}, tuner))
      return failed(SessionStatus::InputError,
                    "reading the tuning database: " + llvm::toString(std::move(e)));

  // 4. Earlier rounds of the split path, evaluated.
  for (const std::string &dir : o.continueFrom) {
    llvm::Expected<BundleRound> r = absorbBundle(dir, *space, tuner, note);
    if (!r)
      return failed(SessionStatus::InputError, llvm::toString(r.takeError()));
  }

  // 5a. The split path's first half: one round of the whole budget (the
  // strategy learns only from the rounds given with --continue).
  if (o.mode == SessionOptions::EmitBundle) {
    std::vector<Candidate> cands = tuner.proposeRound(o.budget);
    // With earlier rounds: their kernels' bests together, one or more
    // variants (Tuner::combinations; the import chooses one only if it is
    // verified and surer than the best single plan, as --tune does), and each best judged by replay
    // once more as a whole program (`whole-ID`), so that the final choice
    // compares whole-program figures, as --tune's last round does.
    for (Candidate &c : tuner.programLevelBests())
      cands.push_back(std::move(c));
    for (Candidate &c : tuner.combinations())
      cands.push_back(std::move(c));
    if (cands.empty())
      return failed(SessionStatus::NothingToDo, "no legal plan to try in " + in.file);
    Expected<ProgramBundle> b = writeProgramBundle(o.bundleDir, setup, cands, keys, names);
    if (!b.ok())
      return failed(SessionStatus::InputError, b.error().message());
    // Its kernel part: the kernel-level plans, judged by replay on the GPU
    // machine as --tune judges them (their program variants stay in the
    // program bundle, for a kernel whose launches are not captured there).
    // With --judge program none is written (an earlier one is removed).
    ReplayOptions ro;
    ro.arch = o.arch;
    ro.note = note;
    llvm::Expected<size_t> kernelLevel =
        writeKernelPlansPart(o.bundleDir, in, *space, setup,
                             o.judge == JudgeMode::Program ? std::vector<Candidate>{} : cands, ro);
    if (!kernelLevel)
      return failed(SessionStatus::InputError, llvm::toString(kernelLevel.takeError()));
    *o.out << "wrote " << cands.size() << " variants to " << o.bundleDir;
    if (*kernelLevel)
      *o.out << " (" << *kernelLevel << " kernel-level, judged by replay: " << o.bundleDir
             << "/kernels)";
    *o.out << "; evaluate them on a GPU machine with\n  cudal1-eval " << o.bundleDir
           << "\nthen: cudal1-opt " << in.file << " --import-results " << o.bundleDir
           << " -o OUT.cu\n";
    return {};
  }

  // 5b. The split path's second half: what the GPU machine measured.
  if (o.mode == SessionOptions::ImportResults) {
    llvm::Expected<BundleRound> res = absorbBundle(o.bundleDir, *space, tuner, note);
    if (!res)
      return failed(SessionStatus::InputError, llvm::toString(res.takeError()));
    TuneResult r = tuner.summary();
    r.gpu = res->gpu;
    ctx.date = res->date;
    ctx.original = res->original;
    ctx.timeRegex = res->timeRegex;
    // The final plan is used only after its reproducibility check, measured
    // there too: the first import writes the check bundle and stops (nothing
    // recorded, no output); the one after cudal1-eval applies its verdict.
    if (!r.finalPlan.steps.empty()) {
      llvm::Expected<SplitCheck> sc =
          splitPathCheck(o.bundleDir, in, r.finalPlan, keys, names, note);
      if (!sc)
        return failed(SessionStatus::InputError,
                      "reproducibility check: " + llvm::toString(sc.takeError()));
      if (!sc->check) {
        *o.out << formatSessionSummary(r) << "the final plan is used only after its "
               << "reproducibility check: wrote it to " << sc->dir
               << " (nothing recorded, no output yet); evaluate it on a GPU machine with\n  "
               << "cudal1-eval " << sc->dir << " --rounds " << kCheckRounds
               << "\nthen again: cudal1-opt " << in.file << " --import-results " << o.bundleDir;
        for (const std::string &d : o.continueFrom)
          *o.out << " --continue " << d;
        *o.out << " -o OUT.cu\n";
        return {};
      }
      applyCheck(r, *sc->check);
    }
    return finish(in, o, db, *space, r, ctx);
  }

  // 5c. --tune: rounds measured here.
  stage = std::chrono::steady_clock::now();
  llvm::Expected<TuneResult> r = tuner.run(*evaluator);
  if (!r)
    return failed(SessionStatus::InputError, llvm::toString(r.takeError()));
  timings.rounds = since(stage);
  timings.derive = tuner.deriveSeconds();
  if (replayEvaluator)
    timings.replay = replayEvaluator->times();
  if (judgingEvaluator)
    timings.programBuildWait = judgingEvaluator->buildWaitSeconds();
  for (const TuneRecord &rec : r->records)
    timings.programVariants +=
        rec.result.judge == Judge::Program && rec.result.outcome != Outcome::Refused;
  if (programEvaluator) {
    timings.programBuild = programEvaluator->buildSeconds();
    timings.programRun = programEvaluator->runSeconds();
    timings.programOriginal = programEvaluator->originalRunSeconds();
    timings.programVerify = programEvaluator->verifyRunSeconds();
    timings.programRounds = programEvaluator->roundsRunSeconds();
  }
  if (o.searchOnly)
    chooseNothing(*r);
  stage = std::chrono::steady_clock::now();
  // 6. The final plan once more, as a whole program, in a measurement of its
  // own with more rounds: used only if it holds up there.
  if (!r->finalPlan.steps.empty()) {
    if (o.progress)
      o.progress("reproducibility check of the final plan");
    // The check measures the final plan as the user runs it, with no other
    // context on the GPU: a held one shortened the search's program runs by
    // a third but made the example's tuned variant (many short launches)
    // 3% slower, its original not at all (H100, 2026-12-07,
    // docs/results/judge-throughput-h200.md).
    contextHolder.reset();
    if (replayEvaluator)
      replayEvaluator->stopWorkers();
    std::unique_ptr<ProgramEvaluator> checker;
    VariantEvaluator *judge = evaluator;
    if (programEvaluator) {
      ProgramEvalOptions po;
      po.maxRounds = kCheckRounds;
      po.seed = 7;
      po.referenceCache = programEvaluator->referenceRun(); // run once per session
      po.buildCache = programEvaluator->builds();           // the final plan was built in a round
      po.originalRuns = programEvaluator->originalRuns();   // its verification runs so far
      // Enough rounds for the drift rule, then as many as it takes to
      // decide it: passed with a margin, or its interval below 1.
      po.checkDecided = [](const std::vector<double> &a, const std::vector<double> &c) {
        SpeedupEstimate e = bootstrapSpeedup(a, c, 10, 1000, 7);
        double drift = originalDrift(a);
        return std::min(e.lo, e.speedup / (1 + drift)) > 1.02 || e.hi < 1;
      };
      checker = std::make_unique<ProgramEvaluator>(setup, po, keys, names);
      judge = checker.get();
    }
    llvm::Expected<ReproCheck> check = checkReproducible(in, r->finalPlan, *judge);
    if (!check)
      return failed(SessionStatus::InputError,
                    "reproducibility check: " + llvm::toString(check.takeError()));
    // A final plan chosen by a kernel-level speedup may not hold as a whole
    // program (a float-atomic checksum the variant computes more exactly):
    // then the surest plan measured as a whole program gets the check.
    Plan first = r->finalPlan;
    if (!check->passed)
      if (std::optional<size_t> next = nextProgramLevelPlan(*r, first)) {
        const TuneRecord &rec = r->records[*next];
        llvm::Expected<ReproCheck> again =
            checkReproducible(in, rec.candidate.variant.plan, *judge);
        if (!again)
          return failed(SessionStatus::InputError,
                        "reproducibility check: " + llvm::toString(again.takeError()));
        if (again->passed) {
          note("'" + printPlan(first) + "' did not hold up as a whole program (" + check->detail +
               "); '" + rec.candidate.planText() + "' did");
          makeFinal(*r, *space, rec);
          check = std::move(again);
        }
      }
    applyCheck(*r, *check);
  }
  timings.check = since(stage);
  if (programEvaluator) { // the check's builds too: it shares the cache
    timings.programBuilt = programEvaluator->builds()->builds();
    timings.programFoundBuilt = programEvaluator->builds()->hits();
  }
  timings.total = since(started);
  ctx.timings = formatTimings(timings);
  ctx.date = utcTimestamp();
  ctx.timeRegex = o.setup.timeRegex;
  if (programEvaluator)
    ctx.original = programEvaluator->lastOriginal();
  return finish(in, o, db, *space, *r, ctx);
}

} // namespace cudal1
