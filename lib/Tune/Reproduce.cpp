// The reproducibility check of the final plan.
#include "cudal1/Tune/Reproduce.h"

#include <algorithm>
#include <cmath>

namespace cudal1 {

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
  ReproCheck check;
  if (res->empty())
    return check;
  check.measured = std::move(res->front());
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
    check.detail = check.drift > 0 && r.lo > 1.0
                       ? "the original drifted by more than the gain within the check"
                       : "the interval of the check does not lie above 1";
  return check;
}

} // namespace cudal1
