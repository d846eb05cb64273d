// Search strategies: given a kernel's legal steps and what was measured so
// far, propose the next plans to try (DESIGN.md, "Search"). `random` and
// `heuristic` are here; the learned `policy` strategy plugs in behind the
// same interface.
#ifndef CUDAL1_TUNE_STRATEGY_H
#define CUDAL1_TUNE_STRATEGY_H

#include "cudal1/Tune/Space.h"

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace cudal1 {

/// A proposed plan for one kernel: steps in order.
struct Proposal {
  std::vector<TuneStep> steps;
  std::string text() const { return planText(steps); }
};

/// What a strategy may know about earlier rounds for this kernel.
struct KernelHistory {
  std::set<std::string> tried; ///< plan texts already proposed
  /// Plans measured correct, with their speedup (point estimate) and whether
  /// the interval lies above 1.
  struct Result {
    std::vector<TuneStep> steps;
    double speedup = 0;
    bool faster = false;
  };
  std::vector<Result> correct;
};

class SearchStrategy {
public:
  virtual ~SearchStrategy();
  virtual const char *name() const = 0;
  /// Up to `count` new plans (none already in history.tried).
  virtual std::vector<Proposal> propose(const TuneKernel &kernel,
                                        const KernelHistory &history,
                                        unsigned count) = 0;
};

/// Plans of 1 to 3 distinct transforms with random parameter values.
std::unique_ptr<SearchStrategy> makeRandomStrategy(uint64_t seed);
/// Expert rules: single steps ranked by what usually pays (a reduction to
/// warp shuffles, shared-memory tiling of a reuse loop, coalescing, wider
/// loads, ...), then the best measured plan extended greedily.
std::unique_ptr<SearchStrategy> makeHeuristicStrategy();
/// "random" or "heuristic"; nullptr otherwise.
std::unique_ptr<SearchStrategy> makeStrategy(const std::string &name,
                                             uint64_t seed);

/// The rank the heuristic gives a single step (lower is tried first).
int heuristicRank(const TuneStep &step);

} // namespace cudal1

#endif
