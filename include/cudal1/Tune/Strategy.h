// Search strategies: given what is known of a kernel (its KernelState),
// propose the next plans to try (DESIGN.md, "The policy"). `random` and
// `heuristic` are here; the learned `policy` strategy plugs in behind the
// same interface and sees the same state.
#ifndef CUDAL1_TUNE_STRATEGY_H
#define CUDAL1_TUNE_STRATEGY_H

#include "cudal1/Tune/KernelState.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace cudal1 {

/// A proposed plan for one kernel: steps in order, and the probability with
/// which the strategy chose it (1 for deterministic strategies), recorded
/// so that a trainer can weight data other strategies collected.
struct Proposal {
  std::vector<PlanStep> steps;
  double probability = 1;
  std::string text() const { return planText(steps); }
};

class SearchStrategy {
public:
  virtual ~SearchStrategy();
  virtual const char *name() const = 0;
  /// Up to `count` new plans (none in state.tried).
  virtual std::vector<Proposal> propose(const KernelState &state, unsigned count) = 0;
};

/// Plans of 1 to 3 moves (a legal step, or a composed step with its
/// prerequisites) with random parameter values.
std::unique_ptr<SearchStrategy> makeRandomStrategy(uint64_t seed);
/// Expert rules: single steps and composed steps ranked by what usually
/// pays (a reduction to warp shuffles, shared-memory tiling of a reuse loop,
/// fusion of launches, coalescing, wider loads, ...), then the best plan
/// measured in this run extended greedily.
std::unique_ptr<SearchStrategy> makeHeuristicStrategy();
/// "random" or "heuristic"; nullptr otherwise.
std::unique_ptr<SearchStrategy> makeStrategy(const std::string &name, uint64_t seed);

/// The rank the heuristic gives a single step (lower is tried first).
int heuristicRank(const PlanStep &step);
/// The rank of a composed step: its enabled step's (fuse enabled by
/// drop-sync ranks as fuse, early). It is proposed with its prerequisites,
/// in the listing's order.
int heuristicRank(const ComposedStep &step);

} // namespace cudal1

#endif
