// The reproducibility check of the final plan.
#include "cudal1/Tune/Reproduce.h"
#include "cudal1/Rewrite/Reference.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

namespace cudal1 {

const char *const kDriftFailure = "the original drifted by more than the gain within the check";

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
} // namespace

double originalDrift(const std::vector<double> &s) {
  size_t third = s.size() / 3;
  if (third == 0)
    return 0;
  double first = median(std::vector<double>(s.begin(), s.begin() + third));
  double last = median(std::vector<double>(s.end() - third, s.end()));
  if (!(first > 0) || !std::isfinite(last))
    return 0;
  return std::fabs(last / first - 1);
}

ReproCheck judgeCheck(Measurement measured) {
  ReproCheck check;
  check.measured = std::move(measured);
  const Measurement &r = check.measured;
  if (!r.details.empty())
    check.detail = r.details.front();
  if (!check.timed()) {
    if (check.detail.empty())
      check.detail = r.outcome == Outcome::Ok ? "not timed" : outcomeName(r.outcome);
    return check;
  }
  check.drift = originalDrift(r.baselineSamplesMs);
  check.checkedLo = std::min(r.lo, r.speedup / (1 + check.drift));
  check.checkedHi = std::max(r.hi, r.speedup * (1 + check.drift));
  check.passed = check.checkedLo > 1.0;
  if (!check.passed)
    check.detail = check.drift > 0 && r.lo > 1.0 ? kDriftFailure
                                                 : "the interval of the check does not lie above 1";
  return check;
}

llvm::Expected<ReproCheck> checkReproducible(const RewriteInput &input, const Plan &finalPlan,
                                             VariantEvaluator &evaluator) {
  llvm::Expected<Variant> v = deriveVariant(input, finalPlan);
  if (!v)
    return v.takeError();
  Candidate c;
  c.id = "check";
  c.kernel = kCombination;
  c.variant = std::move(*v);
  llvm::Expected<std::vector<Measurement>> res = evaluator.evaluate({c});
  if (!res)
    return res.takeError();
  if (res->empty())
    return ReproCheck{};
  return judgeCheck(std::move(res->front()));
}

std::string formatCheckLine(const ReproCheck &c) {
  if (c.timed())
    return llvm::formatv("reproducibility check: {0:F3}x [{1:F3}, {2:F3}], original drift "
                         "{3:F1}%, checked interval [{4:F3}, {5:F3}]: {6}",
                         c.measured.speedup, c.measured.lo, c.measured.hi, 100 * c.drift,
                         c.checkedLo, c.checkedHi,
                         c.passed ? "passed" : "failed, the original is kept")
        .str();
  return "reproducibility check: " + std::string(outcomeName(c.measured.outcome)) + " (" +
         c.detail + "): failed, the original is kept";
}

llvm::Expected<ReproCheck> runCheckPlan(const RewriteInput &input, const Plan &plan,
                                        ProgramSetup setup, llvm::raw_ostream &out,
                                        const std::function<void(const std::string &)> &note) {
  auto say = [&](const std::string &m) {
    if (note)
      note(m);
  };
  if (queryGpuName().empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no GPU on this machine (nvidia-smi found none): the plan "
                                   "cannot be measured here");
  // The same judge as --tune's program level: the reference program's output.
  if (setup.referenceSource.empty()) {
    llvm::Expected<ReferenceProgram> rp = deriveReferenceProgram(input);
    if (!rp)
      say("no reference program: " + llvm::toString(rp.takeError()));
    else if (rp->source.empty())
      say("no reference program (" + rp->summary() +
          "): the plan is compared with the original's output");
    else
      setup.referenceSource = std::move(rp->source);
  }
  ProgramEvalOptions po;
  po.maxRounds = kCheckRounds;
  po.seed = 7;
  ProgramEvaluator evaluator(setup, po, {}, {});
  llvm::Expected<ReproCheck> check = checkReproducible(input, plan, evaluator);
  if (!check)
    return check.takeError();
  out << "check-plan '" << printPlan(plan) << "' on "
      << (evaluator.gpuName().empty() ? "an unknown GPU" : evaluator.gpuName()) << "\n";
  out << formatCheckLine(*check) << "\n";
  if (!check->passed)
    out << "reason: " << check->detail << "\n";
  // The original's rounds in order: where its drift is seen.
  out << "original rounds (ms):";
  for (double s : check->measured.baselineSamplesMs)
    out << " " << llvm::formatv("{0:F3}", s).str();
  out << "\n";
  return check;
}

} // namespace cudal1
