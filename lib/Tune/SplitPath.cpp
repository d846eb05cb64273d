// Absorbing an evaluated program bundle into the tuner (the split path),
// with its kernel part: the kernel-level plans cudal1-eval judged by replay.
#include "cudal1/Tune/SplitPath.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/KernelPlans.h"
#include "cudal1/Eval/ProgramBundle.h"
#include "cudal1/Tune/ProgramEvaluator.h"
#include "cudal1/Tune/Reproduce.h"

#include <map>
#include <sys/stat.h>

namespace cudal1 {

namespace {

/// Success when every result of a replayed kernel's results file was
/// measured on what the bundle holds now: the original (plan "", the
/// program bundle's original.cu) and each variant (its plans.tsv plan, the
/// program bundle's ID.cu), as checkResultsMatch does for program results.
Status checkReplayResults(const std::string &dir, const std::string &where,
                          const EvalResults &results,
                          const std::map<std::string, std::string> &plan) {
  for (const VariantResult &r : results.results) {
    bool original = r.id == "original";
    auto p = plan.find(r.id);
    if (!original && p == plan.end())
      return makeError(where, ": a result for '", r.id, "', which the bundle does not list");
    if (r.hash.empty())
      return makeError(where, ": the result for '", r.id, "' carries no hash; re-run cudal1-eval ",
                       dir);
    Expected<std::vector<uint8_t>> src =
        readWholeFile(dir + "/" + (original ? "original" : r.id) + ".cu");
    if (!src.ok())
      return src.error();
    std::string now = variantHash(original ? "" : p->second, std::string(src->begin(), src->end()));
    if (r.hash != now)
      return makeError(where, ": the result for '", r.id, "' was measured on another ",
                       r.hash.compare(0, 16, now, 0, 16) != 0 ? "plan" : "source",
                       " than the bundle's ", r.id, " now holds (hash ", r.hash, ", expected ", now,
                       "); re-run cudal1-eval ", dir);
  }
  return Status::success();
}

/// The kernel part's results (DIR/kernels, cudal1/Eval/KernelPlans.h): per
/// variant id judged by replay, its Measurement against its kernel's
/// original in the same replay. Kernels not replayed are noted: their
/// plans keep their program results.
llvm::Expected<std::map<std::string, Measurement>>
absorbKernelPart(const std::string &dir, const std::vector<BundlePlan> &plans,
                 const std::function<void(const std::string &)> &note) {
  std::map<std::string, Measurement> out;
  std::string kdir = dir + "/kernels";
  struct stat sb;
  if (::stat((kdir + "/manifest.txt").c_str(), &sb) != 0)
    return out;
  auto fail = [](const Status &s) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), s.message());
  };
  cudal1::Expected<KernelPlans> kp = readKernelPlans(kdir);
  if (!kp.ok())
    return fail(kp.error());
  cudal1::Expected<KernelPlansStatus> st = readKernelPlansStatus(kdir);
  if (!st.ok()) {
    if (note)
      note(dir + ": its kernel-level plans were not replayed (" + st.error().message() +
           ": a cudal1-eval without kernel parts?); they are judged by their program results");
    return out;
  }
  std::map<std::string, std::string> planOfId;
  for (const BundlePlan &p : plans)
    planOfId[p.id] = p.plan;
  for (const KernelPlanKernel &k : kp->kernels) {
    const KernelPlanStatus *ks = st->find(k.key);
    if (!ks || !ks->replayed) {
      if (note)
        note(dir + ": " + k.name + ": not judged by replay (" +
             (ks ? ks->remark : std::string("not in kernels/status.txt")) +
             "); its plans are judged as whole programs");
      continue;
    }
    std::string where = kdir + "/" + ks->results + "/results.txt";
    cudal1::Expected<EvalResults> res = readResults(where);
    if (!res.ok())
      return fail(res.error());
    if (Status s = checkReplayResults(dir, where, *res, planOfId); !s.ok())
      return fail(s);
    const VariantResult *orig = res->find("original");
    if (!orig)
      return fail(makeError(where, ": no result for the original"));
    for (const KernelPlanVariant &v : kp->variants) {
      if (v.kernelKey != k.key)
        continue;
      const VariantResult *r = res->find(v.id);
      if (!r) {
        if (const KernelPlanVariantStatus *vs = st->findVariant(v.id); vs && note)
          note(dir + ": " + v.id + ": not judged by replay (" + vs->remark +
               "); judged as a whole program");
        continue;
      }
      Measurement m = candidateMeasurement(*r, *orig);
      m.judge =
          r->verifyMode.rfind("fallback", 0) == 0 ? Judge::ReplayFallback : Judge::ReplayReference;
      m.details.push_back("judged by replay of " + std::to_string(ks->launches) +
                          " captured launch(es); times are the kernel's own");
      out[v.id] = std::move(m);
    }
  }
  return out;
}

} // namespace

llvm::Expected<BundleRound> absorbBundle(const std::string &dir, const TuneSpace &space,
                                         Tuner &tuner,
                                         const std::function<void(const std::string &)> &note) {
  auto fail = [](const Status &s) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), s.message());
  };
  cudal1::Expected<std::vector<BundlePlan>> plans = readBundlePlans(dir);
  if (!plans.ok())
    return fail(plans.error());
  cudal1::Expected<EvalResults> res = readResults(dir + "/results.txt");
  if (!res.ok())
    return fail(res.error());
  // Results bound to the plan and source they measured: a stale results.txt
  // beside a newer bundle is refused, not matched by id.
  if (Status s = checkResultsMatch(dir, *plans, *res); !s.ok())
    return fail(s);
  if (res->results.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s/results.txt: no result for the original", dir.c_str());
  BundleRound round{res->gpu, res->date, "", res->results.front()};
  if (cudal1::Expected<ProgramBundle> b = readProgramBundle(dir); b.ok())
    round.timeRegex = b->timeRegex;
  llvm::Expected<std::map<std::string, Measurement>> replayed = absorbKernelPart(dir, *plans, note);
  if (!replayed)
    return replayed.takeError();
  std::vector<Candidate> cands;
  std::vector<Measurement> results;
  for (const BundlePlan &p : *plans) {
    llvm::Expected<Plan> plan = parsePlan(p.plan);
    if (!plan)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s/plans.tsv: %s: %s",
                                     dir.c_str(), p.id.c_str(),
                                     llvm::toString(plan.takeError()).c_str());
    Candidate c;
    c.id = p.id;
    c.variant.plan = planOf(plan->steps);
    c.variant.links = planLinks(c.variant.plan);
    c.variant.fastMath = planNeedsFastMath(c.variant.plan);
    c.kernel = kCombination;
    // A best judged by replay in an earlier round, measured once more as a
    // whole program (Tuner::programLevelBests): not another plan of its kernel.
    c.wholeProgram = llvm::StringRef(p.id).starts_with("whole-");
    for (size_t k = 0; k < space.kernels.size(); ++k)
      if (space.kernels[k].key == p.kernelKey)
        c.kernel = k;
    // "*": the kernels' best plans together; the tuner checks that its parts
    // are still the kernels' bests before choosing it.
    if (p.kernelKey != "*" && c.kernel == kCombination) {
      if (note)
        note(dir + ": " + p.id + ": kernel " + p.kernel +
             " changed since the bundle was written; its result is ignored");
      continue;
    }
    const VariantResult *v = res->find(p.id);
    cands.push_back(c);
    if (auto r = replayed->find(p.id); r != replayed->end())
      results.push_back(r->second); // the kernel's own time, by replay
    else
      results.push_back(v ? candidateMeasurement(*v, round.original) : Measurement{});
  }
  tuner.absorb(cands, results);
  return round;
}

llvm::Expected<SplitCheck> splitPathCheck(const std::string &dir, const RewriteInput &input,
                                          const Plan &finalPlan,
                                          const std::vector<std::string> &keys,
                                          const std::vector<std::string> &names,
                                          const std::function<void(const std::string &)> &note) {
  auto fail = [](const Status &s) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), s.message());
  };
  SplitCheck out;
  out.dir = dir + "/check";
  std::string planText = printPlan(finalPlan);
  struct stat sb;
  if (::stat((out.dir + "/results.txt").c_str(), &sb) == 0) {
    // Evaluated: the verdict, on what was measured for this final plan only.
    cudal1::Expected<std::vector<BundlePlan>> plans = readBundlePlans(out.dir);
    if (!plans.ok())
      return fail(plans.error());
    if (plans->size() != 1 || (*plans)[0].id != "check")
      return fail(makeError(out.dir, "/plans.tsv: expected one plan, 'check' (a check bundle "
                                     "written by cudal1-opt --import-results)"));
    if ((*plans)[0].plan != planText)
      return fail(makeError(out.dir, ": the check was written for '", (*plans)[0].plan,
                            "', but the final plan of these results is now '", planText,
                            "'; remove ", out.dir, " and import again"));
    cudal1::Expected<EvalResults> res = readResults(out.dir + "/results.txt");
    if (!res.ok())
      return fail(res.error());
    if (Status s = checkResultsMatch(out.dir, *plans, *res); !s.ok())
      return fail(s);
    const VariantResult *orig = res->find("original");
    const VariantResult *v = res->find("check");
    if (!orig || !v)
      return fail(
          makeError(out.dir, "/results.txt: no result for the ", orig ? "check" : "original"));
    if (v->timed && v->rounds < kCheckRounds && note)
      note(out.dir + ": the check ran " + std::to_string(v->rounds) + " round(s); cudal1-eval " +
           out.dir + " --rounds " + std::to_string(kCheckRounds) + " gives the drift rule its " +
           "thirds of ten");
    out.check = judgeCheck(candidateMeasurement(*v, *orig));
    return out;
  }
  // Not evaluated (or not written yet): written as the rounds were measured.
  cudal1::Expected<ProgramBundle> rounds = readProgramBundle(dir);
  if (!rounds.ok())
    return fail(rounds.error());
  ProgramSetup setup;
  setup.originalFile = input.file;
  setup.build = rounds->build;
  setup.run = rounds->run;
  setup.timeRegex = rounds->timeRegex;
  setup.ignoreRegex = rounds->ignoreRegex;
  setup.rel = rounds->rel;
  if (!rounds->reference.empty()) {
    cudal1::Expected<std::vector<uint8_t>> ref = readWholeFile(rounds->path(rounds->reference));
    if (!ref.ok())
      return fail(ref.error());
    setup.referenceSource.assign(ref->begin(), ref->end());
  }
  llvm::Expected<Variant> variant = deriveVariant(input, finalPlan);
  if (!variant)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the final plan '%s' no longer applies: %s", planText.c_str(),
                                   llvm::toString(variant.takeError()).c_str());
  Candidate c;
  c.id = "check";
  c.kernel = kCombination;
  c.variant = std::move(*variant);
  cudal1::Expected<ProgramBundle> b = writeProgramBundle(out.dir, setup, {c}, keys, names);
  if (!b.ok())
    return fail(b.error());
  return out;
}

} // namespace cudal1
