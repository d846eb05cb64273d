// The `policy` search strategy: the learned policy (lib/Policy) scores the
// legal plans of a kernel and the best of them, diversified and sampled
// with a temperature, are proposed (docs/Policy.md, "The strategy").
#ifndef CUDAL1_TUNE_POLICYSTRATEGY_H
#define CUDAL1_TUNE_POLICYSTRATEGY_H

#include "cudal1/Policy/Policy.h"
#include "cudal1/Tune/Strategy.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cudal1 {

struct PolicyStrategyOptions {
  std::string modelDir; ///< empty: defaultPolicyModelDir()
  uint64_t seed = 1;
  /// Softmax temperature over the utilities of the top `topB` candidates;
  /// 0 is greedy.
  double temperature = 0.3;
  unsigned topB = 16;
  /// Weight of the predicted uncertainty in the utility (optimism).
  /// $CUDAL1_POLICY_EXPLORE overrides it.
  double explore = 0.5;
  /// Subtracted per proposal already made with the same transforms (other
  /// parameter values), so that a budget spreads over kinds of plans.
  double diversity = 0.1;
  /// Subtracted per plan proposed for the kernel and not yet measured,
  /// times the share of transforms the two have in common (1: the same
  /// transforms): within a round, before any result comes back, the budget
  /// spreads over kinds of plans. Off by default: with the policy's prior
  /// (PlanScore) it moved round 1 away from the heuristic's first plan's
  /// transform, towards worse plans (docs/results/policy-protocol.md,
  /// "Round 1 replayed"). $CUDAL1_POLICY_PENDING_DIVERSITY sets it, for
  /// experiments.
  double pendingDiversity = 0;
  /// Weight of this run's residuals (measured log speedup minus the
  /// policy's score of the same plan) carried to the candidates that share
  /// transforms with the measured plans: a candidate's score moves by
  /// calibration * sum(w * residual) / (1 + sum(w)), w the transforms'
  /// overlap. The network conditions on this run's results through its
  /// exemplars, but on the GPU it kept proposing `coarsen` on a row kernel
  /// after four coarsen plans measured 0.2x (docs/results/policy-protocol.md,
  /// "Eight programs"); this makes a run's own evidence count directly.
  /// Off by default until a GPU run compares it; $CUDAL1_POLICY_CALIBRATION
  /// sets it, for experiments.
  double calibration = 0;
  /// Effects (Tune/Effect.h) newly computed per proposal: after scoring
  /// every candidate by its steps (and by its effect where it is already
  /// known), the best `effectShortlist` candidates whose effect is not known
  /// are applied and analysed (a parse each, about half a second) and all
  /// candidates with an effect scored again. 0: only effects computed before
  /// (the proposal then stays within milliseconds). $CUDAL1_POLICY_EFFECTS
  /// overrides it. Nothing is computed for a model trained without effects
  /// or a state without a source (KernelState::effects).
  unsigned effectShortlist = 3;
  /// One-line remarks (why the heuristic stands in); default: stderr.
  std::function<void(const std::string &)> remark;
};

/// What the strategy maximizes for a scored plan: the expected log speedup
/// (a plan that fails gains nothing), the log of the probability that it
/// verifies, and `explore` times the predicted uncertainty.
double policyUtility(const PlanScore &score, double explore);

/// Loads the model once. A missing, corrupt or schema-mismatched model (or
/// a build without libtorch) gives a strategy that proposes what the
/// heuristic would, after one remark saying why; a kernel the model refuses
/// (features of another version, far outside the training range) likewise,
/// with one remark per kernel. The heuristic's first plan for a kernel is
/// always its first proposal.
std::unique_ptr<SearchStrategy> makePolicyStrategy(PolicyStrategyOptions options);

/// Plans of the legal space: every distinct legal single step (fast-math
/// excluded), every composed step with its prerequisites (KernelState::
/// composed) and, with `pairs`, every ordered pair of compatible singles,
/// in a fixed order, at most `maxPlans`. The strategy scores the singles, pairs
/// of the best 24 of them and triples of the best pairs.
std::vector<std::vector<PlanStep>> policyCandidates(const KernelState &state, unsigned maxPlans,
                                                    bool pairs = true);

} // namespace cudal1

#endif
