// The search space of one translation unit: per kernel (and one entry for
// the host code), the legal steps (a transform at a scope with one value per
// parameter) and the kernel's analysis features, built from the plan
// driver's LegalSpace so that the tuner proposes only what the passes accept.
#ifndef CUDAL1_TUNE_SPACE_H
#define CUDAL1_TUNE_SPACE_H

#include "cudal1/Rewrite/LegalSpace.h"
#include "cudal1/Rewrite/PlanDriver.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cudal1 {

/// One fully parameterized step, e.g. "@#3: launch-config(block=256)".
using TuneStep = PlanStep;

/// The step alone in the canonical plan text, scope included.
std::string stepText(const PlanStep &step);
/// Whether the step is an opt-in fast-math rewrite (never proposed by default).
bool isFastMath(const PlanStep &step);
/// The plan of these steps, in order, and its canonical text (printPlan).
Plan planOf(const std::vector<PlanStep> &steps);
std::string planText(const std::vector<PlanStep> &steps);

/// A step that is legal only after others (a gatekeeper such as drop-sync
/// before fuse; LegalTransform::enabledBy): the plan `prerequisites; step`,
/// in this order, as --list-transforms gives it.
struct ComposedStep {
  std::vector<PlanStep> prerequisites;
  PlanStep step;
  /// The whole plan's steps.
  std::vector<PlanStep> steps() const;
};

struct TuneKernel {
  std::string name, key;
  bool host = false; ///< the entry of the host code (loops, syncs, copies)
  std::vector<unsigned> launches;
  std::vector<PlanStep> steps; ///< every legal step, all parameter values
  /// Steps enabled by others, all parameter values; owned by the entry of
  /// the enabled step (fuse at a launch: its kernel; graph: the host).
  std::vector<ComposedStep> composed;
  /// The analysis' features (docs/Analysis.md) at `featureVersion`; empty
  /// for the host entry.
  std::vector<std::pair<std::string, double>> features;
  int featureVersion = 0;
};

/// Index of "no kernel of the space" (a combination of several kernels' plans).
constexpr size_t kNoKernel = SIZE_MAX;

/// Host-level steps (@loop#N, @sync#N) are gathered in one more TuneKernel
/// named "(host)", keyed by the host code (hostKey).
struct TuneSpace {
  std::string file;
  std::vector<TuneKernel> kernels;
  std::map<int, size_t> launchOwner; ///< launch id → kernel

  /// The kernel a step's scope belongs to, kNoKernel when none.
  size_t ownerOf(const PlanScope &scope) const;
  /// A plan's steps by the kernel they belong to, each part in the plan's
  /// order; empty when a step belongs to no kernel of the space. A composed
  /// step's prerequisites, where they precede it in the plan, belong with it
  /// (the host's drop-sync stays in the fuse's kernel's plan, so that the
  /// build applies them together and in order).
  std::map<size_t, Plan> partsOf(const Plan &plan) const;
};

/// The space of a legal space. Steps at a launch of a kernel with one launch
/// site are scoped to the kernel instead, so that a stored plan does not
/// depend on launch numbering (which changes when host code changes; kernel
/// keys do not). `hostKey` keys the host entry.
TuneSpace tuneSpaceOf(const LegalSpace &legal, const std::string &hostKey);
/// Parses the input, lists its legal space and adds each kernel's features.
llvm::Expected<TuneSpace> collectTuneSpace(const RewriteInput &in);
/// Keeps only the steps of the named transforms (--transforms): a composed
/// step stays when its own transform is named (its prerequisites come with
/// it). An error names a transform that is not registered.
llvm::Error keepTransforms(TuneSpace &space, const std::vector<std::string> &names);

} // namespace cudal1

#endif
