// The tuning loop: propose, derive, evaluate, record, choose.
#include "cudal1/Tune/Tuner.h"

#include "cudal1/Tune/Effect.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <limits>

namespace cudal1 {

VariantEvaluator::~VariantEvaluator() = default;

Variant makeVariant(Plan plan, std::string source) {
  Variant v;
  v.links = planLinks(plan);
  v.fastMath = planNeedsFastMath(plan);
  v.plan = std::move(plan);
  v.source = std::move(source);
  return v;
}

llvm::Expected<Variant> deriveVariant(const RewriteInput &input, const Plan &plan) {
  llvm::Expected<std::string> src = applyPlan(input, plan);
  if (!src)
    return src.takeError();
  return makeVariant(plan, std::move(*src));
}

Tuner::Tuner(RewriteInput in, TuneSpace sp, SearchStrategy &st, TuneOptions o)
    : input(std::move(in)), space(std::move(sp)), strategy(st), opts(std::move(o)),
      states(space.kernels.size()) {
  // The plans' effects on this unit, computed when a strategy asks (the
  // policy's), once per plan, shared by the unit's kernels.
  auto effects = std::make_shared<EffectCache>(input);
  for (size_t k = 0; k < space.kernels.size(); ++k) {
    states[k].effects = effects;
    KernelState &ks = states[k];
    const TuneKernel &tk = space.kernels[k];
    ks.key = tk.key;
    ks.name = tk.name;
    ks.host = tk.host;
    ks.features = tk.features;
    ks.featureVersion = tk.featureVersion;
    ks.steps = tk.steps;
    ks.composed = tk.composed;
  }
}

std::vector<Candidate> Tuner::proposeRound(unsigned count) {
  std::vector<Candidate> out;
  // Kernels take turns so that a budget smaller than the space still reaches
  // every kernel; a kernel whose strategy has nothing new drops out.
  std::vector<size_t> active;
  for (size_t k = 0; k < space.kernels.size(); ++k)
    if (!space.kernels[k].steps.empty() || !space.kernels[k].composed.empty())
      active.push_back(k);
  unsigned idle = 0;
  // Proposed in batches of what is still missing, derived together: one
  // parse of the input serves the first step of every plan of a batch
  // (applyPlans), where a parse per plan cost about a second each (a
  // quarter of the example's --tune on the GPU machine). The strategy sees
  // the same sequence as when each plan was derived before the next was
  // proposed: a derivation's outcome does not reach it within a round.
  while (out.size() < count && !active.empty() && idle < active.size()) {
    std::vector<Candidate> batch;
    std::vector<Plan> plans;
    while (out.size() + batch.size() < count && idle < active.size()) {
      size_t k = active[nextKernel++ % active.size()];
      std::vector<Proposal> ps = strategy.propose(states[k], 1);
      if (ps.empty()) {
        ++idle;
        continue;
      }
      idle = 0;
      Plan plan = planOf(ps[0].steps);
      states[k].tried.insert(printPlan(plan));
      Candidate c;
      c.kernel = k;
      c.strategy = strategy.name();
      c.probability = ps[0].probability;
      batch.push_back(std::move(c));
      plans.push_back(std::move(plan));
    }
    if (batch.empty())
      break;
    // Each plan's source, or why the passes refused it (all refused when
    // the input itself does not parse).
    auto deriveStart = std::chrono::steady_clock::now();
    std::vector<std::string> sources(plans.size());
    std::vector<std::optional<std::string>> refusals(plans.size());
    if (llvm::Error e = applyPlans(input, plans, [&](size_t i, llvm::Expected<std::string> src) {
          if (src)
            sources[i] = std::move(*src);
          else
            refusals[i] = llvm::toString(src.takeError());
        }))
      refusals.assign(plans.size(), llvm::toString(std::move(e)));
    deriveWall +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - deriveStart).count();
    for (size_t i = 0; i < batch.size(); ++i) {
      Candidate &c = batch[i];
      if (refusals[i]) {
        // The strategy proposed something the passes refuse (a conflict
        // only visible on the evolving source): recorded, not evaluated.
        ++result.refused;
        TuneRecord r;
        c.variant.plan = std::move(plans[i]);
        r.candidate = std::move(c);
        r.result.outcome = Outcome::Refused;
        r.result.details.push_back(*refusals[i]);
        result.records.push_back(r);
        continue;
      }
      char id[16];
      std::snprintf(id, sizeof id, "v%03u", nextId++);
      c.id = id;
      c.variant = makeVariant(std::move(plans[i]), std::move(sources[i]));
      out.push_back(std::move(c));
    }
  }
  return out;
}

void Tuner::absorb(const std::vector<Candidate> &cands, const std::vector<Measurement> &results) {
  ++result.rounds;
  for (size_t i = 0; i < cands.size() && i < results.size(); ++i) {
    // Ids of absorbed rounds (vNNN) are not given out again.
    if (std::optional<unsigned> n = variantNumber(cands[i].id))
      nextId = std::max(nextId, *n + 1);
    TuneRecord r;
    r.candidate = cands[i];
    // A verified, faster variant may be measured again as a whole program
    // (addWholeProgram): its source is kept, the others' dropped.
    if (results[i].outcome != Outcome::Ok || !results[i].faster)
      r.candidate.variant.source.clear();
    r.result = results[i];
    r.round = result.rounds;
    result.records.push_back(r);
    size_t k = cands[i].kernel;
    if (k >= states.size())
      continue;
    states[k].tried.insert(cands[i].planText());
    Exemplar e;
    e.steps = cands[i].variant.plan.steps;
    e.measured = results[i];
    e.thisRun = true;
    states[k].exemplars.push_back(std::move(e));
    // The kernel's own time and the program's are different quantities.
    if (results[i].timed && results[i].baselineMs > 0)
      (results[i].judge == Judge::Program ? states[k].programMs : states[k].originalMs) =
          results[i].baselineMs;
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
      if (r.candidate.kernel != k || r.result.outcome == Outcome::Refused ||
          r.candidate.wholeProgram)
        continue;
      ++b.tried;
      if (r.result.outcome != Outcome::Ok)
        continue;
      ++b.correct;
      // Ranked by the lower end of the interval: a sure 1.3x beats a
      // maybe-1.5x.
      if (r.result.faster && (b.plan.steps.empty() || r.result.lo > b.lo)) {
        b.plan = r.candidate.variant.plan;
        b.speedup = r.result.speedup;
        b.lo = r.result.lo;
        b.hi = r.result.hi;
        b.judge = r.result.judge;
      }
    }
    // A replayed best measured as a whole program beside close runners-up
    // (programLevelBests' finalists): the surest of them as a program is
    // the kernel's best, with its own replay figures. (A best not measured
    // so yet keeps its place: a later round's finalists decide.)
    if (!b.plan.steps.empty() && b.judge != Judge::Program) {
      const TuneRecord *pick = nullptr;
      bool bestMeasured = false;
      for (const TuneRecord &r : result.records)
        if (r.candidate.kernel == k && r.candidate.wholeProgram &&
            r.result.judge == Judge::Program && r.result.outcome == Outcome::Ok) {
          bestMeasured |= r.candidate.variant.plan == b.plan;
          if (r.result.faster && (!pick || r.result.lo > pick->result.lo))
            pick = &r;
        }
      if (bestMeasured && pick && !(pick->candidate.variant.plan == b.plan))
        for (const TuneRecord &r : result.records)
          if (r.candidate.kernel == k && !r.candidate.wholeProgram &&
              r.candidate.variant.plan == pick->candidate.variant.plan &&
              r.result.outcome == Outcome::Ok && r.result.faster) {
            b.plan = r.candidate.variant.plan;
            b.speedup = r.result.speedup;
            b.lo = r.result.lo;
            b.hi = r.result.hi;
            b.judge = r.result.judge;
            break;
          }
    }
    // Its whole-program figures: its own when it was judged so, else the
    // surest of its measurements as a whole program (Candidate::wholeProgram).
    if (!b.plan.steps.empty() && b.judge == Judge::Program) {
      b.haveProgram = true;
      b.programSpeedup = b.speedup;
      b.programLo = b.lo;
      b.programHi = b.hi;
    } else if (!b.plan.steps.empty()) {
      for (const TuneRecord &r : result.records)
        if (r.candidate.kernel == k && r.candidate.wholeProgram &&
            r.candidate.variant.plan == b.plan && r.result.judge == Judge::Program &&
            r.result.outcome == Outcome::Ok && r.result.faster &&
            (!b.haveProgram || r.result.lo > b.programLo)) {
          b.haveProgram = true;
          b.programSpeedup = r.result.speedup;
          b.programLo = r.result.lo;
          b.programHi = r.result.hi;
        }
    }
    s.best.push_back(b);
  }
  // The final plan, like with like: a kernel-level speedup (replay) says
  // nothing about the program's time, so options are compared by their
  // whole-program figures, the surest (highest lower end) first.
  bool chosen = false;
  auto choose = [&](const Plan &plan, double speedup, double lo, double hi,
                    std::vector<size_t> kernels) {
    if (chosen && lo <= s.finalLo)
      return;
    chosen = true;
    s.finalPlan = plan;
    s.finalSpeedup = speedup;
    s.finalLo = lo;
    s.finalHi = hi;
    s.finalJudge = Judge::Program;
    s.finalKernels = std::move(kernels);
  };
  for (size_t k = 0; k < s.best.size(); ++k)
    if (s.best[k].haveProgram)
      choose(s.best[k].plan, s.best[k].programSpeedup, s.best[k].programLo, s.best[k].programHi,
             {k});
  // A verified combination of the current bests. One whose parts are no
  // longer their kernels' bests (a later round found better) is history:
  // the build applies the bests.
  for (const TuneRecord &r : result.records) {
    if (r.candidate.kernel != kCombination || r.result.outcome != Outcome::Ok || !r.result.faster)
      continue;
    std::map<size_t, Plan> parts = space.partsOf(r.candidate.variant.plan);
    bool current = parts.size() > 1;
    for (const auto &[k, part] : parts)
      current &= s.best[k].plan == part;
    if (!current)
      continue;
    std::vector<size_t> kernels;
    for (const auto &[k, part] : parts)
      kernels.push_back(k);
    choose(r.candidate.variant.plan, r.result.speedup, r.result.lo, r.result.hi, kernels);
  }
  // Nothing has whole-program figures (one kernel tuned by replay): the
  // single best plan on its own judge's figures; the reproducibility
  // check measures it as a whole program.
  if (!chosen) {
    KernelBest *top = nullptr;
    for (KernelBest &b : s.best)
      if (!b.plan.steps.empty() && (!top || b.lo > top->lo))
        top = &b;
    if (!top)
      return s;
    s.finalPlan = top->plan;
    s.finalSpeedup = top->speedup;
    s.finalLo = top->lo;
    s.finalHi = top->hi;
    s.finalJudge = top->judge;
    s.finalKernels = {size_t(top - s.best.data())};
  }
  for (size_t k : s.finalKernels)
    s.best[k].inFinal = true;
  return s;
}

std::vector<Candidate> Tuner::finalists(const TuneResult &s) {
  // One kernel has a best, judged by replay: its final plan would stand on
  // kernel-level figures, where a neighbour within a few percent may pay
  // more as a program (the kernel's share, its caches beside the rest).
  // The best and its closest runners-up are measured as whole programs.
  std::vector<Candidate> out;
  size_t k = 0;
  while (k < s.best.size() && s.best[k].plan.steps.empty())
    ++k;
  if (k == s.best.size() || s.best[k].judge == Judge::Program)
    return out;
  const KernelBest &b = s.best[k];
  std::vector<const TuneRecord *> close;
  for (const TuneRecord &r : result.records)
    if (r.candidate.kernel == k && !r.candidate.wholeProgram && r.result.outcome == Outcome::Ok &&
        r.result.faster && r.result.judge == b.judge && r.result.lo >= kFinalistShare * b.lo)
      close.push_back(&r);
  std::stable_sort(close.begin(), close.end(), [](const TuneRecord *x, const TuneRecord *y) {
    return x->result.lo > y->result.lo;
  });
  std::vector<const TuneRecord *> chosen; // distinct plans, surest first
  for (const TuneRecord *r : close)
    if (chosen.size() < kMaxFinalists &&
        std::none_of(chosen.begin(), chosen.end(), [&](const TuneRecord *c) {
          return c->candidate.variant.plan == r->candidate.variant.plan;
        }))
      chosen.push_back(r);
  if (chosen.size() < 2)
    return out; // no runner-up: the reproducibility check measures the best
  for (const TuneRecord *r : chosen)
    addWholeProgram(*r, out);
  return out;
}

void Tuner::addWholeProgram(const TuneRecord &replayed, std::vector<Candidate> &out) {
  const Candidate &of = replayed.candidate;
  for (const TuneRecord &r : result.records)
    if (r.candidate.kernel == of.kernel && r.candidate.wholeProgram &&
        r.candidate.variant.plan == of.variant.plan)
      return; // measured so already
  Candidate c = of;
  if (c.variant.source.empty()) {
    llvm::Expected<Variant> v = deriveVariant(input, of.variant.plan);
    if (!v) {
      llvm::consumeError(v.takeError()); // it derived when it was measured
      return;
    }
    c.variant = std::move(*v);
  }
  c.id = "whole-" + of.id;
  c.wholeProgram = true;
  out.push_back(std::move(c));
}

std::vector<Candidate> Tuner::programLevelBests() {
  TuneResult s = summary();
  size_t withBest = 0;
  for (const KernelBest &b : s.best)
    withBest += !b.plan.steps.empty();
  std::vector<Candidate> out;
  if (withBest == 1)
    return finalists(s);
  if (withBest < 2)
    return out;
  for (size_t k = 0; k < s.best.size(); ++k) {
    const KernelBest &b = s.best[k];
    if (b.plan.steps.empty() || b.judge == Judge::Program)
      continue;
    const TuneRecord *best = nullptr;
    for (const TuneRecord &r : result.records)
      if (r.candidate.kernel == k && !r.candidate.wholeProgram &&
          r.candidate.variant.plan == b.plan)
        best = &r;
    if (best)
      addWholeProgram(*best, out);
  }
  return out;
}

std::optional<unsigned> variantNumber(llvm::StringRef id) {
  unsigned n = 0;
  // getAsInteger fails on anything but digits and on overflow; the id after
  // it must still be given out, so the largest unsigned is refused too.
  if (!id.consume_front("v") || id.empty() || id.getAsInteger(10, n) ||
      n == std::numeric_limits<unsigned>::max())
    return std::nullopt;
  return n;
}

std::vector<Candidate> Tuner::combinations(const std::function<void(const std::string &)> &say) {
  // In the space's order (source order, host code last), as --apply and
  // the plugin apply a file's best choices.
  TuneResult s = summary();
  std::vector<Plan> plans;
  std::vector<double> certainty;
  for (size_t k = 0; k < s.best.size(); ++k)
    if (!s.best[k].plan.steps.empty()) {
      plans.push_back(s.best[k].plan);
      certainty.push_back(s.best[k].lo);
    }
  std::vector<Candidate> out;
  if (plans.size() < 2)
    return out;
  std::vector<std::vector<size_t>> tried;
  auto add = [&](const PlanCombination &joined) {
    if (joined.kept.size() < 2 || std::find(tried.begin(), tried.end(), joined.kept) != tried.end())
      return;
    tried.push_back(joined.kept);
    Candidate c;
    c.id = out.empty() ? "combined" : "combined-" + std::to_string(out.size() + 1);
    c.kernel = kCombination;
    for (size_t i : joined.kept)
      for (const PlanStep &st : plans[i].steps)
        c.variant.plan.steps.push_back(st);
    for (const TuneRecord &r : result.records)
      if (r.candidate.kernel == kCombination && r.candidate.variant.plan == c.variant.plan)
        return;
    c.variant.source = joined.source;
    c.variant.links = planLinks(c.variant.plan);
    c.variant.fastMath = planNeedsFastMath(c.variant.plan);
    out.push_back(std::move(c));
  };
  // The surest plans first...
  std::vector<size_t> left;
  PlanPrefixCache prefixes; // joinings of the same plans share prefixes
  add(combinePlans(
      input, plans, certainty,
      [&](size_t i, llvm::Error e) {
        left.push_back(i);
        std::string why = llvm::toString(std::move(e));
        if (say)
          say("'" + printPlan(plans[i]) +
              "' does not combine with the surer plans: " + why.substr(0, why.find('\n')));
      },
      &prefixes));
  // ...and, for each plan that did not combine with them, the combination
  // that starts from it. The certainties compare figures of different
  // judges (a kernel's own speedup by replay, a host plan's whole-program
  // one), and a plan's worth changes once the others are in (a host loop's
  // launch overhead is small beside slow kernels and large beside fast
  // ones): the measurement of each combination as a whole program decides.
  // Each joining parses the source once per step tried (about 0.6 s a
  // step here): the alternatives are derived at once, a thread each, and
  // every joining starts from the longest prefix any of them applied.
  if (left.size() > kMaxCombinations - 1)
    left.resize(kMaxCombinations - 1);
  std::vector<std::future<PlanCombination>> alternatives;
  for (size_t i : left)
    alternatives.push_back(std::async(std::launch::async, [&, i] {
      std::vector<double> first = certainty;
      first[i] = std::numeric_limits<double>::infinity();
      return combinePlans(
          input, plans, first,
          [](size_t, llvm::Error e) {
            llvm::consumeError(std::move(e)); // said above, or a consequence of it
          },
          &prefixes);
    }));
  for (std::future<PlanCombination> &f : alternatives)
    add(f.get());
  return out;
}

llvm::Expected<TuneResult> Tuner::run(VariantEvaluator &ev) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
        std::to_string(cands.size()) + " variants (" + std::to_string(evaluated) + "/" +
        std::to_string(opts.budget) + " so far)");
    llvm::Expected<std::vector<Measurement>> res = ev.evaluate(cands);
    if (!res)
      return res.takeError();
    absorb(cands, *res);
    evaluated += unsigned(cands.size());
  }
  result.gpu = ev.gpuName();

  // The per-kernel bests together, verified and timed as one variant, and
  // in the same evaluation the bests judged by replay as whole programs:
  // the final choice compares whole-program speedups only.
  if (opts.combine) {
    std::vector<Candidate> batch = programLevelBests();
    size_t singles = batch.size();
    for (Candidate &c : combinations(say))
      batch.push_back(std::move(c));
    if (!batch.empty()) {
      size_t combined = batch.size() - singles;
      say(std::string("measuring as whole programs: ") +
          (combined == 1 ? "the combination of the kernels' best plans"
           : combined    ? std::to_string(combined) + " combinations of the kernels' best plans"
                         : "") +
          (combined && singles ? " and " : "") +
          (singles ? std::to_string(singles) + " best plan(s) judged by replay" : ""));
      llvm::Expected<std::vector<Measurement>> res = ev.evaluate(batch);
      if (!res)
        return res.takeError();
      absorb(batch, *res);
    }
  }
  return summary();
}

} // namespace cudal1
