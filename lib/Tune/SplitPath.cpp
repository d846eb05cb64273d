// Absorbing an evaluated program bundle into the tuner (the split path).
#include "cudal1/Tune/SplitPath.h"
#include "cudal1/Eval/ProgramBundle.h"
#include "cudal1/Tune/ProgramEvaluator.h"

namespace cudal1 {

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
    results.push_back(v ? candidateMeasurement(*v, round.original) : Measurement{});
  }
  tuner.absorb(cands, results);
  return round;
}

} // namespace cudal1
