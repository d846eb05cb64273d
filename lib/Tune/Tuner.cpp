// The tuning loop: propose, derive, evaluate, record, choose.
#include "cudal1/Tune/Tuner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace cudal1 {

VariantEvaluator::~VariantEvaluator() = default;

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

namespace {
/// Which kernel each step of a combination's plan belongs to, and that
/// kernel's part of the plan; empty when a step is in no kernel's space.
std::map<size_t, std::string> partsOf(const TuneSpace &space, const std::string &plan) {
  std::map<size_t, std::string> parts;
  llvm::SmallVector<llvm::StringRef, 8> pieces;
  llvm::StringRef(plan).split(pieces, "; ");
  for (llvm::StringRef piece : pieces) {
    bool found = false;
    for (size_t k = 0; k < space.kernels.size() && !found; ++k)
      for (const TuneStep &st : space.kernels[k].steps)
        if (st.text() == piece.trim()) {
          std::string &part = parts[k];
          part += (part.empty() ? "" : "; ") + st.text();
          found = true;
          break;
        }
    if (!found)
      return {};
  }
  return parts;
}
} // namespace

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
  // The single best plan...
  KernelBest *top = nullptr;
  for (KernelBest &b : s.best)
    if (!b.plan.empty() && (!top || b.lo > top->lo))
      top = &b;
  if (!top)
    return s;
  s.finalPlan = top->plan;
  s.finalSpeedup = top->speedup;
  s.finalLo = top->lo;
  s.finalHi = top->hi;
  s.finalKernels = {size_t(top - s.best.data())};
  // ...unless a verified combination of the current bests is surer. One
  // whose parts are no longer their kernels' bests (a later round found
  // better) is history: the build applies the bests.
  for (const TuneRecord &r : result.records) {
    if (r.candidate.kernel != kCombination || r.result.outcome != "ok" ||
        !r.result.faster || r.result.lo <= s.finalLo)
      continue;
    std::map<size_t, std::string> parts = partsOf(space, r.candidate.plan);
    bool current = parts.size() > 1;
    for (const auto &[k, part] : parts)
      current &= s.best[k].plan == part;
    if (!current)
      continue;
    s.finalPlan = r.candidate.plan;
    s.finalSpeedup = r.result.speedup;
    s.finalLo = r.result.lo;
    s.finalHi = r.result.hi;
    s.finalKernels.clear();
    for (const auto &[k, part] : parts)
      s.finalKernels.push_back(k);
  }
  for (size_t k : s.finalKernels)
    s.best[k].inFinal = true;
  return s;
}

std::optional<Candidate>
Tuner::combination(const std::function<void(const std::string &)> &say) {
  // In the space's order (source order, host code last), as --apply and
  // the plugin apply a file's best choices.
  TuneResult s = summary();
  std::vector<std::string> plans;
  std::vector<double> certainty;
  for (size_t k = 0; k < s.best.size(); ++k)
    if (!s.best[k].plan.empty()) {
      plans.push_back(s.best[k].plan);
      certainty.push_back(s.best[k].lo);
    }
  if (plans.size() < 2)
    return std::nullopt;
  PlanCombination joined = combinePlans(input, plans, certainty, [&](size_t i, llvm::Error e) {
    std::string why = llvm::toString(std::move(e));
    if (say)
      say("'" + plans[i] + "' does not combine with the surer plans: " +
          why.substr(0, why.find('\n')));
  });
  if (joined.kept.size() < 2)
    return std::nullopt;
  Candidate c;
  c.id = "combined";
  c.kernel = kCombination;
  for (size_t i : joined.kept)
    c.plan += (c.plan.empty() ? "" : "; ") + plans[i];
  for (const TuneRecord &r : result.records)
    if (r.candidate.kernel == kCombination && r.candidate.plan == c.plan)
      return std::nullopt;
  c.source = std::move(joined.source);
  return c;
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

  // The per-kernel bests together, verified and timed as one variant.
  if (opts.combine)
    if (std::optional<Candidate> c = combination(say)) {
      say("verifying the combination of the kernels' best plans");
      llvm::Expected<std::vector<CandidateResult>> res = ev.evaluate({*c});
      if (!res)
        return res.takeError();
      absorb({*c}, *res);
    }
  return summary();
}

} // namespace cudal1
