// A plan's effect: what the rewrite engine makes of a kernel, measured by
// re-running the analysis on the rewritten source (docs/Policy.md, "The
// effect encoding"). The policy encodes a candidate plan by its steps and by
// this effect: the new launch shape, stride classes, vector width, kernels
// after fusion, synchronizations removed, shared memory, shuffles, and the
// change of each analysis feature. Computed the same way when the policy
// proposes (lib/Tune/PolicyStrategy.cpp) and when cudal1-train rebuilds the
// inputs of measured plans from their programs' sources.
#ifndef CUDAL1_TUNE_EFFECT_H
#define CUDAL1_TUNE_EFFECT_H

#include "cudal1/Rewrite/PlanDriver.h"
#include "cudal1/Tune/KernelState.h"

#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cudal1 {

class ParsedUnit;

/// Bumped whenever an effect feature changes name or meaning (the policy's
/// schema records it; a model of another effect version is refused).
constexpr int kEffectVersion = 1;

/// What the effect compares: one parse of a unit, summarized.
struct UnitSummary {
  struct KernelInfo {
    std::string name;
    std::vector<std::pair<std::string, double>> features; ///< analyzeKernel's
    double vectorBytes = 0;                               ///< the widest global access, in bytes
    double shuffles = 0, asyncCopies = 0;
    double launchBoundsThreads = 0, launchBoundsMinBlocks = 0; ///< 0: none
  };
  struct LaunchInfo {
    std::string kernel;
    double blockThreads = 0; ///< 0: not a compile-time constant
    std::string grid;        ///< as written
    double dynamicShared = 0;
    bool stream = false;
  };
  std::vector<KernelInfo> kernels;  ///< defined in the main file, in order
  std::vector<LaunchInfo> launches; ///< in the main file, in order
  double syncs = 0, graphCalls = 0, libraryCalls = 0;
  /// Keys of the main file's kernels and of its host code, to check that a
  /// source is the one a measurement was made on.
  std::map<std::string, std::string> keyOfKernel;
  std::string hostKey;
};

/// Summarizes a parsed unit (its model, analysis and AST).
UnitSummary summarizeUnit(const ParsedUnit &unit);

/// The effect of going from `before` to `after` for the entry `kernel` (a
/// kernel's name; "(host)" or empty for host plans, which have no target
/// kernel). Names in a fixed order (effectFeatureNames), values as counts,
/// bytes and deltas: the encoding takes signed logs and normalizes.
EffectFeatures effectBetween(const UnitSummary &before, const UnitSummary &after,
                             const std::string &kernel);

/// The names effectBetween gives, in its order.
const std::vector<std::string> &effectFeatureNames();

/// Effects of plans on one translation unit, each computed once: the
/// input is parsed and summarized on first use, a plan is applied with the
/// rewrite engine (applyPlan) and its result parsed and summarized. A plan
/// that does not derive has no effect (remembered too). Parses are quiet.
class EffectCache {
public:
  explicit EffectCache(RewriteInput input);
  ~EffectCache();

  /// The effect of `steps` on the entry `kernel`; null when the plan does not
  /// derive or the input does not parse. Computes at most once per plan.
  const EffectFeatures *effectOf(const std::string &kernel, const std::vector<PlanStep> &steps);
  /// The effects of several plans on `kernel`, computed at once: the plans
  /// applied together (PlanDriver's applyPlans, on the input's parse) and
  /// their results parsed and analysed a thread each. The same values as
  /// effectOf one after the other, in a fraction of the time (a parse is
  /// about half a second; the policy asks for a few per proposal).
  void computeAll(const std::string &kernel, const std::vector<std::vector<PlanStep>> &plans);
  /// Only what is computed already (no parse): null when not.
  const EffectFeatures *cached(const std::string &kernel, const std::vector<PlanStep> &steps) const;
  /// The summary of the input; null when it does not parse.
  const UnitSummary *input();
  /// Plans whose effect was computed (including failures), and their time.
  unsigned computed() const { return computedCount; }
  double computeSeconds() const { return seconds; }

private:
  RewriteInput in;
  std::unique_ptr<ParsedUnit> parsed;
  std::optional<UnitSummary> before;
  bool triedInput = false;
  std::map<std::string, std::optional<EffectFeatures>> effects; ///< kernel + '\n' + plan text
  unsigned computedCount = 0;
  double seconds = 0;
};

} // namespace cudal1

#endif
