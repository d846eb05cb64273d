// Maps the tuning driver's records onto the report's data. Reads the
// tuner's result types only; it calls nothing in lib/Tune.
#include "cudal1/Report/TuneReport.h"

#include <cstdint>
#include <set>

namespace cudal1 {

namespace {

ReportVariant toReportVariant(const TuneRecord &rec) {
  return {rec.candidate.id.empty() ? "-" : rec.candidate.id, rec.candidate.planText(), rec.round,
          rec.result};
}

} // namespace

void addTuneResult(ReportData &d, const TuneSpace &space, const TuneResult &r) {
  d.gpu = r.gpu;
  d.kernels.clear();
  d.baselines.clear();
  d.combination.reset();
  for (const KernelBest &b : r.best) {
    ReportKernel k;
    k.name = b.kernel;
    k.key = b.key;
    k.bestPlan = printPlan(b.plan);
    k.speedup = b.speedup;
    k.lo = b.lo;
    k.hi = b.hi;
    k.tried = b.tried;
    k.correct = b.correct;
    d.kernels.push_back(k);
  }
  // Every evaluation timed the original once; its samples come with each
  // timed record of that evaluation.
  std::set<unsigned> seen;
  for (const TuneRecord &rec : r.records) {
    ReportVariant v = toReportVariant(rec);
    if (rec.result.timed && seen.insert(rec.round).second) {
      ReportBaseline base;
      base.batch = rec.round;
      base.timeMs = rec.result.baselineMs;
      base.samplesMs = rec.result.baselineSamplesMs;
      d.baselines.push_back(base);
    }
    if (rec.candidate.kernel < space.kernels.size() && rec.candidate.kernel < d.kernels.size())
      d.kernels[rec.candidate.kernel].variants.push_back(v);
    else if (rec.candidate.kernel == kCombination)
      d.combination = v;
  }
  d.finalPlan = printPlan(r.finalPlan);
  d.finalSpeedup = r.finalSpeedup;
  d.finalLo = r.finalLo;
  d.finalHi = r.finalHi;
  d.finalMs = 0;
  if (!r.finalPlan.steps.empty())
    for (const TuneRecord &rec : r.records)
      if (rec.candidate.variant.plan == r.finalPlan && rec.result.timed &&
          rec.result.outcome == Outcome::Ok)
        d.finalMs = rec.result.timeMs;
}

} // namespace cudal1
