// The `policy` strategy: candidates from the legal space, scored by the
// learned policy, chosen by utility with a temperature and a diversity
// penalty; the heuristic stands in wherever the model cannot be used.
#include "cudal1/Tune/PolicyStrategy.h"

#include "cudal1/Policy/Encoding.h"
#include "cudal1/Policy/Policy.h"
#include "cudal1/Tune/Effect.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace cudal1 {
namespace {

/// Steps that the plan driver would refuse together (the same transform at
/// the same scope twice), as the heuristic and random strategies judge it.
bool compatibleWith(const std::vector<PlanStep> &plan, const PlanStep &s) {
  for (const PlanStep &p : plan)
    if (p.transform == s.transform && p.scope == s.scope)
      return false;
  return true;
}

/// The transforms of a plan, sorted: plans that differ only in parameter
/// values share it.
std::vector<std::string> transformsOf(const std::vector<PlanStep> &steps) {
  std::vector<std::string> t;
  for (const PlanStep &s : steps)
    t.push_back(s.transform);
  std::sort(t.begin(), t.end());
  return t;
}

/// How much two plans' transforms overlap: shared over all (as multisets),
/// 1 for plans of one kind, 0 for plans with no transform in common.
double overlap(const std::vector<std::string> &a, const std::vector<std::string> &b) {
  size_t both = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    int c = a[i].compare(b[j]);
    both += c == 0;
    i += c <= 0;
    j += c >= 0;
  }
  size_t all = a.size() + b.size() - both;
  return all ? double(both) / double(all) : 1.0;
}

constexpr unsigned kMaxCandidates = 4096;
/// Pairs: ordered pairs of the best singles.
constexpr unsigned kPairSingles = 24;
/// Triples: the best pairs extended by the best singles.
constexpr unsigned kTriplePairs = 16, kTripleSingles = 12;

class PolicyStrategy : public SearchStrategy {
public:
  explicit PolicyStrategy(PolicyStrategyOptions o)
      : opts(std::move(o)), rng(opts.seed), heuristic(makeHeuristicStrategy()) {
    if (!opts.remark)
      opts.remark = [](const std::string &r) { llvm::errs() << "cudal1: remark: " << r << "\n"; };
    std::string dir = opts.modelDir.empty() ? defaultPolicyModelDir() : opts.modelDir;
    llvm::Expected<std::unique_ptr<Policy>> p = Policy::load(dir);
    if (p)
      policy = std::move(*p);
    else
      opts.remark(llvm::toString(p.takeError()) + "; the heuristic strategy proposes instead");
    if (const char *env = std::getenv("CUDAL1_POLICY_EFFECTS"); env && *env)
      opts.effectShortlist = unsigned(std::strtoul(env, nullptr, 10));
    // For experiments (the protocol on validation programs): the weight of
    // the predicted uncertainty in the utility.
    if (const char *env = std::getenv("CUDAL1_POLICY_EXPLORE"); env && *env)
      opts.explore = std::strtod(env, nullptr);
    if (const char *env = std::getenv("CUDAL1_POLICY_PENDING_DIVERSITY"); env && *env)
      opts.pendingDiversity = std::strtod(env, nullptr);
    if (const char *env = std::getenv("CUDAL1_POLICY_CALIBRATION"); env && *env)
      opts.calibration = std::strtod(env, nullptr);
    // For experiments: each pick with its scores, on stderr.
    if (const char *env = std::getenv("CUDAL1_POLICY_TRACE"); env && *env)
      trace = true;
  }

  // Without a model every proposal is the heuristic's: the measurements
  // say so, so that training never reads them as the policy's own samples.
  const char *name() const override { return policy ? "policy" : "heuristic"; }

  std::vector<Proposal> propose(const KernelState &k, unsigned count) override {
    std::vector<Proposal> out;
    std::set<std::string> seen = k.tried;
    // 1. The heuristic's first plan comes first: the policy can then never
    // do worse than the heuristic's first guess (the choice is by measurement).
    if (!firstDone.count(k.key)) {
      firstDone.insert(k.key);
      for (Proposal &h : heuristic->propose(k, 1))
        if (seen.insert(h.text()).second) {
          emitted[k.key].push_back(emittedOf(h));
          out.push_back(std::move(h));
        }
    }
    if (out.size() >= count)
      return out;
    if (!policy || refused.count(k.key))
      return fallback(k, count, std::move(out), seen);
    // The exemplars' effects, where they are computed already.
    bool effects = k.effects && policy->schema().effectDim() > 0;
    KernelState withEffects;
    if (effects) {
      withEffects = k;
      for (Exemplar &e : withEffects.exemplars)
        if (!e.effect)
          if (const EffectFeatures *f = k.effects->cached(entryOf(k), e.steps))
            e.effect = *f;
    }
    const KernelState &state = effects ? withEffects : k;
    // 2. Score every single step (tried ones too: they seed compositions),
    // then ordered pairs of the best singles, then triples of the best
    // pairs: the pool stays near a thousand plans however many steps are
    // legal. Never longer than the network's training data's plans.
    unsigned longest = policy->info().maxPlanSteps;
    std::vector<std::vector<PlanStep>> singles = policyCandidates(k, kMaxCandidates, false);
    std::vector<PlanScore> singleScores;
    if (!scoreInto(state, singles, singleScores))
      return fallback(k, count, std::move(out), seen);
    std::vector<std::vector<PlanStep>> cands;
    std::vector<PlanScore> scores;
    for (size_t i = 0; i < singles.size(); ++i)
      if (singles[i].size() <= longest && !seen.count(planText(singles[i]))) {
        cands.push_back(singles[i]);
        scores.push_back(singleScores[i]);
      }
    if (longest >= 2) {
      // Composed steps (drop-sync before fuse) are candidates as they are,
      // not parts of pairs.
      std::vector<size_t> top;
      for (size_t i = 0; i < singles.size(); ++i)
        if (singles[i].size() == 1)
          top.push_back(i);
      std::stable_sort(top.begin(), top.end(), [&](size_t x, size_t y) {
        return policyUtility(singleScores[x], opts.explore) >
               policyUtility(singleScores[y], opts.explore);
      });
      top.resize(std::min<size_t>(top.size(), kPairSingles));
      std::vector<std::vector<PlanStep>> pairs;
      for (size_t x : top)
        for (size_t y : top)
          if (x != y && compatibleWith(singles[x], singles[y][0])) {
            std::vector<PlanStep> pr = {singles[x][0], singles[y][0]};
            if (!seen.count(planText(pr)))
              pairs.push_back(std::move(pr));
          }
      std::vector<PlanScore> pairScores;
      if (!pairs.empty() && !scoreInto(state, pairs, pairScores))
        return fallback(k, count, std::move(out), seen);
      cands.insert(cands.end(), pairs.begin(), pairs.end());
      scores.insert(scores.end(), pairScores.begin(), pairScores.end());
    }
    if (longest >= 3) {
      std::vector<std::vector<PlanStep>> triples = triplesOf(cands, scores, seen);
      std::vector<PlanScore> tripleScores;
      if (!triples.empty() && !scoreInto(state, triples, tripleScores))
        return fallback(k, count, std::move(out), seen);
      cands.insert(cands.end(), triples.begin(), triples.end());
      scores.insert(scores.end(), tripleScores.begin(), tripleScores.end());
    }
    // Longer plans than the network knows: the best plan measured in this
    // run extended by one step, scored additively (its measured log speedup
    // plus the step's predicted one). Compositions stay grounded in
    // measurements instead of in the network's extrapolation.
    size_t scored = cands.size(); // the rest are measured plans extended
    extendMeasured(k, cands, scores, seen, longest);
    // The best candidates by their steps, applied and analysed: their
    // effects, then every candidate with an effect scored again.
    if (effects && opts.effectShortlist > 0)
      rescoreWithEffects(state, cands, scores, longest);
    std::vector<std::vector<std::string>> candTransforms;
    for (const auto &c : cands)
      candTransforms.push_back(transformsOf(c));
    if (opts.calibration != 0)
      calibrate(state, candTransforms, scores, scored, longest);
    if (trace) {
      std::pair<std::string, double> worst;
      encodeState(policy->schema(), state, &worst);
      llvm::errs() << "policy-trace: " << k.name << ": farthest state input '" << worst.first
                   << "' at z " << worst.second << "\n";
      std::vector<size_t> order(cands.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return scores[a].logSpeedup > scores[b].logSpeedup;
      });
      for (size_t j = 0; j < order.size() && j < 40; ++j)
        llvm::errs() << "policy-trace:   candidate " << planText(cands[order[j]]) << " | "
                     << scores[order[j]].logSpeedup << " +- " << scores[order[j]].uncertainty
                     << " (network " << scores[order[j]].networkLogSpeedup << " +- "
                     << scores[order[j]].networkUncertainty << ")\n";
    }
    // 3. Utility, diversity, temperature. The plans proposed and not yet
    // measured (this round's, so far) are what the network's scores cannot
    // know about: a plan like them is worth less than its score.
    std::set<std::string> measured;
    for (const Exemplar &e : k.exemplars)
      if (e.thisRun)
        measured.insert(planText(e.steps));
    std::vector<bool> taken(cands.size(), false);
    while (out.size() < count) {
      std::map<std::vector<std::string>, unsigned> kinds;
      for (const Emitted &e : emitted[k.key])
        ++kinds[e.transforms];
      std::vector<const std::vector<std::string> *> pending;
      for (const Emitted &e : emitted[k.key])
        if (!measured.count(e.text))
          pending.push_back(&e.transforms);
      std::vector<double> u(cands.size(), -INFINITY);
      double best = -INFINITY;
      for (size_t i = 0; i < cands.size(); ++i) {
        if (taken[i])
          continue;
        double alike = 0;
        if (opts.pendingDiversity != 0)
          for (const std::vector<std::string> *p : pending)
            alike += overlap(candTransforms[i], *p);
        u[i] = policyUtility(scores[i], opts.explore) - opts.diversity * kinds[candTransforms[i]] -
               opts.pendingDiversity * alike;
        best = std::max(best, u[i]);
      }
      if (best == -INFINITY)
        break;
      size_t pick = 0;
      double prob = 1;
      if (opts.temperature <= 0) {
        pick = size_t(std::max_element(u.begin(), u.end()) - u.begin());
      } else {
        // Sampled among the top B only: over hundreds of candidates of
        // similar utility a softmax is close to uniform, i.e. random search.
        std::vector<size_t> order;
        for (size_t i = 0; i < cands.size(); ++i)
          if (u[i] > -INFINITY)
            order.push_back(i);
        size_t b = std::min<size_t>(order.size(), std::max(1u, opts.topB));
        std::partial_sort(order.begin(), order.begin() + b, order.end(), [&](size_t x, size_t y) {
          return u[x] > u[y] || (u[x] == u[y] && x < y);
        });
        std::vector<double> w(cands.size(), 0);
        double sum = 0;
        for (size_t j = 0; j < b; ++j)
          sum += w[order[j]] = std::exp((u[order[j]] - best) / opts.temperature);
        // A uniform draw mapped through the weights: std::discrete_distribution
        // is not specified bit for bit across standard libraries.
        double r = double(rng() >> 11) * 0x1.0p-53 * sum, acc = 0;
        pick = cands.size();
        for (size_t i = 0; i < cands.size(); ++i) {
          if (w[i] == 0)
            continue;
          pick = i;
          acc += w[i];
          if (r < acc)
            break;
        }
        prob = w[pick] / sum;
      }
      taken[pick] = true;
      if (trace)
        llvm::errs() << "policy-trace: " << k.name << ": " << planText(cands[pick])
                     << " | log-speedup " << scores[pick].logSpeedup << " uncertainty "
                     << scores[pick].uncertainty << " verifies " << scores[pick].verifyProbability
                     << " utility " << u[pick] << " p " << prob << "\n";
      Proposal p{cands[pick], prob};
      if (seen.insert(p.text()).second) {
        emitted[k.key].push_back(emittedOf(p));
        out.push_back(std::move(p));
      }
    }
    return out;
  }

private:
  /// A plan this strategy proposed for a kernel, and its transforms (its
  /// kind: plans that differ only in parameter values share them).
  struct Emitted {
    std::string text;
    std::vector<std::string> transforms;
  };
  static Emitted emittedOf(const Proposal &p) { return {p.text(), transformsOf(p.steps)}; }

  /// The entry a state's plans are applied to in its unit's effect cache.
  static std::string entryOf(const KernelState &k) { return k.host ? "(host)" : k.name; }

  /// Plans longer than the network's training data keep their additive
  /// scores (extendMeasured).
  void rescoreWithEffects(const KernelState &k, const std::vector<std::vector<PlanStep>> &cands,
                          std::vector<PlanScore> &scores, unsigned longest) {
    std::vector<size_t> order(cands.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return policyUtility(scores[a], opts.explore) > policyUtility(scores[b], opts.explore);
    });
    // The shortlist's effects computed together (a parse each, at once).
    std::vector<std::vector<PlanStep>> shortlist;
    for (size_t i : order) {
      if (shortlist.size() >= opts.effectShortlist)
        break;
      if (cands[i].size() > longest || k.effects->cached(entryOf(k), cands[i]))
        continue;
      shortlist.push_back(cands[i]);
    }
    k.effects->computeAll(entryOf(k), shortlist);
    std::vector<size_t> known;
    std::vector<std::vector<PlanStep>> again;
    for (size_t i = 0; i < cands.size(); ++i)
      if (cands[i].size() <= longest && k.effects->cached(entryOf(k), cands[i])) {
        known.push_back(i);
        again.push_back(cands[i]);
      }
    std::vector<PlanScore> s;
    if (again.empty() || !scoreInto(k, again, s))
      return;
    for (size_t j = 0; j < known.size(); ++j)
      scores[known[j]] = s[j];
  }

  /// This run's residuals carried to the candidates (by their transforms,
  /// `candTransforms`) by overlap (PolicyStrategyOptions::calibration).
  /// Candidates from `scored` on are measured plans extended by a step:
  /// their scores hold a measurement already.
  void calibrate(const KernelState &k, const std::vector<std::vector<std::string>> &candTransforms,
                 std::vector<PlanScore> &scores, size_t scored, unsigned longest) {
    std::vector<std::vector<PlanStep>> measured;
    std::vector<double> logSpeedup;
    for (const Exemplar &e : k.exemplars)
      if (e.thisRun && e.measured.outcome == Outcome::Ok && e.measured.timed &&
          e.measured.speedup > 0 && e.steps.size() <= longest) {
        measured.push_back(e.steps);
        logSpeedup.push_back(std::log(e.measured.speedup));
      }
    std::vector<PlanScore> predicted;
    if (measured.empty() || !scoreInto(k, measured, predicted))
      return;
    std::vector<std::vector<std::string>> kinds;
    for (const auto &m : measured)
      kinds.push_back(transformsOf(m));
    for (size_t i = 0; i < scored; ++i) {
      double weight = 0, pull = 0;
      for (size_t m = 0; m < measured.size(); ++m) {
        double w = overlap(candTransforms[i], kinds[m]);
        weight += w;
        pull += w * (logSpeedup[m] - predicted[m].logSpeedup);
      }
      scores[i].logSpeedup += opts.calibration * pull / (1 + weight);
    }
  }

  bool scoreInto(const KernelState &k, const std::vector<std::vector<PlanStep>> &cands,
                 std::vector<PlanScore> &scores) {
    std::vector<Plan> plans;
    std::vector<const EffectFeatures *> effects;
    for (const auto &c : cands) {
      plans.push_back(Plan{c});
      effects.push_back(k.effects ? k.effects->cached(entryOf(k), c) : nullptr);
    }
    llvm::Expected<std::vector<PlanScore>> s = policy->score(k, plans, effects);
    if (!s) {
      refused.insert(k.key);
      opts.remark(llvm::toString(s.takeError()) + "; the heuristic proposes for it instead");
      return false;
    }
    scores = std::move(*s);
    return true;
  }

  void extendMeasured(const KernelState &k, std::vector<std::vector<PlanStep>> &cands,
                      std::vector<PlanScore> &scores, const std::set<std::string> &seen,
                      unsigned longest) {
    const Exemplar *best = nullptr;
    for (const Exemplar &e : k.exemplars)
      if (e.thisRun && e.measured.outcome == Outcome::Ok && e.measured.timed &&
          e.measured.speedup > 1 && (!best || e.measured.speedup > best->measured.speedup))
        best = &e;
    if (!best || best->steps.size() < longest || best->steps.size() >= kPolicyStepCap)
      return;
    size_t n = cands.size();
    for (size_t i = 0; i < n; ++i) {
      if (cands[i].size() != 1 || !compatibleWith(best->steps, cands[i][0]))
        continue;
      std::vector<PlanStep> ext = best->steps;
      ext.push_back(cands[i][0]);
      if (seen.count(planText(ext)))
        continue;
      PlanScore s = scores[i];
      s.logSpeedup += std::log(best->measured.speedup);
      cands.push_back(std::move(ext));
      scores.push_back(s);
    }
  }

  static std::vector<std::vector<PlanStep>>
  triplesOf(const std::vector<std::vector<PlanStep>> &cands, const std::vector<PlanScore> &scores,
            std::set<std::string> seen) {
    std::vector<std::vector<PlanStep>> out;
    std::vector<size_t> pairs, singles;
    for (size_t i = 0; i < cands.size(); ++i)
      (cands[i].size() == 1 ? singles : pairs).push_back(i);
    auto byScore = [&](size_t a, size_t b) {
      return scores[a].logSpeedup > scores[b].logSpeedup ||
             (scores[a].logSpeedup == scores[b].logSpeedup && a < b);
    };
    std::sort(pairs.begin(), pairs.end(), byScore);
    std::sort(singles.begin(), singles.end(), byScore);
    pairs.resize(std::min<size_t>(pairs.size(), kTriplePairs));
    singles.resize(std::min<size_t>(singles.size(), kTripleSingles));
    for (size_t pi : pairs)
      for (size_t si : singles) {
        const PlanStep &s = cands[si][0];
        if (!compatibleWith(cands[pi], s))
          continue;
        std::vector<PlanStep> t = cands[pi];
        t.push_back(s);
        if (seen.insert(planText(t)).second)
          out.push_back(std::move(t));
      }
    return out;
  }

  std::vector<Proposal> fallback(const KernelState &k, unsigned count, std::vector<Proposal> out,
                                 std::set<std::string> &seen) {
    KernelState state = k;
    for (const Proposal &p : out)
      state.tried.insert(p.text());
    for (Proposal &h : heuristic->propose(state, count - unsigned(out.size())))
      if (seen.insert(h.text()).second)
        out.push_back(std::move(h));
    return out;
  }

  PolicyStrategyOptions opts;
  std::mt19937_64 rng;
  std::unique_ptr<SearchStrategy> heuristic;
  std::unique_ptr<Policy> policy;
  std::set<std::string> firstDone, refused;
  std::map<std::string, std::vector<Emitted>> emitted;
  bool trace = false;
};

} // namespace

double policyUtility(const PlanScore &s, double explore) {
  return s.verifyProbability * s.logSpeedup + std::log(std::max(1e-6, s.verifyProbability)) +
         explore * s.uncertainty;
}

std::vector<std::vector<PlanStep>> policyCandidates(const KernelState &k, unsigned maxPlans,
                                                    bool pairs) {
  std::vector<const PlanStep *> pool;
  for (const PlanStep &s : k.steps)
    if (!isFastMath(s))
      pool.push_back(&s);
  std::vector<std::vector<PlanStep>> out;
  // Distinct singles; ordered pairs of distinct singles are then distinct.
  std::set<std::string> seen;
  std::vector<const PlanStep *> singles;
  for (const PlanStep *s : pool)
    if (out.size() < maxPlans && seen.insert(stepText(*s)).second) {
      singles.push_back(s);
      out.push_back({*s});
    }
  // A composed step is one candidate: its prerequisites, then it, as the
  // listing orders them (fuse is legal only after drop-sync).
  for (const ComposedStep &c : k.composed)
    if (out.size() < maxPlans && !isFastMath(c.step) && seen.insert(planText(c.steps())).second)
      out.push_back(c.steps());
  if (!pairs)
    return out;
  // Both orders: gatekeepers (drop-sync before fuse) make order matter.
  for (const PlanStep *a : singles)
    for (const PlanStep *b : singles)
      if (out.size() < maxPlans && a != b && compatibleWith({*a}, *b))
        out.push_back({*a, *b});
  return out;
}

std::unique_ptr<SearchStrategy> makePolicyStrategy(PolicyStrategyOptions options) {
  return std::make_unique<PolicyStrategy>(std::move(options));
}

} // namespace cudal1
