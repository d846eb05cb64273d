// The recording rule: measurements and best choices of one session.
#include "cudal1/Tune/Record.h"

#include "llvm/Support/Path.h"

#include <cstdio>
#include <ctime>
#include <unistd.h>

namespace cudal1 {

std::string newSessionId() {
  char buf[64];
  std::snprintf(buf, sizeof buf, "tune-%lld-%d", (long long)std::time(nullptr), int(::getpid()));
  return buf;
}

std::vector<MeasurementRow> measurementsOf(const TuneSpace &space, const TuneResult &r,
                                           const GpuKey &gpu, const std::string &session) {
  // The kernels' best plans measured together belong to no one kernel: the
  // file's entry, as the host code has one (never a best choice).
  std::string fileKey = "program:" + llvm::sys::path::filename(space.file).str();
  std::vector<MeasurementRow> ms;
  for (const TuneRecord &rec : r.records) {
    if (rec.result.outcome == Outcome::Refused)
      continue;
    MeasurementRow m;
    if (rec.candidate.kernel < space.kernels.size()) {
      m.kernelKey = space.kernels[rec.candidate.kernel].key;
      m.kernelName = space.kernels[rec.candidate.kernel].name;
    } else {
      m.kernelKey = fileKey;
      m.kernelName = "(combination)";
    }
    m.plan = rec.candidate.planText();
    m.gpu = gpu;
    m.shape = kAnyShape.str();
    m.measured = rec.result;
    // An untimed variant keeps no times: its baseline is another run's.
    if (!m.measured.timed)
      m.measured.timeMs = m.measured.baselineMs = 0;
    m.session = session;
    m.strategy = rec.candidate.strategy;
    if (!rec.candidate.strategy.empty())
      m.proposalProbability = rec.candidate.probability;
    ms.push_back(m);
  }
  if (r.check) {
    // The check is a measurement of its own: the final plan, whole program,
    // with the interval widened by the original's drift.
    const ReproCheck &c = *r.check;
    MeasurementRow m;
    m.kernelKey = fileKey;
    m.kernelName = "(reproducibility check)";
    m.plan = printPlan(c.passed ? r.finalPlan : r.rejectedPlan);
    m.gpu = gpu;
    m.shape = kAnyShape.str();
    m.measured = c.measured;
    m.measured.judge = Judge::Program;
    if (c.timed()) {
      m.measured.lo = c.checkedLo;
      m.measured.hi = c.checkedHi;
      m.measured.faster = c.passed;
    } else {
      m.measured.faster = false;
      m.measured.timed = false;
      m.measured.speedup = m.measured.lo = m.measured.hi = 0;
      m.measured.timeMs = m.measured.baselineMs = 0;
    }
    m.session = session;
    ms.push_back(m);
  }
  return ms;
}

llvm::Error recordSession(TuneDB &db, const TuneSpace &space, const TuneResult &r,
                          const std::string &arch, const std::string &session) {
  GpuKey gpu{r.gpu.empty() ? "unknown" : r.gpu, arch};
  // The features the strategy saw, so that a trainer can rebuild its input.
  for (const TuneKernel &k : space.kernels)
    if (!k.host && !k.features.empty())
      if (llvm::Error e = db.recordFeatures({k.key, k.name, k.featureVersion, k.features}))
        return e;
  std::vector<MeasurementRow> ms = measurementsOf(space, r, gpu, session);
  llvm::Expected<std::vector<int64_t>> ids = db.recordMeasurements(ms);
  if (!ids)
    return ids.takeError();
  for (const KernelBest &b : r.best) {
    if (b.tried == 0 || r.searchOnly)
      continue; // not measured here, or nothing chosen: an earlier choice stands
    BestChoice c;
    c.kernelKey = b.key;
    c.gpu = gpu;
    c.shape = kAnyShape.str();
    if (b.inFinal) {
      c.plan = printPlan(b.plan);
      c.speedup = b.speedup;
      c.speedupLo = b.lo;
      c.speedupHi = b.hi;
      for (size_t i = 0; i < ms.size(); ++i)
        if (ms[i].kernelKey == b.key && ms[i].plan == c.plan)
          c.measurementId = (*ids)[i];
    }
    if (llvm::Error e = db.setBest(c))
      return e;
  }
  return llvm::Error::success();
}

llvm::Error addExemplars(TuneDB &db, const TuneSpace &space, const GpuKey &gpu, Tuner &tuner) {
  for (size_t k = 0; k < space.kernels.size(); ++k) {
    llvm::Expected<std::vector<MeasurementRow>> ms = db.exemplars(space.kernels[k].key, gpu);
    if (!ms)
      return ms.takeError();
    KernelState &st = tuner.state(k);
    for (const MeasurementRow &m : *ms) {
      llvm::Expected<Plan> p = parsePlan(m.plan);
      if (!p) {
        // A plan text this build cannot read is no exemplar.
        llvm::consumeError(p.takeError());
        continue;
      }
      Exemplar e;
      e.steps = planOf(p->steps).steps;
      e.measured = m.measured;
      e.session = m.session;
      st.exemplars.push_back(std::move(e));
    }
  }
  return llvm::Error::success();
}

} // namespace cudal1
