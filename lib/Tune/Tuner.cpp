// The tuning loop: propose, derive, evaluate, record, choose.
#include "cudal1/Tune/Tuner.h"
#include "cudal1/Rewrite/Plan.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace cudal1 {

VariantEvaluator::~VariantEvaluator() = default;

llvm::Expected<std::string> derivePlan(const RewriteInput &input,
                                       const std::string &planText) {
  llvm::Expected<Plan> plan = parsePlan(planText);
  if (!plan)
    return plan.takeError();
  return applyPlan(input, *plan);
}

Tuner::Tuner(RewriteInput in, TuneSpace sp, SearchStrategy &st, TuneOptions o)
    : input(std::move(in)), space(std::move(sp)), strategy(st),
      opts(std::move(o)), history(space.kernels.size()) {}

std::vector<Candidate> Tuner::proposeRound(unsigned count) {
  std::vector<Candidate> out;
  // Kernels take turns so that a budget smaller than the space still reaches
  // every kernel; a kernel whose strategy has nothing new drops out.
  std::vector<size_t> active;
  for (size_t k = 0; k < space.kernels.size(); ++k)
    if (!space.kernels[k].steps.empty())
      active.push_back(k);
  unsigned idle = 0;
  while (out.size() < count && !active.empty() && idle < active.size()) {
    size_t k = active[nextKernel++ % active.size()];
    std::vector<Proposal> ps = strategy.propose(space.kernels[k], history[k], 1);
    if (ps.empty()) {
      ++idle;
      continue;
    }
    idle = 0;
    std::string text = ps[0].text();
    history[k].tried.insert(text);
    llvm::Expected<std::string> src = derivePlan(input, text);
    if (!src) {
      // The strategy proposed something the passes refuse (a conflict only
      // visible on the evolving source): recorded, not evaluated.
      ++result.refused;
      TuneRecord r;
      r.candidate.kernel = k;
      r.candidate.plan = text;
      r.result.outcome = "refused";
      r.result.details.push_back(llvm::toString(src.takeError()));
      result.records.push_back(r);
      continue;
    }
    Candidate c;
    char id[16];
    std::snprintf(id, sizeof id, "v%03u", nextId++);
    c.id = id;
    c.kernel = k;
    c.plan = text;
    c.steps = ps[0].steps;
    for (const TuneStep &s : ps[0].steps)
      c.fastMath |= s.fastMath;
    c.source = std::move(*src);
    out.push_back(std::move(c));
  }
  return out;
}

void Tuner::absorb(const std::vector<Candidate> &cands,
                   const std::vector<CandidateResult> &results) {
  ++result.rounds;
  for (size_t i = 0; i < cands.size() && i < results.size(); ++i) {
    // Ids of absorbed rounds (vNNN) are not given out again.
    unsigned n;
    if (std::sscanf(cands[i].id.c_str(), "v%u", &n) == 1)
      nextId = std::max(nextId, n + 1);
    TuneRecord r;
    r.candidate = cands[i];
    r.candidate.source.clear();
    r.result = results[i];
    r.round = result.rounds;
    result.records.push_back(r);
    size_t k = cands[i].kernel;
    if (k >= history.size())
      continue;
    history[k].tried.insert(cands[i].plan);
    if (results[i].outcome == "ok" && results[i].timed) {
      KernelHistory::Result hr;
      hr.steps = cands[i].steps;
      hr.speedup = results[i].speedup;
      hr.faster = results[i].faster;
      history[k].correct.push_back(hr);
    }
  }
}

TuneResult Tuner::summary() const {
  TuneResult s = result;
  s.best.clear();
  for (size_t k = 0; k < space.kernels.size(); ++k) {
    KernelBest b;
    b.kernel = space.kernels[k].name;
    b.key = space.kernels[k].key;
    for (const TuneRecord &r : result.records) {
      if (r.candidate.kernel != k || r.result.outcome == "refused")
        continue;
      ++b.tried;
      if (r.result.outcome != "ok")
        continue;
      ++b.correct;
      // Ranked by the lower end of the interval: a sure 1.3x beats a
      // maybe-1.5x.
      if (r.result.faster && (b.plan.empty() || r.result.lo > b.lo)) {
        b.plan = r.candidate.plan;
        b.speedup = r.result.speedup;
        b.lo = r.result.lo;
        b.hi = r.result.hi;
      }
    }
    s.best.push_back(b);
  }
  if (!s.finalPlan.empty()) {
    // A verified combination: the kernels whose best plans are in it.
    for (size_t k : s.finalKernels)
      s.best[k].inFinal = true;
    return s;
  }
  // Until a combination is verified, the final plan is the single best.
  KernelBest *top = nullptr;
  for (KernelBest &b : s.best)
    if (!b.plan.empty() && (!top || b.lo > top->lo))
      top = &b;
  if (top) {
    top->inFinal = true;
    s.finalPlan = top->plan;
    s.finalSpeedup = top->speedup;
    s.finalLo = top->lo;
    s.finalHi = top->hi;
  }
  return s;
}

llvm::Expected<TuneResult> Tuner::run(VariantEvaluator &ev) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  auto say = [&](const std::string &m) {
    if (opts.progress)
      opts.progress(m);
  };
  unsigned evaluated = 0;
  while (evaluated < opts.budget) {
    if (opts.timeLimit > 0 && elapsed() > opts.timeLimit) {
      say("time limit reached");
      break;
    }
    unsigned n = std::min(opts.perRound, opts.budget - evaluated);
    std::vector<Candidate> cands = proposeRound(n);
    if (cands.empty())
      break;
    say("round " + std::to_string(result.rounds + 1) + ": evaluating " +
        std::to_string(cands.size()) + " variants (" +
        std::to_string(evaluated) + "/" + std::to_string(opts.budget) +
        " so far)");
    llvm::Expected<std::vector<CandidateResult>> res = ev.evaluate(cands);
    if (!res)
      return res.takeError();
    absorb(cands, *res);
    evaluated += unsigned(cands.size());
  }
  result.gpu = ev.gpuName();
  TuneResult s = summary();

  // The per-kernel bests together, verified and timed as one variant. They
  // join most certain first, each only if the plan still derives with it
  // (fusing one kernel into the next takes the next one's plan away, not the
  // others'), and are applied in the space's order: source order, host code
  // last, as --apply and the plugin apply a file's best choices.
  std::vector<size_t> winners;
  for (size_t k = 0; k < s.best.size(); ++k)
    if (opts.combine && !s.best[k].plan.empty())
      winners.push_back(k);
  std::stable_sort(winners.begin(), winners.end(),
                   [&](size_t a, size_t b) { return s.best[a].lo > s.best[b].lo; });
  auto planOf = [&](const std::vector<size_t> &kernels) {
    std::string text;
    for (size_t k : kernels)
      text += (text.empty() ? "" : "; ") + s.best[k].plan;
    return text;
  };
  std::vector<size_t> parts; // in space order
  std::string source;
  for (size_t k : winners) {
    std::vector<size_t> trial = parts;
    trial.insert(std::upper_bound(trial.begin(), trial.end(), k), k);
    if (trial.size() == 1) {
      parts = trial;
      continue;
    }
    llvm::Expected<std::string> src = derivePlan(input, planOf(trial));
    if (!src) {
      std::string why = llvm::toString(src.takeError());
      say("'" + s.best[k].plan + "' does not combine with '" + planOf(parts) +
          "': " + why.substr(0, why.find('\n')));
      continue;
    }
    parts = std::move(trial);
    source = std::move(*src);
  }
  std::string combined = planOf(parts);
  if (parts.size() > 1) {
    Candidate c;
    c.id = "combined";
    c.kernel = SIZE_MAX;
    c.plan = combined;
    c.source = std::move(source);
    say("verifying the combination of " + std::to_string(parts.size()) +
        " kernels' best plans");
    llvm::Expected<std::vector<CandidateResult>> res = ev.evaluate({c});
    if (!res)
      return res.takeError();
    TuneRecord r;
    r.candidate = c;
    r.candidate.source.clear();
    r.result = res->at(0);
    r.round = ++result.rounds;
    result.records.push_back(r);
    if (r.result.outcome == "ok" && r.result.faster && r.result.lo > s.finalLo) {
      result.finalPlan = combined;
      result.finalSpeedup = r.result.speedup;
      result.finalLo = r.result.lo;
      result.finalHi = r.result.hi;
      result.finalKernels = parts;
    }
  }
  return summary();
}

} // namespace cudal1
